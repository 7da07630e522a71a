"""What one summary cost and what it may have lost, for the caller to show.

:class:`~ctxmgr.state.summary_context_manager.SummaryContextManager` keeps the reference's interface
(``atrim_context(state) -> state``), so its account of a summary travels beside the
return value: inside :func:`collect_summary_reports`, every summary made in the same
task (or in a synchronous ``trim_context`` called from it) adds its
:class:`SummaryReport` to the list the block yields. Outside one, nothing is kept.

    with collect_summary_reports() as reports:
        state = await manager.atrim_context(state)
    for report in reports:
        print(report.calls, [str(fact) for fact in report.missing])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ctxmgr.facts import Fact
    from ctxmgr.state.message import Message

__all__ = ["SummaryReport", "collect_summary_reports", "record_summary_report"]


@dataclass
class SummaryReport:
    """One summarized span: the requests it took, and the facts the summary lacks.

    Attributes:
        messages: Messages in the summarized span.
        calls: Requests made (parts, combining rounds and a ``require_facts`` retry).
        input_tokens: Estimated tokens sent in all of them, instructions included.
        parts: Requests of the first round (1: the span fitted one request).
        rounds: Rounds of requests (1, or more when parts' summaries were combined).
        split_items: Items (a message with its tool results) too long for one request,
            sent in pieces.
        input_limit: The input budget of one request (``None``: no limit), and
            ``input_limit_reason`` why it is what it is.
        left_out: Per kind of content with nothing readable (encrypted reasoning,
            redacted thinking), how many were left out of the requests.
        facts: The identifiers of the span (:func:`ctxmgr.facts.find_facts`).
        missing: Those the final summary does not state.
        required: The facts of the span the summary must keep, most important first
            (:func:`ctxmgr._fact_weight.weigh_facts`); the others are optional.
        kept: The messages kept after the summary (what the facts are weighed
            against, rendered only when the summary lacks some; not reported).
        retried: Whether the model was asked once more for the missing facts.
        notes: What the summarizer said it shortened (the offline digest does).
        failed: Whether the summary was refused (an error left the state unchanged).
        edits: With tool output cleared or cut in the span sent (``None``: not asked),
            ``cleared_results``, ``truncated_outputs``, ``chars_removed`` and
            ``tokens_removed`` there, named as the compaction reports name them.
    """

    messages: int = 0
    calls: int = 0
    input_tokens: int = 0
    parts: int = 1
    rounds: int = 1
    split_items: int = 0
    input_limit: int | None = None
    input_limit_reason: str = ""
    left_out: Counter[str] = field(default_factory=Counter)
    facts: list[Fact] = field(default_factory=list)
    missing: list[Fact] = field(default_factory=list)
    required: list[Fact] = field(default_factory=list)
    kept: Sequence[Message] = field(default=(), repr=False)
    retried: bool = False
    notes: list[str] = field(default_factory=list)
    failed: bool = False
    edits: dict[str, int] | None = None

    def missing_required(self) -> list[Fact]:
        """The required facts the summary lacks, most important first."""
        missing = set(self.missing)
        return [fact for fact in self.required if fact in missing]

    def missing_optional(self) -> list[Fact]:
        """The optional facts the summary lacks, in span order."""
        required = set(self.required)
        return [fact for fact in self.missing if fact not in required]

    def as_json(self) -> dict[str, Any]:
        """The report as plain JSON values (every missing fact listed)."""
        required = set(self.required)
        return {
            "messages": self.messages,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "parts": self.parts,
            "rounds": self.rounds,
            "split_items": self.split_items,
            "input_limit": self.input_limit,
            "left_out": dict(sorted(self.left_out.items())),
            "facts": len(self.facts),
            "missing_facts": [
                {"kind": fact.kind, "text": fact.text, "required": fact in required} for fact in self.missing
            ],
            "missing_required": len(self.missing_required()),
            "retried": self.retried,
            "notes": list(self.notes),
            "failed": self.failed,
            **(self.edits or {}),
        }


_reports: ContextVar[list[SummaryReport] | None] = ContextVar("ctxmgr_summary_reports", default=None)


@contextmanager
def collect_summary_reports() -> Iterator[list[SummaryReport]]:
    """Collect the :class:`SummaryReport` of every summary made inside the block."""
    reports: list[SummaryReport] = []
    token = _reports.set(reports)
    try:
        yield reports
    finally:
        _reports.reset(token)


def record_summary_report(report: SummaryReport) -> None:
    """Add ``report`` to the innermost :func:`collect_summary_reports` block, if any."""
    reports = _reports.get()
    if reports is not None:
        reports.append(report)
