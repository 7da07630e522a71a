"""``--fix-call-ids``: reused tool call ids renumbered with their results, in every format."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr._validate import check_messages
from ctxmgr.cli import app
from ctxmgr.formats._call_ids import fix_call_ids

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "tau-airline-sample.jsonl"  # real GPT-4o conversations, ids reused
TAU = ROOT / "bench" / "tau" / "tau-airline-gpt4o.jsonl"
runner = CliRunner()

_ANTHROPIC_REUSED = {
    "messages": [
        {"role": "user", "content": "look twice"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "get", "input": {"n": 2}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "b"}]},
        {"role": "assistant", "content": "done"},
    ]
}


def _reused(path: Path, fmt: str | None = None) -> int:
    """How many calls of ``path`` reuse an id (as ``validate`` finds them)."""
    report = orjson.loads(runner.invoke(app, ["validate", "--json", str(path)]).stdout)
    return sum(p["code"] == "duplicate-call-id" for f in report["files"] for p in f["problems"])


def _input_in(fmt: str, tmp_path: Path) -> Path:
    if fmt == "anthropic":
        path = tmp_path / "anthropic.json"
        path.write_bytes(orjson.dumps(_ANTHROPIC_REUSED))
        return path
    path = tmp_path / f"{fmt}.jsonl"
    done = runner.invoke(app, ["convert", "--to", fmt, str(SAMPLE), "-o", str(path)])
    assert done.exit_code == 0, done.stderr
    return path


@pytest.mark.parametrize("fmt", ["native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"])
def test_every_format_is_renumbered_in_its_own_shape(fmt: str, tmp_path: Path) -> None:
    source = _input_in(fmt, tmp_path)
    reused = _reused(source)
    assert reused > 0
    out = tmp_path / f"fixed-{source.name}"
    done = runner.invoke(app, ["trim", "-n", "1000", "--fix-call-ids", "--json", str(source)])
    report = orjson.loads(done.stdout)
    assert report["totals"]["call_ids_fixed"] == reused
    written = runner.invoke(app, ["trim", "-n", "1000", "--fix-call-ids", str(source), "-o", str(out)])
    assert written.exit_code == 0, written.stderr
    assert f"{reused} reused tool call id" in written.stderr  # said, not silent
    for target in ("openai-chat", "anthropic"):
        checked = runner.invoke(app, ["validate", "--for", target, str(out)])
        assert checked.exit_code == 0, checked.stdout
        assert "note:" not in checked.stdout
    # The same format, and the same messages apart from the ids.
    stats = [orjson.loads(runner.invoke(app, ["stats", "--json", str(f)]).stdout)["files"][0] for f in (source, out)]
    before, after = stats
    assert after["format"] == before["format"] == fmt
    assert (after["messages"], after["messages_by_role"]) == (before["messages"], before["messages_by_role"])
    # Deterministic, and a second pass has nothing left to fix.
    again = tmp_path / "again"
    runner.invoke(app, ["trim", "-n", "1000", "--fix-call-ids", str(source), "-o", str(again)])
    assert again.read_bytes() == out.read_bytes()
    twice = orjson.loads(runner.invoke(app, ["trim", "-n", "1000", "--fix-call-ids", "--json", str(out)]).stdout)
    assert twice["totals"]["call_ids_fixed"] == 0


def test_converting_reused_ids_to_anthropic_is_an_error_naming_the_flag(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    refused = runner.invoke(app, ["convert", "--to", "anthropic", str(SAMPLE), "-o", str(out)])
    assert refused.exit_code == 2
    assert f"{SAMPLE}:1: converting to anthropic would write" in refused.stderr
    assert "--fix-call-ids renumbers them" in refused.stderr
    assert not out.exists()
    fixed = runner.invoke(app, ["convert", "--to", "anthropic", "--fix-call-ids", str(SAMPLE), "-o", str(out)])
    assert fixed.exit_code == 0, fixed.stderr
    assert runner.invoke(app, ["validate", "--for", "anthropic", str(out)]).exit_code == 0


def test_all_200_real_conversations_are_clean_for_both_providers_after_the_fix(tmp_path: Path) -> None:
    out = tmp_path / "tau.jsonl"
    command = [sys.executable, "-m", "ctxmgr", "trim", "-n", "4", "--fix-call-ids", str(TAU), "-o", str(out)]
    subprocess.run(command, check=True, capture_output=True)
    for target in ("openai-chat", "anthropic"):
        checked = subprocess.run(
            [sys.executable, "-m", "ctxmgr", "validate", "--for", target, str(out)], capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stdout[-2000:]
        assert checked.stdout.strip() == f"{out}: ok (200 conversations)"


def test_validate_names_the_providers_and_fails_only_for_one_that_refuses() -> None:
    plain = runner.invoke(app, ["validate", str(SAMPLE)])
    assert plain.exit_code == 0  # Chat Completions, the file's own API, takes reused ids
    assert "openai-chat accepts this, anthropic rejects it" in plain.stdout
    assert plain.stdout.count("note:") == 2  # one line per kind
    strict = runner.invoke(app, ["validate", "--for", "anthropic", "--json", str(SAMPLE)])
    assert strict.exit_code == 1
    problems = orjson.loads(strict.stdout)["files"][0]["problems"]
    assert {p["code"] for p in problems} == {"duplicate-call-id", "duplicate-result"}
    assert all(p["providers"] == ["anthropic"] and p["failure"] for p in problems)


# -- the library function, on random conversations ------------------------------------------------


@st.composite
def _calls(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Chat messages where assistants call tools by ids drawn from a small pool (so reused)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for _ in range(draw(st.integers(1, 6))):
        ids = draw(st.lists(st.sampled_from(["a", "b", "a_2", "c"]), min_size=1, max_size=2, unique=True))
        calls = [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": i, "content": "r"} for i in ids]
    messages.append({"role": "assistant", "content": "done"})
    return messages


@given(_calls())
def test_fixed_ids_are_unique_and_each_result_answers_its_own_call(messages: list[dict[str, Any]]) -> None:
    conversation = formats.load(orjson.dumps({"messages": messages}), source="c.json")
    reused = sum(p.code == "duplicate-call-id" for p in check_messages(conversation.state.context))
    assert fix_call_ids(conversation) == reused
    assert check_messages(conversation.state.context) == []
    written = orjson.loads(formats.dump(conversation))["messages"]
    call_ids = [c["id"] for m in written for c in m.get("tool_calls") or ()]
    assert len(call_ids) == len(set(call_ids))
    last_call: str | None = None
    for message in written:  # each tool message answers the calls just before it
        if message.get("tool_calls"):
            pending = [c["id"] for c in message["tool_calls"]]
        elif message["role"] == "tool":
            last_call = message["tool_call_id"]
            assert last_call in pending
    assert fix_call_ids(formats.load(orjson.dumps({"messages": written}), source="c.json")) == 0
