"""OpenAI Responses API input items: ``openai-responses``.

Accepted shapes: a bare list of items, JSONL with one item per line, one item, a request
``{"input": [...] | "text", "model": ..., "instructions": ..., ...}`` or a stored response
``{"object": "response", "output": [...], ...}``; keys outside the item list are written
back untouched (converted, the request settings other formats have take their spelling:
:mod:`ctxmgr.formats._openai_responses_request`).

Items are grouped into Messages; each Message keeps all its items as its source, so a
kept Message is written back item for item:

* a maximal run of model-side items (assistant ``message`` items, ``reasoning``,
  ``function_call`` and the other client tool calls, server tool calls such as
  ``web_search_call``) is ONE assistant Message: a turn with parallel calls keeps its text,
  reasoning and every call together, and a reasoning item stays with the item after it;
* client tool calls (``function_call``, ``custom_tool_call``, ``computer_call``,
  ``local_shell_call``, ``shell_call``, ``apply_patch_call``, ``mcp_approval_request``,
  ``tool_search_call``) become ``tools_calls`` keyed by their ``call_id``; each output
  item (``function_call_output``...) is a ``tool`` Message with a ``ToolResultBlock``;
* ``user`` / ``system`` / ``developer`` messages are one Message each (developer is
  ``system``);
* other items (``item_reference``, ``additional_tools``, unknown types) are passed
  through: they travel with the next item's Message (or the last one at the end);
* a string ``instructions`` is read as a leading system Message (so conversions and the
  token estimate see the system prompt); writing back leaves ``instructions`` in place.

Items the model has no class for become passthrough ``data`` blocks, and so do message
content parts of a type the reader does not know (marked as parts); a reasoning item is a
``ReasoningBlock`` with the item in ``details`` and its summary and reasoning text as text.
A trip through native restores them, and a conversion to another format names what it
cannot carry.

The summary goes, by default, in a ``developer`` message right after the leading
system/developer items; ``--summary-as system`` appends it to ``instructions`` (requests)
or to the first system item. Reading finds either form and lifts it back, but only in
``instructions`` and the leading system/developer items: elsewhere (a user or assistant
message, a system item after the first turn) the header marks nothing; the item is read
as it is and a warning names it.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.errors import InputError
from ctxmgr.formats._base import (
    SUMMARY_HEADER,
    Conversation,
    Layout,
    arguments_json,
    forged_summary,
    record_name,
    split_summary_text,
)
from ctxmgr.formats._carry import carry_keys
from ctxmgr.formats._detection.openai_chat import str_in
from ctxmgr.formats._detection.openai_responses import (
    CALLS as _CALLS,
    DECLARATION,
    MODEL_SIDE as _MODEL_SIDE,
    RESULTS as _RESULTS,
    ROLES as _ROLES,
    SYSTEM_ROLES as _SYSTEM_ROLES,
    call_arguments,
    score as detection_score,
)
from ctxmgr.formats._interop import (
    SERVER_CALL,
    SystemSlot,
    describe_block,
    in_message,
    message_carries_header,
    passthrough,
    passthrough_value,
    read_guarded,
    server_call,
)
from ctxmgr.formats._openai_chat import (
    Warn,
    carries_marker,
    check_placement,
    embed_summary,
    embedded_summary,
    joined,
    json_type,
    media_from_url,
    model_calls,
    output_text,
    strip_summary,
    summary_text,
    why_not_summary,
)
from ctxmgr.formats._openai_responses_request import REQUEST
from ctxmgr.formats._records import JsonlRecords, input_error
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import (
    AudioBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    MediaRef,
    ReasoningBlock,
    RemoteToolCallBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxmgr.state.message import Message, Role

__all__ = ["OpenAIResponsesFormat"]

NAME = "openai-responses"


# -- detection -----------------------------------------------------------------------


# -- reading -------------------------------------------------------------------------


class _Group:
    """One Message under construction: its records, blocks and calls."""

    def __init__(self, role: Role, index: int) -> None:
        self.role: Role = role
        self.index = index
        self.records: list[Any] = []
        self.blocks: list[ContentBlock] = []
        self.calls: list[dict[str, Any]] = []

    def add_opaque(self, item: Any) -> None:
        """A pass-through item: kept as a record, and as a passthrough block for conversions."""
        self.records.append(item)
        self.blocks.append(passthrough(item, NAME))

    def message(self) -> Message:
        message = Message(
            message_id=f"item-{self.index + 1:04d}",
            role=self.role,
            content=self.blocks,
            tools_calls=self.calls or None,
        )
        return message.with_source(self.records, NAME)


class _Reader:
    def __init__(self, items: list[Any], *, source: str, prefix: str) -> None:
        self.items = items
        self.source = source
        self.prefix = prefix
        self.jsonl = isinstance(items, JsonlRecords)
        self.groups: list[_Group] = []
        self.pending: list[Any] = []  # pass-through items waiting for the next group
        self.turn: _Group | None = None  # the open assistant turn
        self.summary: str | None = None
        self.leading = True  # still in the leading system/developer items
        self.warnings: list[str] = []

    def error(self, index: int, where: str, problem: str) -> InputError:
        # In JSONL the line number names the item; in a document, the JSON path does.
        path = (where or "item") if self.jsonl else f"{self.prefix}[{index}]" + (f".{where}" if where else "")
        return input_error(f"{path}: {problem}", source=self.source, records=self.items, index=index)

    def new_group(self, role: Role, index: int) -> _Group:
        group = _Group(role, index)
        self.groups.append(group)
        self.flush(group)
        return group

    def flush(self, group: _Group) -> None:
        """Attach the waiting pass-through items to ``group``."""
        for item in self.pending:
            group.add_opaque(item)
        self.pending = []

    def assistant_turn(self, index: int) -> _Group:
        if self.turn is None:
            self.turn = self.new_group("assistant", index)
        else:
            self.flush(self.turn)
        return self.turn

    def read(self) -> tuple[list[Message], str | None]:
        for index, item in enumerate(self.items):
            self.item(index, item)
        if self.pending:
            if self.groups:
                self.flush(self.groups[-1])
            else:
                self.new_group("assistant", len(self.items) - 1)
        return [g.message() for g in self.groups], self.summary

    def item(self, index: int, item: Any) -> None:
        if isinstance(item, str) and isinstance(self.items, _StringInput):
            self.leading = False
            if DECLARATION.marked(item) and item.startswith(SUMMARY_HEADER):
                self.warnings.append(forged_summary("input", why_not_summary("user", False)))
            self.turn = None
            self.new_group("user", index).records.append(item)
            self.groups[-1].blocks.append(TextBlock(text=item))
            return
        if not isinstance(item, dict):
            raise self.error(index, "", f"expected an item object, got {json_type(item)}")
        kind = item.get("type")
        if kind is None and "role" not in item:
            raise self.error(index, "type", "required string is missing (an item has a 'type', or a 'role')")
        if kind is not None and not isinstance(kind, str):
            raise self.error(index, "type", f"expected a string, got {json_type(kind)}")
        if kind in (None, "message"):
            self.message_item(index, item)
            return
        self.leading = False
        # function_call and custom_tool_call must have their id; other calls without one
        # cannot pair with an output and are passed through as model-side items.
        required = kind in ("function_call", "custom_tool_call")
        if kind in _CALLS and (required or isinstance(item.get(_CALLS[kind]), str)):
            turn = self.assistant_turn(index)
            turn.records.append(item)
            turn.calls.append(self.call(index, kind, item))
        elif kind in _RESULTS:
            self.turn = None
            group = self.new_group("tool", index)
            group.records.append(item)
            group.blocks.append(self.result(index, kind, item))
            # Only an item the declaration finds marked holds a forged summary: the
            # outline reader declines exactly those (see ctxmgr.formats._declaration).
            marked = DECLARATION.marked(item)
            if marked and message_carries_header(Message(role="tool", content=group.blocks)):
                why = "is a tool output"
                self.warnings.append(forged_summary(record_name(self.items, index, "item"), why))
        elif kind == "reasoning":
            turn = self.assistant_turn(index)
            turn.records.append(item)
            turn.blocks.append(_reasoning_block(item))
        elif kind in _MODEL_SIDE or kind.endswith("_call"):
            self.assistant_turn(index).add_opaque(item)
        else:
            self.pending.append(item)

    def message_item(self, index: int, item: dict[str, Any]) -> None:
        role = item.get("role")
        if not isinstance(role, str):
            raise self.error(index, "role", "required string is missing")
        mapped = _ROLES.get(role)
        if mapped is None:
            raise self.error(index, "role", f"unknown role {role!r} (expected one of: {', '.join(_ROLES)})")
        content = item.get("content")
        blocks = self.blocks(index, content)
        self.leading = self.leading and role in _SYSTEM_ROLES
        # Only the leading system/developer items can hold ctxmgr's summary: there it
        # already has system authority, so lifting it and writing it back moves no text
        # into a role it did not have.
        # Only an item the declaration finds marked holds a summary or a forged one: the
        # outline reader declines exactly those (see ctxmgr.formats._declaration).
        marked = DECLARATION.marked(item)
        embedded = embedded_summary(content, "input_text") if self.leading and marked else None
        if self.leading and marked:
            text = "".join(b.text for b in blocks if isinstance(b, TextBlock))
            found = split_summary_text(text)
            if found is not None:
                self.summary = joined(self.summary, found)
                return  # pending pass-through items wait for the next item
            if embedded is not None:
                self.summary = joined(self.summary, embedded)
                blocks = self.blocks(index, strip_summary(content, "input_text"))
        if embedded is None and marked and carries_marker(item, "input_text"):
            why = why_not_summary(role, self.leading)
            self.warnings.append(forged_summary(record_name(self.items, index, "item"), why))
        if mapped == "assistant":
            group = self.assistant_turn(index)
        else:
            self.turn = None
            group = self.new_group(mapped, index)
        group.records.append(item)
        group.blocks.extend(blocks)

    def blocks(self, index: int, content: Any) -> list[ContentBlock]:
        if isinstance(content, str):
            return [TextBlock(text=content)]
        if not isinstance(content, list):
            raise self.error(index, "content", f"expected a string or a list of parts, got {json_type(content)}")
        blocks: list[ContentBlock] = []
        for k, part in enumerate(content):
            where = f"content[{k}]"
            if not isinstance(part, dict):
                raise self.error(index, where, f"expected an object, got {json_type(part)}")
            kind = part.get("type")
            if not isinstance(kind, str):
                raise self.error(index, f"{where}.type", "required string is missing")
            if kind in ("input_text", "output_text", "refusal", "text"):
                key = "refusal" if kind == "refusal" else "text"
                text = part.get(key)
                if not isinstance(text, str):
                    raise self.error(index, f"{where}.{key}", f"expected a string, got {json_type(text)}")
                annotations = part.get("annotations")
                cited = annotations if isinstance(annotations, list) else []
                blocks.append(TextBlock(text=text, annotations=cited))
            elif kind == "input_image":
                blocks.append(ImageBlock(media=_media(part, "image_url")))
            elif kind == "input_file":
                blocks.append(DocumentBlock(media=_media(part, "file_url")))
            elif kind == "input_audio":
                audio = part.get("input_audio")
                if isinstance(audio, dict) and isinstance(audio.get("data"), str):
                    fmt = audio.get("format")
                    mime = f"audio/{fmt}" if isinstance(fmt, str) else None
                    blocks.append(AudioBlock(media=MediaRef(kind="data", data_base64=audio["data"], mime_type=mime)))
                else:
                    blocks.append(passthrough(part, NAME, part=True))
            else:
                # A part type this reader does not know: kept whole, so the transcript
                # shows its text and a trip through native writes it back.
                blocks.append(passthrough(part, NAME, part=True))
        return blocks

    def call(self, index: int, kind: str, item: dict[str, Any]) -> dict[str, Any]:
        id_key = _CALLS[kind]
        call_id = item.get(id_key)
        if not isinstance(call_id, str):
            raise self.error(index, id_key, "required string is missing")
        name = item.get("name")
        if kind in ("function_call", "custom_tool_call") and not isinstance(name, str):
            raise self.error(index, "name", "required string is missing")
        if not isinstance(name, str):
            name = kind.removesuffix("_call")
        arguments = arguments_json(call_arguments(kind, item))
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    def result(self, index: int, kind: str, item: dict[str, Any]) -> ToolResultBlock:
        id_key = _RESULTS[kind]
        call_id = item.get(id_key, "")
        if not isinstance(call_id, str):
            raise self.error(index, id_key, f"expected a string, got {json_type(call_id)}")
        if kind == "mcp_approval_response":
            output: Any = {k: item[k] for k in ("approve", "reason") if k in item}
        elif kind == "tool_search_output":
            output = item.get("tools")  # the tools found: this item's whole answer
        else:
            output = item.get("output")
        if isinstance(output, list):
            texts = [p.get("text") for p in output if isinstance(p, dict) and isinstance(p.get("text"), str)]
            if len(texts) == len(output):
                # Separate parts stay separate: joined with nothing, codes would run together.
                output = "\n".join(str(t) for t in texts)
        return ToolResultBlock(call_id=call_id, output=output)


class _StringInput(list[Any]):
    """``input`` given as a plain string: one user message."""


def _reasoning_block(item: dict[str, Any]) -> ReasoningBlock:
    # The summary parts, then the reasoning text itself where the model returns it
    # (``content``: ``reasoning_text`` parts): both are text the summarizer can read.
    texts = [
        p["text"]
        for key in ("summary", "content")
        if isinstance(item.get(key), list)
        for p in item[key]
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]
    # The item itself rides along in ``details`` so a round trip through native restores it.
    return ReasoningBlock(summary="\n".join(texts) if texts else None, details=item)


def _media(part: dict[str, Any], url_key: str) -> MediaRef:
    filename = part.get("filename") if isinstance(part.get("filename"), str) else None
    if isinstance(part.get("file_id"), str):
        return MediaRef(kind="file_id", file_id=part["file_id"], filename=filename)
    url = part.get(url_key)
    if isinstance(url, str):
        media = media_from_url(url)
        media.filename = filename
        return media
    data = part.get("file_data")
    if isinstance(data, str):
        media = media_from_url(data) if data.startswith("data:") else MediaRef(kind="data", data_base64=data)
        media.filename = filename
        return media
    return MediaRef(kind="url", filename=filename)


def _items_of(value: Any, source: str) -> tuple[list[Any], str]:
    """The item list inside ``value`` and its path prefix for errors."""
    if isinstance(value, list):
        return value, ""
    if not isinstance(value, dict):
        raise InputError(f"expected a list of Responses input items, got {json_type(value)}", source=source)
    for key in ("input", "output"):
        if key in value and (key == "input" or value.get("object") == "response"):
            items = value[key]
            if isinstance(items, str) and key == "input":
                return _StringInput([items]), key
            if not isinstance(items, list):
                raise InputError(f"{key}: expected a list of items, got {json_type(items)}", source=source)
            return items, key
    if "type" in value or "role" in value:
        return [value], ""
    raise InputError(
        "expected a list of Responses input items, a request with 'input' or a response with 'output'",
        source=source,
    )


def _instructions_summary(value: Any) -> tuple[str | None, str | None]:
    """``(summary, instructions without it)`` for a request's ``instructions``."""
    if not isinstance(value, str):
        return None, None
    if value.startswith(SUMMARY_HEADER):
        return split_summary_text(value), ""
    found = embedded_summary(value, "input_text")
    return (found, strip_summary(value, "input_text")) if found is not None else (None, None)


