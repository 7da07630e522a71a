"""The trim fast path: a plain trim applied to a conversation's outline, without building
a single message.

The same rule (:meth:`MessageContextManager.select`) on the same records gives the same
bytes as the full path; only the ``Message`` per record is skipped (and pydantic, and
the format readers). It declines (``None``) whatever needs the full reader: a
conversation its format's outline (:mod:`ctxmgr.formats._outlines`) does not find plainly
well-formed, so errors and the reader's warnings are worded by the full reader. The
provider-rule problems of what is kept (a reused call id, a result cut from its call)
are found and worded here, from the outline's call ids, exactly as the full path words
them; only under ``--strict`` does a document with one go the full path, which then
writes nothing. Whether a run may take it at all is
:func:`ctxmgr.files._settings.plain_trim`.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from itertools import chain
from typing import TYPE_CHECKING, Any, cast

from ctxmgr import _io as io, formats
from ctxmgr._shapes import outline_clear, reuse_accepted
from ctxmgr.errors import InputError
from ctxmgr.files._fast_clearing import clear_outline
from ctxmgr.files._fast_edits import compaction_names, is_clearing, report_counters, truncate_outline
from ctxmgr.files._figures import outline_figures, summary_field_units
from ctxmgr.files._reading import UNPARSED, is_conversation_record
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings, plain_trim
from ctxmgr.formats._base import Outline
from ctxmgr.formats._meaning import may_mean_nothing
from ctxmgr.formats._outlines import OUTLINES
from ctxmgr.state._managers import BaseContextManager, MessageContextManager, trim_selection
from ctxmgr.state._rules import unsafe_cuts_from
from ctxmgr.state._tokens import tokens_from_units

if TYPE_CHECKING:
    from ctxmgr.state._budget import TokenBudgetContextManager
    from ctxmgr.state._compaction import ChainContextManager

__all__ = ["fast_document", "fast_line"]


def fast_document(
    value: Any,
    layout: str,
    pretty: bool,
    name: str,
    manager: BaseContextManager[Any],
    settings: Settings,
    result: FileResult,
) -> tuple[bytes, bool] | None:
    """Trim one whole parsed document from its outline: ``(output, changed)``, or ``None``
    for the full path. A 100,000-message file then costs little more than parsing and
    writing it. Not when the document's diff view (message by message) is to be shown."""
    if layout != "document" or not isinstance(value, dict | list):
        return None
    if settings.keep_outcomes or not _fast_rule(manager, settings):
        return None
    try:
        detected = settings.fmt or formats.detect_name(value, source=name)
    except InputError:
        return None  # the full path reports it, with the closest format's explanation
    if settings.fmt not in (None, detected):
        return None
    # Under --strict a rule problem means nothing is written: the full path does that.
    trimmed = _trim_outline(
        value, manager, detected, result, settings, decline_problems=settings.strict, named=settings.fmt is not None
    )
    if trimmed is None:
        return None
    kept, outline, problems = trimmed
    result.format = detected
    result.warnings.extend(problems)
    output = io.dumps(value if kept is None else outline.rebuild(kept), "document", pretty=pretty)
    return output, kept is not None


def fast_line(
    number: int,
    raw: bytes,
    name: str,
    manager: BaseContextManager[Any],
    settings: Settings,
    result: FileResult,
    first_format: list[str],
) -> tuple[bytes | None, Any]:
    """Trim one dataset line from its outline: ``(output, record)``, the output ``None``
    for the full path, which is then handed the record if it was parsed here (else
    :data:`~ctxmgr.files._reading.UNPARSED`).

    ``first_format`` holds the dataset's format once a line has settled it; the first
    line the fast path trims settles it (its format is found without the readers).
    """
    if not _fast_rule(manager, settings):
        return None, UNPARSED
    record = io.loads(raw, name, line=number)
    candidates = first_format or _light_formats(record, name, settings)
    line_format = candidates[0] if candidates else None
    if line_format is None or settings.fmt not in (None, line_format):
        return None, record
    trimmed = _trim_outline(record, manager, line_format, result, settings, line=number)
    if trimmed is None:
        return None, record
    if not first_format:  # the first line settles the dataset's format (and those it also reads as)
        first_format.extend(candidates)
        result.format = line_format
    kept, outline, problems = trimmed
    if problems:
        (result.errors if settings.strict else result.warnings).extend(f"line {number}: {p}" for p in problems)
    if kept is None:
        return raw + b"\n", record
    output = io.dumps(outline.rebuild(kept), "document")  # deep nesting included (see io.dumps)
    return (output[:-1] + b"\r\n" if raw.endswith(b"\r") else output), record


