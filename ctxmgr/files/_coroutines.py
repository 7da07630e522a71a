"""Driving coroutines: one that never waits, without an event loop; many, in order.

A plain trim awaits nothing that suspends: :func:`run_without_loop` drives it by hand,
which spares importing asyncio at start-up and lets forked workers run lines directly.
:func:`ordered` runs a window of them at once (summaries) and yields results in order;
:func:`ordered_sized` bounds the window by the input it holds as well.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import asyncio

__all__ = ["ordered", "ordered_sized", "run_without_loop"]

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
    raise RuntimeError("a run taken to never wait (a trim, a conversion, the offline digest) waited on something")


async def ordered(jobs: Iterator[Awaitable[T]], concurrency: int) -> AsyncIterator[T]:
    """Run ``jobs`` with at most ``concurrency`` in flight; yield results in order."""
    async for result in ordered_sized(((0, job) for job in jobs), concurrency):
        yield result


async def ordered_sized(
    jobs: Iterator[tuple[int, Awaitable[T]]], most: int, most_bytes: int = 0, *, least: int = 1
) -> AsyncIterator[T]:
    """Run ``jobs`` (each with its input's size) ahead of the one whose result is due, and
    yield the results in order. At most ``most`` run at once and, once ``least`` run, no
    more than ``most_bytes`` of input is held (0: no bound)."""
    if most <= 1:
        for _size, job in jobs:
            yield await job
        return
    import asyncio  # only here: a plain trim runs without an event loop

    window: deque[tuple[int, asyncio.Future[T]]] = deque()
    held = 0
    try:
        for size, job in jobs:
            window.append((size, asyncio.ensure_future(job)))
            held += size
            # Let the new job run to its first wait (a summary's request under way) before
            # the next is read: otherwise a window of hundreds reads and prepares every
            # conversation before the first request leaves, and the slots sit idle.
            await asyncio.sleep(0)
            while len(window) >= most or (most_bytes and held >= most_bytes and len(window) >= least):
                done, task = window.popleft()
                held -= done
                yield await task
        while window:
            yield await window.popleft()[1]
    finally:
        for _size, task in window:
            task.cancel()
