"""Summarizers by name. A provider's SDK is imported only inside the branch that needs it.

:func:`get_summarizer` builds one provider's summarizer; :func:`build_summarizer` builds
the whole chain a run calls (cache, concurrency cap, text check) from
:class:`SummarizerSettings` (see :mod:`ctxmgr.providers._chain`).

>>> detect_provider("gpt-4o-mini")
('openai', 'gpt-4o-mini')
>>> detect_provider("google/gemini-2.0-flash")
('google', 'gemini-2.0-flash')
"""

from __future__ import annotations

import os
from typing import Literal

from ctxmgr.errors import UsageError
from ctxmgr.providers._base import ProviderOptions, Summarizer, SummaryText
from ctxmgr.providers._chain import SummarizerSettings, build_summarizer, settings_of

__all__ = [
    "PROVIDERS",
    "ProviderOptions",
    "Summarizer",
    "SummarizerSettings",
    "SummaryText",
    "build_summarizer",
    "detect_provider",
    "get_summarizer",
    "settings_of",
]

PROVIDERS = ("openai", "google", "offline")
"""Provider names accepted by ``--provider``."""

_PREFIXES = {"gemini": "google", "google": "google", "openai": "openai", "gpt": "openai"}
_GOOGLE_STARTS = ("gemini-", "imagen-", "veo-", "chirp")
_OPENAI_STARTS = ("gpt-", "o1-", "o3-", "o4-")


def detect_provider(model: str) -> tuple[str, str]:
    """``(provider, model name for the SDK)`` for ``model``, as the reference decides.

    ``prefix/name`` uses a recognised prefix (stripped); otherwise the name's start picks
    Google or OpenAI; anything else is OpenAI, so OpenAI-compatible servers work.
    ``offline`` is the built-in deterministic summarizer.
    """
    if model == "offline":
        return "offline", "offline"
    if "/" in model:
        prefix, rest = model.split("/", 1)
        provider = _PREFIXES.get(prefix.lower())
        if provider is not None:
            return provider, rest
        return "openai", model
    lowered = model.lower()
    if lowered.startswith(_GOOGLE_STARTS):
        return "google", model
    if lowered.startswith(_OPENAI_STARTS):
        return "openai", model
    return "openai", model


# Model families of providers ctxmgr has no client for. Sent to OpenAI's own API they
# fail with a message about OpenAI's key; through a gateway (--base-url) they work.
_FOREIGN_FAMILIES = {
    "claude": "an Anthropic",
    "anthropic/": "an Anthropic",
    "mistral": "a Mistral",
    "codestral": "a Mistral",
    "command-": "a Cohere",
    "deepseek": "a DeepSeek",
    "grok": "an xAI",
}


def foreign_model(model: str) -> str | None:
    """Whose model ``model`` is, when ctxmgr has no client for that provider (``None``: ours)."""
    lowered = model.lower()
    return next((who for start, who in _FOREIGN_FAMILIES.items() if lowered.startswith(start)), None)


def get_summarizer(
    model: str,
    *,
    api_style: Literal["responses", "chat"] = "responses",
    provider: str | None = None,
    options: ProviderOptions | None = None,
) -> Summarizer:
    """Build the summarizer for ``model`` (``provider`` overrides detection).

    Cheap: no SDK is imported and no key is read until the first ``summarize`` call.
    """
    if api_style not in ("responses", "chat"):
        raise UsageError(f"api_style must be 'responses' or 'chat', got {api_style!r}")
    detected, sdk_model = detect_provider(model)
    options = options or ProviderOptions()
    family = foreign_model(model)
    if provider is None and family is not None and not (options.base_url or os.environ.get("OPENAI_BASE_URL")):
        raise UsageError(
            f"{model!r} is {family} model, which ctxmgr cannot call directly: pass --base-url of an "
            "OpenAI-compatible server or gateway that serves it (LiteLLM, OpenRouter...), or use an OpenAI or "
            "Gemini model, or --model offline"
        )
    if provider is not None:
        if provider not in PROVIDERS:
            raise UsageError(f"unknown provider {provider!r}; choose from: {', '.join(PROVIDERS)}")
        if provider != detected:
            sdk_model = model
        detected = provider
    if detected == "offline":
        from ctxmgr.providers._offline import OfflineSummarizer

        return OfflineSummarizer()
    if detected == "google":
        from ctxmgr.providers._gemini import GeminiSummarizer

        return GeminiSummarizer(sdk_model, options)
    from ctxmgr.providers._openai import OpenAISummarizer

    return OpenAISummarizer(sdk_model, options, api_style=api_style)
