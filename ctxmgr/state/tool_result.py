"""``ToolResult``: what a tool returns when it both answers the model and updates the state.

ctxmgr runs no tools; the class is here so code that builds or compares tool results
runs unchanged.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ToolResult"]


class ToolResult:
    """A tool's answer to the model (``message``) and the state fields it sets (``state``).

    Args:
        message: The tool result the model sees; ``content`` is another name for it.
        state: State field names and their new values; fields not named stay as they are.
        is_error: Whether the call failed (its result is marked ``failed``).
        content: ``message``, when ``message`` is not given.
    """

    def __init__(
        self,
        message: Any = None,
        state: dict[str, Any] | None = None,
        is_error: bool = False,
        *,
        content: Any = None,
    ) -> None:
        self.message = content if message is None and content is not None else message
        self.state = state
        self.is_error = is_error

    def __repr__(self) -> str:
        return f"ToolResult(message={self.message!r}, state={self.state!r}, is_error={self.is_error!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolResult):
            return NotImplemented
        return (self.message, self.state, self.is_error) == (other.message, other.state, other.is_error)

    def __hash__(self) -> int:
        # A dict is unhashable: its items are hashed (an empty one hashes as no state).
        state = frozenset(self.state.items()) if self.state else None
        return hash((self.message, state, self.is_error))
