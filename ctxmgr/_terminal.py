"""What a terminal acts on instead of showing, and how ctxmgr shows it instead.

Conversations, file names, config values, model answers and servers' messages are input,
possibly an attacker's: none of them may move the cursor, retitle the window, clear the
screen, hide a line or forge one. One table of the characters that could, used two ways:

* :func:`escape_text` for messages (``ESC`` shown as ``\\x1b``, a newline as ``\\n``);
* :func:`safe_json` for JSON text going to a terminal: JSON may hold DEL, C1 controls,
  line separators and bidi overrides raw inside strings, and ``\\uXXXX`` is the same value.

Standard library only: used on every path, ``trim`` included.
"""

from __future__ import annotations

import re
from typing import IO

__all__ = ["ACTIVE", "escape_text", "safe_json", "write_for"]

ACTIVE: tuple[int, ...] = (
    *range(0x00, 0x20),  # C0 controls: ESC starts colour, cursor, title and clipboard sequences
    0x7F,  # DEL
    *range(0x80, 0xA0),  # C1 controls: 0x9B is a one-byte CSI
    0x2028,  # line separator
    0x2029,  # paragraph separator
    0x061C,  # bidirectional marks and overrides, which make text display in another
    0x200E,  # order than it reads ("Trojan Source")
    0x200F,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
)
"""Code points a terminal acts on: C0 and C1 controls, DEL, the Unicode line and
paragraph separators, and the bidirectional marks and overrides."""

_ESCAPES = {code: (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}") for code in ACTIVE}
_ESCAPES.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"})
_SINGLE_LINE = str.maketrans(_ESCAPES)
_MULTI_LINE = str.maketrans({code: text for code, text in _ESCAPES.items() if code not in (0x09, 0x0A)})

# Inside JSON text, only the characters JSON leaves raw can occur (C0 controls are always
# escaped by a JSON writer): everything from DEL up, as UTF-8.
_IN_JSON = re.compile(b"|".join(re.escape(chr(code).encode("utf-8")) for code in ACTIVE if code >= 0x7F))


def escape_text(text: str, *, multiline: bool = False) -> str:
    """``text`` with every character of :data:`ACTIVE` shown as an escape (``\\x1b``,
    ``\\u202e``); newlines and tabs too, unless ``multiline``."""
    return text.translate(_MULTI_LINE if multiline else _SINGLE_LINE)


def safe_json(data: bytes) -> bytes:
    """JSON text with every character of :data:`ACTIVE` written as a ``\\uXXXX`` escape:
    the same JSON value, shown by a terminal instead of obeyed."""
    return _IN_JSON.sub(lambda m: f"\\u{ord(m.group().decode('utf-8')):04x}".encode(), data)


def write_for(stream: IO[bytes], data: bytes) -> None:
    """Write JSON ``data`` to ``stream``: as it is into a file or a pipe, through
    :func:`safe_json` when a person reads it on a terminal."""
    stream.write(safe_json(data) if stream.isatty() else data)
