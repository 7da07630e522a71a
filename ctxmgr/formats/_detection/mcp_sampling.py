"""The light half of ``mcp-sampling``: MCP ``sampling/createMessage`` requests.

What is read (nothing here imports pydantic): the request's params, ``{"messages":
[{"role": "user" | "assistant", "content": {...} | [{...}]}], "systemPrompt": "...",
"maxTokens": N, ...}``, or the whole JSON-RPC request around them (``{"method":
"sampling/createMessage", "params": {...}}``). A message's content is one object or
(since the 2025-11-25 revision, with ``tool_use`` / ``tool_result``) a list of them.

The full reader and writer are in :mod:`ctxmgr.formats._mcp_sampling`.
"""

from __future__ import annotations

from typing import Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO

__all__ = ["CARRIED", "METHOD", "PART_TYPES", "ROLES", "clue", "params_of", "score"]

METHOD = "sampling/createMessage"
ROLES = frozenset({"user", "assistant"})
PART_TYPES = frozenset({"text", "image", "audio", "tool_use", "tool_result"})
"""The content types of a sampling message the reader models; another is carried whole."""

_SIGNS = ("maxTokens", "systemPrompt", "modelPreferences", "includeContext", "stopSequences")

CARRIED = Carried(
    record=frozenset({"role", "content"}),
    part=frozenset({"type", "text", "data", "mimeType", "id", "name", "input", "toolUseId", "content", "isError"}),
    modelled_parts=PART_TYPES,
)


def params_of(value: Any) -> dict[str, Any] | None:
    """The params of a sampling request (the JSON-RPC request's, or ``value`` itself)."""
    if not isinstance(value, dict):
        return None
    if value.get("method") == METHOD:
        params = value.get("params")
        return params if isinstance(params, dict) else None
    return value if isinstance(value.get("messages"), list) else None


def _parts(content: Any) -> list[Any] | None:
    if isinstance(content, dict):
        return [content]
    return content if isinstance(content, list) else None


def score(value: Any) -> int:
    """CERTAIN for sampling params (or a bare list of sampling messages) with a sign of
    MCP's own (a camelCase request key, a message whose content is one object, a
    ``toolUseId``), every message well-formed."""
    try:
        params = params_of(value)
        messages = params.get("messages") if params is not None else value
        if not isinstance(messages, list) or not messages:
            return NO
        sign = params is not None and (value is not params or any(key in params for key in _SIGNS))
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in ROLES:
                return NO
            content = message.get("content")
            parts = _parts(content)
            if parts is None or not all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in parts):
                return NO
            sign = sign or isinstance(content, dict) or any("toolUseId" in p for p in parts)
        return CERTAIN if sign else NO
    except Exception:  # detection must never raise, whatever the input
        return NO


def clue(value: Any) -> int:
    """How strongly the shape says MCP sampling: the method, or a ``maxTokens`` beside messages."""
    if isinstance(value, dict) and value.get("method") == METHOD:
        return 7
    params = params_of(value)
    return 5 if params is not None and "maxTokens" in params else 0