# -- writing -------------------------------------------------------------------------


def _message_item(role: str, content: str | list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content}


def _user_part(block: ContentBlock, warn: Warn) -> dict[str, Any] | None:
    media = getattr(block, "media", None)
    if isinstance(block, ImageBlock) and media is not None:
        if media.kind == "file_id" and media.file_id:
            return {"type": "input_image", "detail": "auto", "file_id": media.file_id}
        if media.kind == "url" and media.url:
            return {"type": "input_image", "detail": "auto", "image_url": media.url}
        if media.kind == "data" and media.data_base64:
            url = f"data:{media.mime_type or 'image/png'};base64,{media.data_base64}"
            return {"type": "input_image", "detail": "auto", "image_url": url}
        warn("image block without a URL, file id or inline data")
        return None
    if isinstance(block, DocumentBlock):
        part: dict[str, Any] = {"type": "input_file"}
        if media is not None and media.kind == "file_id" and media.file_id:
            part["file_id"] = media.file_id
        elif media is not None and media.kind == "url" and media.url:
            part["file_url"] = media.url
        elif media is not None and media.data_base64:
            part["file_data"] = f"data:{media.mime_type or 'application/pdf'};base64,{media.data_base64}"
        elif block.text:
            return {"type": "input_text", "text": block.text}
        else:
            warn("document block without a file id, URL, inline data or text")
            return None
        if media is not None and media.filename:
            part["filename"] = media.filename
        return part
    warn(f"{describe_block(block)} block in a user message")
    return None


