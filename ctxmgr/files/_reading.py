"""Reading input files as bytes: is it a dataset or a document, then its lines or its whole.

:func:`head_with_first_line` reads until the first line is whole, :func:`sniff_dataset`
tells a JSONL dataset of conversations (its first record, or another line of the first
read, is a whole conversation, see :func:`is_conversation_record`) from a document, :func:`numbered_lines` streams a
dataset's lines with bounded memory, :func:`read_document` reads a document whole, and
:func:`check_unchanged` refuses a file written to while it was read. Bytes only: nothing
here parses a conversation.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import stat
from collections.abc import Iterable, Iterator
from typing import IO, Any

import orjson

from ctxmgr import _format_registry as format_registry, _io as io
from ctxmgr.errors import InputError

__all__ = [
    "collector_paused",
    "SNIFF_BYTES",
    "UNPARSED",
    "check_unchanged",
    "head_with_first_line",
    "is_array_dataset",
    "is_conversation_record",
    "is_sqlite_file",
    "may_be_rollout",
    "iter_lines",
    "numbered_lines",
    "read_document",
    "read_head",
    "regular_file_stat",
    "sniff_dataset",
]

SNIFF_BYTES = 1 << 20
"""Bytes read at a time: the first read decides "dataset or document"."""

UNPARSED: Any = object()
"""Stands for a dataset line not parsed yet (the fast path parses it once, if at all)."""


def is_conversation_record(record: Any) -> bool:
    """Whether a JSONL record is a whole conversation (so the file is a dataset)."""
    if isinstance(record, list):
        return True
    return isinstance(record, dict) and any(isinstance(record.get(k), list) for k in format_registry.CONVERSATION_KEYS)


def is_array_dataset(value: Any) -> bool:
    """Whether a parsed JSON document is a dataset: a non-empty array whose every item is
    a conversation container (an object holding a list under a format's container key,
    ``messages``, ``conversations``, ``contents``, ``input``, ``context``), as LLaMA-Factory
    and FastChat ship training sets. An array of messages (an OpenAI chat list, ShareGPT
    turns, Gemini contents) holds no such object, and stays one conversation."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(item, dict) and is_conversation_record(item) for item in value)
    )


def head_with_first_line(handle: IO[bytes], head: bytes, name: str) -> bytes:
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
    while not ended and (more := read_head(handle, name)):
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


def sniff_dataset(head: bytes, name: str) -> bool:
    """Whether the file starting with ``head`` is a JSONL dataset of conversations."""
    stripped = head.lstrip()
    end = stripped.find(b"\n")
    if end == -1:
        # One line and no newline: a dataset only when named so (a .jsonl file).
        end = len(stripped) if name.endswith(".jsonl") else -1
    # ``stripped`` starts with its first non-blank byte: no slice of a long first line
    # (a whole one-line document) is copied to look at it.
    if end == -1 or not stripped.startswith((b"{", b"[")):
        return False
    if not stripped[end:].strip() and not name.endswith(".jsonl"):
        return False
    try:
        first = orjson.loads(stripped[:end])
    except orjson.JSONDecodeError:
        return False
    # A first line of JSON that holds no conversation (a metadata line, a header) does not
    # decide alone: a file whose next lines are conversations is a dataset with a bad
    # first line, reported as one, never a file of "no conversation format" that a walk
    # skips while --check passes on the conversations below it.
    return is_conversation_record(first) or _holds_a_conversation_line(stripped, end)


def _holds_a_conversation_line(data: bytes, end: int) -> bool:
    """Whether a line of ``data`` after the first (which ends at ``end``) is a whole
    conversation. Only the lines the first read holds (a megabyte) are looked at: the
    sample costs no read and no memory beyond it. Each line is parsed: a key spelled
    with escapes (``"\\u006dessages"``) is the same key."""
    start = end + 1
    while start < len(data):
        newline = data.find(b"\n", start)
        stop = len(data) if newline == -1 else newline
        line = data[start:stop].strip()
        start = stop + 1
        if not line.startswith((b"{", b"[")):
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if _reads_as_conversation(record):
            return True
    return False


def _reads_as_conversation(record: Any) -> bool:
    """:func:`is_conversation_record`, for a line that is not the first: a list counts only
    when it holds messages (objects, or LangChain's ``[role, text]`` pairs), so a log
    with a line of numbers or names is not taken for a dataset."""
    if isinstance(record, list):
        return bool(record) and isinstance(record[0], dict | list)
    return is_conversation_record(record)


def iter_lines(handle: IO[bytes], head: bytes, name: str | None = None) -> Iterator[tuple[int, bytes]]:
    """Numbered lines of ``head`` followed by the rest of ``handle``."""
    return numbered_lines(itertools.chain((head,), iter(lambda: handle.read(SNIFF_BYTES), b"")), source=name)


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


def regular_file_stat(handle: IO[bytes]) -> os.stat_result | None:
    try:
        result = os.fstat(handle.fileno())
    except (OSError, ValueError):
        return None
    return result if stat.S_ISREG(result.st_mode) else None


def check_unchanged(name: str, read_stat: os.stat_result, size_read: int) -> None:
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


def read_head(handle: IO[bytes], name: str) -> bytes:
    try:
        return handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=name) from None


_DOCUMENT_CHUNK = 8 << 20


def read_document(handle: IO[bytes], head: bytes, name: str) -> bytes:
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


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
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


SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""


def is_sqlite_file(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` names a regular file that starts as a SQLite database (an Agents
    SDK session database is read by :mod:`ctxmgr.files._sessions_db`, which imports
    ``sqlite3``: this sniff does not, so a command reading no database never loads it)."""
    if path is None or io.is_stdio(str(path)):
        return False
    try:
        # Only a regular file: a FIFO or /dev/stdin read here would lose what it streams.
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def may_be_rollout(head: bytes) -> bool:
    """Whether the file starting with ``head`` (its first line whole) may be a Codex CLI
    rollout: its first line names ``session_meta`` in its first kilobyte (Codex writes the
    type before the payload). The first test of :mod:`ctxmgr.files._codex_stream`, made
    here so that no other file loads the stream's modules."""
    return b'"session_meta"' in head.split(b"\n", 1)[0][:1024]
