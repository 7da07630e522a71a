"""A large dataset trimmed by several processes, each taking a stretch of its lines.

The plain trim of a dataset is the same function applied to each line on its own, and
it never waits; parsing and writing JSON holds the interpreter's lock, so threads would
not help, but forked processes do: one per CPU (up to 8) roughly halves the time of a
100 MB dataset on two cores. The output is byte for byte what one process writes (tests
compare them), with the same warnings, errors and counts, in line order.

How it runs (Linux only, where ``fork`` is cheap and safe in a single-threaded process):

1. This process reads the first line the ordinary way: it settles the dataset's format
   (every line must share it) and is written first.
2. The rest of the file is cut at line ends into one stretch per process. Each forked
   worker counts the lines before its stretch (for line numbers in messages), trims its
   stretch into an anonymous temporary file, and sends back its counts, warnings and
   first error through a pipe. This process trims the first stretch itself, straight
   into the output.
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
from typing import IO, Any, NoReturn

from ctxmgr.batch import (
    FileResult,
    FileSink,
    Settings,
    Sink,
    _check_unchanged,
    compact_dataset_line,
    finish_dataset,
    numbered_lines,
    run_without_loop,
)
from ctxmgr.errors import InputError, OutputError
from ctxmgr.state._managers import BaseContextManager

__all__ = ["compact_dataset"]

_CHUNK = 1 << 20


@dataclass
class _Worker:
    pid: int
    pipe: int  # read end: the worker's report
    part: IO[bytes]  # anonymous file holding the worker's output
    start: int


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
) -> None:
    """Trim the dataset open as ``handle`` (``head`` already read from it) with ``jobs`` processes."""
    fd = handle.fileno()
    size = read_stat.st_size
    # Where ``head`` began: 0 for a file opened by name; standard input redirected from a
    # file may start further on (a previous reader left it there).
    origin = handle.tell() - len(head)
    first_format: list[str] = []

    def one(number: int, raw: bytes, into: FileResult) -> bytes:
        return run_without_loop(compact_dataset_line(number, raw, name, manager, settings, into, first_format))

    # 1. Lines up to the first one that settles the format (normally just the first).
    offset = origin
    number = 0
    for number, raw in numbered_lines(_chunks(fd, origin, size, first=head)):
        sink.write(one(number, raw, result))
        offset += len(raw) + 1
        if progress is not None:
            progress(1, len(raw) + 1)
        if first_format:
            break
    if not first_format or offset >= size:
        _finish_rest(fd, offset, size, number + 1, one, sink, result, progress)
        finish_dataset(name, sink, settings, result, lambda: _check_unchanged(name, read_stat, size))
        return

    # 2. The rest, cut at line ends: this process takes the first stretch.
    bounds = _cut(fd, offset, size, jobs)
    workers: list[_Worker] = []
    try:
        # Workers' files beside the output (same disk, which the user chose for it).
        part_dir = os.path.dirname(os.path.abspath(sink.name)) if isinstance(sink, FileSink) and sink.name else None
        left_over = size  # where the stretches no worker could take begin
        for start, end in itertools.pairwise(bounds[1:]):
            try:
                workers.append(_start_worker(fd, offset, start, end, number + 1, one, part_dir, workers))
            except OSError:  # no process or file to spare: this one does the rest itself
                left_over = start
                break
        result.jobs = 1 + len(workers)
        # The stretches end together (see _cut): this one's pace stands for all of them.
        pace = (left_over - offset) / max(1, bounds[1] - offset)
        next_number = number + 1 + _finish_rest(fd, offset, bounds[1], number + 1, one, sink, result, progress, pace)
        # 3. The workers' output, in order.
        for worker in workers:
            report = _collect(worker)
            if report[0] == "input":
                _, message, line, column, counts = report
                _merge(result, counts)
                if progress is not None:
                    progress(counts["lines"], 0)
                raise InputError(message, source=name, line=line, column=column)
            if report[0] == "output":
                raise OutputError(f"{sink.name or 'standard output'}: cannot write: {report[1]}")
            if report[0] == "crash":
                raise RuntimeError(f"a trimming process failed:\n{report[1]}")
            _merge(result, report[1])
            _append(worker.part, sink)
            worker.part.close()
            next_number += report[1]["lines"]
            if progress is not None:
                progress(report[1]["lines"], 0)
        if left_over < size:
            _finish_rest(fd, left_over, size, next_number, one, sink, result, progress)
    finally:
        for worker in workers:
            _stop(worker)
    finish_dataset(name, sink, settings, result, lambda: _check_unchanged(name, read_stat, size))


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


# Counting the lines before a stretch costs about this much per byte, relative to
# trimming a byte: later stretches are made shorter by as much, so all end together.
_COUNT_COST = 0.12


def _cut(fd: int, start: int, end: int, jobs: int) -> list[int]:
    """``[start, b1, ..., end]``: stretch bounds just after line ends, ``jobs`` stretches at most.

    Stretch i costs its length plus counting the ``p_i`` bytes before it; equal costs
    ``C`` give ``p_i = C (1 - (1 - r)^i) / r`` with ``r`` = :data:`_COUNT_COST`.
    """
    total, r = end - start, _COUNT_COST
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


def _finish_rest(
    fd: int,
    start: int,
    end: int,
    first_number: int,
    one: Callable[[int, bytes, FileResult], bytes],
    sink: Sink,
    result: FileResult,
    progress: Callable[[int, int], None] | None,
    pace: float = 1.0,
) -> int:
    """Trim the lines of ``[start, end)`` here, into ``sink``; the number of lines.

    Each line reports its size times ``pace`` to ``progress``: the bytes the workers
    trim meanwhile, in proportion.
    """
    count = 0
    for number, raw in numbered_lines(_chunks(fd, start, end), first_number):
        sink.write(one(number, raw, result))
        count += 1
        if progress is not None:
            progress(1, round((len(raw) + 1) * pace))
    return count


def _start_worker(
    fd: int,
    origin: int,
    start: int,
    end: int,
    origin_number: int,
    one: Callable[[int, bytes, FileResult], bytes],
    part_dir: str | None,
    earlier: list[_Worker],
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
        _work(fd, origin, start, end, origin_number, one, part, write_end, parent)
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
    one: Callable[[int, bytes, FileResult], bytes],
    part: IO[bytes],
    report_to: int,
    parent: int,
) -> NoReturn:
    """The worker's whole life: trim ``[start, end)`` into ``part``, report, exit."""
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent cleans up
        _die_with_parent(parent)
        first_number = origin_number + sum(chunk.count(b"\n") for chunk in _chunks(fd, origin, start))
        local = FileResult(source="")
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
            report: tuple[Any, ...] = ("input", error.message, error.line, error.column, _counts(local, lines))
        except _PartError as error:  # the disk filled up, say: the output cannot be written
            report = ("output", str(error))
        except OSError as exc:  # reading the input failed
            message = f"cannot read: {exc.strerror or exc}"
            report = ("input", message, None, None, _counts(local, lines))
        else:
            report = ("ok", _counts(local, lines))
    except BaseException:
        report = ("crash", traceback.format_exc())
        status = 1
    try:
        data = pickle.dumps(report)
        view = memoryview(data)
        while view:
            view = view[os.write(report_to, view) :]
    finally:
        os._exit(status)  # no cleanup handlers: they belong to the parent


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


