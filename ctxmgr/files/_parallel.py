"""A large dataset compacted by several processes, each taking a stretch of its lines.

A trim, a conversion or the offline digest of a dataset is the same function applied to
each line on its own, and it never waits; parsing, summarizing and writing hold the
interpreter's lock, so threads would not help, but forked processes do: one per CPU (up
to 8) roughly halves the time of a 100 MB dataset on two cores. The output is byte for
byte what one process writes (tests compare them), with the same warnings, errors,
summaries and counts, in line order.

How it runs (Linux only, where ``fork`` is cheap and safe in a single-threaded process):

1. This process reads the first line the ordinary way: it settles the dataset's format
   (every line must share it) and is written first.
2. The rest of the file is cut at line ends into one stretch per process. Each forked
   worker counts the lines before its stretch (for line numbers in messages), compacts
   its stretch into an anonymous temporary file, and sends back its counts, warnings,
   summaries and first error through a pipe. This process compacts the first stretch
   itself, straight into the output. The stretches are cut so that all end together:
   counting the lines before one is cheap beside a summary, not beside a plain trim.
3. The workers' files are appended in order. The first error in line order wins: with
   ``on_error="fail"`` the remaining workers are stopped and nothing is written.

Memory stays bounded per process (each streams its stretch); peak memory across the
run is about the number of processes times that of one. Disk: the workers' parts sit
beside the output until they are appended, so the run needs up to about twice the
output's size free there (one process needs the output's size, for its temporary).
"""

from __future__ import annotations

import itertools
import os
import pickle
import signal
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Literal, NoReturn

from ctxmgr.errors import CtxmgrError, InputError, OutputError
from ctxmgr.files._compaction import compact_dataset_line, finish_dataset
from ctxmgr.files._coroutines import run_without_loop
from ctxmgr.files._reading import check_unchanged, numbered_lines
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings, plain_trim
from ctxmgr.files._sinks import FileSink, Sink
from ctxmgr.state._managers import BaseContextManager

__all__ = ["compact_dataset"]

_CHUNK = 1 << 20

# Counting the lines before a stretch costs about this much per byte, relative to
# compacting a byte: later stretches are made shorter by as much, so all end together.
# A plain trim is about 8x the count; summaries and conversions, which build every
# message, hundreds of times.
TRIM_COUNT_COST = 0.12
FULL_COUNT_COST = 0.005


CompactLine = Callable[[int, bytes, FileResult], bytes]
"""Compacts one line (its number, its bytes) counting into a result; returns its output."""


@dataclass
class _Worker:
    pid: int
    pipe: int  # read end: the worker's report
    part: IO[bytes]  # anonymous file holding the worker's output
    start: int


@dataclass
class _Report:
    """What a worker sends back: how it ended, the lines it compacted and what it counted."""

    kind: Literal["ok", "input", "error", "output", "crash"]
    lines: int = 0
    counted: FileResult | None = None
    message: str = ""
    """Why the input could not be read or the output written (``input`` without
    ``error``, ``output``), or the traceback (``crash``)."""
    error: CtxmgrError | None = None
    """The error itself (``input``, ``error``), raised here as it was raised there."""
    calls: tuple[int, int] = (0, 0)
    """The calls and estimated tokens the worker's summarizer counted (its progress)."""


@dataclass
class _Run:
    """What every stretch of one run writes to and counts into."""

    fd: int
    one: CompactLine
    sink: Sink
    result: FileResult
    progress: Callable[[int, int], None] | None
    count_cost: float = TRIM_COUNT_COST
    """Counting a byte's lines against compacting it (see :func:`_cut`)."""
    counter: Any = None
    """The summarizer's counters of calls and tokens (``calls``, ``tokens``: the CLI's
    progress shows them), if it keeps any: each worker's are added to them."""

    def rest(self, start: int, end: int, first_number: int, pace: float = 1.0) -> int:
        """Compact the lines of ``[start, end)`` here, into the sink; the number of lines.

        Each line reports its size times ``pace`` to the progress: the bytes the workers
        compact meanwhile, in proportion.
        """
        count = 0
        for number, raw in numbered_lines(_chunks(self.fd, start, end), first_number):
            self.sink.write(self.one(number, raw, self.result))
            count += 1
            if self.progress is not None:
                self.progress(1, round((len(raw) + 1) * pace))
        return count


