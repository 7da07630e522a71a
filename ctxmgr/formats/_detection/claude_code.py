"""The light half of Claude Code session logs: detection and what the reader carries.

A session (``~/.claude/projects/<project>/<session>.jsonl``) is JSONL: one record per
line, most of them carrying ``sessionId``, ``uuid`` and ``type``. No other format's
records hold those three together, so one such record among the first lines makes
detection certain. The reader and writer are in :mod:`ctxmgr.formats._claude_code`.
"""

from __future__ import annotations

from typing import Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO

__all__ = ["CARRIED", "RECORD_TYPES", "clue", "score", "session_record"]

RECORD_TYPES = frozenset({"user", "assistant", "system", "progress", "attachment"})
"""Record types that sit on the ``uuid``/``parentUuid`` chain."""

_SCANNED = 1000
"""Records detection looks at for a chain record."""
_LOOKED_AT = 64
"""Records a clue looks at."""


def session_record(record: Any) -> bool:
    """Whether ``record`` is a record of a Claude Code session's chain."""
    return (
        isinstance(record, dict)
        and isinstance(record.get("sessionId"), str)
        and isinstance(record.get("uuid"), str)
        and record.get("type") in RECORD_TYPES
        and "parentUuid" in record
    )


def score(value: Any) -> int:
    """CERTAIN for JSONL records among which a chain record of a session is found."""
    if not isinstance(value, list) or isinstance(value, tuple):
        return NO
    # A session may open with many snapshots, titles or queue operations; a long JSONL
    # file of another format is not scanned whole.
    return CERTAIN if any(session_record(record) for record in value[:_SCANNED]) else NO


def clue(value: Any) -> int:
    """How strongly records point to a session: a ``parentUuid`` or a ``sessionId``."""
    if not isinstance(value, list):
        return 0
    for record in value[:_LOOKED_AT]:
        if isinstance(record, dict) and ("parentUuid" in record or "sessionId" in record):
            return 3
    return 0


CARRIED = Carried(
    # Bookkeeping the target rebuilds (ids, the chain, times) counts as carried; the
    # envelope (cwd, version, gitBranch, toolUseResult...) is counted as lost.
    record=frozenset(
        {"type", "message", "uuid", "parentUuid", "sessionId", "timestamp", "isSidechain", "requestId", "userType"}
    ),
    part=frozenset(),
    modelled_records=frozenset({"user", "assistant"}),
)
"""The record fields the reader carries into the model."""
