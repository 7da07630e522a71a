"""SWE-agent trajectories (``.traj``): detection and the fields the reader carries.

A trajectory is ``{"history": [...], "trajectory": [...], "info": {...}, ...}``; its
``history`` items are the messages SWE-agent sent to the model (``role``, ``content``,
``agent``, ``message_type``, ``tool_calls``, ``tool_call_ids``...). Light: no pydantic.
"""

from __future__ import annotations

from typing import Any

from ctxmgr._format_registry import Carried

__all__ = ["CARRIED", "score", "clue"]

_NO, _CERTAIN = 0, 2  # the scores of ctxmgr.formats._base, which this light module does not import


def _history_item(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("role"), str) and "message_type" in value


def score(value: Any) -> int:
    """CERTAIN for an object whose ``history`` list sits beside a ``trajectory`` list, or
    whose first history item has SWE-agent's ``message_type``; NO otherwise."""
    if not isinstance(value, dict) or not isinstance(value.get("history"), list):
        return _NO
    history = value["history"]
    if isinstance(value.get("trajectory"), list):
        return _CERTAIN
    return _CERTAIN if history and _history_item(history[0]) else _NO


def clue(value: Any) -> int:
    """A ``history`` list beside ``trajectory`` (strong), or one of role-bearing items."""
    if not isinstance(value, dict) or not isinstance(value.get("history"), list):
        return 0
    if isinstance(value.get("trajectory"), list):
        return 6
    first = next((item for item in value["history"] if isinstance(item, dict)), None)
    return 3 if first is not None and "role" in first else 0


CARRIED = Carried(
    record=frozenset({"role", "content", "tool_calls", "tool_call_ids"}),
    part=frozenset({"type", "text", "image_url"}),
    modelled_parts=frozenset({"text", "image_url"}),
)
"""The history item and part fields the reader maps into the model (``agent``,
``message_type``, ``thought``, ``action``, ``thinking_blocks``, ``cache_control`` stay in
the record)."""
