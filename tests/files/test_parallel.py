"""A dataset compacted by several processes gives exactly what one process gives."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_fast_path import chat_message
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.errors import InputError, MissingFactsError, UsageError
from ctxmgr.files import FileResult, FileSink, Settings, _processes as processes, compact_file
from ctxmgr.providers import SummarizerSettings, build_summarizer
from ctxmgr.state import MessageContextManager, SummaryContextManager
from ctxmgr.state._managers import UnchangedContextManager

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or os.uname().sysname != "Linux", reason="Linux only")

PLAIN = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}] * 3}


@pytest.fixture(autouse=True)
def small_files_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split even tiny test files (the real thresholds are megabytes)."""
    monkeypatch.setattr(processes, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(processes, "_BYTES_PER_JOB", 1)


def _trim(path: Path, out: Path, jobs: int, **options: Any) -> tuple[FileResult, bytes | None, tuple[int, int]]:
    """The result, the output, and the conversations and bytes the progress was told of."""
    keep = options.pop("keep", 1)
    progressed: list[tuple[int, int]] = []
    out.unlink(missing_ok=True)
    result = asyncio.run(
        compact_file(
            str(path),
            MessageContextManager(keep, options.pop("remove_tool_msgs", False)),
            FileSink(out),
            Settings(jobs=jobs, **options),
            progress=lambda conversations, nbytes: progressed.append((conversations, nbytes)),
        )
    )
    told = (sum(pair[0] for pair in progressed), sum(pair[1] for pair in progressed))
    return result, out.read_bytes() if out.exists() else None, told


def _same(one: FileResult, many: FileResult) -> None:
    assert str(many.input_error) == str(one.input_error)
    assert type(many.input_error) is type(one.input_error)
    for name in (
        "format",
        "kind",
        "conversations",
        "changed_conversations",
        "messages_before",
        "messages_after",
        "tokens_before",
        "tokens_after",
        "warnings",
        "errors",
        "bad_lines",
        "written",
    ):
        assert getattr(many, name) == getattr(one, name), name


lines = st.one_of(
    st.lists(chat_message(), max_size=10).map(lambda ms: orjson.dumps({"messages": ms})),
    st.just(orjson.dumps(PLAIN)),
    st.sampled_from([b"", b"  ", b"{not json", b"42", b'{"messages": [{"role": "user", "content": "x"}]}\r']),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.lists(lines, min_size=1, max_size=30),
    final_newline=st.booleans(),
    jobs=st.integers(2, 4),
    keep=st.integers(0, 2),
    on_error=st.sampled_from(["fail", "skip"]),
    strict=st.booleans(),
    measure=st.booleans(),
)
def test_many_processes_write_what_one_writes(
    tmp_path: Path,
    body: list[bytes],
    final_newline: bool,
    jobs: int,
    keep: int,
    on_error: str,
    strict: bool,
    measure: bool,
) -> None:
    data = tmp_path / "rows.jsonl"
    content = b"\n".join([orjson.dumps(PLAIN), *body]) + (b"\n" if final_newline else b"")
    data.write_bytes(content)
    options = {"keep": keep, "on_error": on_error, "strict": strict, "measure": measure}
    one, one_out, one_lines = _trim(data, tmp_path / "one.jsonl", 1, **options)
    many, many_out, many_lines = _trim(data, tmp_path / "many.jsonl", jobs, **options)
    assert many_out == one_out
    _same(one, many)
    assert one.jobs == 1
    if many.input_error is None:
        assert many_lines[0] == one_lines[0] == content.count(b"\n") + (0 if content.endswith(b"\n") else 1)
        # Every byte once (a last line without its newline counts one), in one process;
        # with several, this process's pace stands for the workers': about as many.
        assert one_lines[1] == len(content) + (0 if content.endswith(b"\n") else 1)
        assert 0 < many_lines[1] <= 3 * len(content)
        rest = content[len(orjson.dumps(PLAIN)) + 1 :]  # after the line that settles the format
        newline = rest.find(b"\n", len(rest) * 6 // 10)  # the first cut is aimed at <= 53%
        if newline != -1 and newline + 1 < len(rest):
            assert many.jobs > 1  # a line ends past the first cut: the file was really split
    written = {"rows.jsonl", "one.jsonl", "many.jsonl"}
    assert set(os.listdir(tmp_path)) <= written  # no worker files left behind


def test_an_error_in_a_later_stretch_names_its_line_and_writes_nothing(tmp_path: Path) -> None:
    rows = [orjson.dumps(PLAIN)] * 40
    rows[33] = b'{"messages": [{"role": "user", "content": 1e999}'  # cut short: not JSON
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"\n".join(rows) + b"\n")
    result, out, _ = _trim(data, tmp_path / "out.jsonl", 4)
    assert out is None
    assert result.input_error is not None
    assert result.input_error.line == 34
    assert result.jobs == 4


def test_warnings_keep_their_line_numbers_across_stretches(tmp_path: Path) -> None:
    orphan = {
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "tool", "tool_call_id": "call_x", "content": "late"},
            {"role": "user", "content": "b"},
        ]
    }
    rows = [orjson.dumps(PLAIN)] * 30
    for index in (4, 17, 29):
        rows[index] = orjson.dumps(orphan)
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"\n".join(rows) + b"\n")
    result, out, _ = _trim(data, tmp_path / "out.jsonl", 3, keep=2)
    assert result.jobs == 3
    assert [w.split(":")[0] for w in result.warnings] == ["line 5", "line 18", "line 30"]
    single, single_out, _ = _trim(data, tmp_path / "single.jsonl", 1, keep=2)
    assert out == single_out
    assert result.warnings == single.warnings


