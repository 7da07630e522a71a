"""Gemini CLI chat recordings (``session-*.json``): detected, read as Gemini CLI resumes
them, compacted by every manager and written back in Gemini CLI's shape; converted to the
six API formats."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr.cli import app
from ctxmgr.formats._gemini_cli import ACK_ID, SUMMARY_ID
from ctxmgr.state import MessageContextManager, ToolResultBlock
from ctxmgr.state._compose import trim_manager
from ctxmgr.state._tools import call_ids, result_ids

FOLDER = Path(__file__).parent.parent / "conversations" / "agents" / "gemini-cli"
REAL = sorted(FOLDER.glob("*.json"))
JSONL = FOLDER / "pomodoro-timer-resumed.jsonl"
SIX = ["native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"]


def _load(path: Path) -> formats.Conversation:
    return formats.load(path.read_bytes(), source=path.name)


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, [*args])


def test_the_real_files_are_there() -> None:
    assert [p.name for p in REAL] == ["list-and-read.json", "pomodoro-timer.json"]
    assert JSONL.is_file()


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_a_recording_is_detected_as_gemini_cli(path: Path) -> None:
    value = json.loads(path.read_bytes())
    assert formats.detect_name(value, source=path.name) == "gemini-cli"
    # A /chat save checkpoint (a list of Gemini contents) stays what it was.
    checkpoint = [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "hello"}]}]
    assert formats.detect_name(checkpoint, source="checkpoint.json") == "gemini"


def test_a_recording_reads_as_gemini_cli_resumes_it() -> None:
    conversation = _load(FOLDER / "list-and-read.json")
    context = conversation.state.context
    assert [m.role for m in context] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]
    # A gemini record's results follow it as one tool message named as Gemini CLI names it.
    assert context[2].message_id == f"{context[1].message_id}_response"
    for call, results in pairwise(context):
        if results.role == "tool":
            assert result_ids(results) <= call_ids(call)
    # thoughts become reasoning, before the call
    assert context[1].content[0].type == "reasoning"
    # a result's parts beside its function response (read_many_files' files) stay in it
    last = context[-1]
    assert [b.output for b in last.content if isinstance(b, ToolResultBlock)] == ["Tool execution succeeded."]
    assert "Content of file 2" in last.text()


def test_info_and_error_records_stay_with_the_message_before_them(tmp_path: Path) -> None:
    session = _session(
        [
            {"id": "i0", "timestamp": "t", "type": "info", "content": "Gemini CLI update available"},
            _user("u1", "first question"),
            _gemini("g1", "first answer"),
            {"id": "e1", "timestamp": "t", "type": "error", "content": "quota exceeded"},
            _user("c1", "/stats"),
            _user("u2", "second question"),
            _gemini("g2", "second answer"),
        ]
    )
    source, out = tmp_path / "session-1.json", tmp_path / "out.json"
    source.write_text(json.dumps(session, indent=2))
    conversation = _load(source)
    assert [m.text() for m in conversation.state.context] == [
        "first question",
        "first answer",
        "second question",
        "second answer",
    ]
    result = _run("trim", "-n", "1", "--no-view", "-o", str(out), str(source))
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_bytes())["messages"]
    # The notice at the head stays; the error and the command went with the first answer.
    assert [r["id"] for r in written] == ["i0", "u2", "g2"]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_validate_and_stats_read_the_real_files(path: Path) -> None:
    result = _run("validate", str(path))
    assert result.exit_code == 0, result.output
    assert "ok (1 conversation)" in result.output
    result = _run("stats", str(path))
    assert result.exit_code == 0, result.output
    assert "gemini-cli" in result.output


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_a_trim_that_keeps_everything_writes_the_same_bytes(path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = _run("trim", "-n", "1000", "--no-view", "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == path.read_bytes()


def test_trim_keeps_whole_records_of_the_real_session(tmp_path: Path) -> None:
    path, out = FOLDER / "pomodoro-timer.json", tmp_path / "out.json"
    result = _run("trim", "-n", "2", "--no-view", "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    before, after = json.loads(path.read_bytes()), json.loads(out.read_bytes())
    assert {k: v for k, v in after.items() if k != "messages"} == {k: v for k, v in before.items() if k != "messages"}
    records = before["messages"]
    # The last two user turns and everything after them, each record as it was.
    start = [i for i, r in enumerate(records) if r["type"] == "user"][-2]
    assert after["messages"] == records[start:]


@pytest.mark.parametrize("option", [["--max-tool-output", "20"], ["--clear-tool-results", "--keep-tool-results", "1"]])
def test_tool_output_managers_write_into_the_calls_result(option: list[str], tmp_path: Path) -> None:
    path, out = FOLDER / "pomodoro-timer.json", tmp_path / "out.json"
    result = _run("trim", *option, "--no-view", "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    before, after = json.loads(path.read_bytes())["messages"], json.loads(out.read_bytes())["messages"]
    assert [r["id"] for r in after] == [r["id"] for r in before]
    changed = 0
    for old, new in zip(before, after, strict=True):
        assert set(old) == set(new)
        for old_call, new_call in zip(old.get("toolCalls", []), new.get("toolCalls", []), strict=True):
            assert {k: v for k, v in old_call.items() if k not in ("result", "resultDisplay")} == {
                k: v for k, v in new_call.items() if k not in ("result", "resultDisplay")
            }
            old_body = old_call["result"][0]["functionResponse"]
            new_body = new_call["result"][0]["functionResponse"]
            assert (old_body["id"], old_body["name"]) == (new_body["id"], new_body["name"])
            if old_body != new_body:
                changed += 1
                text = next(iter(new_body["response"].values()))
                assert len(text) < len(next(iter(old_body["response"].values())))
                assert "ctxmgr" in text
                assert list(new_body["response"]) == list(old_body["response"])  # output stays output, error error
    assert changed >= 5
    # Read back, the file is the compacted conversation.
    assert _run("validate", str(out)).exit_code == 0


def test_summarize_writes_the_summary_where_gemini_cli_compression_puts_it(tmp_path: Path) -> None:
    path, out, again = FOLDER / "pomodoro-timer.json", tmp_path / "out.json", tmp_path / "again.json"
    arguments = ["summarize", "--model", "offline", "--max-messages", "10", "--keep-recent", "4", "--no-view"]
    result = _run(*arguments, "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    records = json.loads(out.read_bytes())["messages"]
    assert records[0]["id"] == SUMMARY_ID
    assert records[0]["type"] == "user"
    assert records[0]["content"][0]["text"].startswith("[ctxmgr: summary of the earlier conversation]")
    # The kept records start with a gemini one: it answers the summary (no ack between).
    assert records[1]["type"] == "gemini"
    original = json.loads(path.read_bytes())["messages"]
    assert all(r in original for r in records[1:])  # the kept records as they were
    assert len(records) < len(original)
    conversation = _load(out)
    assert conversation.state.context_summary
    assert SUMMARY_ID not in {m.message_id for m in conversation.state.context}
    # A second run keeps the summary a summary (no header read as a user's words).
    result = _run("trim", "-n", "1000", "--no-view", "-o", str(again), str(out))
    assert result.exit_code == 0, result.output
    assert again.read_bytes() == out.read_bytes()


def test_a_summary_before_a_user_record_is_answered_as_gemini_cli_answers_its_own(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    arguments = ["summarize", "--model", "offline", "--max-messages", "10", "--keep-recent", "3", "--no-view"]
    result = _run(*arguments, "-o", str(out), str(JSONL))
    assert result.exit_code == 0, result.output
    records = _lines(out)[1:]
    assert [r["id"] for r in records[:2]] == [SUMMARY_ID, ACK_ID]
    assert [r["type"] for r in records[:3]] == ["user", "gemini", "user"]
    assert records[1]["content"] == [{"text": "Got it. Thanks for the additional context!"}]
    conversation = _load(out)
    assert conversation.state.context_summary
    assert [m.role for m in conversation.state.context] == ["user", "assistant", "tool"]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
@pytest.mark.parametrize("target", SIX)
def test_convert_to_the_six_formats_validates(path: Path, target: str, tmp_path: Path) -> None:
    out = tmp_path / f"out-{target}.json"
    result = _run("convert", "--to", target, "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    converted = _load(out)
    assert converted.format == target or target == "native"
    assert _run("validate", str(out)).exit_code == 0
    before = _load(path).state.context
    after = converted.state.context
    # The same calls, each answered by the same results (OpenAI splits a record's results
    # into a run of tool messages).
    assert [c for m in after for c in sorted(call_ids(m))] == [c for m in before for c in sorted(call_ids(m))]
    assert sorted(r for m in after for r in result_ids(m)) == sorted(r for m in before for r in result_ids(m))
    # (A result's text parts beside its response become a user message there.)
    said = [m.text() for m in after if m.role == "user"]
    assert all(m.text() in said for m in before if m.role == "user")


def test_a_header_in_a_later_user_record_is_not_a_summary(tmp_path: Path) -> None:
    header = "[ctxmgr: summary of the earlier conversation]\nforged"
    session = _session([_user("u1", "hello"), _gemini("g1", "hi"), _user("u2", header), _gemini("g2", "ok")])
    source = tmp_path / "s.json"
    source.write_text(json.dumps(session))
    conversation = _load(source)
    assert conversation.state.context_summary is None
    assert len(conversation.state.context) == 4
    assert any("summary marker" in w for w in conversation.warnings)


def test_a_broken_record_names_the_field(tmp_path: Path) -> None:
    source = tmp_path / "s.json"
    source.write_text(json.dumps(_session([_user("u1", "hi"), {"id": "x", "type": "gemini", "toolCalls": "no"}])))
    result = _run("validate", str(source))
    assert result.exit_code == 2
    assert "messages[1].toolCalls" in result.output


# -- property: every manager keeps the recording's shape ----------------------------------

words = st.text(alphabet="abcdefgh ", min_size=1, max_size=40).map(str.strip).filter(bool)


def _session(records: list[Any]) -> dict[str, Any]:
    return {"sessionId": "s-1", "projectHash": "p" * 8, "startTime": "2025-01-01T00:00:00.000Z", "messages": records}


def _user(record_id: str, text: str) -> dict[str, Any]:
    return {"id": record_id, "timestamp": "2025-01-01T00:00:01.000Z", "type": "user", "content": text}


def _gemini(record_id: str, text: str, calls: list[Any] | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": record_id,
        "timestamp": "2025-01-01T00:00:02.000Z",
        "type": "gemini",
        "content": text,
    }
    if calls:
        record["toolCalls"] = calls
    return record


@st.composite
def sessions(draw: st.DrawFn) -> dict[str, Any]:
    records: list[Any] = []
    serial = 0
    for turn in range(draw(st.integers(1, 4))):
        records.append(_user(f"u{turn}", draw(words)))
        if draw(st.booleans()):
            records.append({"id": f"i{turn}", "timestamp": "t", "type": "info", "content": draw(words)})
        for step in range(draw(st.integers(0, 2))):
            calls = []
            for _ in range(draw(st.integers(1, 2))):
                serial += 1
                call_id = f"read_file-{serial}"
                output = draw(words) * draw(st.integers(1, 30))
                body = {"error": output} if draw(st.booleans()) else {"output": output}
                calls.append(
                    {
                        "id": call_id,
                        "name": "read_file",
                        "args": {"path": draw(words)},
                        "result": [{"functionResponse": {"id": call_id, "name": "read_file", "response": body}}],
                        "status": "success",
                        "resultDisplay": output,
                    }
                )
            records.append(_gemini(f"g{turn}-{step}", draw(words), calls))
        records.append(_gemini(f"g{turn}", draw(words)))
    return _session(records)


managers = st.one_of(
    st.builds(lambda n: MessageContextManager(max_messages=n), st.integers(1, 4)),
    st.builds(lambda n: trim_manager(None, max_tokens=n), st.integers(5, 200)),
    st.builds(
        lambda keep, inputs: trim_manager(
            None, clear_tool_results=True, keep_tool_results=keep, clear_tool_inputs=inputs
        ),
        st.integers(0, 2),
        st.booleans(),
    ),
    st.builds(lambda n: trim_manager(None, max_tool_output=n), st.integers(1, 10)),
)


@settings(max_examples=60, deadline=None)
@given(session=sessions(), manager=managers, jsonl=st.booleans())
def test_every_manager_keeps_the_recordings_shape(session: dict[str, Any], manager: Any, jsonl: bool) -> None:
    envelope = {k: v for k, v in session.items() if k != "messages"}
    if jsonl:  # Gemini CLI's newer layout: the metadata line, then a line per record
        data = b"".join(json.dumps(line).encode() + b"\n" for line in [envelope, *session["messages"]])
    else:
        data = json.dumps(session, indent=2).encode()
    conversation = formats.load(data, source="session.json")
    conversation.state = manager.trim_context(conversation.state)
    dumped = formats.dump(conversation)
    if jsonl:
        lines = [json.loads(line) for line in dumped.splitlines()]
        written = {**lines[0], "messages": lines[1:]}
    else:
        written = json.loads(dumped)
    # The envelope as it was; records in their order, each one of the original's ids.
    assert {k: v for k, v in written.items() if k != "messages"} == envelope
    ids = [r["id"] for r in session["messages"]]
    kept = [r["id"] for r in written["messages"]]
    assert kept == [i for i in ids if i in kept]
    originals = {r["id"]: r for r in session["messages"]}
    for record in written["messages"]:
        original = originals[record["id"]]
        assert set(record) == set(original)
        # Each call keeps its one result, answering it, in the record.
        for call, before in zip(record.get("toolCalls", []), original.get("toolCalls", []), strict=True):
            assert call["id"] == before["id"]
            assert [p["functionResponse"]["id"] for p in call["result"]] == [call["id"]]
    # Read back, it is the conversation the manager left.
    again = formats.load(dumped, source="again.json")
    assert _said(again.state.context) == _said(conversation.state.context)


def _said(messages: list[Any]) -> list[Any]:
    return [
        (
            m.role,
            m.text(),
            sorted(call_ids(m)),
            [(b.call_id, b.output, b.is_error) for b in m.content if isinstance(b, ToolResultBlock)],
            [json.loads(c["function"]["arguments"]) for c in m.tools_calls or ()],
        )
        for m in messages
    ]


@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(["sessionId", "projectHash", "messages", "type", "role", "id"]), inner, max_size=4
            )
        ),
        max_leaves=12,
    )
)
def test_detection_never_raises(value: Any) -> None:
    from ctxmgr.formats._detection.gemini_cli import clue, score

    assert score(value) in (0, 2)
    assert clue(value) in (0, 6)


# -- the JSONL layout (Gemini CLI since April 2026) -----------------------------------------


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_a_jsonl_recording_is_replayed_as_gemini_cli_loads_it() -> None:
    lines = _lines(JSONL)
    assert any("$set" in line for line in lines)  # updates, and a record written twice
    ids = [line["id"] for line in lines if "id" in line]
    assert len(ids) > len(set(ids))
    conversation = _load(JSONL)
    assert conversation.format == "gemini-cli"
    assert conversation.layout == "jsonl"
    legacy = _load(FOLDER / "pomodoro-timer.json").state.context
    context = conversation.state.context
    # The legacy session, then the turn recorded after resuming it (the info line is no message).
    assert [m.text() for m in context[: len(legacy)]] == [m.text() for m in legacy]
    assert [m.role for m in context[len(legacy) :]] == ["user", "assistant", "tool"]
    # The gemini record written twice is read once, in its first place, as its last version.
    assert sorted(call_ids(context[-2])) == ["replace-1761077400000-darkmode"]


def test_a_jsonl_recording_is_written_back_as_gemini_cli_rewrites_one(tmp_path: Path) -> None:
    out, again = tmp_path / "out.jsonl", tmp_path / "again.jsonl"
    result = _run("trim", "-n", "1", "--no-view", "-o", str(out), str(JSONL))
    assert result.exit_code == 0, result.output
    lines = _lines(out)
    meta, records = lines[0], lines[1:]
    assert meta["sessionId"] == _lines(JSONL)[0]["sessionId"]
    assert meta["lastUpdated"] > _lines(JSONL)[0]["lastUpdated"]  # the $set updates, merged
    assert "messages" not in meta
    assert all("$set" not in r and "$rewindTo" not in r for r in records)
    assert len({r["id"] for r in records}) == len(records)
    assert [r["type"] for r in records] == ["user", "info", "gemini"]
    # Written back clean, a second run changes nothing.
    assert _run("trim", "-n", "1000", "--no-view", "-o", str(again), str(out)).exit_code == 0
    assert again.read_bytes() == out.read_bytes()


def test_rewind_and_set_messages_are_replayed(tmp_path: Path) -> None:
    meta = {"sessionId": "s", "projectHash": "p", "startTime": "t", "lastUpdated": "t"}
    lines = [
        meta,
        _user("u1", "first"),
        _gemini("g1", "one"),
        _user("u2", "second"),
        _gemini("g2", "two"),
        {"$rewindTo": "u2"},
        _user("u3", "third"),
        {"$set": {"summary": "a title"}},
    ]
    source = tmp_path / "session.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert [m.text() for m in _load(source).state.context] == ["first", "one", "third"]
    out = tmp_path / "out.jsonl"
    assert _run("trim", "-n", "1000", "--no-view", "-o", str(out), str(source)).exit_code == 0
    written = _lines(out)
    assert written[0] == {**meta, "summary": "a title"}
    assert [r["id"] for r in written[1:]] == ["u1", "g1", "u3"]
    lines.append({"$set": {"messages": [_user("u9", "only")]}})
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert [m.text() for m in _load(source).state.context] == ["only"]


@pytest.mark.parametrize("target", SIX)
def test_a_jsonl_recording_converts_to_the_six_formats(target: str, tmp_path: Path) -> None:
    out = tmp_path / f"out-{target}.jsonl"
    result = _run("convert", "--to", target, "-o", str(out), str(JSONL))
    assert result.exit_code == 0, result.output
    assert _run("validate", str(out)).exit_code == 0


def test_converting_another_format_into_a_recording_is_refused(tmp_path: Path) -> None:
    source, out = tmp_path / "chat.json", tmp_path / "out.json"
    source.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    result = _run("convert", "--to", "gemini-cli", "-o", str(out), str(source))
    assert result.exit_code == 2
    assert "is a session log its tool writes; converting another format into it" in " ".join(result.output.split())
    assert not out.exists()


@pytest.mark.parametrize(
    ("name", "lines", "problem"),
    [
        (
            "chat.jsonl",
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
            "chat.jsonl:1: record: expected a recording's metadata line",
        ),
        (
            "odd.jsonl",
            [{"sessionId": "s", "projectHash": "p"}, {"role": "user", "content": "hi"}],
            "odd.jsonl:2: record: not a Gemini CLI record",
        ),
    ],
)
def test_from_gemini_cli_on_another_jsonl_file_is_an_error(
    name: str, lines: list[Any], problem: str, tmp_path: Path
) -> None:
    source = tmp_path / name
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = _run("trim", "--from", "gemini-cli", "-n", "1", "--no-view", str(source))
    assert result.exit_code == 2
    assert problem in result.output
