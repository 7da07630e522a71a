"""The light half of Gemini CLI chat recordings: detection, clue, what the reader carries.

A recording is the file Gemini CLI keeps for a session
(``~/.gemini/tmp/<project>/chats/session-*.json``): ``{sessionId, projectHash,
startTime, lastUpdated, messages: [{id, timestamp, type, content, ...}]}``, each message
of type ``user``, ``gemini``, ``info``, ``error`` or ``warning``. The reader and writer
are in :mod:`ctxmgr.formats._gemini_cli`; there is no outline reader (a recording keeps
a call and its result in one record, which the trim fast path cannot slice).
"""

from __future__ import annotations

from typing import Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO
from ctxmgr.formats._detection.gemini import CARRIED as _GEMINI_CARRIED

__all__ = ["CARRIED", "RECORD_TYPES", "clue", "is_record", "score"]

RECORD_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
"""The message types Gemini CLI records."""


def is_record(record: Any) -> bool:
    """Whether ``record`` looks like one of a recording's messages (a ``type``, no ``role``)."""
    return isinstance(record, dict) and isinstance(record.get("type"), str) and "role" not in record


def _envelope(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("sessionId"), str)
        and isinstance(value.get("projectHash"), str)
        and isinstance(value.get("messages"), list)
    )


def score(value: Any) -> int:
    """CERTAIN for a session object whose first messages are recording records; else NO."""
    try:
        if not _envelope(value):
            return NO
        return CERTAIN if all(is_record(record) for record in value["messages"][:8]) else NO
    except Exception:  # detection must never raise, whatever the input
        return NO


def clue(value: Any) -> int:
    """A ``sessionId`` and a ``projectHash`` beside a ``messages`` list name Gemini CLI
    more surely than the list names OpenAI chat (whose clue is 4)."""
    return 6 if isinstance(value, dict) and "projectHash" in value and "messages" in value else 0


CARRIED = Carried(
    record=frozenset({"id", "timestamp", "type", "content", "toolCalls", "thoughts"}),
    part=_GEMINI_CARRIED.part,
    modelled_parts=_GEMINI_CARRIED.modelled_parts,
    parts_by_key=True,
    modelled_records=frozenset({"user", "gemini"}),
    only_to=_GEMINI_CARRIED.only_to,
)
"""The record and part fields the reader maps into the model (``tokens``, ``model`` and a
tool call's display fields stay in the record: converting, they are counted as lost)."""
