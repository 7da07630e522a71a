"""The conversation model and context managers, mirroring ``tenxgraph.core.state``.

>>> from ctxmgr.state import AgentState, Message, MessageContextManager
>>> state = AgentState(context=[Message.text_message("hi")])
>>> MessageContextManager(max_messages=1).trim_context(state).context[0].text()
'hi'
"""

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
from ctxmgr.state.managers import (
    BaseContextManager,
    MessageContextManager,
    SummaryContextManager,
)
from ctxmgr.state.message import Message, Role, TokenUsages
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
