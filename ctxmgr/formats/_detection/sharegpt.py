"""The light half of the training-set format ``sharegpt``: detection and what the reader carries.

Two shapes of the same training record are read (nothing here imports pydantic):

* ShareGPT, as LLaMA-Factory and FastChat ship it: ``{"conversations": [{"from":
  "human" | "gpt" | "system" | "function_call" | "observation", "value": "..."}],
  "system": "...", "tools": "<a JSON string>"}`` (or the bare list of turns);
* the part-typed chat record of LLaMA-Factory's ``v1`` datasets: ``{"messages": [{"role":
  "system" | "user" | "assistant" | "tool", "content": [{"type": "text" | "reasoning" |
  "tool_call", "value": "..."}]}], "tools": "<a JSON string>"}``, told from OpenAI chat by
  its parts holding ``value`` where OpenAI's hold ``text``.

The full reader and writer are in :mod:`ctxmgr.formats._sharegpt`.
"""

from __future__ import annotations

from typing import Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO

__all__ = ["CARRIED", "FROM_ROLES", "PART_TYPES", "ROLES", "clue", "parts_shape", "score", "turns_of"]

FROM_ROLES: dict[str, str] = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "assistant": "assistant",
    "chatgpt": "assistant",
    "system": "system",
    "function_call": "assistant",
    "observation": "tool",
}
"""A ShareGPT turn's ``from`` and the model role it reads as."""

ROLES = frozenset({"system", "user", "assistant", "tool"})
"""The roles of the part-typed chat record."""

PART_TYPES = frozenset({"text", "reasoning", "tool_call"})
"""The part types of the part-typed chat record that the reader models."""

CARRIED = Carried(
    record=frozenset({"from", "value", "role", "content"}),
    part=frozenset({"type", "value"}),
    modelled_parts=PART_TYPES,
)


def turns_of(value: Any) -> list[Any] | None:
    """The ShareGPT turns of ``value`` (a record, or the bare list of turns), else ``None``."""
    turns = value.get("conversations") if isinstance(value, dict) else value
    if not isinstance(turns, list):
        return None
    if not turns:
        return turns if isinstance(value, dict) else None  # a record with no turns yet
    first = turns[0]
    if not isinstance(first, dict) or "from" not in first or "value" not in first:
        return None
    return turns


def parts_shape(value: Any) -> list[Any] | None:
    """The messages of a part-typed chat record (or bare list of its messages), else ``None``.

    A list counts when a message's ``content`` holds a part with ``value`` and a ``type``,
    and no part holds OpenAI's ``text``.
    """
    messages = value.get("messages") if isinstance(value, dict) else value
    if not isinstance(messages, list) or not messages:
        return None
    found = False
    for message in messages:
        if not isinstance(message, dict) or "role" not in message:
            return None
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if not isinstance(part, dict) or "text" in part:
                return None
            found = found or ("value" in part and isinstance(part.get("type"), str))
    return messages if found else None


def _str_in(value: Any, names: Any) -> bool:
    return isinstance(value, str) and value in names


def score(value: Any) -> int:
    """CERTAIN for ShareGPT turns whose speakers are all known, or a part-typed chat record."""
    turns = turns_of(value)
    if turns is not None:
        known = all(isinstance(t, dict) and _str_in(t.get("from"), FROM_ROLES) and "value" in t for t in turns)
        return CERTAIN if known else NO
    messages = parts_shape(value)
    if messages is not None and all(_str_in(m.get("role"), ROLES) for m in messages):
        return CERTAIN
    return NO


def clue(value: Any) -> int:
    """How strongly the shape says ShareGPT: a ``conversations`` list, turns with ``from``."""
    if isinstance(value, dict) and isinstance(value.get("conversations"), list):
        return 6
    if turns_of(value) is not None or parts_shape(value) is not None:
        return 5
    return 0
