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

import bisect
import zlib
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import orjson

from ctxmgr._units import text_units
from ctxmgr.formats._base import SUMMARY_HEADER
from ctxmgr.formats._detection.codex import RECORD_TYPES, SUMMARY_PREFIX, superseded_warning, teller
from ctxmgr.formats._detection.openai_chat import SUMMARY_NAME
from ctxmgr.formats._detection.openai_responses import (
    CALLS,
    DECLARATION,
    MODEL_SIDE,
    RESULTS,
    ROLES,
    _counted,
)

__all__ = ["LineOutline", "LineScan", "canonical"]

_HEADER = SUMMARY_HEADER.encode()

_TEXT_PARTS = {"input_text": "text", "output_text": "text", "text": "text", "refusal": "refusal"}

# What an item does to the grouping (the Responses reader's rules).
_MESSAGE, _CALL, _RESULT, _MODEL, _OTHER = range(5)


@dataclass(slots=True)
class LineOutline:
    """What trimming a rollout needs, and where each record's bytes are.

    ``roles``, ``calls``, ``results``: one entry per message of the full reader (the
    base instructions' system message first, if any). A message read from the records
    owns the records from ``firsts[i]`` to ``ends[i]`` (its items and the events before
    them), except a ``user_message`` event its user item elsewhere owns (``moved``: event
    record to that item's record). A message that owns no record has ``history[i]``: one
    of the last replacement history, or the base instructions. ``tail``: the records after the last
    item (always written).
    """

    offsets: array[int]
    lengths: array[int]
    roles: list[str] = field(default_factory=list)
    calls: list[tuple[str, ...]] = field(default_factory=list)
    results: list[tuple[str, ...]] = field(default_factory=list)
    firsts: array[int] = field(default_factory=lambda: array("q"))
    ends: array[int] = field(default_factory=lambda: array("q"))
    history: list[bool] = field(default_factory=list)
    moved: dict[int, int] = field(default_factory=dict)
    told_by: tuple[array[int], array[int]] = field(default_factory=lambda: (array("q"), array("q")))
    """``moved`` by item: the items' records in order, and the event of each."""
    compacted: int | None = None
    tail: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    units: array[int] = field(default_factory=lambda: array("q"))
    """Each message's :func:`~ctxmgr.state._tokens.message_units`, when the scan counted
    them (else empty)."""
    chars: array[int] = field(default_factory=lambda: array("q"))
    """Each message's characters as the compaction reports count them, likewise."""
    countable: bool = True
    """Whether ``units`` and ``chars`` are the full reader's (not when an item that counts
    joins another message, or the last compaction holds a summary)."""

    def records(self, message: int) -> list[int]:
        """The records message ``message`` owns, in file order."""
        first, end = self.firsts[message], self.ends[message]
        if first > end:
            return []
        moved = self.moved
        own = [r for r in range(first, end + 1) if r not in moved or first <= moved[r] <= end]
        items, events = self.told_by
        found = range(bisect.bisect_left(items, first), bisect.bisect_right(items, end))
        brought = [events[k] for k in found if not first <= events[k] <= end]
        return sorted(own + brought) if brought else own


# Item codes: what an item does to the grouping (the Responses reader's rules).
_USER, _ASSISTANT, _SYSTEM, _TOOL_ROLE, _CALL, _RESULT, _MODEL, _OTHER = range(8)
_ROLE_CODES = {"user": _USER, "assistant": _ASSISTANT, "system": _SYSTEM, "tool": _TOOL_ROLE}
_ROLE_NAMES = {code: role for role, code in _ROLE_CODES.items()}
_WAITING = frozenset({_TOOL_ROLE, _OTHER})  # items that wait for the next message
_COUNTED_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})  # the outputs counted


