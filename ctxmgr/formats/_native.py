"""Native format: the reference's ``AgentState`` / ``Message`` JSON.

Accepted shapes: an AgentState object (any object with a ``context`` list), a bare list
of messages, or JSONL with one message per line. Kept messages are written back from
their source records, so unknown keys and their order survive.

**What ctxmgr writes is what 10xGraph reads and writes.** A message that did not come
from a native file is written field for field as the reference's ``Message`` dumps it
(:func:`reference_record`): every block has exactly the reference's fields, and what
those fields cannot hold lives where 10xGraph itself keeps provider data, the message's
``raw``:

* ``{"format": "anthropic", "records": [...]}``: the record(s) the message was read from,
  as they were (signatures, ids, ``cache_control``, citations, any key);
* ``{"format": "gemini", "system": {"key": [...], "value": ...}}``: a system prompt read
  from outside the message list (``systemInstruction``, Anthropic's ``system``, a
  Responses ``instructions``), and where it was.

A container's other keys (``model``, ``tools``, ``temperature``, dataset columns) are
kept beside ``context`` as the fields of an ``AgentState`` subclass would be, spelled as
in the source. Reading such a file, each message's ``raw`` is read again with its
format's reader, and used only when that gives the very message the file shows (role,
blocks, texts, tool calls, in its place): then converting back writes the original
records, and converting elsewhere behaves as converting from the original file. A
``raw`` that does not match (the message was edited, or the field forged) is not used,
and a warning says so: data from ``raw`` never changes a message's role, kind or place.

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

from collections.abc import Callable
from typing import Any, TypeGuard

from pydantic import ValidationError

from ctxmgr import _nesting
from ctxmgr.errors import InputError
from ctxmgr.formats._base import (
    Conversation,
    Layout,
    forged_summary,
    note_ambiguity,
    record_name,
    split_summary_text,
)
from ctxmgr.formats._carry import EDITED_KEYS, carry_record_keys
from ctxmgr.formats._detection.native import (
    DECLARATION,
    SUMMARY_MARKER,
    score as detection_score,
)
from ctxmgr.formats._interop import IN_RESULT, PASSTHROUGH_MIME, SystemSlot, summary_text
from ctxmgr.formats._records import input_error, validation_message
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import (
    AnnotationBlock,
    AudioBlock,
    DataBlock,
    DocumentBlock,
    ErrorBlock,
    ImageBlock,
    MediaRef,
    ReasoningBlock,
    RemoteToolCallBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    VideoBlock,
)
from ctxmgr.state.message import Message

__all__ = ["SUMMARY_MARKER", "NativeFormat", "reference_record", "summary_message"]

NAME = "native"

_STATE_FIELDS = ("context", "context_summary", "execution_meta")
"""The reference ``AgentState``'s own fields; any other key is a carried one."""


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

    name = NAME
    user_turn_summary = False
    list_key = "context"
    request = None  # no request of its own: every key of a container is kept as it is

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """The keys of an AgentState beside the reference's own fields."""
        if isinstance(container, dict) and "context" in container:
            return {k: v for k, v in container.items() if k not in _STATE_FIELDS}
        return {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        if isinstance(value, dict) and "context" in value:
            conversation = self._read_state(value, source=source, layout=layout)
        else:
            conversation = self._read_list(value, source=source, layout=layout)
        _restore_sources(conversation)
        return conversation

    def _read_list(self, value: Any, *, source: str, layout: Layout) -> Conversation:
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
            # Only a record the declaration finds marked holds a summary or a forged one:
            # the outline reader declines exactly those (see ctxmgr.formats._declaration).
            marked = DECLARATION.marked(record)
            plain = _plain_summary(record) if leading and marked else None
            if plain is not None:
                # How a summary is written in a file that is also valid in other formats:
                # in the leading system messages, where the text already has that authority.
                summary = f"{summary}\n\n{plain}" if summary else plain
                continue
            if marked and _is_summary_record(record):
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
            if DECLARATION.marked(record) and _is_summary_record(record):
                why = "is in 'context' (an AgentState keeps its summary in 'context_summary')"
                warnings.append(forged_summary(f"context[{index}]", why))
        return Conversation(state=state, format=self.name, container=value, layout=layout, warnings=warnings)

    def write(self, conversation: Conversation) -> Any:
        state = conversation.state
        records = [_dump(m, conversation, index) for index, m in enumerate(state.context)]
        container = conversation.container
        # Another format's container may hold a 'context' of its own (an Agents SDK
        # RunState's run context, an object): only a native one is reused.
        if (
            isinstance(container, dict)
            and "context" in container
            and (conversation.format == self.name or isinstance(container["context"], list))
        ):
            out = dict(container)
            out["context"] = records
            if state.context_summary != conversation.original_summary or "context_summary" in out:
                out["context_summary"] = state.context_summary
            return out
        if conversation.one_record and len(records) == 1:
            return records[0]  # a file holding one bare message stays one message
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
            elif conversation.also_reads_as and conversation.format == self.name:
                # The file is valid OpenAI chat or Anthropic too: a system message with the
                # marked text is what all of them take (and read back as the summary).
                note_ambiguity(conversation, self.name)
                text = {"type": "text", "text": summary_text(state.context_summary)}
                records.insert(insert_at, {"role": "system", "content": [text]})
            else:
                following = state.context[insert_at] if insert_at < len(state.context) else None
                stamp = following.timestamp if following is not None and following.source is not None else 0.0
                records.insert(insert_at, _dump(summary_message(state.context_summary, stamp)))
        return records


def _plain_summary(record: dict[str, Any]) -> str | None:
    """The summary in a ``{"role": "system", "content": [one marked text block]}`` record."""
    content = record.get("content")
    if set(record) != {"role", "content"} or not isinstance(content, list) or len(content) != 1:
        return None
    block = content[0]
    if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
        return None
    return split_summary_text(block["text"])


def _summary_records(conversation: Conversation) -> list[Any]:
    """The summary records of a list or JSONL file as read (the leading system block's)."""
    container = conversation.container
    if not isinstance(container, list):
        return []
    found: list[Any] = []
    for record in container:
        if not isinstance(record, dict) or record.get("role") != "system":
            break
        if _is_summary_record(record) or _plain_summary(record) is not None:
            found.append(record)
    return found


def _beside_text(message: Message) -> str:
    """What a message holds besides text blocks, in words ("" when nothing)."""
    kinds: list[str] = sorted({block.type for block in message.content if block.type != "text"})
    if message.tools_calls:
        kinds.append("tool calls")
    return ", ".join(kinds)


def _dump(message: Message, conversation: Conversation | None = None, index: int = 0) -> Any:
    source = message.source_in(NAME)
    if source is not None:
        return source[0]
    record = reference_record(message)
    fmt = message.edited_source_format
    edited_from = message.edited_source_in(fmt) if fmt is not None else None
    if fmt == NAME and edited_from:
        return carry_record_keys(edited_from, record)  # keys the model does not hold
    if fmt is not None and edited_from and isinstance(record.get("raw"), dict):
        # A message read from another format's records, then edited by a manager: the
        # edit goes into those records too, or they go (they would bring back what was
        # cut, and no longer match the message).
        record["raw"] = _edited_raw(message, fmt, list(edited_from))
        if record["raw"] is None and conversation is not None:
            conversation.warnings.append(
                f"message {index}: its {fmt} records in 'raw' were left out: the edit could not be carried "
                "into them (converting back renders the message instead)"
            )
    return record


def _edited_raw(message: Message, fmt: str, records: list[Any]) -> dict[str, Any] | None:
    """``raw`` for an edited ``message`` whose original was read from ``records`` (in
    ``fmt``): the records with each edited value replaced, when they read back as the
    message; ``None`` when they do not."""
    original = _reread(fmt, records, None, None) if all(isinstance(r, dict) for r in records) else None
    if original is None:
        return None
    replacements = _edits(original, message)
    if not replacements:
        return None
    edited = [_replace_values(record, replacements) for record in records]
    again = _reread(fmt, edited, None, None)
    if again is None or not _nesting.equal(_visible(again), _visible(message)):
        return None
    return {"format": fmt, "records": edited}


def _edits(original: Message, edited: Message) -> list[tuple[Any, Any]]:
    """The values a manager changed between ``original`` and ``edited``: tool results'
    outputs and calls' arguments, each as (before, after)."""
    if len(original.content) != len(edited.content):
        return []
    pairs: list[tuple[Any, Any]] = []
    for before, after in zip(original.content, edited.content, strict=True):
        if isinstance(before, ToolResultBlock) and isinstance(after, ToolResultBlock):
            if before.output != after.output:
                pairs.append((before.output, after.output))
        elif _calls(before) and isinstance(after, type(before)) and before.args != after.args:
            pairs.append((before.args, after.args))
            pairs.append((_nesting.dumps(before.args), _nesting.dumps(after.args)))
    for before_call, after_call in zip(original.tools_calls or (), edited.tools_calls or (), strict=False):
        old, new = (_function_arguments(call) for call in (before_call, after_call))
        if isinstance(old, str) and isinstance(new, str) and old != new:
            pairs.append((old, new))
            parsed = _parsed(old), _parsed(new)
            if parsed[0] is not None and parsed[1] is not None:
                pairs.append(parsed)  # the arguments as an object (Anthropic's input, Gemini's args)
    return pairs


def _calls(block: Any) -> TypeGuard[ToolCallBlock | RemoteToolCallBlock]:
    return isinstance(block, ToolCallBlock | RemoteToolCallBlock)


def _parsed(text: str) -> Any:
    try:
        return _nesting.loads(text)
    except ValueError:
        return None


def _function_arguments(call: Any) -> Any:
    function = call.get("function") if isinstance(call, dict) else None
    return function.get("arguments") if isinstance(function, dict) else None


def _replace_values(value: Any, replacements: list[tuple[Any, Any]], key: str = "") -> Any:
    """A copy of ``value`` with every part equal to a replacement's before made its after:
    any string, and objects and lists only under the keys an edit changes (an empty
    ``{}`` elsewhere is not a call's arguments)."""
    if isinstance(value, str) or key in EDITED_KEYS:
        for before, after in replacements:
            if type(value) is type(before) and value == before:
                return after
    if isinstance(value, dict):
        return {name: _replace_values(item, replacements, name) for name, item in value.items()}
    if isinstance(value, list):
        return [_replace_values(item, replacements, key) for item in value]
    return value


def _validate_message(record: dict[str, Any], source: str, records: Any, index: int) -> Message:
    try:
        return Message.model_validate(record, strict=True)
    except ValidationError as exc:
        prefix = "" if hasattr(records, "line_numbers") else f"[{index}]"
        raise input_error(validation_message(exc, prefix), source=source, records=records, index=index) from None


# -- writing: the reference's shape, provenance in ``raw`` ------------------------------


def reference_record(message: Message, *, provenance: bool = True) -> dict[str, Any]:
    """``message`` as the reference's ``Message.model_dump(mode="json")`` writes it.

    Every block has the reference's fields and only those (a reasoning block's ``summary``
    is a string, its ``details`` a list of strings or null; a document always has its
    ``media``...). With ``provenance``, a message read from another format keeps its
    records in ``raw`` (see the module docstring), so nothing is lost.
    """
    record: dict[str, Any] = {
        "message_id": message.message_id,
        "role": message.role,
        "content": [_reference_block(block) for block in message.content],
        "delta": message.delta,
        "tools_calls": message.tools_calls,
        "reasoning": message.reasoning,
        "timestamp": message.timestamp,
        "metadata": message.metadata,
        "usages": None if message.usages is None else _reference_usages(message.usages.model_dump(mode="json")),
        "raw": message.raw,
        "parsed_content": message.parsed_content,
    }
    if provenance:
        found = _provenance(message)
        if found is not None:
            record["raw"] = found
    return record


def _provenance(message: Message) -> dict[str, Any] | None:
    """``raw`` for a message read from another format: its records, or its system slot."""
    source, fmt = message.source, message.source_format
    if source is None or fmt is None or fmt == NAME:
        return None
    if len(source) == 1 and isinstance(source[0], SystemSlot):
        return {"format": fmt, "system": {"key": list(source[0].key), "value": source[0].value}}
    return {"format": fmt, "records": list(source)}


_USAGE_FIELDS = (
    "completion_tokens",
    "prompt_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "image_tokens",
    "audio_tokens",
)


def _reference_usages(usages: dict[str, Any]) -> dict[str, Any]:
    return {key: usages.get(key) for key in _USAGE_FIELDS}


_MEDIA_FIELDS = tuple(MediaRef.model_fields)


def _media(media: MediaRef | None, **defaults: Any) -> dict[str, Any]:
    """A reference ``MediaRef``: its fields only (the reference requires one on media blocks)."""
    found = media.model_dump(mode="json") if media is not None else MediaRef(**defaults).model_dump(mode="json")
    return {key: found.get(key) for key in _MEDIA_FIELDS}


_REF_FIELDS = ("url", "file_id", "page", "index", "title")


def _annotation_ref(annotation: Any) -> dict[str, Any]:
    """A provider's citation as the reference's ``AnnotationRef`` (url, file, page, index,
    title); what else it says stays in the message's ``raw``."""
    found = annotation if isinstance(annotation, dict) else {}

    def first(kind: type, *keys: str) -> Any:
        for key in keys:
            value = found.get(key)
            if isinstance(value, kind) and not isinstance(value, bool):
                return value
        return None

    return {
        "url": first(str, "url", "source"),
        "file_id": first(str, "file_id"),
        "page": first(int, "page", "start_page_number"),
        "index": first(int, "index", "document_index", "search_result_index"),
        "title": first(str, "title", "document_title", "filename"),
    }


def _passthrough_media(block: DataBlock) -> dict[str, Any] | None:
    """What a native reader sees of a block of another format: its size and digest (the
    block itself is in the message's ``raw``, and these let a reader check it is that one)."""
    extra = block.model_extra or {}
    if "block" not in extra:  # read from a native file: shown as it was
        return _media(block.media) if block.media is not None else None
    import hashlib  # here: only a block of another format needs it, and loading OpenSSL costs start-up

    data = _nesting.dumps(extra["block"], sort_keys=True).encode()
    digest = hashlib.sha256(data).hexdigest()
    return _media(None, kind="data", mime_type="application/json", size_bytes=len(data), sha256=digest)


def _text_ref(block: TextBlock) -> dict[str, Any]:
    return {"type": "text", "text": block.text, "annotations": [_annotation_ref(a) for a in block.annotations]}


def _image_ref(block: ImageBlock) -> dict[str, Any]:
    return {"type": "image", "media": _media(block.media), "alt_text": block.alt_text, "bbox": block.bbox}


def _audio_ref(block: AudioBlock) -> dict[str, Any]:
    return {
        "type": "audio",
        "media": _media(block.media),
        "transcript": block.transcript,
        "sample_rate": block.sample_rate,
        "channels": block.channels,
    }


def _video_ref(block: VideoBlock) -> dict[str, Any]:
    thumbnail = _media(block.thumbnail) if block.thumbnail is not None else None
    return {"type": "video", "media": _media(block.media), "thumbnail": thumbnail}


def _document_ref(block: DocumentBlock) -> dict[str, Any]:
    pages = [block.pages] if isinstance(block.pages, int) else block.pages
    # A document given as text has no media; the reference wants one: it says "text".
    media = _media(block.media, mime_type="text/plain" if block.text is not None else None)
    return {"type": "document", "media": media, "text": block.text, "pages": pages, "excerpt": block.excerpt}


def _data_ref(block: DataBlock) -> dict[str, Any]:
    if block.mime_type == PASSTHROUGH_MIME:
        return {
            "type": "data",
            "mime_type": PASSTHROUGH_MIME,
            "data_base64": None,
            "media": _passthrough_media(block),
        }
    data_media = _media(block.media) if block.media is not None else None
    return {"type": "data", "mime_type": block.mime_type, "data_base64": block.data_base64, "media": data_media}


def _tool_call_ref(block: ToolCallBlock | RemoteToolCallBlock) -> dict[str, Any]:
    tool_type = block.tool_type
    if isinstance(block, RemoteToolCallBlock) and tool_type is None:
        tool_type = "remote"  # the reference's default, and it takes no null there
    return {"type": block.type, "id": block.id, "name": block.name, "args": block.args, "tool_type": tool_type}


def _tool_result_ref(block: ToolResultBlock) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "call_id": block.call_id,
        "output": block.output,
        "is_error": block.is_error,
        "status": block.status,
    }


