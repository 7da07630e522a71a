"""Whether a file read under a format the user named (``--from``) means anything in it.

Every reader carries what it has no reading for rather than fail (a record or content
part of an unknown type becomes a passthrough block, written back untouched), so a file
of another kind read under the wrong ``--from`` can come out as a conversation of blank
messages that are nothing but passthroughs: ``stats`` would count it, ``trim`` write it
back unchanged and ``convert`` turn it into one empty message, all exiting 0.

The rule, on the messages read (the same for every format):

* a message is *read* when it holds a block the format models: text that is not empty,
  a tool call or result, reasoning, media, an error (a legacy ``tools_calls`` list
  counts too);
* a message is *unread* when it holds passthrough blocks (records or content parts the
  format has no reading for) and nothing else but empty text;
* a message with no block at all, or only empty text, is *empty*: neither;
* the file means nothing in the format when it has messages and none is read (every
  one unread or empty: the one blank message of a JSONL log read as Responses items),
  or more are unread than read.

A file with no message at all is an empty conversation, not a wrong format; so is one whose
messages are all empty when detection, too, finds the format named (the caller checks that:
:func:`ctxmgr.formats.load_value`). Dataset
lines are not judged by this rule: each line is a conversation record already, found by
its key (``messages``, ``contents``...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxmgr.formats._base import Conversation, Outline

# The model is imported where a conversation is judged: the trim fast path asks
# :func:`may_mean_nothing` of an outline without loading pydantic.

__all__ = ["may_mean_nothing", "unread_records"]

PASSTHROUGH_MIME = "application/vnd.ctxmgr.passthrough+json"  # ctxmgr.formats._interop's, which loads the model


def may_mean_nothing(outline: Outline) -> bool:
    """Whether a conversation read from its ``outline`` may mean nothing by the rule:
    more of its messages have no text (no token units) and no call or result ids than
    have some, or none has. Only then does the full reader need to judge it."""
    units = outline.units()
    read = sum(1 for i in range(len(outline.roles)) if units[i] > 0 or outline.calls[i] or outline.results[i])
    return bool(outline.roles) and (read == 0 or len(outline.roles) - read > read)


def unread_records(conversation: Conversation) -> tuple[int, int] | None:
    """``(unread, read)`` when ``conversation`` means nothing in its format (see the
    module docstring), else ``None``."""
    from ctxmgr.state import DataBlock, TextBlock

    def passthrough(block: object) -> bool:
        return isinstance(block, DataBlock) and block.mime_type == PASSTHROUGH_MIME

    def blank(block: object) -> bool:
        return isinstance(block, TextBlock) and not block.text

    messages = conversation.state.context
    if not messages:
        return None
    read = unread = 0
    for message in messages:
        if message.tools_calls or any(not passthrough(b) and not blank(b) for b in message.content):
            read += 1
        elif any(passthrough(b) for b in message.content):
            unread += 1
    if read == 0 or unread > read:
        return unread, read
    return None
