"""What the compaction managers did, how to chain managers, and copies of edited messages.

The managers of :mod:`ctxmgr.state._budget`, :mod:`ctxmgr.state._clearing` and
:mod:`ctxmgr.state._truncation` keep the reference's interface (``trim_context(state) ->
state``); each adds a :class:`CompactionReport` to the innermost
:func:`collect_compaction_reports` block, as the summary manager reports its summaries:

    with collect_compaction_reports() as reports:
        state = manager.trim_context(state)
    print(sum(r.tokens_removed for r in reports))

A message a manager edits (a cleared or truncated result, cleared arguments) is a copy
without source records, so the format writers write it from the model; the messages it
keeps unedited are the very objects it was given, written back from their records.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ctxmgr import _nesting
from ctxmgr.state._managers import BaseContextManager
from ctxmgr.state._tokens import message_units, tokens_from_units

if TYPE_CHECKING:
    from ctxmgr.state._agent import AgentState
    from ctxmgr.state.message import Message

__all__ = [
    "CLEARED_PREFIX",
    "ChainContextManager",
    "CompactionManager",
    "CompactionReport",
    "collect_compaction_reports",
    "edited",
    "measured_report",
    "record_compaction_report",
    "tokens_of",
]

S = TypeVar("S", bound="AgentState")

COUNTERS = ("messages_dropped", "cleared_results", "truncated_outputs", "chars_removed", "tokens_removed")
"""The counters every :class:`CompactionReport` has, in the order ``--json`` gives them."""


@dataclass
class CompactionReport:
    """What one compaction manager did to one conversation.

    Attributes:
        manager: The manager's class name.
        messages_dropped: Messages removed.
        cleared_results: Tool results replaced by a placeholder.
        truncated_outputs: Tool results cut to their head and tail.
        chars_removed: Characters of text removed (dropped messages' text, cut output).
        tokens_removed: Estimated tokens before minus after (the reports' estimate).
        warnings: What the user should know (a pin that matched nothing, a budget the
            messages that are never cut exceed).
    """

    manager: str = ""
    messages_dropped: int = 0
    cleared_results: int = 0
    truncated_outputs: int = 0
    chars_removed: int = 0
    tokens_removed: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.messages_dropped or self.cleared_results or self.truncated_outputs)

    def as_json(self) -> dict[str, Any]:
        """The counters and warnings as plain JSON values."""
        return {"manager": self.manager, **{name: getattr(self, name) for name in COUNTERS}, "warnings": self.warnings}


def totals(reports: Sequence[CompactionReport]) -> dict[str, int]:
    """Each counter of :data:`COUNTERS`, summed over ``reports``."""
    return {name: sum(getattr(report, name) for report in reports) for name in COUNTERS}


_reports: ContextVar[list[CompactionReport] | None] = ContextVar("ctxmgr_compaction_reports", default=None)


@contextmanager
def collect_compaction_reports() -> Iterator[list[CompactionReport]]:
    """Collect the :class:`CompactionReport` of every compaction made inside the block."""
    reports: list[CompactionReport] = []
    token = _reports.set(reports)
    try:
        yield reports
    finally:
        _reports.reset(token)


def record_compaction_report(report: CompactionReport) -> None:
    """Add ``report`` to the innermost :func:`collect_compaction_reports` block, if any."""
    reports = _reports.get()
    if reports is not None:
        reports.append(report)


def tokens_of(messages: Sequence[Message]) -> int:
    """The reports' estimate (``stats``, ``--json``) of ``messages``; 0 for none."""
    return tokens_from_units(message_units(m) for m in messages) if messages else 0


CLEARED_PREFIX = "[tool result cleared by ctxmgr: "
"""How a cleared result's placeholder begins (a result already cleared is left as is;
here, below the managers that write and read it, none of which loads the model)."""


def output_text(output: Any) -> str:
    """A tool output as the reports count it: a string as is, anything else as JSON."""
    return output if isinstance(output, str) else _nesting.dumps(output, default=str)


def edited(message: Message, **update: Any) -> Message:
    """A copy of ``message`` with ``update`` applied and no source records (so a writer
    writes the edit from the model instead of the records it was read from); the
    original's records stay known as :meth:`Message.edited_source_in`, whose keys the
    writer carries into the edited record."""
    copy = message.model_copy(update=update)
    if message._source is not None:
        copy._edited_source, copy._edited_format = message._source, message._source_format
    copy._source = None
    copy._source_format = None
    return copy


def _chars(message: Message) -> int:
    """Characters of what the estimate counts: the text and the tool calls."""
    return len(message.text()) + (len(_nesting.text(message.tools_calls)) if message.tools_calls else 0)


class CompactionManager(BaseContextManager["AgentState"]):
    """Base of the compaction managers: :meth:`compact` on a message list, reported.

    ``trim_context`` replaces ``state.context`` by what :meth:`compact` returns (when it
    changed anything) and records the report; ``context_summary`` is untouched.
    """

    @abstractmethod
    def compact(self, messages: Sequence[Message]) -> tuple[list[Message], CompactionReport]:
        """The messages to keep (edited copies where edited) and what was done."""

    def trim_context(self, state: S) -> S:
        """Compact ``state.context`` in place and return ``state``."""
        kept, report = self.compact(state.context)
        if report.changed:
            state.context = kept
        record_compaction_report(report)
        return state

    async def atrim_context(self, state: S) -> S:
        """The same as :meth:`trim_context` (nothing here waits)."""
        return self.trim_context(state)

    def _report(self, before: Sequence[Message], after: Sequence[Message], **counts: Any) -> CompactionReport:
        """The report of turning ``before`` into ``after``: the messages of ``after`` that
        are not (the very objects) in ``before`` are new or edited; only those, and the
        messages gone, are measured beside the total."""
        kept = {id(m) for m in after}
        known = {id(m) for m in before}
        gone = [m for m in before if id(m) not in kept]
        new = [m for m in after if id(m) not in known]
        units_before = sum(message_units(m) for m in before)
        units_after = units_before - sum(message_units(m) for m in gone) + sum(message_units(m) for m in new)
        return measured_report(
            type(self).__name__,
            units_before=units_before if before else None,
            units_after=units_after if after else None,
            chars_removed=sum(map(_chars, gone)) - sum(map(_chars, new)),
            **counts,
        )


def measured_report(
    manager: str, *, units_before: int | None, units_after: int | None, chars_removed: int, **counts: Any
) -> CompactionReport:
    """A :class:`CompactionReport` from the units (:func:`message_units`) of the messages
    before and after (``None``: no message) and the characters removed (counted as
    :func:`_chars` counts them; the model's or an outline's)."""
    tokens_before = tokens_from_units([units_before]) if units_before is not None else 0
    tokens_after = tokens_from_units([units_after]) if units_after is not None else 0
    return CompactionReport(
        manager=manager,
        chars_removed=max(0, chars_removed),
        tokens_removed=max(0, tokens_before - tokens_after),
        **counts,
    )


class ChainContextManager(BaseContextManager["AgentState"]):
    """Managers applied one after the other, each to what the one before left.

    Any :class:`BaseContextManager` may be chained (a summary manager too: the chain
    awaits it in :meth:`atrim_context`); for example clearing, then truncation, then a
    token budget::

        ChainContextManager(
            ToolResultClearingManager(keep_tool_results=3),
            ToolOutputTruncationManager(max_tool_output=500),
            TokenBudgetContextManager(max_tokens=8000),
        )
    """

    def __init__(self, *managers: BaseContextManager[Any]) -> None:
        self.managers = list(managers)

    def trim_context(self, state: S) -> S:
        for manager in self.managers:
            state = manager.trim_context(state)
        return state

    async def atrim_context(self, state: S) -> S:
        for manager in self.managers:
            state = await manager.atrim_context(state)
        return state

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(map(repr, self.managers))})"
