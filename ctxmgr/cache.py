"""A summary cache on disk, and a concurrency limit, both as summarizer wrappers.

Cached summaries are keyed by a hash of everything that determines the answer: the
provider and model (with API style and address), the instruction, the token cap and the
exact text sent. A second run over the same files therefore makes no model call and
writes identical output, and an interrupted dataset run resumes where it stopped.

Entries are small JSON files written atomically (a reader sees a whole entry or none),
not forced to disk one by one: an entry lost or cut short by a power failure is like a
corrupt one, ignored (and rewritten after the next call); the cache never fails a run.
Nothing but the key's inputs' hash and the summary is stored: no API key, no
conversation text.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import secrets
import time
from pathlib import Path

import orjson

from ctxmgr.io import TEMP_SUFFIX
from ctxmgr.providers.base import Summarizer, aclose_summarizer, aopen_summarizer

__all__ = ["CachingSummarizer", "LimitedSummarizer", "default_cache_dir"]

_VERSION = 1


def default_cache_dir() -> Path:
    """``$CTXMGR_CACHE_DIR``, else ``$XDG_CACHE_HOME/ctxmgr``, else ``~/.cache/ctxmgr``."""
    explicit = os.environ.get("CTXMGR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ctxmgr"


class _Forwarding:
    inner: Summarizer

    async def aopen(self) -> None:
        """Let the wrapped summarizer keep its client for the running loop."""
        await aopen_summarizer(self.inner)

    async def aclose(self) -> None:
        """Close what the wrapped summarizer holds for the running loop."""
        await aclose_summarizer(self.inner)


class CachingSummarizer(_Forwarding):
    """Answers from ``folder`` when the same request was made before.

    Args:
        inner: The summarizer that makes real calls.
        folder: Where entries live (created on first write).
        identity: What, beside the request, decides the answer (provider, model, API
            style, base URL); part of the key.
    """

    def __init__(self, inner: Summarizer, folder: Path, identity: str) -> None:
        self.inner = inner
        self.folder = folder
        self.identity = identity
        self.name = inner.name
        self.hits = 0
        self.misses = 0

    def key(self, text: str, *, instructions: str, max_tokens: int) -> str:
        """The entry name for one request."""
        material = orjson.dumps([_VERSION, self.identity, instructions, max_tokens, text])
        return hashlib.sha256(material).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def lookup(self, key: str) -> str | None:
        """The cached summary for ``key``, or ``None`` (missing, unreadable or corrupt)."""
        try:
            entry = orjson.loads(self._path(key).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        summary = entry.get("summary") if isinstance(entry, dict) else None
        if not isinstance(summary, str) or entry.get("key") != key:
            return None
        return summary

    def store(self, key: str, summary: str) -> None:
        """Save a summary; failure to write only costs a future call."""
        path = self._path(key)
        data = orjson.dumps({"key": key, "summary": summary, "created": time.time()})
        # Any failure (disk full, read-only folder...) must not fail the run.
        with contextlib.suppress(Exception):
            try:
                _write_entry(path, data)
            except FileNotFoundError:  # the first entry of its folder
                path.parent.mkdir(parents=True, exist_ok=True)
                _write_entry(path, data)

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        key = self.key(text, instructions=instructions, max_tokens=max_tokens)
        cached = self.lookup(key)
        if cached is not None:
            self.hits += 1
            return cached
        self.misses += 1
        summary = await self.inner.summarize(text, instructions=instructions, max_tokens=max_tokens)
        if summary.strip():
            # An empty answer is not cached: it leaves the conversation unchanged, and a
            # later run should try again.
            self.store(key, summary)
        return summary


def _write_entry(path: Path, data: bytes) -> None:
    """Write a cache entry atomically: a temporary file beside it, renamed into place.

    Not :func:`ctxmgr.io.atomic_write`: that one makes an output durable (an fsync) and
    sweeps the folder for leftovers of killed runs (a directory listing). Once per
    summary, on the event loop, that took ~0.5 ms here (an fsync can take several ms
    on other disks), during which no other request was sent or answer read. A cache
    entry needs neither: a lost one costs one call. A temporary left by a SIGKILL
    between the two steps has the name :func:`ctxmgr.io.remove_stale_temporaries`
    recognises.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "wb") as handle:  # closes fd
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class LimitedSummarizer(_Forwarding):
    """At most ``limit`` calls of ``inner`` in flight, across files and dataset lines."""

    def __init__(self, inner: Summarizer, limit: int) -> None:
        self.inner = inner
        self.name = inner.name
        self.limit = limit
        self._semaphore: asyncio.Semaphore | None = None
        self.calls = 0
        self.tokens = 0
        """Estimated input tokens of the requests made (for the progress bar)."""

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.limit)
        async with self._semaphore:
            summary = await self.inner.summarize(text, instructions=instructions, max_tokens=max_tokens)
            self.calls += 1
            self.tokens += (len(text) + len(instructions)) // 4
            return summary
