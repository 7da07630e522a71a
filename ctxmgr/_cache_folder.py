"""The summary cache's folder on disk: its layout, what in it is trusted, and its
maintenance (:func:`scan_cache`, :func:`prune_cache`, :func:`clear_cache`).

Entries are ``ab/abcd....json`` (the key's hash, under a subfolder named by its first
two characters), written atomically. The folder, a subfolder or an entry that is a link,
is not the user's, or is writable by others, is not trusted (see :mod:`ctxmgr.cache`).
:mod:`ctxmgr.cache` is the public face of these names.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ctxmgr._git import tracked_files, work_tree
from ctxmgr._io import TEMP_SUFFIX
from ctxmgr.errors import InputError

__all__ = [
    "DIR_FLAGS",
    "ENTRY",
    "READ_FLAGS",
    "CacheContents",
    "CacheEntry",
    "ClearResult",
    "clear_cache",
    "distrust",
    "foreign_link",
    "git_tracked",
    "make_folder",
    "prune_cache",
    "scan_cache",
    "write_entry",
]

ENTRY = re.compile(r"[0-9a-f]{64}\.json")
SUBFOLDER = re.compile(r"[0-9a-f]{2}")
TEMPORARY = re.compile(rf"\.[0-9a-f]{{64}}\.json\.\d+\.[0-9a-f]{{8}}{re.escape(TEMP_SUFFIX)}")

# O_NOFOLLOW: an entry that is a link is refused by the kernel (ELOOP), not followed.
# O_NONBLOCK: a FIFO planted under an entry's name must not hang the open.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


# -- trust ---------------------------------------------------------------------------------


def distrust(st: os.stat_result, *, folder: bool) -> str | None:
    """Why a cache folder or entry with this status must not be trusted, or ``None``."""
    if stat.S_ISLNK(st.st_mode):
        return "a link"
    if folder and not stat.S_ISDIR(st.st_mode):
        return "not a folder"
    if not folder and not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != os.geteuid():
        return "not owned by you"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "writable by others"
    return None


def foreign_link(path: Path) -> str | None:
    """Why the cache folder, given as a link, is not trusted: the link is someone else's.

    A link the user made may point anywhere; one made by someone else (in a shared
    folder such as /tmp) could point the cache at any folder of the user's.
    """
    try:
        link = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(link.st_mode) and link.st_uid != os.geteuid():
        return "a link not owned by you"
    return None


def git_tracked(folder: Path) -> set[str] | str:
    """The entries (``ab/abcd....json``) git tracks in the cache ``folder``: none outside
    a git work tree. A reason instead when git cannot say (not installed, a repository of
    another user), because then no entry there can be told from a committed one."""
    top = work_tree(folder)
    if top is None:
        return set()
    tracked = tracked_files(top, folder)
    if isinstance(tracked, str):
        return f"inside the git work tree {top}, and git cannot tell committed entries ({tracked})"
    return set(tracked)


def make_folder(path: Path, *, parents: bool) -> None:
    """Create ``path`` with mode 0o700 exactly (the umask could leave it open or unusable).

    A folder that already exists is left as it is: one the user made (``--cache DIR``)
    keeps the mode they chose, and the caller checks that it can be trusted.
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        return
    except FileNotFoundError:
        if not parents or path.parent == path:
            raise
        make_folder(path.parent, parents=True)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            return
    os.chmod(path, 0o700)


def write_entry(path: Path, data: bytes) -> None:
    """Write a cache entry atomically: a temporary file beside it, renamed into place.

    Not :func:`ctxmgr._io.atomic_write`: that one makes an output durable (an fsync) and
    sweeps the folder for leftovers of killed runs (a directory listing). Once per
    summary, on the event loop, that took ~0.5 ms here (an fsync can take several ms
    on other disks), during which no other request was sent or answer read. A cache
    entry needs neither: a lost one costs one call. A temporary left by a SIGKILL
    between the two steps is removed by ``ctxmgr cache clear``.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with open(fd, "wb") as handle:  # closes fd
            # Summaries are private: 0o600 whatever the umask.
            os.fchmod(fd, 0o600)
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# -- maintenance: info, prune, clear -----------------------------------------------------------


@dataclass(frozen=True)
class CacheEntry:
    """One file of the cache: where it is, its size and when it was last used."""

    path: str
    size: int
    mtime: float


@dataclass
class CacheContents:
    """What a cache folder holds (see :func:`scan_cache`).

    Attributes:
        folder: The cache folder.
        exists: Whether it exists.
        untrusted: Why the folder itself is not trusted (``None``: it is).
        entries: Trusted entries (ours, not writable by others), oldest first.
        temporaries: Leftovers of writes killed halfway.
        ignored: ``(path, reason)`` of subfolders and entries that are not trusted.
        other: Files and folders whose names are not the cache's (left alone).
    """

    folder: Path
    exists: bool = False
    untrusted: str | None = None
    entries: list[CacheEntry] = field(default_factory=list)
    temporaries: list[CacheEntry] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)
    other: int = 0

    @property
    def size(self) -> int:
        """Bytes taken by the trusted entries."""
        return sum(entry.size for entry in self.entries)


@dataclass
class ClearResult:
    """What :func:`clear_cache` or :func:`prune_cache` removed and left."""

    removed: int = 0
    removed_bytes: int = 0
    left: list[tuple[str, str]] = field(default_factory=list)


def _open_root(folder: Path) -> int | None:
    """A descriptor of the cache folder, ``None`` if it does not exist.

    Raises:
        InputError: it is not a folder the user owns that nobody else may write.
    """
    try:
        fd = os.open(folder, DIR_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"cannot open the cache folder: {exc.strerror}", source=str(folder)) from None
    reason = foreign_link(folder) or distrust(os.fstat(fd), folder=True)
    if reason is not None:
        os.close(fd)
        raise InputError(
            f"cache folder {reason}; ctxmgr neither trusts nor changes it (chmod go-w, or use another --cache)",
            source=str(folder),
        )
    return fd


def scan_cache(folder: Path) -> CacheContents:
    """List ``folder``'s entries without following any link; one pass, no file read."""
    contents = CacheContents(folder=folder)
    try:
        root = _open_root(folder)
    except InputError as exc:
        contents.exists, contents.untrusted = True, exc.message
        return contents
    if root is None:
        return contents
    contents.exists = True
    try:
        for name, sub, reason in _subfolders(root):
            if sub is not None:
                _scan_subfolder(sub, folder / name, contents)
            elif reason is not None:
                contents.ignored.append((str(folder / name), reason))
            else:
                contents.other += 1
    finally:
        os.close(root)
    contents.entries.sort(key=lambda entry: (entry.mtime, entry.path))
    return contents


