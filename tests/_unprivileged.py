"""Run a command as an ordinary user would, even when the tests run as root.

CI and the developers' machines run as root, and root reads, writes and chowns any file
whatever its mode, so "unreadable folder" or "cannot keep the owner" would never happen.
``setpriv`` (util-linux) drops the capabilities that give root those powers
(``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``, ``CAP_CHOWN``, ``CAP_FOWNER``) for one
real child process: file modes then apply to it as to anyone, while it keeps uid 0 and so
can still run the interpreter installed under ``/root``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

import pytest

__all__ = ["CTXMGR", "run_unprivileged", "unprivileged_prefix"]

CTXMGR = [sys.executable, "-m", "ctxmgr"]

_DROPPED = "-dac_override,-dac_read_search,-chown,-fowner"


def unprivileged_prefix() -> list[str]:
    """The command prefix that runs what follows without root's file powers.

    Not root: nothing to drop, the prefix is empty. Root without ``setpriv``: the test
    is skipped with the reason (it could only pass vacuously).
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file modes cannot be enforced on a child")
    return [setpriv, "--inh-caps=-all", f"--bounding-set={_DROPPED}", "--"]


def run_unprivileged(arguments: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """``ctxmgr ARGUMENTS`` in a child process that file modes apply to."""
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("timeout", 60)
    return subprocess.run([*unprivileged_prefix(), *CTXMGR, *arguments], check=False, **kwargs)
