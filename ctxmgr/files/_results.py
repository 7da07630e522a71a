"""What happened to one input file: :class:`FileResult`, its tally, merge and report.

Every figure a file reports is added in :meth:`FileResult.count` (one conversation) or
:meth:`FileResult.merge` (another result's, e.g. a worker process's or a partition's),
and serialised in :meth:`FileResult.as_json` (the file's entry of ``--json``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ctxmgr.errors import CtxmgrError, ProviderError
from ctxmgr.files._figures import Figures, outcome_figures
from ctxmgr.files._summaries import summary_json, summary_notes
from ctxmgr.formats._base import Losses

if TYPE_CHECKING:
    from ctxmgr._pipeline import Outcome
    from ctxmgr.state._report import SummaryReport

__all__ = ["FileResult"]


@dataclass
class FileResult:
    """What happened to one input file (the JSON report is built from this).

    ``warnings``, ``errors`` (rule violations under ``--strict``, losses under
    ``--lossless``) and ``bad_lines`` (dataset lines skipped with ``on_error="skip"``) are
    worded relative to the file ("line 3: ..."); the CLI prefixes the file name.
    ``dropped`` counts, by kind, what converting the file's conversations left out (see
    :class:`~ctxmgr.formats._base.Losses`); :meth:`note_dropped` words it as one line.
    """

    source: str
    destination: str | None = None
    format: str | None = None
    kind: Literal["conversation", "dataset"] = "conversation"
    conversations: int = 0
    changed_conversations: int = 0
    messages_before: int = 0
    messages_after: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    summaries_added: int = 0
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bad_lines: list[str] = field(default_factory=list)
    input_error: CtxmgrError | None = None
    provider_errors: list[ProviderError] = field(default_factory=list)
    provider_error_lines: list[int | None] = field(default_factory=list)
    """The dataset line of each provider error (``None`` for a document)."""
    outcomes: list[Outcome] = field(default_factory=list)
    written: bool = False
    jobs: int = 1
    """Processes that trimmed the file (see :mod:`ctxmgr.files._parallel`)."""
    summaries: list[tuple[int | None, SummaryReport]] = field(default_factory=list)
    """Each summary made (or refused), with its dataset line (``None`` for a document)."""
    dropped: Losses = field(default_factory=Losses)
    backup: str | None = None
    """The sidecar that keeps what the written file lost (see :mod:`ctxmgr.files._backup`)."""
    compaction: dict[str, int] | None = None
    """What the compaction managers did (``messages_dropped``, ``cleared_results``,
    ``truncated_outputs``, ``chars_removed``, ``tokens_removed``), summed over the
    file's conversations; ``None`` when none ran (the report then has no such keys)."""
    call_ids_fixed: int | None = None
    """Calls given a new id by ``--fix-call-ids`` (``None``: not asked, and not reported)."""
    compaction_warned: list[tuple[int, str]] = field(default_factory=list)
    """The compaction managers' warnings about dataset lines, ``(line, warning)``: each
    is also in :attr:`warnings` (``"line 3: ..."``); standard error words those of one
    kind once for the file (:meth:`shown_warnings`)."""

    @property
    def changed(self) -> bool:
        return self.changed_conversations > 0

    @property
    def failed(self) -> bool:
        return self.input_error is not None or bool(self.provider_errors) or bool(self.bad_lines)

    def count(self, figures: Figures) -> None:
        """Add one conversation's figures."""
        self.conversations += 1
        self.messages_before += figures.messages_before
        self.messages_after += figures.messages_after
        self.tokens_before += figures.tokens_before
        self.tokens_after += figures.tokens_after
        self.changed_conversations += figures.changed
        self.summaries_added += figures.summary_added

    def add(
        self,
        outcome: Outcome,
        *,
        keep: bool,
        measure: bool = True,
        line: int | None = None,
        to: str | None = None,
        written: bytes | None = None,
    ) -> None:
        """Count one compacted conversation (its estimated tokens too, if ``measure``),
        as written in format ``to`` (else its own; see
        :func:`~ctxmgr.files._figures.outcome_figures`: ``written``, the bytes written of
        it, if the caller has them), with its provider error and summaries; keep the
        outcome itself if ``keep``."""
        self.count(outcome_figures(outcome, measure=measure, to=to, written=written))
        if outcome.error is not None:
            self.provider_errors.append(outcome.error)
            self.provider_error_lines.append(line)
        self.summaries.extend((line, report) for report in outcome.summaries)
        if outcome.compactions:
            from ctxmgr.state._compaction import totals  # loaded only when a compaction manager ran

            self.add_compaction(totals(outcome.compactions))
            self.add_compaction_warnings([w for report in outcome.compactions for w in report.warnings], line)
        if keep:
            self.outcomes.append(outcome)

    def add_compaction(self, counts: dict[str, int] | None) -> None:
        """Add the counters of compaction managers (``None``: none ran)."""
        if counts is not None:
            mine = self.compaction if self.compaction is not None else dict.fromkeys(counts, 0)
            self.compaction = {name: mine.get(name, 0) + value for name, value in counts.items()}

    def add_compaction_warnings(self, warnings: list[str], line: int | None) -> None:
        """Add a conversation's compaction warnings (``line``: its dataset line, else
        ``None``)."""
        if line is None:
            self.warnings.extend(warnings)
            return
        self.warnings.extend(f"line {line}: {w}" for w in warnings)
        self.compaction_warned.extend((line, w) for w in warnings)

    def shown_warnings(self) -> list[str]:
        """The warnings as standard error words them: each kind of compaction warning
        once for the file, with how many conversations it concerns and their lines (in
        place of its first line's; every line's own is in :attr:`warnings`, which
        ``--json`` reports), the others as they are."""
        warnings = in_line_order(self.warnings)
        if not self.compaction_warned:
            return warnings
        groups: dict[str, list[tuple[int, str]]] = {}
        for line, warning in sorted(self.compaction_warned, key=lambda item: item[0]):
            groups.setdefault(_warning_group(warning), []).append((line, warning))
        first = {f"line {group[0][0]}: {group[0][1]}": key for key, group in groups.items()}
        grouped = {f"line {line}: {warning}" for line, warning in self.compaction_warned}
        shown: list[str] = []
        for warning in warnings:
            if warning in first:
                shown.append(_grouped_warning(groups[first[warning]], self.conversations))
            elif warning not in grouped:
                shown.append(warning)
        return shown

    def compaction_notes(self) -> list[str]:
        """What the compaction managers removed from the file, in one line (none when they
        ran and removed nothing, or did not run); and the call ids renumbered."""
        fixed = self.call_ids_fixed or 0
        renumbered = (
            [f"{fixed:,} reused tool call id{'s' if fixed != 1 else ''} renumbered, each with its results"]
            if fixed
            else []
        )
        counts = self.compaction or {}
        if not any(counts.values()):
            return renumbered
        return self._removed(counts) + renumbered

    @staticmethod
    def _removed(counts: dict[str, int]) -> list[str]:
        parts = [
            f"{counts[key]:,} {one if counts[key] == 1 else many}"
            for key, one, many in (
                ("messages_dropped", "message dropped", "messages dropped"),
                ("cleared_results", "tool result cleared", "tool results cleared"),
                ("truncated_outputs", "tool output cut", "tool outputs cut"),
            )
            if counts.get(key)
        ]
        chars, tokens = counts.get("chars_removed", 0), counts.get("tokens_removed", 0)
        removed = f"{chars:,} characters, {tokens:,} est. tokens removed"
        return [f"compacted: {', '.join(parts)}; {removed}" if parts else f"compacted: {removed}"]

    def merge(self, other: FileResult) -> None:
        """Add what ``other`` counted of the same file (a worker's stretch of a dataset,
        a partition's lines): its figures, warnings, errors, summaries and losses, after
        this result's own. What belongs to the file as a whole (its name, format, kind,
        input error, whether it was written) stays this result's."""
        self.conversations += other.conversations
        self.changed_conversations += other.changed_conversations
        self.messages_before += other.messages_before
        self.messages_after += other.messages_after
        self.tokens_before += other.tokens_before
        self.tokens_after += other.tokens_after
        self.summaries_added += other.summaries_added
        self.warnings.extend(other.warnings)
        self.errors.extend(other.errors)
        self.bad_lines.extend(other.bad_lines)
        self.provider_errors.extend(other.provider_errors)
        self.provider_error_lines.extend(other.provider_error_lines)
        self.outcomes.extend(other.outcomes)
        self.summaries.extend(other.summaries)
        self.dropped.merge(other.dropped)
        self.add_compaction(other.compaction)
        if other.call_ids_fixed is not None:
            self.call_ids_fixed = (self.call_ids_fixed or 0) + other.call_ids_fixed
        self.compaction_warned.extend(other.compaction_warned)

    def note_dropped(self, target: str | None, *, lossless: bool) -> None:
        """Name what the conversion to ``target`` left out, in one line: a warning, or
        with ``lossless`` an error (the caller then writes nothing)."""
        if not self.dropped:
            return
        what = f"converting {self.format} to {target}"
        if lossless:
            self.errors.append(f"--lossless: {what} would drop what {target} has no place for: {self.dropped.line()}")
        else:
            self.warnings.append(f"{what} dropped what {target} has no place for: {self.dropped.line()}")

    def provider_messages(self, stopped: ProviderError | None = None) -> list[str]:
        """Each provider error on one line, with its dataset line where there is one.

        ``stopped``: the error that stopped the calls (see
        :class:`ctxmgr.providers.SummarizerChain`), worded once, with how many
        conversations of this file it left.
        """
        lines: list[str] = []
        repeats = 0
        for error, line in zip(self.provider_errors, self.provider_error_lines, strict=True):
            if stopped is not None and error is stopped and repeats:
                repeats += 1
                continue
            repeats += stopped is not None and error is stopped
            lines.append(f"line {line}: {error}" if line is not None else str(error))
        if repeats > 1:
            first = next(i for i, e in enumerate(self.provider_errors) if e is stopped)
            index = sum(1 for e in self.provider_errors[:first] if e is not stopped)
            more = repeats - 1
            lines[index] += f" (and {more:,} more conversation{'' if more == 1 else 's'} of this file, not sent)"
        return lines

    def as_json(self, *, summaries: bool = False, stopped: ProviderError | None = None) -> dict[str, Any]:
        """The file's entry of the ``--json`` report.

        Args:
            summaries: Include every summary's report and the notes about them (a
                summary run).
            stopped: The error that stopped the calls (see :meth:`provider_messages`).
        """
        return {
            "path": self.source,
            "destination": self.destination if self.written else None,
            "format": self.format,
            "kind": self.kind,
            "conversations": self.conversations,
            "changed": self.changed,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "summaries_added": self.summaries_added,
            "dropped": dict(self.dropped),
            **({"backup": self.backup} if self.backup is not None else {}),
            **(self.compaction or {}),
            **({"call_ids_fixed": self.call_ids_fixed} if self.call_ids_fixed is not None else {}),
            **(summary_json(self) | {"notes": summary_notes(self)} if summaries else {}),
            "warnings": in_line_order(self.warnings),
            "errors": (
                ([str(self.input_error)] if self.input_error else [])
                + self.provider_messages(stopped)
                + self.bad_lines
                + self.errors
            ),
        }


