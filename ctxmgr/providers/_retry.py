"""Bounded retries with exponential backoff, and paced starts, shared by the network providers.

The SDKs' own retries are switched off (``max_retries=0``, ``HttpRetryOptions(attempts=1)``)
and this loop does the retrying for both, so the policy is the same for every provider,
configurable down to milliseconds (tests), and each attempt is one HTTP request a test
server can count. A provider's attempt raises :class:`~ctxmgr.errors.ProviderError`
with ``retryable`` (and ``retry_after`` when the server sent one).

Attempts also start a little apart (:class:`Pacer`): answers that arrive together would
otherwise become requests sent together, each on a new connection when the server does
not keep them alive, and a server with a small listen backlog drops part of such a
burst; the kernel tries a dropped connection again only a second later.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import threading
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ctxmgr._text import one_line as flat
from ctxmgr.errors import ProviderError
from ctxmgr.providers._base import ProviderOptions

__all__ = [
    "RETRYABLE_STATUS",
    "Pacer",
    "call_with_retries",
    "describe_status",
    "one_line",
    "parse_retry_after",
    "retry_delay",
    "timeout_error",
]

logger = logging.getLogger("ctxmgr.providers")

T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
"""Answers worth another attempt: timeouts, rate limits and server errors."""

_STATUS_LABELS = {
    400: "bad request",
    401: "authentication failed (check the API key)",
    403: "permission denied (check the API key and its project)",
    404: "not found (check the model name and the base URL)",
    408: "request timeout",
    413: "request too large",
    422: "request rejected",
    429: "rate limited",
}


def describe_status(status: int) -> str:
    """``HTTP 429 (rate limited)`` and the like."""
    label = _STATUS_LABELS.get(status) or ("server error" if status >= 500 else "request failed")
    return f"HTTP {status} ({label})"


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    text = flat(str(text))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_retry_after(headers: Any) -> float | None:
    """Seconds from ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms``."""
    if headers is None:
        return None
    try:
        milliseconds = headers.get("retry-after-ms")
        if milliseconds is not None:
            return max(0.0, float(milliseconds) / 1000)
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(str(value))
    if parsed is None:
        return None
    return max(0.0, float(email.utils.mktime_tz(parsed)) - time.time())


def retry_delay(retry: int, retry_after: float | None, options: ProviderOptions) -> float:
    """Seconds to wait before retry number ``retry`` (0-based)."""
    if retry_after is not None:
        return min(retry_after, options.max_backoff)
    delay = min(options.backoff * 2.0**retry, options.max_backoff)
    # Jitter, so many conversations summarized at once do not retry in lockstep.
    return delay * random.uniform(0.5, 1.0)


class Pacer:
    """Spreads the starts of one provider's attempts about :attr:`gap` seconds apart.

    The gap is a quarter of the time an attempt typically takes, shared among the
    attempts waiting for their turn or running, and at most :data:`MAX_GAP`: in the
    steady state it allows four times the rate the concurrency reaches, yet answers that
    arrive together turn into requests a few milliseconds apart. Before any attempt has
    finished the gap is :data:`MAX_GAP`. A wait shorter than :data:`MIN_WAIT` is not
    made (the event loop cannot sleep much less than a millisecond, and so short a gap
    spreads nothing): attempts that take a few milliseconds are not paced at all.

    A turn is claimed when it comes, not reserved ahead, so an attempt cancelled while
    it waits leaves no hole; attempts that must wait queue in order, and only the first
    of them watches the clock (hundreds waiting cost no more than one each). Safe to
    share between event loops in several threads.
    """

    MAX_GAP = 0.002
    """Longest gap, seconds: at most 500 attempts a second start, per provider."""
    MIN_WAIT = 0.0005
    """Shortest wait worth a sleep, seconds."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next_start = 0.0
        self._active = 0
        """Attempts waiting for their turn or running."""
        self._typical: float | None = None
        """Moving average of the attempts' durations, seconds."""
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()
        """Each event loop's queue of attempts waiting for their turn."""

    def __getstate__(self) -> dict[str, Any]:
        # A copy (a Ray worker's summarizer) starts afresh: a lock cannot be pickled, and
        # what this process learnt of its calls says nothing of the copy's.
        return {"clock": self._clock, "sleep": self._sleep}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["clock"], state["sleep"])  # type: ignore[misc]

    @property
    def gap(self) -> float:
        """Seconds between the starts of two attempts, now."""
        if self._typical is None:
            return self.MAX_GAP
        return min(self.MAX_GAP, self._typical / (4 * max(1, self._active)))

    async def run(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt`` in its turn, and learn how long it took."""
        with self._lock:
            self._active += 1
        try:
            if self._claim() > 0:
                async with self._queue():
                    while (wait := self._claim()) > 0:
                        await self._sleep(wait)
            began = self._clock()
            try:
                result = await attempt()
            except ProviderError:
                self._learn(self._clock() - began)
                raise
            self._learn(self._clock() - began)
            return result
        finally:
            with self._lock:
                self._active -= 1

    def _queue(self) -> asyncio.Lock:
        """The running loop's queue (an asyncio lock serves its waiters in order)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            queue = self._queues.get(loop)
            if queue is None:
                queue = self._queues[loop] = asyncio.Lock()
            return queue

    def _claim(self) -> float:
        """0 when the turn is taken now, else the seconds to wait before asking again."""
        with self._lock:
            now = self._clock()
            wait = self._next_start - now
            if wait >= self.MIN_WAIT:
                return wait
            self._next_start = now + self.gap
            return 0.0

    def _learn(self, took: float) -> None:
        # Only attempts that ended (an answer or a provider's error): a cancelled one
        # says nothing about the server.
        with self._lock:
            self._typical = took if self._typical is None else 0.8 * self._typical + 0.2 * took


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]], *, options: ProviderOptions, provider: str, pacer: Pacer | None = None
) -> T:
    """Run ``attempt`` until it succeeds, fails for good, or the retries are used up.

    Each attempt as a whole (connecting, sending, and reading the whole answer) gets
    ``options.timeout`` seconds: the SDKs apply their timeout to each read, so a server
    sending one byte a second would otherwise hold the call forever. Running out of time
    is the retryable ``no answer within N s (timeout)`` error of ``provider``. With a
    ``pacer``, each attempt starts in its turn (the wait for it is not timed).
    """
    attempts = 0
    while True:
        attempts += 1
        try:
            if pacer is None:
                return await _bounded(attempt, options.timeout, provider)
            return await pacer.run(lambda: _bounded(attempt, options.timeout, provider))
        except ProviderError as error:
            if not error.retryable or attempts > options.max_retries:
                if attempts == 1:
                    raise
                raise type(error)(
                    f"{error.reason} (gave up after {attempts} attempts)",
                    provider=error.provider,
                    retryable=error.retryable,
                    status_code=error.status_code,
                    retry_after=error.retry_after,
                    every_call=error.every_call,
                ) from None
            delay = retry_delay(attempts - 1, error.retry_after, options)
            logger.info("%s; retry %d of %d in %.2f s", error, attempts, options.max_retries, delay)
            await asyncio.sleep(delay)


def timeout_error(timeout: float, provider: str) -> ProviderError:
    """The error of an attempt that got no whole answer within ``timeout`` seconds."""
    return ProviderError(f"no answer within {timeout:g} s (timeout)", provider=provider, retryable=True)


async def _bounded(attempt: Callable[[], Awaitable[T]], timeout: float, provider: str) -> T:
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            return await attempt()
    except TimeoutError:
        if not deadline.expired():
            # Not our deadline: a TimeoutError from inside the attempt that the provider
            # did not word (providers turn the SDKs' own timeouts into ProviderError).
            raise ProviderError("no answer (timeout)", provider=provider, retryable=True) from None
        raise timeout_error(timeout, provider) from None
