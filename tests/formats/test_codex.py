"""Codex CLI rollouts (``codex``): the real rollouts of ``tests/conversations/agents/codex``
through the command line, and properties of every manager on generated rollouts: the
written file keeps Codex's record order (``session_meta`` first, one ``compacted`` record
at most, before the records it does not replace), every call with its output, and reads
back to the conversation the manager left."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from _codex_rollouts import CALLS, ROLLOUTS, rollouts, said
from _fast_paths import explored
from _format_support import FixedSummarizer, structural_problems, view
from hypothesis import HealthCheck, given, strategies as st
from typer.testing import CliRunner

from ctxmgr import _format_registry as format_registry, formats
from ctxmgr.cli import app
from ctxmgr.errors import CtxmgrError, InputError
from ctxmgr.formats._base import CERTAIN, NO
from ctxmgr.formats._detection.codex import SUMMARY_PREFIX, score
from ctxmgr.state import BaseContextManager, MessageContextManager, SummaryContextManager
from ctxmgr.state._compose import compaction_chain

COMPACTED = next(p for p in ROLLOUTS if "12-54-34" in p.name)


def records_of(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def history(records: list[dict[str, Any]]) -> list[Any]:
    """The items ``codex resume`` rebuilds: the last replacement history, then the items after it."""
    last = max((i for i, r in enumerate(records) if r["type"] == "compacted"), default=None)
    items: list[Any] = []
    if last is not None:
        items.extend(records[last]["payload"].get("replacement_history") or [])
    items.extend(r["payload"] for r in records[(last or 0) + 1 :] if r["type"] == "response_item")
    return items


def codex_invariants(records: list[dict[str, Any]]) -> None:
    """Codex's record order and pairs: what ``codex resume`` needs of a rollout."""
    assert records[0]["type"] == "session_meta"
    assert [r["type"] for r in records].count("session_meta") == 1
    assert [r["type"] for r in records].count("compacted") <= 1
    items = history(records)
    calls = [(i["type"], i["call_id"]) for i in items if i.get("type") in CALLS]
    outputs = [(i["type"], i["call_id"]) for i in items if i.get("type") in CALLS.values()]
    assert sorted((CALLS[kind], call) for kind, call in calls) == sorted(outputs)
    for kind, call in outputs:  # every output after its call
        at = next(n for n, i in enumerate(items) if i.get("call_id") == call and i.get("type") == kind)
        assert any(i.get("call_id") == call and i.get("type") in CALLS for i in items[:at])


def run(*arguments: str) -> Any:
    return CliRunner().invoke(app, list(arguments))


# -- detection -----------------------------------------------------------------------


def test_a_rollout_is_certain_and_responses_items_are_not() -> None:
    for path in ROLLOUTS:
        assert score(records_of(path.read_bytes())) == CERTAIN
    items = [{"type": "message", "role": "user", "content": "hi"}, {"type": "function_call", "call_id": "c"}]
    assert score(items) == NO
    assert score({"type": "session_meta", "payload": {}}) == NO
    assert format_registry.entry("codex").session_log


def test_a_rollout_that_does_not_start_with_session_meta_names_the_line() -> None:
    data = b'{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":"hi"}}\n' * 2
    with pytest.raises(InputError, match="starts with its session_meta record") as caught:
        formats.load(data, source="r.jsonl")
    assert caught.value.line == 1


