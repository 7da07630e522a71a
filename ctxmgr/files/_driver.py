"""Compacting a whole file: open it, tell a dataset from a document, and drive the work.

:func:`compact_file` is the entry point: a document is compacted whole
(:func:`~ctxmgr.files._compaction.compact_document`); a dataset is streamed line by line,
up to ``concurrency`` conversations at once, or handed to several processes
(:mod:`ctxmgr.files._parallel`) when :func:`~ctxmgr.files._processes.process_count` says so.
Memory stays bounded by the largest line (times the conversations in flight), never by
the file.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

from ctxmgr import _io as io
from ctxmgr.errors import CtxmgrError, InputError
from ctxmgr.files import _reading
from ctxmgr.files._backup import BackupSink
from ctxmgr.files._compaction import compact_dataset_line, compact_document, finish_dataset
from ctxmgr.files._coroutines import ordered_sized
from ctxmgr.files._loading import settled_format
from ctxmgr.files._processes import process_count
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings, conversations_at_once
from ctxmgr.files._sinks import FileSink, Sink
from ctxmgr.state._managers import BaseContextManager

__all__ = ["compact_file"]

WINDOW_PER_SLOT = 16
"""Conversations a dataset's window holds per --concurrency slot (see _compact_dataset)."""
WINDOW_BYTES = 32_000_000
"""Input bytes past which a dataset's window stops growing."""

Progress = Callable[[int, int], None]


async def compact_file(
    path: str | None,
    manager: BaseContextManager[Any],
    sink: Sink,
    settings: Settings | None = None,
    *,
    progress: Progress | None = None,
) -> FileResult:
    """Compact the file at ``path`` (``-``/``None``: standard input) into ``sink``.

    Never raises for bad input or a failed summary: the :class:`FileResult` records it,
    and the sink is aborted when nothing should be written (an input error, or a
    dataset line failing with ``on_error="fail"``). A sink for an in-place rewrite is
    only committed when something changed.

    ``progress(conversations, nbytes)`` is called as the input is read: a document
    reports once when done, a dataset line by line (with several processes, the bytes
    this process has trimmed stand for all of them, which run at the same pace).
    """
    settings = settings or Settings()
    result = FileResult(source=io.STDIN_NAME if io.is_stdio(path) else str(path), destination=sink.name)
    if _reading.is_sqlite_file(path):
        assert path is not None  # is_sqlite_file says so
        from ctxmgr.files import _session_compaction  # sqlite3 only for a database

        try:
            await _session_compaction.compact_session(path, manager, sink, settings, result)
        except CtxmgrError as error:
            sink.abort()
            result.input_error = error
        except BaseException:
            sink.abort()
            raise
        return result
    try:
        handle, name = io.open_input(path)
    except InputError as error:
        result.input_error = error
        return result
    try:
        with contextlib.ExitStack() as stack:
            if handle is not sys.stdin.buffer:
                stack.callback(handle.close)
            await _compact_open(handle, name, manager, sink, settings, result, progress)
    except CtxmgrError as error:
        sink.abort()
        # The line splitter (shared with the trimming processes) knows no file name.
        result.input_error = error.located(name) if isinstance(error, InputError) and error.source is None else error
    except BaseException:
        sink.abort()
        raise
    return result


async def _compact_open(
    handle: IO[bytes],
    name: str,
    manager: BaseContextManager[Any],
    sink: Sink,
    settings: Settings,
    result: FileResult,
    progress: Progress | None,
) -> None:
    """Compact the input open as ``handle``: a dataset, or a document."""
    read_stat = _reading.regular_file_stat(handle)
    if isinstance(sink, FileSink | BackupSink) and read_stat is not None and sink.name == name:
        sink.guard(read_stat)
    head = _reading.head_with_first_line(handle, _reading.read_head(handle, name), name)
    if read_stat is not None and _reading.may_be_rollout(head):
        from ctxmgr.files import _codex_stream  # the stream's modules only for a rollout

        if _codex_stream.wanted(head, manager, settings):
            if _codex_stream.stream_rollout(handle, name, manager, sink, settings, result, read_stat):
                if progress is not None:
                    progress(1, read_stat.st_size)
                return
            handle.seek(len(head))  # the full path reads on from the head
    if not _reading.sniff_dataset(head, name):
        data = _reading.read_document(handle, head, name)
        if read_stat is not None and _reading.regular_file_stat(handle) is not None:
            _reading.check_unchanged(name, read_stat, len(data))
        await compact_document(data, name, manager, sink, settings, result)
        if progress is not None:
            progress(1, len(data))
        return
    await _compact_lines_of(handle, head, read_stat, name, manager, sink, settings, result, progress)


async def _compact_lines_of(
    handle: IO[bytes],
    head: bytes,
    read_stat: os.stat_result | None,
    name: str,
    manager: BaseContextManager[Any],
    sink: Sink,
    settings: Settings,
    result: FileResult,
    progress: Progress | None,
) -> None:
    """Compact the dataset open as ``handle`` (``head`` read from it): in this process, or
    in several (a large regular file)."""
    result.kind = "dataset"
    if isinstance(sink, BackupSink):
        sink.dataset()
    # A dataset holds one format: the first line only one format reads settles it.
    settled = None if settings.fmt else settled_format(head, name)
    first_format = [settled] if settled else []
    if settled:
        result.format = settled
    jobs = process_count(read_stat, manager, settings)
    if jobs > 1 and read_stat is not None:
        from ctxmgr.files import _parallel

        _parallel.compact_dataset(
            handle, head, read_stat, name, manager, sink, settings, result, progress, jobs, first_format=first_format
        )
        return

    def verify() -> None:
        if read_stat is not None:
            _reading.check_unchanged(name, read_stat, handle.tell())

    lines = _reading.iter_lines(handle, head, name)
    await _compact_dataset(lines, name, manager, sink, settings, result, progress, verify, first_format)


async def _compact_dataset(
    lines: Iterator[tuple[int, bytes]],
    name: str,
    manager: BaseContextManager[Any],
    sink: Sink,
    settings: Settings,
    result: FileResult,
    progress: Progress | None,
    verify: Callable[[], None],
    first_format: list[str],
) -> None:
    """Stream the lines of a dataset into ``sink``; ``verify`` runs before anything is
    committed; ``first_format`` holds the dataset's format once something settled it."""

    async def one(number: int, raw: bytes) -> tuple[int, bytes]:
        # The line's size (with its newline) goes to the progress; the window keeps the order.
        return len(raw) + 1, await compact_dataset_line(number, raw, name, manager, settings, result, first_format)

    # The output keeps the input's order, so the conversation at the window's head holds
    # the others' output until it is done. The summarizer caps calls at --concurrency;
    # the window runs far ahead of it, so that a conversation whose request is retried
    # (a reset connection) or waits for a connection (a server's full listen backlog
    # drops it, and the kernel retries a second later) does not leave the other slots
    # idle. Waiting conversations hold their input: past WINDOW_BYTES of it the window
    # stops growing (never below twice the concurrency).
    at_once = conversations_at_once(manager, settings)
    window = at_once * WINDOW_PER_SLOT if at_once > 1 else 1
    jobs = ((len(raw) + 1, one(number, raw)) for number, raw in lines)
    async for size, out in ordered_sized(jobs, window, WINDOW_BYTES, least=at_once * 2):
        sink.write(out)
        if progress is not None:
            progress(1, size)
    finish_dataset(name, sink, settings, result, verify)
