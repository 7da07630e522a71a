"""Conversations out of files: every conversation of a file, or one dataset line, read
through the format readers (:mod:`ctxmgr.formats`), or from their outlines where a
command needs no more (:func:`read_outlines`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from ctxmgr import _io as io, formats
from ctxmgr.errors import InputError
from ctxmgr.files import _reading
from ctxmgr.files._reading import UNPARSED, is_array_dataset, is_conversation_record
from ctxmgr.formats._base import Conversation
from ctxmgr.formats._meaning import may_mean_nothing
from ctxmgr.formats._outlines import Outlined, outlined

__all__ = [
    "LOOK_AHEAD_LINES",
    "Outlined",
    "array_format",
    "load_line",
    "read_conversations",
    "read_outlines",
    "settled_format",
]

LOOK_AHEAD_LINES = 1000
"""Dataset lines :func:`settled_format` looks at (within the first read, at most
:data:`~ctxmgr.files._reading.SNIFF_BYTES`) for one that tells the formats apart."""


def read_conversations(path: str | None, *, fmt: str | None = None) -> Iterator[tuple[int | None, Conversation]]:
    """Every conversation in a file: ``(None, c)`` for a document, ``(line, c)`` per dataset line.

    Streams datasets; raises :class:`InputError` (with the line) on the first bad one.
    """
    for line, conversation in _read(path, fmt, None):
        assert isinstance(conversation, Conversation)
        yield line, conversation


def read_outlines(
    path: str | None, *, fmt: str | None = None, take: Callable[[Outlined], bool] | None = None
) -> Iterator[tuple[int | None, Conversation | Outlined]]:
    """:func:`read_conversations`, each conversation read from its outline where it can be.

    A conversation comes as :class:`Outlined` when its format has an outline reader, the
    outline accepts it (so the full reader would read the same roles, ids and units and
    note no warning) and ``take`` (if given) agrees; else as the full reader's
    :class:`Conversation`. Errors, and their wording, are those of :func:`read_conversations`:
    whatever an outline declines goes the full way.
    """
    return _read(path, fmt, take or _anything)


def _anything(_: Outlined) -> bool:
    return True


def _read(
    path: str | None, fmt: str | None, take: Callable[[Outlined], bool] | None
) -> Iterator[tuple[int | None, Conversation | Outlined]]:
    handle, name = io.open_input(path)
    try:
        read_stat = _reading.regular_file_stat(handle)
        head = _reading.head_with_first_line(handle, _reading.read_head(handle, name), name)
        if take is not None and read_stat is not None and _reading.may_be_rollout(head):
            from ctxmgr.files import _codex_stream  # the stream's modules only for a rollout

            streamed = _codex_stream.counted_outline(handle, head, fmt, name, read_stat)  # a rollout, line by line
            rollout = None if streamed is None else Outlined("codex", streamed, None)
            if rollout is not None and take(rollout):
                yield None, rollout
                return
        if not _reading.sniff_dataset(head, name):
            data = _reading.read_document(handle, head, name)
            if read_stat is not None:
                _reading.check_unchanged(name, read_stat, len(data))
            value, layout, pretty = io.parse(data, name)
            if layout == "document" and is_array_dataset(value):
                # A JSON array of conversations: a dataset, its records numbered as lines.
                fmt = fmt or array_format(value, name)
                expect: str | None = None
                for number, record in enumerate(value, start=1):
                    found = _load_record(number, record, name, fmt, expect, take)
                    expect = expect or found.format
                    yield number, found
                return
            yield None, _load_document(value, layout, pretty, name, fmt, take)
            return
        settled = None if fmt else settled_format(head, name)
        first: list[str] = [settled] if settled else []
        for number, raw in _reading.iter_lines(handle, head, name):
            if not raw.strip():
                continue
            conversation = _load_line(number, raw, name, fmt, first, take)
            if not first:
                first.append(conversation.format)
                first.extend(getattr(conversation, "also_reads_as", ()))
            yield number, conversation
        if read_stat is not None:
            _reading.check_unchanged(name, read_stat, handle.tell())
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def _load_document(
    value: Any, layout: io.Layout, pretty: bool, name: str, fmt: str | None, take: Callable[[Outlined], bool] | None
) -> Conversation | Outlined:
    found = outlined(value, fmt, source=name) if take is not None and layout == "document" else None
    if found is not None and fmt is not None and may_mean_nothing(found.outline):
        found = None  # under a named format, the full reader judges whether it means anything
    if found is not None and take is not None and take(found):
        return found
    conversation = formats.load_value(value, source=name, layout=layout, fmt=fmt, whole_file=True)
    conversation.pretty = pretty
    return conversation


def _load_line(
    number: int, raw: bytes, name: str, fmt: str | None, first: list[str], take: Callable[[Outlined], bool] | None
) -> Conversation | Outlined:
    expect, also = (first[0], tuple(first[1:])) if first else (None, ())
    if take is None:
        return load_line(number, raw, name, fmt, expect, also=also)
    record = io.loads(raw, name, line=number)
    found = outlined(record, fmt, source=name) if is_conversation_record(record) else None
    if found is not None and found.format == (expect or found.format) and take(found):
        return found
    return load_line(number, raw, name, fmt, expect, record, also=also)


def settled_format(head: bytes, name: str) -> str | None:
    """The format of the first dataset line in ``head`` (up to :data:`LOOK_AHEAD_LINES`)
    that only one format reads, when every line before it reads as that format too;
    ``None`` otherwise (the first line then settles the format, as it reads).

    A dataset's lines share one format: a text-only line reads as OpenAI chat and as
    Anthropic alike, and is read in the format the lines that tell them apart settle.
    """
    common: set[str] | None = None
    lines = head.split(b"\n", LOOK_AHEAD_LINES)[:LOOK_AHEAD_LINES]
    if not head.endswith(b"\n"):
        lines = lines[:-1]  # cut off by the end of the read (or of the file: read as it comes)
    for raw in lines:
        if not raw.strip():
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # reported when the line is read
        if not is_conversation_record(record):
            continue
        try:
            candidates = formats.detect_candidates(record, source=name)
        except InputError:
            continue
        if len(candidates) == 1:
            return candidates[0] if common is None or candidates[0] in common else None
        common = set(candidates) if common is None else common & set(candidates)
    return None


def array_format(records: list[Any], name: str) -> str | None:
    """The format every record of an array dataset reads as, decided from the records
    that tell formats apart (``None``: none does, each record is detected).

    A text-only record reads as OpenAI chat and as Anthropic alike; a record with tool
    calls says which: the dataset is read in the first format all its records share.
    """
    common: list[str] | None = None
    for record in records:
        try:
            candidates = formats.detect_candidates(record, source=name)
        except InputError:
            continue  # a bad record is reported when it is read
        common = candidates if common is None else [c for c in common if c in candidates]
        if not common:
            return None
    return common[0] if common and len(common) < len(formats.FORMATS) else None


def _load_record(
    number: int, record: Any, name: str, fmt: str | None, expect: str | None, take: Callable[[Outlined], bool] | None
) -> Conversation | Outlined:
    """Record ``number`` of an array dataset, as :func:`_load_line` reads a dataset line."""
    found = outlined(record, fmt, source=name) if take is not None else None
    if found is not None and take is not None and found.format == (expect or found.format) and take(found):
        return found
    return load_line(number, b"", name, fmt, expect, record)


def load_line(
    number: int,
    raw: bytes,
    name: str,
    fmt: str | None,
    expect: str | None,
    record: Any = UNPARSED,
    *,
    also: tuple[str, ...] = (),
) -> Conversation:
    """One dataset line as a conversation; ``expect`` is the dataset's format (its first
    line's, or the one a later line settled, see :func:`settled_format`).

    ``record`` is the line already parsed (by the fast path that declined it), if it was.
    A line that reads as several formats is read as ``expect``. ``also``: the other
    formats the dataset reads as when nothing told them apart (a line may then be any of
    them, and keeps the formats it also reads as); otherwise it is read as ``expect`` alone.
    """
    if record is UNPARSED:
        record = io.loads(raw, name, line=number)
    if not is_conversation_record(record):
        raise InputError("not a conversation (every line of a dataset must be one)", source=name, line=number)
    try:
        conversation = formats.load_value(record, source=name, layout="document", fmt=fmt, prefer=expect)
    except InputError as error:
        raise InputError(error.message, source=name, line=number) from None
    if expect is not None and not also:
        conversation.also_reads_as = ()  # the dataset's format is settled: the line is read in it
    if expect is not None and conversation.format != expect and conversation.format not in also:
        raise InputError(
            f"this line is {conversation.format} but the first line is {expect}; a dataset holds one format",
            source=name,
            line=number,
        )
    return conversation
