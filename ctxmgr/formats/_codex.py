"""Codex CLI rollouts: ``codex``.

A rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) is the session log Codex
writes for itself and resumes from: JSONL, one ``{"timestamp", "type", "payload"}``
record per line. ``session_meta`` comes first (``base_instructions`` is the system
prompt); ``response_item`` records hold Responses API items, which are the conversation;
``event_msg`` (``user_message``, ``agent_message``, ``token_count``...) and
``turn_context`` records are the UI's events and each turn's settings; a ``compacted``
record is Codex's compaction: its ``replacement_history`` replaces the whole history
before it (``codex resume`` rebuilds the history that way).

Reading follows ``codex resume``: the conversation is the last ``compacted`` record's
``replacement_history`` (or nothing) followed by the items of the ``response_item``
records after it, grouped into Messages by the OpenAI Responses reader (an assistant turn
keeps its reasoning, text and parallel calls together; each call output is a ``tool``
Message). Each Message keeps its items as its source, in ``openai-responses``: they are
Responses items, so a conversion to ``openai-responses`` (or through native and back)
writes them as they were. A ``user_message`` event whose text no user item holds is read as that user's
turn (Codex versions that logged user turns only as events). ``base_instructions`` is a
leading system Message; ``developer`` items are system Messages: the rules, which every
manager keeps. The summary is the user message Codex's own compaction ends its
replacement history with (:data:`SUMMARY_PREFIX`, then the summary).

Writing back, a conversation that did not change is written record for record. Otherwise
records are kept or dropped with the Messages they belong to:

* ``session_meta`` is always the first record, as it was;
* each event and ``turn_context`` record belongs to the next ``response_item`` after it
  (a turn's context to the turn's first item, a response's ``token_count`` to what
  follows), a ``user_message`` event to the user item holding its text: kept with it,
  dropped with it; the records after the last item are always kept;
* a summary, or Messages read from a replacement history, are written the way Codex
  compacts: a ``compacted`` record whose ``replacement_history`` holds the leading rules,
  then the summary as Codex's summary message, then the kept Messages of the old
  replacement history, followed by a ``context_compacted`` event; the kept records follow;
* records before the last ``compacted`` record, which ``codex resume`` no longer reads,
  are dropped;
* a Message a manager changed (a cleared or cut tool output) is written as new
  ``response_item`` records with its first record's timestamp; a call output keeps its
  own item (type, ``call_id``) with the new ``output``.

Converting into a rollout from another format is refused: it would need an invented
session (``session_meta``, turn contexts) Codex could not resume.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import Conversation, JsonlRecords, Layout
from ctxmgr.formats._detection.codex import (
    RECORD_TYPES,
    SUMMARY_PREFIX,
    score as detection_score,
    superseded_warning,
    teller,
)
from ctxmgr.formats._interop import read_guarded
from ctxmgr.formats._openai_chat import joined, json_type, output_text
from ctxmgr.formats._openai_responses import NAME as RESPONSES, _Reader, render_message
from ctxmgr.formats._records import input_error
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import ReasoningBlock, TextBlock, ToolResultBlock
from ctxmgr.state.message import Message

__all__ = ["CodexFormat", "Rollout"]

NAME = "codex"

INSTRUCTIONS_ID = "codex-base-instructions"
"""The message id of the system Message read from ``session_meta.base_instructions``."""


class Rollout(JsonlRecords):
    """A rollout's records, with what the reader learnt of them (the writer's map).

    Attributes:
        line_of: Record index of each item the reader read, by ``id(item)`` (an item of
            a replacement history maps to its ``compacted`` record).
        events_of: The event records that belong to each item record, by its index:
            those before it since the previous item, and a ``user_message`` event the
            user item it copies (before or after it).
        tail: Event record indices after the last item (always kept).
        compacted: Index of the last ``compacted`` record (``None``: none).
        items_of: Each Message's source items, by message id (for changed Messages).
        read_as: The source identity of each Message as read (to tell an unchanged
            conversation, written record for record).
        history_ids: The ids of the Messages read from the last replacement history.
    """

    def __init__(self, records: list[Any], line_numbers: list[int]) -> None:
        super().__init__(records, line_numbers)
        self.line_of: dict[int, int] = {}
        self.events_of: dict[int, list[int]] = {}
        self.tail: list[int] = []
        self.compacted: int | None = None
        self.items_of: dict[str | int, tuple[Any, ...]] = {}
        self.read_as: list[tuple[int, ...]] = []
        self.history_ids: list[str | int] = []


def summary_item(summary: str) -> dict[str, Any]:
    """The user message Codex's compaction ends a replacement history with."""
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary_message(summary)}]}


