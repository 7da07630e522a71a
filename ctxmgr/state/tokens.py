"""The token estimate: the one place it is computed.

The reference estimates one token per four characters of message text, plus the length
of the string form of any ``tools_calls``, and never less than one token. Every report
(diff view, ``--json``, ``stats``) uses these functions so their numbers agree with the
summary trigger.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ctxmgr import _nesting

if TYPE_CHECKING:
    from ctxmgr.state.message import Message

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens", "message_chars", "tokens_from_chars"]

CHARS_PER_TOKEN = 4


def message_chars(message: Message) -> int:
    """Characters the estimate counts for one message."""
    chars = len(message.text())
    if message.tools_calls:
        # str(), not json: the reference counts Python's repr of the list.
        chars += len(_nesting.text(message.tools_calls))
    return chars


def estimate_tokens(messages: Iterable[Message]) -> int:
    """Estimated tokens of ``messages`` together: total characters // 4, at least 1."""
    return tokens_from_chars(message_chars(m) for m in messages)


def tokens_from_chars(chars: Iterable[int]) -> int:
    """The estimate from each message's :func:`message_chars` (outlines count them from
    the records, without building messages)."""
    return max(1, sum(chars) // CHARS_PER_TOKEN)
