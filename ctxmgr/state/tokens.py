"""The token estimates: the one place they are computed, side by side.

Both count one token per four characters, never less than one, and add the length of
the string form of any ``tools_calls``. They differ in what text they count:

* :func:`estimate_tokens`, ctxmgr's, for the reports (diff view, ``--json``,
  ``stats``): the text of :meth:`Message.text`, so tool outputs count;
* :func:`reference_estimate_tokens`, the reference's ``_estimate_tokens``, for the
  summary trigger, so ``token_budget`` fires exactly where the reference's does: every
  block's ``text`` attribute (text blocks and documents' text), not tool outputs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ctxmgr import _nesting

if TYPE_CHECKING:
    from ctxmgr.state.message import Message

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens", "message_chars", "reference_estimate_tokens", "tokens_from_chars"]

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


def reference_estimate_tokens(messages: Iterable[Message]) -> int:
    """The reference's estimate, which the summary trigger uses: total characters // 4, at least 1.

    Counts each block's non-empty ``text`` attribute (a text block's text, a document's
    text) and the string form of ``tools_calls``; tool outputs and anything else count
    nothing. Content that is not a list of blocks (a ``model_construct`` message) adds
    only what iterating over it finds.
    """
    chars = 0
    for message in messages:
        for block in message.content:
            text = getattr(block, "text", None)
            if text:
                chars += len(text)
        if message.tools_calls:
            chars += len(_nesting.text(message.tools_calls))
    return max(1, chars // CHARS_PER_TOKEN)
