"""``ctxmgr.files.compact_lines``: a batch of dataset lines in memory gives what the CLI
writes for the same dataset, with the same warnings, errors and counts, whole or in
partitions."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.errors import InputError
from ctxmgr.files import FileResult, LinesResult, Settings, acompact_lines, compact_lines
from ctxmgr.state import BaseContextManager, MessageContextManager

TAU = Path(__file__).resolve().parents[1] / "data" / "tau-airline-sample.jsonl"


def _chat(*turns: str, **extra: Any) -> bytes:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for turn in turns:
        messages += [{"role": "user", "content": f"q {turn}"}, {"role": "assistant", "content": f"a {turn}"}]
    return orjson.dumps({"messages": messages, **extra})


def _dataset() -> bytes:
    """Every kind of line: plain ones (the fast path), one whose output breaks a provider
    rule (a warning), a blank one, one ending in CRLF, one with request keys a conversion
    drops, a broken one (an error or, skipped, a bad line), and real conversations."""
    orphan = orjson.dumps({"messages": [{"role": "tool", "tool_call_id": "x", "content": "?"}]})
    lines = [
        _chat("one", "two", "three"),
        orphan,
        b"",
        _chat("four", "five") + b"\r",
        _chat("six", "seven", temperature=0.2, logprobs=True),
        b'{"messages": [',
        *_lines(TAU.read_bytes()),
        _chat("eight"),
    ]
    return b"\n".join(lines) + b"\n"


class Unchanged(BaseContextManager[Any]):
    """What ``convert`` compacts with: every conversation as it is."""

    def trim_context(self, state: Any) -> Any:
        return state

    async def atrim_context(self, state: Any) -> Any:
        return state


def _cli(tmp_path: Path, data: bytes, args: list[str]) -> tuple[int, bytes | None, dict[str, Any]]:
    """Exit code, output file and the file's ``--json`` entry of ``ctxmgr ARGS``."""
    source = tmp_path / "rows.jsonl"
    source.write_bytes(data)
    out = tmp_path / "out.jsonl"
    out.unlink(missing_ok=True)
    result = CliRunner().invoke(app, [*args, str(source), "-o", str(out), "--json"])
    report = json.loads(result.stdout)["files"][0]
    return result.exit_code, out.read_bytes() if out.exists() else None, report


