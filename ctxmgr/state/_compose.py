"""One call for a plain message list: :func:`compact_messages`, and the chain it runs."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ctxmgr.errors import UsageError
from ctxmgr.state._budget import TokenBudgetContextManager
from ctxmgr.state._compaction import ChainContextManager, CompactionManager
from ctxmgr.state._managers import BaseContextManager, MessageContextManager

if TYPE_CHECKING:
    from ctxmgr.state.message import Message

__all__ = ["compact_messages", "compaction_chain", "never_waiting", "trim_manager"]


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
        from ctxmgr.state._clearing import ToolResultClearingManager  # the model: only when asked

        managers.append(
            ToolResultClearingManager(
                keep_tool_results,
                exclude_tools=exclude_tools,
                clear_tool_inputs=clear_tool_inputs,
                max_tokens=max_tokens,
            )
        )
    if max_tool_output is not None:
        from ctxmgr.state._truncation import ToolOutputTruncationManager

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


def trim_manager(
    max_messages: int | None,
    remove_tool_msgs: bool = False,
    *,
    default_max_messages: int = 10,
    **compaction: Any,
) -> BaseContextManager[Any]:
    """The manager of ``ctxmgr trim``: :class:`~ctxmgr.state.MessageContextManager` alone
    (the reference's rule, exactly) unless a compaction option is given.

    Args:
        max_messages: The user-turn limit the user gave (``None``: not given). Without any
            compaction option, ``None`` means ``default_max_messages``; with one, no
            user-turn limit (``--max-tokens`` replaces it), and given, both hold.
        remove_tool_msgs: Drop completed tool-call sequences first.
        compaction: :func:`compaction_chain`'s keywords (``None`` and empty values: not given).
    """
    # Not given: None, an empty repeatable option, an unset switch (0 is a value: keep none).
    chosen = {
        name: value
        for name, value in compaction.items()
        if value is not None and value is not False and not (isinstance(value, list | tuple) and not value)
    }
    asked = {"max_tokens", "clear_tool_results", "max_tool_output"} & chosen.keys()
    if not asked:
        others = sorted(set(chosen) - {"keep_tool_results"})
        if others:
            raise UsageError(
                f"{', '.join(others)}: these apply only with max_tokens, clear_tool_results or max_tool_output "
                "(--max-tokens, --clear-tool-results, --max-tool-output)"
            )
        limit = default_max_messages if max_messages is None else max_messages
        return MessageContextManager(max_messages=limit, remove_tool_msgs=remove_tool_msgs)
    managers: list[BaseContextManager[Any]] = []
    if "max_tokens" in chosen:
        chosen["max_messages"] = max_messages
        if remove_tool_msgs:
            managers.append(MessageContextManager(max_messages=sys.maxsize, remove_tool_msgs=True))
    elif max_messages is not None or remove_tool_msgs:
        limit = sys.maxsize if max_messages is None else max_messages
        managers.append(MessageContextManager(max_messages=limit, remove_tool_msgs=remove_tool_msgs))
    managers.extend(compaction_chain(**chosen).managers)
    return ChainContextManager(*managers)


def never_waiting(manager: BaseContextManager[Any], member: Callable[[BaseContextManager[Any]], bool]) -> bool:
    """Whether ``manager`` is one of the compaction managers (which never wait), or a
    :class:`ChainContextManager` of managers each of which is that or ``member`` says so."""
    if type(manager) is TokenBudgetContextManager:
        return True  # without loading the others (and the model): trim --max-tokens
    if isinstance(manager, CompactionManager):
        from ctxmgr.state._truncation import ToolOutputTruncationManager

        if type(manager) is ToolOutputTruncationManager:
            return True  # without loading the model either: trim --max-tool-output
        from ctxmgr.state._clearing import ToolResultClearingManager

        return type(manager) is ToolResultClearingManager
    if type(manager) is ChainContextManager:
        return all(never_waiting(m, member) or member(m) for m in manager.managers)
    return False
