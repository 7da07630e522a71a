"""The reference's ``base_context`` module: the base class every context manager derives from.

It lives in :mod:`ctxmgr.state._managers`.
"""

from ctxmgr.state._agent import AgentState
from ctxmgr.state._managers import BaseContextManager, S

__all__ = ["AgentState", "BaseContextManager", "S"]