def _lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` as the CLI reads them (a carriage return stays on its line)."""
    return data.split(b"\n")[:-1]


def _library(data: bytes, manager: BaseContextManager[Any], settings: Settings) -> LinesResult:
    # --json measures tokens; the file's name is the one messages would carry.
    settings.measure = True
    return compact_lines(_lines(data), manager, settings, source="rows.jsonl")


FIGURES = ("format", "kind", "conversations", "changed", "messages_before", "messages_after")
FIGURES += ("tokens_before", "tokens_after", "summaries_added", "dropped", "warnings", "errors")


def _same_report(result: FileResult, report: dict[str, Any]) -> None:
    mine = result.as_json()
    assert {k: mine[k] for k in FIGURES} == {k: report[k] for k in FIGURES}


CASES = [
    (["trim", "-n", "1", "--on-error", "skip"], lambda: MessageContextManager(1), Settings(on_error="skip")),
    (
        ["trim", "-n", "1", "--remove-tool-msgs", "--on-error", "skip"],
        lambda: MessageContextManager(1, remove_tool_msgs=True),
        Settings(on_error="skip"),
    ),
    (
        ["trim", "-n", "2", "--to", "anthropic", "--on-error", "skip"],
        lambda: MessageContextManager(2),
        Settings(to="anthropic", on_error="skip"),
    ),
    (["convert", "--to", "gemini", "--on-error", "skip"], Unchanged, Settings(to="gemini", on_error="skip")),
    (
        ["trim", "-n", "1", "--strict", "--on-error", "skip"],
        lambda: MessageContextManager(1),
        Settings(strict=True, on_error="skip"),
    ),
]


@pytest.mark.parametrize(
    ("args", "manager", "settings"), CASES, ids=lambda c: " ".join(c) if isinstance(c, list) else ""
)
def test_the_lines_are_what_the_cli_writes(tmp_path: Path, args: list[str], manager: Any, settings: Settings) -> None:
    data = _dataset()
    code, written, report = _cli(tmp_path, data, args)
    lines = _library(data, manager(), settings)
    assert report["errors"]  # the broken line, skipped (and under --strict the orphan)
    assert report["warnings"] or "--strict" in args
    assert lines.refused == (written is None)
    if written is not None:
        assert lines.data() == written
        assert b"\n".join(lines.lines) + b"\n" == written
    assert len(lines.lines) == len(_lines(data))
    _same_report(lines.result, report)
    assert lines.warnings == report["warnings"]
    assert code == 2  # a bad line skipped still fails the run


def test_a_bad_line_raises_as_the_cli_fails(tmp_path: Path) -> None:
    data = _dataset()
    code, written, report = _cli(tmp_path, data, ["trim", "-n", "1"])
    assert (code, written) == (2, None)
    with pytest.raises(InputError) as raised:
        compact_lines(_lines(data), MessageContextManager(1), source=str(tmp_path / "rows.jsonl"))
    assert raised.value.line == 6
    assert report["errors"] == [str(raised.value)]


def test_a_bad_line_leaves_the_counts_before_it_in_the_result_given(tmp_path: Path) -> None:
    """``into``: the caller's result holds what the lines before the bad one counted, as
    the CLI's report of the failed file does (``--engine ray`` reports a stretch so)."""
    data = _dataset()
    code, _, report = _cli(tmp_path, data, ["trim", "-n", "1"])
    into = FileResult(source="rows.jsonl", kind="dataset")
    with pytest.raises(InputError):
        compact_lines(_lines(data), MessageContextManager(1), Settings(measure=True), source="rows.jsonl", into=into)
    assert code == 2
    assert into.conversations == 4  # lines 1, 2, 4 and 5; line 6 stops the call
    mine = into.as_json()
    assert {k: mine[k] for k in FIGURES if k != "errors"} == {k: report[k] for k in FIGURES if k != "errors"}
    done = compact_lines(_lines(data)[:5], MessageContextManager(1), into=FileResult(source="r", kind="dataset"))
    assert done.result.source == "r"
    assert done.result.conversations == 4


@pytest.mark.parametrize("cuts", [(1,), (2, 5), (1, 3, 7), (4, 6, 8, 9)])
@pytest.mark.parametrize("to", [None, "anthropic"])
def test_partitions_merged_give_the_whole(cuts: tuple[int, ...], to: str | None) -> None:
    """Each partition told its first line's number and the dataset's format, merged in
    order, then the dropped note worded once: the same as one call over every line."""
    lines = _lines(_dataset())
    settings = Settings(to=to, on_error="skip", measure=True)
    whole = compact_lines(lines, MessageContextManager(1), settings)
    bounds = [0, *cuts, len(lines)]
    merged = FileResult(source="<lines>", kind="dataset")
    output: list[bytes] = []
    dataset_format: str | None = None
    for start, end in itertools.pairwise(bounds):
        part = compact_lines(
            lines[start:end],
            MessageContextManager(1),
            settings,
            first_line=start + 1,
            dataset_format=dataset_format,
            finish=False,
        )
        dataset_format = dataset_format or part.result.format
        merged.merge(part.result)
        output += part.lines
    merged.format = dataset_format
    merged.note_dropped(settings.to, lossless=settings.lossless)
    assert output == whole.lines
    assert merged.as_json() == whole.result.as_json()
    assert bool(merged.dropped) == (to is not None)


def test_a_partition_of_another_format_is_refused_as_a_later_line_is() -> None:
    native = [{"message_id": "m1", "role": "user", "content": [{"type": "text", "text": "x"}]}]
    with pytest.raises(InputError, match="the first line is openai-chat"):
        compact_lines([orjson.dumps(native)], MessageContextManager(1), first_line=9, dataset_format="openai-chat")


def test_text_and_line_feeds() -> None:
    lines = _lines(_dataset())
    as_bytes = compact_lines(lines, MessageContextManager(1), Settings(on_error="skip"))
    as_text = compact_lines(
        [line.decode() + "\n" for line in lines], MessageContextManager(1), Settings(on_error="skip")
    )
    assert as_text.lines == as_bytes.lines
    assert as_text.result.as_json() == as_bytes.result.as_json()
    with pytest.raises(ValueError, match="item for line 2 holds a line feed"):
        compact_lines([_chat("a"), _chat("b") + b"\n" + _chat("c")], MessageContextManager(1))


def test_a_manager_that_waits_runs_in_an_event_loop_of_its_own() -> None:
    """A summary manager awaits its summarizer: the call makes a loop; in a running loop
    the async form gives the same."""
    import asyncio

    from ctxmgr.state import SummaryContextManager

    lines = [_chat(*(f"t{i}" for i in range(6)))] * 3
    settings = Settings(concurrency=2, measure=True)
    made = compact_lines(lines, SummaryContextManager("offline", max_messages=4, keep_recent=2), settings)
    assert made.result.summaries_added == 3
    assert all(b"summary" in line for line in made.lines)

    async def in_a_loop() -> LinesResult:
        return await acompact_lines(lines, SummaryContextManager("offline", max_messages=4, keep_recent=2), settings)

    again = asyncio.run(in_a_loop())
    assert again.lines == made.lines
    assert again.result.as_json() == made.result.as_json()
