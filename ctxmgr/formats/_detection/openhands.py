"""OpenHands event streams: detection and the fields the reader carries.

A stream is a JSON list of serialized events (``id``, ``timestamp``, ``source``, then
``action`` and ``args``, or ``observation``, ``content``, ``extras`` and ``cause``), as
OpenHands exports a trajectory; an evaluation record ``{"history": [events], ...}``
holds one too. Light: no pydantic.
"""

from __future__ import annotations

from typing import Any

from ctxmgr._format_registry import Carried

__all__ = ["CARRIED", "clue", "events_of", "score"]

_NO, _CERTAIN = 0, 2  # the scores of ctxmgr.formats._base, which this light module does not import


def _event(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("source"), str)
        and (isinstance(value.get("action"), str) or isinstance(value.get("observation"), str))
    )


def events_of(value: Any) -> list[Any] | None:
    """The event list of ``value``: the list itself, or an object's ``history``."""
    if isinstance(value, dict):
        value = value.get("history")
    return value if isinstance(value, list) else None


def score(value: Any) -> int:
    """CERTAIN for a non-empty list (or ``history``) of objects that all carry ``source``
    and an ``action`` or ``observation`` name; NO otherwise."""
    events = events_of(value)
    if not events:
        return _NO
    return _CERTAIN if all(_event(event) for event in events) else _NO


def clue(value: Any) -> int:
    """A list whose first object is an event (``action``/``observation`` beside ``source``)."""
    events = events_of(value)
    first = next((item for item in events or () if isinstance(item, dict)), None)
    return 5 if first is not None and _event(first) else 0


CARRIED = Carried(
    record=frozenset(
        {"id", "source", "action", "observation", "message", "args", "content", "cause", "tool_call_metadata"}
    ),
    part=frozenset(),
    modelled_records=None,
)
"""The event fields the reader maps into the model (``timestamp``, ``extras``,
``timeout``, ``llm_metrics`` and the rest stay in the event)."""
