"""Count the fields a conversion leaves behind.

Each reader maps some fields of its records into the model (roles, text, tool calls and
results, media, reasoning); the rest lives only in the source record, which is written
back untouched in the same format, and kept in ``raw`` by native, but cannot follow into
another provider's format. Converting, each such field is counted, per record, in the
conversation's losses (``message field 'name'``, ``content-part field 'cache_control'``)
instead of being dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxmgr.formats._interop import SystemSlot
from ctxmgr.formats.base import Losses
from ctxmgr.formats.detection.openai_responses import CALLS, RESULTS
from ctxmgr.state._blocks import AudioBlock, DocumentBlock, ImageBlock, VideoBlock
from ctxmgr.state.message import Message

__all__ = ["count_uncarried"]

# Fields each format's reader carries into the model, for a message record and for a
# content part / block. Identifiers and bookkeeping the target rebuilds (ids, status,
# "type") count as carried: ids are remapped so calls and results still pair.
_CARRIED: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "openai-chat": (
        frozenset(
            {"role", "content", "tool_calls", "tool_call_id", "function_call", "refusal", "audio", "reasoning_content"}
        ),
        frozenset({"type", "text", "refusal", "image_url", "input_audio", "file"}),
    ),
    "openai-responses": (
        frozenset(
            {
                "type",
                "role",
                "content",
                "call_id",
                "name",
                "arguments",
                "output",
                "id",
                "status",
                "summary",
                "encrypted_content",
                "input",
                "action",
                "operation",
                "approve",
                "reason",
                "approval_request_id",
                "tools",
            }
        ),
        frozenset({"type", "text", "image_url", "file_id", "file_data", "filename", "detail", "annotations"}),
    ),
    "anthropic": (
        frozenset({"role", "content"}),
        frozenset(
            {
                "type",
                "text",
                "id",
                "name",
                "input",
                "tool_use_id",
                "content",
                "is_error",
                "thinking",
                "signature",
                "data",
                "source",
                "citations",
                "title",
                "context",
            }
        ),
    ),
    "gemini": (
        frozenset({"role", "parts"}),
        frozenset(
            {
                "text",
                "functionCall",
                "function_call",
                "functionResponse",
                "function_response",
                "thought",
                "thoughtSignature",
                "thought_signature",
                "inlineData",
                "inline_data",
                "fileData",
                "file_data",
            }
        ),
    ),
    "langchain": (
        frozenset(
            {
                "type",
                "data",
                "lc",
                "id",
                "kwargs",
                "content",
                "additional_kwargs",
                "tool_calls",
                "tool_call_id",
                "name",
                "invalid_tool_calls",
                "example",
                "status",
                "artifact",
                "role",
            }
        ),
        frozenset(
            {
                "type",
                "text",
                "id",
                "name",
                "input",
                "image_url",
                "source_type",
                "url",
                "data",
                "mime_type",
                "base64",
                "file_id",
                "annotations",
                "citations",
                "thinking",
                "signature",
                "reasoning",
                "summary",
                "encrypted_content",
            }
        ),
    ),
}

# Part fields that reach only some formats: signatures and encrypted reasoning (which vouch
# for content) go to their own format, native (in ``raw``) and LangChain (which keeps
# every provider's reasoning blocks, and Gemini's call signatures, as LangChain's own
# integrations write them). (Citations are text blocks' annotations: the writers count
# those they have no place for.)
_ONLY_TO: dict[str, dict[str, frozenset[str]]] = {
    "anthropic": {
        "signature": frozenset({"langchain"}),
        "data": frozenset({"langchain"}),
        "title": frozenset(),
        "context": frozenset(),
    },
    "openai-responses": {
        "encrypted_content": frozenset({"langchain"}),
    },
    "gemini": {
        "thoughtSignature": frozenset({"langchain"}),
        "thought_signature": frozenset({"langchain"}),
    },
    "langchain": {
        "signature": frozenset({"anthropic"}),
        "encrypted_content": frozenset({"openai-responses"}),
    },
}

# The part types each reader models; a part of another type is carried whole (a
# passthrough block), so its writer counts it as one dropped block, not field by field.
# Gemini parts have no type: one is modelled if it holds one of these keys.
_MODELLED_PARTS: dict[str, frozenset[str]] = {
    "openai-chat": frozenset({"text", "refusal", "image_url", "input_audio", "file"}),
    "openai-responses": frozenset(
        {"input_text", "output_text", "refusal", "text", "input_image", "input_file", "input_audio"}
    ),
    "anthropic": frozenset({"text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result"}),
    "gemini": frozenset(
        {
            "text",
            "functionCall",
            "function_call",
            "functionResponse",
            "function_response",
            "inlineData",
            "inline_data",
            "fileData",
            "file_data",
        }
    ),
    "langchain": frozenset(
        {
            "text",
            "thinking",
            "reasoning",
            "redacted_thinking",
            "image_url",
            "image",
            "audio",
            "video",
            "file",
            "tool_use",
            "tool_call",
            "function_call",
            "tool_call_chunk",
        }
    ),
}


# The Responses items the reader models; any other item is carried whole (a passthrough
# block), so its writer counts it as one dropped block.
_MODELLED_ITEMS = frozenset({None, "message", "reasoning"}) | CALLS.keys() | RESULTS.keys()


def _modelled_record(record: dict[str, Any], source: str) -> bool:
    return source != "openai-responses" or record.get("type") in _MODELLED_ITEMS


def _modelled(part: dict[str, Any], source: str) -> bool:
    kinds = _MODELLED_PARTS.get(source, frozenset())
    if source == "gemini":
        return not kinds.isdisjoint(part)
    return part.get("type") in kinds


# LangChain's additional_kwargs keys the reader maps into the model.
_LANGCHAIN_EXTRAS = frozenset(
    {"tool_calls", "function_call", "reasoning_content", "reasoning", "__gemini_function_call_thought_signatures__"}
)

# Native message fields no provider format has (an id is bookkeeping: the target rebuilds
# one; the time counts when it is known, not 0.0).
_NATIVE_FIELDS = ("metadata", "usages", "raw", "parsed_content")
_NATIVE_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {
    ImageBlock: ("alt_text", "bbox"),
    AudioBlock: ("transcript", "sample_rate", "channels"),
    VideoBlock: ("thumbnail",),
    DocumentBlock: ("pages", "excerpt"),
}


def _parts(record: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for key in ("content", "parts"):
        value = record.get(key)
        if isinstance(value, list):
            yield from (part for part in value if isinstance(part, dict))
    data = record.get("data") if isinstance(record.get("data"), dict) else record.get("kwargs")
    if isinstance(data, dict) and isinstance(data.get("content"), list):
        yield from (part for part in data["content"] if isinstance(part, dict))


def _system_parts(value: Any) -> Iterable[dict[str, Any]]:
    """The parts of a system prompt read from a container slot (blocks, or Gemini parts)."""
    parts = value.get("parts") if isinstance(value, dict) else value
    if isinstance(parts, list):
        yield from (part for part in parts if isinstance(part, dict))


def _lost(record: dict[str, Any], carried: frozenset[str]) -> Iterable[str]:
    # An empty value (null, "", [], {}) says nothing, so losing it loses nothing.
    return (k for k, v in record.items() if k not in carried and v not in (None, "", [], {}))


def count_uncarried(messages: Iterable[Message], target: str, losses: Losses) -> None:
    """Count, in ``losses``, the record and part fields of ``messages`` that do not reach
    ``target`` (each message is judged by the format it was read from)."""
    for message in messages:
        source = message.source_format
        if source is None or source == target or target == "native":
            continue
        if source == "native":
            _count_native(message, losses)
            continue
        carried = _CARRIED.get(source)
        if carried is None:
            continue
        record_keys, part_keys = carried
        part_keys = part_keys - {k for k, to in _ONLY_TO.get(source, {}).items() if target not in to}
        for record in message.source or ():
            if isinstance(record, SystemSlot):
                for part in _system_parts(record.value):
                    for key in _lost(part, part_keys):
                        losses.add(f"content-part field '{key}'")
                continue
            if not isinstance(record, dict) or not _modelled_record(record, source):
                continue
            keys = record_keys
            if source == "openai-chat" and record.get("role") in ("tool", "function"):
                keys = keys | {"name"}  # the called function's name: the call carries it
            for key in _lost(record, keys):
                losses.add(f"message field '{key}'")
            inner = record.get("data") if isinstance(record.get("data"), dict) else record.get("kwargs")
            if isinstance(inner, dict):
                for key in _lost(inner, record_keys):
                    losses.add(f"message field '{key}'")
                extras = inner.get("additional_kwargs")
                if isinstance(extras, dict):
                    for key in _lost(extras, _LANGCHAIN_EXTRAS):
                        losses.add(f"additional_kwargs field '{key}'")
            for part in _parts(record):
                if _modelled(part, source):
                    kept = part_keys
                    if source == "gemini" and target == "langchain" and _get_call(part) is None:
                        kept = kept - {"thoughtSignature", "thought_signature"}  # LangChain keeps calls' only
                    for key in _lost(part, kept):
                        losses.add(f"content-part field '{key}'")


def _get_call(part: dict[str, Any]) -> Any:
    return part.get("functionCall", part.get("function_call"))


def _count_native(message: Message, losses: Losses) -> None:
    """A message of a native file: the fields of the reference's model no provider has."""
    for name in _NATIVE_FIELDS:
        if getattr(message, name) not in (None, {}):
            losses.add(f"message field '{name}'")
    if message.delta:
        losses.add("message field 'delta'")
    if message.timestamp:  # 0.0: unknown (a message ctxmgr made, or read from a file with none)
        losses.add("message field 'timestamp'")
    for block in message.content:
        for name in _NATIVE_BLOCK_FIELDS.get(type(block), ()):
            if getattr(block, name) is not None:
                losses.add(f"{block.type} block field '{name}'")
