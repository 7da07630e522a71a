"""The reference's ``execution_state`` module: where a graph run is, and its two status enums.

They live in :mod:`ctxmgr.state._agent`, beside the ``AgentState`` that holds them.
"""

from ctxmgr.state._agent import ExecutionState, ExecutionStatus, StopRequestStatus

__all__ = ["ExecutionState", "ExecutionStatus", "StopRequestStatus"]
