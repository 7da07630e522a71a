"""The light half of LangChain serialized messages: detection and what the reader carries.

Nothing here imports pydantic or the model; the full reader and writer are in
:mod:`ctxmgr.formats._langchain`.
"""

from __future__ import annotations

from typing import Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO, first_record

__all__ = ["CARRIED", "CLASSES", "TYPES", "clue", "kind", "messages_of", "score"]

TYPES: dict[str, str] = {
    "human": "human",
    "ai": "ai",
    "system": "system",
    "tool": "tool",
    "chat": "chat",
    "function": "function",
    "developer": "system",
    "HumanMessageChunk": "human",
    "AIMessageChunk": "ai",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "ChatMessageChunk": "chat",
    "FunctionMessageChunk": "function",
}


CLASSES: dict[str, str] = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "ChatMessage": "chat",
    "FunctionMessage": "function",
    "HumanMessageChunk": "human",
    "AIMessageChunk": "ai",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "ChatMessageChunk": "chat",
    "FunctionMessageChunk": "function",
}


def kind(record: Any) -> tuple[str, dict[str, Any]] | None:
    """``(message type, data)`` of a LangChain record, or None if it is not one."""
    if not isinstance(record, dict):
        return None
    if record.get("lc") == 1 and record.get("type") == "constructor":
        ident, kwargs = record.get("id"), record.get("kwargs")
        cls = ident[-1] if isinstance(ident, list) and ident else None
        if isinstance(cls, str) and cls in CLASSES and isinstance(kwargs, dict):
            return CLASSES[cls], kwargs
        return None
    kind, data = record.get("type"), record.get("data")
    if isinstance(kind, str) and kind in TYPES and isinstance(data, dict) and "content" in data:
        return TYPES[kind], data
    return None


def messages_of(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return list(value["messages"])
    return None


def score(value: Any) -> int:
    """How sure it is that ``value`` is this format: NO, PLAUSIBLE or CERTAIN."""
    try:
        records = messages_of(value)
        if not records:
            return NO
        return CERTAIN if all(kind(r) is not None for r in records[:8]) else NO
    except Exception:  # detection must never raise, whatever the input
        return NO


def clue(value: Any) -> int:
    """How strongly ``value`` points to LangChain when no format recognises it: a list
    whose first object has ``lc`` or ``data``."""
    first = first_record(value)
    return 3 if first is not None and ("lc" in first or "data" in first) else 0


CARRIED = Carried(
    record=frozenset(
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
    part=frozenset(
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
    modelled_parts=frozenset(
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
    # LangChain keeps every provider's signed reasoning; only their own format takes it back.
    only_to={"signature": frozenset({"anthropic"}), "encrypted_content": frozenset({"openai-responses"})},
)
"""The message and part fields the reader maps into the model."""