def summary_message(summary: str) -> str:
    """The summary as Codex spells it: :data:`SUMMARY_PREFIX`, a newline, the summary."""
    return f"{SUMMARY_PREFIX}\n{summary}"


def _summary_of(item: Any) -> str | None:
    """The summary held by a Codex summary message, else ``None``."""
    if not isinstance(item, dict) or item.get("type") != "message" or item.get("role") != "user":
        return None
    content = item.get("content")
    if not isinstance(content, list) or len(content) != 1 or not isinstance(content[0], dict):
        return None
    text = content[0].get("text")
    if not isinstance(text, str) or not text.startswith(SUMMARY_PREFIX):
        return None
    return text[len(SUMMARY_PREFIX) :].removeprefix("\n")


def _user_event(payload: Any) -> str | None:
    """The text of a ``user_message`` event (``None``: another record, or no text)."""
    if not isinstance(payload, dict) or payload.get("type") != "user_message":
        return None
    text = payload.get("message")
    return text if isinstance(text, str) and text else None


def _user_texts(item: Any) -> str:
    content = item.get("content") if isinstance(item, dict) else None
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))


class _RolloutReader:
    """One rollout read into Messages, and the map the writer needs."""

    def __init__(self, rollout: Rollout, source: str) -> None:
        self.rollout = rollout
        self.source = source
        self.items: list[Any] = []
        self.item_lines: list[int] = []
        self.summary: str | None = None
        self.warnings: list[str] = []

    def error(self, index: int, problem: str) -> InputError:
        return input_error(problem, source=self.source, records=self.rollout, index=index)

    def check(self) -> None:
        records = self.rollout
        for index, record in enumerate(records):
            if not isinstance(record, dict):
                raise self.error(index, f"expected a rollout record (an object), got {json_type(record)}")
            kind = record.get("type")
            if not isinstance(kind, str):
                raise self.error(index, "type: required string is missing (a rollout record has 'type' and 'payload')")
            if kind in RECORD_TYPES and not isinstance(record.get("payload"), dict):
                raise self.error(
                    index, f"payload: expected an object in a {kind} record, got {json_type(record.get('payload'))}"
                )
        if not records or records[0].get("type") != "session_meta":
            found = records[0].get("type") if records else "nothing"
            raise self.error(0, f"a Codex rollout starts with its session_meta record (found {found!r})")

    def read(self) -> list[Message]:
        self.check()
        records = self.rollout
        last = max((i for i, r in enumerate(records) if r["type"] == "compacted"), default=None)
        self.rollout.compacted = last
        start = 1
        if last is not None:
            start = last + 1
            self.replaced(last)
            if last > 1:
                self.warnings.append(superseded_warning(records.line_numbers[last]))
        replaced = len(self.items)
        self.lines(start)
        # The replacement history and the records after it are read apart: a turn left open
        # at the end of the history (its last item a compaction) is not the next one's.
        messages = self.messages(0, replaced) + self.messages(replaced, len(self.items))
        for index, item in zip(self.item_lines, self.items, strict=True):
            self.rollout.line_of[id(item)] = index
        for message in messages:
            source = message.source_in(RESPONSES) or ()
            self.rollout.items_of[message.message_id] = source
            self.rollout.read_as.append(tuple(id(item) for item in source))
            if source and last is not None and self.rollout.line_of.get(id(source[0])) == last:
                self.rollout.history_ids.append(message.message_id)
        return [*self.instructions(), *messages]

    def messages(self, first: int, end: int) -> list[Message]:
        """The Messages of items ``first`` to ``end``, numbered as one reader would."""
        numbers = self.rollout.line_numbers
        items = JsonlRecords(self.items[first:end], [numbers[i] for i in self.item_lines[first:end]])
        reader = _Reader(items, source=self.source, prefix="payload")
        messages, lifted = reader.read()
        self.warnings.extend(reader.warnings)
        if lifted is not None:
            self.summary = joined(lifted, self.summary) if self.summary else lifted
        for message in messages:
            message.message_id = f"item-{int(str(message.message_id).removeprefix('item-')) + first:04d}"
        return messages

    def replaced(self, index: int) -> None:
        """The items of the ``compacted`` record at ``index``; its summary."""
        payload = self.rollout[index]["payload"]
        history = payload.get("replacement_history")
        if not isinstance(history, list):
            # Codex's early compactions: the summary only (Codex rebuilt the rest from the
            # user messages before it, which this reader does not).
            message = payload.get("message")
            if isinstance(message, str) and message:
                self.summary = message.removeprefix(SUMMARY_PREFIX).lstrip("\n")
            return
        for item in history:
            found = _summary_of(item)
            if found is not None:
                self.summary = joined(self.summary, found) if self.summary else found
                continue
            self.items.append(item)
            self.item_lines.append(index)

    def lines(self, start: int) -> None:
        """The items of the records from ``start`` on, and the events each item owns."""
        records = self.rollout
        users = [
            (index, _user_texts(r["payload"]))
            for index, r in enumerate(records[start:], start=start)
            if r["type"] == "response_item"
            and r["payload"].get("type") == "message"
            and r["payload"].get("role") == "user"
        ]
        owned = records.events_of
        waiting: list[int] = []
        for index in range(start, len(records)):
            record = records[index]
            payload = record.get("payload")
            told = _user_event(payload)
            if record["type"] == "response_item":
                item = payload
            elif told is not None and record["type"] == "event_msg":
                found = teller(index, told, users)
                if found is not None:
                    # The UI's copy of a user turn goes with the turn's item, before or after it.
                    owned.setdefault(found, []).append(index)
                    continue
                item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": told}]}
            else:
                waiting.append(index)
                continue
            self.items.append(item)
            self.item_lines.append(index)
            owned.setdefault(index, []).extend(waiting)
            waiting = []
        records.tail = waiting

    def instructions(self) -> list[Message]:
        meta = self.rollout[0]["payload"]
        found = meta.get("base_instructions")
        text = found.get("text") if isinstance(found, dict) else found
        if not isinstance(text, str) or not text:
            return []
        return [Message(message_id=INSTRUCTIONS_ID, role="system", content=[TextBlock(text=text)])]


