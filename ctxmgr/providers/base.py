"""The one interface every summarizer implements, and helpers they share."""

from __future__ import annotations

import os
from typing import Protocol, runtime_checkable

__all__ = ["Summarizer", "scrub"]


@runtime_checkable
class Summarizer(Protocol):
    """Turns a fenced transcript into a summary.

    ``name`` identifies the provider and model (used in error messages and cache keys).
    Implementations raise :class:`ctxmgr.errors.ProviderError` (or a subclass) on failure
    and never let an SDK exception escape.
    """

    name: str

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        """Return the summary of ``text`` following ``instructions``, at most ``max_tokens``."""
        ...


_KEY_VARIABLES = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "ANTHROPIC_API_KEY")


def scrub(text: str, *secrets: str | None) -> str:
    """Remove API keys (given ones and those in the usual variables) from ``text``."""
    candidates = [s for s in secrets if s]
    candidates.extend(v for name in _KEY_VARIABLES if (v := os.environ.get(name)))
    for secret in sorted(set(candidates), key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    return text
