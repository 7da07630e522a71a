"""OpenAI Chat Completions messages: ``openai-chat``.

Accepted shapes: a bare list of messages, JSONL with one message per line, one message
object, or a request / fine-tuning record ``{"messages": [...], "tools": [...], ...}``
whose other keys are written back untouched (converted, its tools, ``tool_choice``, cap,
sampling settings and stop sequences take the target's spelling, see
:mod:`ctxmgr.formats._openai_chat_request`).

How records map onto the model (each Message keeps its record as its source, so a kept
message is written back byte for byte):

* roles ``system`` and ``developer`` become ``system``; ``function`` (legacy) becomes
  ``tool``;
* content as a string is one ``TextBlock``; a list of parts maps ``text`` and ``refusal``
  parts to ``TextBlock`` (so the token estimate sees them), ``image_url`` to
  ``ImageBlock``, ``input_audio`` to ``AudioBlock``, ``file`` to ``DocumentBlock``, any
  other part to a passthrough ``data`` block (so a conversion says it cannot carry it);
  an assistant's ``refusal`` field is text too, its ``audio`` reference an ``AudioBlock``
  by id, and the ``reasoning_content`` (or ``reasoning``) that compatible servers add
  its ``reasoning``;
* ``tool_calls`` become ``tools_calls`` (custom tools get the function shape, their
  input as ``arguments``); a ``tool`` message is a ``ToolResultBlock`` for its
  ``tool_call_id`` whose output is its text; its other parts (an image, a file) follow as
  blocks tagged as inside that result (``IN_RESULT``), written back inside it;
* legacy ``function_call`` has no id: the call gets ``call_fn_<index>`` (its message
  index) and the next ``function`` message with that name answers it, so they pair.

The summary goes, by default, in a system message named ``ctxmgr_summary`` right after
the leading system/developer messages; ``--summary-as system`` appends it to the first
system message instead. Reading finds either form and lifts it into ``context_summary``,
but only in the leading system/developer messages: the name and the header are text any
file can hold, so elsewhere (a user, assistant or tool message, a system message after
the first turn) they mark nothing; the message is read as it is and a warning names it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxmgr import _nesting
from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import (
    SUMMARY_HEADER,
    Conversation,
    Layout,
    arguments_json,
    forged_summary,
    note_ambiguity,
    record_name,
    split_summary_text,
)
from ctxmgr.formats._carry import carry_keys
from ctxmgr.formats._detection.openai_chat import (
    DECLARATION,
    ROLES as _ROLES,
    SUMMARY_NAME,
    SYSTEM_ROLES as _SYSTEM_ROLES,
    score as detection_score,
    str_in,
)
from ctxmgr.formats._interop import (
    SERVER_CALL,
    describe_block,
    in_message,
    in_result,
    message_carries_header,
    passthrough,
    passthrough_value,
    read_guarded,
    result_of,
    server_call,
)
from ctxmgr.formats._openai_chat_request import REQUEST
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
from ctxmgr.state.message import Message

__all__ = ["SUMMARY_NAME", "OpenAIChatFormat"]

NAME = "openai-chat"

_REASONING_KEYS = ("reasoning_content", "reasoning")
"""Assistant fields where OpenAI-compatible servers (DeepSeek, vLLM, OpenRouter) put the
model's visible reasoning; the OpenAI API has none, so they are read, never written."""

_UNCARRIED_MEDIA = {
    "image": "image block without a URL or inline data",
    "audio": "audio block other than inline wav/mp3 data",
    "document": "document block without a file id, inline data or text",
}

Warn = Callable[[str], None]
"""Counts one thing a conversion could not carry, by kind (``Losses.add``)."""


# -- summary text helpers, shared with openai_responses ------------------------------


def summary_text(summary: str) -> str:
    """The text that stores ``summary``: the header line, then the summary."""
    return f"{SUMMARY_HEADER}\n{summary}"


def joined(first: str | None, second: str) -> str:
    """Two summaries joined the way the managers join them."""
    return f"{first}\n\n{second}" if first else second


