"""What the summaries of a file took and lack, worded for standard error and ``--json``.

Every summary is checked for the facts of its span; one that lacks required facts is
a warning naming the first few, most important first, and counting the optional ones
it lacks (all of them are in ``--json``); one lacking optional facts only is no warning. What summarizers said they
shortened, spans sent in parts and content left out of the requests (nothing readable
in it) are notes, one line each per file, so a dataset of thousands of conversations
gets a few lines; ``--json`` has every summary's own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ctxmgr.state._report import SummaryReport

    class HasSummaries(Protocol):
        """What these functions read of a :class:`~ctxmgr.files._results.FileResult`
        (a protocol for the type checker only: defining one costs start-up time)."""

        @property
        def summaries(self) -> Sequence[tuple[int | None, SummaryReport]]: ...


__all__ = ["FACTS_SHOWN", "summary_json", "summary_notes", "summary_totals", "summary_warnings"]

FACTS_SHOWN = 5
"""Missing facts named on standard error per summary (``--json`` has them all)."""


def _left_out(reports: Iterable[SummaryReport]) -> dict[str, int]:
    """What the reports' requests left out (nothing readable in it), by kind."""
    counts: Counter[str] = Counter()
    for report in reports:
        counts.update(report.left_out)
    return dict(sorted(counts.items()))


def _where(line: int | None) -> str:
    return f"line {line}: " if line is not None else ""


def summary_warnings(result: HasSummaries) -> list[str]:
    """Per summary: the required facts it lacks, most important first, then a count of
    the optional ones it lacks."""
    lines: list[str] = []
    for line, report in result.summaries:
        if report.missing and not report.failed:
            required, optional = report.missing_required(), len(report.missing_optional())
            asked = " after asking again" if report.retried else ""
            if not required:
                continue  # optional facts only: a good summary leaves them out (--json lists them)
            tail = f"{optional} optional {'fact' if optional == 1 else 'facts'} left out (all in --json)"
            shown = ", ".join(fact.text for fact in required[:FACTS_SHOWN])
            more = len(required) - FACTS_SHOWN
            rest = f" and {more} more" if more > 0 else ""
            also = f"; {tail}" if optional else ""
            lines.append(
                f"{_where(line)}the summary lacks {len(required)} required of {len(report.facts)} facts of the "
                f"summarized messages{asked}: {shown}{rest}{also}"
            )
    return lines


def summary_notes(result: HasSummaries) -> list[str]:
    """Per file: what summarizers shortened, spans summarized in parts, and what was
    left out of the requests."""
    notes: list[str] = []
    shortened = [(line, report) for line, report in _in_line_order(result.summaries) if report.notes]
    if shortened:
        line, first = shortened[0]
        count = "1 summary" if len(shortened) == 1 else f"{len(shortened)} summaries"
        more = "" if len(shortened) == 1 else "; every one's note is in --json"
        notes.append(f"the summarizer shortened {count} ({_where(line)}{first.notes[0]}{more})")
    edits = _edit_note([report for _, report in result.summaries])
    if edits is not None:
        notes.append(edits)
    split = [report for _, report in result.summaries if report.parts > 1]
    if split:
        calls = sum(report.calls for report in split)
        first = split[0]
        spans = "1 summarized span" if len(split) == 1 else f"{len(split)} summarized spans"
        why = first.input_limit_reason
        why = why if why == "--max-input-tokens" else f"{why}; --max-input-tokens changes it"
        notes.append(
            f"{spans} exceeded the input budget of {first.input_limit:,} tokens a request ({why}): "
            f"summarized in parts, then combined, in {calls} calls"
        )
    left_out = _left_out(report for _, report in result.summaries)
    if left_out:
        kinds = ", ".join(f"{count} {kind}" for kind, count in left_out.items())
        notes.append(f"left out of the summary requests, having no readable text: {kinds}")
    return notes


def _in_line_order(summaries: Sequence[tuple[int | None, SummaryReport]]) -> list[tuple[int | None, SummaryReport]]:
    return sorted(summaries, key=lambda item: item[0] or 0)


def summary_json(result: HasSummaries) -> dict[str, Any]:
    """The ``--json`` fields of one file: every summary's report, and what was left out."""
    return {
        # in line order, whatever order concurrent summaries finished in
        "summaries": [{"line": line, **report.as_json()} for line, report in _in_line_order(result.summaries)],
        "left_out": _left_out(report for _, report in result.summaries),
    }


def summary_totals(results: Sequence[HasSummaries]) -> dict[str, Any]:
    """The ``--json`` totals of a run's summaries."""
    reports = [report for result in results for _, report in result.summaries]
    return {
        "summary_calls": sum(report.calls for report in reports),
        "summary_input_tokens": sum(report.input_tokens for report in reports),
        "facts": sum(len(report.facts) for report in reports),
        "missing_facts": sum(len(report.missing) for report in reports),
        "missing_required": sum(len(report.missing_required()) for report in reports),
        "missing_optional": sum(len(report.missing_optional()) for report in reports),
        "left_out": _left_out(reports),
        **_edit_totals(reports),
    }


def _edit_totals(reports: Sequence[SummaryReport]) -> dict[str, int]:
    """The counters of tool output cleared and cut in the spans sent (none when no
    summary was asked to: the totals are those of a run without the options)."""
    edited = [report.edits for report in reports if report.edits is not None]
    if not edited:
        return {}
    return {name: sum(edits[name] for edits in edited) for name in edited[0]}


def _edit_note(reports: Sequence[SummaryReport]) -> str | None:
    """One line: the tool output cleared and cut in the spans sent, if any."""
    totals = _edit_totals(reports)
    if not totals.get("cleared_results") and not totals.get("truncated_outputs"):
        return None
    return (
        f"before summarizing, cleared {totals['cleared_results']} and cut {totals['truncated_outputs']} tool results "
        f"in the messages sent ({totals['tokens_removed']:,} estimated tokens fewer); the kept messages are untouched"
    )
