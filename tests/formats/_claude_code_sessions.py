"""Generated Claude Code sessions, shaped as Claude Code writes them, and their invariants.

A session is a list of records: per turn a file-history snapshot and a user prompt, then
the assistant's reply written one record per content block (siblings share
``message.id``), each tool call's result hanging off the call's own record, progress
records hanging off calls, and queue operations between. The two ways Claude Code
writes parallel calls are both drawn: every call first and their results after (in any
order: the chain from the leaf then misses some siblings and results), or each result
right after its call. A turn may follow a rewound attempt (a branch the chain from the leaf
does not reach). A session may open with Claude Code's own compaction (history,
then a ``compact_boundary`` and the ``isCompactSummary`` message).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from ctxmgr.formats._claude_code_chain import analyse, is_message

SESSION = "5e551011-0000-4000-8000-000000000000"
ABANDONED = "abandoned"
"""The text of a rewound branch's prompt and answer."""


class _Writer:
    def __init__(self, sidechain: bool) -> None:
        self.records: list[dict[str, Any]] = []
        self.count = 0
        self.sidechain = sidechain
        self.last: str | None = None

    def uuid(self) -> str:
        self.count += 1
        return f"00000000-0000-4000-8000-{self.count:012d}"

    def add(self, record: dict[str, Any], parent: str | None, *, chain: bool = True) -> str:
        uuid = self.uuid()
        envelope = {"parentUuid": parent, "isSidechain": self.sidechain, "userType": "external", "cwd": "/w"}
        full = {**envelope, "sessionId": SESSION, "version": "2.1.39", **record, "uuid": uuid}
        full["timestamp"] = f"2026-02-11T21:{self.count // 60 % 60:02d}:{self.count % 60:02d}.000Z"
        self.records.append(full)
        if chain:
            self.last = uuid
        return uuid

    def user(self, content: Any, parent: str | None, **extra: Any) -> str:
        return self.add({"type": "user", "message": {"role": "user", "content": content}, **extra}, parent)

    def block(self, message_id: str, block: dict[str, Any], parent: str | None) -> str:
        message = {"model": "claude-opus-4-6", "id": message_id, "type": "message", "role": "assistant"}
        return self.add({"type": "assistant", "message": {**message, "content": [block]}}, parent)

    def progress(self, parent: str, tool: str) -> None:
        data = {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Bash"}
        self.add({"type": "progress", "data": data, "toolUseID": tool, "parentToolUseID": tool}, parent, chain=False)


@st.composite
def sessions(draw: st.DrawFn) -> list[dict[str, Any]]:
    """One generated session (its records, in file order)."""
    writer = _Writer(sidechain=draw(st.booleans()) and draw(st.booleans()))
    if draw(st.booleans()):
        old = writer.user("an earlier request", None)
        writer.block("msg_old", {"type": "text", "text": "an earlier answer"}, old)
        boundary = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}
        boundary_id = writer.add({**boundary, "logicalParentUuid": writer.last, "level": "info"}, None)
        summary = "This session is being continued from a previous conversation that ran out of context. "
        summary += "The summary below covers the earlier portion of the conversation.\n\nThe user asked for X."
        writer.user(summary, boundary_id, isVisibleInTranscriptOnly=True, isCompactSummary=True)
    for turn in range(draw(st.integers(1, 5))):
        _turn(draw, writer, turn)
    return writer.records


def _turn(draw: st.DrawFn, writer: _Writer, turn: int) -> None:
    if draw(st.booleans()):
        # A rewound attempt: a prompt and its answer the user went back from. The branch
        # stays in the file; the next prompt hangs on the same record.
        fork = writer.last
        attempt = writer.user(f"{ABANDONED} {turn}", fork)
        writer.block(f"msg_{turn:04d}x", {"type": "text", "text": f"{ABANDONED} answer {turn}"}, attempt)
        writer.last = fork
    prompt_id = f"00000000-0000-4000-8000-{writer.count + 1:012d}"
    if draw(st.booleans()):
        snapshot = {"messageId": prompt_id, "trackedFileBackups": {}, "timestamp": "2026-02-11T21:00:00.000Z"}
        record = {"type": "file-history-snapshot", "messageId": prompt_id, "snapshot": snapshot}
        writer.records.append({**record, "isSnapshotUpdate": False})
    words = " ".join(["word"] * draw(st.integers(1, 30)))
    writer.user(f"request {turn}: {words}", writer.last)
    calls = draw(st.integers(0, 3))
    message_id = f"msg_{turn:04d}a"
    parent = writer.last
    if draw(st.booleans()):
        parent = writer.block(message_id, {"type": "text", "text": f"looking at {turn}"}, parent)
    if draw(st.booleans()):
        thinking = {"type": "thinking", "thinking": f"thought {turn}", "signature": "sig"}
        parent = writer.block(message_id, thinking, parent)
    if calls == 0:
        writer.block(message_id, {"type": "text", "text": f"answer {turn}"}, parent)
        return
    interleaved = draw(st.booleans())
    outputs = [" ".join(["line"] * draw(st.integers(1, 200))) for _ in range(calls)]
    ids = [f"toolu_{turn:04d}{n}" for n in range(calls)]
    if interleaved:
        for call, output in zip(ids, outputs, strict=True):
            use = writer.block(message_id, _use(call), parent)
            writer.progress(use, call)
            parent = writer.user([_result(call, output)], use, toolUseResult={"stdout": output})
    else:
        uses = []
        for call in ids:
            parent = writer.block(message_id, _use(call), parent)
            uses.append(parent)
        order = draw(st.permutations(range(calls)))
        for n in order:
            writer.progress(uses[n], ids[n])
            writer.user([_result(ids[n], outputs[n])], uses[n], toolUseResult={"stdout": outputs[n]})
    writer.block(f"msg_{turn:04d}b", {"type": "text", "text": f"done {turn}"}, writer.last)
    if draw(st.booleans()):
        writer.records.append({"type": "queue-operation", "operation": "enqueue", "sessionId": SESSION})


def _use(call: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": f"run {call}"}}


def _result(call: str, output: str) -> dict[str, Any]:
    return {"tool_use_id": call, "type": "tool_result", "content": output, "is_error": False}


# -- invariants ---------------------------------------------------------------------------


def dangling(records: list[dict[str, Any]]) -> list[str]:
    """The ``parentUuid`` values that name no record."""
    uuids = {r["uuid"] for r in records if isinstance(r.get("uuid"), str)}
    return [r["parentUuid"] for r in records if isinstance(r.get("parentUuid"), str) and r["parentUuid"] not in uuids]


def siblings(records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each assistant ``message.id`` -> the uuids of its records."""
    found: dict[str, list[str]] = {}
    for record in records:
        if is_message(record) and record["type"] == "assistant":
            found.setdefault(record["message"]["id"], []).append(record["uuid"])
    return found


def blocks(records: list[dict[str, Any]], kind: str, key: str) -> Iterator[str]:
    for record in records:
        content = record["message"].get("content") if is_message(record) else None
        if isinstance(content, list):
            yield from (b[key] for b in content if b.get("type") == kind)


def abandoned(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of rewound branches."""
    return [r for r in records if is_message(r) and ABANDONED in str(r["message"]["content"])]


def conversation_records(records: list[dict[str, Any]]) -> set[str]:
    """The uuids of the records of the conversation's messages (as the reader groups them)."""
    session = analyse(records)
    return {records[i]["uuid"] for group in session.groups for i in group.members}
