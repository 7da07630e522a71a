"""How many tokens a text is estimated at: the characters' weights, below every layer.

:mod:`ctxmgr.state._tokens` explains the estimates and builds the message-level ones on
these; the providers and the summary cache size requests and summaries with them
without importing the conversation model.
"""

from __future__ import annotations

__all__ = ["CHARS_PER_TOKEN", "UNITS_PER_TOKEN", "text_units"]

CHARS_PER_TOKEN = 4
"""Characters a token in the reference's estimate (and in the sizes of summary requests)."""

UNITS_PER_TOKEN = 4
"""Units of :func:`text_units` a token: an ASCII character is one."""


def _lead_byte_classes() -> bytes:
    # Each byte of UTF-8 becomes the class of the character it starts: b (2 units),
    # c (4), d (8); ASCII and continuation bytes become "." and are not counted (ASCII
    # is in len(text) already). U+0800..U+1FFF start with E0 or E1.
    table = bytearray(b"." * 256)
    table[0xC0:0xE2] = b"b" * (0xE2 - 0xC0)
    table[0xE2:0xF0] = b"c" * (0xF0 - 0xE2)
    table[0xF0:0xF8] = b"d" * (0xF8 - 0xF0)
    return bytes(table)


_CLASSES = _lead_byte_classes()


def text_units(text: str) -> int:
    """Units (quarter tokens) of ``text``, script-aware: see the module's table.

    ``len(text)`` for ASCII text; lone surrogates count as other characters below U+FFFF.
    """
    if text.isascii():
        return len(text)
    # At C speed: one byte per UTF-8 sequence says its range. Every character is one
    # unit in len(text); the counts add what each class weighs beyond that.
    classes = text.encode("utf-8", "surrogatepass").translate(_CLASSES)
    return len(text) + classes.count(b"b") + 3 * classes.count(b"c") + 7 * classes.count(b"d")
