"""Compact whole files: one conversation, or a JSONL dataset streamed line by line.

A file is a *dataset* when it is JSONL whose first record is itself a whole
conversation (``{"messages": [...]}``, ``{"contents": [...]}``, a row with a
``context``, a list of messages, ...). Datasets are processed as a stream: memory stays
bounded by the largest line (times the number of conversations in flight), never by the
file. Any other file is read whole as one conversation.

Results go to a :class:`Sink`, which commits atomically or not at all: with
``on_error="fail"`` a bad line means nothing is written.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import shutil
import stat
import sys
import tempfile
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol, TypeVar

import orjson

from ctxmgr import formats, io
from ctxmgr._terminal import write_for
from ctxmgr.errors import CtxmgrError, InputError, OutputError, ProviderError, UsageError
from ctxmgr.formats.base import Conversation, Losses, Outline, SummaryPlacement
from ctxmgr.formats.outlines import OUTLINES
from ctxmgr.shapes import outline_clear
from ctxmgr.state.managers import BaseContextManager, MessageContextManager, trim_selection
from ctxmgr.state.tokens import estimate_tokens, message_units, text_units, tokens_from_units

if TYPE_CHECKING:
    from ctxmgr.pipeline import Outcome
    from ctxmgr.state.message import Message
    from ctxmgr.state.report import SummaryReport

# The model (pydantic), the format readers and the pipeline are imported on the full
# path only: a trim the fast path settles (outlines, see _fast_trim) never needs them,
# and importing them costs more than trimming a small file.

__all__ = [
    "FileResult",
    "FileSink",
    "NullSink",
    "Settings",
    "Sink",
    "StdoutSink",
    "compact_file",
    "run_without_loop",
    "is_conversation_record",
    "read_conversations",
]

_CONVERSATION_KEYS = ("messages", "contents", "context", "input")
_SNIFF_BYTES = 1 << 20


def is_conversation_record(record: Any) -> bool:
    """Whether a JSONL record is a whole conversation (so the file is a dataset)."""
    if isinstance(record, list):
        return True
    return isinstance(record, dict) and any(isinstance(record.get(k), list) for k in _CONVERSATION_KEYS)


@dataclass
class Settings:
    """How files are read, compacted and written.

    Attributes:
        fmt: Input format (``--from``); ``None`` detects it.
        to: Output format (``--to``); ``None`` keeps the input's.
        summary_as: Where a summary goes (``--summary-as``).
        strict: Output that breaks provider rules is an error instead of a warning.
        lossless: Converting, anything the target has no place for is an error (nothing
            is written) instead of a warning.
        on_error: For datasets: ``fail`` (nothing written) or ``skip`` (report the bad
            line and copy it through unchanged).
        concurrency: Conversations of a dataset compacted at once (summaries).
        keep_outcomes: Keep the :class:`Outcome` of a file holding one conversation (for
            its diff view; a dataset's view shows totals, its lines' outcomes are not kept).
        check_rules: Validate outputs against provider rules (warnings / ``strict``).
        measure: Count estimated tokens before and after (for reports).
        fast: Let plain trims of dataset lines skip building messages (see
            :func:`_fast_trim`); the output is the same either way.
        jobs: Processes for the plain trim of a large dataset file (see
            :mod:`ctxmgr.parallel`): ``None`` one per CPU (up to 8), ``1`` none.
    """

    fmt: str | None = None
    to: str | None = None
    summary_as: SummaryPlacement | None = None
    strict: bool = False
    lossless: bool = False
    on_error: Literal["fail", "skip"] = "fail"
    concurrency: int = 1
    keep_outcomes: bool = False
    check_rules: bool = True
    measure: bool = False
    fast: bool = True
    jobs: int | None = None


@dataclass
class FileResult:
    """What happened to one input file (the JSON report is built from this).

    ``warnings``, ``errors`` (rule violations under ``--strict``, losses under
    ``--lossless``) and ``bad_lines`` (dataset lines skipped with ``on_error="skip"``) are
    worded relative to the file ("line 3: ..."); the CLI prefixes the file name.
    ``dropped`` counts, by kind, what converting the file's conversations left out (see
    :class:`~ctxmgr.formats.base.Losses`); :meth:`note_dropped` words it as one line.
    """

    source: str
    destination: str | None = None
    format: str | None = None
    kind: Literal["conversation", "dataset"] = "conversation"
    conversations: int = 0
    changed_conversations: int = 0
    messages_before: int = 0
    messages_after: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    summaries_added: int = 0
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bad_lines: list[str] = field(default_factory=list)
    input_error: CtxmgrError | None = None
    provider_errors: list[ProviderError] = field(default_factory=list)
    provider_error_lines: list[int | None] = field(default_factory=list)
    """The dataset line of each provider error (``None`` for a document)."""
    outcomes: list[Outcome] = field(default_factory=list)
    written: bool = False
    jobs: int = 1
    """Processes that trimmed the file (see :mod:`ctxmgr.parallel`)."""
    summaries: list[tuple[int | None, SummaryReport]] = field(default_factory=list)
    """Each summary made (or refused), with its dataset line (``None`` for a document)."""
    dropped: Losses = field(default_factory=Losses)

    def note_dropped(self, target: str | None, *, lossless: bool) -> None:
        """Name what the conversion to ``target`` left out, in one line: a warning, or
        with ``lossless`` an error (the caller then writes nothing)."""
        if not self.dropped:
            return
        what = f"converting {self.format} to {target}"
        if lossless:
            self.errors.append(f"--lossless: {what} would drop what {target} has no place for: {self.dropped.line()}")
        else:
            self.warnings.append(f"{what} dropped what {target} has no place for: {self.dropped.line()}")

    @property
    def changed(self) -> bool:
        return self.changed_conversations > 0

    def provider_messages(self) -> list[str]:
        """Each provider error on one line, with its dataset line where there is one."""
        return [
            f"line {line}: {error}" if line is not None else str(error)
            for error, line in zip(self.provider_errors, self.provider_error_lines, strict=True)
        ]

    @property
    def failed(self) -> bool:
        return self.input_error is not None or bool(self.provider_errors) or bool(self.bad_lines)

    def add(
        self, outcome: Outcome, *, keep: bool, measure: bool = True, line: int | None = None, to: str | None = None
    ) -> None:
        """Count one compacted conversation (its estimated tokens too, if ``measure``).

        The figures are those of the conversation as written (in format ``to``, else
        its own) and as read: a summary counts with the text it is stored as, and as a
        message where it is written as one (see :func:`ctxmgr.stats.held_figures`).
        """
        self.conversations += 1
        before, after = outcome.before, outcome.after
        if outcome.summary_before or outcome.summary_after:
            messages_before, tokens_before, messages_after, tokens_after = _held_counts(outcome, to)
            self.messages_before += messages_before
            self.messages_after += messages_after
            if measure:
                self.tokens_before += tokens_before
                self.tokens_after += tokens_after
        else:
            self.messages_before += len(before)
            self.messages_after += len(after)
            if measure:
                self.tokens_before += estimate_tokens(before) if before else 0
                self.tokens_after += estimate_tokens(after) if after else 0
        if outcome.changed:
            self.changed_conversations += 1
        if outcome.summary_after != outcome.summary_before:
            self.summaries_added += 1
        if outcome.error is not None:
            self.provider_errors.append(outcome.error)
            self.provider_error_lines.append(line)
        self.summaries.extend((line, report) for report in outcome.summaries)
        if keep:
            self.outcomes.append(outcome)


def _held_counts(outcome: Outcome, to: str | None) -> tuple[int, int, int, int]:
    """Messages and tokens before and after of a conversation holding a summary, as read
    and as written (the written file's, not the model's: see :meth:`FileResult.add`)."""
    import dataclasses

    from ctxmgr.stats import held_figures

    conversation = outcome.conversation
    # The file as read: its messages and summary, written back in its own format (kept
    # records and an unchanged summary are written as they were read).
    as_read = dataclasses.replace(
        conversation,
        state=conversation.state.model_copy(
            update={"context": outcome.before, "context_summary": outcome.summary_before}
        ),
        summary_as=None,
    )
    as_read.original_summary = outcome.summary_before
    if (
        outcome.summary_after == outcome.summary_before
        and to in (None, conversation.format)
        and conversation.summary_as is None
        and not conversation.summary_from_user_turn
    ):
        # A trim: the summary is written back as it was read, among or right after the
        # leading system messages (which a trim never drops), so it adds the same before
        # and after. Measured on those system messages alone: a dataset whose lines hold
        # summaries takes the full path, and a write and a read of every whole line would
        # double its cost.
        from ctxmgr.stats import held_messages

        lead = next((i for i, m in enumerate(outcome.before) if m.role != "system"), len(outcome.before))
        leading = outcome.before[:lead]
        kept = {id(m) for m in outcome.after}
        if not all(id(m) in kept for m in leading):  # a manager that drops them: measure both
            return (*held_figures(as_read), *held_figures(conversation, to=to))
        as_read.state = as_read.state.model_copy(update={"context": leading})
        held, field_units = held_messages(as_read)
        extra_messages = len(held) - lead
        extra_units = sum(map(message_units, held)) + field_units - sum(map(message_units, leading))

        def figures(messages: list[Message]) -> tuple[int, int]:
            count = len(messages) + extra_messages
            units = [*map(message_units, messages), extra_units]
            return count, tokens_from_units(units) if messages or extra_units else 0

        return (*figures(outcome.before), *figures(outcome.after))
    messages_before, tokens_before = held_figures(as_read)
    messages_after, tokens_after = held_figures(conversation, to=to)
    return messages_before, tokens_before, messages_after, tokens_after


class Sink(Protocol):
    """Where output bytes go; nothing is visible until :meth:`commit`."""

    name: str | None

    def write(self, data: bytes) -> None: ...
    def commit(self) -> None: ...
    def abort(self) -> None: ...


class NullSink:
    """Discards everything (``--check``, ``--json`` reports, ``validate``)."""

    name: str | None = None

    def write(self, data: bytes) -> None:
        pass

    def commit(self) -> None:
        pass

    def abort(self) -> None:
        pass


class StdoutSink:
    """Standard output, held back (in memory, then on disk past 16 MB) until commit.

    Holding back is what lets a failing dataset write nothing at all, while memory stays
    bounded.
    """

    name: str | None = "-"

    def __init__(self, stream: IO[bytes] | None = None) -> None:
        self._stream = stream
        self._buffer: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115

    def write(self, data: bytes) -> None:
        self._buffer.write(data)

    def commit(self) -> None:
        stream = self._stream or sys.stdout.buffer
        self._buffer.seek(0)
        if stream.isatty():
            # A person reads this: the conversation must not drive their terminal.
            write_for(stream, self._buffer.read())
        else:
            shutil.copyfileobj(self._buffer, stream)
        stream.flush()
        self._buffer.close()

    def abort(self) -> None:
        self._buffer.close()


class FileSink:
    """A file written atomically; opened lazily so an input error creates nothing.

    A symbolic link (or anything but a regular file) at ``path`` is refused unless
    ``follow_symlinks`` (see :class:`ctxmgr.io.AtomicWriter`); :attr:`warnings` holds
    what the write could not keep (the owner, other hard links).
    """

    def __init__(self, path: str | Path, *, make_parents: bool = False, follow_symlinks: bool = False) -> None:
        self.name: str | None = str(path)
        self._path = Path(path)
        self._make_parents = make_parents
        self._follow_symlinks = follow_symlinks
        self._made: list[Path] = []  # folders this sink created, removed again on abort
        self._writer: io.AtomicWriter | None = None
        self._expect: os.stat_result | None = None

    @property
    def warnings(self) -> list[str]:
        """What the committed write could not keep as it was, one line each."""
        return [] if self._writer is None else self._writer.warnings

    def guard(self, read_stat: os.stat_result) -> None:
        """Refuse to commit if the file changed after it was read (in-place rewrites)."""
        self._expect = read_stat

    def _open(self) -> io.AtomicWriter:
        if self._writer is None:
            if self._make_parents:
                self._made = [p for p in reversed(self._path.parents) if not p.exists()]
                try:
                    self._path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise OutputError(f"{self._path.parent}: cannot create: {exc.strerror or exc}") from None
            self._writer = io.AtomicWriter(self._path, expect=self._expect, follow_symlinks=self._follow_symlinks)
        return self._writer

    def write(self, data: bytes) -> None:
        self._open().write(data)

    def commit(self) -> None:
        self._open().commit()

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.abort()
        for folder in reversed(self._made):
            with contextlib.suppress(OSError):  # not empty: another file went there
                folder.rmdir()
        self._made = []
        # A file left as it was (nothing to change, or an error) still gets the
        # temporaries of earlier killed runs removed, as a rewritten one does on commit.
        io.remove_stale_temporaries(self._path)


# -- reading -----------------------------------------------------------------------


def _head_with_first_line(handle: IO[bytes], head: bytes, name: str) -> bytes:
    """``head`` extended until it holds the first line whole (or the file ends).

    Deciding "dataset or document" needs the first line: a line longer than one read
    must not make a dataset look like a broken document. Reading stops at the first
    chunk that shows the input cannot be a conversation (a NUL byte in the first line,
    a first character that starts no object or list): ``/dev/zero`` or a 2 GB file of
    NULs is refused after one read, not read whole.
    """
    pieces = [head]
    started = bool(head.strip())  # the first line has begun (a newline now ends it)
    ended = started and b"\n" in head.lstrip()
    _refuse_binary_first_line(pieces, ended, name)
    # Why the start cannot be a conversation, told once the line goes on past a
    # megabyte (a shorter file keeps the full reader's own explanation).
    bad_start = _start_error(head, name) if started else None
    size = len(head)
    # Chunks are kept apart and joined once, and only each new chunk is searched: a
    # 50 MB one-line document must not be copied and rescanned once per read.
    while not ended and (more := _read_head(handle, name)):
        if bad_start is not None and size >= _BAD_START_READ:
            raise bad_start
        pieces.append(more)
        size += len(more)
        if not started:
            started = bool(more.strip())
            if started:
                bad_start = _start_error(b"".join(pieces), name)
            more = more.lstrip()
        ended = started and b"\n" in more
        _refuse_binary_first_line(pieces, ended, name)
    return b"".join(pieces) if len(pieces) > 1 else head


_NUL_MESSAGE = "binary data (NUL byte), expected JSON text"
_BAD_START_READ = 1 << 20


def _refuse_binary_first_line(pieces: list[bytes], ended: bool, name: str) -> None:
    """Refuse a NUL byte in the first line (read so far) or in a line cut off at the end.

    A NUL in a later, complete line is left to the reader of that line (a dataset line
    under ``--on-error skip`` is reported and copied like any other bad line).
    """
    last = pieces[-1]
    nul = last.find(b"\x00")
    if nul == -1:
        return
    if not ended or last.find(b"\n", nul) == -1 or not _first_line_ended_before(pieces, nul):
        raise _nul_error(pieces, nul, name)


def _first_line_ended_before(pieces: list[bytes], index: int) -> bool:
    """Whether the first line (after leading blank lines) ends before ``pieces[-1][index]``."""
    data = b"".join(pieces)
    offset = len(data) - len(pieces[-1]) + index
    stripped = data.lstrip()
    first_end = stripped.find(b"\n")
    return first_end != -1 and len(data) - len(stripped) + first_end < offset


def _nul_error(pieces: list[bytes], index: int, name: str, first_line: int = 1) -> InputError:
    """The error for a NUL byte at ``pieces[-1][index]``; ``pieces`` are the bytes read so far."""
    last = pieces[-1]
    line = first_line + sum(p.count(b"\n") for p in pieces[:-1]) + last.count(b"\n", 0, index)
    newline = last.rfind(b"\n", 0, index)
    column = index - newline
    if newline == -1:
        for piece in reversed(pieces[:-1]):
            at = piece.rfind(b"\n")
            column += len(piece) - at - 1 if at != -1 else len(piece)
            if at != -1:
                break
    return InputError(_NUL_MESSAGE, source=name, line=line, column=column)


def _start_error(data: bytes, name: str) -> InputError | None:
    """Why a file starting with ``data`` cannot be a conversation, if that shows already."""
    stripped = data.lstrip()
    if not stripped or stripped[:1] in b"{[":
        return None
    offset = len(data) - len(stripped)
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    if stripped.startswith(b"\xef\xbb\xbf"):
        message = "starts with a UTF-8 byte-order mark; save the file as UTF-8 without BOM"
        return InputError(message, source=name, line=line, column=column)
    if stripped[:1] in b'"-0123456789tfn':  # a JSON value, but neither an object nor a list
        return InputError("not a conversation in any known format", source=name)
    return InputError("invalid JSON: unexpected character", source=name, line=line, column=column)


def _sniff_dataset(head: bytes, name: str) -> bool:
    """Whether the file starting with ``head`` is a JSONL dataset of conversations."""
    stripped = head.lstrip()
    end = stripped.find(b"\n")
    if end == -1:
        # One line and no newline: a dataset only when named so (a .jsonl file).
        end = len(stripped) if name.endswith(".jsonl") else -1
    if end == -1 or not stripped[:end].strip().startswith((b"{", b"[")):
        return False
    if not stripped[end:].strip() and not name.endswith(".jsonl"):
        return False
    try:
        first = orjson.loads(stripped[:end])
    except orjson.JSONDecodeError:
        return False
    return is_conversation_record(first)


def _iter_lines(handle: IO[bytes], head: bytes, name: str | None = None) -> Iterator[tuple[int, bytes]]:
    """Numbered lines of ``head`` followed by the rest of ``handle``."""
    return numbered_lines(itertools.chain((head,), iter(lambda: handle.read(_SNIFF_BYTES), b"")), source=name)


def numbered_lines(
    chunks: Iterable[bytes], first: int = 1, *, source: str | None = None
) -> Iterator[tuple[int, bytes]]:
    """The lines (without their newline) of the bytes ``chunks`` hold, numbered from ``first``.

    Linear in the input: each chunk is scanned from an offset (slicing off the rest of
    the chunk after every line would copy it once per line), and a line spanning several
    chunks is collected in pieces and joined once. A NUL byte in a line that goes on
    past its chunk is an :class:`InputError` (naming ``source``) right there: a line of
    2 GB of NULs is refused at its first chunk, not collected whole. A NUL in a line
    that ends within its chunk is left to the reader of that line.
    """
    number = first - 1
    partial: list[bytes] = []  # the start of a line that goes on in the next chunk
    for chunk in chunks:
        start = 0
        newline = chunk.find(b"\n")
        while newline != -1:
            number += 1
            if partial:
                partial.append(chunk[start:newline])
                yield number, b"".join(partial)
                partial.clear()
            else:
                yield number, chunk[start:newline]
            start = newline + 1
            newline = chunk.find(b"\n", start)
        if start < len(chunk):
            nul = chunk.find(b"\x00", start)
            if nul != -1:
                column = sum(len(piece) for piece in partial) + nul - start + 1
                raise InputError(_NUL_MESSAGE, source=source, line=number + 1, column=column)
            partial.append(chunk[start:])
    if partial:
        yield number + 1, b"".join(partial)


def read_conversations(path: str | None, *, fmt: str | None = None) -> Iterator[tuple[int | None, Conversation]]:
    """Every conversation in a file: ``(None, c)`` for a document, ``(line, c)`` per dataset line.

    Streams datasets; raises :class:`InputError` (with the line) on the first bad one.
    """
    handle, name = io.open_input(path)
    try:
        read_stat = _fstat(handle)
        head = _head_with_first_line(handle, _read_head(handle, name), name)
        if not _sniff_dataset(head, name):
            data = _read_document(handle, head, name)
            if read_stat is not None:
                _check_unchanged(name, read_stat, len(data))
            yield None, formats.load(data, source=name, fmt=fmt)
            return
        first: str | None = None
        for number, raw in _iter_lines(handle, head, name):
            if not raw.strip():
                continue
            conversation = _load_line(number, raw, name, fmt, first)
            first = first or conversation.format
            yield number, conversation
        if read_stat is not None:
            _check_unchanged(name, read_stat, handle.tell())
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


_UNPARSED: Any = object()


def _load_line(
    number: int, raw: bytes, name: str, fmt: str | None, expect: str | None, record: Any = _UNPARSED
) -> Conversation:
    """One dataset line as a conversation; ``expect`` is the first line's format.

    ``record`` is the line already parsed (by the fast path that declined it), if it was.
    """
    if record is _UNPARSED:
        record = io.loads(raw, name, line=number)
    if not is_conversation_record(record):
        raise InputError("not a conversation (every line of a dataset must be one)", source=name, line=number)
    try:
        conversation = formats.load_value(record, source=name, layout="document", fmt=fmt)
    except InputError as error:
        raise InputError(error.message, source=name, line=number) from None
    if expect is not None and conversation.format != expect:
        raise InputError(
            f"this line is {conversation.format} but the first line is {expect}; a dataset holds one format",
            source=name,
            line=number,
        )
    return conversation


# -- compacting --------------------------------------------------------------------


def _rule_problems(
    conversation: Conversation, settings: Settings, output: bytes, before: Sequence[Message] = ()
) -> list[str]:
    """Provider-rule problems of what is written (read back when converting: a writer may
    regroup messages, e.g. Anthropic merges tool results into one user message).

    Messages are numbered as in the input (``before``), as ``validate`` numbers them, so
    a warning points at the message to fix; one the input does not hold (a summary
    added) or a converted output's is named as the output's.
    """
    if not settings.check_rules:
        return []
    target = settings.to or conversation.format
    messages = conversation.state.context
    converted = settings.to is not None and settings.to != conversation.format
    if converted:
        # A writer bug would raise here; then the in-memory messages still get checked.
        with contextlib.suppress(InputError):
            messages = formats.load(output, source="<output>", fmt=settings.to).state.context
    from ctxmgr.validate import check_messages

    problems = check_messages(messages, target=target if target != "native" else None)
    if not problems:
        return []
    read_at = {id(message): index for index, message in enumerate(before)}
    lines = []
    for problem in problems:
        index = read_at.get(id(messages[problem.index])) if problem.index < len(messages) else None
        if index is not None:
            lines.append(f"message {index}: {problem.message}")
        else:
            output_name = f"{settings.to} output" if converted else "output"
            lines.append(f"{output_name} message {problem.index}: {problem.message}")
    return lines


async def compact_file(
    path: str | None,
    manager: BaseContextManager[Any],
    sink: Sink,
    settings: Settings | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
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
    try:
        handle, name = io.open_input(path)
    except InputError as error:
        result.input_error = error
        return result
    try:
        with contextlib.ExitStack() as stack:
            if handle is not sys.stdin.buffer:
                stack.callback(handle.close)
            read_stat = _fstat(handle)
            if isinstance(sink, FileSink) and read_stat is not None and sink.name == name:
                sink.guard(read_stat)
            head = _head_with_first_line(handle, _read_head(handle, name), name)
            if _sniff_dataset(head, name):
                result.kind = "dataset"

                def verify() -> None:
                    if read_stat is not None:
                        _check_unchanged(name, read_stat, handle.tell())

                jobs = _parallel_jobs(read_stat, manager, settings)
                if jobs > 1 and read_stat is not None:
                    from ctxmgr import parallel

                    parallel.compact_dataset(
                        handle, head, read_stat, name, manager, sink, settings, result, progress, jobs
                    )
                else:
                    await _compact_dataset(
                        _iter_lines(handle, head, name), name, manager, sink, settings, result, progress, verify
                    )
            else:
                data = _read_document(handle, head, name)
                if read_stat is not None and _fstat(handle) is not None:
                    _check_unchanged(name, read_stat, len(data))
                await _compact_document(data, name, manager, sink, settings, result)
                if progress is not None:
                    progress(1, len(data))
    except CtxmgrError as error:
        sink.abort()
        # The line splitter (shared with the trimming processes) knows no file name.
        result.input_error = error.located(name) if isinstance(error, InputError) and error.source is None else error
        return result
    except BaseException:
        sink.abort()
        raise
    return result


_PARALLEL_MIN_BYTES = 8 << 20  # below this, starting processes costs more than it saves
_BYTES_PER_JOB = 4 << 20
_MAX_JOBS = 8


def _parallel_jobs(read_stat: os.stat_result | None, manager: BaseContextManager[Any], settings: Settings) -> int:
    """How many processes should trim this dataset (1: this one alone).

    Only the plain trim, whose lines are independent and which never waits, of a regular
    file large enough to pay for the processes, on Linux (fork), and only while this
    process runs no other thread (forking a threaded process is unsafe).
    """
    if read_stat is None or read_stat.st_size < _PARALLEL_MIN_BYTES or settings.jobs == 1:
        return 1
    if not _plain_trim(manager, settings):
        return 1
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return 1
    import threading

    if threading.active_count() > 1:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    wanted = settings.jobs if settings.jobs is not None else min(cpus, _MAX_JOBS)
    return max(1, min(wanted, read_stat.st_size // _BYTES_PER_JOB))


def _fstat(handle: IO[bytes]) -> os.stat_result | None:
    try:
        result = os.fstat(handle.fileno())
    except (OSError, ValueError):
        return None
    return result if stat.S_ISREG(result.st_mode) else None


def _check_unchanged(name: str, read_stat: os.stat_result, size_read: int) -> None:
    """A file written to while we read it gives a mix of old and new: refuse it."""
    try:
        # Standard input redirected from a file has no name to look up: its descriptor
        # is the file (a replaced path cannot be told, a changed file still can).
        now = os.fstat(0) if name == io.STDIN_NAME else os.stat(name)
    except OSError:
        raise InputError("disappeared while being read", source=name) from None
    # Sizes as well as the time: file times can be coarser than a quick append.
    if (
        size_read != read_stat.st_size
        or now.st_size != read_stat.st_size
        or now.st_mtime_ns != read_stat.st_mtime_ns
        or now.st_ino != read_stat.st_ino
    ):
        raise InputError("changed while being read; run again when it is no longer being written", source=name)


def _read_head(handle: IO[bytes], name: str) -> bytes:
    try:
        return handle.read(_SNIFF_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=name) from None


_DOCUMENT_CHUNK = 8 << 20


def _read_document(handle: IO[bytes], head: bytes, name: str) -> bytes:
    """The whole document: ``head`` then the rest of ``handle``.

    Read in chunks, each checked as it comes: a NUL byte is refused at the chunk that
    holds it, and a start that cannot begin a conversation before anything past
    ``head`` is kept (memory stays bounded by what came before, plus one chunk).
    """
    pieces = [head]
    nul = head.find(b"\x00")
    if nul != -1:
        raise _nul_error(pieces, nul, name)
    while True:
        try:
            more = handle.read(_DOCUMENT_CHUNK)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", source=name) from None
        if not more:
            break
        if len(pieces) == 1 and (error := _start_error(head, name)) is not None:
            raise error
        pieces.append(more)
        nul = more.find(b"\x00")
        if nul != -1:
            raise _nul_error(pieces, nul, name)
    return b"".join(pieces) if len(pieces) > 1 else head


async def _compact_document(
    data: bytes, name: str, manager: BaseContextManager[Any], sink: Sink, settings: Settings, result: FileResult
) -> None:
    value, layout, pretty = io.parse(data, name)
    fast = _fast_document(value, layout, pretty, name, manager, settings, result)
    if fast is not None:
        output, changed = fast
        if _uses_crlf(data):
            output = output.replace(b"\n", b"\r\n")
        if changed or not _is_in_place(sink, name):
            sink.write(output)
            sink.commit()
            result.written = sink.name is not None
        else:
            sink.abort()
        return
    with _collector_paused():
        conversation = formats.load_value(value, source=name, layout=layout, fmt=settings.fmt)
    conversation.pretty = pretty
    conversation.summary_as = settings.summary_as
    result.format = conversation.format
    from ctxmgr.pipeline import acompact_conversation

    outcome = await acompact_conversation(conversation, manager)
    result.add(outcome, keep=settings.keep_outcomes, measure=settings.measure, to=settings.to)
    output = formats.dump(conversation, to=settings.to)
    if _uses_crlf(data):
        # Windows line endings stay Windows line endings (orjson writes "\n" only, and
        # escapes every newline inside strings, so each "\n" here ends a line).
        output = output.replace(b"\n", b"\r\n")
    result.warnings.extend(conversation.warnings)
    result.dropped.merge(conversation.dropped)
    result.note_dropped(settings.to, lossless=settings.lossless)
    if settings.lossless and result.dropped:
        sink.abort()
        return
    problems = _rule_problems(conversation, settings, output, outcome.before)
    if problems:
        if settings.strict:
            result.errors.extend(problems)
            sink.abort()
            return
        result.warnings.extend(problems)
    if outcome.changed or settings.to is not None or not _is_in_place(sink, name):
        sink.write(output)
        sink.commit()
        result.written = sink.name is not None
    else:
        sink.abort()


def _uses_crlf(data: bytes) -> bool:
    """Whether ``data`` ends its lines with CRLF (judged by its first line end)."""
    newline = data.find(b"\n")
    return newline > 0 and data[newline - 1 : newline] == b"\r"


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a document's messages are built.

    Building 100,000 message objects triggers a full collection again and again, each
    walking every object so far: reading got slower per message as files grew (45% of
    the time at 100,000 messages). These objects form no cycles; reference counting
    frees them.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _is_in_place(sink: Sink, name: str) -> bool:
    return sink.name is not None and sink.name == name


async def _compact_dataset(
    lines: Iterator[tuple[int, bytes]],
    name: str,
    manager: BaseContextManager[Any],
    sink: Sink,
    settings: Settings,
    result: FileResult,
    progress: Callable[[int, int], None] | None,
    verify: Callable[[], None] = lambda: None,
) -> None:
    """Stream the lines of a dataset; ``verify`` runs before anything is committed."""
    first_format: list[str] = []

    async def one(number: int, raw: bytes) -> tuple[int, bytes]:
        # The line's size (with its newline) goes to the progress; _ordered keeps the order.
        return len(raw) + 1, await compact_dataset_line(number, raw, name, manager, settings, result, first_format)

    # The output keeps the input's order, so the conversation at the window's head holds
    # the others' output until it is done. The summarizer caps calls at --concurrency;
    # the window runs far ahead of it, so that a conversation whose request is retried
    # (a reset connection) or waits for a connection (a server's full listen backlog
    # drops it, and the kernel retries a second later) does not leave the other slots
    # idle. Waiting conversations hold their input: past _WINDOW_BYTES of it the window
    # stops growing (never below twice the concurrency).
    window = settings.concurrency * _WINDOW_PER_SLOT if settings.concurrency > 1 else 1
    jobs = ((len(raw) + 1, one(number, raw)) for number, raw in lines)
    async for size, out in _ordered(jobs, window, _WINDOW_BYTES, least=settings.concurrency * 2):
        sink.write(out)
        if progress is not None:
            progress(1, size)
    finish_dataset(name, sink, settings, result, verify)


def finish_dataset(name: str, sink: Sink, settings: Settings, result: FileResult, verify: Callable[[], None]) -> None:
    """Commit (or abort) a dataset's output once every line is written."""
    verify()
    result.note_dropped(settings.to, lossless=settings.lossless)
    if (settings.strict or settings.lossless) and result.errors:
        sink.abort()
        return
    if result.changed or settings.to is not None or not _is_in_place(sink, name):
        sink.commit()
        result.written = sink.name is not None
    else:
        sink.abort()


