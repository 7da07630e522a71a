"""The light half of Codex CLI rollouts: detection and what the reader carries.

A rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) is JSONL, one record per
line: ``{"timestamp": ..., "type": ..., "payload": {...}}``. Nothing here imports
pydantic or the model; the reader and writer are in :mod:`ctxmgr.formats._codex`.
"""

from __future__ import annotations

import bisect
from typing import Any

from ctxmgr.formats._base import CERTAIN, NO
from ctxmgr.formats._detection.openai_responses import CARRIED as _RESPONSES_CARRIED

__all__ = ["CARRIED", "RECORD_TYPES", "SUMMARY_PREFIX", "clue", "score", "superseded_warning", "teller"]

RECORD_TYPES = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
"""The record types Codex writes; a record of another type is carried as an event."""

SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking process. "
    "You also have access to the state of the tools that were used by that language model. Use this to build "
    "on the work that has already been done and avoid duplicating work. Here is the summary produced by the "
    "other language model, use the information in this summary to assist with your own analysis:"
)
"""The first line of the user message Codex's own compaction ends its replacement
history with (its ``summary_prefix.md`` prompt); the summary follows on the next line."""

CARRIED = _RESPONSES_CARRIED
"""A rollout's messages are Responses API items (the ``response_item`` payloads and a
``compacted`` record's ``replacement_history``): the Responses reader's fields."""

# How many records detection looks at: a rollout says what it is in its first lines.
_DETECT_LIMIT = 64


def _envelope(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("type"), str) and "payload" in record


def score(value: Any) -> int:
    """CERTAIN for JSONL records in Codex's envelope (``type`` and ``payload``) that name a
    record type only Codex writes; NO otherwise.

    Every record looked at must be an envelope, so a Responses item list (whose items
    have a ``type`` but no ``payload``) never reads as a rollout.
    """
    if not isinstance(value, list) or not value or isinstance(value, dict):
        return NO
    head = value[:_DETECT_LIMIT]
    if not all(_envelope(record) for record in head):
        return NO
    return CERTAIN if any(record["type"] in RECORD_TYPES for record in head) else NO


def clue(value: Any) -> int:
    """How strongly a list that no format took looks like a rollout: its first record is
    an envelope of a Codex record type (a later line then broke the pattern)."""
    if not isinstance(value, list) or not value:
        return 0
    first = value[0]
    return 3 if _envelope(first) and first["type"] in RECORD_TYPES else 0


def superseded_warning(line: int) -> str:
    """The warning for the records before the last ``compacted`` record, on ``line``."""
    return (
        f"lines 2-{line - 1}: replaced by Codex's compaction on line {line} (codex resume no longer reads "
        "them); dropped when the file is written changed"
    )


def teller(at: int, text: str, users: list[tuple[int, str]]) -> int | None:
    """The record of the user item nearest to record ``at`` whose text holds ``text`` (a
    ``user_message`` event's), the earlier of two as near; ``None`` if none holds it.

    ``users``: ``(record, text)`` of the user items, in record order. Searched outward
    from ``at``, so an event next to its item costs one comparison.
    """
    after = bisect.bisect_left(users, at, key=lambda user: user[0])
    before = after - 1
    while before >= 0 or after < len(users):
        earlier = before >= 0 and (after >= len(users) or at - users[before][0] <= users[after][0] - at)
        index = before if earlier else after
        if text in users[index][1]:
            return users[index][0]
        if earlier:
            before -= 1
        else:
            after += 1
    return None
