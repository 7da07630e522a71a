"""Claude Code session logs (``claude-code``): detected, read from the chain, compacted by
every manager and written back in Claude Code's shape, on real sessions (through the
command line) and on generated ones (hypothesis).

The real sessions are in ``tests/conversations/agents/claude-code/`` (see its SOURCE.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from _claude_code_sessions import SESSION, abandoned, blocks, conversation_records, dangling, sessions, siblings
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from ctxmgr import _format_registry as format_registry, _io as io, formats
from ctxmgr._pipeline import compact_conversation
from ctxmgr.cli import app
from ctxmgr.errors import InputError, UnknownFormatError
from ctxmgr.formats._claude_code import SUMMARY_PREFIX
from ctxmgr.formats._claude_code_chain import analyse
from ctxmgr.state import MessageContextManager, SummaryContextManager
from ctxmgr.state._clearing import ToolResultClearingManager
from ctxmgr.state._compose import trim_manager
from ctxmgr.state._tools import call_ids, result_ids
from ctxmgr.state._truncation import ToolOutputTruncationManager

SESSIONS = Path(__file__).resolve().parents[1] / "conversations" / "agents" / "claude-code"
FILES = sorted(SESSIONS.rglob("*.jsonl"))
TOOL_HEAVY = SESSIONS / "tool-heavy.jsonl"
COMPACTED = SESSIONS / "compacted.jsonl"
SUBAGENT = SESSIONS / "ae4a77f8-aedd-4bc1-888f-c94edc91af04" / "subagents" / "agent-aac57f5.jsonl"
API_FORMATS = ("native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain")


def _records(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def _load(data: bytes, name: str = "session.jsonl") -> formats.Conversation:
    return formats.load(data, source=name)


def _invoke(*arguments: str, input: bytes | None = None) -> Any:
    return CliRunner().invoke(app, list(arguments), input=input)


# -- the registry entry and detection ---------------------------------------------------------


def test_the_entry_is_a_session_log_after_the_api_formats() -> None:
    found = format_registry.entry("claude-code")
    assert found.session_log is True
    assert found.rules is None  # not a provider: no validate --for target
    assert format_registry.NAMES.index("claude-code") > format_registry.NAMES.index("langchain")


def test_there_are_real_sessions() -> None:
    assert len(FILES) >= 4
    assert SUBAGENT in FILES


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_real_session_is_detected_as_claude_code_alone(path: Path) -> None:
    value, layout, _ = io.parse(path.read_bytes(), path.name)
    assert layout == "jsonl"
    assert formats.detect_candidates(value, source=path.name) == ["claude-code"]


def test_records_of_other_formats_are_not_claude_code() -> None:
    other = io.parse(b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n', "x.jsonl")[0]
    assert format_registry.entry("claude-code").score(other) == 0
    # A record with a sessionId but no chain is not enough.
    lone = io.parse(b'{"type": "summary", "summary": "t", "leafUuid": "u"}\n{"type": "x", "sessionId": "s"}\n', "x")[0]
    with pytest.raises(UnknownFormatError):
        formats.detect_candidates(lone, source="x")


def test_a_session_opening_with_many_titles_is_detected() -> None:
    # Older Claude Code versions open a session with a `summary` record per earlier leaf.
    titles = b"".join(b'{"type":"summary","summary":"t%d","leafUuid":"u%d"}\n' % (n, n) for n in range(300))
    conversation = _load(titles + (SESSIONS / "short.jsonl").read_bytes())
    assert conversation.format == "claude-code"
    assert formats.dump(conversation) == titles + (SESSIONS / "short.jsonl").read_bytes()


# -- reading --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_real_session_is_written_back_byte_identical(path: Path) -> None:
    data = path.read_bytes()
    conversation = _load(data, path.name)
    assert conversation.format == "claude-code"
    assert formats.dump(conversation) == data


def test_sibling_records_are_one_message_and_results_beside_the_chain_are_read() -> None:
    conversation = _load(TOOL_HEAVY.read_bytes())
    records = _records(TOOL_HEAVY.read_bytes())
    # msg_...DSj7e6 is written as four records (text, thinking, two parallel tool_use);
    # the second call's record and its result hang beside the chain from the leaf.
    ids = [r["message"]["id"] for r in records if r.get("type") == "assistant"]
    split = next(i for i in ids if ids.count(i) == 4)
    message = next(m for m in conversation.state.context if m.source and m.source[0]["message"].get("id") == split)
    assert len(message.source or ()) == 4
    assert {b.type for b in message.content} >= {"text", "reasoning"}
    calls = call_ids(message)
    assert len(calls) == 2
    answer = conversation.state.context[conversation.state.context.index(message) + 1]
    assert answer.role == "tool"
    assert set(result_ids(answer)) == set(calls)
    # Every call has its result, and nothing is read twice.
    every_call = [c for m in conversation.state.context for c in call_ids(m)]
    every_result = [r for m in conversation.state.context for r in result_ids(m)]
    assert sorted(every_call) == sorted(every_result) == sorted(set(every_call))


def test_claude_codes_own_compaction_is_the_summary() -> None:
    conversation = _load(COMPACTED.read_bytes())
    summary = conversation.state.context_summary
    assert summary is not None
    assert summary.startswith("Analysis:")  # Claude Code's opening line is not part of it
    assert conversation.summary_from_user_turn  # a user turn's authority, as Claude Code gives it
    # The history before the boundary is not the conversation.
    assert all("Implement spotter-gqc" not in m.text() for m in conversation.state.context)


def test_a_subagent_file_reads_its_sidechain() -> None:
    conversation = _load(SUBAGENT.read_bytes())
    roles = [m.role for m in conversation.state.context]
    assert roles[0] == "user"
    assert "assistant" in roles
    assert "tool" in roles


def test_a_compact_summary_elsewhere_is_an_ordinary_message_with_a_warning() -> None:
    records = _records((SESSIONS / "short.jsonl").read_bytes())
    at = next(i for i, r in enumerate(records) if r.get("type") == "user")
    records[at] = {**records[at], "isCompactSummary": True}
    conversation = _load(b"".join(orjson.dumps(r) + b"\n" for r in records))
    assert conversation.state.context_summary is None
    assert any("not right after a compact_boundary" in w for w in conversation.warnings)


def test_a_record_written_twice_is_read_once() -> None:
    # Claude Code has been seen writing a line twice: the repeat is no second block.
    lines = TOOL_HEAVY.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"tool_use"' in line and b'"assistant"' in line)
    data = b"".join([*lines[: at + 1], lines[at], *lines[at + 1 :]])
    conversation = _load(data)
    every_call = [c for m in conversation.state.context for c in call_ids(m)]
    assert len(every_call) == len(set(every_call))
    once = _load(TOOL_HEAVY.read_bytes())
    assert [_key(m) for m in conversation.state.context] == [_key(m) for m in once.state.context]
    assert formats.dump(conversation) == data
    assert _invoke("validate", "-", input=data).exit_code == 0
    # The last line written twice: the leaf is still its first writing.
    last = _load(TOOL_HEAVY.read_bytes() + lines[-1])
    assert [_key(m) for m in last.state.context] == [_key(m) for m in once.state.context]


# -- the command line on real sessions --------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_validate_and_stats_read_a_real_session(path: Path) -> None:
    result = _invoke("validate", str(path))
    assert result.exit_code == 0, result.output
    stats = _invoke("stats", "--json", str(path))
    assert stats.exit_code == 0, stats.output
    assert '"claude-code"' in stats.output


def _check_written(original: bytes, written: bytes) -> list[dict[str, Any]]:
    """The invariants every written session keeps; its records."""
    before, after = _records(original), _records(written)
    assert dangling(after) == []
    assert {r.get("sessionId") for r in after} - {None} == {r.get("sessionId") for r in before} - {None}
    old_siblings = siblings(before)
    for message_id, uuids in siblings(after).items():
        old = old_siblings.get(message_id)
        assert old is None or sorted(old) == sorted(uuids), message_id
    conversation = conversation_records(after)
    calls = {c for r in after if r.get("uuid") in conversation for c in blocks([r], "tool_use", "id")}
    results = {c for r in after if r.get("uuid") in conversation for c in blocks([r], "tool_result", "tool_use_id")}
    assert calls == results
    originals = {orjson.dumps(r) for r in before}
    changed = [r for r in after if orjson.dumps(r) not in originals]
    return changed


MANAGERS = [
    ["trim", "-n", "1"],
    ["trim", "--max-tokens", "1500"],
    ["trim", "--clear-tool-results", "--keep-tool-results", "1"],
    ["trim", "--max-tool-output", "50"],
    ["summarize", "--model", "offline", "--max-messages", "4", "--keep-recent", "2"],
]


@pytest.mark.parametrize("command", MANAGERS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("path", [TOOL_HEAVY, COMPACTED, SUBAGENT], ids=lambda p: p.name)
def test_every_manager_writes_a_real_session_back_in_its_shape(path: Path, command: list[str], tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = _invoke(*command, "--no-view", "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    original, written = path.read_bytes(), out.read_bytes()
    changed = _check_written(original, written)
    assert _invoke("validate", str(out)).exit_code == 0
    again = _load(written)
    assert again.format == "claude-code"
    assert formats.dump(again) == written  # read back, it is written back as it is
    if command[0] == "summarize":
        records = _records(written)
        boundaries = [i for i, r in enumerate(records) if r.get("subtype") == "compact_boundary"]
        assert len(boundaries) == 1
        summary = records[boundaries[0] + 1]
        assert summary["isCompactSummary"] is True
        assert summary["parentUuid"] == records[boundaries[0]]["uuid"]
        assert records[boundaries[0]]["compactMetadata"]["preTokens"] > 0
        assert summary["message"]["content"].startswith(SUMMARY_PREFIX)
        assert again.state.context_summary == summary["message"]["content"][len(SUMMARY_PREFIX) :]
        assert len(written) < len(original)
    elif command[1] in ("--clear-tool-results", "--max-tool-output"):
        assert changed  # results were cut, in their own records
        assert all("toolUseResult" not in r for r in changed if r.get("type") == "user")
        assert len(_records(written)) == len(_records(original))  # no record dropped


def test_summarizing_a_compacted_session_replaces_its_compaction_and_keeps_its_history(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    arguments = ["summarize", "--model", "offline", "--max-messages", "4", "--keep-recent", "2", "--no-view"]
    assert _invoke(*arguments, "-o", str(out), str(COMPACTED)).exit_code == 0
    before, after = COMPACTED.read_bytes().splitlines(), out.read_bytes().splitlines()
    old = next(i for i, line in enumerate(before) if b'"compact_boundary"' in line)
    assert after[:old] == before[:old]  # the history before Claude Code's compaction, byte for byte
    old_ids = {orjson.loads(before[old])["uuid"], orjson.loads(before[old + 1])["uuid"]}
    assert not old_ids & {orjson.loads(line)["uuid"] for line in after if b'"uuid"' in line}
    summary = _load(out.read_bytes()).state.context_summary or ""
    earlier = _load(COMPACTED.read_bytes()).state.context_summary or ""
    assert earlier[:200] in summary  # the new summary carries the one Claude Code wrote


@pytest.mark.parametrize("target", API_FORMATS)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_real_session_converts_to_each_api_format(path: Path, target: str, tmp_path: Path) -> None:
    out = tmp_path / f"out-{target}.json"
    result = _invoke("convert", "--to", target, "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    assert _invoke("validate", str(out)).exit_code == 0
    converted = formats.load(out.read_bytes(), source=out.name)
    assert converted.format == target
    source = _load(path.read_bytes())
    assert len(converted.state.context) >= len([m for m in source.state.context if m.role != "system"])


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_through_native_a_real_session_converts_as_it_does_directly(path: Path) -> None:
    # Native keeps each message's records in `raw`; read back, they are the same message
    # (the records of one message alone are a fragment of the session the reader takes).
    native = formats.load(formats.dump(_load(path.read_bytes()), to="native"), source="n.jsonl", fmt="native")
    assert not [w for w in native.warnings if "does not match" in w]
    direct = _load(path.read_bytes())
    through = formats.load(formats.dump(native, to="anthropic"), source="a.jsonl", fmt="anthropic")
    straight = formats.load(formats.dump(direct, to="anthropic"), source="a.jsonl", fmt="anthropic")
    assert [_key(m) for m in through.state.context] == [_key(m) for m in straight.state.context]


def test_converting_into_a_session_is_refused(tmp_path: Path) -> None:
    source, out = tmp_path / "chat.json", tmp_path / "out.jsonl"
    source.write_bytes(orjson.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    result = _invoke("convert", "--to", "claude-code", "-o", str(out), str(source))
    assert result.exit_code != 0
    assert not out.exists()


# -- property tests on generated sessions -----------------------------------------------------


def _managers() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(MessageContextManager, max_messages=st.integers(0, 4), remove_tool_msgs=st.booleans()),
        st.builds(lambda n: trim_manager(None, max_tokens=n), st.integers(1, 400)),
        st.builds(
            lambda keep, inputs: ToolResultClearingManager(keep_tool_results=keep, clear_tool_inputs=inputs),
            st.integers(0, 2),
            st.booleans(),
        ),
        st.builds(ToolOutputTruncationManager, st.integers(1, 60)),
        st.builds(
            lambda most, recent: SummaryContextManager("offline", max_messages=most, keep_recent=recent),
            st.integers(2, 4),
            st.integers(1, 2),
        ),
    )


def _key(message: Any) -> tuple[Any, ...]:
    return (message.role, message.text(), tuple(call_ids(message)), tuple(result_ids(message)))


@settings(max_examples=150, deadline=None)
@given(records=sessions(), manager=_managers())
def test_every_manager_keeps_the_session_whole(records: list[dict[str, Any]], manager: Any) -> None:
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    conversation = _load(data)
    assert formats.dump(conversation) == data
    # Every message record after Claude Code's compaction is in the conversation, the
    # siblings and results that hang beside the chain from the leaf included.
    start = next((i + 2 for i, r in enumerate(records) if r.get("subtype") == "compact_boundary"), 0)
    rewound = {r["uuid"] for r in abandoned(records)}
    expected = {r["uuid"] for r in records[start:] if r["type"] in ("user", "assistant")} - rewound
    assert conversation_records(records) == expected
    outcome = compact_conversation(conversation, manager)
    assert outcome.error is None
    if not outcome.after and not outcome.conversation.state.context_summary:
        with pytest.raises(InputError, match="nothing of the session would be kept"):
            outcome.output()
        return
    written = outcome.output()
    after = _records(written)
    changed = _check_written(data, written)
    # Reads back to the same conversation (each message in place, the summary as written).
    again = _load(written)
    assert [_key(m) for m in again.state.context] == [_key(m) for m in outcome.after]
    assert again.state.context_summary == outcome.conversation.state.context_summary
    # Every record of a message the manager kept is written; a dropped message's are gone.
    kept = {m.message_id for m in outcome.after}
    assert {m.message_id for m in again.state.context} == kept
    # One leaf: the last message, where the chain the reader follows starts, is the same
    # record as before (the summary message when no message is left).
    leaf_before, leaf_after = analyse(records).path[-1], analyse(after).path[-1]
    if outcome.after and outcome.after[-1].message_id == outcome.before[-1].message_id:
        assert after[leaf_after]["uuid"] == records[leaf_before]["uuid"]
    elif not outcome.after:
        assert after[leaf_after].get("isCompactSummary") is True
    # Records no message owns (queue operations, rewound branches) stay.
    assert sum(r["type"] == "queue-operation" for r in after) == sum(r["type"] == "queue-operation" for r in records)
    assert [r["uuid"] for r in abandoned(after)] == [r["uuid"] for r in abandoned(records)]
    # A record is changed only to re-link it, cut a result or an input, or summarize.
    for record in changed:
        assert record.get("sessionId") == SESSION
    if outcome.conversation.state.context_summary != outcome.summary_before:
        boundaries = [r for r in after if r.get("subtype") == "compact_boundary"]
        assert len(boundaries) == 1
        assert sum(bool(r.get("isCompactSummary")) for r in after) == 1


@settings(max_examples=60, deadline=None)
@given(records=sessions(), target=st.sampled_from(API_FORMATS))
def test_a_generated_session_converts_and_validates(records: list[dict[str, Any]], target: str) -> None:
    from ctxmgr._validate import check_messages

    conversation = _load(b"".join(orjson.dumps(r) + b"\n" for r in records))
    assert check_messages(conversation.state.context) == []
    converted = formats.load(formats.dump(conversation, to=target), source=f"out.{target}")
    assert converted.format == target
    assert check_messages(converted.state.context, target=format_registry.rules(target) and target) == []