def _item_action(item: Any, marker: bool = True) -> tuple[int, str | None] | None:
    """The item's code, with its call id for a call or an output; ``None`` if the full
    reader would reject the item or warn about it. ``marker``: whether the item may hold
    a summary marker (else the check is skipped)."""
    if not isinstance(item, dict) or (marker and DECLARATION.marked(item)):
        return None
    kind = item.get("type")
    if kind is None and "role" not in item:
        return None
    if kind is None or kind == "message":
        said = item.get("role")
        role = ROLES.get(said) if isinstance(said, str) else None
        if role is None or not _plain_content(item.get("content")):
            return None
        return _ROLE_CODES[role], None
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


def _several(value: Any) -> bool:
    """Whether ``value`` is a list of more than one part (texts the reader joins)."""
    return value.__class__ is list and len(value) > 1


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


def _summary_item(item: dict[str, Any]) -> bool:
    content = item.get("content")
    if item.get("type") != "message" or item.get("role") != "user":
        return False
    if not isinstance(content, list) or len(content) != 1:
        return False
    part = content[0]
    return isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"].startswith(SUMMARY_PREFIX)


def canonical(line: bytes) -> bool:
    """Whether ``line`` (with its newline) is what the full path writes for its record:
    orjson's compact JSON and a newline (not a blank line, Windows line endings, other
    spacing or escapes, a number orjson would spell another way).

    Past a megabyte the two are compared by checksum, the line let go first, so that a
    50 MB line is never held three times over.
    """
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    size = len(line)
    if size > 1 << 20:
        digest = zlib.crc32(line)
        del line
        written = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        return len(written) == size and zlib.crc32(written) == digest
    return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE) == line