def _reasoning_ref(block: ReasoningBlock) -> dict[str, Any]:
    details = block.details
    steps = details if isinstance(details, list) and all(isinstance(d, str) for d in details) else None
    return {"type": "reasoning", "summary": block.summary or "", "details": steps}


def _annotation_block_ref(block: AnnotationBlock) -> dict[str, Any]:
    spans = block.spans
    pairs = (
        spans
        if isinstance(spans, list)
        and all(isinstance(s, list | tuple) and len(s) == 2 and all(isinstance(i, int) for i in s) for s in spans)
        else None
    )
    return {
        "type": "annotation",
        "kind": block.kind,
        "refs": [_annotation_ref(r) for r in block.refs],
        "spans": [list(s) for s in pairs] if pairs is not None else None,
    }


def _error_ref(block: ErrorBlock) -> dict[str, Any]:
    code = str(block.code) if block.code is not None else None
    data = block.data if isinstance(block.data, dict) else None
    return {"type": "error", "message": block.message, "code": code, "data": data}


_REFERENCE_BLOCKS: dict[type, Callable[[Any], dict[str, Any]]] = {
    TextBlock: _text_ref,
    ImageBlock: _image_ref,
    AudioBlock: _audio_ref,
    VideoBlock: _video_ref,
    DocumentBlock: _document_ref,
    DataBlock: _data_ref,
    ToolCallBlock: _tool_call_ref,
    RemoteToolCallBlock: _tool_call_ref,
    ToolResultBlock: _tool_result_ref,
    ReasoningBlock: _reasoning_ref,
    AnnotationBlock: _annotation_block_ref,
    ErrorBlock: _error_ref,
}
"""The reference's shape of each content block, by block class."""


