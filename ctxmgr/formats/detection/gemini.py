"""Detection of Gemini ``generateContent`` conversations."""

from __future__ import annotations

from typing import Any

from ctxmgr.formats.base import CERTAIN, NO

__all__ = ["ROLES", "is_content", "score"]

ROLES = ("user", "model", "function", "tool")


def is_content(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("parts"), list)
        and record.get("role", "user") in ROLES
        and "content" not in record
    )


def score(value: Any) -> int:
    """How sure it is that ``value`` is this format: NO, PLAUSIBLE or CERTAIN."""
    try:
        if isinstance(value, dict):
            contents = value.get("contents")
            if not isinstance(contents, list):
                return NO
            return CERTAIN if all(is_content(r) for r in contents[:8]) else NO
        if isinstance(value, list) and value:
            return CERTAIN if all(is_content(r) for r in value[:8]) else NO
    except Exception:  # detection must never raise, whatever the input
        return NO
    return NO