class LineScan:
    """A rollout's lines read with :meth:`read`, then :meth:`finish`; kept compact (arrays,
    no parsed record), since a rollout may hold millions of lines."""

    def __init__(self, *, counting: bool = False) -> None:
        self.offsets: array[int] = array("q")
        self.lengths: array[int] = array("q")
        self.counting = counting
        self._reset()
        self.compacted: int | None = None
        self.history: list[tuple[int, str | None, int, int]] = []  # the last compaction's items
        self.summarized = False  # the last compaction holds a summary
        self.instructions: tuple[int, int] | None = None  # their units and characters

    def _reset(self) -> None:
        """Forget the items and turns read so far (a compaction replaces them)."""
        self.item_at: array[int] = array("q")  # the record of each item
        self.item_code = bytearray()
        self.item_ids: dict[int, str] = {}  # item position -> call id (calls and outputs)
        self.users: list[tuple[int, str]] = []  # user items: (record, text)
        self.item_units: array[int] = array("q")  # when counting: each item's units
        self.item_chars: array[int] = array("q")  # and characters
        self.told: list[tuple[int, str]] = []  # user_message events: (record, text)

    def read(self, lines: Iterable[bytes]) -> bool:
        """Take every line (each with its newline); ``False`` as soon as the scan declines."""
        offsets, lengths = self.offsets, self.lengths
        loads = orjson.loads
        header = _HEADER
        offset = 0
        for index, line in enumerate(lines):
            size = len(line)
            offsets.append(offset)
            lengths.append(size - 1)  # the record's bytes, without the newline
            offset += size
            try:
                record = loads(line)
            except orjson.JSONDecodeError:
                return False
            if record.__class__ is not dict:
                return False
            kind = record.get("type")
            payload = record.get("payload")
            if kind == "event_msg" or kind == "turn_context":  # most records: the least work
                if payload.__class__ is not dict or index == 0:
                    return False
                if kind == "event_msg" and payload.get("type") == "user_message":
                    text = payload.get("message")
                    if text.__class__ is str and text:
                        self.told.append((index, text))
            elif kind == "response_item":
                if index == 0 or payload.__class__ is not dict:
                    return False
                # The marker's check, exact, only where a marker may be: the header whole in
                # the line's bytes (orjson's form escapes none of its characters; the lines
                # written are checked to be in it, see canonical()), a summary's name, or
                # parts whose texts are joined (the header may be split across them).
                marker = (
                    header in line
                    or payload.get("name") == SUMMARY_NAME
                    or _several(payload.get("content"))
                    or _several(payload.get("output"))
                )
                if not self._item(index, payload, marker):
                    return False
            elif not self._record(index, kind, payload):
                return False
        return True

    def _record(self, index: int, kind: Any, payload: Any) -> bool:
        """A record other than an item, an event or a turn context."""
        if not isinstance(kind, str) or (kind in RECORD_TYPES and not isinstance(payload, dict)):
            return False
        if index == 0 and kind != "session_meta":
            return False
        if not isinstance(payload, dict):
            return True  # a record type Codex does not write: an event
        if index == 0:
            found = payload.get("base_instructions")
            text = found.get("text") if isinstance(found, dict) else found
            if isinstance(text, str) and text:
                self.instructions = _measured(text)
        elif kind == "compacted":
            return self._compaction(index, payload)
        return True

    def _item(self, index: int, item: Any, marker: bool) -> bool:
        action = _item_action(item, marker)
        if action is None:
            return False
        code, call_id = action
        if call_id is not None:
            self.item_ids[len(self.item_code)] = call_id
        self.item_at.append(index)
        self.item_code.append(code)
        if self.counting:
            units, chars = _item_counts(code, item)
            self.item_units.append(units)
            self.item_chars.append(chars)
        if code == _USER:
            self.users.append((index, _user_text(item)))
        return True

    def _compaction(self, index: int, payload: dict[str, Any]) -> bool:
        self._reset()
        self.compacted, self.history, self.summarized = index, [], False
        history = payload.get("replacement_history")
        if not isinstance(history, list):
            return True
        for item in history:
            if isinstance(item, dict) and _summary_item(item):
                self.summarized = True
                continue
            action = _item_action(item)
            if action is None:
                return False
            units, chars = _measured(_counted([item])) if self.counting else (0, 0)
            self.history.append((*action, units, chars))
        return True

    def finish(self) -> LineOutline | None:
        """The outline (``None`` for an empty file)."""
        if not self.offsets:
            return None
        start = 0 if self.compacted is None else self.compacted
        outline = LineOutline(self.offsets, self.lengths, compacted=self.compacted)
        if self.compacted is not None and self.compacted > 1:
            outline.warnings.append(superseded_warning(self.compacted + 1))
        # An item that counts and joins the next message (one the reader may give it to
        # otherwise) is not counted here: the full path counts it.
        waiting = [units for code, units in zip(self.item_code, self.item_units, strict=False) if code in _WAITING]
        waiting += [units for code, _, units, _ in self.history if code in _WAITING]
        outline.countable = self.counting and not self.summarized and not any(waiting)
        if self.instructions is not None:
            _add(outline, "system", history=True)
            outline.units[-1], outline.chars[-1] = self.instructions
        untold: list[tuple[int, int, int]] = []
        for at, text in self.told:
            found = teller(at, text, self.users)
            if found is not None:
                outline.moved[at] = found
            else:  # a user turn logged only as an event: a user item
                untold.append((at, *(_measured(text) if self.counting else (0, 0))))
        pairs = sorted((item, event) for event, item in outline.moved.items())
        outline.told_by = (array("q", (item for item, _ in pairs)), array("q", (event for _, event in pairs)))
        # As the full reader: the replacement history and the records after it apart.
        history = ((-1, code, call_id, units, chars) for code, call_id, units, chars in self.history)
        _group(outline, history, start, in_history=True)
        _group(outline, self._items(untold), start, in_history=False)
        last = max((end for end, kept in zip(outline.ends, outline.history, strict=True) if not kept), default=start)
        outline.tail = [r for r in range(last + 1, len(self.offsets)) if r not in outline.moved]
        return outline

    def _items(self, untold: list[tuple[int, int, int]]) -> Iterator[tuple[int, int, str | None, int, int]]:
        """``(record, code, call id, units, characters)`` of every item after the last
        compaction, in order, with the user turns logged only as events among them."""
        ids = self.item_ids
        extra = iter(untold)
        pending = next(extra, None)
        counted = zip(self.item_units, self.item_chars, strict=True) if self.counting else repeat((0, 0))
        items = zip(self.item_at, self.item_code, counted, strict=self.counting)
        for position, (at, code, (units, chars)) in enumerate(items):
            while pending is not None and pending[0] < at:
                yield pending[0], _USER, None, pending[1], pending[2]
                pending = next(extra, None)
            yield at, code, ids.get(position), units, chars
        while pending is not None:
            yield pending[0], _USER, None, pending[1], pending[2]
            pending = next(extra, None)