def test_small_files_and_jobs_1_stay_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(orjson.dumps(PLAIN) + b"\n" for _ in range(20)))
    assert _trim(data, tmp_path / "a.jsonl", 1)[0].jobs == 1
    monkeypatch.setattr(processes, "_PARALLEL_MIN_BYTES", 8 << 20)
    assert _trim(data, tmp_path / "b.jsonl", 4)[0].jobs == 1
    assert _trim(data, tmp_path / "c.jsonl", 4)[1] == _trim(data, tmp_path / "a.jsonl", 1)[1]


def _offline_manager(**options: Any) -> SummaryContextManager[Any]:
    return SummaryContextManager(
        "offline",
        max_messages=options.pop("max_messages", 3),
        keep_recent=options.pop("keep_recent", 1),
        max_summary_tokens=options.pop("max_summary_tokens", 600),
        require_facts=options.pop("require_facts", False),
        summarizer=build_summarizer(SummarizerSettings("offline", concurrency=options.pop("concurrency", 4))),
        on_error="raise",
    )


def _compact(path: Path, out: Path, manager: Any, settings: Settings) -> tuple[FileResult, bytes | None]:
    out.unlink(missing_ok=True)
    result = asyncio.run(compact_file(str(path), manager, FileSink(out), settings))
    return result, out.read_bytes() if out.exists() else None


def _same_summaries(one: FileResult, many: FileResult) -> None:
    """Every summary's report and every provider error, with its line, as one process has them."""
    assert [(line, r.as_json()) for line, r in many.summaries] == [(line, r.as_json()) for line, r in one.summaries]
    assert [(type(e), str(e)) for e in many.provider_errors] == [(type(e), str(e)) for e in one.provider_errors]
    assert many.provider_error_lines == one.provider_error_lines
    assert dict(many.dropped) == dict(one.dropped)


