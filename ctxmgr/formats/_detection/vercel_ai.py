"""The light half of ``vercel-ai``: the Vercel AI SDK's ``ModelMessage`` and ``UIMessage`` lists.

What is read (nothing here imports pydantic): the messages ``generateText`` and
``streamText`` take and ``convertToModelMessages`` returns, ``[{"role": "system" | "user" |
"assistant" | "tool", "content": "..." | [{"type": "text" | "reasoning" | "image" |
"file" | "tool-call" | "tool-result", ...}]}]``, bare or under ``messages`` beside the
call's settings (``system``, ``maxOutputTokens``...). A tool call names its
``toolCallId``, a result the same id and its ``output`` (``{"type": "text" | "json" |
"error-text" | "error-json" | "content", "value"}``).

The full reader and writer are in :mod:`ctxmgr.formats._vercel_ai`.
"""

from __future__ import annotations

from typing import Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO

__all__ = ["CARRIED", "PART_TYPES", "ROLES", "UI_ROLES", "clue", "is_ui", "messages_of", "score"]

ROLES = frozenset({"system", "user", "assistant", "tool"})
UI_ROLES = frozenset({"system", "user", "assistant"})
"""The roles of a UIMessage (``useChat``'s shape, read by :mod:`ctxmgr.formats._vercel_ui`)."""
PART_TYPES = frozenset({"text", "reasoning", "image", "file", "tool-call", "tool-result"})
"""The part types the reader models; another part is carried whole."""

_SIGNS = frozenset({"tool-call", "tool-result"})

CARRIED = Carried(
    # ("id" and "parts" are a UIMessage's: its id becomes the message's, its parts its content.)
    record=frozenset({"role", "content", "id", "parts"}),
    part=frozenset(
        {
            *("type", "text", "image", "data", "mediaType", "url", "toolCallId", "toolName"),
            *("input", "output", "args", "result", "state", "errorText"),
        }
    ),
    modelled_parts=PART_TYPES,
)


def messages_of(value: Any) -> list[Any] | None:
    """The message list of ``value`` (bare, or under ``messages``), else ``None``."""
    if isinstance(value, dict):
        value = value.get("messages")
    return value if isinstance(value, list) else None


def score(value: Any) -> int:
    """CERTAIN for a message list holding the SDK's own parts (``tool-call`` or
    ``tool-result`` with a ``toolCallId``), every message well-formed; else NO (a list of
    text alone is OpenAI chat's as much as the SDK's)."""
    try:
        messages = messages_of(value)
        if not messages:
            return NO
        if _ui(messages):
            return CERTAIN  # UIMessages: typed parts, no content (Gemini's parts have no type)
        sign = False
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in ROLES:
                return NO
            content = message.get("content")
            if isinstance(content, str):
                continue
            if not isinstance(content, list):
                return NO
            for part in content:
                if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                    return NO
                sign = sign or (part["type"] in _SIGNS and isinstance(part.get("toolCallId"), str))
        return CERTAIN if sign else NO
    except Exception:  # detection must never raise, whatever the input
        return NO


def _ui(messages: list[Any]) -> bool:
    """Whether every message is a UIMessage (typed ``parts``, no ``content``), and one part
    at least says so: empty ``parts`` alone are Gemini's shape as much as the SDK's."""
    typed_part = False
    for message in messages:
        if not isinstance(message, dict) or "content" in message or message.get("role") not in UI_ROLES:
            return False
        parts = message.get("parts")
        typed = isinstance(parts, list) and all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in parts)
        if not typed:
            return False
        typed_part = typed_part or bool(parts)
    return typed_part


def is_ui(value: Any) -> bool:
    """Whether ``value`` is a list of UIMessages (bare or under ``messages``)."""
    messages = messages_of(value)
    return bool(messages) and _ui(messages or [])


def clue(value: Any) -> int:
    """How strongly the shape says the AI SDK: a part with a ``toolCallId``, or a
    UIMessage's typed ``parts`` (which Gemini's untyped parts are not)."""
    messages = messages_of(value)
    for message in (messages or [])[:8]:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list) and any(isinstance(p, dict) and "toolCallId" in p for p in content):
            return 5
        parts = message.get("parts")
        if content is None and isinstance(parts, list) and any(isinstance(p, dict) and "type" in p for p in parts):
            return 5
    return 0