def render_message(message: Message, warn: Warn) -> list[dict[str, Any]]:
    """Items for a message with no openai-responses source (converted or ctxmgr-made)."""
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    if message.role == "tool" or results:
        return _tool_message_items(message, results, warn)
    if message.reasoning:
        warn("reasoning text (a Responses reasoning item needs its original id)")
    texts: list[str] = []
    parts: list[dict[str, Any]] = []
    before: list[dict[str, Any]] = []  # items of this format back from a round trip
    cited = False  # a text with this format's citations needs output_text parts
    for block in message.content:
        own = _own_item(block)
        part = passthrough_value(block, NAME, part=True)
        if isinstance(block, TextBlock):
            texts.append(block.text)
            parts.append(_text_part(block, message.role, warn))
            cited = cited or "annotations" in parts[-1]
        elif own is not None:
            before.append(own)
        elif isinstance(part, dict):
            parts.append(part)  # a content part of this format, back from a round trip
        elif isinstance(block, ToolCallBlock | RemoteToolCallBlock):
            if server_call(block):
                warn(SERVER_CALL)
            continue  # rendered as function_call items below
        else:
            part = _other_part(block, message.role, warn)
            if part is not None:
                parts.append(part)
    # Text only: a plain string, which every role accepts; media and citations need parts.
    content: str | list[dict[str, Any]] = "".join(texts) if len(parts) == len(texts) and not cited else parts
    if message.role != "assistant":
        return [*before, _message_item(message.role, content)]
    calls = [
        {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}
        for call_id, name, arguments in model_calls(message)
    ]
    # No empty message item beside calls or restored items; an otherwise empty turn keeps one.
    text_item = [_message_item("assistant", content)] if texts or not (before or calls) else []
    return [*before, *text_item, *calls]