def _booking(turn_count: int, seed: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an airline agent."}]
    for turn in range(turn_count):
        code = f"HAT{(seed * 7 + turn) % 1000:03d}"
        messages += [
            {"role": "user", "content": f"Can I move reservation {code} to May {turn % 28 + 1}?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"call_{seed}_{turn}", "type": "function", "function": {"name": "get", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": f"call_{seed}_{turn}", "content": f'{{"id": "{code}", "price": {turn}9}}'},
            {"role": "assistant", "content": f"Moved {code}; the fare difference is ${turn * 12}."},
        ]
    return {"messages": messages}


summary_lines = st.one_of(
    st.builds(lambda turns, seed: orjson.dumps(_booking(turns, seed)), st.integers(0, 6), st.integers(0, 99)),
    lines,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.lists(summary_lines, min_size=1, max_size=16),
    jobs=st.integers(2, 3),
    max_summary_tokens=st.sampled_from([30, 80, 600]),
    require_facts=st.booleans(),
    on_error=st.sampled_from(["fail", "skip"]),
    to=st.sampled_from([None, "anthropic"]),
)
def test_offline_summaries_in_many_processes_are_what_one_process_makes(
    tmp_path: Path,
    body: list[bytes],
    jobs: int,
    max_summary_tokens: int,
    require_facts: bool,
    on_error: str,
    to: str | None,
) -> None:
    """The offline digest never waits: a dataset's lines are split among processes, and
    the output, counts, warnings, summaries (their facts and notes) and failed summaries
    (a digest lacking facts that --require-facts demands) are those of one process."""
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"\n".join([orjson.dumps(_booking(5, 1000)), *body]) + b"\n")
    runs = []
    for count in (1, jobs):
        manager = _offline_manager(max_summary_tokens=max_summary_tokens, require_facts=require_facts)
        options = Settings(jobs=count, on_error=on_error, to=to, measure=True, concurrency=4)  # type: ignore[arg-type]
        runs.append(_compact(data, tmp_path / f"out-{count}.jsonl", manager, options))
    (one, one_out), (many, many_out) = runs
    assert many_out == one_out
    _same(one, many)
    _same_summaries(one, many)
    assert one.jobs == 1


def test_a_workers_summary_reports_come_back_without_the_kept_messages_and_say_the_same() -> None:
    """The messages kept after a summary served its weighing; the report sent back is the rest."""
    import pickle

    from ctxmgr.facts import Fact
    from ctxmgr.files._parallel import _without_kept
    from ctxmgr.state import Message, TextBlock
    from ctxmgr.state._report import SummaryReport

    facts = [Fact("code", "4OG6T3"), Fact("amount", "$12")]
    kept = [Message(role="user", content=[TextBlock(text=f"and 4OG6T3, {i}?")]) for i in range(50)]
    report = SummaryReport(messages=3, facts=facts, missing=facts[1:], required=facts[1:], kept=kept, notes=["n"])
    result = FileResult(source="x")
    result.summaries.append((7, report))
    before = pickle.dumps(result)
    said = report.as_json()
    _without_kept(result)
    assert report.kept == ()
    back = pickle.loads(pickle.dumps(result))
    assert [(line, r.as_json()) for line, r in back.summaries] == [(7, said)]
    assert back.summaries[0][1].missing_required() == [facts[1]]
    assert len(pickle.dumps(result)) * 5 < len(before)


def test_a_summary_that_lacks_facts_in_a_later_stretch_keeps_its_wording(tmp_path: Path) -> None:
    """A failed summary in a worker's stretch comes back as the same error (its type,
    provider and message), at its line."""
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(orjson.dumps(_booking(6, seed)) + b"\n" for seed in range(12)))
    results = [
        _compact(data, tmp_path / f"out-{jobs}.jsonl", _offline_manager(max_summary_tokens=30, require_facts=True),
                 Settings(jobs=jobs))[0]
        for jobs in (1, 3)
    ]
    one, many = results
    assert many.jobs == 3
    assert len(one.provider_errors) == 12
    assert all(isinstance(error, MissingFactsError) for error in many.provider_errors)
    assert str(many.provider_errors[-1]).startswith("offline: ")
    _same_summaries(one, many)


def test_the_workers_calls_count_in_the_progress(tmp_path: Path) -> None:
    """The progress bar reads the summarizer's calls and tokens: a worker's are added."""
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(orjson.dumps(_booking(5, seed)) + b"\n" for seed in range(30)))
    counted = []
    for jobs in (1, 3):
        manager = _offline_manager()
        result, _ = _compact(data, tmp_path / f"out-{jobs}.jsonl", manager, Settings(jobs=jobs))
        assert result.jobs == jobs
        counted.append((manager.summarizer.calls, manager.summarizer.tokens))  # type: ignore[attr-defined]
    assert counted[0] == counted[1]
    assert counted[0][0] == 30