# -- writing -------------------------------------------------------------------------


def _changed_items(message: Message, original: tuple[Any, ...], warn: Any) -> list[Any]:
    """Items for a Message a manager changed: a call output keeps its own item with the
    new output; anything else is rendered (reasoning items back as they were read)."""
    results = {b.call_id: b for b in message.content if isinstance(b, ToolResultBlock)}
    if results and original:
        items: list[Any] = []
        for item in original:
            call_id = item.get("call_id") if isinstance(item, dict) else None
            result = results.get(call_id) if isinstance(call_id, str) else None
            items.append(item if result is None else {**item, "output": output_text(result.output)})
        return items
    reasoning = [
        b.details
        for b in message.content
        if isinstance(b, ReasoningBlock) and isinstance(b.details, dict) and b.details.get("type") == "reasoning"
    ]
    rest = message.model_copy(update={"content": [b for b in message.content if not isinstance(b, ReasoningBlock)]})
    return [*reasoning, *render_message(rest, warn)]


class CodexFormat:
    """Reads and writes Codex CLI rollouts (see the module docstring)."""

    name = NAME
    list_key = "payload"
    request = None
    user_turn_summary = True

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        return {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: self._read(value, source, layout), source, "Codex rollout")

    def _read(self, value: Any, source: str, layout: Layout) -> Conversation:
        if not isinstance(value, list):
            raise InputError(f"a Codex rollout is JSONL, one record per line; got {json_type(value)}", source=source)
        numbers = value.line_numbers if isinstance(value, JsonlRecords) else list(range(1, len(value) + 1))
        rollout = Rollout(list(value), numbers)
        reader = _RolloutReader(rollout, source)
        messages = reader.read()
        state = AgentState(context=messages, context_summary=reader.summary)
        conversation = Conversation(
            state=state, format=NAME, container=rollout, layout="jsonl", warnings=reader.warnings
        )
        conversation.summary_from_user_turn = reader.summary is not None
        return conversation

    def write(self, conversation: Conversation) -> Any:
        rollout = conversation.container
        if not isinstance(rollout, Rollout):
            raise UsageError(
                f"converting into codex is refused: a Codex rollout is the session log Codex writes for itself, "
                f"and one made from a {conversation.format} file would need an invented session; convert to "
                "openai-responses for the same items"
            )
        summary = conversation.state.context_summary
        if summary and conversation.summary_as not in (None, "message"):
            raise UsageError(
                f"--summary-as {conversation.summary_as}: a Codex rollout keeps its summary in one place, "
                "where Codex's own compaction puts it (a compacted record); leave --summary-as out"
            )
        messages = [m for m in conversation.state.context if m.message_id != INSTRUCTIONS_ID]
        identity = [
            tuple(id(item) for item in source) for m in messages if (source := m.source_in(RESPONSES)) is not None
        ]
        if summary == conversation.original_summary and len(identity) == len(messages) and identity == rollout.read_as:
            return list(rollout)
        return _Writer(rollout, conversation).records(messages, summary)