# -- the real rollouts, through the command line ------------------------------------


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:27])
def test_validate_and_stats_read_a_real_rollout(path: Path) -> None:
    result = run("validate", str(path))
    assert result.exit_code == 0, result.output
    assert "ok (1 conversation)" in result.output
    result = run("stats", str(path))
    assert result.exit_code == 0, result.output
    assert f"{path.name}, codex: conv 1;" in result.output


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:27])
def test_trim_keeping_everything_writes_the_rollout_byte_for_byte(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = run("trim", "-n", "1000", "--no-view", "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:27])
def test_trim_keeps_codex_order_pairs_and_whole_records(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = run("trim", "-n", "1", "--no-view", "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    written, lines = records_of(out.read_bytes()), set(path.read_bytes().splitlines())
    codex_invariants(written)
    assert len(written) < len(records_of(path.read_bytes()))
    # Every record but a compaction ctxmgr wrote is one of the file's lines, as it was.
    made = [line for line in out.read_bytes().splitlines() if line not in lines]
    assert all(orjson.loads(line)["type"] in ("compacted", "event_msg") for line in made)
    again = formats.load(out.read_bytes(), source="out.jsonl")
    assert again.format == "codex"
    users = [m for m in again.state.context if m.role == "user"]
    assert users
    assert not any(SUMMARY_PREFIX in m.text() for m in users)
    assert structural_problems(again.state.context) == []


def test_trim_of_a_compacted_rollout_keeps_its_rules_in_a_new_compaction(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = run("trim", "-n", "1", "--no-view", "-o", str(out), str(COMPACTED))
    assert result.exit_code == 0, result.output
    assert "replaced by Codex's compaction on line 58" in result.output
    written = records_of(out.read_bytes())
    assert [r["type"] for r in written[:3]] == ["session_meta", "compacted", "event_msg"]
    replacement = written[1]["payload"]["replacement_history"]
    original = records_of(COMPACTED.read_bytes())[57]["payload"]["replacement_history"]
    developer = [i for i in original if i.get("role") == "developer"]
    assert [i for i in replacement if i.get("role") == "developer"] == developer
    assert written[1]["payload"]["message"] == ""


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:27])
def test_summarize_offline_writes_codex_compaction(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    arguments = ["summarize", "--model", "offline", "--max-messages", "10", "--keep-recent", "4", "--no-view"]
    result = run(*arguments, "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    written = records_of(out.read_bytes())
    codex_invariants(written)
    compacted = [r for r in written if r["type"] == "compacted"]
    assert len(compacted) == 1
    summary = compacted[0]["payload"]["replacement_history"]
    summary_items = [i for i in summary if i.get("role") == "user" and SUMMARY_PREFIX in str(i.get("content"))]
    assert len(summary_items) == 1
    assert compacted[0]["payload"]["message"].startswith(SUMMARY_PREFIX + "\n")
    again = formats.load(out.read_bytes(), source="out.jsonl")
    assert again.state.context_summary
    assert compacted[0]["payload"]["message"] == f"{SUMMARY_PREFIX}\n{again.state.context_summary}"
    # A second run appends to the summary, in one compaction again.
    second = tmp_path / "second.jsonl"
    result = run(*arguments, "-o", str(second), str(out))
    assert result.exit_code == 0, result.output
    assert [r["type"] for r in records_of(second.read_bytes())].count("compacted") == 1


@pytest.mark.parametrize("target", ["openai-chat", "openai-responses", "anthropic", "gemini", "langchain", "native"])
@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:27])
def test_convert_to_each_format_validates(path: Path, target: str, tmp_path: Path) -> None:
    out = tmp_path / f"out.{target}.json"
    result = run("convert", "--to", target, "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    result = run("validate", str(out))
    assert result.exit_code == 0, result.output
    converted = formats.load(out.read_bytes(), source=out.name)
    assert converted.format == target
    source = formats.load(path.read_bytes(), source=path.name)
    # The system prompt (base_instructions) and every call and result travel.
    assert source.state.context[0].text() in converted.state.context[0].text() or target in ("gemini",)
    calls = sum(len(m.tools_calls or ()) for m in source.state.context)
    assert sum(len(m.tools_calls or ()) for m in converted.state.context) == calls


def test_converting_into_codex_is_refused(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_bytes(orjson.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    result = run("convert", "--to", "codex", "-o", str(tmp_path / "out.jsonl"), str(chat))
    assert result.exit_code != 0
    assert "codex" in result.output
    assert "invented session" in result.output
    assert not (tmp_path / "out.jsonl").exists()


def _tool_rollout() -> list[dict[str, Any]]:
    """Three turns, each a function call and a custom tool call with long outputs."""
    out: list[dict[str, Any]] = [
        {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s", "base_instructions": {"text": "Be brief."}}}
    ]
    for turn in range(3):
        items = [
            said("user", f"question {turn}"),
            {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": f"f{turn}"},
            {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": f"p{turn}"},
            {"type": "function_call_output", "call_id": f"f{turn}", "output": "line of output\n" * 200},
            {"type": "custom_tool_call_output", "call_id": f"p{turn}", "output": "patched file\n" * 200},
            said("assistant", f"answer {turn}"),
        ]
        out.append({"timestamp": f"t{turn}", "type": "turn_context", "payload": {"model": "m"}})
        out.extend({"timestamp": f"t{turn}", "type": "response_item", "payload": item} for item in items)
    return out


@pytest.mark.parametrize(
    "option", [["--clear-tool-results", "--keep-tool-results", "1"], ["--max-tool-output", "10"]], ids=str
)
def test_tool_output_managers_rewrite_outputs_in_their_own_items(option: list[str], tmp_path: Path) -> None:
    source, out = tmp_path / "rollout.jsonl", tmp_path / "out.jsonl"
    rollout = _tool_rollout()
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rollout))
    result = run("trim", *option, "--no-view", "-o", str(out), str(source))
    assert result.exit_code == 0, result.output
    written = records_of(out.read_bytes())
    codex_invariants(written)
    assert [r["type"] for r in written] == [r["type"] for r in rollout]  # no record gained or lost
    changed = [(a, b) for a, b in zip(rollout, written, strict=True) if a != b]
    assert changed
    for before, after in changed:
        # Only an output changed, in an item of its own type, with its call id and time.
        assert before["payload"]["type"].endswith("_output")
        assert {**after["payload"], "output": before["payload"]["output"]} == before["payload"]
        assert after["timestamp"] == before["timestamp"]
        assert len(after["payload"]["output"]) < len(before["payload"]["output"])


# -- properties of every manager on generated rollouts --------------------------------


def managers() -> st.SearchStrategy[BaseContextManager[Any]]:
    return st.one_of(
        st.builds(MessageContextManager, max_messages=st.integers(0, 4)),
        st.builds(lambda n: compaction_chain(max_tokens=n), st.integers(1, 120)),
        st.builds(lambda k: compaction_chain(clear_tool_results=True, keep_tool_results=k), st.integers(0, 3)),
        st.builds(lambda n: compaction_chain(max_tool_output=n), st.integers(1, 30)),
        st.builds(
            lambda m, k: SummaryContextManager("fixed", max_messages=m, keep_recent=k, summarizer=FixedSummarizer("S")),
            st.integers(1, 8),
            st.integers(0, 4),
        ),
    )


def _manage(manager: BaseContextManager[Any], state: Any) -> None:
    result = manager.trim_context(state)
    if asyncio.iscoroutine(result):
        asyncio.run(result)


@explored(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rollout=rollouts(), manager=managers())
def test_every_manager_keeps_codex_order_pairs_and_reads_back(
    rollout: list[dict[str, Any]], manager: BaseContextManager[Any]
) -> None:
    data = b"".join(orjson.dumps(r) + b"\n" for r in rollout)
    conversation = formats.load(data, source="rollout.jsonl")
    try:
        _manage(manager, conversation.state)
    except CtxmgrError:
        return  # a manager that refuses this conversation (nothing to summarize...)
    written = formats.dump(conversation)
    records = records_of(written)
    codex_invariants(records)
    again = formats.load(written, source="out.jsonl")
    assert again.format == "codex"
    assert view(again.state.context) == view(conversation.state.context)
    assert again.state.context_summary == conversation.state.context_summary
    # Records ctxmgr did not make are the input's, in the input's order.
    lines = data.splitlines()
    kept = [line for line in written.splitlines() if line in lines]
    assert kept == [line for line in lines if line in set(kept)]
    # A second write of what was read back changes nothing.
    assert formats.dump(again) == written


def test_a_user_turn_logged_only_as_an_event_is_read_and_written_back_with_its_turn() -> None:
    rollout = [
        {"timestamp": "t0", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "t1", "type": "event_msg", "payload": {"type": "user_message", "message": "first question"}},
        {"timestamp": "t2", "type": "response_item", "payload": said("assistant", "first answer")},
        {"timestamp": "t3", "type": "event_msg", "payload": {"type": "user_message", "message": "second question"}},
        {"timestamp": "t4", "type": "response_item", "payload": said("assistant", "second answer")},
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in rollout)
    conversation = formats.load(data, source="r.jsonl")
    assert [(m.role, m.text()) for m in conversation.state.context] == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
        ("assistant", "second answer"),
    ]
    MessageContextManager(max_messages=1).trim_context(conversation.state)
    assert records_of(formats.dump(conversation)) == [rollout[0], *rollout[3:]]


def test_summary_as_system_is_refused(tmp_path: Path) -> None:
    path = next(p for p in ROLLOUTS if "12-40-23" in p.name)
    arguments = ["summarize", "--model", "offline", "--max-messages", "10", "--summary-as", "system", "--no-view"]
    result = run(*arguments, "-o", str(tmp_path / "out.jsonl"), str(path))
    assert result.exit_code != 0
    assert "--summary-as system: a Codex rollout keeps its summary in one place" in result.output
