"""Detection of LangChain serialized messages."""

from __future__ import annotations

from typing import Any

from ctxmgr.formats.base import CERTAIN, NO

__all__ = ["CLASSES", "TYPES", "kind", "messages_of", "score"]

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
