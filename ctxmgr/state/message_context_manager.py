"""The reference's ``message_context_manager`` module: ``MessageContextManager`` and its names.

The manager lives in :mod:`ctxmgr.state._managers`; its hook is ``_trim``.
"""

from ctxmgr.state._agent import AgentState
from ctxmgr.state._managers import BaseContextManager, MessageContextManager, S
from ctxmgr.state.message import Message
from ctxmgr.state.reducers import remove_tool_messages

__all__ = ["AgentState", "BaseContextManager", "Message", "MessageContextManager", "S", "remove_tool_messages"]
