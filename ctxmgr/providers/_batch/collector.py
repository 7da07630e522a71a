"""The summarizer that collects a run's requests (:class:`BatchCollector`), and their
grouping into jobs (:func:`chunk_requests`, :func:`job_tag`)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

import orjson

from ctxmgr._provider_registry import ModelRef
from ctxmgr._summarizer import Summarizer, aclose_summarizer, aopen_summarizer
from ctxmgr.errors import ProviderError, UsageError
from ctxmgr.providers._answers import check_summary_length
from ctxmgr.providers._base import SummaryText
from ctxmgr.providers._batch.state import BatchAnswers, PendingRequest, PendingSummaryError

__all__ = ["BatchCollector", "chunk_requests", "job_tag"]

_VERSION = 1
"""Part of every job's tag: a new version never finds an older version's jobs."""


class BatchCollector:
    """Answers from the batches' answers or the cache; records every other request.

    Stands outermost in a run's summarizer chain (``inner`` is the chain, consulted for
    its name, settings, input limit and cache, never called). While :attr:`collecting`,
    a request with no answer is recorded in :attr:`pending` and answered with a
    placeholder, so every independent request of the run is found in one pass; a
    request built from a placeholder raises :class:`PendingSummaryError` (it waits for
    the next round). Not collecting, such a request is a :class:`ProviderError`.
    """

    def __init__(self, inner: Summarizer, answers: BatchAnswers, identity: str, cache: Any | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.answers = answers
        self.identity = identity
        self.cache = cache
        self.collecting = True
        self.pending: dict[str, PendingRequest] = {}
        self.waiting = 0
        """Summaries that need another round: a request of theirs is built from a pending answer."""
        self._marker = f"ctxmgr-batch-pending-{secrets.token_hex(8)}"
        self._provider = ModelRef.parse(inner.name).provider

    def key(self, text: str, *, instructions: str, max_tokens: int) -> str:
        from ctxmgr.cache import entry_key

        return entry_key(self.identity, text, instructions=instructions, max_tokens=max_tokens)

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        key = self.key(text, instructions=instructions, max_tokens=max_tokens)
        answer = self.answers.get(key)
        if answer is not None:
            if answer.error is not None:
                raise ProviderError(f"the batch answered with an error: {answer.error}", provider=self._provider)
            # Held to the length asked for, as an interactive answer is.
            return check_summary_length(answer.summary or "", max_tokens, self._provider)
        if self.cache is not None:
            cached = self.cache.lookup(key)
            if cached is not None:
                self.cache.stats.hits += 1
                return str(cached)
        if self._marker in text or self._marker in instructions:
            self.waiting += 1
            raise PendingSummaryError(
                "this request needs the answer of another, still in a batch", provider=self._provider
            )
        if not self.collecting:
            raise ProviderError(
                "no batch answer for this request (the inputs changed since the batch was sent?); "
                "run the command again to send it",
                provider=self._provider,
            )
        self.pending.setdefault(key, PendingRequest(key, text, instructions, max_tokens))
        return SummaryText(f"[{self._marker}]")

    async def aopen(self) -> None:
        await aopen_summarizer(self.inner)

    async def aclose(self) -> None:
        await aclose_summarizer(self.inner)


def chunk_requests(
    requests: Sequence[PendingRequest], *, max_requests: int, max_bytes: int, size: Any
) -> list[list[PendingRequest]]:
    """``requests`` (sorted by key) in consecutive jobs of at most ``max_requests``
    requests and ``max_bytes`` bytes (``size(request)`` is a request's bytes in the
    upload). Sorted and greedy, so the same requests always make the same jobs (their
    tags find them again). A single request past ``max_bytes`` is a :class:`UsageError`."""
    jobs: list[list[PendingRequest]] = []
    current: list[PendingRequest] = []
    used = 0
    for request in sorted(requests, key=lambda r: r.key):
        nbytes = int(size(request))
        if nbytes > max_bytes:
            raise UsageError(
                f"one summary request takes {nbytes:,} bytes, more than a batch may hold ({max_bytes:,}); "
                "lower --max-input-tokens or run without --batch"
            )
        if current and (len(current) >= max_requests or used + nbytes > max_bytes):
            jobs.append(current)
            current, used = [], 0
        current.append(request)
        used += nbytes
    if current:
        jobs.append(current)
    return jobs


def job_tag(identity: str, keys: Sequence[str]) -> str:
    """The tag of a job holding the requests ``keys`` for the summarizer ``identity``."""
    material = orjson.dumps([_VERSION, identity, sorted(keys)])
    return hashlib.sha256(material).hexdigest()[:32]