def embedded_summary(content: Any, part_type: str) -> str | None:
    """A summary appended to system ``content`` (a string or a list of parts), if any.

    Appended means after other text: ``"<prompt>\\n\\n<header>..."``, or a text part
    starting with the header that is not the first part.
    """
    if isinstance(content, str):
        at = content.find(f"\n\n{SUMMARY_HEADER}")
        return split_summary_text(content[at + 2 :]) if at > 0 else None
    if isinstance(content, list):
        for part in content[1:]:
            text = part.get("text") if isinstance(part, dict) and part.get("type") == part_type else None
            if isinstance(text, str) and text.startswith(SUMMARY_HEADER):
                return split_summary_text(text)
    return None


def strip_summary(content: Any, part_type: str) -> Any:
    """``content`` without the summary :func:`embedded_summary` finds (a new value)."""
    if isinstance(content, str):
        at = content.find(f"\n\n{SUMMARY_HEADER}")
        return content[:at] if at > 0 else content
    if isinstance(content, list):
        return [content[0]] + [
            p
            for p in content[1:]
            if not (
                isinstance(p, dict)
                and p.get("type") == part_type
                and isinstance(p.get("text"), str)
                and p["text"].startswith(SUMMARY_HEADER)
            )
        ]
    return content


def embed_summary(content: Any, summary: str, part_type: str) -> Any:
    """``content`` with ``summary`` appended (a new value)."""
    if isinstance(content, str) and content:
        return f"{content}\n\n{summary_text(summary)}"
    if isinstance(content, list) and content:
        return [*content, {"type": part_type, "text": summary_text(summary)}]
    return summary_text(summary)


def check_placement(conversation: Conversation, fmt: str) -> None:
    """Reject ``--summary-as field``: only containers with a summary field have it."""
    if conversation.summary_as == "field" and conversation.state.context_summary:
        raise UsageError(
            f"--summary-as field: {fmt} has no summary field; use 'message' (a marked "
            "message after the system prompt) or 'system' (appended to the system prompt)"
        )


def output_text(output: Any) -> str:
    """A tool result's output as a string (JSON for structured outputs)."""
    return output if isinstance(output, str) else _nesting.dumps(output, ensure_ascii=False)


def model_calls(message: Message) -> list[tuple[str, str, str]]:
    """``(id, name, arguments JSON)`` of every tool call ``message`` makes."""
    calls: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for call in message.tools_calls or ():
        if not isinstance(call, dict):
            continue
        function = call.get("function")
        function = function if isinstance(function, dict) else {}
        call_id = str(call.get("id") or "")
        calls.append((call_id, str(function.get("name") or ""), arguments_json(function.get("arguments", "{}"))))
        seen.add(call_id)
    for block in message.content:
        if isinstance(block, ToolCallBlock | RemoteToolCallBlock) and block.id not in seen and not server_call(block):
            calls.append((block.id, block.name, arguments_json(block.args)))
    return calls


# -- reading -------------------------------------------------------------------------


