"""The light half of Gemini ``generateContent`` conversations: detection and what the reader carries.

Nothing here imports pydantic or the model; the full reader and writer are in
:mod:`ctxmgr.formats._gemini`.
"""

from __future__ import annotations

from typing import Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO, first_record

__all__ = ["CARRIED", "ROLES", "clue", "is_content", "score"]

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


def clue(value: Any) -> int:
    """How strongly ``value`` points to Gemini when no format recognises it: a
    ``contents`` key, or a list whose first object has ``parts`` (the strongest list clue)."""
    if isinstance(value, dict):
        return 3 if "contents" in value else 0
    first = first_record(value)
    return 4 if first is not None and "parts" in first else 0


CARRIED = Carried(
    record=frozenset({"role", "parts"}),
    part=frozenset(
        {
            "text",
            "functionCall",
            "function_call",
            "functionResponse",
            "function_response",
            "thought",
            "thoughtSignature",
            "thought_signature",
            "inlineData",
            "inline_data",
            "fileData",
            "file_data",
        }
    ),
    modelled_parts=frozenset(
        {
            "text",
            "functionCall",
            "function_call",
            "functionResponse",
            "function_response",
            "inlineData",
            "inline_data",
            "fileData",
            "file_data",
        }
    ),
    parts_by_key=True,
    only_to={"thoughtSignature": frozenset({"langchain"}), "thought_signature": frozenset({"langchain"})},
)
"""The content and part fields the reader maps into the model."""