class _Writer:
    def __init__(self, rollout: Rollout, conversation: Conversation) -> None:
        self.rollout = rollout
        self.conversation = conversation
        self.out: list[Any] = [rollout[0]]

    def original(self, message: Message) -> tuple[Any, ...]:
        return self.rollout.items_of.get(message.message_id, ())

    def replaced(self, message: Message) -> bool:
        """Whether ``message`` was read from the last compaction's replacement history."""
        original = self.original(message)
        compacted = self.rollout.compacted
        return bool(original) and compacted is not None and self.rollout.line_of.get(id(original[0])) == compacted

    def items(self, message: Message) -> list[Any]:
        source = message.source_in(RESPONSES)
        if source is not None:
            return list(source)
        return _changed_items(message, self.original(message), self.conversation.dropped.add)

    def records(self, messages: list[Message], summary: str | None) -> list[Any]:
        rollout = self.rollout
        history = [m for m in messages if self.replaced(m)]
        rest = [m for m in messages if not self.replaced(m)]
        as_read = (
            rollout.compacted is not None
            and summary == self.conversation.original_summary
            and [m.message_id for m in history] == rollout.history_ids
            and all(m.source_in(RESPONSES) is not None for m in history)
        )
        if as_read:
            self.out.append(rollout[rollout.compacted])  # type: ignore[index]
        elif summary or history:
            # The rules first (the replacement history's leading system Messages, else
            # the file's), then the summary, then the rest of the old replacement history.
            leading = _leading_system(history or rest)
            if not history:
                rest = rest[len(leading) :]
            replacement = [item for m in leading for item in self.items(m)]
            if summary:
                replacement.append(summary_item(summary))
            replacement.extend(item for m in history[len(leading) :] for item in self.items(m))
            self.compaction(summary, replacement, rest)
        for message in rest:
            self.message(message)
        self.out.extend(rollout[i] for i in rollout.tail)
        return self.out

    def compaction(self, summary: str | None, replacement: list[Any], rest: list[Message]) -> None:
        """The ``compacted`` record (and Codex's ``context_compacted`` event after it)."""
        stamp = self.timestamp(rest)
        compacted: dict[str, Any] = {
            "type": "compacted",
            "payload": {"message": summary_message(summary) if summary else "", "replacement_history": replacement},
        }
        event: dict[str, Any] = {"type": "event_msg", "payload": {"type": "context_compacted"}}
        if stamp is not None:
            compacted = {"timestamp": stamp, **compacted}
            event = {"timestamp": stamp, **event}
        self.out.extend((compacted, event))

    def timestamp(self, rest: list[Message]) -> Any:
        """The time of the first record kept after the compaction (else of the last record)."""
        rollout = self.rollout
        for message in rest:
            original = self.original(message)
            if original:
                index = rollout.line_of.get(id(original[0]))
                if index is not None and isinstance(rollout[index], dict) and "timestamp" in rollout[index]:
                    return rollout[index]["timestamp"]
        last = rollout[-1]
        return last.get("timestamp") if isinstance(last, dict) else None

    def message(self, message: Message) -> None:
        """The records of ``message`` and the events it owns, in the file's order."""
        rollout = self.rollout
        original = self.original(message)
        lines = sorted({rollout.line_of[id(item)] for item in original if id(item) in rollout.line_of})
        owned = sorted({*lines, *(event for index in lines for event in rollout.events_of.get(index, ()))})
        if message.source_in(RESPONSES) is not None:
            self.out.extend(rollout[index] for index in owned)
            return
        stamp = rollout[lines[0]].get("timestamp") if lines else None
        made = [{"type": "response_item", "payload": item} for item in self.items(message)]
        if stamp is not None:
            made = [{"timestamp": stamp, **record} for record in made]
        if not lines:
            self.out.extend(made)
            return
        for index in owned:
            if index == lines[0]:
                self.out.extend(made)  # the new records where the first of the old ones was
            elif index not in lines:
                self.out.append(rollout[index])


def _leading_system(messages: list[Message]) -> list[Message]:
    lead: list[Message] = []
    for message in messages:
        if message.role != "system":
            break
        lead.append(message)
    return lead
