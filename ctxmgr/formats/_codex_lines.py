"""An outline of a Codex rollout read line by line, keeping no parsed record.

Rollouts reach hundreds of megabytes, with single lines of tens of megabytes (a tool's
output). :class:`LineScan` takes the lines one at a time, parses each once, keeps only
what a trim needs of it (its type, role, call ids, where its bytes are) and drops it.
:meth:`LineScan.finish` then groups the items into the messages the full reader
(:mod:`ctxmgr.formats._codex`) builds, and says which records each message owns by the
same rules; the caller writes the kept records by copying their lines.

The scan declines (``None``) whatever the full reader treats specially, so the full path
words it: a record it rejects or warns about, a summary marker, a blank line, a line
that reading and writing back would change (the full path writes records re-serialized;
copying such a line would not give the same bytes).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

import orjson

from ctxmgr.formats._detection.codex import RECORD_TYPES, SUMMARY_PREFIX, superseded_warning
from ctxmgr.formats._detection.openai_responses import (
    CALLS,
    DECLARATION,
    MODEL_SIDE,
    RESULTS,
    ROLES,
)

__all__ = ["LineOutline", "LineScan"]

_TEXT_PARTS = {"input_text": "text", "output_text": "text", "text": "text", "refusal": "refusal"}

# What an item does to the grouping (the Responses reader's rules).
_MESSAGE, _CALL, _RESULT, _MODEL, _OTHER = range(5)


@dataclass(slots=True)
class LineOutline:
    """What trimming a rollout needs, and where each record's bytes are.

    ``roles``, ``calls``, ``results``: one entry per message of the full reader (the
    base instructions' system message first, if any). ``lines[i]``: the records message
    ``i`` owns (its items and their events), in file order; empty for the base
    instructions and for a message of the replacement history (``history[i]``).
    """

    offsets: array[int]
    lengths: array[int]
    roles: list[str] = field(default_factory=list)
    calls: list[tuple[str, ...]] = field(default_factory=list)
    results: list[tuple[str, ...]] = field(default_factory=list)
    lines: list[list[int]] = field(default_factory=list)
    history: list[bool] = field(default_factory=list)
    compacted: int | None = None
    tail: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _item_action(item: Any) -> tuple[int, Any] | None:
    """What ``item`` does to the grouping, with its role or call id; ``None`` if the full
    reader would reject it or warn about it."""
    if not isinstance(item, dict) or DECLARATION.marked(item):
        return None
    kind = item.get("type")
    if kind is None and "role" not in item:
        return None
    if kind is None or kind == "message":
        said = item.get("role")
        role = ROLES.get(said) if isinstance(said, str) else None
        return None if role is None or not _plain_content(item.get("content")) else (_MESSAGE, role)
    if not isinstance(kind, str):
        return None
    if kind in CALLS:
        call_id = item.get(CALLS[kind])
        required = kind in ("function_call", "custom_tool_call")
        if required and (not isinstance(call_id, str) or not isinstance(item.get("name"), str)):
            return None
        if isinstance(call_id, str):
            return (_CALL, call_id) if call_id else None
    if kind in RESULTS:
        call_id = item.get(RESULTS[kind], "")
        return (_RESULT, call_id) if isinstance(call_id, str) and call_id else None
    if kind in MODEL_SIDE or kind.endswith("_call"):
        return _MODEL, None
    return _OTHER, None


def _plain_content(content: Any) -> bool:
    if isinstance(content, str):
        return True
    if not isinstance(content, list):
        return False
    for part in content:
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            return False
        key = _TEXT_PARTS.get(part["type"])
        if key is not None and not isinstance(part.get(key), str):
            return False
    return True


def _user_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


class _Group:
    __slots__ = ("calls", "lines", "results", "role")

    def __init__(self, role: str) -> None:
        self.role = role
        self.lines: list[int] = []
        self.calls: list[str] = []
        self.results: list[str] = []


class LineScan:
    """Feed a rollout's lines with :meth:`add` (each without its newline), then :meth:`finish`."""

    def __init__(self) -> None:
        self.offsets: array[int] = array("q")
        self.lengths: array[int] = array("q")
        self.items: list[tuple[int, int, Any]] = []  # (record index, action, role or call id)
        self.users: list[tuple[int, str]] = []  # user items: (record index, text)
        self.told: list[tuple[int, str]] = []  # user_message events: (record index, text)
        self.others: list[int] = []  # every other record
        self.compacted: int | None = None
        self.history: list[tuple[int, int, Any]] = []  # the last compaction's items
        self.instructions = False
        self.declined = False

    def add(self, offset: int, line: bytes) -> bool:
        """Take the record at ``offset``; ``False`` once the scan declines the file."""
        if self.declined:
            return False
        index = len(self.offsets)
        self.offsets.append(offset)
        self.lengths.append(len(line))
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            record = None
        if not self._record(index, record) or orjson.dumps(record) != line:
            self.declined = True
        return not self.declined

    def _record(self, index: int, record: Any) -> bool:
        if not isinstance(record, dict) or not isinstance(record.get("type"), str):
            return False
        kind = record["type"]
        payload = record.get("payload")
        if kind in RECORD_TYPES and not isinstance(payload, dict):
            return False
        if not isinstance(payload, dict):
            payload = {}
        if index == 0:
            if kind != "session_meta":
                return False
            found = payload.get("base_instructions")
            text = found.get("text") if isinstance(found, dict) else found
            self.instructions = isinstance(text, str) and bool(text)
            return True
        if kind == "response_item":
            return self._item(index, payload)
        if kind == "compacted":
            return self._compaction(index, payload)
        self.others.append(index)
        if kind == "event_msg" and payload.get("type") == "user_message":
            text = payload.get("message")
            if isinstance(text, str) and text:
                self.told.append((index, text))
        return True

    def _item(self, index: int, item: Any) -> bool:
        action = _item_action(item)
        if action is None:
            return False
        self.items.append((index, *action))
        if action == (_MESSAGE, "user"):
            self.users.append((index, _user_text(item)))
        return True

    def _compaction(self, index: int, payload: dict[str, Any]) -> bool:
        self.compacted, self.history = index, []
        history = payload.get("replacement_history")
        if not isinstance(history, list):
            return True
        for item in history:
            if isinstance(item, dict) and item.get("role") == "user" and _summary_item(item):
                continue
            action = _item_action(item)
            if action is None:
                return False
            self.history.append((index, *action))
        return True

    def finish(self) -> LineOutline | None:
        """The outline, or ``None`` when the scan declined (or the file is empty)."""
        if self.declined or not self.offsets:
            return None
        start = 0 if self.compacted is None else self.compacted
        outline = LineOutline(self.offsets, self.lengths, compacted=self.compacted)
        if self.compacted is not None and self.compacted > 1:
            outline.warnings.append(superseded_warning(self.compacted + 1))
        if self.instructions:
            self._message(outline, _Group("system"), history=False)
        users = [(at, text) for at, text in self.users if at > start]
        owner: dict[int, int] = {}
        items = [item for item in self.items if item[0] > start]
        for at, text in self.told:
            tellers = [u for u, told in users if text in told] if at > start else []
            if tellers:
                owner[at] = min(tellers, key=lambda u: abs(u - at))
            elif at > start:
                items.append((at, _MESSAGE, "user"))  # a user turn logged only as an event
        items.sort(key=lambda item: item[0])
        item_lines = {item[0] for item in items}
        owned: dict[int, list[int]] = {}
        waiting: list[int] = []
        for index in sorted([i for i in self.others if i > start and i not in item_lines] + list(item_lines)):
            if index in item_lines:
                owned.setdefault(index, []).extend(waiting)
                waiting = []
            elif index in owner:
                owned.setdefault(owner[index], []).append(index)
            else:
                waiting.append(index)
        outline.tail = waiting
        # As the full reader: the replacement history and the records after it apart.
        groups = _groups([(*item, True) for item in self.history]) + _groups([(*item, False) for item in items])
        for group, history in groups:
            lines = [] if history else sorted({*group.lines, *(e for i in group.lines for e in owned.get(i, ()))})
            group.lines = lines
            self._message(outline, group, history=history)
        return outline

    @staticmethod
    def _message(outline: LineOutline, group: _Group, *, history: bool) -> None:
        outline.roles.append(group.role)
        outline.calls.append(tuple(group.calls))
        outline.results.append(tuple(group.results))
        outline.lines.append(group.lines)
        outline.history.append(history)


def _summary_item(item: dict[str, Any]) -> bool:
    content = item.get("content")
    if item.get("type") != "message" or not isinstance(content, list) or len(content) != 1:
        return False
    part = content[0]
    return isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"].startswith(SUMMARY_PREFIX)


def _groups(items: list[tuple[int, int, Any, bool]]) -> list[tuple[_Group, bool]]:
    """The Responses reader's messages over ``(record, action, value, from history)``."""
    groups: list[tuple[_Group, bool]] = []
    pending: list[int] = []
    turn: _Group | None = None

    def new(role: str, history: bool) -> _Group:
        group = _Group(role)
        groups.append((group, history))
        group.lines.extend(pending)
        pending.clear()
        return group

    def assistant(history: bool) -> _Group:
        nonlocal turn
        if turn is None:
            turn = new("assistant", history)
        else:
            turn.lines.extend(pending)
            pending.clear()
        return turn

    for index, action, value, history in items:
        if action == _MESSAGE and value == "assistant":
            assistant(history).lines.append(index)
        elif action == _MESSAGE:
            turn = None
            new(value, history).lines.append(index)
        elif action == _CALL:
            group = assistant(history)
            group.lines.append(index)
            group.calls.append(value)
        elif action == _RESULT:
            turn = None
            group = new("tool", history)
            group.lines.append(index)
            group.results.append(value)
        elif action == _MODEL:
            assistant(history).lines.append(index)
        else:
            pending.append(index)
    if pending:
        if groups:
            groups[-1][0].lines.extend(pending)
        else:
            new("assistant", items[-1][3])
    return groups
