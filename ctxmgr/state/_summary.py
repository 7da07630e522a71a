"""What a summary request says, and what a span's requests take, before any call.

The task lines of each kind of request (the whole span, one part of it, the summaries of
the parts combined, a summary revised for missing facts), the estimated input of one
request, the :class:`RequestPlan` of a span (``--dry-run``) and the report of the span
being summarized. The manager that sends the requests is
:class:`ctxmgr.state.summary_context_manager.SummaryContextManager`.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

from ctxmgr._text import one_line
from ctxmgr.state._report import SummaryReport
from ctxmgr.state._tokens import UNITS_PER_TOKEN, text_units

__all__ = [
    "COMBINE_TASK",
    "EXCERPT_CHARS",
    "MAX_ROUNDS",
    "REVISE_TASK",
    "WHOLE_TASK",
    "RequestPlan",
    "continued",
    "current_report",
    "part_task",
    "request_tokens",
]

WHOLE_TASK = "Summarize the conversation"
COMBINE_TASK = "Combine into one summary the summaries of consecutive parts of one conversation, given in order,"
REVISE_TASK = (
    "Rewrite the summary of a conversation below so that it also states each missing fact listed, "
    "with what the excerpts of the conversation say about it, in at most {limit} tokens (shorten other "
    "detail rather than exceed it), and answer with the complete summary; the summary, the list and the "
    "excerpts are"
)
MAX_ROUNDS = 12
"""Combining rounds before giving up (each round at least halves the summaries)."""
EXCERPT_CHARS = 100
"""Characters either side of a missing fact quoted when the model is asked for it again."""


current_report: ContextVar[SummaryReport | None] = ContextVar("ctxmgr_current_summary_report", default=None)
"""The report of the span the manager's ``atrim_context`` is summarizing.

The manager's ``_summarize`` keeps the reference's signature (messages in, text out), so
the report it fills travels beside the call; a context variable keeps concurrent
summaries (a batch shares one manager) apart."""


def part_task(number: int, total: int) -> str:
    return f"Summarize part {number} of {total} of a conversation (summarize this part only)"


def request_tokens(request: str, instructions: str) -> int:
    """Estimated input tokens of one request, as the reports count (script-aware); the
    request's size is bounded in characters (the manager's ``_room``)."""
    return max(1, (text_units(request) + text_units(instructions)) // UNITS_PER_TOKEN)


@dataclass(frozen=True)
class RequestPlan:
    """What summarizing one span takes, known before any call (``--dry-run``).

    ``calls`` and ``input_tokens`` count every round, the later ones as if each summary
    were ``max_summary_tokens`` long (the most it can be); ``parts`` is the first round.
    """

    calls: int
    input_tokens: int
    parts: int
    rounds: int


def continued(summary: str) -> str:
    """A model's ``summary`` as the text of one record: its lines flattened
    (:func:`~ctxmgr._text.one_line`) and joined as indented continuation lines, so no
    line break of any kind lets one start a record of its own."""
    return "\n  ".join(one_line(line) for line in summary.strip().splitlines() if line.strip())
