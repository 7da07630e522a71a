"""The light half of Gemini CLI chat recordings: detection, clue, what the reader carries.

A recording is the file Gemini CLI keeps for a session
(``~/.gemini/tmp/<project>/chats/session-*.json``): ``{sessionId, projectHash,
startTime, lastUpdated, messages: [{id, timestamp, type, content, ...}]}``, each message
of type ``user``, ``gemini``, ``info``, ``error`` or ``warning``. Newer versions write
``session-*.jsonl``: a metadata line, then one line per message record and update lines
(``{"$set": {...}}``, ``{"$rewindTo": id}``). The reader and writer
are in :mod:`ctxmgr.formats._gemini_cli`; there is no outline reader (a recording keeps
a call and its result in one record, which the trim fast path cannot slice).
"""

from __future__ import annotations

from typing import Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO
from ctxmgr.formats._detection.gemini import CARRIED as _GEMINI_CARRIED

__all__ = ["CARRIED", "RECORD_TYPES", "clue", "is_metadata", "is_record", "is_update", "score"]

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


def is_metadata(record: Any) -> bool:
    """Whether ``record`` is the metadata line of a JSONL recording."""
    return (
        isinstance(record, dict)
        and isinstance(record.get("sessionId"), str)
        and isinstance(record.get("projectHash"), str)
        and not isinstance(record.get("messages"), list)
    )


def is_update(record: Any) -> bool:
    """Whether ``record`` is a JSONL recording's update line (``$set`` or ``$rewindTo``)."""
    return isinstance(record, dict) and (
        isinstance(record.get("$set"), dict) or isinstance(record.get("$rewindTo"), str)
    )


def score(value: Any) -> int:
    """CERTAIN for a session object whose first messages are recording records, or for
    JSONL records that start with a recording's metadata line; else NO."""
    try:
        if isinstance(value, list) and value and is_metadata(value[0]):
            rest = value[1:9]
            return CERTAIN if all(is_record(r) or is_update(r) or is_metadata(r) for r in rest) else NO
        if not _envelope(value):
            return NO
        return CERTAIN if all(is_record(record) for record in value["messages"][:8]) else NO
    except Exception:  # detection must never raise, whatever the input
        return NO


def clue(value: Any) -> int:
    """A ``sessionId`` and a ``projectHash`` beside a ``messages`` list (or on a JSONL
    file's first line) name Gemini CLI more surely than the list names OpenAI chat (4)."""
    if isinstance(value, list):
        return 6 if value and isinstance(value[0], dict) and "projectHash" in value[0] else 0
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
