"""How much transcript one summary request may carry (``--max-input-tokens``).

A request past a model's context window fails, or worse, is cut by the server without a
word (Ollama keeps only the end of a prompt longer than its window). So a span whose
request would exceed the budget is summarized in parts (:mod:`ctxmgr.state._split`).

The budget is in the project's estimated tokens (four characters a token). Real
tokenizers count JSON, ids and non-English text at fewer characters a token, so each
default is about 60% of the model family's context window: room for the
underestimate, the instruction and the summary itself.

Known families get their window's share; any other name, and any server reached through
a base URL (``--base-url``, ``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``: local
servers and proxies, whose window is often small and unknown),
gets :data:`CONSERVATIVE_INPUT_TOKENS`, which fits a 4,096-token window with a
600-token summary.

>>> default_input_tokens("gpt-4o-mini")
75000
>>> default_input_tokens("gpt-4o-mini", custom_server=True)
2000
>>> default_input_tokens("llama3.1")
2000
"""

from __future__ import annotations

from typing import Any

from ctxmgr import _provider_registry as registry

__all__ = [
    "CONSERVATIVE_INPUT_TOKENS",
    "FAMILY_INPUT_TOKENS",
    "default_input_tokens",
    "describe_default",
    "input_limit_of",
]

CONSERVATIVE_INPUT_TOKENS = 2000
"""Unknown models and base-URL servers (Ollama's default window is 2,048 to 4,096)."""

FAMILY_INPUT_TOKENS: tuple[tuple[str, int], ...] = registry.family_input_tokens()
"""``(model name prefix, input tokens)`` of the known model families (the provider
registry's ``budgets``); the first match wins."""


def _family(model: str) -> tuple[str, int] | None:
    name = model.lower().rsplit("/", 1)[-1]
    for prefix, tokens in FAMILY_INPUT_TOKENS:
        if name.startswith(prefix):
            return prefix, tokens
    return None


def default_input_tokens(model: str, *, custom_server: bool = False) -> int:
    """The input budget of one summary request to ``model`` when none is given."""
    family = _family(model)
    if custom_server or family is None:
        return CONSERVATIVE_INPUT_TOKENS
    return family[1]


def describe_default(model: str, *, custom_server: bool = False) -> str:
    """Why :func:`default_input_tokens` chose its value, for notes and ``--dry-run``."""
    family = _family(model)
    if custom_server:
        return "the default for a server given by a base URL"
    if family is None:
        return f"the default for a model of unknown context ({model})"
    return f"the default for {family[0]}* models"


def input_limit_of(summarizer: Any, model: str) -> tuple[int | None, str]:
    """``(input tokens or None for no limit, why)`` of one request to ``summarizer``.

    A summarizer states its own limit with an ``input_limit()`` method (the network
    providers know their address; the offline digest has none); wrappers (cache,
    concurrency cap) are seen through by their ``inner``. Anything else gets the
    default for ``model``.
    """
    seen = 0
    while summarizer is not None and seen < 16:  # a cycle of wrappers must not hang
        limit = getattr(summarizer, "input_limit", None)
        if callable(limit):
            tokens, why = limit()
            return tokens, why
        summarizer = getattr(summarizer, "inner", None)
        seen += 1
    return default_input_tokens(model), describe_default(model)
