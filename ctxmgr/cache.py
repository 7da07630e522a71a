"""A summary cache on disk, as a summarizer wrapper, and its maintenance.

Cached summaries are keyed by a hash of everything that determines the answer: the
provider and model, the API style, the address the request really goes to (a base URL
flag, else the SDK's environment variable, else its default), the instruction, the
token cap and the exact text sent. A second run over the same files therefore makes no
model call and writes identical output, and an interrupted dataset run resumes where it
stopped; a run against another server never gets this server's answers.

Entries are small JSON files written atomically (a reader sees a whole entry or none),
not forced to disk one by one: an entry lost or cut short by a power failure is like a
corrupt one, ignored (and rewritten after the next call); the cache never fails a run.
Nothing but the key's inputs' hash and the summary is stored: no API key, no
conversation text.

The cache folder is input like any other: whoever can write an entry decides what a
conversation's summary is. Folders are created ``0o700`` and entries ``0o600`` (whatever
the umask), and the folder, an entry's subfolder or an entry that is not owned by the
user running ctxmgr, is writable by group or others, or is a link (subfolders and
entries are never followed), is not trusted: a lookup there is a miss, nothing is
stored there, and :class:`CacheStats` counts it for the run's report. A cache folder
inside a git work tree (``--cache .ctxmgr-cache``, restored by a CI cache step) holds
the files a checkout wrote too, owned by the user like the rest: an entry git tracks
came from a commit, anyone's pull request, and is ignored the same way; when git cannot
say what it tracks there, the whole folder is. Once a run has
stored entries, :meth:`CachingSummarizer.finish` evicts the oldest entries (by
modification time; a hit refreshes it) until the cache fits its size cap.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import orjson

from ctxmgr._cache_folder import (
    READ_FLAGS,
    CacheContents,
    CacheEntry,
    ClearResult,
    clear_cache,
    distrust,
    foreign_link,
    git_tracked,
    make_folder,
    prune_cache,
    scan_cache,
    write_entry,
)
from ctxmgr._summarizer import Summarizer, aclose_summarizer, aopen_summarizer, summary_far_too_long
from ctxmgr.errors import InputError, UsageError

__all__ = [
    "DEFAULT_MAX_SIZE",
    "CacheContents",
    "CacheEntry",
    "CacheStats",
    "CachingSummarizer",
    "ClearResult",
    "cache_identity",
    "clear_cache",
    "default_cache_dir",
    "entry_key",
    "find_cache",
    "format_size",
    "parse_size",
    "prune_cache",
    "resolve_max_size",
    "scan_cache",
]

_VERSION = 1

DEFAULT_MAX_SIZE = 256_000_000
"""The cache's size cap when neither ``--cache-max-size`` nor ``CTXMGR_CACHE_MAX_SIZE`` sets one."""


def default_cache_dir() -> Path:
    """``$CTXMGR_CACHE_DIR``, else the platform's user cache folder for ctxmgr.

    On Linux that is ``$XDG_CACHE_HOME/ctxmgr``, else ``~/.cache/ctxmgr``
    (``platformdirs.user_cache_path``).
    """
    explicit = os.environ.get("CTXMGR_CACHE_DIR", "").strip()
    if explicit:
        return Path(explicit)
    import platformdirs

    return platformdirs.user_cache_path("ctxmgr", appauthor=False)


def cache_identity(summarizer: Summarizer, *, api_style: str) -> str:
    """What, beside the request, decides a summarizer's answer: part of the cache key.

    The provider and model, the API style and the address requests really go to
    (``endpoint()`` of the summarizer or of the one it wraps, where it has one: the
    base URL flag, the SDK's environment variable or its default), so an answer from
    one server is never served for another.
    """
    address = ""
    target: object = summarizer
    for _ in range(16):  # through wrappers (each with ``inner``) to the provider
        endpoint = getattr(target, "endpoint", None)
        if callable(endpoint):
            address = str(endpoint())
            break
        target = getattr(target, "inner", None)
        if target is None:
            break
    return f"{summarizer.name}|{api_style}|{address}"


def entry_key(identity: str, text: str, *, instructions: str, max_tokens: int) -> str:
    """The cache key of one request to the summarizer ``identity`` names (see
    :func:`cache_identity`): also how a provider batch names each request it carries."""
    material = orjson.dumps([_VERSION, identity, instructions, max_tokens, text])
    return hashlib.sha256(material).hexdigest()


