"""How many processes should compact a dataset file (see :mod:`ctxmgr.files._parallel`)."""

from __future__ import annotations

import os
import sys
from typing import Any

from ctxmgr.files._settings import Settings, never_waits
from ctxmgr.state._managers import BaseContextManager

__all__ = ["process_count"]

_PARALLEL_MIN_BYTES = 8 << 20  # below this, starting processes costs more than it saves
_BYTES_PER_JOB = 4 << 20
_MAX_JOBS = 8


def process_count(read_stat: os.stat_result | None, manager: BaseContextManager[Any], settings: Settings) -> int:
    """How many processes should compact this dataset (1: this one alone).

    Only a manager that never waits (a trim, a conversion, the offline digest: its lines
    are independent and each is pure work for the CPU; a network summarizer's run is
    paced by its --concurrency instead), on a regular file large enough to pay for the
    processes, on Linux (fork), and only while this process runs no other thread
    (forking a threaded process is unsafe).
    """
    if read_stat is None or read_stat.st_size < _PARALLEL_MIN_BYTES or settings.jobs == 1:
        return 1
    if not never_waits(manager):
        return 1
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return 1
    import threading

    if threading.active_count() > 1:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    wanted = settings.jobs if settings.jobs is not None else min(cpus, _MAX_JOBS)
    return max(1, min(wanted, read_stat.st_size // _BYTES_PER_JOB))
