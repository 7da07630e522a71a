"""A trim of a Codex rollout as a stream: memory bounded by its largest line.

Rollouts reach hundreds of megabytes, with lines of tens of megabytes. Read whole, a
2 GB rollout would need several times that in parsed records; here each line is parsed
once and dropped (:class:`~ctxmgr.formats._codex_lines.LineScan` keeps its type, role,
call ids, where its bytes are and, when counting, its estimated units), the trim's rule
chooses the messages from that outline, and the kept records are copied from the file,
line by line.

The output is the full path's, byte for byte: the scan declines whatever the full reader
treats specially (then :func:`stream_rollout` returns ``False`` and the file goes the
full path), and so does a trim that would need a new ``compacted`` record (it would drop
messages of the last replacement history). Taken by a plain ``trim -n`` (the built-in
:class:`~ctxmgr.state.MessageContextManager`) or a token budget alone (``trim
--max-tokens``), writing the same format, without a view, of a regular file; the same
scan gives ``stats`` and ``validate`` their outline (:func:`counted_outline`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any, cast

import orjson

from ctxmgr.files import _reading
from ctxmgr.files._fast_edits import compaction_names
from ctxmgr.files._fastpath import _budget_outline, _fast_rule, _rule_problems
from ctxmgr.files._figures import outline_figures
from ctxmgr.files._reading import collector_paused
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings, plain_trim
from ctxmgr.files._sinks import Sink, is_in_place
from ctxmgr.formats._base import Outline
from ctxmgr.formats._codex_lines import LineOutline, LineScan, canonical
from ctxmgr.state._managers import BaseContextManager, MessageContextManager, trim_selection

if TYPE_CHECKING:
    from ctxmgr.state._compaction import ChainContextManager

__all__ = ["COPY_BYTES", "READ_BYTES", "counted_outline", "lines", "stream_rollout", "wanted"]

COPY_BYTES = 8 << 20
"""Bytes copied at a time from a kept line to the output."""

READ_BYTES = 1 << 20
"""Bytes read at a time by the scan."""


def wanted(head: bytes, manager: BaseContextManager[Any], settings: Settings) -> bool:
    """Whether the file starting with ``head`` (its first line whole) may be streamed: a
    rollout (its first record ``session_meta``) under a plain trim or a token budget alone
    (``trim --max-tokens``)."""
    if settings.keep_outcomes or settings.fmt not in (None, "codex"):
        return False
    if isinstance(manager, MessageContextManager):
        if not plain_trim(manager, settings):
            return False
    elif not _budget_alone(manager, settings):
        return False
    return _rollout(head)


def _rollout(head: bytes) -> bool:
    """Whether the file starting with ``head`` (its first line whole) is a rollout: its
    first record ``session_meta``. Looked for in the line's first kilobyte before it is
    parsed (Codex writes the type before the payload), so that a large one-line document
    of another format is not parsed twice."""
    if not _reading.may_be_rollout(head):
        return False
    first = head.split(b"\n", 1)[0]
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(record, dict) and record.get("type") == "session_meta" and isinstance(record.get("payload"), dict)


def counted_outline(
    handle: IO[bytes], head: bytes, fmt: str | None, name: str, read_stat: os.stat_result
) -> Outline | None:
    """The outline of the rollout open as ``handle`` (a regular file starting with
    ``head``, as ``read_stat`` found it), each message's units counted, for ``stats``:
    ``None`` (the handle's position left alone) when the file is not a rollout read as
    ``codex``, or the full reader would act or warn (the scan declines as it does for a
    trim), or the counts would not be the full reader's. A file that changed while it was
    read is an error, as on the full path."""
    if fmt not in (None, "codex") or not _rollout(head):
        return None
    outline = _scan(handle, True)
    if outline is None or not outline.countable or outline.warnings:
        return None
    _reading.check_unchanged(name, read_stat, outline.offsets[-1] + outline.lengths[-1] + 1)
    return _light(outline)


def _light(outline: LineOutline) -> Outline:
    """``outline`` as the outline paths take it (it rebuilds nothing: the stream copies)."""
    return Outline(
        outline.roles,
        outline.calls,
        outline.results,
        lambda kept: None,
        outline.units.tolist,
        outline.chars.__getitem__,
    )


def _budget_alone(manager: BaseContextManager[Any], settings: Settings) -> bool:
    """Whether ``manager`` is a token budget alone that the outline path applies."""
    if isinstance(manager, MessageContextManager) or not _fast_rule(manager, settings):
        return False
    budget = cast("ChainContextManager", manager).managers[0]
    return type(budget) is compaction_names().TokenBudgetContextManager


def stream_rollout(
    handle: IO[bytes],
    name: str,
    manager: BaseContextManager[Any],
    sink: Sink,
    settings: Settings,
    result: FileResult,
    read_stat: os.stat_result,
) -> bool:
    """Trim the rollout open as ``handle`` (a regular file) into ``sink``; ``False``
    (nothing written, the handle back at its start) when the full path must."""
    handle.seek(0)
    plain = isinstance(manager, MessageContextManager)
    counting = not plain or settings.measure
    outline = _scan(handle, counting)
    if outline is None or (counting and not outline.countable):
        handle.seek(0)
        return False
    light = _light(outline)
    report = None
    warned: list[str] = []
    if isinstance(manager, MessageContextManager):
        if manager.remove_tool_msgs:
            kept = manager.select(outline.roles, [bool(c) for c in outline.calls])
        else:
            kept = trim_selection(outline.roles, manager.max_messages)
    else:
        budgeted = _budget_outline(light, manager)
        if budgeted is None:
            handle.seek(0)
            return False
        kept, report, warned = budgeted
    if kept is not None and len(kept) == len(outline.roles):
        kept = None  # every message kept: the file as it was
    chosen = set(kept) if kept is not None else None
    if chosen is not None and not all(i in chosen for i, history in enumerate(outline.history) if history):
        handle.seek(0)
        return False  # a new compaction to write: the full path
    problems = _rule_problems(light, kept, "codex") if settings.check_rules else []
    if problems and settings.strict:
        handle.seek(0)
        return False
    unchanged = kept is None and is_in_place(sink, name)
    records = [] if unchanged else _records(outline, kept)
    # Only the records written must be in the form the full path writes them in: checked
    # before anything is written (a record that is not sends the file the full path).
    if not all(canonical(_line(handle, outline, index)) for index in records):
        handle.seek(0)
        return False
    _reading.check_unchanged(name, read_stat, outline.offsets[-1] + outline.lengths[-1] + 1)
    result.format = "codex"
    result.warnings.extend(outline.warnings)
    result.warnings.extend(problems)
    result.count(outline_figures(light, kept, measure=settings.measure))
    if report is not None:  # as the full path counts a compaction manager's report
        result.add_compaction(report)
        result.add_compaction_warnings(warned, None)
    if unchanged:
        sink.abort()
        return True
    for index in records:
        _copy(handle, sink, outline.offsets[index], outline.lengths[index])
    sink.commit()
    result.written = sink.name is not None
    return True


def _scan(handle: IO[bytes], counting: bool) -> LineOutline | None:
    scan = LineScan(counting=counting)
    # A million lines parsed make the cyclic collector walk what the scan keeps again and
    # again; parsed records form no cycles, reference counting frees them.
    with collector_paused():
        with lines(handle.fileno()) as reader:
            read = scan.read(reader)
        return scan.finish() if read else None


@contextmanager
def lines(descriptor: int, buffer: int = READ_BYTES) -> Iterator[IO[bytes]]:
    """The file open as ``descriptor`` read from its start, line by line, through a buffer
    of ``buffer`` bytes; the descriptor's position is put back after (so the handle that
    owns it, and its own buffer, read on as before).

    Python's default 8 kB buffer makes reading lines of kilobytes cost as much as parsing
    them; a megabyte's makes it five times cheaper.
    """
    position = os.lseek(descriptor, 0, os.SEEK_CUR)
    os.lseek(descriptor, 0, os.SEEK_SET)
    try:
        with open(descriptor, "rb", buffering=buffer, closefd=False) as reader:
            yield reader
    finally:
        os.lseek(descriptor, position, os.SEEK_SET)


def _records(outline: LineOutline, kept: list[int] | None) -> list[int]:
    """The records written, in order: all of them when every message is kept, else
    ``session_meta``, Codex's ``compacted`` record, the kept messages' records, the tail."""
    if kept is None:
        return list(range(len(outline.offsets)))
    records = [0] if outline.compacted is None else [0, outline.compacted]
    for i in kept:
        records.extend(outline.records(i))
    records.extend(outline.tail)
    return records


def _line(handle: IO[bytes], outline: LineOutline, index: int) -> bytes:
    """Record ``index``'s line, with its newline."""
    handle.seek(outline.offsets[index])
    return handle.read(outline.lengths[index] + 1)


def _copy(handle: IO[bytes], sink: Sink, offset: int, length: int) -> None:
    """Line ``[offset, offset + length)`` of the input, and a newline, into ``sink``."""
    handle.seek(offset)
    while length > 0:
        chunk = handle.read(min(length, COPY_BYTES))
        if not chunk:
            break
        sink.write(chunk)
        length -= len(chunk)
    sink.write(b"\n")