class _Reader:
    """Reads one list of chat records; knows how to name a record's path in errors."""

    def __init__(self, records: list[Any], *, source: str, prefix: str) -> None:
        self.records = records
        self.source = source
        self.prefix = prefix
        self.jsonl = isinstance(records, JsonlRecords)
        # Legacy function calls waiting for their result, by function name (FIFO).
        self.pending_functions: dict[str, list[str]] = {}

    def error(self, index: int, where: str, problem: str) -> InputError:
        # In JSONL the line number names the record; in a document, the JSON path does.
        path = (where or "message") if self.jsonl else f"{self.prefix}[{index}]" + (f".{where}" if where else "")
        return input_error(f"{path}: {problem}", source=self.source, records=self.records, index=index)

    def text_of(self, index: int, content: Any, where: str = "content", sep: str = "") -> str:
        """Plain text of string or parts content (``""`` for null), parts joined by ``sep``."""
        return sep.join(b.text for b in self.blocks(index, content, where) if isinstance(b, TextBlock))

    def blocks(self, index: int, content: Any, where: str = "content") -> list[ContentBlock]:
        if content is None:
            return []
        if isinstance(content, str):
            return [TextBlock(text=content)]
        if not isinstance(content, list):
            raise self.error(index, where, f"expected a string, null or a list of parts, got {json_type(content)}")
        blocks: list[ContentBlock] = []
        for k, part in enumerate(content):
            if not isinstance(part, dict):
                raise self.error(index, f"{where}[{k}]", f"expected an object, got {json_type(part)}")
            kind = part.get("type")
            if not isinstance(kind, str):
                raise self.error(index, f"{where}[{k}].type", "required string is missing")
            block = self.part_block(index, f"{where}[{k}]", kind, part)
            if block is not None:
                blocks.append(block)
        return blocks

    def part_block(self, index: int, where: str, kind: str, part: dict[str, Any]) -> ContentBlock | None:
        if kind in ("text", "refusal"):
            text = part.get(kind)
            if not isinstance(text, str):
                raise self.error(index, f"{where}.{kind}", f"expected a string, got {json_type(text)}")
            return TextBlock(text=text)
        if kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else image
            if not isinstance(url, str):
                raise self.error(index, f"{where}.image_url.url", "required string is missing")
            return ImageBlock(media=media_from_url(url))
        if kind == "input_audio":
            audio = part.get("input_audio")
            data = audio.get("data") if isinstance(audio, dict) else None
            if not isinstance(data, str):
                raise self.error(index, f"{where}.input_audio.data", "required string is missing")
            fmt = audio.get("format") if isinstance(audio, dict) else None
            mime = f"audio/{fmt}" if isinstance(fmt, str) else None
            return AudioBlock(media=MediaRef(kind="data", data_base64=data, mime_type=mime))
        if kind == "file":
            file = part.get("file")
            if not isinstance(file, dict):
                raise self.error(index, f"{where}.file", f"expected an object, got {json_type(file)}")
            return DocumentBlock(media=_media_from_file(file))
        # Another part type: written back from the source record; a passthrough block
        # lets a conversion restore it (via native) or say that it cannot carry it.
        return passthrough(part, NAME)

    def message(self, index: int, record: Any) -> Message:
        if not isinstance(record, dict):
            raise self.error(index, "", f"expected a message object, got {json_type(record)}")
        role = record.get("role")
        if not isinstance(role, str):
            raise self.error(index, "role", "required string is missing")
        mapped = _ROLES.get(role)
        if mapped is None:
            raise self.error(index, "role", f"unknown role {role!r} (expected one of: {', '.join(_ROLES)})")
        if role == "tool":
            return self.tool_result(index, record)
        if role == "function":
            return self.function_result(index, record)
        blocks = self.blocks(index, record.get("content"))
        message = Message(message_id=_message_id(index), role=mapped, content=blocks)
        if role == "assistant":
            refusal = record.get("refusal")
            if isinstance(refusal, str) and refusal and not any(isinstance(b, TextBlock) for b in blocks):
                message.content.append(TextBlock(text=refusal))
            audio = record.get("audio")
            if isinstance(audio, dict) and isinstance(audio.get("id"), str):
                # Audio the model spoke, held by OpenAI under this id: described by it.
                message.content.append(AudioBlock(media=MediaRef(kind="file_id", file_id=audio["id"])))
            for key in _REASONING_KEYS:
                if isinstance(record.get(key), str) and record[key]:
                    message.reasoning = record[key]
                    break
            calls = self.tool_calls(index, record)
            if calls:
                message.tools_calls = calls
        return message

    def tool_calls(self, index: int, record: dict[str, Any]) -> list[dict[str, Any]]:
        calls: list[dict[str, Any]] = []
        raw = record.get("tool_calls")
        if raw is not None and not isinstance(raw, list):
            raise self.error(index, "tool_calls", f"expected a list, got {json_type(raw)}")
        for k, call in enumerate(raw or ()):
            where = f"tool_calls[{k}]"
            if not isinstance(call, dict):
                raise self.error(index, where, f"expected an object, got {json_type(call)}")
            call_id = call.get("id")
            if not isinstance(call_id, str):
                raise self.error(index, f"{where}.id", "required string is missing")
            kind = call.get("type", "function")
            body_key = "custom" if kind == "custom" else "function"
            body = call.get(body_key)
            if not isinstance(body, dict):
                raise self.error(index, f"{where}.{body_key}", f"expected an object, got {json_type(body)}")
            name = body.get("name")
            if not isinstance(name, str):
                raise self.error(index, f"{where}.{body_key}.name", "required string is missing")
            arguments = body.get("input" if kind == "custom" else "arguments", "")
            calls.append(_openai_call(call_id, name, arguments_json(arguments)))
        legacy = record.get("function_call")
        if legacy is not None:
            if not isinstance(legacy, dict) or not isinstance(legacy.get("name"), str):
                raise self.error(index, "function_call.name", "required string is missing")
            call_id = f"call_fn_{index}"
            self.pending_functions.setdefault(legacy["name"], []).append(call_id)
            calls.append(_openai_call(call_id, legacy["name"], arguments_json(legacy.get("arguments", ""))))
        return calls

    def tool_result(self, index: int, record: dict[str, Any]) -> Message:
        call_id = record.get("tool_call_id")
        if not isinstance(call_id, str):
            raise self.error(index, "tool_call_id", "required string is missing")
        content = record.get("content")
        if isinstance(content, str):
            return Message(
                message_id=_message_id(index), role="tool", content=[ToolResultBlock(call_id=call_id, output=content)]
            )
        blocks = self.blocks(index, content)
        # The output is the text; an image or file part sits beside the result, tagged
        # as inside it: described in the transcript, kept out of the token estimate.
        output = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
        inside = [in_result(b, call_id, NAME) for b in blocks if not isinstance(b, TextBlock)]
        return Message(
            message_id=_message_id(index),
            role="tool",
            content=[ToolResultBlock(call_id=call_id, output=output), *inside],
        )

    def function_result(self, index: int, record: dict[str, Any]) -> Message:
        name = record.get("name")
        if not isinstance(name, str):
            raise self.error(index, "name", "required string is missing (a function message names its function)")
        waiting = self.pending_functions.get(name)
        call_id = waiting.pop(0) if waiting else f"call_fn_result_{index}"
        content = record.get("content")
        output = content if isinstance(content, str) else self.text_of(index, content, sep="\n")
        return Message(
            message_id=_message_id(index), role="tool", content=[ToolResultBlock(call_id=call_id, output=output)]
        )

    def summary_message(self, index: int, record: Any) -> str | None:
        """The summary if ``record`` is a summary message as ctxmgr writes it, else None.

        Only a system/developer record can be one, and the caller asks only of the
        leading ones: ctxmgr writes its summary there, where it already has system
        authority, so reading it back never changes any text's role.
        """
        if not isinstance(record, dict) or not str_in(record.get("role"), _SYSTEM_ROLES):
            return None
        content = record.get("content")
        if not isinstance(content, str | list):
            return None
        text = self.text_of(index, content)
        summary = split_summary_text(text)
        if summary is None and record.get("name") == SUMMARY_NAME:
            summary = text
        return summary


