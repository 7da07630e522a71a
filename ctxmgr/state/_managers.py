"""Context managers: the reference's ``BaseContextManager`` and its implementations.

Each manager mutates and returns the state it is given, as the reference does.

This module imports neither pydantic nor the model at load time: ``ctxmgr trim`` builds
a :class:`MessageContextManager` before it knows whether any message will be built (the
fast path reads outlines instead), and importing pydantic alone costs more than the
whole trim of a small file. :class:`~ctxmgr.state.summary_context_manager.SummaryContextManager`,
which always builds messages, lives in its own module.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ctxmgr.errors import UsageError
from ctxmgr.state._rules import completed_sequence_survivors, trim_selection

if TYPE_CHECKING:
    from ctxmgr.state._agent import AgentState
    from ctxmgr.state.message import Message

__all__ = [
    "BaseContextManager",
    "MessageContextManager",
    "UnchangedContextManager",
    "check_count",
    "plan_trim",
    "trim_selection",
]

S = TypeVar("S", bound="AgentState")
M = TypeVar("M", bound="Message")


class BaseContextManager(ABC, Generic[S]):
    """Base of every context manager: shortens ``state.context`` in place.

    Subclasses implement both methods; implementing only one leaves the class abstract,
    so instantiating it raises ``TypeError``.
    """

    @abstractmethod
    def trim_context(self, state: S) -> S:
        """Shorten ``state`` and return it."""
        raise NotImplementedError  # reached only through super(): as in the reference

    @abstractmethod
    async def atrim_context(self, state: S) -> S:
        """Async form of :meth:`trim_context`."""
        raise NotImplementedError


def check_count(name: str, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise UsageError(f"{name} must be a whole number >= 0, got {value!r}")


def plan_trim(messages: list[M], max_messages: int) -> list[M] | None:
    """The messages the trim rule keeps (see :func:`trim_selection`), or ``None``."""
    selection = trim_selection([m.role for m in messages], max_messages)
    return None if selection is None else [messages[i] for i in selection]


class MessageContextManager(BaseContextManager["AgentState"]):
    """Keep the system messages and the last ``max_messages`` user turns.

    Works on any ``AgentState`` subclass and returns the state it is given, typed as such:
    the class is not generic itself (``MessageContextManager(max_messages=2)`` needs no
    type argument), its methods are. ``MessageContextManager[MyState]`` is accepted at
    run time, as the reference's generic class accepts it, and is the class itself.

    Args:
        max_messages: User turns to keep (messages with role ``"user"``); >= 0.
        remove_tool_msgs: First drop completed tool-call sequences (the calling
            assistant message and its results), keeping the final answers.
    """

    def __init__(self, max_messages: int = 10, remove_tool_msgs: bool = False) -> None:
        check_count("max_messages", max_messages)
        self.max_messages = max_messages
        self.remove_tool_msgs = remove_tool_msgs

    def _trim(self, messages: list[Message]) -> list[Message] | None:
        """The messages to keep, or ``None`` when ``messages`` need no change.

        The hook :meth:`trim_context` and :meth:`atrim_context` call, as in the
        reference: a subclass overriding it changes both. With ``remove_tool_msgs`` the
        cleaned list is returned even when no user turn is cut.
        """
        if not messages:
            return None
        if self.remove_tool_msgs:
            from ctxmgr.state.reducers import remove_tool_messages

            messages = remove_tool_messages(messages)
        kept = plan_trim(messages, self.max_messages)
        if kept is None and self.remove_tool_msgs:
            return messages
        return kept

    def trim_context(self, state: S) -> S:
        """Trim ``state.context`` in place and return ``state``; ``context_summary`` is untouched."""
        kept = self._trim(state.context)
        if kept is not None:
            state.context = kept
        return state

    async def atrim_context(self, state: S) -> S:
        """The same as :meth:`trim_context` (nothing here waits)."""
        return self.trim_context(state)

    def __class_getitem__(cls, item: object) -> type[MessageContextManager]:
        # Code written for the reference subscripts the class (in a base-class list, or
        # to build one); ctxmgr's class is not generic, so a subscript changes nothing.
        return cls

    def select(self, roles: Sequence[str], calls: Sequence[bool]) -> list[int] | None:
        """The same decision on outlines: indices kept, or ``None`` for "unchanged".

        ``roles[i]`` and ``calls[i]`` describe message i. Used by the streaming fast path,
        which reads only what this rule needs; :meth:`trim_context` makes the same choice.
        """
        if not roles:
            return None
        kept = list(range(len(roles)))
        if self.remove_tool_msgs:
            kept = completed_sequence_survivors(roles, calls)
        chosen = trim_selection([roles[i] for i in kept], self.max_messages)
        if chosen is not None:
            return [kept[i] for i in chosen]
        return kept if self.remove_tool_msgs and len(kept) != len(roles) else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(max_messages={self.max_messages}, remove_tool_msgs={self.remove_tool_msgs})"


class UnchangedContextManager(BaseContextManager["AgentState"]):
    """Leaves every conversation as it is: the manager of ``ctxmgr convert``, which only
    reads and writes. It never waits, so a run needs no event loop
    (:func:`ctxmgr.files._settings.never_waits`)."""

    def trim_context(self, state: AgentState) -> AgentState:
        return state

    async def atrim_context(self, state: AgentState) -> AgentState:
        return state

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


# Names this module held before SummaryContextManager moved to ctxmgr.state.summary_context_manager
# (which imports the model): still importable from here, loaded on first use.
_MOVED = {
    "SummaryContextManager": "ctxmgr.state.summary_context_manager",
    "DEFAULT_SUMMARY_PROMPT": "ctxmgr.state._transcript",
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