def compact_dataset(
    handle: IO[bytes],
    head: bytes,
    read_stat: os.stat_result,
    name: str,
    manager: BaseContextManager[Any],
    sink: Sink,
    settings: Settings,
    result: FileResult,
    progress: Callable[[int, int], None] | None,
    jobs: int,
    first_format: list[str] | None = None,
) -> None:
    """Compact the dataset open as ``handle`` (``head`` already read from it) with ``jobs``
    processes; ``first_format`` holds the dataset's format if something settled it."""
    size = read_stat.st_size
    first_format = first_format if first_format is not None else []

    def one(number: int, raw: bytes, into: FileResult) -> bytes:
        return run_without_loop(compact_dataset_line(number, raw, name, manager, settings, into, first_format))

    cost = TRIM_COUNT_COST if plain_trim(manager, settings) else FULL_COUNT_COST
    run = _Run(handle.fileno(), one, sink, result, progress, cost, _counter(manager))
    # Where ``head`` began: 0 for a file opened by name; standard input redirected from a
    # file may start further on (a previous reader left it there).
    offset, number = _first_lines(run, handle.tell() - len(head), size, head, first_format)
    if first_format and offset < size:
        _split(run, offset, size, number + 1, jobs, name)
    else:
        run.rest(offset, size, number + 1)
    finish_dataset(name, sink, settings, result, lambda: check_unchanged(name, read_stat, size))


def _counter(manager: BaseContextManager[Any]) -> Any:
    """The summarizer of ``manager`` if it counts its calls and tokens, else ``None``."""
    summarizer = getattr(manager, "summarizer", None)
    calls, tokens = getattr(summarizer, "calls", None), getattr(summarizer, "tokens", None)
    return summarizer if isinstance(calls, int) and isinstance(tokens, int) else None


def _counts(counter: Any) -> tuple[int, int]:
    return (counter.calls, counter.tokens) if counter is not None else (0, 0)


def _first_lines(run: _Run, origin: int, size: int, head: bytes, first_format: list[str]) -> tuple[int, int]:
    """1. Compact the lines up to the first one that settles the format (normally just the
    first); ``(offset, number)`` after them."""
    offset = origin
    number = 0
    for number, raw in numbered_lines(_chunks(run.fd, origin, size, first=head)):
        run.sink.write(run.one(number, raw, run.result))
        offset += len(raw) + 1
        if run.progress is not None:
            run.progress(1, len(raw) + 1)
        if first_format:
            break
    return offset, number


def _split(run: _Run, offset: int, size: int, first_number: int, jobs: int, name: str) -> None:
    """2. The rest, cut at line ends: this process takes the first stretch, a worker each
    of the others; 3. the workers' output, in order."""
    bounds = _cut(run.fd, offset, size, jobs, run.count_cost)
    workers: list[_Worker] = []
    try:
        left_over = _start_workers(run, offset, bounds, first_number, workers)
        run.result.jobs = 1 + len(workers)
        # The stretches end together (see _cut): this one's pace stands for all of them.
        pace = (left_over - offset) / max(1, bounds[1] - offset)
        next_number = first_number + run.rest(offset, bounds[1], first_number, pace)
        for worker in workers:
            next_number += _take(worker, run, name)
        if left_over < size:
            run.rest(left_over, size, next_number)
    finally:
        for worker in workers:
            _stop(worker)