def _reference_block(block: Any) -> dict[str, Any]:
    render = _REFERENCE_BLOCKS.get(type(block))
    if render is None:
        # A subclass of a block class is rendered as its base, as isinstance would.
        render = next((r for cls, r in _REFERENCE_BLOCKS.items() if isinstance(block, cls)), None)
    if render is None:
        raise TypeError(f"not a content block: {type(block).__name__}")
    return render(block)


# -- reading: restoring each message's source from ``raw`` ------------------------------


def _raw_source(raw: Any) -> tuple[str, Any, tuple[str, ...] | None] | None:
    """``(format, value, system key)`` if ``raw`` is what :func:`_provenance` writes, else None.

    ``value`` is the list of records, or the system prompt when the key is given.
    """
    from ctxmgr.formats import FORMATS

    if not isinstance(raw, dict) or set(raw) not in ({"format", "records"}, {"format", "system"}):
        return None
    fmt = raw["format"]
    if not isinstance(fmt, str) or fmt == NAME or fmt not in FORMATS:
        return None
    if "records" in raw:
        return (fmt, raw["records"], None) if isinstance(raw["records"], list) and raw["records"] else None
    system = raw["system"]
    if not isinstance(system, dict) or set(system) != {"key", "value"}:
        return None
    key = system["key"]
    if not isinstance(key, list) or not key or not all(isinstance(k, str) for k in key):
        return None
    return fmt, system["value"], tuple(key)


