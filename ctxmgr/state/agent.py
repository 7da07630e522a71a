"""``AgentState``: a conversation plus the agent's execution metadata.

Matches the reference's ``model_dump_json()`` shape. Unlike the reference, unknown keys
(fields of an ``AgentState`` subclass, extra execution-meta keys) are kept.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctxmgr.state.message import Message

__all__ = ["AgentState", "ExecutionMeta"]


class ExecutionMeta(BaseModel):
    """Where a graph run is: node, step, status and interrupt details."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    current_node: str = "__start__"
    step: int = 0
    status: Literal["running", "interrupted_before", "interrupted_after", "completed", "error"] = "running"
    interrupted_node: list[str] | str | None = None
    interrupt_reason: str | None = None
    interrupt_data: dict[str, Any] | None = None
    thread_id: str | None = None
    stop_current_execution: Literal["none", "stop_requested", "stopped"] = "none"
    internal_data: dict[str, Any] = Field(default_factory=dict)


class AgentState(BaseModel):
    """The state a context manager works on: ``context`` and ``context_summary``."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    context: list[Message] = Field(default_factory=list)
    context_summary: str | None = None
    execution_meta: ExecutionMeta = Field(default_factory=ExecutionMeta)
