"""Helpers shared by the Anthropic, Gemini and LangChain adapters.

They map each format's pieces onto the model the managers understand (OpenAI-shaped
``tools_calls``, ``ToolResultBlock``, media blocks) and back, give JSON paths to input
errors, pair id-less calls and results by name and order, and carry blocks the model has
no class for (``PassthroughBlock``) so a conversion can say what it cannot carry.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxmgr import _nesting
from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import SUMMARY_HEADER, Conversation, split_summary_text
from ctxmgr.formats._records import JsonlRecords, input_error
from ctxmgr.state._blocks import (
    AudioBlock,
    DataBlock,
    DocumentBlock,
    ImageBlock,
    MediaRef,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    VideoBlock,
)
from ctxmgr.state.message import Message

__all__ = [
    "IN_RESULT",
    "PASSTHROUGH_MIME",
    "IdPairer",
    "Locator",
    "Notes",
    "SystemSlot",
    "call_name_and_args",
    "guard",
    "in_message",
    "in_result",
    "listed_calls",
    "SERVER_CALL",
    "server_call",
    "media_block",
    "media_of",
    "message_carries_header",
    "openai_call",
    "passthrough",
    "passthrough_value",
    "result_of",
    "safe_id",
    "summary_text",
]

PASSTHROUGH_MIME = "application/vnd.ctxmgr.passthrough+json"
"""``mime_type`` of a :class:`DataBlock` holding a block of another format as is."""


@dataclass(frozen=True)
class SystemSlot:
    """Source record of the system message read from a container-level system prompt.

    Anthropic's ``system`` and Gemini's ``systemInstruction`` live outside the message
    list; the system message read from them keeps the value here (minus any summary
    ctxmgr placed there) and ``key``, the path where it was found, so it is written back
    to the same place.
    """

    value: Any
    key: tuple[str, ...]


def summary_text(summary: str) -> str:
    """The marked text a summary is stored as."""
    return f"{SUMMARY_HEADER}\n{summary}"


def message_carries_header(message: Message) -> bool:
    """Whether a text block or a tool result of ``message`` starts with the summary header.

    Readers ask it of messages they did not lift as a summary, to name them in a warning:
    the header is text any file can hold, and there it marks nothing.
    """
    for block in message.content:
        if isinstance(block, TextBlock) and block.text.startswith(SUMMARY_HEADER):
            return True
        if isinstance(block, ToolResultBlock):
            output = block.output
            values = output.values() if isinstance(output, dict) else [output]
            if any(isinstance(v, str) and v.startswith(SUMMARY_HEADER) for v in values):
                return True
    return False


def passthrough(block: Any, fmt: str, *, part: bool = False) -> DataBlock:
    """A model block carrying ``block`` (in format ``fmt``) that the model has no class for.

    Writing to ``fmt`` again restores the block; other writers warn that it is not
    carried. In native JSON it shows as a ``data`` block with the original inside.
    ``part`` marks a content part of a record, where a format passes through whole
    records too (a Responses message's part, not an item of its own).
    """
    fields: dict[str, Any] = {"mime_type": PASSTHROUGH_MIME, "format": fmt, "block": block}
    if part:
        fields["part"] = True
    return DataBlock.model_validate(fields)


def passthrough_value(block: Any, fmt: str, *, part: bool = False) -> Any | None:
    """The original block if ``block`` is a passthrough of format ``fmt`` (a content part
    when ``part``, else anything but one), else None."""
    if not isinstance(block, DataBlock) or block.mime_type != PASSTHROUGH_MIME:
        return None
    extra = block.model_extra or {}
    if extra.get("format") != fmt or bool(extra.get("part")) != part:
        return None
    return extra.get("block")


IN_RESULT = "in_result"
"""Extra key of a media block that sits inside a tool result:
``{"call_id": <the call it answers>, "format": <the format it was read from>}``.

A Chat Completions tool message's image and a Gemini ``functionResponse``'s ``parts`` are
read as media blocks beside the result, so the transcript describes them and the token
estimate counts only text; writers whose results hold media put them back inside.
"""


def in_result(block: Any, call_id: str, fmt: str) -> Any:
    """``block`` (read from format ``fmt``) tagged as inside the result for ``call_id``."""
    setattr(block, IN_RESULT, {"call_id": call_id, "format": fmt})
    return block


def result_of(block: Any, fmt: str | None = None) -> str | None:
    """The call id whose result ``block`` sits inside (read from ``fmt``, when given)."""
    found = (getattr(block, "model_extra", None) or {}).get(IN_RESULT)
    if not isinstance(found, dict) or (fmt is not None and found.get("format") != fmt):
        return None
    call_id = found.get("call_id")
    return call_id if isinstance(call_id, str) else None


def describe_block(block: Any) -> str:
    """A short name for a model block in warnings (``image``, ``anthropic web_search…``)."""
    extra = (block.model_extra or {}) if isinstance(block, DataBlock) else {}
    if isinstance(block, DataBlock) and block.mime_type == PASSTHROUGH_MIME and "block" in extra:
        inner = extra.get("block")
        kind = inner.get("type") if isinstance(inner, dict) else None
        if kind is None and isinstance(inner, dict) and inner:
            kind = next(iter(inner))
        return f"{extra.get('format', 'foreign')} {kind or 'block'}"
    return str(getattr(block, "type", type(block).__name__))


def in_message(role: str) -> str:
    """``in an assistant message``, ``in a user message``: where a dropped block was."""
    return f"in {'an' if role == 'assistant' else 'a'} {role} message"


SERVER_CALL = "server tool call (the provider ran it; 10xGraph keeps its result in metadata)"
"""The kind a writer counts for a :func:`server_call` block it leaves out."""


def server_call(block: Any) -> bool:
    """A tool call the provider ran itself, as 10xGraph records one (``tool_type``
    ``"server_tool"``): no result of the client's follows it, so it is no call to answer."""
    return isinstance(block, ToolCallBlock) and block.tool_type == "server_tool"


def listed_calls(message: Message) -> set[str]:
    """The ids of the calls in ``message.tools_calls``: a tool-call block with one of them
    repeats that call (10xGraph records both), so writers render it once."""
    return {str(call.get("id")) for call in message.tools_calls or () if isinstance(call, dict)}


def openai_call(call_id: str, name: str, args: Any) -> dict[str, Any]:
    """A tool call in the OpenAI shape the managers pair on."""
    arguments = args if isinstance(args, str) else _nesting.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def call_name_and_args(call: Any) -> tuple[str, str, Any, str | None]:
    """``(id, name, args, problem)`` of an OpenAI-shaped call; ``args`` parsed from JSON.

    Unparsable or non-object arguments come back as ``{"arguments": <raw>}`` with a
    problem to report, so nothing is dropped.
    """
    call = call if isinstance(call, dict) else {}
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    call_id = str(call.get("id") or "")
    name = str(function.get("name") or "")
    raw = function.get("arguments")
    if raw is None or raw == "":
        return call_id, name, {}, None
    if not isinstance(raw, str):
        return (
            (call_id, name, raw, None)
            if isinstance(raw, dict)
            else (call_id, name, {"arguments": raw}, f"arguments of call {call_id!r} are not an object")
        )
    try:
        args = _nesting.loads(raw)
    except _nesting.TooDeepError as exc:
        return call_id, name, {"arguments": raw}, f"arguments of call {call_id!r} are {exc}"
    except ValueError:
        return call_id, name, {"arguments": raw}, f"arguments of call {call_id!r} are not valid JSON"
    if not isinstance(args, dict):
        return call_id, name, {"arguments": args}, f"arguments of call {call_id!r} are not an object"
    return call_id, name, args, None


_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]+$")


