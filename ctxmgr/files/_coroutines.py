"""Driving coroutines: one that never waits, without an event loop; many, in order.

A plain trim awaits nothing that suspends: :func:`run_without_loop` drives it by hand,
which spares importing asyncio at start-up and lets forked workers run lines directly.
:func:`ordered` runs a window of them at once (summaries) and yields results in order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = ["ordered", "run_without_loop"]

T = TypeVar("T")


def run_without_loop(work: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never waits, without an event loop.

    Raises:
        RuntimeError: The coroutine waited on something (it must run in an event loop).
    """
    try:
        work.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    work.close()
    raise RuntimeError("a plain trim waited on something; it must run in an event loop")


async def ordered(jobs: Iterator[Awaitable[T]], concurrency: int) -> AsyncIterator[T]:
    """Run ``jobs`` with at most ``concurrency`` in flight; yield results in order."""
    if concurrency <= 1:
        for job in jobs:
            yield await job
        return
    import asyncio  # only here: a plain trim runs without an event loop

    window: deque[asyncio.Future[T]] = deque()
    try:
        for job in jobs:
            window.append(asyncio.ensure_future(job))
            if len(window) >= concurrency:
                yield await window.popleft()
        while window:
            yield await window.popleft()
    finally:
        for task in window:
            task.cancel()
