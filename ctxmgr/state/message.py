"""``Message`` and ``TokenUsages``, interchangeable with the reference's JSON.

Field names, order and defaults follow 10xGraph's ``tenxgraph.core.state.Message``
(``tools_calls`` is spelled as the reference spells it). Two deliberate additions:

* keys the model does not know are kept (``extra="allow"``), and
* each message read from a file remembers its *source record* (the exact dict it came
  from, in its own format). Writers emit that record for every message a manager kept,
  which is how ctxmgr stays lossless without modelling every field of every format.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ctxmgr import _nesting
from ctxmgr.state.blocks import ContentBlock, TextBlock, ToolResultBlock

__all__ = ["Message", "Role", "TokenUsages"]

Role = Literal["user", "assistant", "system", "tool"]


def _new_message_id() -> str:
    return str(uuid.uuid4())


class TokenUsages(BaseModel):
    """Token accounting of one model call, as the reference records it."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    completion_tokens: int
    prompt_tokens: int
    total_tokens: int
    reasoning_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    image_tokens: int | None = 0
    audio_tokens: int | None = 0


class Message(BaseModel):
    """One message of a conversation.

    ``content`` is a list of content blocks; a bare string is rejected (use
    :meth:`text_message`). ``tools_calls`` holds tool calls in the OpenAI chat shape
    ``{"id", "type": "function", "function": {"name", "arguments"}}``.
    """

    model_config = ConfigDict(extra="allow", defer_build=True)

    message_id: str | int = Field(default_factory=_new_message_id)
    role: Role
    content: list[ContentBlock]
    delta: bool = False
    tools_calls: list[dict[str, Any]] | None = None
    reasoning: str | None = None
    timestamp: float = Field(default_factory=time.time)
    metadata: dict[str, Any] = Field(default_factory=dict)
    usages: TokenUsages | None = None
    raw: dict[str, Any] | None = None
    parsed_content: dict[str, Any] | None = None

    # The record(s) this message was read from, in the format named by _source_format,
    # written back unchanged when the message is kept and the format is unchanged.
    # ``None`` for messages ctxmgr created (a summary) or a library user built.
    _source: tuple[Any, ...] | None = PrivateAttr(default=None)
    _source_format: str | None = PrivateAttr(default=None)

    @classmethod
    def text_message(
        cls,
        content: str,
        role: Role = "user",
        message_id: str | int | None = None,
    ) -> Message:
        """A message holding one text block."""
        return cls(
            message_id=message_id if message_id is not None else _new_message_id(),
            role=role,
            content=[TextBlock(text=content)],
        )

    @classmethod
    def tool_message(
        cls,
        content_blocks: list[Any],
        message_id: str | int | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Message:
        """A ``tool`` message carrying tool results (usually ``ToolResultBlock``)."""
        return cls(
            message_id=message_id if message_id is not None else _new_message_id(),
            role="tool",
            content=content_blocks,
            metadata=meta or {},
        )

    def text(self) -> str:
        """The text of text blocks and tool results, joined with no separator.

        A tool result's output is used as is when it is a string, else as ``json.dumps``;
        other blocks add nothing. The token estimate is built on this.
        """
        parts: list[str] = []
        for block in self.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolResultBlock):
                output = block.output
                parts.append(output if isinstance(output, str) else _nesting.dumps(output))
        return "".join(parts)

    @property
    def source(self) -> tuple[Any, ...] | None:
        """The record(s) this message was read from, or ``None`` if ctxmgr made it.

        Usually one record; several when a format spreads one logical message over
        several records (an OpenAI Responses assistant turn: reasoning, text and
        function_call items).
        """
        return self._source

    @property
    def source_format(self) -> str | None:
        """Name of the format :attr:`source` is in."""
        return self._source_format

    def with_source(self, records: tuple[Any, ...] | list[Any], fmt: str) -> Message:
        """Remember the ``records`` (in format ``fmt``) this message came from; returns self."""
        self._source = tuple(records)
        self._source_format = fmt
        return self

    def source_in(self, fmt: str) -> tuple[Any, ...] | None:
        """The source records if they are in format ``fmt`` (so can be written as is)."""
        return self._source if self._source_format == fmt else None