def test_a_later_line_of_no_known_format_is_the_same_error(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    rows = [orjson.dumps(PLAIN)] * 30
    rows[25] = b'{"rows": [1, 2, 3]}'
    data.write_bytes(b"\n".join(rows) + b"\n")
    errors = []
    for jobs in (1, 3):
        result, out = _compact(data, tmp_path / f"out-{jobs}.jsonl", MessageContextManager(1), Settings(jobs=jobs))
        assert result.jobs == jobs
        assert out is None
        errors.append(result.input_error)
    assert type(errors[1]) is type(errors[0])
    assert isinstance(errors[0], InputError)
    assert str(errors[1]) == str(errors[0])
    assert errors[0].line == errors[1].line == 26


def test_an_error_a_worker_raises_is_raised_here_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any other error of ctxmgr's met in a worker's stretch is this run's error, worded
    as one process words it (not a crash report)."""
    from ctxmgr.files import _parallel as parallel

    real = parallel.compact_dataset_line

    async def failing(number: int, raw: bytes, *args: Any) -> bytes:
        if number == 17:
            raise UsageError("line 17 asked for something impossible")
        return await real(number, raw, *args)

    monkeypatch.setattr(parallel, "compact_dataset_line", failing)
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(orjson.dumps(PLAIN) + b"\n" for _ in range(20)))
    result, out = _compact(data, tmp_path / "out.jsonl", MessageContextManager(1), Settings(jobs=3))
    assert result.jobs == 3
    assert type(result.input_error) is UsageError
    assert str(result.input_error) == "line 17 asked for something impossible"
    assert out is None


def test_a_conversion_splits_and_writes_what_one_process_writes(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(orjson.dumps(_booking(3, seed)) + b"\n" for seed in range(30)))
    one, one_out = _compact(data, tmp_path / "one.jsonl", UnchangedContextManager(), Settings(jobs=1, to="gemini"))
    many, many_out = _compact(data, tmp_path / "many.jsonl", UnchangedContextManager(), Settings(jobs=3, to="gemini"))
    assert many.jobs == 3
    assert many_out == one_out
    assert one_out is not None
    assert one_out.count(b'"contents"') == 30
    _same(one, many)


def test_summaries_that_wait_never_split(tmp_path: Path) -> None:
    """A network model's summaries are paced by --concurrency in one process."""

    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(orjson.dumps(PLAIN) + b"\n" for _ in range(20)))
    network = build_summarizer(
        SummarizerSettings("gpt-4o-mini", base_url="http://127.0.0.1:9", api_key="sk-unused", concurrency=2)
    )
    manager = SummaryContextManager("gpt-4o-mini", max_messages=100, summarizer=network)  # nothing to summarize
    result, out = _compact(data, tmp_path / "o.jsonl", manager, Settings(jobs=4))
    assert result.jobs == 1
    assert result.conversations == 20
    assert out == data.read_bytes()
    assert processes.process_count(os.stat(data), _offline_manager(), Settings(jobs=4)) == 4


@pytest.mark.parametrize(
    "command",
    [
        ["trim", "-n", "1"],
        ["summarize", "--model", "offline", "--max-messages", "3", "--keep-recent", "1", "--no-cache"],
        ["convert", "--to", "anthropic"],
    ],
    ids=["trim", "summarize-offline", "convert"],
)
def test_the_cli_splits_with_jobs_and_writes_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    from ctxmgr.files import _parallel as parallel

    splits: list[int] = []
    real = parallel.compact_dataset

    def counted(*args: Any, **kwargs: Any) -> None:
        splits.append(args[-1])
        real(*args, **kwargs)

    monkeypatch.setattr(parallel, "compact_dataset", counted)
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(orjson.dumps(_booking(4, seed)) + b"\n" for seed in range(24)))
    runner = CliRunner()
    reports = []
    for jobs in ("1", "3"):
        out = tmp_path / f"out-{jobs}.jsonl"
        result = runner.invoke(app, [*command[:1], str(data), *command[1:], "--jobs", jobs, "-o", str(out), "--json"])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        reports.append((report["files"][0] | {"destination": None}, report["totals"], result.stderr))
    assert splits == [3]
    assert (tmp_path / "out-1.jsonl").read_bytes() == (tmp_path / "out-3.jsonl").read_bytes()
    assert reports[0] == reports[1]
    assert len((tmp_path / "out-3.jsonl").read_bytes().splitlines()) == 24
    if command[0] == "summarize":
        assert reports[0][0]["summaries_added"] == 24
        assert len(reports[0][0]["summaries"]) == 24