_NONE: tuple[str, ...] = ()


def _item_counts(code: int, item: dict[str, Any]) -> tuple[int, int]:
    """What the token estimate counts of one item: its units and characters (what
    ``_counted`` gives of it alone; an item's add up over a message's, its call's
    brackets and separator included)."""
    if code in (_MODEL, _OTHER):
        return 0, 0  # reasoning and built-in tools' items count nothing
    if code == _RESULT and item.get("type") in _COUNTED_OUTPUTS:
        output = item.get("output")
        if output.__class__ is str:  # most outputs: counted as they are
            return (len(output) if output.isascii() else text_units(output)), len(output)
    return _measured(_counted([item]))


def _measured(text: str) -> tuple[int, int]:
    """``text``'s :func:`~ctxmgr._units.text_units` and characters (ASCII text, most,
    measured by its length: text_units' own first case)."""
    return (len(text) if text.isascii() else text_units(text)), len(text)


def _add(outline: LineOutline, role: str, *, history: bool) -> int:
    outline.roles.append(role)
    outline.calls.append(_NONE)
    outline.results.append(_NONE)
    outline.firsts.append(1)
    outline.ends.append(0)  # owns no record until an item says otherwise
    outline.history.append(history)
    outline.units.append(0)
    outline.chars.append(0)
    return len(outline.roles) - 1


def _group(
    outline: LineOutline, items: Iterable[tuple[int, int, str | None, int, int]], start: int, *, in_history: bool
) -> None:
    """The Responses reader's messages over ``items`` (``(record, code, call id, units,
    characters)``), added to ``outline`` with the records each owns (none for the
    replacement history) and what each counts (an item's units and characters add up).

    Run once per item of a rollout that may hold millions: the message is added inline,
    with local names."""
    roles, calls, results = outline.roles, outline.calls, outline.results
    firsts, ends, history = outline.firsts, outline.ends, outline.history
    all_units, all_chars = outline.units, outline.chars
    turn = -1  # the open assistant turn's message
    pending = False  # pass-through items wait for the next message
    first = start + 1  # where the next message's records begin
    made: list[str] = []
    last_record = start
    message = -1  # the message the last item went to (the last one added)
    for record, code, call_id, units, chars in items:
        last_record = record
        if code in (_RESULT, _USER, _SYSTEM):
            if turn >= 0 and made:
                calls[turn] = tuple(made)
                made = []
            turn = -1
            message = len(roles)
            roles.append("tool" if code == _RESULT else _ROLE_NAMES[code])
            calls.append(_NONE)
            results.append((call_id or "",) if code == _RESULT else _NONE)
            firsts.append(1 if in_history else first)
            ends.append(0)
            history.append(in_history)
            all_units.append(units)
            all_chars.append(chars)
        elif code in (_ASSISTANT, _CALL, _MODEL):
            if turn < 0:
                turn = message = len(roles)
                roles.append("assistant")
                calls.append(_NONE)
                results.append(_NONE)
                firsts.append(1 if in_history else first)
                ends.append(0)
                history.append(in_history)
                all_units.append(0)
                all_chars.append(0)
            all_units[turn] += units
            all_chars[turn] += chars
            if code == _CALL:
                made.append(call_id or "")
        else:
            pending = True
            continue
        pending = False
        if not in_history:
            ends[turn if turn >= 0 else message] = record
            first = record + 1
    if turn >= 0 and made:
        calls[turn] = tuple(made)
    if pending and message < 0:
        message = _add(outline, "assistant", history=in_history)  # nothing else to take what waited
        if not in_history:
            firsts[message] = first
    if pending and not in_history:
        ends[message] = last_record  # the last message takes what waited
