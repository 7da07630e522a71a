"""Tool-call rules shared by every manager: completed sequences and safe cuts.

Both rules are linear in the number of messages. Pairing uses identifiers when the
messages carry them (``tools_calls[].id`` / ``tool_call`` blocks on the calling side,
``tool_result.call_id`` on the result side); format adapters map each format's own ids
(``tool_call_id``, ``call_id``, ``tool_use_id``, Gemini function ids) onto these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from ctxmgr.state._blocks import RemoteToolCallBlock, ToolCallBlock, ToolResultBlock
from ctxmgr.state._rules import completed_sequence_survivors, unsafe_cuts_of
from ctxmgr.state.message import Message

__all__ = [
    "call_ids",
    "completed_sequence_survivors",
    "find_safe_cut",
    "remove_completed_tool_sequences",
    "result_ids",
    "unsafe_cuts",
]

M = TypeVar("M", bound=Message)


def call_ids(message: Message) -> list[str]:
    """Ids of the tool calls ``message`` makes (empty for non-assistant messages)."""
    ids: list[str] = []
    for call in message.tools_calls or ():
        call_id = call.get("id") if isinstance(call, dict) else None
        if isinstance(call_id, str) and call_id:
            ids.append(call_id)
    for block in message.content:
        if isinstance(block, ToolCallBlock | RemoteToolCallBlock) and block.id:
            ids.append(block.id)
    return ids


def result_ids(message: Message) -> list[str]:
    """Ids of the calls whose results ``message`` carries."""
    return [b.call_id for b in message.content if isinstance(b, ToolResultBlock) and b.call_id]


def remove_completed_tool_sequences(messages: Sequence[M]) -> list[M]:
    """Drop finished tool calls, keeping the final answers.

    Scanning left to right, an assistant message with non-empty ``tools_calls``, the run
    of consecutive ``tool`` messages right after it (possibly none), and then an
    assistant message without ``tools_calls`` form a completed sequence: the calling
    assistant and its results are removed, the final answer is kept. Anything else
    (pending results, a user message in between, an orphan tool message) is kept.
    Chained calls ``[u, A1(calls), T1, A2(calls), T2, F]`` give ``[u, A1, T1, F]``.
    """
    roles = [m.role for m in messages]
    calls = [bool(m.tools_calls) for m in messages]
    return [messages[i] for i in completed_sequence_survivors(roles, calls)]


def find_safe_cut(messages: Sequence[Message], cut: int) -> int:
    """The largest ``c <= cut`` where splitting ``messages[:c] | messages[c:]`` is safe.

    A split is unsafe when a tool result at or after it answers a call made before it
    (parallel calls included), or when the kept part would start with a ``tool`` message
    (an id-less result whose call is being cut away). Returns 0 when no earlier point is
    safe, meaning nothing can be cut.
    """
    n = len(messages)
    cut = max(0, min(cut, n))
    unsafe_at = unsafe_cuts(messages)
    while cut > 0 and unsafe_at[cut]:
        cut -= 1
    return cut


def unsafe_cuts(messages: Sequence[Message]) -> list[bool]:
    """For each split point ``k`` in ``0..len(messages)``, whether splitting
    ``messages[:k] | messages[k:]`` is unsafe (see :func:`find_safe_cut`)."""
    return unsafe_cuts_of(
        [m.role for m in messages], [call_ids(m) for m in messages], [result_ids(m) for m in messages]
    )