def _subfolders(root: int) -> Iterator[tuple[str, int | None, str | None]]:
    """Each name in the cache folder ``root``, with what it is.

    ``(name, descriptor, None)`` for a trusted two-letter subfolder (the descriptor is
    closed when the caller asks for the next one), ``(name, None, reason)`` for one that
    is not trusted, ``(name, None, None)`` for any other name.
    """
    with os.scandir(root) as listing:
        names = sorted(item.name for item in listing)
    for name in names:
        if not SUBFOLDER.fullmatch(name):
            yield name, None, None
            continue
        try:
            sub = os.open(name, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=root)
        except OSError as exc:
            status = _lstat_at(root, name)
            reason = distrust(status, folder=True) if status is not None else None
            yield name, None, reason or f"unreadable: {exc.strerror}"
            continue
        try:
            reason = distrust(os.fstat(sub), folder=True)
            yield (name, sub, None) if reason is None else (name, None, reason)
        finally:
            os.close(sub)


def _lstat_at(folder: int, name: str) -> os.stat_result | None:
    try:
        return os.lstat(name, dir_fd=folder)
    except OSError:
        return None


def _scan_subfolder(sub: int, path: Path, contents: CacheContents) -> None:
    with os.scandir(sub) as listing:
        names = [item.name for item in listing]
    for name in names:
        status = _lstat_at(sub, name)
        if status is None:
            continue  # removed meanwhile
        record = CacheEntry(str(path / name), status.st_size, status.st_mtime)
        if TEMPORARY.fullmatch(name) and stat.S_ISREG(status.st_mode):
            contents.temporaries.append(record)
        elif _is_entry(name, path.name):
            reason = distrust(status, folder=False)
            if reason is None:
                contents.entries.append(record)
            else:
                contents.ignored.append((record.path, reason))
        else:
            contents.other += 1


def _is_entry(name: str, subfolder: str) -> bool:
    return ENTRY.fullmatch(name) is not None and name.startswith(subfolder)


def prune_cache(folder: Path, max_size: int) -> ClearResult:
    """Remove the least recently used entries until the trusted entries fit ``max_size`` bytes.

    Raises:
        InputError: the folder is not the user's, or others may write it.
    """
    result = ClearResult()
    contents = scan_cache(folder)
    if contents.untrusted is not None:
        raise InputError(contents.untrusted, source=str(folder))
    size = contents.size
    for entry in contents.entries:  # oldest first
        if size <= max_size:
            break
        with contextlib.suppress(FileNotFoundError):  # another run removed it: as good
            _unlink_entry(folder, entry.path)
            result.removed += 1
            result.removed_bytes += entry.size
        size -= entry.size
    result.left = contents.ignored
    return result


def _unlink_entry(folder: Path, path: str) -> None:
    """Remove one file of the cache through its subfolder, never through a link."""
    relative = Path(path).relative_to(folder)
    root = os.open(folder, DIR_FLAGS)
    try:
        sub = os.open(relative.parent.name, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=root)
        try:
            os.unlink(relative.name, dir_fd=sub)
        finally:
            os.close(sub)
    finally:
        os.close(root)


def clear_cache(folder: Path) -> ClearResult:
    """Remove every entry and leftover temporary from ``folder``, and its emptied subfolders.

    Only names the cache uses, only inside two-letter subfolders the user owns that
    nobody else may write, and never through a link: an entry planted there by someone
    else (or as a link) is removed as well (unlinking never touches a link's target);
    a subfolder that is not trusted is left, and listed in :attr:`ClearResult.left`.

    Raises:
        InputError: the folder is not the user's, or others may write it.
    """
    result = ClearResult()
    root = _open_root(folder)
    if root is None:
        return result
    try:
        for name, sub, reason in _subfolders(root):
            if sub is None:
                if reason is not None:
                    result.left.append((str(folder / name), reason))
                continue
            with os.scandir(sub) as listing:
                names = [item.name for item in listing]
            remaining, removed = len(names), result.removed
            for item in names:
                if not (TEMPORARY.fullmatch(item) or _is_entry(item, name)):
                    continue
                status = _lstat_at(sub, item)
                if status is None or stat.S_ISDIR(status.st_mode):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(item, dir_fd=sub)
                    result.removed += 1
                    result.removed_bytes += status.st_size if stat.S_ISREG(status.st_mode) else 0
                    remaining -= 1
            if remaining == 0 and result.removed > removed:  # emptied here, not found empty
                with contextlib.suppress(OSError):  # a run just stored an entry there
                    os.rmdir(name, dir_fd=root)
    finally:
        os.close(root)
    return result