def _restore_sources(conversation: Conversation) -> None:
    """Give each message whose ``raw`` holds its original records those records as its
    source (see the module docstring), and settle the format of the container's keys."""
    formats: set[str] = set()
    for index, message in enumerate(conversation.state.context):
        _distrust_foreign_blocks(message)
        found = _raw_source(message.raw)
        if found is None:
            continue
        fmt, value, key = found
        restored = _reread(fmt, value, key, conversation.state.context_summary)
        if restored is None or not _nesting.equal(_visible(restored), _visible(message)):
            conversation.warnings.append(
                f"message {index}: its raw {fmt} record does not match the message (edited, or not written "
                "by ctxmgr); the message is used as it is"
            )
            continue
        conversation.state.context[index] = _adopt(restored, message)
        formats.add(fmt)
    # The keys beside 'context' are spelled as the messages' format is (a file converted
    # from one format); with none, or several, they are read by their names.
    conversation.origin = formats.pop() if len(formats) == 1 else None


def _distrust_foreign_blocks(message: Message) -> None:
    """Make blocks of another format held in a native message's own content (as earlier
    ctxmgr versions wrote them) plain data blocks: restored from there, a Responses item or
    an Anthropic block could be anything, a system message among them. Only records that
    pass the check of :func:`_restore_sources` bring such blocks back."""
    for position, block in enumerate(message.content):
        extra = (block.model_extra or {}) if isinstance(block, DataBlock) else {}
        if isinstance(block, DataBlock) and ("block" in extra or "format" in extra):
            kept = {k: v for k, v in extra.items() if k not in ("block", "format", "part")}
            plain = DataBlock(mime_type=block.mime_type, data_base64=block.data_base64, media=block.media)
            message.content[position] = DataBlock.model_validate({**plain.model_dump(), **kept})


