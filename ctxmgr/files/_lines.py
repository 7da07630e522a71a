"""Compacting a batch of dataset lines in memory: the library call for engines that split
a dataset themselves (Spark, Dask, Ray), giving what the CLI writes for those lines.

:func:`compact_lines` takes the lines, a manager and :class:`Settings`, and returns a
:class:`LinesResult`: the output lines, and a :class:`~ctxmgr.files._results.FileResult`
with the warnings, errors and counts. Results of a dataset's partitions combine with
:meth:`FileResult.merge <ctxmgr.files._results.FileResult.merge>`.
"""

from __future__ import annotations

from collections.abc import Coroutine, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ctxmgr.files._compaction import compact_dataset_line
from ctxmgr.files._coroutines import ordered, run_without_loop
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings, conversations_at_once, never_waits
from ctxmgr.state._managers import BaseContextManager

__all__ = ["LinesResult", "acompact_lines", "compact_lines"]


@dataclass
class LinesResult:
    """What :func:`compact_lines` made of a batch of dataset lines.

    Attributes:
        lines: The output, one item per input line, in order, each without its line feed
            (a carriage return read before it stays): ``b"\\n".join(lines) + b"\\n"`` is
            what ``ctxmgr`` writes for those lines. Blank lines, and bad ones under
            ``on_error="skip"``, are as they were.
        result: The warnings, errors, bad lines (``on_error="skip"``), summaries and counts,
            worded as for a file ("line 3: ..."); ``result.format`` is the dataset's format.
        refused: Whether ``ctxmgr`` would write nothing for these lines: ``strict`` found
            provider-rule problems, or ``lossless`` found something the target format has
            no place for (both in ``result.errors``).
    """

    lines: list[bytes]
    result: FileResult
    refused: bool = False

    @property
    def warnings(self) -> list[str]:
        """The warnings, one line each (``result.warnings``)."""
        return self.result.warnings

    def data(self) -> bytes:
        """The output as the bytes of a JSONL file."""
        return b"".join(line + b"\n" for line in self.lines)


def compact_lines(
    lines: Iterable[bytes | str],
    manager: BaseContextManager[Any],
    settings: Settings | None = None,
    *,
    first_line: int = 1,
    dataset_format: str | None = None,
    source: str = "<lines>",
    finish: bool = True,
    into: FileResult | None = None,
) -> LinesResult:
    """Compact the lines of a JSONL dataset (one conversation per line) with ``manager``.

    The same function ``ctxmgr trim``/``summarize``/``convert`` applies to each line of a
    dataset file: the same output bytes, warnings, errors and counts (tokens only with
    ``settings.measure``, as ``--json`` sets it). Runs without an event loop when the
    manager never waits (a trim, a conversion, the offline digest); otherwise in one made for the call, the
    manager's summarizer client opened and closed around it. Inside a running event loop,
    await :func:`acompact_lines` instead.

    To compact a dataset in partitions (one call per partition, on any machine), give each
    call the line number of its first line, so that messages name the lines of the file,
    and the format of the dataset's first line (``result.format`` of the partition holding
    it), so that every line is held to it as in one run; pass ``finish=False`` and, once
    the partitions' results are merged in order (:meth:`FileResult.merge`), call
    ``merged.note_dropped(settings.to, lossless=settings.lossless)`` once. ``ctxmgr``
    writes nothing for the dataset when ``(settings.strict or settings.lossless) and
    merged.errors`` (what :attr:`LinesResult.refused` says of one call).

    Args:
        lines: The dataset's lines, in order, as bytes or text (UTF-8), each with or
            without its line feed (one line feed at the end is removed).
        manager: What compacts each conversation (``MessageContextManager``,
            ``SummaryContextManager``, ...).
        settings: Formats, error handling and reporting (:class:`Settings`; its ``jobs``
            and ``keep_outcomes`` do not apply here).
        first_line: The line number of the first item (messages say ``line N: ...``).
        dataset_format: The format of the dataset's first line, when it is not among
            ``lines``; ``None``: the first non-blank line of ``lines`` settles it.
        source: The name errors are attributed to (the file the lines come from).
        finish: Word what conversions dropped as one line of the result (a warning, or
            under ``lossless`` an error), as for a whole file.
        into: The :class:`FileResult` to count into (``LinesResult.result`` is then this
            object); ``None``: a new one. When a bad line stops the call, it holds what
            the lines before it gave, as the command line reports them.

    Returns:
        The output lines and the :class:`FileResult` (see :class:`LinesResult`).

    Raises:
        InputError: A bad line with ``on_error="fail"`` (``ctxmgr`` then writes nothing);
            its ``line`` is the line's number; ``into`` holds the counts before it.
        ValueError: An item holds a line feed before its end (two lines in one item).
    """
    settings = settings or Settings()
    work = acompact_lines(
        lines,
        manager,
        settings,
        first_line=first_line,
        dataset_format=dataset_format,
        source=source,
        finish=finish,
        into=into,
    )
    if never_waits(manager):
        return run_without_loop(work)
    import asyncio

    return asyncio.run(_opened(manager, work))


async def acompact_lines(
    lines: Iterable[bytes | str],
    manager: BaseContextManager[Any],
    settings: Settings | None = None,
    *,
    first_line: int = 1,
    dataset_format: str | None = None,
    source: str = "<lines>",
    finish: bool = True,
    into: FileResult | None = None,
) -> LinesResult:
    """:func:`compact_lines` in the running event loop (up to ``settings.concurrency``
    conversations at once); the caller opens and closes the manager's summarizer client
    (``await manager.aopen()``/``aclose()``) if it wants one kept across calls."""
    settings = settings or Settings()
    result = into if into is not None else FileResult(source=source, kind="dataset")
    if result.format is None:
        result.format = dataset_format
    first_format = [dataset_format] if dataset_format is not None else []

    async def one(number: int, raw: bytes) -> bytes:
        return await compact_dataset_line(number, raw, source, manager, settings, result, first_format)

    at_once = conversations_at_once(manager, settings)
    window = at_once * 2 if at_once > 1 else 1
    jobs = (one(number, raw) for number, raw in _numbered(lines, first_line))
    output = [out[:-1] async for out in ordered(jobs, window)]
    if finish:
        result.note_dropped(settings.to, lossless=settings.lossless)
    refused = (settings.strict or settings.lossless) and bool(result.errors)
    return LinesResult(output, result, refused)


def _numbered(lines: Iterable[bytes | str], first_line: int) -> Iterator[tuple[int, bytes]]:
    """Each line as bytes without its line feed, numbered from ``first_line``."""
    for number, line in enumerate(lines, start=first_line):
        raw = line.encode("utf-8") if isinstance(line, str) else bytes(line)
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if b"\n" in raw:
            raise ValueError(f"item for line {number} holds a line feed before its end: pass one line per item")
        yield number, raw


async def _opened(manager: BaseContextManager[Any], work: Coroutine[Any, Any, LinesResult]) -> LinesResult:
    """Await ``work`` with the manager's summarizer client kept open for it."""
    opener, closer = getattr(manager, "aopen", None), getattr(manager, "aclose", None)
    if opener is not None:
        await opener()
    try:
        return await work
    finally:
        if closer is not None:
            await closer()
