"""Converting between formats keeps what a conversation says: A -> B -> A keeps roles,
texts, tool calls and results, and which result answers which call."""

from __future__ import annotations

import json
from itertools import permutations
from typing import Any

import pytest
from _fast_paths import explored
from hypothesis import given, strategies as st

from ctxmgr import formats
from ctxmgr.state import AgentState, Message, TextBlock, ToolResultBlock
from ctxmgr.state._tools import call_ids, result_ids

FORMATS = ["native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"]
words = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=16).map(str.strip).filter(bool)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """Well-formed conversations: an optional system prompt, then turns of a user
    question, tool calls (one or two in parallel) with their results, and an answer."""
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(Message.text_message(draw(words), role="system"))
    serial = 0
    for _ in range(draw(st.integers(1, 3))):
        messages.append(Message.text_message(draw(words)))
        for _ in range(draw(st.integers(0, 2))):  # rounds of tool use
            calls = []
            for _ in range(draw(st.integers(1, 2))):
                serial += 1
                arguments = json.dumps({"q": draw(words)})
                calls.append(
                    {
                        "id": f"call_{serial}",
                        "type": "function",
                        "function": {"name": draw(st.sampled_from(["lookup", "book"])), "arguments": arguments},
                    }
                )
            messages.append(Message(role="assistant", content=[], tools_calls=calls))
            for call in calls:
                messages.append(Message.tool_message([ToolResultBlock(call_id=call["id"], output=draw(words))]))
        messages.append(Message(role="assistant", content=[TextBlock(text=draw(words))]))
    return messages


def essence(messages: list[Message]) -> list[tuple[Any, ...]]:
    """What the conversation says, independent of how a format groups it or names ids."""
    events: list[tuple[Any, ...]] = []
    call_position: dict[str, int] = {}
    for message in messages:
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        if text and message.role != "tool":
            events.append((message.role, text))
        for call in message.tools_calls or ():
            function = call["function"]
            call_position[call["id"]] = len(call_position)
            events.append(("call", function["name"], json.loads(function["arguments"] or "{}")))
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                output = block.output if isinstance(block.output, str) else json.dumps(block.output)
                events.append(("result", output, call_position.get(block.call_id)))
    return events


def pairing_is_complete(messages: list[Message]) -> bool:
    made = [i for m in messages for i in call_ids(m)]
    answered = [i for m in messages for i in result_ids(m)]
    return sorted(made) == sorted(answered) and len(set(made)) == len(made)


def convert(conversation: formats.Conversation, target: str) -> formats.Conversation:
    return formats.load(formats.dump(conversation, to=target), source=f"<{target}>", fmt=target)


@pytest.mark.parametrize(("first", "second"), list(permutations(FORMATS, 2)))
@explored(max_examples=12, deadline=None)
@given(messages=conversations())
def test_a_to_b_to_a_keeps_what_the_conversation_says(first: str, second: str, messages: list[Message]) -> None:
    origin = formats.Conversation(state=AgentState(context=messages), format="native", container=[])
    in_first = convert(origin, first)
    back = convert(convert(in_first, second), first)
    assert essence(back.state.context) == essence(in_first.state.context) == essence(messages)
    assert pairing_is_complete(back.state.context)
    assert [w for w in back.warnings if "tool" in w] == []


SAMPLES = __import__("pathlib").Path(__file__).resolve().parents[2] / "samples"


def test_fields_a_conversion_cannot_carry_are_named() -> None:
    anthropic = formats.load((SAMPLES / "anthropic.json").read_bytes(), source="a.json")
    formats.dump(anthropic, to="openai-chat")
    assert anthropic.dropped["content-part field 'cache_control'"] == 2
    chat = formats.load(
        b'[{"role": "user", "name": "alice", "content": "hi"}, {"role": "assistant", "content": "yo"}]', source="c.json"
    )
    formats.dump(chat, to="gemini")
    assert chat.dropped == {"message field 'name'": 1}
    same_format = formats.load((SAMPLES / "anthropic.json").read_bytes(), source="a.json")
    formats.dump(same_format)
    assert same_format.dropped == {}
