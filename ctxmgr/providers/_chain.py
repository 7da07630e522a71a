"""The summarizer a run calls, built whole from one settings object.

A run's summarizer is a chain of wrappers around the provider's own summarizer, each
adding one thing::

    SummarizerChain          the settings it was built from; counts the calls; at most
                             ``concurrency`` calls at once, stopped at the first error
                             every call would meet                  (``concurrency``)
      CachingSummarizer      answers a request made before from disk    (``cache_dir``)
        RequireText          an answer with no text is a failure      (network models)
          OpenAISummarizer / GeminiSummarizer / OfflineSummarizer / ...

:func:`build_summarizer` builds it from :class:`SummarizerSettings`; the command line
fills the settings from its flags and calls nothing else. Building is cheap: no SDK is
imported and no key is read until the first summary is requested.

>>> chain = build_summarizer(SummarizerSettings("offline", concurrency=2))
>>> type(chain).__name__, chain.name, chain.model, chain.settings.concurrency
('SummarizerChain', 'offline', 'offline', 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ctxmgr import _provider_registry as provider_registry
from ctxmgr._provider_registry import ModelRef
from ctxmgr._summarizer import Summarizer, aclose_summarizer, aopen_summarizer, never_waits
from ctxmgr._units import UNITS_PER_TOKEN, text_units
from ctxmgr.errors import ProviderError, UsageError

if TYPE_CHECKING:
    import asyncio

__all__ = ["SummarizerChain", "SummarizerSettings", "build_summarizer", "chain_of", "settings_of"]


@dataclass(frozen=True)
class SummarizerSettings:
    """Which model a run calls, how, and what wraps the calls.

    Attributes:
        model: Model name: ``gpt-4o-mini``, ``gemini-2.0-flash``, ``openai/NAME``,
            ``google/NAME``, or ``offline`` (the built-in deterministic digest).
        api_style: The OpenAI API called: ``"responses"`` or ``"chat"``.
        provider: ``"openai"``, ``"google"`` or ``"offline"`` to override detection
            from the model name; ``None`` detects it.
        base_url: API address (a local OpenAI-compatible server, a proxy); ``None``:
            the SDK's variable (``OPENAI_BASE_URL``...), else its default. A password
            in it is scrubbed from every message.
        timeout: Seconds per attempt, the whole answer included.
        max_retries: Retries after a 408, 429 or 5xx answer, a timeout or a
            connection failure.
        api_key: A key given explicitly; ``None`` reads the provider's variables on
            the first call. Never shown in a repr.
        concurrency: At most this many calls in flight at once, across every
            conversation the chain summarizes; the first error every call would meet
            stops the calls (:class:`SummarizerChain`). ``None``: no limit.
        cache_dir: Folder of the summary cache (:class:`ctxmgr.cache.CachingSummarizer`;
            :func:`ctxmgr.cache.default_cache_dir` is the command line's); ``None``: no
            cache. The offline digest is never cached.
        cache_max_size: The cache's size cap, in bytes or as a size (``"500MB"``,
            ``"1GiB"``); ``None``: ``CTXMGR_CACHE_MAX_SIZE``, else 256 MB. Read only
            when there is a cache.
        check: Nothing is sent: the offline digest stands in for the model, so whether
            a conversation would be summarized (which only the triggers decide) needs
            no key and no network. The model is still checked (a name ctxmgr cannot
            call is an error), and ``model`` still names it.
    """

    model: str
    api_style: Literal["responses", "chat"] = "responses"
    provider: str | None = None
    base_url: str | None = None
    timeout: float = 60.0
    max_retries: int = 2
    api_key: str | None = field(default=None, repr=False)  # never in a repr or a log
    concurrency: int | None = None
    cache_dir: Path | None = None
    cache_max_size: int | str | None = None
    check: bool = False

    def __post_init__(self) -> None:
        if self.api_style not in ("responses", "chat"):
            raise UsageError(f"api_style must be 'responses' or 'chat', got {self.api_style!r}")
        if self.concurrency is not None and (
            isinstance(self.concurrency, bool) or not isinstance(self.concurrency, int) or self.concurrency < 1
        ):
            raise UsageError(f"concurrency must be a whole number >= 1, got {self.concurrency!r}")


class SummarizerChain:
    """The summarizer a run calls: what :func:`build_summarizer` returns.

    Carries the settings it was built from (:attr:`model`, :attr:`api_style`), so that
    whoever is handed the chain (a :class:`~ctxmgr.state.SummaryContextManager`, several
    at once) reads them here; counts the calls answered (:attr:`calls`, :attr:`tokens`:
    cache hits included, for progress); and, with ``settings.concurrency``, lets at most
    that many calls of ``inner`` run at once, across files and dataset lines.

    With a concurrency, the first error that every call would meet
    (:attr:`ProviderError.every_call`: no key, a refused key, an unknown model, an
    unreachable host) stops the calls: every later summary fails at once with that same
    error object (:attr:`stopped`), so a dataset of thousands of conversations makes
    one failed call, not thousands, and the CLI reports it once.
    """

    def __init__(self, inner: Summarizer, settings: SummarizerSettings) -> None:
        self.inner = inner
        self.settings = settings
        self.name = inner.name
        self.calls = 0
        """Calls answered."""
        self.tokens = 0
        """Estimated input tokens of the calls answered (for the progress bar)."""
        self.stopped: ProviderError | None = None
        """The error that stopped the calls, if one did."""
        self._semaphore: asyncio.Semaphore | None = None

    @property
    def model(self) -> str:
        """The model the chain calls, as the settings name it."""
        return self.settings.model

    @property
    def api_style(self) -> Literal["responses", "chat"]:
        """The OpenAI API the chain calls."""
        return self.settings.api_style

    @property
    def sends(self) -> bool:
        """Whether its calls go to a provider over the network (the offline digest, and a
        check's stand-in for the model, send nothing)."""
        entry = provider_registry.entry(ModelRef.parse(self.name).provider)
        return entry is None or entry.network

    @property
    def never_waits(self) -> bool:
        """Whether the wrapped summarizer never waits (the chain adds no waiting then)."""
        return never_waits(self.inner)

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        """The inner summarizer's answer, with at most the cap of calls in flight."""
        limit = self.settings.concurrency
        if self.stopped is not None:
            # The same object each time (the CLI reports it once); its traceback reset,
            # or each raise would lengthen it.
            raise self.stopped.with_traceback(None)
        if limit is None or self.never_waits:
            # No cap; or each call ends before the next can start: there is nothing to
            # cap (and no event loop to import asyncio for).
            return await self._call(text, instructions=instructions, max_tokens=max_tokens)
        if self._semaphore is None:
            import asyncio

            self._semaphore = asyncio.Semaphore(limit)
        async with self._semaphore:
            if self.stopped is not None:  # stopped while this call waited for its turn
                raise self.stopped.with_traceback(None)
            return await self._call(text, instructions=instructions, max_tokens=max_tokens)

    async def _call(self, text: str, *, instructions: str, max_tokens: int) -> str:
        try:
            summary = await self.inner.summarize(text, instructions=instructions, max_tokens=max_tokens)
        except ProviderError as error:
            if not error.every_call or self.settings.concurrency is None:
                raise
            # Calls in flight when the first one failed fail alike: one error for all.
            self.stopped = self.stopped or error
            raise self.stopped.with_traceback(None) from None
        self.calls += 1
        self.tokens += (text_units(text) + text_units(instructions)) // UNITS_PER_TOKEN
        return summary

    async def aopen(self) -> None:
        """Let the wrapped summarizer keep its client for the running loop."""
        await aopen_summarizer(self.inner)

    async def aclose(self) -> None:
        """Close what the wrapped summarizer holds for the running loop."""
        await aclose_summarizer(self.inner)


def settings_of(summarizer: object) -> SummarizerSettings | None:
    """The settings :func:`build_summarizer` built ``summarizer`` from, looked up through
    its wrappers (each with ``inner``); ``None`` for a summarizer built otherwise."""
    for _ in range(16):  # a cycle of wrappers must not hang
        if summarizer is None:
            return None
        if isinstance(summarizer, SummarizerChain):
            return summarizer.settings
        summarizer = getattr(summarizer, "inner", None)
    return None


def chain_of(manager: object) -> SummarizerChain | None:
    """The chain ``manager`` calls directly (its ``summarizer``), if :func:`build_summarizer`
    built it: what a run reports on (calls made, the error that stopped them). ``None``
    for a manager without one, or whose summarizer wraps the chain (a batch's collector)."""
    summarizer = getattr(manager, "summarizer", None)
    return summarizer if isinstance(summarizer, SummarizerChain) else None


def build_summarizer(settings: SummarizerSettings) -> SummarizerChain:
    """The whole summarizer chain ``settings`` describe (see the module for its layers).

    The provider's summarizer for ``settings.model`` (:func:`ctxmgr.providers.get_summarizer`),
    or the offline digest in its place for ``check``; for a network provider's model (as
    the registry marks it: not the offline digest), an answer with no text is a failure
    (:class:`~ctxmgr.providers._base.RequireText`: "no summary" is for the reference's
    managers, not for a run asked to summarize) and,
    with ``cache_dir``, answers are cached under a key that covers the provider, model,
    API style and the address really called; the :class:`SummarizerChain` around them
    carries the settings and, with ``concurrency``, caps the calls.

    Raises:
        UsageError: an unknown provider or API style, a model ctxmgr cannot call, a
            setting out of range, or a ``cache_max_size`` that is not a size.
    """
    from ctxmgr._redact import remember_url
    from ctxmgr.providers import get_summarizer
    from ctxmgr.providers._base import ProviderOptions, RequireText

    remember_url(settings.base_url)  # a password in the URL is a credential too
    options = ProviderOptions(
        base_url=settings.base_url,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        api_key=settings.api_key,
    )
    # Built even for a check, so that a model ctxmgr cannot call is an error there too.
    summarizer = get_summarizer(
        settings.model, api_style=settings.api_style, provider=settings.provider, options=options
    )
    if settings.check:
        summarizer = get_summarizer("offline")
    entry = provider_registry.entry(ModelRef.parse(summarizer.name).provider)
    if entry is None or entry.network:
        summarizer = RequireText(summarizer)  # and an empty answer is never cached
        if settings.cache_dir is not None:
            from ctxmgr.cache import CachingSummarizer, cache_identity, resolve_max_size

            size = settings.cache_max_size
            max_size = size if isinstance(size, int) else resolve_max_size(size)[0]
            # The key covers the address really called (the base URL, the SDK's variable
            # or its default): an answer from one server is never served for another.
            identity = cache_identity(summarizer, api_style=settings.api_style)
            summarizer = CachingSummarizer(summarizer, settings.cache_dir, identity, max_size=max_size)
    return SummarizerChain(summarizer, settings)
