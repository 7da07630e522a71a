"""Statistics of conversations: what ``ctxmgr stats`` reports, computed in the library.

:meth:`FileStats.add` counts a conversation read into the model; its twin
:meth:`FileStats.add_outline` counts one read from its outline (no model imported), when
:meth:`FileStats.takes` says the outline holds all the counts need. The property tests of
``tests/cli/test_outline_reports.py`` hold the two to the same report.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ctxmgr.errors import CtxmgrError
from ctxmgr.formats._base import SUMMARY_HEADER, Conversation
from ctxmgr.formats._detection.native import SUMMARY_MARKER
from ctxmgr.state._tokens import (
    UNITS_PER_TOKEN,
    message_units,
    reference_estimate_tokens,
    text_units,
    tokens_from_units,
)

if TYPE_CHECKING:
    from ctxmgr.formats._outlines import Outlined
    from ctxmgr.state import Message

__all__ = ["FileStats", "Triggers", "group_companions", "held_figures", "held_messages", "messages_figures"]

# The marks a reader lifts a summary by, and same-length stand-ins that mark nothing:
# read back with these, a written file shows its summary as the plain text (and
# message) it holds. Same length, so every character count stays what was written.
_MARKS = (
    (SUMMARY_HEADER.encode(), b"[ctxmgr- summary of the earlier conversation]"),
    (f'"{SUMMARY_MARKER}"'.encode(), b'"ctxmgr_summarz"'),
)


def held_messages(conversation: Conversation, *, to: str | None = None) -> tuple[list[Message], int]:
    """What ``conversation`` holds once written in its format (or ``to``).

    Returns the messages the written file holds, a summary written as a message (or
    inside the system prompt) included as the text it is written as, header and all;
    and the units (:func:`~ctxmgr.state._tokens.text_units`) of a summary kept in a field
    (native ``context_summary``), which holds text but adds no message. Without a
    summary this is the model's own messages.
    """
    held = _read_back(conversation, to, outline=False)
    assert isinstance(held, _Held)  # no outline was asked for
    return held.messages, held.field_units


class _Held(NamedTuple):
    messages: list[Message]
    field_units: int


def _read_back(
    conversation: Conversation, to: str | None, *, outline: bool, written: bytes | None = None
) -> _Held | tuple[int, int]:
    """:func:`held_messages`; with ``outline``, the figures (messages, tokens) of the
    written file read from its outline where its format has one that reads it
    (:mod:`ctxmgr.formats._outlines`: the same counts as the full reader's, without
    building a message), else its messages. ``written``: the bytes the caller wrote of
    ``conversation`` (``formats.dump(conversation, to=to)``), read instead of a write of
    its own."""
    state = conversation.state
    if not state.context_summary:
        return _Held(list(state.context), 0)
    from ctxmgr import _io as io, formats

    target = to or conversation.format
    try:
        if written is None:
            # A copy with its own warnings list: writing notes warnings, and this write is
            # only a measurement (the caller writes, and reports, the real one).
            shadow = dataclasses.replace(conversation, warnings=[])
            shadow.original_summary = conversation.original_summary  # replace() resets it
            written = formats.dump(shadow, to=to)
        data = written
        for mark, plain in _MARKS:
            data = data.replace(mark, plain)
        value, layout, _ = io.parse(data, "<written>")
        if outline:
            figures = _outline_figures(value, target)
            if figures is not None:
                return figures
        read_back = formats.load_value(value, source="<written>", layout=layout, fmt=target)
    except CtxmgrError:
        # The write itself fails (a placement the format lacks): the caller's own write
        # raises and reports the same error. Count the summary as the marked text it
        # would be stored as rather than leave it out.
        return _Held(list(state.context), text_units(f"{SUMMARY_HEADER}\n{state.context_summary}"))
    return _Held(list(read_back.state.context), text_units(read_back.state.context_summary or ""))


def _outline_figures(value: Any, fmt: str) -> tuple[int, int] | None:
    """``(messages, tokens)`` of a written conversation from its outline, as
    :func:`held_figures` counts them from its messages; ``None`` when the outline
    declines it, or the full reader must judge whether it means anything."""
    from ctxmgr.formats._meaning import may_mean_nothing
    from ctxmgr.formats._outlines import outlined, summary_field_units

    found = outlined(value, fmt, source="<written>")
    if found is None:
        return None
    # Counted once, for the test and the figures alike (an outline counts them anew at
    # each call of its ``units``).
    units = found.outline.units()
    if may_mean_nothing(dataclasses.replace(found.outline, units=lambda: units)):
        return None
    field_units = summary_field_units(fmt, value)
    if not units and not field_units:
        return 0, 0
    return len(units), tokens_from_units([*units, field_units])


def held_figures(conversation: Conversation, *, to: str | None = None, written: bytes | None = None) -> tuple[int, int]:
    """``(messages, estimated tokens)`` of ``conversation`` as written (see :func:`held_messages`).

    The figures every report shows "after" (and "before", of a file as read): the
    summary is part of what a model is sent, so it is part of the count. ``written``:
    the bytes the caller wrote of it (``formats.dump(conversation, to=to)``), when it
    has them: they are read back rather than written a second time.
    """
    held = _read_back(conversation, to, outline=True, written=written)
    if not isinstance(held, _Held):
        return held  # counted from the outline
    return messages_figures(*held)


def messages_figures(messages: Sequence[Message], field_units: int = 0) -> tuple[int, int]:
    """``(messages, estimated tokens)`` of ``messages`` and a summary field of
    ``field_units``: :func:`held_figures` of a conversation holding no summary, whose
    messages are what it holds as written."""
    if not messages and not field_units:
        return 0, 0
    return len(messages), tokens_from_units([*(message_units(m) for m in messages), field_units])


@dataclass(frozen=True)
class Triggers:
    """The thresholds whose firing ``stats`` reports (as ``trim``/``summarize`` use them)."""

    trim_max_messages: int | None = 10
    summary_max_messages: int | None = 30
    token_budget: int | None = None
    token_estimate: Callable[[Sequence[Message]], int] = reference_estimate_tokens
    """What ``token_budget`` is compared with, as ``SummaryContextManager(token_estimate=)``
    (one of :data:`~ctxmgr.state._tokens.TRIGGER_ESTIMATES`)."""


@dataclass
class FileStats:
    """Counts over every conversation of one file."""

    path: str
    top: int = 3
    format: str | None = None
    conversations: int = 0
    messages: int = 0
    roles: Counter[str] = field(default_factory=Counter)
    tool_calls: int = 0
    tokens: int = 0
    with_summary: int = 0
    trim_would_fire: int = 0
    summary_would_fire: int = 0
    largest: list[tuple[int, int, int | None, str]] = field(default_factory=list)
    """(tokens, message index, dataset line, role), largest first."""
    companions: list[str] = field(default_factory=list)
    """The files counted with this one: its session's companions (see :func:`group_companions`)."""

    def add(self, conversation: Conversation, triggers: Triggers, line: int | None = None) -> None:
        """Count one conversation."""
        from ctxmgr.state._tools import call_ids

        self.format = self.format or conversation.format
        context = conversation.state.context
        # Messages, roles and tokens count what the file holds, its summary included;
        # the triggers below look at what the managers see (messages, no summary).
        held, field_units = held_messages(conversation)
        self.conversations += 1
        self.messages += len(held)
        self.roles.update(m.role for m in held)
        self.tool_calls += sum(len(call_ids(m)) or len(m.tools_calls or ()) for m in context)
        if held or field_units:
            self.tokens += tokens_from_units([*(message_units(m) for m in held), field_units])
        # What the summary trigger counts (the reference's estimate unless told), not the report's.
        trigger_tokens = triggers.token_estimate(context) if context else 0
        if conversation.state.context_summary:
            self.with_summary += 1
        users = sum(1 for m in context if m.role == "user")
        if triggers.trim_max_messages is not None and users > triggers.trim_max_messages:
            self.trim_would_fire += 1
        if (triggers.summary_max_messages is not None and len(context) > triggers.summary_max_messages) or (
            triggers.token_budget is not None and trigger_tokens > triggers.token_budget
        ):
            self.summary_would_fire += 1
        sizes = ((message_units(m) // UNITS_PER_TOKEN, index, line, m.role) for index, m in enumerate(context))
        self.largest = heapq.nlargest(
            self.top, [*self.largest, *heapq.nlargest(self.top, sizes)], key=lambda item: item[0]
        )

    @staticmethod
    def takes(triggers: Triggers) -> Callable[[Outlined], bool]:
        """Which outlined conversations :meth:`add_outline` counts under ``triggers``: not
        one holding a summary (its figures are those of the file as written, see
        :func:`held_messages`), nor any when a token budget is set (its estimate counts
        the model's blocks)."""

        def take(found: Outlined) -> bool:
            # A summary field (native AgentState's; another format's container merely holds
            # the key, and is left to the full path all the same).
            value = found.value
            return triggers.token_budget is None and not (isinstance(value, dict) and value.get("context_summary"))

        return take

    def add_outline(self, found: Outlined, triggers: Triggers, line: int | None = None) -> None:
        """:meth:`add` on a conversation read from its outline (one :meth:`takes` accepts)."""
        outline = found.outline
        roles = outline.roles
        self.format = self.format or found.format
        self.conversations += 1
        self.messages += len(roles)
        self.roles.update(roles)
        self.tool_calls += sum(map(len, outline.calls))
        units = outline.units() if roles else []
        if roles:
            self.tokens += tokens_from_units(units)
        users = roles.count("user")
        if triggers.trim_max_messages is not None and users > triggers.trim_max_messages:
            self.trim_would_fire += 1
        if triggers.summary_max_messages is not None and len(roles) > triggers.summary_max_messages:
            self.summary_would_fire += 1
        sizes = ((units[index] // UNITS_PER_TOKEN, index, line, role) for index, role in enumerate(roles))
        self.largest = heapq.nlargest(
            self.top, [*self.largest, *heapq.nlargest(self.top, sizes)], key=lambda item: item[0]
        )

    def absorb(self, other: FileStats) -> None:
        """Count ``other`` (a companion file) on this line: every figure but the largest
        messages, whose positions are this file's."""
        self.companions.append(other.path)
        self.conversations += other.conversations
        self.messages += other.messages
        self.roles.update(other.roles)
        self.tool_calls += other.tool_calls
        self.tokens += other.tokens
        self.with_summary += other.with_summary
        self.trim_would_fire += other.trim_would_fire
        self.summary_would_fire += other.summary_would_fire

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``stats --json``; ``companions`` only on a line that has some)."""
        return {
            "path": self.path,
            "format": self.format,
            "conversations": self.conversations,
            "messages": self.messages,
            "messages_by_role": dict(sorted(self.roles.items())),
            "tool_calls": self.tool_calls,
            "estimated_tokens": self.tokens,
            "conversations_with_summary": self.with_summary,
            "trim_would_fire": self.trim_would_fire,
            "summary_would_fire": self.summary_would_fire,
            "largest_messages": [
                {"estimated_tokens": tokens, "index": index, "line": line, "role": role}
                for tokens, index, line, role in self.largest
            ],
            **({"companions": self.companions} if self.companions else {}),
        }


def group_companions(results: Sequence[FileStats]) -> list[FileStats]:
    """``results`` with each session's companion files counted on the session's line.

    A format's registry entry may name the files that belong to one of its sessions (its
    ``companions`` glob, relative to the session file's folder, ``{stem}`` its name without
    the extension: Claude Code's subagent logs). A result of such a format absorbs the
    results of the files its glob matches, which then have no line of their own; a file
    matched by no session keeps its line. Only files the run read are counted.
    """
    import glob
    import os

    from ctxmgr import _format_registry as format_registry

    by_path = {os.path.normpath(r.path): r for r in results}
    absorbed: set[int] = set()
    for result in results:
        if id(result) in absorbed or result.format not in format_registry.NAMES:
            continue
        rule = format_registry.entry(result.format).companions
        if rule is None:
            continue
        folder, name = os.path.split(result.path)
        pattern = os.path.join(glob.escape(folder), rule.format(stem=glob.escape(os.path.splitext(name)[0])))
        for match in sorted(glob.glob(pattern)):
            companion = by_path.get(os.path.normpath(match))
            if companion is not None and companion is not result and id(companion) not in absorbed:
                result.absorb(companion)
                absorbed.add(id(companion))
    return [r for r in results if id(r) not in absorbed]
