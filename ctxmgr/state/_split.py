"""Cutting a transcript into requests that fit the summarizer's input budget.

A transcript is a list of items (a message with the results of the tools it called; see
:class:`~ctxmgr.state._transcript.Transcript`). :func:`pack` joins consecutive items
into parts of at most a given number of characters, so a split falls between messages
and never parts a call from its result. An item longer than a whole part is itself
split (:func:`split_item`), at a line break where there is one, else after a space or a
separator, so a word or an identifier is cut only when a run of text longer than a
whole part has no place to break; its pieces say that they continue. Nothing is
dropped: the parts together hold every character of the items.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["CONTINUED", "CONTINUES", "pack", "split_item"]

CONTINUES = " [continues in the next part]"
CONTINUED = "[continued] "

_BREAKS = ("\n", " ", ",", ";")
"""Where a piece may end, best first (the break stays with the piece before it)."""


def _cut(text: str, limit: int) -> int:
    """Where to end a piece of at most ``limit`` characters of ``text`` (``> 0``)."""
    if len(text) <= limit:
        return len(text)
    for mark in _BREAKS:
        # A break in the second half only: pieces of a few characters would multiply
        # the requests for nothing.
        at = text.rfind(mark, limit // 2, limit)
        if at > 0:
            return at + 1
    return limit


def split_item(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters each, markers included.

    Every piece but the last ends with :data:`CONTINUES`, every piece but the first
    starts with :data:`CONTINUED`; removing the markers and joining the pieces gives
    ``text`` back.
    """
    if len(text) <= limit:
        return [text]
    room = limit - len(CONTINUES) - len(CONTINUED)
    if room < 1:
        raise ValueError(f"a part of {limit} characters cannot hold a piece of text")
    pieces: list[str] = []
    rest = text
    while rest:
        first = not pieces
        budget = room + (len(CONTINUED) if first else 0)
        if len(rest) <= budget + len(CONTINUES):
            pieces.append(rest if first else CONTINUED + rest)
            break
        end = _cut(rest, budget)
        piece = rest[:end]
        pieces.append((piece if first else CONTINUED + piece) + CONTINUES)
        rest = rest[end:]
    return pieces


def pack(items: Sequence[str], limit: int) -> list[str]:
    """Consecutive ``items``, one per line, in as few parts of at most ``limit``
    characters as keep them in order; an item longer than ``limit`` is split into
    pieces that are parts of their own."""
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for item in items:
        needed = len(item) + (1 if current else 0)
        if current and size + needed <= limit:
            current.append(item)
            size += needed
            continue
        if current:
            parts.append("\n".join(current))
            current, size = [], 0
        if len(item) <= limit:
            current, size = [item], len(item)
        else:
            parts.extend(split_item(item, limit))
    if current:
        parts.append("\n".join(current))
    return parts
