"""Summarizers by name. A provider's SDK is imported only inside the branch that needs it.

:func:`get_summarizer` builds one provider's summarizer; :func:`build_summarizer` builds
the whole chain a run calls (a :class:`SummarizerChain`: cache, concurrency cap, text
check) from :class:`SummarizerSettings` (see :mod:`ctxmgr.providers._chain`).

Which providers there are, and which model names pick each, is the provider registry's
(:mod:`ctxmgr._provider_registry`).

>>> detect_provider("gpt-4o-mini")
ModelRef(provider='openai', model='gpt-4o-mini')
"""

from __future__ import annotations

import os
from typing import Literal

from ctxmgr import _provider_registry as registry
from ctxmgr._provider_registry import ModelRef
from ctxmgr._summarizer import Summarizer
from ctxmgr.errors import UsageError
from ctxmgr.providers._base import ProviderOptions, SummaryText
from ctxmgr.providers._chain import SummarizerChain, SummarizerSettings, build_summarizer, chain_of, settings_of

__all__ = [
    "PROVIDERS",
    "ModelRef",
    "ProviderOptions",
    "Summarizer",
    "SummarizerChain",
    "SummarizerSettings",
    "SummaryText",
    "build_summarizer",
    "chain_of",
    "detect_provider",
    "get_summarizer",
    "settings_of",
]

PROVIDERS: tuple[str, ...] = registry.names()
"""Provider names accepted by ``--provider``: the provider registry's."""


def detect_provider(model: str) -> ModelRef:
    """The provider of ``model`` and the model's name for its SDK (see
    :func:`ctxmgr._provider_registry.detect`): a recognised ``prefix/``, else the name's
    start, else OpenAI, so OpenAI-compatible servers work. ``offline`` is the built-in
    deterministic summarizer.
    """
    return registry.detect(model)


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
    ref = registry.detect(model)
    detected, sdk_model = ref.provider, ref.model
    options = options or ProviderOptions()
    family = foreign_model(model)
    # A foreign model reaches the fallback provider (OpenAI's API), unless an address says otherwise.
    fallback = next(e for e in registry.ENTRIES if e.fallback)
    if (
        provider is None
        and family is not None
        and not (options.base_url or any(os.environ.get(v) for v in fallback.url_variables))
    ):
        raise UsageError(
            f"{model!r} is {family} model, which ctxmgr cannot call directly: pass --base-url of an "
            "OpenAI-compatible server or gateway that serves it (LiteLLM, OpenRouter...), or use an OpenAI or "
            "Gemini model, or --model offline"
        )
    if provider is not None:
        if registry.entry(provider) is None:
            raise UsageError(f"unknown provider {provider!r}; choose from: {', '.join(registry.names())}")
        if provider != detected:
            sdk_model = model
        detected = provider
    chosen = registry.entry(detected)
    assert chosen is not None  # detection names only registered providers
    summarizer: Summarizer = registry.resolve(chosen.summarizer)(sdk_model, options, api_style=api_style)
    return summarizer
