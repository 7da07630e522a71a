"""Tool output cleared and cut in the span a summary manager sends to the summarizer.

:class:`~ctxmgr.state.summary_context_manager.SummaryContextManager` can clear old tool
results and cut long ones in the messages it summarizes, so the requests carry fewer
tokens; the messages it keeps are not touched. The work is the compaction managers'
(:class:`~ctxmgr.state.ToolResultClearingManager`,
:class:`~ctxmgr.state.ToolOutputTruncationManager`) run on the span alone, and the
request says what they did (:meth:`SpanEdits.note`), so the summarizer knows the
placeholders stand for content it was not shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxmgr.state._blocks import ToolResultBlock
from ctxmgr.state._clearing import CLEARED_PREFIX, ToolResultClearingManager
from ctxmgr.state._compaction import CompactionManager
from ctxmgr.state._truncation import ToolOutputTruncationManager

if TYPE_CHECKING:
    from ctxmgr.state.message import Message

__all__ = ["SPAN_COUNTERS", "SpanEdits", "edit_span", "span_managers", "without_markers"]

SPAN_COUNTERS = ("cleared_results", "truncated_outputs", "chars_removed", "tokens_removed")
"""The counters a summary's report gives for its span (the compaction reports' names)."""

_MARKERS = re.compile(r"\[[^\[\]\n]*? by ctxmgr\b[^\[\]\n]*\]|\\?\"?ctxmgr_cleared\\?\"?: ?\\?\"[\d,]+ characters\\?\"")
"""What the managers leave in place of what they remove: a cleared result's placeholder,
a cut's marker, a removed part's placeholder, cleared arguments (escaped or not)."""

_PLAIN = re.compile(r"[A-Za-z0-9_.:/-]{1,64} [A-Za-z0-9_.:/-]{1,64}")
"""A tool name and a call id the request may name before the fence: no spaces, no markup."""

_NAMED = 20
"""The cleared results a request names one by one; the rest are counted."""


def span_managers(
    *,
    clear_tool_results: bool = False,
    keep_tool_results: int = 3,
    exclude_tools: Iterable[str] = (),
    clear_tool_inputs: bool = False,
    max_tool_output: int | None = None,
) -> list[CompactionManager]:
    """The managers run on a span, in :func:`~ctxmgr.state.compact_messages`' order:
    clearing, then truncation (none: the span is sent as it is)."""
    managers: list[CompactionManager] = []
    if clear_tool_results:
        managers.append(
            ToolResultClearingManager(
                keep_tool_results, exclude_tools=exclude_tools, clear_tool_inputs=clear_tool_inputs
            )
        )
    if max_tool_output is not None:
        managers.append(ToolOutputTruncationManager(max_tool_output))
    return managers


@dataclass
class SpanEdits:
    """What was cleared and cut in one span.

    Attributes:
        cleared: Each cleared result as its placeholder names it (``read_file call_8f2``),
            in the span's order.
        inputs_cleared: Whether the cleared calls' arguments were cleared too.
        counts: :data:`SPAN_COUNTERS`, summed over the managers.
    """

    cleared: list[str] = field(default_factory=list)
    inputs_cleared: bool = False
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SPAN_COUNTERS, 0))

    def note(self) -> str:
        """The line the requests begin with ("" when nothing was cleared or cut)."""
        said: list[str] = []
        if self.cleared:
            # Tool names and call ids come from the conversation, and this line is outside
            # the transcript's fence: only plain identifiers are named here, the rest are
            # named inside the fence, by their placeholders.
            named = [label for label in self.cleared if _PLAIN.fullmatch(label)][:_NAMED]
            left = len(self.cleared) - len(named)
            more = f" and {left} more" if named and left else ""
            what = "results and arguments" if self.inputs_cleared else "results"
            said.append(
                f"ctxmgr cleared {_count(len(self.cleared), 'tool result')} ({what} not shown, "
                f"a placeholder in their place: do not guess their content)"
                + (f": {', '.join(named)}{more}." if named else ".")
            )
        cut = self.counts["truncated_outputs"]
        if cut:
            its = "its" if cut == 1 else "their"
            said.append(f"ctxmgr cut {_count(cut, 'tool output')} to {its} head and tail (a marker shows each cut).")
        return f"Before summarizing, {' '.join(said)}" if said else ""


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def edit_span(messages: Sequence[Message], managers: Sequence[CompactionManager]) -> tuple[list[Message], SpanEdits]:
    """``messages`` as the managers leave them (edited copies; the messages given are not
    changed), and what they did."""
    edits = SpanEdits()
    span = list(messages)
    for manager in managers:
        before = span
        span, report = manager.compact(before)
        for name in SPAN_COUNTERS:
            edits.counts[name] += getattr(report, name)
        if isinstance(manager, ToolResultClearingManager):
            edits.inputs_cleared = manager.clear_tool_inputs
            edits.cleared = _cleared(before, span)
    return span, edits


def _cleared(before: Sequence[Message], after: Sequence[Message]) -> list[str]:
    """The results cleared between ``before`` and ``after`` (clearing keeps every message
    in its place), named as their placeholders name them."""
    found: list[str] = []
    for old, new in zip(before, after, strict=True):
        if old is new:
            continue
        was = {id(block) for block in old.content}
        for block in new.content:
            output = block.output if isinstance(block, ToolResultBlock) and id(block) not in was else None
            if isinstance(output, str) and output.startswith(CLEARED_PREFIX):
                found.append(output[len(CLEARED_PREFIX) :].rsplit(", ", 1)[0])
    return found


def without_markers(text: str) -> str:
    """``text`` without ctxmgr's placeholders and markers, whose sizes are no facts of the
    conversation for a summary to keep."""
    return _MARKERS.sub("", text)