_OVER = re.compile(r"^(the messages never cut \(rules, last user request, pins\)) take ([\d,]+) tokens, over (.*)$")
_PAST = re.compile(r"^(pin_index \d+ is past the last message) \(\d+ messages\)$")
LINES_NAMED = 10
"""Dataset lines a grouped warning names (``--json`` has every line's warning)."""


def _warning_group(warning: str) -> str:
    """The kind of a compaction warning: its text without the figures of its line."""
    over = _OVER.match(warning)
    if over is not None:
        return f"{over[1]} over {over[3]}"
    past = _PAST.match(warning)
    return past[1] if past is not None else warning


def _grouped_warning(group: list[tuple[int, str]], conversations: int) -> str:
    """One warning for the lines of ``group`` (one kind), with their count."""
    lines = [line for line, _ in group]
    if len(lines) == 1:
        return f"line {lines[0]}: {group[0][1]}"
    more = len(lines) - LINES_NAMED
    named = ", ".join(map(str, lines[:LINES_NAMED])) + (f" and {more:,} more" if more > 0 else "")
    where = f"in {len(lines):,} of {conversations:,} conversations (lines {named}; each in --json)"
    over = _OVER.match(group[0][1])
    if over is not None:
        tokens = [int(m[2].replace(",", "")) for _, w in group if (m := _OVER.match(w)) is not None]
        low, high = min(tokens), max(tokens)
        take = f"{low:,} tokens" if low == high else f"{low:,} to {high:,} tokens"
        return f"{over[1]} take {take} {where}, over {over[3]}"
    return f"{_warning_group(group[0][1])} {where}"


_LINE_PREFIX = re.compile(r"line (\d+): ")


def in_line_order(warnings: list[str]) -> list[str]:
    """``warnings`` with a dataset's line warnings in the order of their lines (summaries
    at ``--concurrency`` above 1 finish in any order), each line's own in the order they
    came; the file's own warnings stay where they are."""
    lines = [_line_of(warning) for warning in warnings]
    slots = [i for i, line in enumerate(lines) if line is not None]
    if not slots:
        return warnings
    ordered = [warnings[i] for i in sorted(slots, key=lambda i: lines[i] or 0)]
    result = list(warnings)
    for slot, warning in zip(slots, ordered, strict=True):
        result[slot] = warning
    return result


def _line_of(warning: str) -> int | None:
    found = _LINE_PREFIX.match(warning)
    return int(found[1]) if found else None