# -- sizes -------------------------------------------------------------------------------

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:([kmgt])(i)?)?b?", re.IGNORECASE)
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4}


def parse_size(text: str) -> int:
    """Bytes in ``text``: ``1048576``, ``500MB`` / ``500M`` (10**6), ``1GiB`` / ``1Gi`` (2**30).

    Raises:
        ValueError: ``text`` is not a size.
    """
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a size (examples: 500MB, 1GiB, 1048576)")
    number, unit, binary = match.groups()
    try:
        value = Decimal(number)
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
        raise ValueError(f"{text!r} is not a size") from None
    if unit:
        value *= (1024 if binary else 1000) ** _POWERS[unit.lower()]
    return int(value)


def format_size(size: int) -> str:
    """``size`` bytes for people: ``512 B``, ``34.5 kB``, ``256 MB`` (powers of 1000)."""
    if size < 1000:
        return f"{size} B"
    value = float(size)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if value < 1000 or unit == "TB":
            return f"{value:.1f} {unit}".replace(".0 ", " ")
    raise AssertionError("unreachable")  # pragma: no cover


def resolve_max_size(flag: str | None, *, flag_name: str = "--cache-max-size") -> tuple[int, str]:
    """``(cap in bytes, where it came from)``: the flag, else ``CTXMGR_CACHE_MAX_SIZE``, else 256 MB.

    Raises:
        UsageError: the value given is not a size; the message names the flag or variable.
    """
    for value, source in ((flag, flag_name), (os.environ.get("CTXMGR_CACHE_MAX_SIZE"), "CTXMGR_CACHE_MAX_SIZE")):
        if value is not None and value.strip():
            try:
                return parse_size(value), source
            except ValueError as exc:
                raise UsageError(f"{source}: {exc}") from None
    return DEFAULT_MAX_SIZE, "default"


@dataclass
class CacheStats:
    """What the cache did during one run, for the run's report (stderr and ``--json``).

    Attributes:
        folder: The cache folder.
        max_size: The size cap in bytes (``None``: no eviction).
        hits: Summaries answered from the cache.
        misses: Summaries requested from the model.
        stored: Entries written.
        ignored_entries: Entries found but not trusted (see the module), by reason.
        ignored_folders: ``(path, reason)`` of folders not trusted: nothing in them is
            read, nothing is stored there.
        not_stored: Summaries not stored because their folder is not trusted.
        store_errors: Summaries that could not be stored (disk full, read-only folder...).
        store_error: The first such failure, as the system worded it.
        corrupt: Entries that could not be parsed (cut short by a crash...), asked again.
        evicted: Oldest entries removed at the end of the run to fit ``max_size``.
        evicted_bytes: Their total size.
        evict_error: Why the size cap could not be applied, if it could not.
    """

    folder: Path
    max_size: int | None = None
    hits: int = 0
    misses: int = 0
    stored: int = 0
    ignored_entries: Counter[str] = field(default_factory=Counter)
    ignored_keys: set[str] = field(default_factory=set, repr=False)
    """Entries already counted: the same one met again (a repeated line) is one entry."""
    ignored_folders: list[tuple[str, str]] = field(default_factory=list)
    not_stored: int = 0
    store_errors: int = 0
    store_error: str | None = None
    corrupt: int = 0
    evicted: int = 0
    evicted_bytes: int = 0
    evict_error: str | None = None

    def warnings(self) -> list[str]:
        """One line per thing the run should know about (without a ``warning:`` prefix)."""
        lines = [
            f"cache: ignored the folder {path} ({reason}): nothing in it is read or stored; "
            "fix its owner or mode (chmod go-w) or use another --cache"
            for path, reason in self.ignored_folders
        ]
        count = sum(self.ignored_entries.values())
        if count:
            reasons = ", ".join(f"{reason}: {n}" for reason, n in sorted(self.ignored_entries.items()))
            lines.append(
                f"cache: ignored {_plural(count, 'entry', 'entries')} in {self.folder} ({reasons}); "
                "the model was asked instead ('ctxmgr cache clear' removes them)"
            )
        if self.store_errors:
            lines.append(
                f"cache: could not store {_plural(self.store_errors, 'summary', 'summaries')} "
                f"in {self.folder}: {self.store_error}"
            )
        if self.corrupt:
            lines.append(
                f"cache: {_plural(self.corrupt, 'entry', 'entries')} could not be read (corrupt or cut short); "
                "the model was asked instead"
            )
        if self.evict_error is not None:
            lines.append(f"cache: could not apply the size cap to {self.folder}: {self.evict_error}")
        return lines

    def notes(self) -> list[str]:
        """Things done as asked that are still worth a line (eviction)."""
        if not self.evicted or self.max_size is None:
            return []
        return [
            f"cache: evicted the {_plural(self.evicted, 'oldest entry', 'oldest entries')} "
            f"({format_size(self.evicted_bytes)}) to stay under {format_size(self.max_size)}"
        ]

    def as_json(self) -> dict[str, Any]:
        """The ``cache`` object of a ``--json`` report."""
        return {
            "folder": str(self.folder),
            "hits": self.hits,
            "misses": self.misses,
            "stored": self.stored,
            "ignored_entries": sum(self.ignored_entries.values()),
            "ignored_reasons": dict(sorted(self.ignored_entries.items())),
            "ignored_folders": [{"path": path, "reason": reason} for path, reason in self.ignored_folders],
            "not_stored": self.not_stored,
            "store_errors": self.store_errors,
            "corrupt": self.corrupt,
            "evicted": self.evicted,
            "evicted_bytes": self.evicted_bytes,
            "evict_error": self.evict_error,
            "max_size": self.max_size,
        }


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


