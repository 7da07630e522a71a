"""Compact a list of dataset lines: the one place the engines meet ctxmgr's internals.

Each dataset line is compacted on its own (:func:`ctxmgr.files._compaction.compact_dataset_line`),
so a dataset cut into stretches of lines can be compacted stretch by stretch anywhere
and joined again in order; only the line numbers (for messages) and the dataset's
format (settled by its first good line) have to travel with a stretch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctxmgr.errors import InputError
from ctxmgr.files._compaction import compact_dataset_line, finish_dataset
from ctxmgr.files._coroutines import ordered as _ordered, run_without_loop
from ctxmgr.files._reading import sniff_dataset as _sniff_dataset
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings
from ctxmgr.files._sinks import Sink
from ctxmgr.state._managers import BaseContextManager, MessageContextManager

__all__ = ["CompactedLines", "compact_lines", "finish_file", "is_dataset"]


@dataclass
class CompactedLines:
    """What :func:`compact_lines` made of a list of lines.

    Attributes:
        outputs: Each line's output in order, its newline included (a line that
            ended with ``"\\r"`` keeps its CRLF); blank lines, unchanged lines and
            bad lines under ``on_error="skip"`` are copied byte for byte.
        result: Counts (conversations, messages and tokens before and after,
            summaries), ``warnings``, ``errors`` (``--strict``, ``--lossless``),
            ``bad_lines`` (skipped), provider errors and the format the lines are in;
            every message starts ``line N:`` with the line's number in the dataset.
        error: With ``on_error="fail"``, the bad line that stopped the work (it
            names the source, line and column); ``outputs`` and the counts stop
            before it, and nothing of the dataset should be written.
    """

    outputs: list[bytes]
    result: FileResult
    error: InputError | None = None

    @property
    def warnings(self) -> list[str]:
        return self.result.warnings


def compact_lines(
    lines: Iterable[bytes | str],
    settings: Settings | None = None,
    manager: BaseContextManager[Any] | None = None,
    *,
    source: str = "<lines>",
    first_number: int = 1,
    first_format: str | None = None,
) -> CompactedLines:
    """Compact dataset lines (one conversation each, without their newline) as
    ``ctxmgr trim``, ``summarize`` or ``convert`` compacts the lines of a JSONL file.

    Args:
        lines: The lines, as bytes or text (text is encoded as UTF-8).
        settings: Formats, ``on_error``, ``strict``... (:class:`ctxmgr.batch.Settings`);
            ``None``: the defaults.
        manager: What compacts each conversation: a
            :class:`~ctxmgr.state.MessageContextManager` (trim), a
            :class:`~ctxmgr.state.SummaryContextManager` (summaries)...; ``None``:
            ``MessageContextManager()``.
        source: The file name messages give.
        first_number: The dataset line number of ``lines[0]``.
        first_format: The dataset's format when a line before these settled it
            (every line of a dataset is in its first good line's format); ``None``:
            the first good line among these settles it.

    Returns:
        The output lines, warnings, errors and counts (see :class:`CompactedLines`).
    """
    settings = settings or Settings()
    manager = manager or MessageContextManager()
    result = FileResult(source=source, kind="dataset")
    known: list[str] = [first_format] if first_format is not None else []
    if first_format is not None:
        result.format = first_format
    numbered = [
        (first_number + index, line.encode() if isinstance(line, str) else bytes(line))
        for index, line in enumerate(lines)
    ]
    outputs: list[bytes] = []

    async def run() -> None:
        async def one(number: int, raw: bytes) -> tuple[int, bytes]:
            return 0, await compact_dataset_line(number, raw, source, manager, settings, result, known)

        window = settings.concurrency * 2 if settings.concurrency > 1 else 1
        async for _, out in _ordered((one(number, raw) for number, raw in numbered), window):
            outputs.append(out)

    async def run_opened() -> None:
        # A summarizer keeps one HTTP client for the event loop it runs in.
        opener, closer = getattr(manager, "aopen", None), getattr(manager, "aclose", None)
        if opener is not None:
            await opener()
        try:
            await run()
        finally:
            if closer is not None:
                await closer()

    try:
        if type(manager) is MessageContextManager and settings.concurrency <= 1:
            run_without_loop(run())  # a plain trim never waits: no event loop needed
        else:
            import asyncio

            asyncio.run(run_opened())
    except InputError as error:  # on_error="fail": the first bad line stops the work
        located = error.located(source) if error.source is None else error
        return CompactedLines(outputs, result, located)
    return CompactedLines(outputs, result)


def is_dataset(head: bytes, source: str) -> bool:
    """Whether a file starting with ``head`` (its first line whole) is a JSONL dataset."""
    return _sniff_dataset(head, source)


def finish_file(source: str, sink: Sink, settings: Settings, result: FileResult) -> None:
    """Commit ``sink`` (or abort it under ``--strict``/``--lossless`` errors) once every
    line of ``source`` went into it, as the one-machine path does."""
    finish_dataset(source, sink, settings, result, lambda: None)
