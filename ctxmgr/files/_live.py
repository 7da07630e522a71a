"""Whether a file about to be rewritten in place is live: still being written by another process.

An agent tool appends to its session log as the session goes on; a rewrite in place
racing with it loses what the tool writes after the read (or the tool writes on into a
file it no longer holds). Two signs, checked just before an in-place rewrite commits:

* another process has the file open for writing (Linux: a link under ``/proc/PID/fd``
  to the file whose ``/proc/PID/fdinfo`` flags open it write-only or read-write);
  checked for every in-place rewrite, of any format. Where ``/proc`` cannot be read (another
  system, a process of another user) the check finds nothing and says nothing: it is a
  guard, not a guarantee;
* the file changed in the last :data:`RECENT_SECONDS` (a tool may append and close):
  checked for session logs only (a registry entry's ``session_log``), since a script
  that writes a conversation and then runs ``trim -i`` on it is no race.

``--force`` skips both, and nothing else (links, ownership, ``--strict``, ``--lossless``
keep their rules).
"""

from __future__ import annotations

import os
import time

from ctxmgr.errors import OutputError

__all__ = ["RECENT_SECONDS", "live_reason", "refuse_live", "writers"]

RECENT_SECONDS = 3.0
"""A session log changed this recently may still be written to."""


def writers(path: str) -> list[int]:
    """The ids of the other processes that have ``path`` open for writing (Linux's
    ``/proc``; empty where it cannot be read)."""
    try:
        target = os.stat(path)
        pids = [entry for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return []
    real = os.path.realpath(path)
    own = str(os.getpid())
    found: list[int] = []
    for pid in pids:
        if pid == own:
            continue
        folder = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(folder)
        except OSError:
            continue  # gone, or another user's
        for fd in fds:
            try:
                if os.readlink(f"{folder}/{fd}") != real:
                    continue
                held = os.stat(f"{folder}/{fd}")
            except OSError:
                continue
            if (held.st_dev, held.st_ino) == (target.st_dev, target.st_ino) and _open_for_writing(pid, fd):
                found.append(int(pid))
                break
    return found


def _open_for_writing(pid: str, fd: str) -> bool:
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as info:
            for line in info:
                if line.startswith("flags:"):
                    return int(line.split()[1], 8) & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR)
    except (OSError, ValueError, IndexError):
        pass  # gone since it was listed, or unreadable: not known to write
    return False


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as comm:
            return comm.read().strip()
    except OSError:
        return "?"


def live_reason(path: str, *, session_log: bool, now: float | None = None) -> str | None:
    """Why ``path`` must not be rewritten in place now (``None``: nothing says it is live)."""
    holders = writers(path)
    if holders:
        named = ", ".join(f"{pid} ({_command(pid)})" for pid in holders[:3])
        return f"another process has it open for writing (process {named})"
    if session_log:
        try:
            age = (time.time() if now is None else now) - os.stat(path).st_mtime
        except OSError:
            return None
        if -RECENT_SECONDS < age < RECENT_SECONDS:
            return f"it changed {max(age, 0.0):.1f} s ago: its tool may still be writing this session"
    return None


def refuse_live(path: str, *, session_log: bool) -> None:
    """Raise :class:`~ctxmgr.errors.OutputError` if ``path`` is live (see :func:`live_reason`)."""
    reason = live_reason(path, session_log=session_log)
    if reason is not None:
        raise OutputError(f"{path}: not rewritten in place: {reason} (--force rewrites it anyway)")
