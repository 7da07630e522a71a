"""Deeply nested values: JSON text and ``repr`` past Python's default recursion limit.

Files are read up to the parser's :data:`MAX_DEPTH` levels of nesting (orjson's limit),
but the standard library's ``json`` and ``repr`` recurse once per level and Python's
default recursion limit (1,000 frames, shared with the caller's own) is lower than that.
Every place that turns a value read from a file into JSON text, or parses JSON text
held in a string (tool-call arguments), goes through this module, which retries a call
that hit the limit with the limit raised to :data:`_DEEP_LIMIT` for that call only.
Ordinary values never pay for it: the raised limit is only used after a
``RecursionError``.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import orjson

__all__ = ["MAX_DEPTH", "TooDeepError", "deep_recursion", "dumps", "dumps_arguments", "equal", "loads", "text"]

MAX_DEPTH = 1024
"""Levels of nesting a JSON value may have (orjson's parser limit; deeper is an error)."""

# Enough for MAX_DEPTH levels (the json module and repr use one frame per level) on top
# of the caller's own frames, with room to spare; well within the C stack of the main
# thread and of worker threads (8 MB by default on Linux).
_DEEP_LIMIT = 4 * MAX_DEPTH


class TooDeepError(ValueError):
    """JSON text nested deeper than :data:`MAX_DEPTH` levels (what no file may hold)."""


_lock = threading.Lock()
_users = 0
_saved_limit = 0

T = TypeVar("T")


@contextlib.contextmanager
def deep_recursion() -> Iterator[None]:
    """Raise the recursion limit to :data:`_DEEP_LIMIT` while the block runs.

    Reentrant and thread-safe: the limit is set back when the last user leaves (the
    limit is process-wide, so one thread must not lower it under another).
    """
    global _users, _saved_limit
    with _lock:
        if _users == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, _DEEP_LIMIT))
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                sys.setrecursionlimit(_saved_limit)


def _deep(call: Callable[[], T]) -> T:
    try:
        return call()
    except RecursionError:
        pass  # outside the except block: the retry must not chain onto this traceback
    with deep_recursion():
        return call()


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps(value, **options)``, for values nested up to :data:`MAX_DEPTH` levels."""
    try:  # the usual case first, without a closure (the outlines' token estimates call it often)
        return json.dumps(value, **options)
    except RecursionError:
        pass
    return _deep(lambda: json.dumps(value, **options))


def _arguments_encoder() -> Callable[[Any, int], Any] | None:
    """The C encoder ``json.dumps(value)`` builds on every call (default options, no
    check for cycles), built once: its chunks, joined, are ``json.dumps``' text; ``None``
    where the C accelerator is missing."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    encoder: Callable[[Any, int], Any] = make(
        None, None, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
    return encoder


_ARGUMENTS_ENCODER = _arguments_encoder()


def dumps_arguments(value: Any) -> str:
    """``dumps(value)`` (the default options), written directly when ``value`` is an object
    of plain strings and integers, as most tool-call arguments are (the outlines count
    the JSON of every call's arguments; ``json.dumps`` costs twice as much on those)."""
    if value.__class__ is dict:
        if len(value) == 1:  # the most common arguments: one string (an id, a query)
            for key, item in value.items():
                if key.__class__ is str and item.__class__ is str:
                    text = f'{{"{key}": "{item}"}}'
                    if _as_written(text, 4):
                        return text
        pieces: list[str] = []
        quotes = 0
        for key, item in value.items():
            if key.__class__ is not str:
                break
            if item.__class__ is str:
                pieces.append(f'"{key}": "{item}"')
                quotes += 4
            elif item.__class__ is int:
                pieces.append(f'"{key}": {item}')
                quotes += 2
            else:
                break
        else:
            text = "{" + ", ".join(pieces) + "}"
            if _as_written(text, quotes):
                return text
    return _encoded(value)


def _as_written(text: str, quotes: int) -> bool:
    """Whether JSON writes the keys and strings of ``text`` (an object written by hand with
    ``quotes`` quotes of its own) as they are: printable ASCII, no quote or backslash,
    looked at once in the whole text."""
    return text.isascii() and text.isprintable() and "\\" not in text and text.count('"') == quotes


def _encoded(value: Any) -> str:
    """``dumps(value)`` through :data:`_ARGUMENTS_ENCODER`: half ``json.dumps``' time on
    nested arguments (it builds that encoder on every call). A cycle, a nesting too deep
    or a value JSON cannot hold raises there: ``dumps`` then answers (and words the
    error) as it always did."""
    if _ARGUMENTS_ENCODER is not None:
        try:
            return "".join(_ARGUMENTS_ENCODER(value, 0))
        except Exception:
            pass  # dumps below gives the answer or the error
    return dumps(value)


def text(value: Any) -> str:
    """``str(value)`` (the ``repr`` of a container), for values nested up to :data:`MAX_DEPTH` levels."""
    try:
        return str(value)
    except RecursionError:
        pass
    return _deep(lambda: str(value))


def equal(first: Any, second: Any) -> bool:
    """``first == second``, for values nested up to :data:`MAX_DEPTH` levels."""
    return _deep(lambda: bool(first == second))


def loads(data: str) -> Any:
    """Parse JSON text held in a string (tool-call arguments), as ``json.loads`` does.

    Nesting deeper than :data:`MAX_DEPTH` is a :class:`TooDeepError` (a ``ValueError``,
    like any other text that is not JSON): a value read from a string must be one a
    file could hold.
    """
    try:
        return json.loads(data)
    except RecursionError:
        pass
    # Deep enough to matter (rare): orjson, which stops at MAX_DEPTH without recursing,
    # tells whether it is too deep; the json module still does the reading, so values
    # are exactly what it reads elsewhere (integers beyond 64 bits stay integers).
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if str(exc).startswith("depth limit exceeded"):
            raise TooDeepError(f"nested deeper than {MAX_DEPTH} levels") from None
    try:
        with deep_recursion():
            return json.loads(data)
    except RecursionError:
        raise TooDeepError(f"nested deeper than {MAX_DEPTH} levels") from None
