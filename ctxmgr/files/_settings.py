"""How a run reads, compacts and writes files, and which path that lets it take.

:class:`Settings` is what a run is told; :func:`plain_trim` and :func:`never_waits`
are the one place that decides, from the settings and the manager, whether the trim may
skip building messages (the outline fast path, several processes) and whether the run
needs an event loop at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ctxmgr.state._managers import MessageContextManager, UnchangedContextManager

if TYPE_CHECKING:
    from ctxmgr.formats._base import SummaryPlacement
    from ctxmgr.state._managers import BaseContextManager

__all__ = ["Settings", "builtin_trim", "conversations_at_once", "never_waits", "plain_trim"]


@dataclass
class Settings:
    """How files are read, compacted and written.

    Attributes:
        fmt: Input format (``--from``); ``None`` detects it.
        to: Output format (``--to``); ``None`` keeps the input's.
        summary_as: Where a summary goes (``--summary-as``).
        strict: Output that breaks provider rules is an error instead of a warning.
        lossless: Converting, anything the target has no place for is an error (nothing
            is written) instead of a warning.
        on_error: For datasets: ``fail`` (nothing written) or ``skip`` (report the bad
            line and copy it through unchanged).
        concurrency: Conversations of a dataset compacted at once (summaries).
        keep_outcomes: Keep the :class:`~ctxmgr._pipeline.Outcome` of a file holding one
            conversation (for its diff view; a dataset's view shows totals, its lines'
            outcomes are not kept).
        check_rules: Validate outputs against provider rules (warnings / ``strict``).
        measure: Count estimated tokens before and after (for reports).
        fast: Let plain trims skip building messages (see :mod:`ctxmgr.files._fastpath`);
            the output is the same either way.
        fix_call_ids: Renumber reused tool call ids, each with its results
            (:mod:`ctxmgr.formats._call_ids`), before compacting.
        jobs: Processes for a large dataset file compacted by a manager that never
            waits (a plain trim, the offline digest; see :mod:`ctxmgr.files._parallel`):
            ``None`` one per CPU (up to 8), ``1`` none.
        force: Rewrite a file in place even when it looks live (another process has
            it open for writing, or a session log changed seconds ago; see
            :mod:`ctxmgr.files._live`).
        session: The session to compact in an Agents SDK session database (``--session``;
            ``None``: its only one; see :mod:`ctxmgr.files._sessions_db`).
    """

    fmt: str | None = None
    to: str | None = None
    summary_as: SummaryPlacement | None = None
    strict: bool = False
    lossless: bool = False
    on_error: Literal["fail", "skip"] = "fail"
    concurrency: int = 1
    keep_outcomes: bool = False
    check_rules: bool = True
    measure: bool = False
    fast: bool = True
    jobs: int | None = None
    fix_call_ids: bool = False
    force: bool = False
    session: str | None = None


def builtin_trim(manager: BaseContextManager[Any]) -> bool:
    """Whether ``manager`` is the built-in trim itself (a subclass may override its rule)."""
    return type(manager) is MessageContextManager


def plain_trim(manager: BaseContextManager[Any], settings: Settings) -> bool:
    """Whether the run is a plain trim: the built-in trim, writing the same format, with
    the fast path allowed. Only a plain trim takes the outline fast path or several
    processes."""
    return settings.fast and builtin_trim(manager) and settings.to is None and not settings.fix_call_ids


def never_waits(manager: BaseContextManager[Any]) -> bool:
    """Whether compacting with ``manager`` never suspends: the built-in trim, the
    conversion's :class:`~ctxmgr.state._managers.UnchangedContextManager`, or the
    built-in :class:`~ctxmgr.state.SummaryContextManager` with a summarizer that never
    waits (the offline digest; see :func:`ctxmgr._summarizer.never_waits`), or a chain of
    these and of the compaction managers (``trim --max-tokens`` and its kind). Each
    conversation is then done before the next starts, whatever the concurrency."""
    if builtin_trim(manager) or type(manager) is UnchangedContextManager:
        return True
    # trim's compaction options: a chain of managers that compute and never wait (asked
    # first: a token budget alone loads no model).
    from ctxmgr.state._compose import never_waiting

    if never_waiting(manager, never_waits):
        return True
    from ctxmgr.state.summary_context_manager import SummaryContextManager  # any other manager's code may wait

    return type(manager) is SummaryContextManager and manager.never_waits


def conversations_at_once(manager: BaseContextManager[Any], settings: Settings) -> int:
    """How many conversations (or files) to compact at once: ``settings.concurrency``,
    or 1 for a manager that never waits, whose run then needs no event loop (see
    :func:`ctxmgr.files._coroutines.run_without_loop`)."""
    return 1 if never_waits(manager) else settings.concurrency
