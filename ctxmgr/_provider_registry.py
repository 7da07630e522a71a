"""The provider registry: one entry per provider, everything ctxmgr knows of it.

An entry (:class:`ProviderEntry`) holds a provider's name, the model names that pick it,
the environment variables of its key and address, the input budgets of its model
families, its summarizer class, its batch client and what it supports (a batch API,
Vertex AI). Everything that lists providers is derived from :data:`ENTRIES`: detection
(:func:`detect`), the summarizer a name builds (``ctxmgr.providers.get_summarizer``),
the default budgets (``ctxmgr.providers._budgets``), the variables scrubbed from
messages (``ctxmgr._redact``), the configuration the environment overrides
(``ctxmgr.cli.config``), the batch clients and the command line's help.

Code is named by ``"module:attribute"`` and imported on first use: this module imports
nothing of ctxmgr, so every layer may read it, and the command line builds its help text
without loading a provider. A new provider is its module plus one entry here.

>>> detect("gpt-4o-mini")
ModelRef(provider='openai', model='gpt-4o-mini')
>>> detect("google/gemini-2.0-flash")
ModelRef(provider='google', model='gemini-2.0-flash')
"""

from __future__ import annotations

import importlib
import os
from typing import Any

__all__ = [
    "ENTRIES",
    "ModelRef",
    "ProviderEntry",
    "batch_entries",
    "detect",
    "entry",
    "family_input_tokens",
    "help_key_variables",
    "help_models",
    "help_url_variables",
    "key_variables",
    "names",
    "resolve",
    "url_variables",
]


class ModelRef:
    """A model and the provider that serves it (immutable).

    A summarizer's ``name`` spells the pair ``"provider:model"`` (``"openai:gpt-4o-mini"``);
    a name with no colon is a provider alone (``"offline"``), whose ``model`` is empty.

    >>> ModelRef.parse("google:gemini-2.0-flash")
    ModelRef(provider='google', model='gemini-2.0-flash')
    >>> str(ModelRef("openai", "gpt-4o-mini")), ModelRef.parse("offline").shown
    ('openai:gpt-4o-mini', 'offline')
    """

    # A plain class, not a dataclass: this module loads with every command, and building
    # a dataclass costs more start-up than the whole registry.
    __slots__ = ("model", "provider")

    provider: str
    model: str

    def __init__(self, provider: str, model: str) -> None:
        object.__setattr__(self, "provider", provider)
        object.__setattr__(self, "model", model)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a ModelRef is immutable: cannot set {name}")

    @classmethod
    def parse(cls, name: str) -> ModelRef:
        """The pair a summarizer's ``name`` spells."""
        provider, _, model = name.partition(":")
        return cls(provider, model)

    @property
    def shown(self) -> str:
        """The model's name in a message: the model, else the provider."""
        return self.model or self.provider

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelRef):
            return NotImplemented
        return (self.provider, self.model) == (other.provider, other.model)

    def __hash__(self) -> int:
        return hash((self.provider, self.model))

    def __repr__(self) -> str:
        return f"ModelRef(provider={self.provider!r}, model={self.model!r})"

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}" if self.model else self.provider


class ProviderEntry:
    """One provider: its name and everything ctxmgr knows of it.

    Attributes:
        name: The provider's name (``--provider``, the first half of a summarizer's name).
        summarizer: ``"module:Class"`` of its summarizer, built as
            ``Class(model, options, api_style=...)`` (a
            :class:`~ctxmgr.providers._base.ProviderOptions`; ``api_style`` is OpenAI's).
        prefixes: ``prefix/NAME`` picks the provider, the prefix stripped; the first is
            the one the help shows.
        model_starts: A model name starting so (any case) picks the provider.
        names: Model names that are the provider itself (``offline``).
        fallback: Every name no entry claims goes to this provider (one entry has it).
        example: A model name the help shows.
        key_variables: The variables its key is read from, in the SDK's order.
        key_variable: The key variable messages and the help name.
        url_variables: The variables of its address (a base URL); set, the default
            budget is the conservative one.
        budgets: ``(model name prefix, input tokens)`` of its model families, the
            longest prefix first.
        batches: ``"module:Class"`` of its batch API client, ``None``: no batch API.
        vertex_variable: The variable that sends its requests to Vertex AI, ``None``: no
            Vertex AI. A manager asked for Vertex AI calls this provider.
        network: Whether its summaries are requests to a server (the offline digest's
            are not: no key, no cache, no text check).
    """

    __slots__ = (
        "batches",
        "budgets",
        "example",
        "fallback",
        "key_variable",
        "key_variables",
        "model_starts",
        "name",
        "names",
        "network",
        "prefixes",
        "summarizer",
        "url_variables",
        "vertex_variable",
    )

    def __init__(
        self,
        *,
        name: str,
        summarizer: str,
        prefixes: tuple[str, ...] = (),
        model_starts: tuple[str, ...] = (),
        names: tuple[str, ...] = (),
        fallback: bool = False,
        example: str | None = None,
        key_variables: tuple[str, ...] = (),
        key_variable: str | None = None,
        url_variables: tuple[str, ...] = (),
        budgets: tuple[tuple[str, int], ...] = (),
        batches: str | None = None,
        vertex_variable: str | None = None,
        network: bool = True,
    ) -> None:
        self.name = name
        self.summarizer = summarizer
        self.prefixes = prefixes
        self.model_starts = model_starts
        self.names = names
        self.fallback = fallback
        self.example = example
        self.key_variables = key_variables
        self.key_variable = key_variable
        self.url_variables = url_variables
        self.budgets = budgets
        self.batches = batches
        self.vertex_variable = vertex_variable
        self.network = network

    def __repr__(self) -> str:
        return f"ProviderEntry(name={self.name!r}, summarizer={self.summarizer!r})"

    def vertex_selected(self) -> bool:
        """Whether the environment sends this provider's requests to Vertex AI."""
        if self.vertex_variable is None:
            return False
        return os.environ.get(self.vertex_variable, "").strip().lower() in ("1", "true")


