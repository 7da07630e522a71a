"""Many files at once: check mode, in-place, mirror output, reports, config, cache,
resume, concurrency and custom managers, end to end through the CLI on real files."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from _terminal import stderr_on_a_terminal
from llm_server import LLMServer, RecordedRequest, Reply
from typer.testing import CliRunner

from ctxmgr.cli import app

runner = CliRunner()
SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def _messages(users: int, *, with_tools: bool = True) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"message_id": "s", "role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    ]
    for turn in range(users):
        messages.append({"message_id": f"u{turn}", "role": "user", "content": [{"type": "text", "text": f"q{turn}"}]})
        if with_tools and turn % 2 == 0:
            messages.append(
                {
                    "message_id": f"c{turn}",
                    "role": "assistant",
                    "content": [],
                    "tools_calls": [
                        {"id": f"call{turn}", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
                    ],
                }
            )
            messages.append(
                {
                    "message_id": f"t{turn}",
                    "role": "tool",
                    "content": [{"type": "tool_result", "call_id": f"call{turn}", "output": f"result {turn}"}],
                }
            )
        messages.append(
            {"message_id": f"a{turn}", "role": "assistant", "content": [{"type": "text", "text": f"answer {turn}"}]}
        )
    return messages


def _write_tree(root: Path) -> dict[str, Path]:
    """A tree of fixtures: two long conversations, a short one, and a JSONL dataset."""
    files = {
        "long": root / "chats" / "long.json",
        "nested": root / "chats" / "deep" / "nested.json",
        "short": root / "short.json",
        "dataset": root / "data" / "rows.jsonl",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    files["long"].write_bytes(orjson.dumps({"context": _messages(6), "thread": "t-1"}, option=orjson.OPT_INDENT_2))
    files["nested"].write_bytes(orjson.dumps(_messages(4)))
    files["short"].write_bytes(orjson.dumps(_messages(1)))
    files["dataset"].write_bytes(
        b"".join(orjson.dumps({"id": i, "context": _messages(1 + i % 4)}) + b"\n" for i in range(6))
    )
    (root / "notes.txt").write_text("not a conversation, not picked up by folder search")
    return files


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()
    }


def _report(output: str) -> dict[str, Any]:
    value = json.loads(output)
    assert isinstance(value, dict)
    return value


# -- check mode ----------------------------------------------------------------------


def test_check_lists_files_that_would_change_and_writes_nothing(tmp_path: Path) -> None:
    files = _write_tree(tmp_path)
    before = _snapshot(tmp_path)
    result = runner.invoke(app, ["trim", "--check", "-n", "2", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert f"would change {files['long']}" in result.stderr
    assert f"would change {files['nested']}" in result.stderr
    assert f"would change {files['dataset']}" in result.stderr
    assert str(files["short"]) not in result.stderr
    assert result.stdout == ""
    assert _snapshot(tmp_path) == before


def test_check_exits_zero_when_nothing_would_change(tmp_path: Path) -> None:
    _write_tree(tmp_path)
    before = _snapshot(tmp_path)
    result = runner.invoke(app, ["trim", "--check", "-n", "50", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "would change" not in result.stderr
    assert _snapshot(tmp_path) == before


# -- in place and mirrored output -------------------------------------------------------


def test_in_place_rewrites_each_changed_file_and_leaves_the_others_alone(tmp_path: Path) -> None:
    files = _write_tree(tmp_path)
    before = _snapshot(tmp_path)
    result = runner.invoke(app, ["trim", "--in-place", "-n", "2", "--no-view", str(tmp_path)])
    assert result.exit_code == 0, result.output
    after = _snapshot(tmp_path)
    assert after["short.json"] == before["short.json"]  # unchanged: not even rewritten
    long = orjson.loads(files["long"].read_bytes())
    assert long["thread"] == "t-1"  # keys outside the messages survive
    assert sum(1 for m in long["context"] if m["role"] == "user") == 2
    rows = [orjson.loads(line) for line in files["dataset"].read_bytes().splitlines()]
    assert [r["id"] for r in rows] == list(range(6))
    assert all(sum(1 for m in r["context"] if m["role"] == "user") <= 2 for r in rows)
    assert not list(tmp_path.rglob("*.ctxmgr-tmp"))


def test_output_folder_mirrors_the_input_tree(tmp_path: Path) -> None:
    source = tmp_path / "in"
    _write_tree(source)
    before = _snapshot(source)
    out = tmp_path / "out"
    result = runner.invoke(app, ["trim", "-n", "1", "--no-view", "-o", str(out), str(source)])
    assert result.exit_code == 0, result.output
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == ["chats/deep/nested.json", "chats/long.json", "data/rows.jsonl", "short.json"]
    nested = orjson.loads((out / "chats" / "deep" / "nested.json").read_bytes())
    assert sum(1 for m in nested if m["role"] == "user") == 1
    assert _snapshot(source) == before


def test_several_inputs_need_a_destination(tmp_path: Path) -> None:
    _write_tree(tmp_path)
    result = runner.invoke(app, ["trim", "-n", "1", str(tmp_path)])
    assert result.exit_code == 2
    assert "several inputs need --in-place, -o DIR, --check or --json" in result.stderr


def test_glob_patterns_expand(tmp_path: Path) -> None:
    _write_tree(tmp_path)
    result = runner.invoke(app, ["trim", "--json", "-n", "1", str(tmp_path / "chats" / "*.json")])
    assert result.exit_code == 0, result.output
    paths = [f["path"] for f in _report(result.stdout)["files"]]
    assert paths == [str(tmp_path / "chats" / "long.json")]


# -- the JSON report --------------------------------------------------------------------


def test_json_report_schema(tmp_path: Path) -> None:
    files = _write_tree(tmp_path)
    result = runner.invoke(app, ["trim", "--json", "-n", "2", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = _report(result.stdout)
    assert set(report) == {"files", "skipped", "notes", "totals", "exit_code"}
    assert report["skipped"] == []
    assert report["notes"] == []
    by_path = {f["path"]: f for f in report["files"]}
    assert set(by_path) == {str(p) for p in files.values()}
    expected_keys = {
        "path",
        "destination",
        "format",
        "kind",
        "conversations",
        "changed",
        "messages_before",
        "messages_after",
        "tokens_before",
        "tokens_after",
        "summaries_added",
        "dropped",
        "warnings",
        "errors",
    }
    for entry in report["files"]:
        assert set(entry) == expected_keys
        assert entry["format"] == "native"
        assert entry["messages_after"] <= entry["messages_before"]
        assert entry["tokens_after"] <= entry["tokens_before"]
    dataset = by_path[str(files["dataset"])]
    assert dataset["kind"] == "dataset"
    assert dataset["conversations"] == 6
    assert by_path[str(files["short"])]["changed"] is False
    assert by_path[str(files["long"])]["changed"] is True
    totals = report["totals"]
    assert totals["files"] == 4
    assert totals["messages_before"] == sum(f["messages_before"] for f in report["files"])
    assert report["exit_code"] == 0


# -- one bad file among good ones -----------------------------------------------------------


def test_a_bad_file_is_reported_and_the_others_still_finish(tmp_path: Path) -> None:
    files = _write_tree(tmp_path)
    bad = tmp_path / "chats" / "broken.json"
    bad.write_bytes(b'{"context": [{"role": "user", "content": [')
    bad_before = bad.read_bytes()
    result = runner.invoke(app, ["trim", "--in-place", "-n", "1", "--no-view", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{bad}:1:" in result.stderr
    assert "Traceback" not in result.output
    assert bad.read_bytes() == bad_before
    long = orjson.loads(files["long"].read_bytes())
    assert sum(1 for m in long["context"] if m["role"] == "user") == 1


# -- configuration -----------------------------------------------------------------------


def test_pyproject_settings_are_defaults_and_flags_win(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _write_tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.ctxmgr]\nmax-messages = 1\n\n[tool.ctxmgr.trim]\nremove-tool-msgs = true\n"
    )
    monkeypatch.chdir(tmp_path / "chats")  # the nearest pyproject.toml is found upward
    configured = runner.invoke(app, ["trim", "--no-view", str(files["long"])])
    assert configured.exit_code == 0, configured.output
    kept = orjson.loads(configured.stdout)["context"]
    assert sum(1 for m in kept if m["role"] == "user") == 1
    flagged = runner.invoke(app, ["trim", "--no-view", "-n", "3", str(files["long"])])
    assert sum(1 for m in orjson.loads(flagged.stdout)["context"] if m["role"] == "user") == 3
    shown = runner.invoke(app, ["config", "trim", "--json"])
    assert shown.exit_code == 0, shown.output
    settings = json.loads(shown.stdout)
    assert settings["config_file"] == str(tmp_path / "pyproject.toml")
    assert settings["commands"]["trim"]["--max-messages"] == {
        "value": 1,
        "source": f"{tmp_path / 'pyproject.toml'} [tool.ctxmgr]",
    }
    assert settings["commands"]["trim"]["--remove-tool-msgs"]["source"].endswith("[tool.ctxmgr.trim]")
    assert settings["commands"]["trim"]["--check"]["source"] == "default"


def test_ctxmgr_toml_and_unknown_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _write_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ctxmgr.toml").write_text("max-messages = 2\n")
    result = runner.invoke(app, ["trim", "--no-view", str(files["long"])])
    assert sum(1 for m in orjson.loads(result.stdout)["context"] if m["role"] == "user") == 2
    (tmp_path / "ctxmgr.toml").write_text("max-mesages = 2\n")
    result = runner.invoke(app, ["trim", "--no-view", str(files["long"])])
    assert result.exit_code == 2
    assert "unknown setting 'max-mesages'" in result.stderr


# -- batch summaries: cache, resume, concurrency ------------------------------------------------


def _digest_responder(request: RecordedRequest) -> Reply:
    """A summary that depends on the exact text sent, so reuse is visible."""
    text = request.input_text or ""
    return Reply.ok(f"summary {hashlib.sha256(text.encode()).hexdigest()[:10]}")


def _summarize_args(server: LLMServer, cache: Path, *extra: str) -> list[str]:
    return [
        "summarize",
        "--model",
        "gpt-4o-mini",
        "--base-url",
        server.openai_url,
        "--max-messages",
        "4",
        "--keep-recent",
        "2",
        "--cache",
        str(cache),
        "--max-retries",
        "0",
        "--timeout",
        "5",
        "--no-view",
        *extra,
    ]


def _row(i: int) -> dict[str, Any]:
    messages = _messages(3 + i % 3)
    messages[1]["content"][0]["text"] = f"question from row {i}"  # every row asks for its own summary
    return {"id": i, "context": messages}


def _dataset(path: Path, rows: int) -> Path:
    path.write_bytes(b"".join(orjson.dumps(_row(i)) + b"\n" for i in range(rows)))
    return path


def test_second_run_is_served_from_the_cache(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cache")
    llm_server.responder = _digest_responder
    data = _dataset(tmp_path / "rows.jsonl", 5)
    cache = tmp_path / "cache"
    first = runner.invoke(app, _summarize_args(llm_server, cache, str(data)))
    assert first.exit_code == 0, first.output
    assert llm_server.request_count == 5
    llm_server.reset()
    second = runner.invoke(app, _summarize_args(llm_server, cache, str(data)))
    assert second.exit_code == 0, second.output
    assert llm_server.request_count == 0
    assert second.stdout == first.stdout
    entries = list(cache.rglob("*.json"))
    assert len(entries) == 5
    assert all(b"sk-test-cache" not in entry.read_bytes() for entry in entries)
    no_cache = runner.invoke(app, _summarize_args(llm_server, cache, "--no-cache", str(data)))
    assert no_cache.exit_code == 0
    assert llm_server.request_count == 5


def test_a_corrupt_cache_entry_is_rebuilt(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data = _dataset(tmp_path / "rows.jsonl", 2)
    cache = tmp_path / "cache"
    first = runner.invoke(app, _summarize_args(llm_server, cache, str(data)))
    assert first.exit_code == 0, first.output
    for entry in cache.rglob("*.json"):
        entry.write_bytes(b"{ not json")
    llm_server.reset()
    second = runner.invoke(app, _summarize_args(llm_server, cache, str(data)))
    assert second.exit_code == 0, second.output
    assert llm_server.request_count == 2
    assert second.stdout == first.stdout
    assert all(orjson.loads(e.read_bytes())["summary"] for e in cache.rglob("*.json"))


def test_an_interrupted_dataset_run_resumes_from_the_cache(tmp_path: Path, llm_server: LLMServer) -> None:
    rows = 8
    data = _dataset(tmp_path / "rows.jsonl", rows)
    cache = tmp_path / "cache"
    out = tmp_path / "out.jsonl"
    llm_server.responder = _digest_responder
    llm_server.latency = 0.3
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-resume"}
    command = [
        sys.executable,
        "-m",
        "ctxmgr",
        *_summarize_args(llm_server, cache, "--concurrency", "1", "-o", str(out), str(data)),
    ]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while llm_server.request_count < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    process.kill()  # SIGKILL: no cleanup code runs
    process.wait()
    done_before_kill = llm_server.request_count
    assert 3 <= done_before_kill < rows
    assert not out.exists()  # nothing half-written
    llm_server.reset()
    llm_server.latency = 0
    resumed = subprocess.run(command, env=env, capture_output=True, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    # Every summary finished before the kill came from the cache.
    assert llm_server.request_count <= rows - (done_before_kill - 1)
    fresh = tmp_path / "fresh.jsonl"
    clean = runner.invoke(
        app,
        _summarize_args(llm_server, tmp_path / "other-cache", "-o", str(fresh), str(data)),
        env={"OPENAI_API_KEY": "sk-test-resume"},
    )
    assert clean.exit_code == 0, clean.output
    assert out.read_bytes() == fresh.read_bytes()
    assert not list(tmp_path.glob("*.ctxmgr-tmp"))


def test_concurrent_summaries_overlap_and_stay_bounded(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_server.latency = 0.3
    data = _dataset(tmp_path / "rows.jsonl", 8)
    result = runner.invoke(
        app, _summarize_args(llm_server, tmp_path / "c", "--concurrency", "3", "--no-cache", str(data))
    )
    assert result.exit_code == 0, result.output
    assert llm_server.request_count == 8
    assert 2 <= llm_server.max_in_flight <= 3
    ids = [orjson.loads(line)["id"] for line in result.stdout.splitlines()]
    assert ids == list(range(8))  # same lines, same order


def test_concurrency_also_spans_files(tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    llm_server.latency = 0.3
    for i in range(4):
        (tmp_path / f"c{i}.json").write_bytes(orjson.dumps({"context": _messages(4)}))
    result = runner.invoke(
        app,
        _summarize_args(llm_server, tmp_path / "c", "--concurrency", "4", "--no-cache", "--in-place", str(tmp_path)),
    )
    assert result.exit_code == 0, result.output
    assert llm_server.max_in_flight >= 2
    for i in range(4):
        assert orjson.loads((tmp_path / f"c{i}.json").read_bytes())["context_summary"]


def test_dry_run_calls_nothing(tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _dataset(tmp_path / "rows.jsonl", 4)
    before = data.read_bytes()
    result = runner.invoke(app, _summarize_args(llm_server, tmp_path / "c", "--dry-run", "--json", str(data)))
    assert result.exit_code == 0, result.output
    report = _report(result.stdout)
    assert report["totals"]["conversations"] == 4
    assert report["totals"]["calls"] == 4
    assert report["totals"]["input_tokens"] > 0
    assert llm_server.request_count == 0
    assert data.read_bytes() == before


def test_a_failed_summary_in_a_batch_leaves_that_file_unchanged(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    for i in range(3):
        (tmp_path / f"c{i}.json").write_bytes(orjson.dumps({"context": _messages(4), "n": i}))
    llm_server.script(Reply.error(500))
    before = _snapshot(tmp_path)
    result = runner.invoke(
        app, _summarize_args(llm_server, tmp_path / "cache", "--concurrency", "1", "--in-place", str(tmp_path))
    )
    assert result.exit_code == 3
    assert "HTTP 500" in result.stderr
    after = _snapshot(tmp_path)
    unchanged = [name for name in before if name.endswith(".json") and after[name] == before[name]]
    assert unchanged == ["c0.json"]
    assert all(orjson.loads((tmp_path / f"c{i}.json").read_bytes()).get("context_summary") for i in (1, 2))


# -- custom managers -------------------------------------------------------------------------


def test_custom_manager_from_a_file(tmp_path: Path) -> None:
    target = tmp_path / "chat.json"
    shutil.copy(SAMPLES / "support-chat.json", target)
    spec = f"{SAMPLES / 'managers' / 'keep_last.py'}:KeepLastMessages"
    result = runner.invoke(app, ["run", str(target), "--manager", spec, "--option", "count=3", "--no-view"])
    assert result.exit_code == 0, result.output
    context = orjson.loads(result.stdout)["context"]
    assert context[0]["role"] == "system"
    assert context[1]["tools_calls"]  # the cut moved to keep the call with its result
    assert len(context) == 5
    check = runner.invoke(app, ["run", str(target), "--manager", spec, "--check"])
    assert check.exit_code == 1


def test_custom_manager_from_a_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "mymanagers"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from ctxmgr.state import BaseContextManager\n"
        "class DropAll(BaseContextManager):\n"
        "    def __init__(self, keep_system: bool = False, note: str | None = None):\n"
        "        self.keep_system = keep_system\n"
        "    def trim_context(self, state):\n"
        "        state.context = [m for m in state.context if self.keep_system and m.role == 'system']\n"
        "        return state\n"
        "    async def atrim_context(self, state):\n"
        "        return self.trim_context(state)\n"
        "class NotAManager:\n"
        "    pass\n"
        "class Explodes(DropAll):\n"
        "    def trim_context(self, state):\n"
        "        raise ValueError('boom')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sample = str(SAMPLES / "short-chat.json")
    ok = runner.invoke(app, ["run", sample, "--manager", "mymanagers:DropAll", "--option", "keep_system=yes"])
    assert ok.exit_code == 0, ok.output
    assert [m["role"] for m in orjson.loads(ok.stdout)] == ["system"]
    not_subclass = runner.invoke(app, ["run", sample, "--manager", "mymanagers:NotAManager"])
    assert not_subclass.exit_code == 2  # names nothing usable: a usage error
    assert "NotAManager is not a subclass of ctxmgr.state.BaseContextManager" in not_subclass.stderr
    missing = runner.invoke(app, ["run", sample, "--manager", "no_such_module_xyz:Thing"])
    assert missing.exit_code == 2
    assert "no module named no_such_module_xyz" in missing.stderr
    no_class = runner.invoke(app, ["run", sample, "--manager", f"{package / '__init__.py'}:Missing"])
    assert no_class.exit_code == 2
    assert "has no attribute 'Missing'" in no_class.stderr
    raises = runner.invoke(app, ["run", sample, "--manager", "mymanagers:Explodes"])
    assert raises.exit_code == 1
    assert "Explodes raised ValueError: boom" in raises.stderr
    assert "Traceback" not in raises.output
    bad_option = runner.invoke(app, ["run", sample, "--manager", "mymanagers:DropAll", "--option", "keep_system=maybe"])
    assert bad_option.exit_code == 2
    assert "--option keep_system: expected true or false" in bad_option.stderr
    unknown = runner.invoke(app, ["run", sample, "--manager", "mymanagers:DropAll", "--option", "colour=red"])
    assert unknown.exit_code == 2
    assert "DropAll has no such parameter" in unknown.stderr


# -- stats -------------------------------------------------------------------------------------


def test_stats_json(tmp_path: Path) -> None:
    files = _write_tree(tmp_path)
    result = runner.invoke(app, ["stats", "--json", "-n", "2", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = _report(result.stdout)
    by_path = {f["path"]: f for f in report["files"]}
    long = by_path[str(files["long"])]
    assert long["messages_by_role"] == {"assistant": 9, "system": 1, "tool": 3, "user": 6}
    assert long["tool_calls"] == 3
    assert long["trim_would_fire"] == 1
    assert long["largest_messages"][0]["estimated_tokens"] >= long["largest_messages"][-1]["estimated_tokens"]
    assert by_path[str(files["dataset"])]["conversations"] == 6
    assert report["total"]["messages"] == sum(f["messages"] for f in report["files"])
    table = runner.invoke(app, ["stats", str(files["short"])])
    assert table.exit_code == 0
    assert "tokens: estimated by script (a token per 4 ASCII characters" in table.stdout
    assert "1/1/2/1" in table.stdout  # system/user/assistant/tool counts


def test_conversion_checks_provider_rules_on_what_is_written() -> None:
    # LangChain keeps parallel tool results in separate messages; the Anthropic writer
    # merges them into one user message, so the output obeys Anthropic's rule.
    result = runner.invoke(app, ["convert", str(SAMPLES / "langchain.json"), "--to", "anthropic", "--strict"])
    assert result.exit_code == 0, result.output
    assert "must all be in the next message" not in result.stderr
    assert orjson.loads(result.stdout)["messages"]


def test_a_tree_of_every_format_in_check_and_in_place_modes(tmp_path: Path) -> None:
    samples = sorted(p for p in SAMPLES.iterdir() if p.suffix in (".json", ".jsonl"))
    for sample in samples:
        shutil.copy(sample, tmp_path / sample.name)
    check = runner.invoke(app, ["trim", "--check", "-n", "1", "--json", str(tmp_path)])
    report = _report(check.stdout)
    formats_seen = {f["format"] for f in report["files"]}
    assert formats_seen == {"native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"}
    assert all(not f["errors"] for f in report["files"]), report
    result = runner.invoke(app, ["trim", "--in-place", "-n", "1", "--no-view", str(tmp_path)])
    assert result.exit_code == 0, result.output
    again = runner.invoke(app, ["trim", "--check", "-n", "1", str(tmp_path)])
    assert again.exit_code == 0, again.stderr  # trimming is idempotent in every format
    validate = runner.invoke(app, ["validate", str(tmp_path)])
    assert validate.exit_code == 0, validate.stdout


def test_progress_bar_and_diffs_on_a_terminal(tmp_path: Path) -> None:
    for i in range(3):
        shutil.copy(SAMPLES / "openai-chat.json", tmp_path / f"c{i}.json")
    command = [sys.executable, "-m", "ctxmgr", "summarize", "--model", "offline", "--max-messages", "4", "--check"]
    returncode, raw = stderr_on_a_terminal([*command, str(tmp_path)])
    shown = raw.decode(errors="replace")
    assert returncode == 1, shown
    assert "unexpected" not in shown
    assert "summary added" in shown  # the diff view, shown by default on a terminal
    assert shown.count("would change ") == 3  # one line a file (the closing line counts them)


def test_quiet_check_prints_nothing_but_still_fails(tmp_path: Path) -> None:
    files = _write_tree(tmp_path)
    result = runner.invoke(app, ["trim", "--check", "--quiet", "-n", "1", str(files["long"])])
    assert result.exit_code == 1
    assert result.stderr == ""
    assert result.stdout == ""


def test_a_failed_summary_in_a_dataset_names_its_line(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data = _dataset(tmp_path / "rows.jsonl", 3)
    llm_server.script(Reply.ok("first"), Reply.error(500))  # a fault of one conversation: the next goes on
    result = runner.invoke(
        app, _summarize_args(llm_server, tmp_path / "c", "--concurrency", "1", "--no-cache", str(data))
    )
    assert result.exit_code == 3
    assert f"error: {data}:2: openai: HTTP 500" in result.stderr
    rows = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert [bool(r.get("context_summary")) for r in rows] == [True, False, True]  # line 2 unchanged
