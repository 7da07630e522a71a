"""Content blocks: the parts a :class:`~ctxmgr.state.Message` is made of.

A union discriminated on ``"type"``, field for field as the 10xGraph reference documents
it. Unknown keys inside a block are kept (``extra="allow"``) so a checkpoint written by a
newer reference loads and is written back unchanged; an unknown block *type* is an error.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BLOCK_TYPES",
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


class _Block(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)


class MediaRef(_Block):
    """Where a piece of media lives: a URL, a provider file id, or inline base64 data."""

    kind: Literal["url", "file_id", "data"] = "url"
    url: str | None = None
    file_id: str | None = None
    data_base64: str | None = None
    mime_type: str | None = None
    size_bytes: int | None = None
    sha256: str | None = None
    filename: str | None = None
    width: int | None = None
    height: int | None = None
    duration_ms: int | None = None
    page: int | None = None


class AnnotationRef(_Block):
    """Where an annotation points (a citation's source).

    For building annotations; blocks read keep their annotations as read (plain
    values), because each provider shapes citations its own way.
    """

    url: str | None = None
    file_id: str | None = None
    page: int | None = None
    index: int | None = None
    title: str | None = None


class TextBlock(_Block):
    type: Literal["text"] = "text"
    text: str
    annotations: list[Any] = Field(default_factory=list)


class ImageBlock(_Block):
    type: Literal["image"] = "image"
    media: MediaRef | None = None
    alt_text: str | None = None
    bbox: list[float] | None = None


class AudioBlock(_Block):
    type: Literal["audio"] = "audio"
    media: MediaRef | None = None
    transcript: str | None = None
    sample_rate: int | None = None
    channels: int | None = None


class VideoBlock(_Block):
    type: Literal["video"] = "video"
    media: MediaRef | None = None
    thumbnail: MediaRef | None = None


class DocumentBlock(_Block):
    type: Literal["document"] = "document"
    media: MediaRef | None = None
    text: str | None = None
    pages: list[int] | int | None = None
    excerpt: str | None = None


class DataBlock(_Block):
    type: Literal["data"] = "data"
    mime_type: str
    data_base64: str | None = None
    media: MediaRef | None = None


class ToolCallBlock(_Block):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    tool_type: str | None = None


class RemoteToolCallBlock(_Block):
    type: Literal["remote_tool_call"] = "remote_tool_call"
    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    tool_type: str | None = "remote"


class ToolResultBlock(_Block):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    output: Any = None
    is_error: bool = False
    status: Literal["completed", "failed"] | None = None


class ReasoningBlock(_Block):
    type: Literal["reasoning"] = "reasoning"
    summary: str | None = None
    details: Any = None


class AnnotationBlock(_Block):
    type: Literal["annotation"] = "annotation"
    kind: Literal["citation", "note"] = "citation"
    refs: list[Any] = Field(default_factory=list)
    spans: Any = None


class ErrorBlock(_Block):
    type: Literal["error"] = "error"
    message: str
    code: str | int | None = None
    data: Any = None


ContentBlock = Annotated[
    TextBlock
    | ImageBlock
    | AudioBlock
    | VideoBlock
    | DocumentBlock
    | DataBlock
    | ToolCallBlock
    | RemoteToolCallBlock
    | ToolResultBlock
    | ReasoningBlock
    | AnnotationBlock
    | ErrorBlock,
    Field(discriminator="type"),
]
"""Any one content block; pydantic picks the class from its ``"type"`` key."""

BLOCK_TYPES: frozenset[str] = frozenset(
    {
        "text",
        "image",
        "audio",
        "video",
        "document",
        "data",
        "tool_call",
        "remote_tool_call",
        "tool_result",
        "reasoning",
        "annotation",
        "error",
    }
)
"""Every value of a content block's ``"type"`` key."""
