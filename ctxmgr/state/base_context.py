"""The reference's ``base_context`` module: the base class every context manager derives from.

It lives in :mod:`ctxmgr.state.managers`.
"""

from ctxmgr.state.agent import AgentState
from ctxmgr.state.managers import BaseContextManager, S

__all__ = ["AgentState", "BaseContextManager", "S"]
