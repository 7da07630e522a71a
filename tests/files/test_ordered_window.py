"""The ordered window of a dataset run: results in input order, jobs run ahead of a slow
head, bounded by a count and by the bytes of input held."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any

from ctxmgr.files._coroutines import ordered_sized as _ordered


class _Jobs:
    """Jobs that record when they start and finish; job ``slow`` waits for ``release``."""

    def __init__(self, count: int, *, size: int = 1, slow: int | None = None) -> None:
        self.count, self.size, self.slow = count, size, slow
        self.started: list[int] = []
        self.finished: list[int] = []
        self.running = 0
        self.most_running = 0
        self.release = asyncio.Event()

    async def job(self, index: int) -> int:
        self.started.append(index)
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        if index == self.slow:
            await self.release.wait()
        else:
            await asyncio.sleep(0)
        self.running -= 1
        self.finished.append(index)
        return index

    def __iter__(self) -> Iterator[tuple[int, Coroutine[Any, Any, int]]]:
        for index in range(self.count):
            yield self.size, self.job(index)


async def _collect(jobs: _Jobs, most: int, most_bytes: int = 0, least: int = 1) -> list[int]:
    results = []
    async for value in _ordered(iter(jobs), most, most_bytes, least=least):
        results.append(value)
    return results


def test_results_come_in_order_and_at_most_most_run_at_once() -> None:
    jobs = _Jobs(50)
    assert asyncio.run(_collect(jobs, 8)) == list(range(50))
    assert jobs.most_running <= 8


def test_one_at_a_time_runs_each_job_after_the_previous() -> None:
    jobs = _Jobs(5)
    assert asyncio.run(_collect(jobs, 1)) == list(range(5))
    assert jobs.most_running == 1
    assert jobs.started == jobs.finished == list(range(5))


def test_the_window_runs_ahead_of_a_slow_head() -> None:
    """While job 0 waits, the next most - 1 jobs start and finish; none beyond them."""

    async def scenario() -> tuple[list[int], list[int], list[int]]:
        jobs = _Jobs(40, slow=0)
        collecting = asyncio.ensure_future(_collect(jobs, 16))
        for _ in range(50):
            await asyncio.sleep(0)
        seen = list(jobs.finished)
        jobs.release.set()
        return seen, await collecting, jobs.started

    finished_while_waiting, results, started = asyncio.run(scenario())
    assert finished_while_waiting == list(range(1, 16))
    assert results == list(range(40))
    assert sorted(started) == list(range(40))


def test_the_bytes_held_stop_the_window_but_never_below_least() -> None:
    async def scenario(most_bytes: int, least: int) -> list[int]:
        jobs = _Jobs(40, size=10, slow=0)
        collecting = asyncio.ensure_future(_collect(jobs, 16, most_bytes, least))
        for _ in range(50):
            await asyncio.sleep(0)
        started = sorted(jobs.started)
        jobs.release.set()
        assert await collecting == list(range(40))
        return started

    # 10 bytes a job: 50 bytes are reached with 5 jobs; at least 3 run anyway.
    assert asyncio.run(scenario(50, 3)) == list(range(5))
    # A byte bound below what `least` jobs hold lets `least` of them run.
    assert asyncio.run(scenario(5, 8)) == list(range(8))
    # No byte bound: the count alone.
    assert asyncio.run(scenario(0, 1)) == list(range(16))


def test_each_job_starts_before_the_next_is_read() -> None:
    """A job runs up to its first wait as soon as it joins the window, so the first
    summary request goes out after one conversation is read, not after the window's
    worth of them (256 at --concurrency 16)."""
    events: list[str] = []

    async def job(index: int) -> int:
        events.append(f"start {index}")
        await asyncio.sleep(0)
        return index

    def jobs() -> Iterator[tuple[int, Coroutine[Any, Any, int]]]:
        for index in range(20):
            events.append(f"read {index}")
            yield 1, job(index)

    async def collect() -> list[int]:
        return [value async for value in _ordered(jobs(), 16)]

    assert asyncio.run(collect()) == list(range(20))
    assert events[:4] == ["read 0", "start 0", "read 1", "start 1"]
    assert events.count("start 19") == 1
