"""``Message`` and ``TokenUsages``, interchangeable with the reference's JSON.

Field names, order and defaults follow 10xGraph's ``tenxgraph.core.state.Message``
(``tools_calls`` is spelled as the reference spells it). Two deliberate additions:

* keys the model does not know are kept (``extra="allow"``), and
* each message read from a file remembers its *source record* (the exact dict it came
  from, in its own format). Writers emit that record for every message a manager kept,
  which is how ctxmgr stays lossless without modelling every field of every format.

One deliberate difference: an id passed to the constructors (:meth:`Message.text_message`,
:meth:`Message.tool_message`, ...) is kept as given, an ``int`` or an empty string too (the reference replaces
anything but a non-empty string with a new id unless its dependency-injection container
is set up for integer ids; ctxmgr has no such container).
"""

from __future__ import annotations

import base64
import mimetypes
import os
import pathlib
import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic_core import PydanticUndefined

from ctxmgr import _nesting
from ctxmgr.state._blocks import (
    AudioBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    MediaRef,
    TextBlock,
    ToolResultBlock,
    VideoBlock,
)

__all__ = [
    "AudioBlock",
    "ContentBlock",
    "DocumentBlock",
    "ImageBlock",
    "MediaRef",
    "Message",
    "Role",
    "TextBlock",
    "TokenUsages",
    "ToolResultBlock",
    "VideoBlock",
    "generate_id",
]

Role = Literal["user", "assistant", "system", "tool"]

_MEDIA_BLOCKS: dict[str, type[ImageBlock | AudioBlock | VideoBlock | DocumentBlock]] = {
    "image": ImageBlock,
    "audio": AudioBlock,
    "video": VideoBlock,
    "document": DocumentBlock,
}


def _new_message_id() -> str:
    """A random uuid4 string, as ``str(uuid.uuid4())`` gives.

    Every message read without an id gets one from the model's default (the readers then
    give it a stable one), so this runs once a message: formatting the random bytes
    directly costs less than half of building a ``uuid.UUID`` to print it. The version
    nibble is 4 and the variant bits are 10, as RFC 4122 says.
    """
    digits = os.urandom(16).hex()
    return (
        f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-{'89ab'[int(digits[16], 16) & 3]}{digits[17:20]}-{digits[20:]}"
    )


def _given_or_new(message_id: str | int | None) -> str | int:
    return message_id if message_id is not None else _new_message_id()


def generate_id(default_id: str | int | None) -> str | int:
    """``default_id`` when it is a non-empty string, else a new uuid4 string.

    What the reference's ``generate_id`` returns with its dependency-injection container
    left as it comes (string ids, no id generator registered).
    """
    if isinstance(default_id, str) and default_id:
        return default_id
    return _new_message_id()


