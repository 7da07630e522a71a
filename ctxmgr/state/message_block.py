"""The reference's ``message_block`` module: the content blocks, by the names it exports.

The blocks live in :mod:`ctxmgr.state._blocks`; this module names them where code
written for the reference imports them from.
"""

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

__all__ = [
    "AnnotationBlock",
    "AnnotationRef",
    "AudioBlock",
    "ContentBlock",
    "DataBlock",
    "DocumentBlock",
    "ErrorBlock",
    "ImageBlock",
    "MediaRef",
    "ReasoningBlock",
    "RemoteToolCallBlock",
    "TextBlock",
    "ToolCallBlock",
    "ToolResultBlock",
    "VideoBlock",
]