def _trim_outline(
    value: Any,
    manager: BaseContextManager[Any],
    line_format: str,
    result: FileResult,
    settings: Settings,
    *,
    decline_problems: bool = False,
    line: int | None = None,
    named: bool = False,
) -> tuple[list[int] | None, Outline, list[str]] | None:
    """``(kept, outline, problems)``: the trim's choice on ``value``'s outline (``kept``
    ``None`` for all), counted into ``result``, and the provider-rule problems of what is
    kept, worded as the full path words them; ``None`` if there is no outline, or there
    are problems and ``decline_problems``, or when a whole file read under a ``named``
    format may mean nothing in it (the full reader judges that)."""
    outline_of = OUTLINES.get(line_format)
    outline = None if outline_of is None else outline_of(value)
    if outline is None or (named and may_mean_nothing(outline)):
        return None
    figures = None
    edited: Collection[int] = ()
    warned: list[str] = []  # a budget's warning (its report is a dict of counters)
    if isinstance(manager, MessageContextManager):
        roles = outline.roles
        if manager.remove_tool_msgs:
            kept = manager.select(roles, [bool(c) for c in outline.calls])
        else:
            kept = trim_selection(roles, manager.max_messages)  # what select() does then
        report = None
    elif type(cast("ChainContextManager", manager).managers[0]) is compaction_names().ToolOutputTruncationManager:
        truncated = truncate_outline(value, outline, line_format, cast("ChainContextManager", manager), settings)
        if truncated is None:
            return None
        outline, kept, report, figures, edited = truncated
    elif is_clearing(cast("ChainContextManager", manager).managers[0]):
        cleared = clear_outline(value, outline, line_format, cast("ChainContextManager", manager), settings)
        if cleared is None:
            return None
        outline, kept, report, figures, edited = cleared
    else:
        budgeted = _budget_outline(outline, manager)
        if budgeted is None:
            return None
        kept, report, warned = budgeted
    problems = _rule_problems(outline, kept, line_format, edited) if settings.check_rules else []
    if problems and decline_problems:
        return None
    if figures is None:
        units = summary_field_units(line_format, value)
        figures = outline_figures(outline, kept, measure=settings.measure, summary_units=units)
    result.count(figures)
    _count_report(result, report, line)
    if warned:
        result.add_compaction_warnings(warned, line)
    return kept, outline, problems


def _count_report(result: FileResult, report: Any, line: int | None) -> None:
    """Count a compaction manager's report into ``result``, as the full path counts it
    (``None``: no compaction manager; a dict: an edit's counters, see
    :func:`~ctxmgr.files._fast_edits.changed`)."""
    if report.__class__ is dict:
        result.add_compaction(report)
    elif report is not None:
        result.add_compaction(compaction_names().totals([report]))
        result.add_compaction_warnings(report.warnings, line)


def _fast_rule(manager: BaseContextManager[Any], settings: Settings) -> bool:
    """Whether the fast path may apply ``manager``'s rule: the plain trim's, a token
    budget alone (``trim --max-tokens``, with ``-n`` and ``--start-on`` too) without
    ``pin_match`` (which reads the messages' text), or the tool-output cut alone
    (``trim --max-tool-output``; see :func:`truncate_outline`), writing the same format."""
    if plain_trim(manager, settings):
        return True
    if not settings.fast or settings.to is not None or settings.keep_outcomes or settings.fix_call_ids:
        return False
    compaction = compaction_names()
    if type(manager) is not compaction.ChainContextManager or len(cast("ChainContextManager", manager).managers) != 1:
        return False
    budget = cast("ChainContextManager", manager).managers[0]
    if type(budget) is compaction.ToolOutputTruncationManager or is_clearing(budget):
        return True
    return (
        type(budget) is compaction.TokenBudgetContextManager and not cast("TokenBudgetContextManager", budget).pin_match
    )