def _output_text(output: Any) -> str:
    """A tool output as text: a string as is, anything else as JSON (``str`` of what JSON cannot hold)."""
    return output if isinstance(output, str) else _nesting.dumps(output, default=str)


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
    timestamp: float | None = Field(default_factory=time.time)
    metadata: dict[str, Any] = Field(default_factory=dict)
    usages: TokenUsages | None = None
    raw: dict[str, Any] | None = None
    parsed_content: dict[str, Any] | None = None

    # The record(s) this message was read from, in the format named by _source_format,
    # written back unchanged when the message is kept and the format is unchanged.
    # ``None`` for messages ctxmgr created (a summary) or a library user built.
    _source: tuple[Any, ...] | None = PrivateAttr(default=None)
    _source_format: str | None = PrivateAttr(default=None)
    # For a copy a compaction manager edited (a tool result cleared or cut, a call's
    # arguments cleared): the records the original was read from, so a writer can carry
    # their other keys (ids, names, flags it does not model) into the edited record.
    _edited_source: tuple[Any, ...] | None = PrivateAttr(default=None)
    _edited_format: str | None = PrivateAttr(default=None)

    @classmethod
    def text_message(
        cls,
        content: str,
        role: Role = "user",
        message_id: str | int | None = None,
    ) -> Message:
        """A message holding one text block."""
        return cls(
            message_id=_given_or_new(message_id),
            role=role,
            content=[TextBlock(text=content)],
        )

    @classmethod
    def tool_message(
        cls,
        content: Sequence[Any],
        message_id: str | int | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Message:
        """A ``tool`` message carrying tool results (usually ``ToolResultBlock``)."""
        return cls(
            message_id=_given_or_new(message_id),
            role="tool",
            content=list(content),
            metadata=meta or {},
        )

    def text(self) -> str:
        """The text of text blocks and tool results, joined with no separator.

        A tool result's output is used as is when it is a string, else as ``json.dumps``
        (``str`` of what JSON cannot hold); other blocks add nothing. A message built with
        ``model_construct`` is read too: content given as a string is its text, blocks
        given as plain dicts count as the blocks they describe, and other content is
        its ``str``. The token estimate of the reports is built on this.
        """
        content: Any = self.content
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        if not isinstance(content, list):
            return str(content)
        return "".join(text for text in map(self._block_text, content) if text is not None)

    @staticmethod
    def _block_text(block: Any) -> str | None:
        """What :meth:`text` takes from one block (a model or a plain dict), or ``None``."""
        if isinstance(block, TextBlock):
            return block.text or ""
        if isinstance(block, ToolResultBlock):
            return _output_text(block.output)
        if isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                return str(block.get("text") or "")
            if kind == "tool_result":
                return _output_text(block.get("output"))
        return None

    def attach_media(self, media: MediaRef, as_type: Literal["image", "audio", "video", "document"]) -> None:
        """Append an image, audio, video or document block holding ``media``.

        Raises:
            ValueError: ``as_type`` is none of the four.
        """
        block_class = _MEDIA_BLOCKS.get(as_type)
        if block_class is None:
            raise ValueError(f"Unsupported media type: {as_type}")
        block = block_class(media=media)
        content: Any = self.content
        if isinstance(content, str):  # only a model_construct message holds a string
            self.content = [TextBlock(text=content), block]
        elif isinstance(content, list):
            content.append(block)
        else:
            self.content = [block]

    @classmethod
    def image_message(
        cls,
        *,
        image_url: str | None = None,
        image_base64: str | None = None,
        mime_type: str = "image/png",
        text: str | None = None,
        role: Role = "user",
        message_id: str | int | None = None,
    ) -> Message:
        """A message holding an optional text and one image, by URL or as base64 data.

        Raises:
            ValueError: neither ``image_url`` nor ``image_base64`` is given.
        """
        if not image_url and not image_base64:
            raise ValueError("Provide either image_url or image_base64")
        if image_url:
            media = MediaRef(kind="url", url=image_url, mime_type=mime_type)
        else:
            media = MediaRef(kind="data", data_base64=image_base64, mime_type=mime_type)
        blocks: list[ContentBlock] = [TextBlock(text=text)] if text else []
        blocks.append(ImageBlock(media=media))
        return cls(message_id=_given_or_new(message_id), role=role, content=blocks)

    @classmethod
    def multimodal_message(
        cls,
        content_blocks: Sequence[ContentBlock],
        role: Role = "user",
        message_id: str | int | None = None,
    ) -> Message:
        """A message made of ``content_blocks``."""
        return cls(message_id=_given_or_new(message_id), role=role, content=list(content_blocks))

    @classmethod
    def from_file(
        cls,
        file_path: str,
        mime_type: str | None = None,
        text: str | None = None,
        role: Role = "user",
        message_id: str | int | None = None,
    ) -> Message:
        """A message holding an optional text and the file at ``file_path``, inline as base64.

        The block is an image, audio or video block by the MIME type (guessed from the
        file name when not given), else a document block.

        Raises:
            FileNotFoundError: there is no file at ``file_path``.
        """
        path = pathlib.Path(file_path)
        if not path.exists():
            raise FileNotFoundError(f"File not found: {file_path}")
        if mime_type is None:
            mime_type = mimetypes.guess_type(str(path))[0] or "application/octet-stream"
        data = path.read_bytes()
        media = MediaRef(
            kind="data",
            data_base64=base64.b64encode(data).decode(),
            mime_type=mime_type,
            filename=path.name,
            size_bytes=len(data),
        )
        major = mime_type.split("/", 1)[0]
        block_class = _MEDIA_BLOCKS.get(major if major in ("image", "audio", "video") else "document", DocumentBlock)
        blocks: list[ContentBlock] = [TextBlock(text=text)] if text else []
        blocks.append(block_class(media=media))
        return cls(message_id=_given_or_new(message_id), role=role, content=blocks)

    @property
    def source(self) -> tuple[Any, ...] | None:
        """The record(s) this message was read from, or ``None`` if ctxmgr made it.

        Usually one record; several when a format spreads one logical message over
        several records (an OpenAI Responses assistant turn: reasoning, text and
        function_call items).
        """
        source: tuple[Any, ...] | None = _private(self, "_source")
        return source

    @property
    def source_format(self) -> str | None:
        """Name of the format :attr:`source` is in."""
        fmt: str | None = _private(self, "_source_format")
        return fmt

    def with_source(self, records: tuple[Any, ...] | list[Any], fmt: str) -> Message:
        """Remember the ``records`` (in format ``fmt``) this message came from; returns self."""
        private = self.__pydantic_private__
        if private is None:  # pragma: no cover - every Message is given its private values
            self._source = tuple(records)
            self._source_format = fmt
        else:
            # What pydantic's __setattr__ does for a private attribute, without its
            # dispatch (every message read from a file passes here).
            private["_source"] = tuple(records)
            private["_source_format"] = fmt
        return self

    def source_in(self, fmt: str) -> tuple[Any, ...] | None:
        """The source records if they are in format ``fmt`` (so can be written as is)."""
        return _private(self, "_source") if _private(self, "_source_format") == fmt else None

    def edited_source_in(self, fmt: str) -> tuple[Any, ...] | None:
        """The records (in format ``fmt``) of the message this one is an edited copy of."""
        return _private(self, "_edited_source") if _private(self, "_edited_format") == fmt else None

    @property
    def edited_source_format(self) -> str | None:
        """The format of :meth:`edited_source_in`'s records (``None`` when not an edit)."""
        fmt: str | None = _private(self, "_edited_format")
        return fmt


def _private(message: Message, name: str) -> Any:
    """``getattr(message, name)`` for one of :class:`Message`'s private attributes.

    Pydantic reads a private attribute through its ``__getattr__``, after the ordinary
    look-up has failed and after asking the attribute's declaration for a ``__get__`` it
    lacks (about 1.5 µs; the writers ask each kept message for its source). A
    ``Message`` holds the value in ``__pydantic_private__``, where this reads it; a
    subclass, which may declare the name anew, and a value that is not there are left
    to pydantic's look-up (and its error).
    """
    private = message.__pydantic_private__
    if private is not None and type(message) is Message:
        try:
            return private[name]
        except KeyError:
            pass
    return getattr(message, name)


def _private_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """The values pydantic's ``init_private_attributes`` gives a new ``model``'s private
    attributes: their plain defaults (none of ``Message``'s has a factory)."""
    defaults: dict[str, Any] = {}
    for name, attribute in model.__private_attributes__.items():
        assert attribute.default_factory is None, name  # a factory would need a call a message
        if attribute.default is not PydanticUndefined:
            defaults[name] = attribute.default
    return defaults


_MESSAGE_PRIVATE = _private_defaults(Message)


def _init_message_private(self: Message, context: Any, /) -> None:
    """``init_private_attributes`` for :class:`Message`: what pydantic sets, a copy of one
    dict of defaults. Pydantic's own walks every private attribute and asks each for its
    default (about 10 µs a message, a sixth of reading a message from a file); a subclass
    gets pydantic's again, run before this one (which then leaves its values alone)."""
    if getattr(self, "__pydantic_private__", None) is None:
        object.__setattr__(self, "__pydantic_private__", _MESSAGE_PRIVATE.copy())


Message.model_post_init = _init_message_private  # type: ignore[method-assign,assignment]