def _reread(fmt: str, value: Any, key: tuple[str, ...] | None, summary: str | None) -> Message | None:
    """The one message ``fmt``'s reader makes of ``value`` (records, or a system prompt
    placed at ``key`` of an otherwise empty container); None if it makes anything else.

    A system prompt may hold the conversation's summary (a Responses ``instructions`` keeps
    it inside the one string): the one the native file shows (or its start, before a later
    run appended to it), in the slot it had, so it passes.
    """
    from ctxmgr.formats import FORMATS

    reader = FORMATS[fmt]
    container: Any = value
    if key is not None:
        container = {reader.list_key: []}
        node = container
        for part in key[:-1]:
            node = node.setdefault(part, {})
        node[key[-1]] = value
    try:
        conversation = reader.read(container, source="<raw>", layout="document")
    except InputError:
        return None
    messages = conversation.state.context
    lifted = conversation.state.context_summary
    if lifted is not None and (key is None or not _extends(summary, lifted)):
        return None
    if len(messages) != 1:
        return None
    found = messages[0]
    slot = found.source[0] if found.source else None
    if (key is not None) != isinstance(slot, SystemSlot):
        return None  # a system prompt must come back as one, records as records
    return found


def _extends(summary: str | None, earlier: str) -> bool:
    """Whether ``summary`` is ``earlier``, or ``earlier`` with more appended (a later run's)."""
    return summary is not None and (summary == earlier or summary.startswith(f"{earlier}\n\n"))


