"""One line of text: how anything from a conversation or a model enters a line-based rendering.

The transcript sent to a summarizer, the offline digest, the request to combine partial
summaries and the request naming missing facts are read line by line (by a model, and by
the offline digest), and a line that starts with ``USER:``, ``SYSTEM:`` or ``- The system
said:`` speaks with that role. So every string that lands in such a line (message text,
tool names, call ids, media types, kinds of records, answers) goes through
:func:`one_line`: no value can start a line of its own.
"""

from __future__ import annotations

__all__ = ["one_line"]


def one_line(text: str) -> str:
    """``text`` with every run of whitespace, line breaks included, made one space.

    ``str.split()`` splits on every character ``str.splitlines()`` breaks at (``\\n``,
    ``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029``),
    so the result holds no line break in any reader's sense.
    """
    return " ".join(text.split())