def carries_marker(record: Any, part_type: str = "text") -> bool:
    """Whether ``record`` looks like a summary ctxmgr wrote: named ``ctxmgr_summary``, its
    text starting with the header, or (a system record) the header appended to it."""
    if not isinstance(record, dict):
        return False
    content = record.get("content")
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict)]
        text = "".join(t for t in texts if isinstance(t, str))
    else:
        text = content if isinstance(content, str) else ""
    return (
        record.get("name") == SUMMARY_NAME
        or text.startswith(SUMMARY_HEADER)
        or (str_in(record.get("role"), _SYSTEM_ROLES) and embedded_summary(content, part_type) is not None)
    )


def why_not_summary(role: Any, leading_system: bool) -> str:
    """Why a marked record is no summary: its role, or a system record out of place."""
    if leading_system:
        return "is not a summary message as ctxmgr writes it"
    if str_in(role, _SYSTEM_ROLES):
        return f"is a {role} message after the conversation began"
    return f"is {'an' if role == 'assistant' else 'a'} {role} message" if isinstance(role, str) else "is no message"


def _message_id(index: int) -> str:
    return f"msg-{index + 1:04d}"


def _openai_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def json_type(value: Any) -> str:
    """How an error message names the JSON type of ``value`` ("an object", "null"...)."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number" if isinstance(value, int | float) else type(value).__name__)


def media_from_url(url: str) -> MediaRef:
    """A MediaRef for an image URL; ``data:<mime>;base64,`` URLs become inline data."""
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return MediaRef(kind="data", data_base64=data, mime_type=head or None)
    return MediaRef(kind="url", url=url)


def _media_from_file(file: dict[str, Any]) -> MediaRef:
    filename = file.get("filename") if isinstance(file.get("filename"), str) else None
    if isinstance(file.get("file_id"), str):
        return MediaRef(kind="file_id", file_id=file["file_id"], filename=filename)
    data = file.get("file_data")
    if isinstance(data, str) and data.startswith("data:") and ";base64," in data:
        media = media_from_url(data)
        media.filename = filename
        return media
    return MediaRef(kind="data", data_base64=data if isinstance(data, str) else None, filename=filename)


def _messages_of(value: Any, source: str) -> tuple[list[Any], str]:
    """The message list inside ``value`` and its path prefix for errors."""
    if isinstance(value, list):
        return value, ""
    if isinstance(value, dict):
        if "messages" in value:
            messages = value["messages"]
            if not isinstance(messages, list):
                raise InputError(f"messages: expected a list, got {json_type(messages)}", source=source)
            return messages, "messages"
        if "role" in value:
            return [value], ""
        raise InputError("expected a list of chat messages or an object with a 'messages' list", source=source)
    raise InputError(f"expected a list of chat messages, got {json_type(value)}", source=source)


# -- writing -------------------------------------------------------------------------


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if len(parts) == 1 and parts[0].get("type") == "text" and isinstance(parts[0].get("text"), str):
        return str(parts[0]["text"])
    if not parts:
        return ""
    return parts


def _user_part(block: ContentBlock, warn: Warn) -> dict[str, Any] | None:
    media = getattr(block, "media", None)
    if isinstance(block, ImageBlock) and media is not None:
        if media.kind == "url" and media.url:
            return {"type": "image_url", "image_url": {"url": media.url}}
        if media.kind == "data" and media.data_base64:
            mime = media.mime_type or "image/png"
            return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{media.data_base64}"}}
    if isinstance(block, AudioBlock) and media is not None and media.data_base64:
        fmt = (media.mime_type or "").removeprefix("audio/").replace("mpeg", "mp3")
        if fmt in ("wav", "mp3"):
            return {"type": "input_audio", "input_audio": {"data": media.data_base64, "format": fmt}}
    if isinstance(block, DocumentBlock):
        if media is not None and media.kind == "file_id" and media.file_id:
            named = {"filename": media.filename} if media.filename else {}
            return {"type": "file", "file": {"file_id": media.file_id, **named}}
        if media is not None and media.data_base64:
            mime = media.mime_type or "application/pdf"
            file: dict[str, Any] = {"file_data": f"data:{mime};base64,{media.data_base64}"}
            if media.filename:
                file["filename"] = media.filename
            return {"type": "file", "file": file}
        if block.text:
            return {"type": "text", "text": block.text}
    warn(_UNCARRIED_MEDIA.get(block.type, f"{describe_block(block)} block"))
    return None


def render_message(message: Message, warn: Warn) -> list[dict[str, Any]]:
    """Chat records for a message with no openai-chat source (converted or ctxmgr-made)."""
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    if message.role == "tool" or results:
        return _render_results(message, results, warn)
    if message.reasoning:
        warn("reasoning text")
    parts, audio = _parts_and_audio(message, warn)
    if message.role == "system":
        return [{"role": "system", "content": _content(parts)}]
    if message.role == "user":
        return [{"role": "user", "content": _content(parts)}]
    record: dict[str, Any] = {"role": "assistant"}
    calls = model_calls(message)
    record["content"] = _content(parts) if parts or not (calls or audio) else None
    if audio is not None:
        record["audio"] = audio
    if calls:
        record["tool_calls"] = [_openai_call(*call) for call in calls]
    return [record]


def _parts_and_audio(message: Message, warn: Warn) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The content parts of a message without tool results, and the id of an earlier spoken
    answer (an assistant's audio goes in its own field, not in the parts)."""
    parts: list[dict[str, Any]] = []
    audio: dict[str, Any] | None = None
    for block in message.content:
        own = passthrough_value(block, NAME)
        media = getattr(block, "media", None)
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
            if block.annotations:
                warn("citation (Chat text has no place for one)")
        elif isinstance(own, dict):
            parts.append(own)  # a part this format had, back from a round trip
        elif isinstance(block, ToolCallBlock | RemoteToolCallBlock):
            if server_call(block):
                warn(SERVER_CALL)
            continue  # rendered as tool_calls below
        elif message.role == "assistant" and isinstance(block, AudioBlock) and media and media.file_id and not audio:
            audio = {"id": media.file_id}  # the model's earlier spoken answer, by its id
        elif isinstance(block, ReasoningBlock):
            warn("reasoning block")
        elif message.role == "user" and isinstance(block, ImageBlock | AudioBlock | DocumentBlock):
            part = _user_part(block, warn)
            if part is not None:
                parts.append(part)
        else:
            warn(f"{describe_block(block)} block {in_message(message.role)}")
    return parts, audio


