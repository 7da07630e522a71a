"""How many messages and estimated tokens one conversation holds, as read and as written.

A conversation compacted through the model is measured from its
:class:`~ctxmgr._pipeline.Outcome` (:func:`outcome_figures`); one the fast path trimmed,
from its outline (:func:`outline_figures`). Both give the same :class:`Figures` for the
same conversation, which :meth:`ctxmgr.files._results.FileResult.count` adds up.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, NamedTuple

from ctxmgr.formats._outlines import summary_field_units
from ctxmgr.state._tokens import estimate_tokens, message_units, tokens_from_units

if TYPE_CHECKING:
    from ctxmgr._pipeline import Outcome
    from ctxmgr.formats._base import Conversation, Outline
    from ctxmgr.state.message import Message

__all__ = ["Figures", "outcome_figures", "outline_figures", "summary_field_units"]


class Figures(NamedTuple):
    """One conversation's counts: messages and estimated tokens before and after (tokens
    are 0 when not measured), whether it changed, and whether a summary was added.

    A named tuple: one is made per conversation, on the fast path too, and it is cheap to
    make and to define (start-up).
    """

    messages_before: int
    messages_after: int
    tokens_before: int = 0
    tokens_after: int = 0
    changed: bool = False
    summary_added: bool = False


def outcome_figures(outcome: Outcome, *, measure: bool, to: str | None, written: bytes | None = None) -> Figures:
    """The figures of a conversation compacted through the model.

    They are those of the conversation as written (in format ``to``, else its own) and
    as read: a summary counts with the text it is stored as, and as a message where it
    is written as one (see :func:`ctxmgr._stats.held_figures`). ``written``: the bytes
    written of the conversation (``formats.dump(outcome.conversation, to=to)``), if the
    caller has them, read back instead of a second write.
    """
    before, after = outcome.before, outcome.after
    if outcome.summary_before or outcome.summary_after:
        messages_before, tokens_before, messages_after, tokens_after = _held_counts(outcome, to, written)
        if not measure:
            tokens_before = tokens_after = 0
    else:
        messages_before, messages_after = len(before), len(after)
        tokens_before = estimate_tokens(before) if measure and before else 0
        tokens_after = estimate_tokens(after) if measure and after else 0
    return Figures(
        messages_before,
        messages_after,
        tokens_before,
        tokens_after,
        changed=outcome.changed,
        summary_added=outcome.summary_after != outcome.summary_before,
    )


def outline_figures(outline: Outline, kept: list[int] | None, *, measure: bool, summary_units: int = 0) -> Figures:
    """The figures of a conversation trimmed from its outline (``kept``: the indices kept,
    ``None`` for all), the same as :func:`outcome_figures` gives on the full path.

    ``summary_units``: a summary field the outline let through (native
    ``context_summary``; outlines decline every summary stored as text), held before and
    after alike (a trim keeps it), so it counts on both sides as on the full path.
    """
    total = len(outline.roles)
    after = total if kept is None else len(kept)
    tokens_before = tokens_after = 0
    if measure and (total or summary_units):
        units = [*outline.units(), summary_units] if summary_units else outline.units()
        tokens_before = tokens_from_units(units)
        if kept is None:
            tokens_after = tokens_before
        elif kept or summary_units:
            tokens_after = tokens_from_units([*(units[i] for i in kept), summary_units])
    return Figures(total, after, tokens_before, tokens_after, changed=kept is not None)


def _held_counts(outcome: Outcome, to: str | None, written: bytes | None = None) -> tuple[int, int, int, int]:
    """Messages and tokens before and after of a conversation holding a summary, as read
    and as written (the written file's, not the model's: see :func:`outcome_figures`)."""
    from ctxmgr._stats import held_figures, messages_figures

    conversation = outcome.conversation
    if not outcome.summary_before:
        # Read without a summary (the offline digest's and every first summary's case):
        # what held_figures finds of the file as read is its messages, so they are counted
        # without building the copy below for it.
        messages_before, tokens_before = messages_figures(outcome.before)
        messages_after, tokens_after = held_figures(conversation, to=to, written=written)
        return messages_before, tokens_before, messages_after, tokens_after
    # The file as read: its messages and summary, written back in its own format (kept
    # records and an unchanged summary are written as they were read).
    as_read = dataclasses.replace(
        conversation,
        state=conversation.state.model_copy(
            update={"context": outcome.before, "context_summary": outcome.summary_before}
        ),
        summary_as=None,
    )
    as_read.original_summary = outcome.summary_before
    if (
        outcome.summary_after == outcome.summary_before
        and to in (None, conversation.format)
        and conversation.summary_as is None
        and not conversation.summary_from_user_turn
    ):
        return _kept_summary_counts(outcome, as_read, to)
    messages_before, tokens_before = held_figures(as_read)
    messages_after, tokens_after = held_figures(conversation, to=to, written=written)
    return messages_before, tokens_before, messages_after, tokens_after


def _kept_summary_counts(outcome: Outcome, as_read: Conversation, to: str | None) -> tuple[int, int, int, int]:
    """The counts of a trim that kept the summary as it was read (both sides measured
    whole when the manager dropped a leading system message).

    The summary is written back as it was read, among or right after the leading system
    messages (which a trim never drops), so it adds the same before and after. Measured
    on those system messages alone: a dataset whose lines hold summaries takes the full
    path, and a write and a read of every whole line would double its cost.
    """
    from ctxmgr._stats import held_figures, held_messages

    lead = next((i for i, m in enumerate(outcome.before) if m.role != "system"), len(outcome.before))
    leading = outcome.before[:lead]
    kept = {id(m) for m in outcome.after}
    if not all(id(m) in kept for m in leading):  # a manager that drops them: measure both
        return (*held_figures(as_read), *held_figures(outcome.conversation, to=to))
    as_read.state = as_read.state.model_copy(update={"context": leading})
    held, field_units = held_messages(as_read)
    extra_messages = len(held) - lead
    extra_units = sum(map(message_units, held)) + field_units - sum(map(message_units, leading))

    def figures(messages: list[Message]) -> tuple[int, int]:
        count = len(messages) + extra_messages
        units = [*map(message_units, messages), extra_units]
        return count, tokens_from_units(units) if messages or extra_units else 0

    return (*figures(outcome.before), *figures(outcome.after))