ENTRIES: tuple[ProviderEntry, ...] = (
    ProviderEntry(
        name="openai",
        summarizer="ctxmgr.providers._openai:OpenAISummarizer",
        prefixes=("openai", "gpt"),
        model_starts=("gpt-", "o1-", "o3-", "o4-"),
        # Any other name goes to OpenAI, so OpenAI-compatible servers work.
        fallback=True,
        example="gpt-4o-mini",
        key_variables=("OPENAI_API_KEY",),
        key_variable="OPENAI_API_KEY",
        url_variables=("OPENAI_BASE_URL",),
        budgets=(
            ("gpt-4.1", 600_000),  # 1,047,576-token window
            ("gpt-4o", 75_000),  # 128,000
            ("gpt-4-turbo", 75_000),  # 128,000
            ("gpt-4-32k", 18_000),  # 32,768
            ("gpt-4", 4_500),  # 8,192
            ("gpt-3.5-turbo", 9_000),  # 16,385
            ("gpt-5", 160_000),  # 400,000 window, 272,000 of it input
            ("o1-mini", 75_000),  # 128,000
            ("o1", 120_000),  # 200,000
            ("o3", 120_000),  # 200,000
            ("o4-mini", 120_000),  # 200,000
        ),
        batches="ctxmgr.providers._batch.openai_jobs:OpenAIBatches",
    ),
    ProviderEntry(
        name="google",
        summarizer="ctxmgr.providers._gemini:GeminiSummarizer",
        prefixes=("google", "gemini"),
        model_starts=("gemini-", "imagen-", "veo-", "chirp"),
        example="gemini-2.0-flash",
        # The SDK's order: GOOGLE_API_KEY wins when both are set.
        key_variables=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        key_variable="GEMINI_API_KEY",
        url_variables=("GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"),
        budgets=(
            ("gemini-1.5-pro", 1_200_000),  # 2,097,152
            ("gemini-", 600_000),  # 1,048,576 (1.5 Flash, 2.0, 2.5)
        ),
        batches="ctxmgr.providers._batch.gemini_jobs:GeminiBatches",
        vertex_variable="GOOGLE_GENAI_USE_VERTEXAI",
    ),
    ProviderEntry(
        name="offline",
        summarizer="ctxmgr.providers._offline:OfflineSummarizer",
        names=("offline",),
        network=False,
    ),
)
"""Every provider, in the order the help lists them."""


def names() -> tuple[str, ...]:
    """The provider names ``--provider`` accepts."""
    return tuple(e.name for e in ENTRIES)


def entry(name: str) -> ProviderEntry | None:
    """The entry of the provider called ``name``."""
    return next((e for e in ENTRIES if e.name == name), None)


def detect(model: str) -> ModelRef:
    """The provider of ``model`` and the model's name for its SDK, as the reference decides.

    A name an entry is (``offline``) picks it; ``prefix/name`` with a recognised prefix
    picks its provider (the prefix stripped); otherwise the name's start picks one;
    anything else goes to the fallback provider (OpenAI), whole.
    """
    fallback = next(e.name for e in ENTRIES if e.fallback)
    for found in ENTRIES:
        if model in found.names:
            return ModelRef(found.name, model)
    if "/" in model:
        prefix, rest = model.split("/", 1)
        prefix = prefix.lower()
        owner = next((e.name for e in ENTRIES if prefix in e.prefixes), None)
        return ModelRef(owner, rest) if owner is not None else ModelRef(fallback, model)
    lowered = model.lower()
    owner = next((e.name for e in ENTRIES if e.model_starts and lowered.startswith(e.model_starts)), fallback)
    return ModelRef(owner, model)


def family_input_tokens() -> tuple[tuple[str, int], ...]:
    """Every provider's ``(model name prefix, input tokens)``, each provider's longest first."""
    return tuple(budget for e in ENTRIES for budget in e.budgets)


def key_variables() -> tuple[str, ...]:
    """Every provider's key variables."""
    return tuple(v for e in ENTRIES for v in e.key_variables)


def url_variables() -> tuple[str, ...]:
    """Every provider's address variables."""
    return tuple(v for e in ENTRIES for v in e.url_variables)


def batch_entries() -> tuple[ProviderEntry, ...]:
    """The providers with a batch API."""
    return tuple(e for e in ENTRIES if e.batches is not None)


def help_models() -> str:
    """The model names the help shows: each provider's example, its prefix, its own names."""
    shown = [e.example for e in ENTRIES if e.example]
    shown += [f"{e.prefixes[0]}/NAME" for e in ENTRIES if e.prefixes]
    own = [f"'{name}'" for e in ENTRIES for name in e.names]
    return ", ".join([*shown, f"or {', '.join(own)}"])


def help_key_variables(separator: str = " / ") -> str:
    """The key variable of each provider with one, as the help names them."""
    return separator.join(e.key_variable for e in ENTRIES if e.key_variable)


def help_url_variables(separator: str = " or ") -> str:
    """The first address variable of each provider with one, as the help names them."""
    return separator.join(e.url_variables[0] for e in ENTRIES if e.url_variables)


def resolve(reference: str) -> Any:
    """The object a ``"module:attribute"`` reference names, imported now."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)