def test_jobs_with_a_network_model_is_named_as_having_no_effect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_bytes(orjson.dumps(PLAIN) + b"\n")
    runner = CliRunner()
    # Nothing to summarize: no request is made, and no key is needed.
    args = ["summarize", str(data), "--max-messages", "100", "--no-cache", "-o", str(tmp_path / "out.jsonl")]
    network = runner.invoke(app, [*args, "--model", "gpt-4o-mini", "--jobs", "4"])
    assert network.exit_code == 0, network.output
    assert "note: --jobs 4 is for --model offline: openai:gpt-4o-mini's summaries run in one process" in " ".join(
        network.stderr.split()
    )
    offline = runner.invoke(app, [*args, "--jobs", "4"])
    assert offline.exit_code == 0, offline.output
    assert "--jobs" not in offline.stderr
    quiet = runner.invoke(app, [*args, "--model", "gpt-4o-mini", "--jobs", "4", "--quiet"])
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == ""
    planned = runner.invoke(app, [*args, "--model", "gpt-4o-mini", "--jobs", "4", "--dry-run"])
    assert planned.exit_code == 0, planned.output
    assert "--jobs" not in planned.stderr  # a plan calls nothing
    # A project's jobs (meant for trims and the offline digest) is not repeated on every run.
    (tmp_path / "ctxmgr.toml").write_text("[summarize]\njobs = 2\n")
    monkeypatch.chdir(tmp_path)
    configured = runner.invoke(app, [*args, "--model", "gpt-4o-mini"])
    assert configured.exit_code == 0, configured.output
    assert "--jobs" not in configured.stderr
    engine = runner.invoke(app, [*args, "--jobs", "2", "--engine", "ray"])
    assert engine.exit_code == 2
    assert "--jobs sets the processes of the one-machine path; drop it with --engine" in engine.stderr


@pytest.mark.parametrize("fail_after", [0, 1, 2])
def test_when_no_process_can_start_this_one_does_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_after: int
) -> None:
    from ctxmgr.files import _parallel as parallel

    started: list[int] = []
    real_fork = parallel._fork

    def fork() -> int:
        if len(started) >= fail_after:
            raise BlockingIOError(11, "Resource temporarily unavailable")
        pid = real_fork()
        if pid:
            started.append(pid)
        return pid

    monkeypatch.setattr(parallel, "_fork", fork)
    rows = [orjson.dumps(PLAIN)] * 60
    rows[50] = orjson.dumps({"messages": [{"role": "tool", "tool_call_id": "x", "content": "?"}]})
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"\n".join(rows) + b"\n")
    many, many_out, many_lines = _trim(data, tmp_path / "many.jsonl", 4)
    one, one_out, _ = _trim(data, tmp_path / "one.jsonl", 1)
    assert many.jobs == 1 + fail_after
    assert many_out == one_out
    _same(one, many)
    assert many.warnings
    assert many.warnings[0].startswith("line 51:")
    assert many_lines[0] == 60


# Code run first in a fresh process, so that even tiny files are split.
SPLIT_SMALL_FILES = (
    "import runpy, sys, time\n"
    "from ctxmgr.files import _parallel as parallel, _processes as processes\n"
    "processes._PARALLEL_MIN_BYTES, processes._BYTES_PER_JOB = 0, 1\n"
)


def _cli_with_small_thresholds(
    args: list[str], *, stdin: Any = None, skip: int = 0
) -> subprocess.CompletedProcess[bytes]:
    """``ctxmgr ARGS`` in a fresh process that splits even tiny files (and, with ``skip``,
    whose standard input starts ``skip`` bytes into the file, as another reader left it)."""
    code = (
        "import os\n" + SPLIT_SMALL_FILES + f"os.lseek(0, {skip}, os.SEEK_SET) if {skip} else None\n"
        f"sys.argv = ['ctxmgr', *{args!r}]\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    return subprocess.run([sys.executable, "-c", code], stdin=stdin, capture_output=True, timeout=60, check=False)


def test_standard_input_that_does_not_start_at_the_top(tmp_path: Path) -> None:
    rows = [
        orjson.dumps({"messages": [{"role": "user", "content": f"u{i}"}, {"role": "user", "content": "x"}]})
        for i in range(40)
    ]
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"\n".join(rows) + b"\n")
    skip = len(rows[0]) + 1
    outputs = []
    for jobs in ("1", "4"):
        with open(data, "rb") as stdin:
            proc = _cli_with_small_thresholds(["trim", "-n", "1", "--jobs", jobs, "-"], stdin=stdin, skip=skip)
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    assert len(outputs[1].splitlines()) == 39
    assert b'"u1"' not in outputs[1]  # the trim kept each line's last user turn only
    assert outputs[1].count(b'"x"') == 39


