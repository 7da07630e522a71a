"""The table of docs/formats.md of what each pair of formats carries says what conversions do: for
the rows below, a small file holding just that thing is converted to every format, and a
cell reads as dropped (an en dash) exactly when the conversion names something dropped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from ctxmgr import formats
from ctxmgr.formats._base import Conversation
from ctxmgr.state import AgentState, AudioBlock, MediaRef, Message, TextBlock, VideoBlock

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
DROPPED = "\N{EN DASH}"  # how the table marks what a target has no place for
TARGETS = ["native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"]
CHAT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
CONTENTS = [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "hello"}]}]
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}


def _table() -> dict[str, list[str]]:
    start = PAGE.index("**What each pair carries.**")
    lines = PAGE[start:].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("| |"))  # the header row
    rows: dict[str, list[str]] = {}
    for line in lines[first + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def _native(*blocks: Any) -> Conversation:
    state = AgentState(context=[Message(role="user", content=[TextBlock(text="look"), *blocks])])
    return Conversation(state=state, format="native", container={"context": []})


def _file(fmt: str, value: Any) -> Conversation:
    return formats.load(orjson.dumps(value), source="probe.json", fmt=fmt)


# table row -> (a file holding that thing, the format it is in)
PROBES: dict[str, tuple[Any, str]] = {
    "temperature, `top_p`": ({"messages": CHAT, "temperature": 0.2, "top_p": 0.9}, "openai-chat"),
    "`top_k`": ({"contents": CONTENTS, "generationConfig": {"topK": 40}}, "gemini"),
    "token cap": ({"messages": CHAT, "max_completion_tokens": 100}, "openai-chat"),
    "stop sequences": ({"messages": CHAT, "stop": ["END"]}, "openai-chat"),
    "reasoning effort": ({"messages": CHAT, "reasoning_effort": "low"}, "openai-chat"),
    "parallel tool calls off": ({"messages": CHAT, "tools": [TOOL], "parallel_tool_calls": False}, "openai-chat"),
    "a choice among some tools": (
        {
            "messages": CHAT,
            "tools": [TOOL],
            "tool_choice": {
                "type": "allowed_tools",
                "allowed_tools": {"mode": "required", "tools": [{"type": "function", "function": {"name": "f"}}]},
            },
        },
        "openai-chat",
    ),
    "function tool definitions": ({"messages": CHAT, "tools": [TOOL]}, "openai-chat"),
    "dataset columns": ({"messages": CHAT, "task_id": 3}, "openai-chat"),
}
MEDIA: dict[str, Any] = {
    "audio": AudioBlock(media=MediaRef(kind="data", data_base64="UklGRg==", mime_type="audio/wav")),
    "video": VideoBlock(media=MediaRef(kind="url", url="https://example.com/v.mp4", mime_type="video/mp4")),
}


@pytest.mark.parametrize("row", [*PROBES, *MEDIA])
def test_the_table_says_what_a_conversion_drops(row: str) -> None:
    cells = dict(zip(TARGETS, _table()[row], strict=True))
    for target in TARGETS:
        if row in PROBES:
            value, fmt = PROBES[row]
            if fmt == target:
                continue
            conversation = _file(fmt, value)
        else:
            conversation = _native(MEDIA[row])
        formats.dump(conversation, to=target)
        dropped = bool(conversation.dropped)
        assert cells[target].startswith(DROPPED) == dropped, (row, target, cells[target], conversation.dropped)


def test_every_row_and_column_is_there() -> None:
    header = re.search(r"\| \| (native .*) \|\n", PAGE)
    assert header is not None
    assert [cell.strip().strip("`") for cell in header.group(1).split("|")] == TARGETS
    assert all(len(cells) == len(TARGETS) for cells in _table().values())
