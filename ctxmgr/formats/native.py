"""Native format: the reference's ``AgentState`` / ``Message`` JSON.

Accepted shapes: an AgentState object (any object with a ``context`` list), a bare list
of messages, or JSONL with one message per line. Kept messages are written back from
their source records, so unknown keys and their order survive.

In a container with no summary field (a list, JSONL) the summary is stored as a system
message placed right after the leading system messages and marked with
``metadata["ctxmgr_summary"] = true``; reading such a file lifts it back into
``context_summary`` so a second run appends to it. Only a marked *system* message in the
leading block of system messages is lifted: anywhere else (a user, assistant or tool
message, a system message after the conversation began, any message of an AgentState's
``context``, whose summary is its ``context_summary`` field) the marker is a claim any file
can make, so the message stays an ordinary message and a warning names it.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ctxmgr.errors import InputError
from ctxmgr.formats._records import input_error, validation_message
from ctxmgr.formats.base import Conversation, Layout, forged_summary, record_name
from ctxmgr.formats.detection.native import (
    SUMMARY_MARKER,
    score as detection_score,
)
from ctxmgr.state.agent import AgentState
from ctxmgr.state.message import Message

__all__ = ["SUMMARY_MARKER", "NativeFormat", "summary_message"]


def summary_message(summary: str, timestamp: float | None = 0.0) -> Message:
    """The marked system message that carries a summary in list containers.

    Its timestamp is given (the caller passes the time of the message it precedes), not
    "now": the same input must give the same output, run after run.
    """
    message = Message.text_message(summary, role="system", message_id="ctxmgr-summary")
    message.timestamp = timestamp
    message.metadata[SUMMARY_MARKER] = True
    return message


def _is_summary_record(record: Any) -> bool:
    metadata = record.get("metadata") if isinstance(record, dict) else None
    return isinstance(metadata, dict) and metadata.get(SUMMARY_MARKER) is True


def _why(role: str) -> str:
    """Why a marked message of ``role`` outside the leading system block is no summary."""
    if role == "system":
        return "is a system message after the conversation began"
    return f"is {'an' if role == 'assistant' else 'a'} {role} message"


class NativeFormat:
    """Reads and writes the reference's JSON."""

    name = "native"
    user_turn_summary = False

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        if isinstance(value, dict) and "context" in value:
            return self._read_state(value, source=source, layout=layout)
        records = value if isinstance(value, list) else [value]
        summary: str | None = None
        messages: list[Message] = []
        warnings: list[str] = []
        leading = True  # still in the leading system messages, where a summary may be
        for index, record in enumerate(records):
            if not isinstance(record, dict):
                raise input_error(
                    f"message {index} is {type(record).__name__}, expected an object",
                    source=source,
                    records=records,
                    index=index,
                )
            message = _validate_message(record, source, records, index)
            leading = leading and message.role == "system"
            if _is_summary_record(record):
                if leading:
                    text = message.text()
                    summary = f"{summary}\n\n{text}" if summary else text
                    extra = _beside_text(message)
                    if extra:
                        # Written back as read while the summary is unchanged; a new
                        # summary is text, so say what it would not carry.
                        warnings.append(
                            f"{record_name(records, index)} (ctxmgr's summary) also holds {extra}; "
                            "a new summary keeps only its text"
                        )
                    continue
                warnings.append(forged_summary(record_name(records, index), _why(message.role)))
            messages.append(message.with_source([record], self.name))
        state = AgentState(context=messages, context_summary=summary)
        return Conversation(state=state, format=self.name, container=value, layout=layout, warnings=warnings)

    def _read_state(self, value: dict[str, Any], *, source: str, layout: Layout) -> Conversation:
        context = value.get("context")
        if not isinstance(context, list):
            raise InputError(f"'context' is {type(context).__name__}, expected a list", source=source)
        try:
            state = AgentState.model_validate(value, strict=True)
        except ValidationError as exc:
            raise InputError(validation_message(exc), source=source) from None
        warnings: list[str] = []
        for index, (message, record) in enumerate(zip(state.context, context, strict=True)):
            message.with_source([record], self.name)
            if _is_summary_record(record):
                why = "is in 'context' (an AgentState keeps its summary in 'context_summary')"
                warnings.append(forged_summary(f"context[{index}]", why))
        return Conversation(state=state, format=self.name, container=value, layout=layout, warnings=warnings)

    def write(self, conversation: Conversation) -> Any:
        state = conversation.state
        records = [_dump(m) for m in state.context]
        container = conversation.container
        if isinstance(container, dict) and "context" in container:
            out = dict(container)
            out["context"] = records
            if state.context_summary != conversation.original_summary or "context_summary" in out:
                out["context_summary"] = state.context_summary
            return out
        if conversation.format != self.name and isinstance(container, dict):
            # Converting a document (a request, a Gemini/Anthropic body...): give 10xGraph
            # users what they load, an AgentState. A bare list stays a bare list.
            fresh = AgentState(context_summary=state.context_summary).model_dump(mode="json")
            fresh["context"] = records
            return fresh
        if state.context_summary:
            insert_at = 0
            while insert_at < len(state.context) and state.context[insert_at].role == "system":
                insert_at += 1
            originals = _summary_records(conversation) if conversation.format == self.name else []
            if originals and state.context_summary == conversation.original_summary:
                records[insert_at:insert_at] = originals  # unchanged: written back as read
            else:
                following = state.context[insert_at] if insert_at < len(state.context) else None
                stamp = following.timestamp if following is not None and following.source is not None else 0.0
                records.insert(insert_at, _dump(summary_message(state.context_summary, stamp)))
        if conversation.format == self.name and isinstance(container, dict) and len(records) == 1:
            return records[0]  # a file holding one bare message stays one message
        return records


def _summary_records(conversation: Conversation) -> list[Any]:
    """The summary records of a list or JSONL file as read (the leading system block's)."""
    container = conversation.container
    if not isinstance(container, list):
        return []
    found: list[Any] = []
    for record in container:
        if not isinstance(record, dict) or record.get("role") != "system":
            break
        if _is_summary_record(record):
            found.append(record)
    return found


def _beside_text(message: Message) -> str:
    """What a message holds besides text blocks, in words ("" when nothing)."""
    kinds: list[str] = sorted({block.type for block in message.content if block.type != "text"})
    if message.tools_calls:
        kinds.append("tool calls")
    return ", ".join(kinds)


def _dump(message: Message) -> Any:
    source = message.source_in(NativeFormat.name)
    if source is not None:
        return source[0]
    try:
        return message.model_dump(mode="json", exclude_none=False)
    except ValueError:
        # pydantic-core's JSON mode stops at 255 levels of nesting ("circular reference
        # detected"); values read from a file are plain JSON values already, which the
        # Python mode returns as they are, at any depth.
        return message.model_dump(mode="python", exclude_none=False)


def _validate_message(record: dict[str, Any], source: str, records: Any, index: int) -> Message:
    try:
        return Message.model_validate(record, strict=True)
    except ValidationError as exc:
        prefix = "" if hasattr(records, "line_numbers") else f"[{index}]"
        raise input_error(validation_message(exc, prefix), source=source, records=records, index=index) from None
