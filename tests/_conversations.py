"""Random conversations that hold every kind of content block, for conversion tests.

:func:`random_state` builds, from a seeded ``random.Random``, an ``AgentState`` with a
system prompt, user turns carrying media, data, annotations and errors, assistant turns
with reasoning (a block and the message's text), cited text and tool calls (listed in
``tools_calls`` and as blocks, local and remote), tool results (text, objects, errors)
and sometimes a summary. Some of it no provider format has a place for: that is the point.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

from ctxmgr.state import (
    AgentState,
    AnnotationBlock,
    AudioBlock,
    DataBlock,
    DocumentBlock,
    ErrorBlock,
    ImageBlock,
    MediaRef,
    Message,
    ReasoningBlock,
    RemoteToolCallBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    VideoBlock,
)

__all__ = ["BLOCK_KINDS", "random_state"]

BLOCK_KINDS = frozenset(
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

_WORDS = ("refund", "flight", "HAT268", "Tokyo", "baggage", "seat 12A", "€120", "2024-05-15", "yes", "cancel")
_PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(24))).decode()
_PDF = base64.b64encode(b"%PDF-1.4 a tiny document").decode()
_WAV = base64.b64encode(b"RIFF....WAVEfmt ").decode()


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 5)))


def _user_blocks(rng: random.Random, *, every_kind: bool = False) -> list[Any]:
    blocks: list[Any] = [TextBlock(text=_text(rng))]
    extras = [
        lambda: ImageBlock(media=MediaRef(kind="url", url=f"https://example.com/{rng.randint(1, 9)}.png")),
        lambda: ImageBlock(media=MediaRef(kind="data", data_base64=_PNG, mime_type="image/png")),
        lambda: AudioBlock(media=MediaRef(kind="data", data_base64=_WAV, mime_type="audio/wav")),
        lambda: VideoBlock(media=MediaRef(kind="url", url="https://example.com/clip.mp4", mime_type="video/mp4")),
        lambda: DocumentBlock(media=MediaRef(kind="data", data_base64=_PDF, mime_type="application/pdf")),
        lambda: DocumentBlock(text=_text(rng)),
        lambda: DataBlock(mime_type="application/json", data_base64=base64.b64encode(b'{"a": 1}').decode()),
        lambda: AnnotationBlock(kind="note", refs=[{"url": "https://example.com/ref"}]),
        lambda: ErrorBlock(message="upload failed", code="E42"),
    ]
    for make in extras if every_kind else rng.sample(extras, rng.randint(0, 3)):
        blocks.append(make())
    return blocks


def _citation(rng: random.Random) -> dict[str, Any]:
    return {"url": f"https://example.com/page{rng.randint(1, 5)}", "title": _text(rng)}


def _assistant(rng: random.Random, serial: list[int], *, every_kind: bool = False) -> tuple[Message, list[str]]:
    content: list[Any] = []
    if every_kind or rng.random() < 0.5:
        content.append(ReasoningBlock(summary=_text(rng)))
    cited = every_kind or rng.random() < 0.3
    content.append(TextBlock(text=_text(rng), annotations=[_citation(rng)] if cited else []))
    calls: list[dict[str, Any]] = []
    ids: list[str] = []
    kinds = [0.0, 0.7, 0.9] if every_kind else [rng.random() for _ in range(rng.randint(0, 2))]
    for kind in kinds:
        serial[0] += 1
        call_id = f"call_{serial[0]}"
        args = {"query": _text(rng)}
        ids.append(call_id)
        if kind < 0.6:
            calls.append(
                {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": json.dumps(args)}}
            )
        elif kind < 0.8:
            content.append(ToolCallBlock(id=call_id, name="book", args=args))
        else:
            content.append(RemoteToolCallBlock(id=call_id, name="search", args=args))
    message = Message(role="assistant", content=content, tools_calls=calls or None)
    if rng.random() < 0.3:
        message.reasoning = _text(rng)
    return message, ids


def _result(rng: random.Random, call_id: str) -> ToolResultBlock:
    output: Any = _text(rng) if rng.random() < 0.6 else {"status": _text(rng), "count": rng.randint(0, 9)}
    return ToolResultBlock(call_id=call_id, output=output, is_error=rng.random() < 0.2)


def random_state(rng: random.Random) -> AgentState:
    """A conversation holding every block kind (its first turn), the rest drawn from ``rng``."""
    messages: list[Message] = []
    if rng.random() < 0.7:
        messages.append(Message.text_message(_text(rng), role="system"))
    serial = [0]
    for turn in range(rng.randint(1, 3)):
        # The first turn holds one of every kind; the others are drawn.
        messages.append(Message(role="user", content=_user_blocks(rng, every_kind=turn == 0)))
        assistant, ids = _assistant(rng, serial, every_kind=turn == 0)
        messages.append(assistant)
        if ids:
            results = [_result(rng, call_id) for call_id in ids]
            if rng.random() < 0.5:
                messages.append(Message.tool_message(results))
            else:
                messages.extend(Message.tool_message([result]) for result in results)
            messages.append(Message(role="assistant", content=[TextBlock(text=_text(rng))]))
    for index, message in enumerate(messages):
        message.message_id = f"m{index}"
        message.timestamp = 1_700_000_000.0 + index
    summary = _text(rng) if rng.random() < 0.3 else None
    return AgentState(context=messages, context_summary=summary)
