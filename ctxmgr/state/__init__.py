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
    from ctxmgr.state._agent import AgentState, ExecutionMeta, ExecutionState, ExecutionStatus, StopRequestStatus
    from ctxmgr.state._blocks import (
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
    from ctxmgr.state._budget import TokenBudgetContextManager
    from ctxmgr.state._clearing import ToolResultClearingManager
    from ctxmgr.state._compaction import ChainContextManager, CompactionReport, collect_compaction_reports
    from ctxmgr.state._compose import compact_messages
    from ctxmgr.state._managers import BaseContextManager, MessageContextManager
    from ctxmgr.state._report import SummaryReport, collect_summary_reports
    from ctxmgr.state._tokens import (
        CHARS_PER_TOKEN,
        UNITS_PER_TOKEN,
        estimate_tokens,
        message_units,
        script_aware_reference_tokens,
        text_units,
    )
    from ctxmgr.state._tools import find_safe_cut, remove_completed_tool_sequences
    from ctxmgr.state._truncation import ToolOutputTruncationManager
    from ctxmgr.state.message import Message, Role, TokenUsages
    from ctxmgr.state.reducers import (
        add_messages,
        append_items,
        remove_tool_messages,
        replace_messages,
        replace_value,
    )
    from ctxmgr.state.summary_context_manager import SummaryContextManager
    from ctxmgr.state.tool_result import ToolResult

__all__ = [
    "CHARS_PER_TOKEN",
    "UNITS_PER_TOKEN",
    "AgentState",
    "AnnotationBlock",
    "AnnotationRef",
    "AudioBlock",
    "BaseContextManager",
    "ChainContextManager",
    "CompactionReport",
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
    "SummaryReport",
    "TextBlock",
    "TokenBudgetContextManager",
    "TokenUsages",
    "ToolCallBlock",
    "ToolOutputTruncationManager",
    "ToolResult",
    "ToolResultBlock",
    "ToolResultClearingManager",
    "VideoBlock",
    "add_messages",
    "append_items",
    "collect_compaction_reports",
    "collect_summary_reports",
    "compact_messages",
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
    "AgentState": "ctxmgr.state._agent",
    "AnnotationBlock": "ctxmgr.state._blocks",
    "AnnotationRef": "ctxmgr.state._blocks",
    "AudioBlock": "ctxmgr.state._blocks",
    "BaseContextManager": "ctxmgr.state._managers",
    "ChainContextManager": "ctxmgr.state._compaction",
    "CompactionReport": "ctxmgr.state._compaction",
    "TokenBudgetContextManager": "ctxmgr.state._budget",
    "ToolOutputTruncationManager": "ctxmgr.state._truncation",
    "ToolResultClearingManager": "ctxmgr.state._clearing",
    "collect_compaction_reports": "ctxmgr.state._compaction",
    "compact_messages": "ctxmgr.state._compose",
    "CHARS_PER_TOKEN": "ctxmgr.state._tokens",
    "ContentBlock": "ctxmgr.state._blocks",
    "DataBlock": "ctxmgr.state._blocks",
    "DocumentBlock": "ctxmgr.state._blocks",
    "ErrorBlock": "ctxmgr.state._blocks",
    "ExecutionMeta": "ctxmgr.state._agent",
    "ExecutionState": "ctxmgr.state._agent",
    "ExecutionStatus": "ctxmgr.state._agent",
    "ImageBlock": "ctxmgr.state._blocks",
    "MediaRef": "ctxmgr.state._blocks",
    "Message": "ctxmgr.state.message",
    "MessageContextManager": "ctxmgr.state._managers",
    "ReasoningBlock": "ctxmgr.state._blocks",
    "RemoteToolCallBlock": "ctxmgr.state._blocks",
    "Role": "ctxmgr.state.message",
    "StopRequestStatus": "ctxmgr.state._agent",
    "SummaryContextManager": "ctxmgr.state.summary_context_manager",
    "SummaryReport": "ctxmgr.state._report",
    "collect_summary_reports": "ctxmgr.state._report",
    "TextBlock": "ctxmgr.state._blocks",
    "TokenUsages": "ctxmgr.state.message",
    "ToolCallBlock": "ctxmgr.state._blocks",
    "ToolResult": "ctxmgr.state.tool_result",
    "ToolResultBlock": "ctxmgr.state._blocks",
    "UNITS_PER_TOKEN": "ctxmgr.state._tokens",
    "VideoBlock": "ctxmgr.state._blocks",
    "add_messages": "ctxmgr.state.reducers",
    "append_items": "ctxmgr.state.reducers",
    "estimate_tokens": "ctxmgr.state._tokens",
    "find_safe_cut": "ctxmgr.state._tools",
    "message_units": "ctxmgr.state._tokens",
    "remove_completed_tool_sequences": "ctxmgr.state._tools",
    "remove_tool_messages": "ctxmgr.state.reducers",
    "replace_messages": "ctxmgr.state.reducers",
    "replace_value": "ctxmgr.state.reducers",
    "script_aware_reference_tokens": "ctxmgr.state._tokens",
    "text_units": "ctxmgr.state._tokens",
}

_STREAMING = "streaming has no meaning offline: ctxmgr runs no graph whose output could be streamed"
_ABSENT = dict.fromkeys(("StreamChunk", "StreamEvent", "StreamEmitter", "stream_chunks", "stream_emitter"), _STREAMING)
"""The reference's names ctxmgr does not have, and why (docs/tenxgraph.md lists them too)."""


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