def _other_part(block: Any, role: str, warn: Warn) -> dict[str, Any] | None:
    """A part for a block that is not text, a call or this format's own: media for a user
    message; anything else has no place in a Responses message and is named."""
    if isinstance(block, ReasoningBlock):
        warn("reasoning block (a Responses reasoning item needs its original id)")
        return None
    if role == "user":
        return _user_part(block, warn)
    warn(f"{describe_block(block)} block {in_message(role)}")
    return None


def _tool_message_items(message: Message, results: list[ToolResultBlock], warn: Warn) -> list[dict[str, Any]]:
    """Items for a message holding tool results: its own items, a function_call_output per
    result, then its text as a user message (Responses has no tool message to hold it)."""
    items: list[dict[str, Any]] = [own for b in message.content if isinstance(own := _own_item(b), dict)]
    for result in results:
        if result.is_error or result.status == "failed":
            warn("error flag of a tool result")
        output = output_text(result.output)
        items.append({"type": "function_call_output", "call_id": result.call_id, "output": output})
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    if text:
        items.append(_message_item("user", text))
    for other in message.content:
        if not isinstance(other, TextBlock | ToolResultBlock) and _own_item(other) is None:
            warn(f"{describe_block(other)} block in a tool message")
    return items


_CITATIONS = frozenset({"url_citation", "file_citation", "container_file_citation", "file_path"})
"""Annotation types of Responses ``output_text`` parts."""


