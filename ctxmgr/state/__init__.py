"""The conversation model and context managers, mirroring ``tenxgraph.core.state``.

>>> from ctxmgr.state import AgentState, Message, MessageContextManager
>>> state = AgentState(context=[Message.text_message("hi")])
>>> MessageContextManager(max_messages=1).trim_context(state).context[0].text()
'hi'

The names are loaded on first use (PEP 562): ``from ctxmgr.state import
MessageContextManager`` must not import pydantic, which the trim fast path never needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmgr.state.agent import AgentState, ExecutionMeta
    from ctxmgr.state.blocks import (
        AnnotationBlock,
        AudioBlock,
        ContentBlock,
        DataBlock,
        DocumentBlock,
        ErrorBlock,
        ImageBlock,
        MediaRef,
        ReasoningBlock,
        RemoteToolCallBlock,
        TextBlock,
        ToolCallBlock,
        ToolResultBlock,
        VideoBlock,
    )
    from ctxmgr.state.managers import BaseContextManager, MessageContextManager
    from ctxmgr.state.message import Message, Role, TokenUsages
    from ctxmgr.state.summary import SummaryContextManager
    from ctxmgr.state.tokens import CHARS_PER_TOKEN, estimate_tokens, message_chars
    from ctxmgr.state.tools import find_safe_cut, remove_completed_tool_sequences

__all__ = [
    "CHARS_PER_TOKEN",
    "AgentState",
    "AnnotationBlock",
    "AudioBlock",
    "BaseContextManager",
    "ContentBlock",
    "DataBlock",
    "DocumentBlock",
    "ErrorBlock",
    "ExecutionMeta",
    "ImageBlock",
    "MediaRef",
    "Message",
    "MessageContextManager",
    "ReasoningBlock",
    "RemoteToolCallBlock",
    "Role",
    "SummaryContextManager",
    "TextBlock",
    "TokenUsages",
    "ToolCallBlock",
    "ToolResultBlock",
    "VideoBlock",
    "estimate_tokens",
    "find_safe_cut",
    "message_chars",
    "remove_completed_tool_sequences",
]

_HOME = {
    "AgentState": "ctxmgr.state.agent",
    "AnnotationBlock": "ctxmgr.state.blocks",
    "AudioBlock": "ctxmgr.state.blocks",
    "BaseContextManager": "ctxmgr.state.managers",
    "CHARS_PER_TOKEN": "ctxmgr.state.tokens",
    "ContentBlock": "ctxmgr.state.blocks",
    "DataBlock": "ctxmgr.state.blocks",
    "DocumentBlock": "ctxmgr.state.blocks",
    "ErrorBlock": "ctxmgr.state.blocks",
    "ExecutionMeta": "ctxmgr.state.agent",
    "ImageBlock": "ctxmgr.state.blocks",
    "MediaRef": "ctxmgr.state.blocks",
    "Message": "ctxmgr.state.message",
    "MessageContextManager": "ctxmgr.state.managers",
    "ReasoningBlock": "ctxmgr.state.blocks",
    "RemoteToolCallBlock": "ctxmgr.state.blocks",
    "Role": "ctxmgr.state.message",
    "SummaryContextManager": "ctxmgr.state.summary",
    "TextBlock": "ctxmgr.state.blocks",
    "TokenUsages": "ctxmgr.state.message",
    "ToolCallBlock": "ctxmgr.state.blocks",
    "ToolResultBlock": "ctxmgr.state.blocks",
    "VideoBlock": "ctxmgr.state.blocks",
    "estimate_tokens": "ctxmgr.state.tokens",
    "find_safe_cut": "ctxmgr.state.tools",
    "message_chars": "ctxmgr.state.tokens",
    "remove_completed_tool_sequences": "ctxmgr.state.tools",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