# -- the summarizer wrappers -----------------------------------------------------------------


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
        folder: Where entries live (created on first write, mode 0o700).
        identity: What, beside the request, decides the answer (provider, model, API
            style, effective address: see :func:`cache_identity`); part of the key.
        max_size: Size cap in bytes applied by :meth:`finish`; ``None``: no cap.

    :attr:`stats` counts hits, misses, stores and what was not trusted; call
    :meth:`finish` once the run is over to apply the size cap and get them.
    """

    def __init__(self, inner: Summarizer, folder: Path, identity: str, *, max_size: int | None = None) -> None:
        self.inner = inner
        self.folder = folder
        self.identity = identity
        self.name = inner.name
        self.max_size = max_size
        self.stats = CacheStats(folder=folder, max_size=max_size)
        # Trust decided once per folder and run ("" is the cache folder itself): a
        # folder we own and nobody else may write cannot have its children swapped.
        self._trusted: dict[str, bool] = {}
        # The entries git tracks here (see the module): found with the folder's trust.
        self._tracked: set[str] = set()
        self._finished = False

    @property
    def hits(self) -> int:
        """Summaries answered from the cache so far."""
        return self.stats.hits

    @property
    def misses(self) -> int:
        """Summaries requested from the model so far."""
        return self.stats.misses

    def key(self, text: str, *, instructions: str, max_tokens: int) -> str:
        """The entry name for one request."""
        return entry_key(self.identity, text, instructions=instructions, max_tokens=max_tokens)

    def _tracked_by_git(self, key: str) -> bool:
        """Whether git tracks ``key``'s entry: it came from a commit, not from this user."""
        return f"{key[:2]}/{key}.json" in self._tracked

    def _check(self, name: str, path: Path) -> bool | None:
        """Whether the folder ``name`` can be trusted; ``None`` when it does not exist (yet)."""
        known = self._trusted.get(name)
        if known is not None:
            return known
        try:
            # The cache folder itself may be a link the user made; what it points to is
            # checked. Inside it, a link is never followed.
            status = os.stat(path) if name == "" else os.lstat(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            reason: str | None = f"unreadable: {exc.strerror}"
        else:
            reason = (foreign_link(path) if name == "" else None) or distrust(status, folder=True)
        if reason is None and name == "":
            tracked = git_tracked(path)
            if isinstance(tracked, str):
                reason = tracked
            else:
                self._tracked = tracked
        if reason is not None:
            self.stats.ignored_folders.append((str(path), reason))
        self._trusted[name] = reason is None
        return reason is None

    def _entry_folder(self, key: str, *, create: bool) -> Path | None:
        """The trusted folder of ``key``'s entry (made when ``create``), else ``None``."""
        root = self._check("", self.folder)
        if root is None and create:
            make_folder(self.folder, parents=True)
            root = self._check("", self.folder)
            if root is None:  # a dangling link, say
                raise FileNotFoundError(errno.ENOENT, "the cache folder could not be created")
        if not root:
            return None
        path = self.folder / key[:2]
        trusted = self._check(key[:2], path)
        if trusted is None and create:
            make_folder(path, parents=False)
            trusted = self._check(key[:2], path)
        return path if trusted else None

    def _ignore(self, key: str, reason: str) -> None:
        if key not in self.stats.ignored_keys:
            self.stats.ignored_keys.add(key)
            self.stats.ignored_entries[reason] += 1

    def lookup(self, key: str) -> str | None:
        """The cached summary for ``key``, or ``None`` (missing, untrusted, unreadable or corrupt)."""
        folder = self._entry_folder(key, create=False)
        if folder is None:
            return None
        if self._tracked and self._tracked_by_git(key):
            self._ignore(key, "tracked by git")
            return None
        try:
            fd = os.open(folder / f"{key}.json", READ_FLAGS)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._ignore(key, "a link" if exc.errno == errno.ELOOP else "unreadable")
            return None
        with open(fd, "rb") as handle:  # closes fd
            reason = distrust(os.fstat(fd), folder=False)
            if reason is not None:
                self._ignore(key, reason)
                return None
            try:
                entry = orjson.loads(handle.read())
            except (OSError, orjson.JSONDecodeError):
                entry = None
            summary = entry.get("summary") if isinstance(entry, dict) else None
            if not isinstance(summary, str) or entry.get("key") != key:
                self.stats.corrupt += 1
                return None
            # Eviction removes the least recently *used* entries: a hit counts as a use.
            # A read-only cache still answers, so a failure here changes nothing.
            with contextlib.suppress(OSError):
                os.utime(fd)
        return summary

    def store(self, key: str, summary: str) -> None:
        """Save a summary; failure to write only costs a future call (and is counted)."""
        data = orjson.dumps({"key": key, "summary": summary, "created": time.time()})
        # Any failure (disk full, read-only folder...) must not fail the run.
        try:
            folder = self._entry_folder(key, create=True)
            if folder is None:
                self.stats.not_stored += 1
                return
            write_entry(folder / f"{key}.json", data)
        except Exception as exc:
            self.stats.store_errors += 1
            if self.stats.store_error is None:
                self.stats.store_error = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return
        self.stats.stored += 1

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        """The cached summary of this request, or the inner summarizer's (then stored)."""
        key = self.key(text, instructions=instructions, max_tokens=max_tokens)
        cached = self.lookup(key)
        # An entry far past the length its request asked for (a batch's answer is stored
        # before any summary takes it) is no summary of that request: asked again.
        if cached is not None and not summary_far_too_long(cached, max_tokens):
            self.stats.hits += 1
            return cached
        self.stats.misses += 1
        summary = await self.inner.summarize(text, instructions=instructions, max_tokens=max_tokens)
        if summary.strip():
            # An empty answer is not cached: it leaves the conversation unchanged, and a
            # later run should try again.
            self.store(key, summary)
        return summary

    def finish(self) -> CacheStats:
        """End of a run: evict the oldest entries if the cache outgrew its cap; the stats.

        The cache is scanned once, and only when this run stored entries (the cap
        could not have been crossed otherwise). Idempotent.
        """
        if not self._finished and self.stats.stored and self.max_size is not None:
            self._finished = True
            try:
                pruned = prune_cache(self.folder, self.max_size)
            except (InputError, OSError) as exc:
                self.stats.evict_error = exc.message if isinstance(exc, InputError) else str(exc.strerror or exc)
            else:
                self.stats.evicted += pruned.removed
                self.stats.evicted_bytes += pruned.removed_bytes
        return self.stats


def find_cache(summarizer: object) -> CachingSummarizer | None:
    """The :class:`CachingSummarizer` in a chain of wrappers (each with ``inner``), if any."""
    for _ in range(16):  # a chain is a handful of wrappers; a cycle must not hang
        if summarizer is None or isinstance(summarizer, CachingSummarizer):
            return summarizer
        summarizer = getattr(summarizer, "inner", None)
    return None