def _budget_outline(
    outline: Outline, manager: BaseContextManager[Any]
) -> tuple[list[int] | None, Any, list[str]] | None:
    """The token budget's choice on an outline (``None`` for all kept), the counters of
    its :class:`~ctxmgr.state.CompactionReport` (what
    :func:`~ctxmgr.state._compaction.totals` gives of it, built directly: no report a
    line) and its warnings, the same as the budget gives on the conversation's messages;
    ``None`` (the full path) when the outline does not count characters, or holds an
    empty id (the model's rules do not count one as an id)."""
    compaction = compaction_names()
    assert type(manager) is compaction.ChainContextManager
    budget = cast("TokenBudgetContextManager", cast("ChainContextManager", manager).managers[0])
    assert type(budget) is compaction.TokenBudgetContextManager
    chars, calls, results, roles = outline.chars, outline.calls, outline.results, outline.roles
    if chars is None or "" in chain.from_iterable(calls) or "" in chain.from_iterable(results):
        return None
    warnings: list[str] = []
    pinned = budget.pinned_positions(len(roles), calls, results, warnings)
    units = outline.units()
    selected, over = budget.select(roles, units, lambda lo: unsafe_cuts_from(roles, calls, results, lo), pinned)
    warnings.extend(over)
    count = len(roles)
    gone: list[int] = []
    if len(selected) < count:  # (selected: positions, each once)
        chosen = set(selected)
        gone = [i for i in range(count) if i not in chosen]
    # measured_report's figures: the estimate of the messages before and after (0 for none).
    tokens_before = tokens_from_units(units) if roles else 0
    tokens_after = tokens_from_units([units[i] for i in selected]) if selected else 0
    counts = report_counters(
        messages_dropped=len(gone), chars_removed=sum(map(chars, gone)), tokens_removed=tokens_before - tokens_after
    )
    return (selected if gone else None), counts, warnings


def _rule_problems(
    outline: Outline, kept: list[int] | None, line_format: str, edited: Collection[int] = ()
) -> list[str]:
    """The provider-rule problems of the kept messages, as the full path words them
    (:func:`ctxmgr.files._compaction.rule_problems`): each message named by its number
    in the input, an ``edited`` one (a cut tool result) as the output's. The yes-or-no
    check runs first; a clean cut, the usual case, builds nothing."""
    if not outline.has_tools:
        return []
    roles, calls, results = outline.roles, outline.calls, outline.results
    chosen = range(len(roles)) if kept is None else kept
    target = line_format if line_format != "native" else None
    # Most lines reuse no id: the plain check first (it has the quicker adjacency rule).
    if outline_clear(roles, calls, results, chosen, target=target) or (
        _reuse_accepted(line_format) and outline_clear(roles, calls, results, chosen, target=target, reuse=True)
    ):
        return []
    from ctxmgr._validate import check_outline  # only when there is a problem to word

    def name(position: int) -> str:
        index = chosen[position]
        return f"output message {position}" if index in edited else f"message {index}"

    from ctxmgr._shapes import fails_for  # what the format's own provider accepts is no warning

    problems = check_outline(outline, target=target, indices=chosen, name=name)
    return [f"{name(p.index)}: {p.message}" for p in problems if fails_for(p, line_format, None)]


_reuse_accepted = cache(reuse_accepted)
"""Per format, whether reused call ids need no wording (the rule check's answer to them
is filtered out for the file's own provider): a line with them stays a quick yes."""


def _light_formats(record: Any, name: str, settings: Settings) -> list[str]:
    """The first line's format, then the others it reads as, found without the readers
    (for the fast path).

    An empty list leaves the line to the full path (which also words any error).
    """
    if settings.fmt is not None:
        return [settings.fmt]
    try:
        return formats.detect_candidates(record, source=name) if is_conversation_record(record) else []
    except InputError:
        return []
