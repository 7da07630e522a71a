"""Counting the lines a piece of work executes in some files: a measure of work that a
busy machine does not disturb, for tests that work grows linearly with input."""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from types import FrameType
from typing import Any


def lines_run(work: Callable[[], Any], files: Collection[str]) -> int:
    """How many lines of ``files`` (resolved paths) ``work()`` executed."""
    count = 0

    def outer(frame: FrameType, event: str, arg: Any) -> Any:
        return inner if frame.f_code.co_filename in files else None

    def inner(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return inner

    sys.settrace(outer)
    try:
        work()
    finally:
        sys.settrace(None)
    return count