async def compact_dataset_line(
    number: int,
    raw: bytes,
    name: str,
    manager: BaseContextManager[Any],
    settings: Settings,
    result: FileResult,
    first_format: list[str],
) -> bytes:
    """The output of one dataset line (blank lines, and bad ones under ``skip``, as they were)."""
    if not raw.strip():
        return raw + b"\n"
    try:
        return await _compact_line(number, raw, name, manager, settings, result, first_format)
    except InputError as error:
        if settings.on_error == "fail":
            raise
        result.bad_lines.append(f"line {error.line or number}: {error.message}")
        return raw + b"\n"


async def _compact_line(
    number: int,
    raw: bytes,
    name: str,
    manager: BaseContextManager[Any],
    settings: Settings,
    result: FileResult,
    first_format: list[str],
) -> bytes:
    record = _UNPARSED
    line_format: str | None = first_format[0] if first_format else None
    if line_format is None and _plain_trim(manager, settings):
        record = io.loads(raw, name, line=number)
        line_format = _light_format(record, name, settings)
    if line_format is not None and _fast_path_applies(manager, settings, line_format):
        if record is _UNPARSED:
            record = io.loads(raw, name, line=number)
        fast = _fast_trim(record, raw, manager, line_format, result, settings.measure)
        if fast is not None:
            if not first_format:  # the first line settles the dataset's format
                first_format.append(line_format)
                result.format = line_format
            return fast
    conversation = _load_line(number, raw, name, settings.fmt, first_format[0] if first_format else None, record)
    if not first_format:
        first_format.append(conversation.format)
        result.format = conversation.format
    conversation.summary_as = settings.summary_as
    from ctxmgr.pipeline import acompact_conversation

    outcome = await acompact_conversation(conversation, manager)
    # A dataset's diff view shows totals: its lines' outcomes are not kept (they would
    # hold every message of the file in memory).
    result.add(outcome, keep=False, measure=settings.measure, line=number, to=settings.to)
    unchanged = not outcome.changed and settings.to is None
    output = raw + b"\n" if unchanged else formats.dump(conversation, to=settings.to)
    result.warnings.extend(f"line {number}: {w}" for w in conversation.warnings)  # the writer's too
    # Counted over the whole file, named in one line when it is done (finish_dataset).
    result.dropped.merge(conversation.dropped)
    for problem in _rule_problems(conversation, settings, output, outcome.before):
        (result.errors if settings.strict else result.warnings).append(f"line {number}: {problem}")
    if unchanged:
        return output  # untouched lines are copied byte for byte
    return output[:-1] + b"\r\n" if raw.endswith(b"\r") else output