def _text_part(block: TextBlock, role: str, warn: Warn) -> dict[str, Any]:
    """A text part for ``role``: ``output_text`` (with this format's citations) for the
    assistant, whose messages take no ``input_text``; ``input_text`` otherwise."""
    own = [a for a in block.annotations if isinstance(a, dict) and a.get("type") in _CITATIONS]
    kept = own if role == "assistant" else []
    for _ in range(len(block.annotations) - len(kept)):
        warn("citation of a kind the Responses API has not")
    if role != "assistant":
        return {"type": "input_text", "text": block.text}
    part: dict[str, Any] = {"type": "output_text", "text": block.text}
    if kept:
        part["annotations"] = kept
    return part


def _own_item(block: Any) -> dict[str, Any] | None:
    """The item of this format a block carries (a passthrough, or a reasoning item)."""
    own = passthrough_value(block, NAME)
    if isinstance(own, dict):
        return own
    details = block.details if isinstance(block, ReasoningBlock) else None
    if isinstance(details, dict) and details.get("type") == "reasoning" and isinstance(details.get("id"), str):
        summary = details.get("summary")
        if isinstance(summary, list) and any(isinstance(p, dict) and "index" in p for p in summary):
            # LangChain numbers the summary parts (its streaming bookkeeping; the API
            # takes no such key): the item as the API gave it.
            parts = [{k: v for k, v in p.items() if k != "index"} if isinstance(p, dict) else p for p in summary]
            return {**details, "summary": parts}
        return details
    return None


