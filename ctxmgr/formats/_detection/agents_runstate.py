"""The light half of OpenAI Agents SDK run states: detection, clue, what the reader carries.

A run state is what ``RunState.to_json()`` (``to_string()``) writes to pause a run and
resume it later: ``{"$schemaVersion", "current_turn", "current_agent", "original_input",
"generated_items", "model_responses", "context", ...}``. Its ``context`` is an object
(the run context: usage, approvals), which is why native AgentState detection leaves it
alone. The reader and writer are in :mod:`ctxmgr.formats._agents_runstate`.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.formats._base import CERTAIN, NO
from ctxmgr.formats._detection.openai_responses import CARRIED

__all__ = ["CARRIED", "clue", "score"]


def score(value: Any) -> int:
    """CERTAIN for a run state with its schema version, agent, input and generated items."""
    try:
        if (
            isinstance(value, dict)
            and isinstance(value.get("$schemaVersion"), str)
            and isinstance(value.get("current_agent"), dict)
            and isinstance(value.get("original_input"), str | list)
            and isinstance(value.get("generated_items"), list)
        ):
            return CERTAIN
    except Exception:  # detection must never raise, whatever the input
        return NO
    return NO


def clue(value: Any) -> int:
    """A ``$schemaVersion`` beside a run's fields names a run state (stronger than the
    ``context`` key that points to native)."""
    if not isinstance(value, dict) or "$schemaVersion" not in value:
        return 0
    return 7 if {"current_agent", "generated_items", "original_input"} & value.keys() else 0