def _light_format(record: Any, name: str, settings: Settings) -> str | None:
    """The first line's format, found without the readers (for the fast path).

    ``None`` leaves the line to the full path (which also words any error).
    """
    if settings.fmt is not None:
        return settings.fmt
    try:
        return formats.detect_name(record, source=name) if is_conversation_record(record) else None
    except InputError:
        return None


T = TypeVar("T")


def run_without_loop(work: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never waits, without an event loop.

    A plain trim (the built-in manager) awaits nothing that suspends: driving it by hand
    spares importing asyncio at start-up and lets forked workers run lines directly.
    """
    try:
        work.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    work.close()
    raise RuntimeError("a plain trim waited on something; it must run in an event loop")


def _plain_trim(manager: BaseContextManager[Any], settings: Settings) -> bool:
    """The built-in trim (a subclass may override its rule), writing the same format."""
    return settings.fast and type(manager) is MessageContextManager and settings.to is None


def _fast_path_applies(
    manager: BaseContextManager[Any], settings: Settings, line_format: str, *, document: bool = False
) -> bool:
    # For a document, not when its diff view (message by message) is to be shown. Token
    # counts come from the outline; a dataset's diff view shows only totals.
    return (
        _plain_trim(manager, settings)
        and not (document and settings.keep_outcomes)
        and settings.fmt in (None, line_format)
    )


def _fast_document(
    value: Any,
    layout: str,
    pretty: bool,
    name: str,
    manager: BaseContextManager[Any],
    settings: Settings,
    result: FileResult,
) -> tuple[bytes, bool] | None:
    """Trim one whole document from its outline: ``(output, changed)``, or ``None``.

    The same as :func:`_fast_trim` for a file holding one conversation; a 100,000-message
    file then costs little more than parsing and writing it.
    """
    if layout != "document" or type(manager) is not MessageContextManager or not isinstance(value, dict | list):
        return None
    try:
        detected = settings.fmt or formats.detect_name(value, source=name)
    except InputError:
        return None  # the full path reports it, with the closest format's explanation
    if not _fast_path_applies(manager, settings, detected, document=True):
        return None
    outline = _outline(detected, value)
    if outline is None:
        return None
    clear, kept = _checked_selection(outline, manager, detected)
    if not clear:
        return None
    result.format = detected
    _count_fast(result, outline, kept, settings.measure, _summary_field_units(detected, value))
    output = io.dumps(value if kept is None else outline.rebuild(kept), "document", pretty=pretty)
    return output, kept is not None


def _outline(line_format: str, value: Any) -> Outline | None:
    outline_of = OUTLINES.get(line_format)
    return None if outline_of is None else outline_of(value)


def _checked_selection(
    outline: Outline, manager: MessageContextManager, line_format: str
) -> tuple[bool, list[int] | None]:
    """``(clear, kept)``: the trim's choice on ``outline``, and whether its output passes
    the provider-rule check (if not, the full path runs and words the warning)."""
    roles = outline.roles
    if manager.remove_tool_msgs:
        kept = manager.select(roles, [bool(c) for c in outline.calls])
    else:
        kept = trim_selection(roles, manager.max_messages)  # what select() does then
    if outline.has_tools:
        chosen = range(len(roles)) if kept is None else kept
        target = line_format if line_format != "native" else None
        if not outline_clear(roles, outline.calls, outline.results, chosen, target=target):
            return False, kept
    return True, kept


def _count_fast(
    result: FileResult, outline: Outline, kept: list[int] | None, measure: bool, summary_units: int = 0
) -> None:
    """What :meth:`FileResult.add` counts for a conversation trimmed from its outline.

    ``summary_units``: a summary field the outline let through (native
    ``context_summary``; outlines decline every summary stored as text), held before and
    after alike (a trim keeps it), so it counts on both sides as on the full path.
    """
    total = len(outline.roles)
    result.conversations += 1
    result.messages_before += total
    result.messages_after += total if kept is None else len(kept)
    if kept is not None:
        result.changed_conversations += 1
    if measure and (total or summary_units):
        units = [*outline.units(), summary_units] if summary_units else outline.units()
        before = tokens_from_units(units)
        result.tokens_before += before
        if kept is None:
            result.tokens_after += before
        elif kept or summary_units:
            result.tokens_after += tokens_from_units([*(units[i] for i in kept), summary_units])


def _summary_field_units(line_format: str, value: Any) -> int:
    """Units (:func:`~ctxmgr.state.tokens.text_units`) of the summary field of an
    outlined conversation (0 if none)."""
    if line_format != "native":
        return 0  # only an AgentState has the field; elsewhere the key is not read
    summary = value.get("context_summary") if isinstance(value, dict) else None
    return text_units(summary) if isinstance(summary, str) else 0


def _fast_trim(
    record: Any, raw: bytes, manager: BaseContextManager[Any], line_format: str, result: FileResult, measure: bool
) -> bytes | None:
    """Trim one dataset line from its outline, or ``None`` to take the full path.

    The same rule (:meth:`MessageContextManager.select`) on the same records gives the
    same bytes as the full path; it only skips building a ``Message`` per record. It
    declines whatever needs the full reader: a line its format's outline does not find
    plainly well-formed (so errors are reported by the full reader, with their wording),
    or a cut the structural pairing check does not clear (so warnings are exact).
    """
    outline = _outline(line_format, record)
    if outline is None:
        return None
    assert isinstance(manager, MessageContextManager)
    # The full path's rule check runs on the same ids: any problem to warn about sends
    # the line to the full path, which words the warning.
    clear, kept = _checked_selection(outline, manager, line_format)
    if not clear:
        return None
    _count_fast(result, outline, kept, measure, _summary_field_units(line_format, record))
    if kept is None:
        return raw + b"\n"
    output = io.dumps(outline.rebuild(kept), "document")  # deep nesting included (see io.dumps)
    return output[:-1] + b"\r\n" if raw.endswith(b"\r") else output


_WINDOW_PER_SLOT = 16
"""Conversations a dataset's window holds per --concurrency slot (see _compact_dataset)."""
_WINDOW_BYTES = 32_000_000
"""Input bytes past which a dataset's window stops growing."""


async def _ordered(
    jobs: Iterator[tuple[int, Awaitable[T]]], most: int, most_bytes: int = 0, *, least: int = 1
) -> AsyncIterator[T]:
    """Run ``jobs`` (each with its input's size) ahead of the one whose result is due, and
    yield the results in order. At most ``most`` run at once, and, once ``least`` run,
    no more than ``most_bytes`` of input (0: no bound)."""
    if most <= 1:
        for _size, job in jobs:
            yield await job
        return
    import asyncio  # only here: a plain trim runs without an event loop (see cli.run)

    window: deque[tuple[int, asyncio.Future[T]]] = deque()
    held = 0
    try:
        for size, job in jobs:
            window.append((size, asyncio.ensure_future(job)))
            held += size
            while len(window) >= most or (most_bytes and held >= most_bytes and len(window) >= least):
                done, task = window.popleft()
                held -= done
                yield await task
        while window:
            yield await window.popleft()[1]
    finally:
        for _size, task in window:
            task.cancel()


def check_concurrency(value: int) -> int:
    """Validate ``--concurrency``."""
    if value < 1:
        raise UsageError(f"--concurrency must be >= 1, got {value}")
    return value