def _summary_item(summary: str) -> dict[str, Any]:
    return _message_item("developer", [{"type": "input_text", "text": summary_text(summary)}])


def _is_system_item(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and record.get("type", "message") == "message"
        and str_in(record.get("role"), _SYSTEM_ROLES)
    )


def _leading_system(records: list[Any]) -> int:
    count = 0
    while count < len(records) and _is_system_item(records[count]):
        count += 1
    return count


def _original_summary_item(container: Any, summary: str) -> Any:
    """The summary item as read, if it holds exactly ``summary`` (to write it back as is)."""
    try:
        items, _ = _items_of(container, "<container>")
    except InputError:
        return None
    for item in items[: _leading_system(items)]:
        if _is_system_item(item):
            content = item.get("content")
            text = (
                content
                if isinstance(content, str)
                else "".join(
                    p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
                )
                if isinstance(content, list)
                else ""
            )
            if split_summary_text(text) == summary:
                return item
    return None


# -- the adapter ---------------------------------------------------------------------


class OpenAIResponsesFormat:
    """Reads and writes OpenAI Responses API input items."""

    name = NAME
    user_turn_summary = False
    list_key = "input"
    request = REQUEST

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """The keys of a request (or stored response) beside its items and ``instructions``."""
        if not isinstance(container, dict):
            return {}
        stored = container.get("object") == "response" and "output" in container and "input" not in container
        if "input" not in container and not stored:
            return {}
        items = "output" if stored else "input"
        # A string 'instructions' is read as the system message (or the summary); any
        # other value is kept.
        instructions = container.get("instructions")
        read = (items, "instructions") if isinstance(instructions, str) and instructions else (items,)
        return {k: v for k, v in container.items() if k not in read}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: self._read(value, source, layout), source, "OpenAI Responses")

    def _read(self, value: Any, source: str, layout: Layout) -> Conversation:
        items, prefix = _items_of(value, source)
        reader = _Reader(items, source=source, prefix=prefix)
        system: list[Message] = []
        if isinstance(value, dict):
            instructions = value.get("instructions")
            lift = DECLARATION.container_marked(value)
            reader.summary, stripped = _instructions_summary(instructions) if lift else (None, None)
            text = stripped if stripped is not None else instructions
            if isinstance(text, str) and text:
                # The system prompt as a message, so conversions and the token estimate
                # see it; writing back to this format leaves 'instructions' where it is.
                message = Message(message_id="instructions", role="system", content=[TextBlock(text=text)])
                system.append(message.with_source([SystemSlot(instructions, ("instructions",))], self.name))
        messages, summary = reader.read()
        messages = system + messages
        state = AgentState(context=messages, context_summary=summary)
        return Conversation(state=state, format=self.name, container=value, layout=layout, warnings=reader.warnings)

    def write(self, conversation: Conversation) -> Any:
        check_placement(conversation, self.name)
        warn = conversation.dropped.add
        request, key = self._request(conversation)
        records: list[Any] = []
        for message in conversation.state.context:
            source = message.source_in(self.name)
            if source is not None and isinstance(source[0], SystemSlot):
                if conversation.format == self.name:
                    continue  # 'instructions' stays in the (copied) request
                if request is not None and "instructions" not in request:
                    # Read from 'instructions' (the file went through native): back there.
                    request["instructions"] = source[0].value
                    continue
                source = None
            if source is not None:
                records.extend(source)
            else:
                records.extend(carry_keys(message.edited_source_in(self.name), render_message(message, warn)))
        records, request = self._place_summary(records, request, conversation)
        return self._wrap(records, request, key, conversation)

    def _request(self, conversation: Conversation) -> tuple[dict[str, Any] | None, str]:
        """The object the items go in (a copy), and under which key; None for a list."""
        container = conversation.container
        if conversation.format == self.name:
            if isinstance(container, dict) and "input" in container:
                return dict(container), "input"
            if isinstance(container, dict) and container.get("object") == "response" and "output" in container:
                return dict(container), "output"
            return None, ""
        if conversation.layout == "jsonl" or not isinstance(container, dict) or conversation.one_record:
            return None, ""
        if conversation.origin == self.name and container.get("object") == "response":
            return {"output": []}, "output"  # a stored response, back from native as it was
        # The container's other keys are converted by formats.dump (see _request).
        return {"input": []}, "input"

    def _place_summary(
        self, records: list[Any], request: dict[str, Any] | None, conversation: Conversation
    ) -> tuple[list[Any], dict[str, Any] | None]:
        summary = conversation.state.context_summary
        in_instructions, stripped = _instructions_summary(request.get("instructions") if request else None)
        lead = _leading_system(records)
        in_first = embedded_summary(records[0].get("content"), "input_text") if lead else None
        found = in_instructions if in_instructions is not None else in_first
        placement = conversation.summary_as or ("system" if found is not None else "message")
        unchanged = conversation.format == self.name and summary == conversation.original_summary
        if placement == "system" and unchanged and summary and found == summary:
            return records, request  # the summary is already where it belongs, as it was read
        if request is not None and stripped is not None:
            request = {k: v for k, v in request.items() if k != "instructions" or stripped}
            if stripped:
                request["instructions"] = stripped
        for i in range(lead):
            content = records[i].get("content")
            if embedded_summary(content, "input_text") is not None:
                records[i] = {**records[i], "content": strip_summary(content, "input_text")}
        if not summary:
            return records, request
        if placement == "system" and request is not None:
            request = {**request, "instructions": embed_summary(request.get("instructions"), summary, "input_text")}
        elif placement == "system" and lead:
            records[0] = {**records[0], "content": embed_summary(records[0].get("content"), summary, "input_text")}
        else:
            original = _original_summary_item(conversation.container, summary) if unchanged else None
            records.insert(lead, original if original is not None else _summary_item(summary))
        return records, request

    def _wrap(self, records: list[Any], request: dict[str, Any] | None, key: str, conversation: Conversation) -> Any:
        if request is None:
            if conversation.one_record and len(records) == 1:
                return records[0]  # a file holding one item stays one item
            return records
        if isinstance(request.get(key), str):
            if records == [request[key]]:
                return request  # a one-string input, unchanged
            records = [_message_item("user", r) if isinstance(r, str) else r for r in records]
        return {**request, key: records}
