"""Asking git about a work tree a stranger may have changed.

Git finds its repository by looking up from the folder it runs in, and the first thing
that looks like one wins: a folder committed with ``HEAD``, ``config``, ``objects/``
and ``refs/`` in it is taken for a bare repository, whose empty index and ignore rules
are then the attacker's. So ctxmgr finds the work tree itself (the nearest ``.git``
above, which no commit can add: git refuses the name) and names its repository and
work tree to git explicitly. ``core.fsmonitor`` is switched off, because a repository's
own ``.git/config`` could name a program there.
"""

from __future__ import annotations

import os
import subprocess

__all__ = ["git_command", "tracked_files", "work_tree"]


def work_tree(folder: str | os.PathLike[str]) -> str | None:
    """The top of the git work tree holding ``folder`` (its real path), found without
    running git; ``None`` outside one."""
    current = os.path.realpath(folder)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def git_command(top: str, folder: str | os.PathLike[str], *arguments: str) -> list[str]:
    """``git ARGUMENTS`` run in ``folder`` of the work tree ``top``, its repository named
    so that nothing inside the tree can stand in for it."""
    return [
        "git",
        "-c",
        "core.fsmonitor=false",
        f"--git-dir={os.path.join(top, '.git')}",
        f"--work-tree={top}",
        "-C",
        os.fspath(folder),
        *arguments,
    ]


def tracked_files(top: str, folder: str | os.PathLike[str]) -> list[str] | str:
    """The files git tracks below ``folder`` of the work tree ``top``, relative to
    ``folder``; why not, when git cannot say (not installed, a repository of another user)."""
    command = git_command(top, os.path.realpath(folder), "ls-files", "-z", "--", ".")
    try:
        done = subprocess.run(command, capture_output=True, timeout=120, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "git is not installed" if isinstance(exc, FileNotFoundError) else f"git failed: {exc}"
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[0] if lines else f"git exited with status {done.returncode}"
    return [os.fsdecode(raw) for raw in done.stdout.split(b"\0") if raw]