def safe_id(value: str) -> str:
    """``value`` if it matches ``[A-Za-z0-9_-]+`` (Anthropic's id rule), else a stable rewrite."""
    if _SAFE_ID.match(value):
        return value
    import hashlib  # here: only an unsafe id needs it, and loading OpenSSL costs start-up

    cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", value) or "id"
    return f"{cleaned}_{hashlib.sha256(value.encode()).hexdigest()[:8]}"


class IdPairer:
    """Deterministic ids for calls and results that have none, paired by name and order.

    The n-th call of function ``X`` pairs with the n-th result of ``X``. Calls with real
    ids take part too, so a result without an id still finds the call it answers.
    """

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._calls: dict[str, list[str]] = defaultdict(list)
        self._answered: dict[str, int] = defaultdict(int)
        self._minted: dict[str, int] = defaultdict(int)

    def _mint(self, name: str, kind: str) -> str:
        number = self._minted[f"{kind}:{name}"]
        self._minted[f"{kind}:{name}"] += 1
        suffix = "" if kind == "call" else f"_{kind}"
        return safe_id(f"{self.prefix}_{name}_{number}{suffix}") if name else f"{self.prefix}{suffix}_{number}"

    def call(self, name: str, call_id: str | None) -> str:
        """The id of a call (its own, or a synthesized one)."""
        resolved = call_id or self._mint(name, "call")
        self._calls[name].append(resolved)
        return resolved

    def result(self, name: str, call_id: str | None) -> str:
        """The id of the call a result answers (its own id, else by name and order)."""
        index = self._answered[name]
        self._answered[name] += 1
        if call_id:
            return call_id
        calls = self._calls.get(name, [])
        return calls[index] if index < len(calls) else self._mint(name, "orphan")


@dataclass
class Locator:
    """Names where a record sits, for one-line input errors (``messages[3].content``)."""

    source: str
    records: Any
    prefix: str = ""

    def path(self, index: int, where: str = "") -> str:
        if isinstance(self.records, JsonlRecords):
            return where or "record"
        head = f"{self.prefix}[{index}]"
        return f"{head}.{where}" if where and not where.startswith("[") else f"{head}{where}"

    def error(self, index: int, where: str, message: str) -> InputError:
        return input_error(
            f"{self.path(index, where)}: {message}", source=self.source, records=self.records, index=index
        )


