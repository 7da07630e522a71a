"""Conversations out of files: every conversation of a file, or one dataset line, read
through the format readers (:mod:`ctxmgr.formats`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from ctxmgr import _io as io, formats
from ctxmgr.errors import InputError
from ctxmgr.files import _reading
from ctxmgr.files._reading import UNPARSED, is_conversation_record
from ctxmgr.formats._base import Conversation

__all__ = ["load_line", "read_conversations"]


def read_conversations(path: str | None, *, fmt: str | None = None) -> Iterator[tuple[int | None, Conversation]]:
    """Every conversation in a file: ``(None, c)`` for a document, ``(line, c)`` per dataset line.

    Streams datasets; raises :class:`InputError` (with the line) on the first bad one.
    """
    handle, name = io.open_input(path)
    try:
        read_stat = _reading.regular_file_stat(handle)
        head = _reading.head_with_first_line(handle, _reading.read_head(handle, name), name)
        if not _reading.sniff_dataset(head, name):
            data = _reading.read_document(handle, head, name)
            if read_stat is not None:
                _reading.check_unchanged(name, read_stat, len(data))
            yield None, formats.load(data, source=name, fmt=fmt)
            return
        first: str | None = None
        for number, raw in _reading.iter_lines(handle, head, name):
            if not raw.strip():
                continue
            conversation = load_line(number, raw, name, fmt, first)
            first = first or conversation.format
            yield number, conversation
        if read_stat is not None:
            _reading.check_unchanged(name, read_stat, handle.tell())
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def load_line(
    number: int, raw: bytes, name: str, fmt: str | None, expect: str | None, record: Any = UNPARSED
) -> Conversation:
    """One dataset line as a conversation; ``expect`` is the first line's format.

    ``record`` is the line already parsed (by the fast path that declined it), if it was.
    """
    if record is UNPARSED:
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