def _render_results(message: Message, results: list[ToolResultBlock], warn: Warn) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    nested: set[int] = set()
    for block in results:
        if block.is_error or block.status == "failed":
            warn("error flag of a tool result")
        output = output_text(block.output)
        parts: list[dict[str, Any]] = []
        for other in message.content:
            # Media read from inside this result (see IN_RESULT) go back inside it. Only
            # those read from Chat: the official API takes text alone in a tool message.
            part = _inner_part(other) if result_of(other, NAME) == block.call_id else None
            if part is not None:
                parts.append(part)
                nested.add(id(other))
        content: Any = [*([{"type": "text", "text": output}] if output else []), *parts] if parts else output
        records.append({"role": "tool", "tool_call_id": block.call_id, "content": content})
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    if text:
        # Chat tool messages hold only a result: text sent along goes in a user message.
        records.append({"role": "user", "content": text})
    for other in message.content:
        if not isinstance(other, TextBlock | ToolResultBlock) and id(other) not in nested:
            warn(f"{describe_block(other)} block in a tool message")
    return records


def _inner_part(block: ContentBlock) -> dict[str, Any] | None:
    """The content part for a block read from inside a tool result, if this format has one."""
    own = passthrough_value(block, NAME)
    if isinstance(own, dict):
        return own
    if isinstance(block, ImageBlock | AudioBlock | DocumentBlock):
        return _user_part(block, lambda _what: None)
    return None