def _start_workers(run: _Run, offset: int, bounds: list[int], first_number: int, workers: list[_Worker]) -> int:
    """Start a worker for each stretch after the first, into ``workers``; where the
    stretches no worker could take begin (the end if every one started)."""
    sink = run.sink
    # Workers' files beside the output (same disk, which the user chose for it).
    part_dir = os.path.dirname(os.path.abspath(sink.name)) if isinstance(sink, FileSink) and sink.name else None
    for start, end in itertools.pairwise(bounds[1:]):
        try:
            workers.append(
                _start_worker(run.fd, offset, start, end, first_number, run.one, part_dir, workers, run.counter)
            )
        except OSError:  # no process or file to spare: this one does the rest itself
            return start
    return bounds[-1]


def _take(worker: _Worker, run: _Run, name: str) -> int:
    """Count a finished worker's report and append its output; the lines it compacted.
    Its error, if it met one, is raised (the first in line order wins)."""
    report = _collect(worker)
    if report.kind == "output":
        raise OutputError(f"{run.sink.name or 'standard output'}: cannot write: {report.message}")
    if report.kind == "crash" or report.counted is None:
        raise RuntimeError(f"a worker process failed:\n{report.message}")
    run.result.merge(report.counted)
    if run.counter is not None:
        run.counter.calls += report.calls[0]
        run.counter.tokens += report.calls[1]
    if run.progress is not None:
        run.progress(report.lines, 0)
    if report.error is not None:
        raise report.error
    if report.kind == "input":
        raise InputError(report.message, source=name)
    _append(worker.part, run.sink)
    worker.part.close()
    return report.lines


def _chunks(fd: int, start: int, end: int, *, first: bytes = b"") -> Iterator[bytes]:
    """The bytes ``[start, end)`` of ``fd`` (``first``: bytes from ``start`` already read)."""
    if first:
        first = first[: end - start]
        yield first
        start += len(first)
    while start < end:
        chunk = os.pread(fd, min(_CHUNK, end - start), start)
        if not chunk:
            return  # the file shrank: the final check reports it
        yield chunk
        start += len(chunk)


def _cut(fd: int, start: int, end: int, jobs: int, count_cost: float = TRIM_COUNT_COST) -> list[int]:
    """``[start, b1, ..., end]``: stretch bounds just after line ends, ``jobs`` stretches at most.

    Stretch i costs its length plus counting the ``p_i`` bytes before it; equal costs
    ``C`` give ``p_i = C (1 - (1 - r)^i) / r`` with ``r`` = ``count_cost``.
    """
    total, r = end - start, count_cost
    share = total * r / (1 - (1 - r) ** jobs)
    bounds = [start]
    for k in range(1, jobs):
        target = max(start + int(share * (1 - (1 - r) ** k) / r), bounds[-1])
        position = target
        while position < end:
            window = os.pread(fd, 1 << 16, position)
            newline = window.find(b"\n")
            if newline != -1:
                position += newline + 1
                break
            position += len(window) if window else end
        position = min(position, end)
        if position > bounds[-1] and position < end:
            bounds.append(position)
    bounds.append(end)
    return bounds


def _start_worker(
    fd: int,
    origin: int,
    start: int,
    end: int,
    origin_number: int,
    one: CompactLine,
    part_dir: str | None,
    earlier: list[_Worker],
    counter: Any = None,
) -> _Worker:
    # The file lives as long as the worker's output is needed: closed by _stop.
    try:
        part = tempfile.TemporaryFile(dir=part_dir)  # noqa: SIM115
    except OSError:
        part = tempfile.TemporaryFile()  # noqa: SIM115
    pipe: tuple[int, int] | None = None
    parent = os.getpid()
    try:
        pipe = os.pipe()
        pid = _fork()
    except OSError:
        part.close()
        for end_fd in pipe or ():
            os.close(end_fd)
        raise
    read_end, write_end = pipe
    if pid == 0:  # the worker: never returns
        os.close(read_end)
        for other in earlier:  # their files' space is freed when their owners are done
            os.close(other.pipe)
            os.close(other.part.fileno())
        _work(fd, origin, start, end, origin_number, one, part, write_end, parent, counter)
    os.close(write_end)
    return _Worker(pid, read_end, part, start)


