"""The reference's ``execution_state`` module: where a graph run is, and its two status enums.

They live in :mod:`ctxmgr.state.agent`, beside the ``AgentState`` that holds them.
"""

from ctxmgr.state.agent import ExecutionState, ExecutionStatus, StopRequestStatus

__all__ = ["ExecutionState", "ExecutionStatus", "StopRequestStatus"]
