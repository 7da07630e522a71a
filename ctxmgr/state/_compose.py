"""One call for a plain message list: :func:`compact_messages`, and the chain it runs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from ctxmgr.errors import UsageError
from ctxmgr.state._budget import TokenBudgetContextManager
from ctxmgr.state._clearing import ToolResultClearingManager
from ctxmgr.state._compaction import ChainContextManager, CompactionManager
from ctxmgr.state._truncation import ToolOutputTruncationManager

if TYPE_CHECKING:
    from ctxmgr.state.message import Message

__all__ = ["compact_messages", "compaction_chain"]


def compaction_chain(
    *,
    max_tokens: int | None = None,
    start_on: Literal["user"] | None = None,
    max_messages: int | None = None,
    pin_index: Iterable[int] = (),
    pin_match: Iterable[str] = (),
    clear_tool_results: bool = False,
    keep_tool_results: int = 3,
    exclude_tools: Iterable[str] = (),
    clear_tool_inputs: bool = False,
    max_tool_output: int | None = None,
) -> ChainContextManager:
    """The managers :func:`compact_messages` runs, in its order: clearing (with
    ``max_tokens``, only while over it), truncation, then the token budget.

    Raises:
        UsageError: a value out of range, or nothing asked (no budget, clearing or
            truncation), or pins or ``start_on`` without ``max_tokens``.
    """
    pin_index, pin_match = list(pin_index), list(pin_match)
    managers: list[CompactionManager] = []
    if clear_tool_results:
        managers.append(
            ToolResultClearingManager(
                keep_tool_results,
                exclude_tools=exclude_tools,
                clear_tool_inputs=clear_tool_inputs,
                max_tokens=max_tokens,
            )
        )
    if max_tool_output is not None:
        managers.append(ToolOutputTruncationManager(max_tool_output))
    if max_tokens is not None:
        managers.append(
            TokenBudgetContextManager(
                max_tokens, start_on=start_on, max_messages=max_messages, pin_index=pin_index, pin_match=pin_match
            )
        )
    elif start_on is not None or pin_index or pin_match or max_messages is not None:
        raise UsageError("start_on, max_messages and the pins apply to the token budget: give max_tokens too")
    if not managers:
        raise UsageError("nothing to do: give max_tokens, clear_tool_results or max_tool_output")
    return ChainContextManager(*managers)


def compact_messages(
    messages: Sequence[Message],
    *,
    max_tokens: int | None = None,
    start_on: Literal["user"] | None = None,
    max_messages: int | None = None,
    pin_index: Iterable[int] = (),
    pin_match: Iterable[str] = (),
    clear_tool_results: bool = False,
    keep_tool_results: int = 3,
    exclude_tools: Iterable[str] = (),
    clear_tool_inputs: bool = False,
    max_tool_output: int | None = None,
) -> list[Message]:
    """Compact a plain message list, as LangChain's ``trim_messages`` does a list.

    Returns a new list; the messages given are not changed (edited ones are copies).
    What each step did is reported inside
    :func:`~ctxmgr.state.collect_compaction_reports`. Pin positions are positions in
    ``messages``.

    >>> from ctxmgr.state import Message
    >>> chat = [Message.text_message("x" * 400), Message.text_message("hi")]
    >>> [m.text() for m in compact_messages(chat, max_tokens=10)]
    ['hi']

    Args:
        max_tokens: Keep the newest messages within this many estimated tokens
            (:class:`~ctxmgr.state.TokenBudgetContextManager`); also the trigger of
            clearing when ``clear_tool_results`` is set.
        start_on, max_messages, pin_index, pin_match: See
            :class:`~ctxmgr.state.TokenBudgetContextManager`.
        clear_tool_results, keep_tool_results, exclude_tools, clear_tool_inputs: See
            :class:`~ctxmgr.state.ToolResultClearingManager`.
        max_tool_output: See :class:`~ctxmgr.state.ToolOutputTruncationManager`.
    """
    chain = compaction_chain(
        max_tokens=max_tokens,
        start_on=start_on,
        max_messages=max_messages,
        pin_index=pin_index,
        pin_match=pin_match,
        clear_tool_results=clear_tool_results,
        keep_tool_results=keep_tool_results,
        exclude_tools=exclude_tools,
        clear_tool_inputs=clear_tool_inputs,
        max_tool_output=max_tool_output,
    )
    from ctxmgr.state._agent import AgentState

    state = AgentState(context=list(messages))
    return list(chain.trim_context(state).context)