def _summary_record(summary: str, *, plain: bool = False) -> dict[str, Any]:
    """The summary message; ``plain`` leaves out the ``name`` (which Anthropic's messages,
    and Responses' items, do not take) for a file that is valid in those formats too."""
    if plain:
        return {"role": "system", "content": summary_text(summary)}
    return {"role": "system", "name": SUMMARY_NAME, "content": summary_text(summary)}


def _original_summary_record(container: Any, summary: str) -> Any:
    """The summary message as read, if it holds exactly ``summary`` (to write it back as is)."""
    try:
        records, _ = _messages_of(container, "<container>")
        reader = _Reader(records, source="<container>", prefix="")
        lead = _leading_system(records)
        return next((r for i, r in enumerate(records[:lead]) if reader.summary_message(i, r) == summary), None)
    except InputError:
        return None


def _leading_system(records: list[Any]) -> int:
    count = 0
    while (
        count < len(records) and isinstance(records[count], dict) and str_in(records[count].get("role"), _SYSTEM_ROLES)
    ):
        count += 1
    return count


# -- the adapter ---------------------------------------------------------------------


class OpenAIChatFormat:
    """Reads and writes OpenAI Chat Completions messages."""

    name = NAME
    user_turn_summary = False
    list_key = "messages"
    request = REQUEST

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """The keys of a request or dataset line beside its ``messages``."""
        if isinstance(container, dict) and "messages" in container:
            return {k: v for k, v in container.items() if k != "messages"}
        return {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: self._read(value, source, layout), source, "OpenAI chat")

    def _read(self, value: Any, source: str, layout: Layout) -> Conversation:
        records, prefix = _messages_of(value, source)
        reader = _Reader(records, source=source, prefix=prefix)
        summary: str | None = None
        messages: list[Message] = []
        warnings: list[str] = []
        leading = True
        for index, record in enumerate(records):
            leading = leading and isinstance(record, dict) and str_in(record.get("role"), _SYSTEM_ROLES)
            # Only a record the declaration finds marked holds a summary or a forged one:
            # the outline reader declines exactly those (see ctxmgr.formats._declaration).
            marked = DECLARATION.marked(record)
            found = reader.summary_message(index, record) if leading and marked else None
            if found is not None:
                summary = joined(summary, found)
                continue
            message = reader.message(index, record)
            embedded = embedded_summary(record.get("content"), "text") if leading and marked else None
            if embedded is not None:
                summary = joined(summary, embedded)
                stripped = strip_summary(record.get("content"), "text")
                message.content = reader.blocks(index, stripped)
            elif marked and (carries_marker(record) or message_carries_header(message)):
                why = why_not_summary(record.get("role"), leading)
                warnings.append(forged_summary(record_name(records, index), why))
            messages.append(message.with_source([record], self.name))
        state = AgentState(context=messages, context_summary=summary)
        return Conversation(state=state, format=self.name, container=value, layout=layout, warnings=warnings)

    def write(self, conversation: Conversation) -> Any:
        check_placement(conversation, self.name)
        records: list[Any] = []
        for message in conversation.state.context:
            source = message.source_in(self.name)
            if source is not None:
                records.extend(source)
            else:
                rendered = render_message(message, conversation.dropped.add)
                records.extend(carry_keys(message.edited_source_in(self.name), rendered))
        records = self._place_summary(records, conversation)
        return self._container(records, conversation)

    def _place_summary(self, records: list[Any], conversation: Conversation) -> list[Any]:
        summary = conversation.state.context_summary
        lead = _leading_system(records)
        embedded_at = next(
            (i for i in range(lead) if embedded_summary(records[i].get("content"), "text") is not None), None
        )
        placement = conversation.summary_as or ("system" if embedded_at is not None else "message")
        unchanged = conversation.format == self.name and summary == conversation.original_summary
        if (
            placement == "system"
            and unchanged
            and embedded_at == 0
            and embedded_summary(records[0].get("content"), "text") == summary
        ):
            return records  # the summary is already where it belongs, as it was read
        for i in range(lead):
            content = records[i].get("content")
            if embedded_summary(content, "text") is not None:
                records[i] = {**records[i], "content": strip_summary(content, "text")}
        if not summary:
            return records
        if placement == "system" and lead:
            records[0] = {**records[0], "content": embed_summary(records[0].get("content"), summary, "text")}
            return records
        original = _original_summary_record(conversation.container, summary) if unchanged else None
        if original is None and conversation.also_reads_as:
            note_ambiguity(conversation, self.name)
        plain = bool(conversation.also_reads_as)
        records.insert(lead, original if original is not None else _summary_record(summary, plain=plain))
        return records

    def _container(self, records: list[Any], conversation: Conversation) -> Any:
        container = conversation.container
        if conversation.one_record and len(records) == 1:
            return records[0]  # a file holding one message object stays one
        if conversation.format == self.name:
            if isinstance(container, dict) and "messages" in container:
                return {**container, "messages": records}
            return records
        if conversation.layout == "jsonl" or not isinstance(container, dict):
            return records
        # The container's other keys are converted by formats.dump (see _request).
        return {"messages": records}