def _fork() -> int:
    return os.fork()  # a function of its own: tests make it fail


def _work(
    fd: int,
    origin: int,
    start: int,
    end: int,
    origin_number: int,
    one: CompactLine,
    part: IO[bytes],
    report_to: int,
    parent: int,
    counter: Any = None,
) -> NoReturn:
    """The worker's whole life: compact ``[start, end)`` into ``part``, report, exit."""
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent cleans up
        _die_with_parent(parent)
        first_number = origin_number + sum(chunk.count(b"\n") for chunk in _chunks(fd, origin, start))
        local = FileResult(source="")
        counted_before = _counts(counter)
        lines = 0
        pending = bytearray()
        try:
            for number, raw in numbered_lines(_chunks(fd, start, end), first_number):
                pending += one(number, raw, local)
                lines += 1
                if len(pending) >= _CHUNK:
                    _write_all(part.fileno(), pending)
                    pending.clear()
            _write_all(part.fileno(), pending)
        except InputError as error:  # counts so far too: one process would have them
            report = _Report("input", lines, local, error=error)
        except _PartError as error:  # the disk filled up, say: the output cannot be written
            report = _Report("output", message=str(error))
        except OSError as exc:  # reading the input failed
            report = _Report("input", lines, local, f"cannot read: {exc.strerror or exc}")
        except CtxmgrError as error:  # raised by the parent, as one process would raise it
            report = _Report("error", lines, local, error=error)
        else:
            report = _Report("ok", lines, local)
        after = _counts(counter)
        report.calls = (after[0] - counted_before[0], after[1] - counted_before[1])
    except BaseException:
        report = _Report("crash", message=traceback.format_exc())
        status = 1
    try:
        if report.counted is not None:
            _without_kept(report.counted)
        data = pickle.dumps(report)
        view = memoryview(data)
        while view:
            view = view[os.write(report_to, view) :]
    finally:
        os._exit(status)  # no cleanup handlers: they belong to the parent


def _without_kept(result: FileResult) -> None:
    """Leave out of ``result``'s summary reports the messages kept after each summary:
    they are what its facts were weighed against while it was made, which nothing reads
    once it is made (the reports' figures, facts and notes are whole). Pickled, they were
    most of a worker's report (3.1 MB of 3.3 MB for 291 tau conversations) and most of the
    time it took to send and read it back (0.16 s of CPU, 0.02 s without them)."""
    for _line, summary in result.summaries:
        summary.kept = ()


class _PartError(Exception):
    """A worker could not write its part of the output."""


def _write_all(fd: int, data: bytes | bytearray) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:  # told apart from a failed read of the input
        raise _PartError(exc.strerror or str(exc)) from None


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this worker when its parent dies (a SIGTERM, a SIGKILL): its
    work would be thrown away, and nobody would wait for it."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return
    if os.getppid() != parent:  # the parent died before the request took hold
        os._exit(1)


def _collect(worker: _Worker) -> _Report:
    """The worker's report, once it has finished."""
    pieces = []
    while piece := os.read(worker.pipe, 1 << 16):
        pieces.append(piece)
    os.close(worker.pipe)
    worker.pipe = -1
    _, status = os.waitpid(worker.pid, 0)
    worker.pid = 0
    if not pieces:
        return _Report("crash", message=f"the process ended without a report (wait status {status})")
    report: _Report = pickle.loads(b"".join(pieces))
    return report


def _append(part: IO[bytes], sink: Sink) -> None:
    position = 0
    fd = part.fileno()
    while chunk := os.pread(fd, _CHUNK, position):
        sink.write(chunk)
        position += len(chunk)


def _stop(worker: _Worker) -> None:
    """Stop a worker still running (an earlier error, Ctrl-C) and release what it held."""
    if worker.pid:
        try:
            os.kill(worker.pid, signal.SIGKILL)
            os.waitpid(worker.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    if worker.pipe != -1:
        os.close(worker.pipe)
        worker.pipe = -1
    worker.part.close()
