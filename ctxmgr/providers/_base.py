"""What the network providers share (the interface every summarizer implements is :mod:`ctxmgr._summarizer`'s)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ctxmgr._provider_registry import ModelRef
from ctxmgr._redact import LOCAL_SERVER_KEY, check_key_text, hide_url_credentials, scrub, url_password
from ctxmgr._summarizer import Summarizer, aclose_summarizer, aopen_summarizer, setup_done
from ctxmgr.errors import MissingKeyError, ProviderError, UsageError

__all__ = [
    "LOCAL_SERVER_KEY",
    "LoopClients",
    "ProviderOptions",
    "RequireText",
    "SummaryText",
    "env",
    "env_key",
    "hide_url_credentials",
    "scrub",
    "url_password",
]


class SummaryText(str):
    """A summary that says what its summarizer left out to fit.

    A plain ``str`` everywhere a summary goes; ``notes`` (one sentence each) are for the
    reports: ``getattr(answer, "notes", ())`` reads them from any summarizer's answer.

    >>> answer = SummaryText("Earlier conversation ...", notes=["left out 2 of 9 events"])
    >>> answer.notes, answer == "Earlier conversation ..."
    (('left out 2 of 9 events',), True)
    """

    notes: tuple[str, ...]

    def __new__(cls, text: str = "", notes: Iterable[str] = ()) -> SummaryText:
        answer = super().__new__(cls, text)
        answer.notes = tuple(notes)
        return answer


class RequireText:
    """A summarizer for which an answer with no text is a failure, not "no summary".

    The reference's managers leave the conversation unchanged on an empty summary and
    carry on; a command asked to summarize must say that it could not (exit code 3), so
    the CLI wraps its network summarizers in this.
    """

    def __init__(self, inner: Summarizer) -> None:
        self.inner = inner
        self.name = inner.name

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        summary = await self.inner.summarize(text, instructions=instructions, max_tokens=max_tokens)
        if not summary.strip():
            ref = ModelRef.parse(self.name)
            raise ProviderError(
                f"the model {ref.shown} answered with no text; nothing was summarized",
                provider=ref.provider,
            )
        return summary

    async def aopen(self) -> None:
        """Let the wrapped summarizer keep its client for the running loop."""
        await aopen_summarizer(self.inner)

    async def aclose(self) -> None:
        """Close what the wrapped summarizer holds for the running loop."""
        await aclose_summarizer(self.inner)


@dataclass(frozen=True)
class ProviderOptions:
    """Connection settings shared by the network providers.

    Attributes:
        base_url: Override of the API address (local servers, proxies, tests). Unset,
            the SDK's own variable applies (``OPENAI_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``).
        timeout: Seconds before one HTTP attempt is abandoned.
        max_retries: Retries after a 408, 429 or 5xx answer, a timeout or a connection
            failure (so at most ``max_retries + 1`` attempts).
        api_key: A key given explicitly; otherwise the provider's variables are read.
        backoff: Seconds before the first retry; doubled for each further retry.
        max_backoff: Longest single wait, a server's ``Retry-After`` included.
    """

    base_url: str | None = None
    timeout: float = 60.0
    max_retries: int = 2
    api_key: str | None = field(default=None, repr=False)  # never in a repr or a log
    backoff: float = 0.5
    max_backoff: float = 20.0

    def __post_init__(self) -> None:
        if self.timeout <= 0:
            raise UsageError(f"timeout must be > 0 seconds, got {self.timeout!r}")
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise UsageError(f"max_retries must be a whole number >= 0, got {self.max_retries!r}")
        if self.base_url is not None and not self.base_url.startswith(("http://", "https://")):
            raise UsageError(f"base URL must start with http:// or https://, got {self.base_url!r}")
        if self.backoff < 0 or self.max_backoff < 0:
            raise UsageError("backoff and max_backoff must be >= 0 seconds")


def env(name: str) -> str | None:
    """The variable ``name``, or ``None`` when it is unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or None


def env_key(name: str, provider: str) -> str | None:
    """The API key in variable ``name`` (``None`` when unset or blank).

    A value that cannot be a key (not printable ASCII: a mis-encoded export) is a
    :class:`MissingKeyError` naming the variable, never quoting the value.
    """
    value = env(name)
    if value is not None and (problem := check_key_text(value)) is not None:
        raise MissingKeyError(f"{name} does not hold a usable API key: {problem}", provider=provider)
    return value


class LoopClients:
    """SDK clients kept for the length of a batch, one per event loop.

    Building a client costs tens of milliseconds (an HTTP pool, an SSL context, the SDK's
    configuration): once per summary, it capped batch throughput far below what the
    concurrency allows. Between :meth:`keep` and :meth:`aclose` (a batch run) the
    running loop's client is reused; outside, each call gets its own client, closed when
    the call ends, so a plain ``asyncio.run(summarizer.summarize(...))`` leaks nothing.
    """

    def __init__(self) -> None:
        self._kept: dict[int, tuple[Any, Any]] = {}

    def keep(self) -> None:
        """Reuse one client for the running loop until :meth:`aclose`."""
        import asyncio  # here: the offline digest's runs import no asyncio

        loop = asyncio.get_running_loop()
        entry = self._kept.get(id(loop))
        if entry is None or entry[0] is not loop:
            self._kept[id(loop)] = (loop, None)

    def acquire(self, make: Callable[[], Any]) -> tuple[Any, bool]:
        """``(client, temporary)``: the kept client, or a new one the caller must close."""
        import asyncio

        loop = asyncio.get_running_loop()
        entry = self._kept.get(id(loop))
        if entry is None or entry[0] is not loop:
            return make(), True
        if entry[1] is None:
            entry = (loop, make())
            self._kept[id(loop)] = entry
            setup_done()  # the client a run keeps is built: its start-up is over
        return entry[1], False

    async def aclose(self, close: Callable[[Any], Awaitable[None]]) -> None:
        """Close the kept client of the running loop (if one was made) with ``close``."""
        import asyncio

        loop = asyncio.get_running_loop()
        entry = self._kept.pop(id(loop), None)
        if entry is not None and entry[0] is loop and entry[1] is not None:
            await close(entry[1])
