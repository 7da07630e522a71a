"""Compact one conversation: bytes in, manager applied, bytes out, with what changed.

The CLI and library users share this path, so ``--check``, the diff view and the JSON
report all see the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxmgr import formats
from ctxmgr.errors import CtxmgrError, ManagerError, ProviderError
from ctxmgr.formats._base import Conversation
from ctxmgr.state import AgentState, BaseContextManager, Message
from ctxmgr.state._compaction import CompactionReport, collect_compaction_reports
from ctxmgr.state._report import SummaryReport, collect_summary_reports

__all__ = ["Outcome", "acompact", "acompact_conversation", "compact", "compact_conversation"]


@dataclass
class Outcome:
    """What compacting one conversation did.

    Attributes:
        conversation: The conversation after the manager ran (unchanged on failure).
        before: The messages as they were read.
        summary_before: ``context_summary`` as it was read.
        error: The summarizer failure, if any (the conversation is then unchanged).
        summaries: What each summary made on the way took and lacks (see
            :class:`~ctxmgr.state._report.SummaryReport`), failed ones included.
        compactions: What each compaction manager did (see
            :class:`~ctxmgr.state.CompactionReport`); empty when none ran.
    """

    conversation: Conversation
    before: list[Message]
    summary_before: str | None
    error: ProviderError | None = None
    warnings: list[str] = field(default_factory=list)
    summaries: list[SummaryReport] = field(default_factory=list)
    compactions: list[CompactionReport] = field(default_factory=list)

    @property
    def after(self) -> list[Message]:
        return self.conversation.state.context

    @property
    def summary_after(self) -> str | None:
        return self.conversation.state.context_summary

    @property
    def changed(self) -> bool:
        """Whether the manager changed the messages or the summary."""
        after = self.after
        if len(after) != len(self.before) or self.summary_after != self.summary_before:
            return True
        return any(a is not b for a, b in zip(after, self.before, strict=True))

    def output(self, *, to: str | None = None) -> bytes:
        """The bytes to write: the conversation in its own format (or ``to``, after which
        ``conversation.dropped`` counts, by kind, what that format had no place for)."""
        return formats.dump(self.conversation, to=to)


def _snapshot(conversation: Conversation) -> tuple[list[Message], str | None]:
    state = conversation.state
    return list(state.context), state.context_summary


async def acompact_conversation(conversation: Conversation, manager: BaseContextManager[Any]) -> Outcome:
    """Apply ``manager`` to ``conversation``; a :class:`ProviderError` is caught and kept."""
    before, summary_before = _snapshot(conversation)
    state: AgentState = conversation.state
    with collect_summary_reports() as reports, collect_compaction_reports() as compactions:
        try:
            conversation.state = _checked(await manager.atrim_context(state), manager)
        except ProviderError as error:
            # The manager leaves the state untouched when the call fails; restore anyway so
            # a custom manager cannot leave it half-changed.
            state.context, state.context_summary = before, summary_before
            conversation.state = state
            return Outcome(conversation, before, summary_before, error=error, summaries=reports)
        except CtxmgrError:
            raise
        except Exception as exc:
            raise ManagerError(f"{type(manager).__name__} raised {type(exc).__name__}: {exc}") from exc
    return Outcome(conversation, before, summary_before, summaries=reports, compactions=compactions)


def _checked(state: Any, manager: BaseContextManager[Any]) -> AgentState:
    if not isinstance(state, AgentState):
        raise ManagerError(f"{type(manager).__name__} returned {type(state).__name__}, expected the AgentState")
    return state


def compact_conversation(conversation: Conversation, manager: BaseContextManager[Any]) -> Outcome:
    """Synchronous :func:`acompact_conversation` (runs the manager's ``trim_context``)."""
    before, summary_before = _snapshot(conversation)
    with collect_summary_reports() as reports, collect_compaction_reports() as compactions:
        try:
            conversation.state = _checked(manager.trim_context(conversation.state), manager)
        except ProviderError as error:
            conversation.state.context, conversation.state.context_summary = before, summary_before
            return Outcome(conversation, before, summary_before, error=error, summaries=reports)
        except CtxmgrError:
            raise
        except Exception as exc:
            raise ManagerError(f"{type(manager).__name__} raised {type(exc).__name__}: {exc}") from exc
    return Outcome(conversation, before, summary_before, summaries=reports, compactions=compactions)


def compact(
    data: bytes, manager: BaseContextManager[Any], *, source: str = "<input>", fmt: str | None = None
) -> Outcome:
    """Read ``data`` and apply ``manager`` to it."""
    return compact_conversation(formats.load(data, source=source, fmt=fmt), manager)


async def acompact(
    data: bytes, manager: BaseContextManager[Any], *, source: str = "<input>", fmt: str | None = None
) -> Outcome:
    """Async :func:`compact`, for summaries run concurrently."""
    return await acompact_conversation(formats.load(data, source=source, fmt=fmt), manager)
