"""Tool-result clearing, as Anthropic's context editing (``clear_tool_uses``) does it.

The results of all but the most recent tool calls are replaced by a placeholder naming
the tool, the call and what was removed; the call and its result stay, so every
format's pairing rules still hold.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard

from ctxmgr import _nesting
from ctxmgr.state._budget import check_budget
from ctxmgr.state._compaction import CLEARED_PREFIX, CompactionManager, CompactionReport, edited, output_text
from ctxmgr.state._managers import check_count
from ctxmgr.state._tokens import UNITS_PER_TOKEN, message_units

if TYPE_CHECKING:
    from ctxmgr.state._blocks import RemoteToolCallBlock, ToolCallBlock
    from ctxmgr.state.message import Message

__all__ = ["CLEARED_PREFIX", "ToolResultClearingManager", "cleared_arguments", "output_text"]


def _named_calls(message: Message) -> list[tuple[str, str]]:
    """``(call id, tool name)`` of every call ``message`` makes."""
    from ctxmgr.state._blocks import RemoteToolCallBlock, ToolCallBlock

    found: list[tuple[str, str]] = []
    for call in message.tools_calls or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(call.get("id"), str) and call["id"]:
            found.append((call["id"], str(function.get("name") or "tool")))
    for block in message.content:
        if isinstance(block, ToolCallBlock | RemoteToolCallBlock) and block.id:
            found.append((block.id, block.name or "tool"))
    return found


@dataclass
class _Call:
    """One tool call: where its message is, and where its results are."""

    call_id: str
    name: str
    at: int
    results: list[int] = field(default_factory=list)


class ToolResultClearingManager(CompactionManager):
    """Replace the results of all but the ``keep_tool_results`` most recent tool calls.

    A cleared result becomes ``[tool result cleared by ctxmgr: read_file call_8f2,
    48,210 characters]``; its call stays. Results without an id that pairs them with a
    call, and results shorter than their placeholder, are left alone.

    Args:
        keep_tool_results: The most recent calls whose results are never cleared (>= 0).
        exclude_tools: Tool names whose results are never cleared.
        clear_tool_inputs: Also replace the cleared calls' arguments by
            ``{"ctxmgr_cleared": "1,204 characters"}``.
        max_tokens: Clear only when the conversation is over this many estimated tokens,
            oldest results first, until it fits (``None``: clear every result allowed).
    """

    def __init__(
        self,
        keep_tool_results: int = 3,
        *,
        exclude_tools: Iterable[str] = (),
        clear_tool_inputs: bool = False,
        max_tokens: int | None = None,
    ) -> None:
        check_count("keep_tool_results", keep_tool_results)
        check_budget("max_tokens", max_tokens)
        self.keep_tool_results = keep_tool_results
        self.exclude_tools = frozenset(exclude_tools)
        self.clear_tool_inputs = clear_tool_inputs
        self.max_tokens = max_tokens

    def _calls(self, messages: Sequence[Message]) -> list[_Call]:
        """The calls whose results may be cleared, oldest first.

        A result pairs with the latest call before it that has its id (some logs reuse
        ids), as :func:`~ctxmgr.state._tools.find_safe_cut` pairs them.
        """
        # The model, here: the outline path clears results without it.
        from ctxmgr.state._blocks import ToolResultBlock

        opened: dict[str, _Call] = {}
        calls: list[_Call] = []
        for index, message in enumerate(messages):
            for block in message.content:
                call = opened.get(block.call_id) if isinstance(block, ToolResultBlock) else None
                if call is not None and call.at < index and index not in call.results:
                    call.results.append(index)
            for call_id, name in _named_calls(message):
                opened[call_id] = _Call(call_id, name, index)
                calls.append(opened[call_id])
        answered = [c for c in calls if c.results]
        recent = answered[len(answered) - self.keep_tool_results :] if self.keep_tool_results else []
        protected = {id(c) for c in recent}
        return [c for c in answered if id(c) not in protected and c.name not in self.exclude_tools]

    def compact(self, messages: Sequence[Message]) -> tuple[list[Message], CompactionReport]:
        after = list(messages)
        budget = self.max_tokens
        # Measured only with a budget, which stops the clearing once the messages fit.
        units = sum(message_units(m) for m in after) if budget is not None else 0
        cleared = 0
        for call in self._calls(messages):
            if budget is not None and max(1, units // UNITS_PER_TOKEN) <= budget:
                break
            touched = sorted({*call.results, *([call.at] if self.clear_tool_inputs else [])})
            old = sum(message_units(after[i]) for i in touched) if budget is not None else 0
            done = 0
            for i in call.results:
                after[i], count = _clear_results(after[i], call)
                done += count
            cleared += done
            if self.clear_tool_inputs and done:  # the inputs of the calls whose results were cleared
                after[call.at] = _clear_inputs(after[call.at], call.call_id)
            if budget is not None:
                units += sum(message_units(after[i]) for i in touched) - old
        return after, self._report(messages, after, cleared_results=cleared)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(keep_tool_results={self.keep_tool_results}, "
            f"exclude_tools={sorted(self.exclude_tools)}, clear_tool_inputs={self.clear_tool_inputs}, "
            f"max_tokens={self.max_tokens})"
        )


def _clear_results(message: Message, call: _Call) -> tuple[Message, int]:
    """``message`` with ``call``'s results replaced by placeholders, and how many."""
    from ctxmgr.state._blocks import ToolResultBlock

    content: list[Any] = []
    count = 0
    for block in message.content:
        if isinstance(block, ToolResultBlock) and block.call_id == call.call_id:
            text = output_text(block.output)
            placeholder = f"{CLEARED_PREFIX}{call.name} {call.call_id}, {len(text):,} characters]"
            # A result shorter than its placeholder stays (clearing it would add text).
            if not text.startswith(CLEARED_PREFIX) and len(text) > len(placeholder):
                block = block.model_copy(update={"output": placeholder})
                count += 1
        content.append(block)
    return (edited(message, content=content), count) if count else (message, 0)


def cleared_arguments(arguments: Any) -> dict[str, str]:
    """The object left in place of a call's arguments."""
    text = arguments if isinstance(arguments, str) else _nesting.dumps(arguments, default=str)
    return {"ctxmgr_cleared": f"{len(text):,} characters"}


def _clear_inputs(message: Message, call_id: str) -> Message:
    """``message`` with the arguments of call ``call_id`` replaced (both of the model's
    places for them: ``tools_calls`` and tool-call blocks)."""
    calls = message.tools_calls
    new_calls = None
    if calls:
        new_calls = []
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            if (
                call.get("id") == call_id
                and isinstance(function, dict)
                and "ctxmgr_cleared" not in str(function.get("arguments"))
            ):
                arguments = _nesting.dumps(cleared_arguments(function.get("arguments", "")))
                call = {**call, "function": {**function, "arguments": arguments}}
            new_calls.append(call)
    content = [
        block.model_copy(update={"args": cleared_arguments(block.args)}) if _clears(block, call_id) else block
        for block in message.content
    ]
    return edited(message, content=content, tools_calls=new_calls if calls else calls)


def _clears(block: Any, call_id: str) -> TypeGuard[ToolCallBlock | RemoteToolCallBlock]:
    from ctxmgr.state._blocks import RemoteToolCallBlock, ToolCallBlock

    return (
        isinstance(block, ToolCallBlock | RemoteToolCallBlock)
        and block.id == call_id
        and "ctxmgr_cleared" not in block.args
    )
