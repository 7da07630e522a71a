"""Conversation formats: detection, reading and writing, in one place.

Each format is a small adapter (see :class:`~ctxmgr.formats.base.FormatAdapter`);
:func:`load` turns bytes into a :class:`Conversation` and :func:`dump` turns it back into
bytes of the same shape (or of another format with ``to``).
"""

from __future__ import annotations

from typing import Any

from ctxmgr import io
from ctxmgr.errors import FormatDetectionError, UsageError
from ctxmgr.formats._uncarried import uncarried_fields
from ctxmgr.formats.anthropic import AnthropicFormat
from ctxmgr.formats.base import CERTAIN, NO, PLAUSIBLE, Conversation, FormatAdapter, Layout
from ctxmgr.formats.gemini import GeminiFormat
from ctxmgr.formats.langchain import LangChainFormat
from ctxmgr.formats.native import NativeFormat
from ctxmgr.formats.openai_chat import OpenAIChatFormat
from ctxmgr.formats.openai_responses import OpenAIResponsesFormat

__all__ = ["FORMATS", "Conversation", "FormatAdapter", "adapter", "detect", "dump", "load", "load_value"]

FORMATS: dict[str, FormatAdapter] = {
    "native": NativeFormat(),
    "openai-chat": OpenAIChatFormat(),
    "openai-responses": OpenAIResponsesFormat(),
    "anthropic": AnthropicFormat(),
    "gemini": GeminiFormat(),
    "langchain": LangChainFormat(),
}
"""Every known format by its command-line name, in detection order."""


def adapter(name: str) -> FormatAdapter:
    """The adapter called ``name``; a :class:`UsageError` lists the known names."""
    try:
        return FORMATS[name]
    except KeyError:
        raise UsageError(f"unknown format {name!r}; choose from: {', '.join(FORMATS)}") from None


def detect(value: Any, *, source: str) -> FormatAdapter:
    """The one adapter that recognises ``value``; an input error names those tried."""
    scores = [(fmt.detect(value), fmt) for fmt in FORMATS.values()]
    best = max(score for score, _ in scores)
    matches = [fmt for score, fmt in scores if score == best]
    if best == PLAUSIBLE or (best == CERTAIN and len(matches) == 1):
        return matches[0]
    tried = ", ".join(FORMATS)
    if best == NO:
        raise FormatDetectionError(
            f"not a conversation in any known format (tried: {tried}); use --from to name one",
            source=source,
        )
    names = ", ".join(m.name for m in matches)
    raise FormatDetectionError(f"ambiguous format (could be: {names}); use --from to choose", source=source)


def load_value(value: Any, *, source: str, layout: Layout, fmt: str | None = None) -> Conversation:
    """A parsed JSON value (or JSONL records) as a :class:`Conversation`."""
    reader = adapter(fmt) if fmt else detect(value, source=source)
    conversation = reader.read(value, source=source, layout=layout)
    _settle_defaults(conversation)
    return conversation


def _settle_defaults(conversation: Conversation) -> None:
    """Give messages the file did not identify or date a stable id and time.

    The model's defaults are a random uuid and "now"; converting the same file twice
    must give the same output, so such messages get ``<format>-<n>`` and timestamp 0.0
    (unknown) instead. Messages read from native files keep what they had.
    """
    for index, message in enumerate(conversation.state.context, start=1):
        fields = message.model_fields_set
        if "message_id" not in fields:
            message.message_id = f"{conversation.format}-{index:04d}"
        if "timestamp" not in fields:
            message.timestamp = 0.0


def load(data: bytes, *, source: str, fmt: str | None = None) -> Conversation:
    """Parse and read ``data``; raises :class:`~ctxmgr.errors.InputError` on bad input."""
    value, layout, pretty = io.parse(data, source)
    conversation = load_value(value, source=source, layout=layout, fmt=fmt)
    conversation.pretty = pretty
    return conversation


def dump(conversation: Conversation, *, to: str | None = None) -> bytes:
    """Bytes of ``conversation`` in its own format and layout (or in format ``to``)."""
    writer = adapter(to) if to else adapter(conversation.format)
    value = writer.write(conversation)
    if to is not None and to != conversation.format:
        lost = uncarried_fields(conversation.state.context, conversation.format, to)
        if lost is not None and lost not in conversation.warnings:
            conversation.warnings.append(lost)
    return io.dumps(value, conversation.layout, pretty=conversation.pretty)
