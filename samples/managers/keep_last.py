"""A sample custom context manager for ``ctxmgr run``.

    ctxmgr run samples/support-chat.json --manager samples/managers/keep_last.py:KeepLastMessages --option count=4

Keeps the system messages and the last ``count`` other messages, then moves the cut
earlier so no tool result loses its call (using ctxmgr's own safe-cut rule).
"""

from __future__ import annotations

from ctxmgr.state import AgentState, BaseContextManager, find_safe_cut


class KeepLastMessages(BaseContextManager[AgentState]):
    """Keep the last ``count`` non-system messages (never splitting a tool call)."""

    def __init__(self, count: int = 6, keep_system: bool = True) -> None:
        self.count = count
        self.keep_system = keep_system

    def trim_context(self, state: AgentState) -> AgentState:
        system = [m for m in state.context if m.role == "system"] if self.keep_system else []
        rest = [m for m in state.context if m.role != "system"]
        cut = find_safe_cut(rest, max(0, len(rest) - self.count))
        state.context = system + rest[cut:]
        return state

    async def atrim_context(self, state: AgentState) -> AgentState:
        return self.trim_context(state)
