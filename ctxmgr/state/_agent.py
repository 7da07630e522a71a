"""``AgentState``: a conversation plus the agent's execution state.

Matches the reference's ``model_dump_json()`` shape and its execution-state API
(``ExecutionState`` with its two status enums, and the methods ``AgentState`` forwards
to it). Unlike the reference, unknown keys (fields of an ``AgentState`` subclass, extra
execution-state keys) are kept, and an execution state read without ``current_node``
starts at :data:`START`, so a checkpoint missing it still loads.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ctxmgr.state.message import Message
from ctxmgr.state.reducers import add_messages

__all__ = ["START", "AgentState", "ExecutionMeta", "ExecutionState", "ExecutionStatus", "StopRequestStatus"]

START = "__start__"
"""The node a graph run starts at: where a new execution state points."""


class ExecutionStatus(StrEnum):
    """Where a graph run stands."""

    RUNNING = "running"
    INTERRUPTED_BEFORE = "interrupted_before"
    INTERRUPTED_AFTER = "interrupted_after"
    COMPLETED = "completed"
    ERROR = "error"


class StopRequestStatus(StrEnum):
    """Whether the current run was asked to stop."""

    NONE = "none"
    STOP_REQUESTED = "stop_requested"
    STOPPED = "stopped"


_INTERRUPTED = (ExecutionStatus.INTERRUPTED_BEFORE, ExecutionStatus.INTERRUPTED_AFTER)

E = TypeVar("E", bound=StrEnum)


def _member_of(enum_class: type[E]) -> BeforeValidator:
    """Read a status from its string, in strict validation too (files are read strictly,
    and strict mode accepts only enum instances), with an error that names the values."""

    def member(value: Any) -> E | Any:
        if isinstance(value, enum_class):
            return value
        try:
            return enum_class(value)
        except ValueError:
            allowed = ", ".join(repr(m.value) for m in enum_class)
            raise ValueError(f"Input should be {allowed}") from None

    convert: Callable[[Any], Any] = member
    return BeforeValidator(convert)


class ExecutionState(BaseModel):
    """Where a graph run is: node, step, status, interrupt details and stop request.

    The methods change the state in place, as the reference's do; ctxmgr's managers never
    call them (compacting a conversation does not move a run).
    """

    model_config = ConfigDict(extra="allow", defer_build=True)

    current_node: str = START
    step: int = 0
    status: Annotated[ExecutionStatus, _member_of(ExecutionStatus)] = ExecutionStatus.RUNNING
    # A list too: graph checkpoints record every node an interrupt stopped at.
    interrupted_node: list[str] | str | None = None
    interrupt_reason: str | None = None
    interrupt_data: dict[str, Any] | None = None
    thread_id: str | None = None
    stop_current_execution: Annotated[StopRequestStatus, _member_of(StopRequestStatus)] = StopRequestStatus.NONE
    internal_data: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExecutionState:
        """An execution state from the reference's runtime dict.

        That dict keeps the internal data under ``_internal_data``; ``current_node`` is
        required (``KeyError`` without it) and a stop request is not carried.
        """
        return cls.model_validate(
            {
                "current_node": data["current_node"],
                "step": data.get("step", 0),
                "status": ExecutionStatus(data.get("status", "running")),
                "interrupted_node": data.get("interrupted_node"),
                "interrupt_reason": data.get("interrupt_reason"),
                "interrupt_data": data.get("interrupt_data"),
                "thread_id": data.get("thread_id"),
                "internal_data": data.get("_internal_data", {}),
            }
        )

    def set_interrupt(
        self, node: str, reason: str, status: ExecutionStatus, data: dict[str, Any] | None = None
    ) -> None:
        """Record an interrupt at ``node`` with ``status`` (one of the two interrupted ones)."""
        self.interrupted_node = node
        self.interrupt_reason = reason
        self.status = ExecutionStatus(status)
        self.interrupt_data = data

    def clear_interrupt(self) -> None:
        """Forget the interrupt and mark the run as running again."""
        self.interrupted_node = None
        self.interrupt_reason = None
        self.interrupt_data = None
        self.status = ExecutionStatus.RUNNING

    def is_interrupted(self) -> bool:
        """Whether the run stopped before or after a node."""
        return self.status in _INTERRUPTED

    def is_running(self) -> bool:
        """Whether the status is ``running``."""
        return self.status == ExecutionStatus.RUNNING

    def is_stopped_requested(self) -> bool:
        """Whether a stop was requested and has not taken effect yet."""
        return self.stop_current_execution == StopRequestStatus.STOP_REQUESTED

    def advance_step(self) -> None:
        """Count one more step."""
        self.step += 1

    def set_current_node(self, node: str) -> None:
        """Move the run to ``node``."""
        self.current_node = node

    def complete(self) -> None:
        """Mark the run as completed."""
        self.status = ExecutionStatus.COMPLETED

    def error(self, error_msg: str) -> None:
        """Mark the run as failed, keeping ``error_msg`` in ``internal_data["error"]``."""
        self.status = ExecutionStatus.ERROR
        self.internal_data["error"] = error_msg


ExecutionMeta = ExecutionState
"""Another name for :class:`ExecutionState` (ctxmgr's, kept for code that imports it)."""


class AgentState(BaseModel):
    """The state a context manager works on: ``context`` and ``context_summary``.

    Subclass it to add application fields, as with the reference. The execution-state
    methods forward to :attr:`execution_meta`.
    """

    model_config = ConfigDict(extra="allow", defer_build=True)

    # add_messages is the reducer a graph runtime merges updates with; pydantic ignores it.
    context: Annotated[list[Message], add_messages] = Field(default_factory=list)
    context_summary: str | None = None
    execution_meta: ExecutionState = Field(default_factory=ExecutionState)

    def set_interrupt(
        self, node: str, reason: str, status: ExecutionStatus, data: dict[str, Any] | None = None
    ) -> None:
        """See :meth:`ExecutionState.set_interrupt`."""
        self.execution_meta.set_interrupt(node, reason, status, data)

    def clear_interrupt(self) -> None:
        """See :meth:`ExecutionState.clear_interrupt`."""
        self.execution_meta.clear_interrupt()

    def is_running(self) -> bool:
        """See :meth:`ExecutionState.is_running`."""
        return self.execution_meta.is_running()

    def is_interrupted(self) -> bool:
        """See :meth:`ExecutionState.is_interrupted`."""
        return self.execution_meta.is_interrupted()

    def is_stopped_requested(self) -> bool:
        """See :meth:`ExecutionState.is_stopped_requested`."""
        return self.execution_meta.is_stopped_requested()

    def advance_step(self) -> None:
        """See :meth:`ExecutionState.advance_step`."""
        self.execution_meta.advance_step()

    def set_current_node(self, node: str) -> None:
        """See :meth:`ExecutionState.set_current_node`."""
        self.execution_meta.set_current_node(node)

    def complete(self) -> None:
        """See :meth:`ExecutionState.complete`."""
        self.execution_meta.complete()

    def error(self, error_msg: str) -> None:
        """See :meth:`ExecutionState.error`."""
        self.execution_meta.error(error_msg)