def guard(source: str, what: str, error: Exception) -> InputError:
    """An InputError for an unexpected failure while reading (never a raw KeyError)."""
    return InputError(f"cannot read this {what} file: {type(error).__name__}: {error}", source=source)


def type_name(value: Any) -> str:
    """JSON's name for the type of ``value`` (for error messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


_MEDIA_CLASSES = {"image": ImageBlock, "audio": AudioBlock, "video": VideoBlock}


def media_block(media: MediaRef, *, kind: str | None = None) -> Any:
    """An image, audio, video or document block for ``media`` (kind from the MIME type)."""
    if kind is None:
        major = (media.mime_type or "").split("/", 1)[0]
        kind = major if major in _MEDIA_CLASSES else "document"
    cls = _MEDIA_CLASSES.get(kind)
    return cls(media=media) if cls is not None else DocumentBlock(media=media)


def media_of(block: Any) -> MediaRef | None:
    """The media of an image, audio, video or document block."""
    if isinstance(block, ImageBlock | AudioBlock | VideoBlock | DocumentBlock):
        return block.media
    if isinstance(block, DataBlock) and block.mime_type != PASSTHROUGH_MIME:
        if block.media is not None:
            return block.media
        if block.data_base64 is not None:
            return MediaRef(kind="data", data_base64=block.data_base64, mime_type=block.mime_type)
    return None


def data_url(media: MediaRef) -> str | None:
    """A URL for ``media``: its own, or a ``data:`` URL for inline data."""
    if media.kind == "data" and media.data_base64 is not None:
        return f"data:{media.mime_type or 'application/octet-stream'};base64,{media.data_base64}"
    return media.url


def parse_data_url(url: str) -> MediaRef:
    """A MediaRef for ``url``; ``data:...;base64,`` URLs become inline data."""
    match = re.match(r"^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$", url, re.DOTALL)
    if match:
        return MediaRef(kind="data", mime_type=match.group(1) or None, data_base64=match.group(2))
    return MediaRef(kind="url", url=url)


class Notes:
    """What a writer could not carry, grouped so each reason is one warning line.

    ``add("a video block is not carried", 3)`` twice more for messages 5 and 9 becomes
    ``"anthropic: a video block is not carried (messages 3, 5, 9)"``.
    """

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self._where: dict[str, list[int]] = {}

    def add(self, reason: str, index: int | None = None) -> None:
        where = self._where.setdefault(reason, [])
        if index is not None and index not in where:
            where.append(index)

    def flush(self, warnings: list[str]) -> None:
        """Append the grouped warnings to ``warnings`` (once each) and forget them."""
        for reason, where in self._where.items():
            if not where:
                place = ""
            elif len(where) == 1:
                place = f" (message {where[0]})"
            else:
                place = f" (messages {', '.join(map(str, where))})"
            line = f"{self.fmt}: {reason}{place}"
            if line not in warnings:
                warnings.append(line)
        self._where.clear()


def read_guarded(read: Callable[[], Conversation], source: str, what: str) -> Conversation:
    """Run a reader; an unexpected KeyError, TypeError... becomes a one-line InputError."""
    try:
        return read()
    except InputError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise guard(source, what, exc) from None


class NotedWriter:
    """Base of the writers that group what they cannot carry (:class:`Notes`).

    Subclasses implement ``_write``; :meth:`write` flushes the notes into the
    conversation's warnings whatever happens, and refuses ``--summary-as field`` for
    formats whose container has no summary field. What has no place in the format is
    counted with :meth:`drop`, not noted.
    """

    name = ""
    messages_noun = "messages"

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.notes = Notes(self.name)

    def drop(self, kind: str) -> None:
        """Count one thing of ``kind`` this format has no place for (see ``Losses``)."""
        self.conversation.dropped.add(kind)

    def write(self) -> Any:
        if self.conversation.summary_as == "field":
            raise UsageError(
                f"--summary-as field: {self.messages_noun} have no summary field; use 'system' or 'message'"
            )
        try:
            return self._write()
        finally:
            self.notes.flush(self.conversation.warnings)

    def _write(self) -> Any:
        raise NotImplementedError


REMOVED: Any = object()
"""What :func:`lift_leading_summary` returns for a record that held only the summary."""


def lift_leading_summary(record: dict[str, Any], key: str, first_text: Callable[[Any], Any]) -> tuple[Any, str | None]:
    """``(record without the summary, summary)`` when the first part under ``key`` is a
    summary ctxmgr wrote (its text, per ``first_text``, starts with the header);
    ``(REMOVED, summary)`` when that part was all there was; ``(record, None)`` otherwise.
    """
    parts = record.get(key)
    if not isinstance(parts, list) or not parts:
        return record, None
    text = first_text(parts[0])
    lifted = split_summary_text(text) if isinstance(text, str) else None
    if lifted is None:
        return record, None
    if len(parts) == 1:
        return REMOVED, lifted
    rest = dict(record)
    rest[key] = parts[1:]
    return rest, lifted