def test_a_worker_that_cannot_write_is_an_output_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk in a worker: one line naming the output, exit 2, nothing written."""
    from ctxmgr.files import _parallel as parallel

    monkeypatch.setattr(parallel.tempfile, "TemporaryFile", lambda **_: open("/dev/full", "w+b"))  # noqa: SIM115
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(orjson.dumps(PLAIN) + b"\n" for _ in range(30)))
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["trim", str(data), "-n", "1", "--jobs", "3", "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert f"{out}: cannot write: No space left on device" in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl"]


def test_the_progress_bar_does_not_stop_the_split(tmp_path: Path) -> None:
    """On a terminal the progress bar shows; it must not start a thread (no fork then)."""
    import pty

    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(b"".join(orjson.dumps(PLAIN) + b"\n" for _ in range(30)))
    code = (
        SPLIT_SMALL_FILES + "real = parallel.compact_dataset\n"
        "def spy(*args, **kwargs):\n"
        "    sys.__stdout__.write(f'SPLIT {args[-1]}\\n'); sys.__stdout__.flush()\n"
        "    real(*args, **kwargs)\n"
        "parallel.compact_dataset = spy\n"
        f"sys.argv = ['ctxmgr', 'trim', '-n', '1', '--jobs', '3', '--check', '--no-view', {str(tmp_path)!r}]\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    leader, follower = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
        timeout=60,
        check=False,
    )
    os.close(follower)
    os.close(leader)
    assert proc.returncode == 1  # --check: both files would change
    assert proc.stdout.decode().splitlines() == ["SPLIT 3", "SPLIT 3"]


def test_workers_die_with_their_parent(tmp_path: Path) -> None:
    """A killed ctxmgr leaves no worker running on (their work would be thrown away)."""
    import signal
    import time

    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(orjson.dumps(PLAIN) + b"\n" for _ in range(200)))
    code = (
        SPLIT_SMALL_FILES + "real = parallel.compact_dataset_line\n"
        "async def slow(*args):\n"
        "    time.sleep(0.2)\n"
        "    return await real(*args)\n"
        "parallel.compact_dataset_line = slow\n"
        f"sys.argv = ['ctxmgr', 'trim', '-n', '1', '--jobs', '3', '--no-view', {str(data)!r}]\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: list[int] = []
    deadline = time.monotonic() + 20
    while len(children) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            children = [int(c) for c in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
        except OSError:
            break
    assert len(children) == 2, "the workers never started"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)

    def alive(pid: int) -> bool:
        try:
            state = [line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("State:")]
        except OSError:
            return False
        return bool(state) and "Z" not in state[0].split()[1]

    deadline = time.monotonic() + 3  # well before the workers could finish (~13 s of lines)
    while any(alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in children)


def test_a_dataset_keeps_no_outcomes_even_for_the_diff_view(tmp_path: Path) -> None:
    """A dataset's diff view shows totals: keeping each line's messages would hold the
    whole file in memory."""
    data = tmp_path / "rows.jsonl"
    data.write_bytes(b"".join(orjson.dumps(PLAIN) + b"\n" for _ in range(30)))
    for jobs, fast in ((1, False), (1, True), (3, True)):
        result, _, _ = _trim(data, tmp_path / "out.jsonl", jobs, keep_outcomes=True, measure=True, fast=fast)
        assert result.outcomes == []
        assert result.conversations == 30
        assert result.tokens_before > result.tokens_after > 0
    document = tmp_path / "one.json"
    document.write_bytes(orjson.dumps(PLAIN))
    result, _, _ = _trim(document, tmp_path / "one.out.json", 1, keep_outcomes=True, measure=True)
    assert len(result.outcomes) == 1  # a single conversation's diff view lists its messages
