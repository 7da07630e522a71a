"""Name the fields a conversion leaves behind.

Each reader maps some fields of its records into the model (roles, text, tool calls and
results, media, reasoning); the rest lives only in the source record, which is written
back untouched in the same format but cannot follow into another one. Converting, we
list those fields once per conversation instead of dropping them silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxmgr.state.message import Message

__all__ = ["uncarried_fields"]

# Fields each format's reader carries into the model, for a message record and for a
# content part / block. Identifiers and bookkeeping the target rebuilds (ids, status,
# "type") count as carried: ids are remapped so calls and results still pair.
_CARRIED: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "openai-chat": (
        frozenset({"role", "content", "tool_calls", "tool_call_id", "function_call", "refusal"}),
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
            }
        ),
        frozenset({"type", "text", "image_url", "file_id", "file_data", "filename", "detail"}),
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
        frozenset({"type", "text", "id", "name", "input", "image_url", "source_type", "url", "data", "mime_type"}),
    ),
}


def _records(message: Message, fmt: str) -> Iterable[dict[str, Any]]:
    for record in message.source_in(fmt) or ():
        if isinstance(record, dict):
            yield record


def _parts(record: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for key in ("content", "parts"):
        value = record.get(key)
        if isinstance(value, list):
            yield from (part for part in value if isinstance(part, dict))
    data = record.get("data") if isinstance(record.get("data"), dict) else record.get("kwargs")
    if isinstance(data, dict) and isinstance(data.get("content"), list):
        yield from (part for part in data["content"] if isinstance(part, dict))


def _lost(record: dict[str, Any], carried: frozenset[str]) -> Iterable[str]:
    # An empty value (null, "", [], {}) says nothing, so losing it loses nothing.
    return (k for k, v in record.items() if k not in carried and v not in (None, "", [], {}))


def uncarried_fields(messages: Iterable[Message], source: str, target: str) -> str | None:
    """One warning line naming the record and part fields that do not reach ``target``."""
    carried = _CARRIED.get(source)
    if carried is None or source == target:
        return None
    record_keys, part_keys = carried
    lost_fields: set[str] = set()
    lost_parts: set[str] = set()
    for message in messages:
        for record in _records(message, source):
            keys = record_keys
            if source == "openai-chat" and record.get("role") in ("tool", "function"):
                keys = keys | {"name"}  # the called function's name: the call carries it
            lost_fields.update(_lost(record, keys))
            inner = record.get("data") if isinstance(record.get("data"), dict) else record.get("kwargs")
            if isinstance(inner, dict):
                lost_fields.update(_lost(inner, record_keys))
            for part in _parts(record):
                lost_parts.update(_lost(part, part_keys))
    pieces = []
    if lost_fields:
        pieces.append(f"message fields {', '.join(sorted(lost_fields))}")
    if lost_parts:
        pieces.append(f"content-part fields {', '.join(sorted(lost_parts))}")
    if not pieces:
        return None
    return f"{target} cannot carry these {source} {' and '.join(pieces)}; dropped"
