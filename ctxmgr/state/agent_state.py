"""The reference's ``agent_state`` module: ``AgentState`` and the names it exports.

``AgentState`` lives in :mod:`ctxmgr.state._agent`.
"""

from ctxmgr.state._agent import START, AgentState, ExecutionState as ExecMeta
from ctxmgr.state.message import Message
from ctxmgr.state.reducers import add_messages

__all__ = ["START", "AgentState", "ExecMeta", "Message", "add_messages"]
