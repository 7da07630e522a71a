"""How much of a model's answer is read: a bound tied to the length of summary asked for.

A summary of ``max_tokens`` tokens arrives in a body of a few kilobytes. Whoever answers
at the provider's address (a proxy, a local server, a base URL a colleague set) may send
far more: megabytes of text against a cap of 600 tokens, or a gzip bomb whose 300 KB on
the wire decode to 300 MB. The SDKs read a body whole, decoded, before anything looks at
it; so the HTTP client each provider hands its SDK (:func:`bounded_client`) reads the
decoded body as it streams and stops at :func:`answer_bytes` of the call being made:
``ENVELOPE_BYTES`` for the JSON around the text, plus ``BYTES_PER_TOKEN`` for each token
asked for (a token is a few characters, a JSON-escaped character up to 12 bytes).
Past it, the call is a summarizer failure naming the bound, never retried: the same
request would get the same answer. A body that declares more than one content coding
is refused before it is read (decoding layers multiply a bomb).

The text an answer carries is checked too (:func:`check_summary_length`): a summary
estimated at more than ``TEXT_TOKENS_FACTOR`` times the cap (the estimate and a model's
tokenizer differ, but not by that much) is no summary of that length, and is refused
rather than written.

Only the summary calls set a bound (:func:`answer_limit`, a context variable read in
the client's ``send``): whatever else the client is used for reads as the SDK does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ctxmgr._summarizer import TEXT_TOKENS_FACTOR, summary_length
from ctxmgr.errors import ProviderError, SummaryCutOffError

__all__ = [
    "BYTES_PER_TOKEN",
    "ENVELOPE_BYTES",
    "answer_bytes",
    "answer_limit",
    "bounded_client",
    "check_summary_length",
    "response_class",
]

BYTES_PER_TOKEN = 64
"""Bytes of body allowed per token asked for."""

ENVELOPE_BYTES = 256 * 1024
"""Bytes of body allowed whatever the cap: the JSON around the text (ids, usage, metadata)."""

_limit: ContextVar[tuple[int, int, str] | None] = ContextVar("ctxmgr_answer_limit", default=None)
"""(bytes, max_tokens, provider) of the summary call running in this context."""

_DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers that describe the body as it came over the wire, not the decoded bytes kept."""


def answer_bytes(max_tokens: int) -> int:
    """The most bytes of decoded body read for an answer of ``max_tokens`` tokens."""
    return ENVELOPE_BYTES + BYTES_PER_TOKEN * max(1, max_tokens)


@contextmanager
def answer_limit(max_tokens: int, provider: str) -> Iterator[None]:
    """Bound the answers read in this context to :func:`answer_bytes` of ``max_tokens``."""
    token = _limit.set((answer_bytes(max_tokens), max_tokens, provider))
    try:
        yield
    finally:
        _limit.reset(token)


def _too_large(limit: tuple[int, int, str]) -> ProviderError:
    size, max_tokens, provider = limit
    return ProviderError(
        f"the answer exceeds the {size:,} bytes read for a summary of at most {max_tokens} tokens "
        f"({ENVELOPE_BYTES // 1024} KB + {BYTES_PER_TOKEN} bytes a token of --max-summary-tokens); "
        "nothing of it was used",
        provider=provider,
    )


def _http_module(base: type[Any]) -> Any:
    """The HTTP library (``httpx2`` or ``httpx``) that ``base`` or one of its bases is from."""
    for klass in base.__mro__:
        top = klass.__module__.partition(".")[0]
        if top in ("httpx", "httpx2"):
            return sys.modules[top]
    raise TypeError(f"{base.__qualname__} is not an httpx client class")


def response_class(base: type[Any]) -> type[Any]:
    """The response class of the HTTP library (``httpx2`` or ``httpx``) of the client class ``base``."""
    return _http_module(base).Response  # type: ignore[no-any-return]


_BOUNDED: dict[type[Any], type[Any]] = {}
"""Each client class made by :func:`bounded_client`, by its base: made once."""


def bounded_client(base: type[Any]) -> type[Any]:
    """A subclass of the HTTP client class ``base`` (``httpx2.AsyncClient``, the SDK's
    default client class...) whose ``send`` reads the body within :func:`answer_limit`.

    The body is read decoded, chunk by chunk (``aiter_bytes``), and the response handed
    back holds those bytes without the headers of the wire encoding, so the SDK parses
    it as usual. Streamed requests (``stream=True``) and calls outside
    :func:`answer_limit` are left as they are.
    """
    made = _BOUNDED.get(base)
    if made is not None:
        return made
    answer_class = response_class(base)

    class BoundedAsyncClient(base):  # type: ignore[misc]
        async def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            limit = _limit.get()
            if stream or limit is None:
                return await super().send(request, stream=stream, **kwargs)
            # Redirects are followed here, not by the HTTP library: it reads a redirect's
            # body whole, decoded, before any bound could apply.
            follow = kwargs.pop("follow_redirects", self.follow_redirects)
            history: list[Any] = []
            while True:
                response = await super().send(request, stream=True, follow_redirects=False, **kwargs)
                try:
                    content = await _bounded_body(response, limit)
                finally:
                    await response.aclose()
                following = response.next_request if follow else None
                if following is None:
                    break
                history.append(response)
                if len(history) > self.max_redirects:
                    raise ProviderError(
                        f"the server redirected the request more than {self.max_redirects} times", provider=limit[2]
                    )
                request = following
            headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DROPPED_HEADERS]
            return answer_class(
                response.status_code,
                headers=headers,
                content=content,
                request=request,
                extensions=response.extensions,
                history=history,
            )

    BoundedAsyncClient.__qualname__ = f"Bounded{base.__name__}"
    _BOUNDED[base] = BoundedAsyncClient
    return BoundedAsyncClient


async def _bounded_body(response: Any, limit: tuple[int, int, str]) -> bytes:
    """The decoded body of a streamed ``response``, or a :class:`ProviderError` as soon
    as it passes the bound (or declares more than one content coding)."""
    codings = [c.strip() for c in response.headers.get("content-encoding", "").split(",") if c.strip()]
    if len(codings) > 1:
        raise ProviderError(
            f"the answer is encoded {len(codings)} times over ({', '.join(codings)}): refused unread, "
            "as each layer of decoding multiplies its size",
            provider=limit[2],
        )
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit[0]:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def check_summary_length(text: str, max_tokens: int, provider: str) -> str:
    """``text``, or a :class:`ProviderError` when it is far longer than ``max_tokens``."""
    estimate, bound = summary_length(text, max_tokens)
    if estimate > bound:
        raise SummaryCutOffError(
            f"the answer's text is about {estimate:,} tokens, more than {TEXT_TOKENS_FACTOR} times the "
            f"{max_tokens} asked for (--max-summary-tokens): not a summary of that length; nothing of it was used",
            provider=provider,
        )
    return text
