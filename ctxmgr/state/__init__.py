"""The conversation model and context managers, mirroring ``tenxgraph.core.state``.

>>> from ctxmgr.state import AgentState, Message, MessageContextManager
>>> state = AgentState(context=[Message.text_message("hi")])
>>> MessageContextManager(max_messages=1).trim_context(state).context[0].text()
'hi'

The reference's names are here, and its submodules (``agent_state``, ``message``,
``message_block``, ``base_context``, ``message_context_manager``,
``summary_context_manager``, ``execution_state``, ``reducers``, ``tool_result``) name
what they export, so code written for ``tenxgraph.core.state`` runs after changing the
import prefix. The streaming names are absent: ctxmgr runs no graph to stream from.

The names are loaded on first use (PEP 562): ``from ctxmgr.state import
MessageContextManager`` must not import pydantic, which the trim fast path never needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmgr.state.agent import AgentState, ExecutionMeta, ExecutionState, ExecutionStatus, StopRequestStatus
    from ctxmgr.state.blocks import (
        AnnotationBlock,
        AnnotationRef,
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
    from ctxmgr.state.reducers import (
        add_messages,
        append_items,
        remove_tool_messages,
        replace_messages,
        replace_value,
    )
    from ctxmgr.state.summary import SummaryContextManager
    from ctxmgr.state.tokens import (
        CHARS_PER_TOKEN,
        UNITS_PER_TOKEN,
        estimate_tokens,
        message_units,
        script_aware_reference_tokens,
        text_units,
    )
    from ctxmgr.state.tool_result import ToolResult
    from ctxmgr.state.tools import find_safe_cut, remove_completed_tool_sequences

__all__ = [
    "CHARS_PER_TOKEN",
    "UNITS_PER_TOKEN",
    "AgentState",
    "AnnotationBlock",
    "AnnotationRef",
    "AudioBlock",
    "BaseContextManager",
    "ContentBlock",
    "DataBlock",
    "DocumentBlock",
    "ErrorBlock",
    "ExecutionMeta",
    "ExecutionState",
    "ExecutionStatus",
    "ImageBlock",
    "MediaRef",
    "Message",
    "MessageContextManager",
    "ReasoningBlock",
    "RemoteToolCallBlock",
    "Role",
    "StopRequestStatus",
    "SummaryContextManager",
    "TextBlock",
    "TokenUsages",
    "ToolCallBlock",
    "ToolResult",
    "ToolResultBlock",
    "VideoBlock",
    "add_messages",
    "append_items",
    "estimate_tokens",
    "find_safe_cut",
    "message_units",
    "remove_completed_tool_sequences",
    "remove_tool_messages",
    "replace_messages",
    "replace_value",
    "script_aware_reference_tokens",
    "text_units",
]

_HOME = {
    "AgentState": "ctxmgr.state.agent",
    "AnnotationBlock": "ctxmgr.state.blocks",
    "AnnotationRef": "ctxmgr.state.blocks",
    "AudioBlock": "ctxmgr.state.blocks",
    "BaseContextManager": "ctxmgr.state.managers",
    "CHARS_PER_TOKEN": "ctxmgr.state.tokens",
    "ContentBlock": "ctxmgr.state.blocks",
    "DataBlock": "ctxmgr.state.blocks",
    "DocumentBlock": "ctxmgr.state.blocks",
    "ErrorBlock": "ctxmgr.state.blocks",
    "ExecutionMeta": "ctxmgr.state.agent",
    "ExecutionState": "ctxmgr.state.agent",
    "ExecutionStatus": "ctxmgr.state.agent",
    "ImageBlock": "ctxmgr.state.blocks",
    "MediaRef": "ctxmgr.state.blocks",
    "Message": "ctxmgr.state.message",
    "MessageContextManager": "ctxmgr.state.managers",
    "ReasoningBlock": "ctxmgr.state.blocks",
    "RemoteToolCallBlock": "ctxmgr.state.blocks",
    "Role": "ctxmgr.state.message",
    "StopRequestStatus": "ctxmgr.state.agent",
    "SummaryContextManager": "ctxmgr.state.summary",
    "TextBlock": "ctxmgr.state.blocks",
    "TokenUsages": "ctxmgr.state.message",
    "ToolCallBlock": "ctxmgr.state.blocks",
    "ToolResult": "ctxmgr.state.tool_result",
    "ToolResultBlock": "ctxmgr.state.blocks",
    "UNITS_PER_TOKEN": "ctxmgr.state.tokens",
    "VideoBlock": "ctxmgr.state.blocks",
    "add_messages": "ctxmgr.state.reducers",
    "append_items": "ctxmgr.state.reducers",
    "estimate_tokens": "ctxmgr.state.tokens",
    "find_safe_cut": "ctxmgr.state.tools",
    "message_units": "ctxmgr.state.tokens",
    "remove_completed_tool_sequences": "ctxmgr.state.tools",
    "remove_tool_messages": "ctxmgr.state.reducers",
    "replace_messages": "ctxmgr.state.reducers",
    "replace_value": "ctxmgr.state.reducers",
    "script_aware_reference_tokens": "ctxmgr.state.tokens",
    "text_units": "ctxmgr.state.tokens",
}

_STREAMING = "streaming has no meaning offline: ctxmgr runs no graph whose output could be streamed"
_ABSENT = dict.fromkeys(("StreamChunk", "StreamEvent", "StreamEmitter", "stream_chunks", "stream_emitter"), _STREAMING)
"""The reference's names ctxmgr does not have, and why (the README lists them too)."""


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
    elif name in _ABSENT:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}: {_ABSENT[name]}")
    else:
        try:  # a submodule, as `tenxgraph.core.state.reducers` is an attribute of its package
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
