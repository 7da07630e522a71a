"""Run ctxmgr with its standard error on a pseudo-terminal, as a person sees it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["progress_shown_at_once", "read_until_closed", "stderr_on_a_terminal"]


def read_until_closed(leader: int) -> bytes:
    """Every byte a pseudo-terminal's other end wrote, read as it comes (a full terminal
    buffer would block the child) until that end is closed."""
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # the other end is closed: all was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def progress_shown_at_once(arguments: Sequence[str], *, show_after: float = 0.0) -> list[str]:
    """The command running ``ctxmgr ARGUMENTS`` with the progress bar shown after
    ``show_after`` seconds and redrawn at every step."""
    code = (
        "import runpy, sys\n"
        "from ctxmgr.cli import progress\n"
        f"progress.SHOW_AFTER, progress.REDRAW_EVERY = {show_after}, 0.0\n"
        f"sys.argv = ['ctxmgr', *{list(arguments)!r}]\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    return [sys.executable, "-c", code]


def stderr_on_a_terminal(
    command: Sequence[str],
    *,
    cwd: Path | None = None,
    stdin: Any = subprocess.DEVNULL,
    env: Mapping[str, str] | None = None,
) -> tuple[int, bytes]:
    """Run ``command`` with standard error on a pseudo-terminal (standard output
    discarded); its exit code and every byte the terminal received."""
    import pty

    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            list(command), cwd=cwd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=follower, env=env
        )
        os.close(follower)
        shown = read_until_closed(leader)
        process.wait(timeout=60)
    finally:
        os.close(leader)
    return process.returncode, shown