def _counts(result: FileResult, lines: int) -> dict[str, Any]:
    return {
        "lines": lines,
        "conversations": result.conversations,
        "changed_conversations": result.changed_conversations,
        "messages_before": result.messages_before,
        "messages_after": result.messages_after,
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "summaries_added": result.summaries_added,
        "warnings": result.warnings,
        "errors": result.errors,
        "bad_lines": result.bad_lines,
    }


def _merge(result: FileResult, counts: dict[str, Any]) -> None:
    result.conversations += counts["conversations"]
    result.changed_conversations += counts["changed_conversations"]
    result.messages_before += counts["messages_before"]
    result.messages_after += counts["messages_after"]
    result.tokens_before += counts["tokens_before"]
    result.tokens_after += counts["tokens_after"]
    result.summaries_added += counts["summaries_added"]
    result.warnings.extend(counts["warnings"])
    result.errors.extend(counts["errors"])
    result.bad_lines.extend(counts["bad_lines"])


def _collect(worker: _Worker) -> tuple[Any, ...]:
    """The worker's report, once it has finished."""
    pieces = []
    while piece := os.read(worker.pipe, 1 << 16):
        pieces.append(piece)
    os.close(worker.pipe)
    worker.pipe = -1
    _, status = os.waitpid(worker.pid, 0)
    worker.pid = 0
    if not pieces:
        return ("crash", f"the process ended without a report (wait status {status})")
    report: tuple[Any, ...] = pickle.loads(b"".join(pieces))
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