def _visible(message: Message) -> Any:
    """What a native file shows of a message, tool-call ids aside (they are plumbing: the
    ids a file's raw records carry, or none, are the ones its format pairs by)."""
    record = reference_record(message, provenance=False)
    for block in record["content"]:
        block.pop("id" if block["type"] in ("tool_call", "remote_tool_call") else "call_id", None)
    calls = [{k: v for k, v in call.items() if k != "id"} for call in record["tools_calls"] or ()]
    return record["role"], record["content"], calls, record["reasoning"]


def _adopt(restored: Message, shown: Message) -> Message:
    """``restored`` (read from the raw records) with what the native file says of the
    message: its id, time, metadata, usage, and the tool-call ids it pairs by."""
    ids = dict(zip(_call_ids(restored), _call_ids(shown), strict=True))
    for call in restored.tools_calls or ():
        if isinstance(call, dict) and call.get("id") in ids:
            call["id"] = ids[call["id"]]
    for block in restored.content:
        if isinstance(block, ToolCallBlock | RemoteToolCallBlock):
            block.id = ids.get(block.id, block.id)
        elif isinstance(block, ToolResultBlock):
            block.call_id = ids.get(block.call_id, block.call_id)
        inside = (getattr(block, "model_extra", None) or {}).get(IN_RESULT)
        if isinstance(inside, dict) and inside.get("call_id") in ids:
            inside["call_id"] = ids[inside["call_id"]]
    fields = shown.model_fields_set
    for name in ("message_id", "timestamp", "metadata", "usages", "delta", "parsed_content", "raw"):
        if name in fields:
            setattr(restored, name, getattr(shown, name))
    return restored


def _call_ids(message: Message) -> list[str]:
    """Every tool-call id a message names (its calls, then its results), in order."""
    ids = [str(call.get("id")) for call in message.tools_calls or () if isinstance(call, dict)]
    for block in message.content:
        if isinstance(block, ToolCallBlock | RemoteToolCallBlock):
            ids.append(block.id)
        elif isinstance(block, ToolResultBlock):
            ids.append(block.call_id)
    return ids
