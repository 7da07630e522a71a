"""Shared by the Anthropic, Gemini and LangChain format tests.

A fixed summarizer, a view of a conversation that every format must keep (roles, texts,
tool calls, tool results and which call each result answers), and a hypothesis strategy
for random native conversations with parallel tool calls.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import orjson
from hypothesis import strategies as st

from ctxmgr import formats
from ctxmgr._validate import check_messages
from ctxmgr.formats._base import Conversation
from ctxmgr.state import (
    AgentState,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolResultBlock,
)

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


class FixedSummarizer:
    """Returns the same summary every time and remembers what it was asked."""

    name = "fixed"

    def __init__(self, summary: str = "The user asked about a reservation.") -> None:
        self.summary = summary
        self.requests: list[str] = []

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        self.requests.append(text)
        return self.summary


def sample_bytes(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


def sample_value(name: str) -> Any:
    return orjson.loads(sample_bytes(name))


def read(fmt: str, value: Any, *, layout: str = "document") -> Conversation:
    """Read a deep copy of ``value`` (so the test still holds the untouched input)."""
    return formats.adapter(fmt).read(copy.deepcopy(value), source="test.json", layout=layout)  # type: ignore[arg-type]


def write(conversation: Conversation, fmt: str | None = None) -> Any:
    return formats.adapter(fmt or conversation.format).write(conversation)


def reread(conversation: Conversation) -> Conversation:
    """Write ``conversation`` to bytes and read them back (detecting the format)."""
    data = formats.dump(conversation)
    return formats.load(data, source="out.json")


def _output(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output)


def view(messages: list[Message]) -> list[tuple[Any, ...]]:
    """What a conversion must keep, one tuple per turn.

    Consecutive tool messages are merged (Anthropic and Gemini put all results of a turn
    in one message, OpenAI-style formats one message per result); empty texts are left
    out; call arguments are compared parsed.
    """
    out: list[tuple[Any, ...]] = []
    for message in messages:
        texts = tuple(b.text for b in message.content if isinstance(b, TextBlock) and b.text)
        calls = tuple(
            (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
            for c in message.tools_calls or ()
        )
        results = tuple(
            (b.call_id, _output(b.output), b.is_error) for b in message.content if isinstance(b, ToolResultBlock)
        )
        if message.role == "tool" and out and out[-1][0] == "tool":
            _, old_texts, old_calls, old_results = out.pop()
            out.append(("tool", old_texts + texts, old_calls, old_results + results))
            continue
        out.append((message.role, texts, calls, results))
    return out


def pairing(messages: list[Message]) -> list[tuple[int, int]]:
    """(calling message index, result message index) for every result, by view position."""
    turns = view(messages)
    called_at = {call[0]: i for i, turn in enumerate(turns) for call in turn[2]}
    return [(called_at.get(r[0], -1), i) for i, turn in enumerate(turns) for r in turn[3]]


def structural_problems(messages: list[Message], target: str | None = None) -> list[str]:
    """Rule violations that compaction must never introduce (orphans, a tool result first)."""
    bad = {"orphan-result", "tool-first", "duplicate-call-id", "duplicate-result", "results-not-adjacent"}
    return [str(p) for p in check_messages(messages, target=target) if p.code in bad]


_ID = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=1, max_size=10)
_NAME = st.sampled_from(["get_user_details", "get_reservation_details", "search_flights", "cancel_reservation"])
TEXT = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1, max_size=30
).filter(lambda t: not t.startswith("[ctxmgr"))
_SCALAR = st.one_of(st.integers(-1000, 1000), st.booleans(), TEXT, st.none())
ARGS = st.dictionaries(st.text(alphabet="abcdefghijklmnop_", min_size=1, max_size=8), _SCALAR, max_size=3)


@st.composite
def native_conversations(draw: st.DrawFn, *, split_results: bool | None = None) -> AgentState:
    """A random native conversation: an optional system prompt, then user turns, plain
    answers and tool calls (1 to 3 at once) answered by tool messages."""
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(Message.text_message(draw(TEXT), role="system"))
    counter = 0
    for _ in range(draw(st.integers(1, 5))):
        messages.append(Message.text_message(draw(TEXT), role="user"))
        for _ in range(draw(st.integers(0, 2))):
            count = draw(st.integers(1, 3))
            calls: list[dict[str, Any]] = []
            for _ in range(count):
                counter += 1
                # A fixed-width suffix keeps ids unique ("X1" + "3" and "X" + "13" would both be "X13").
                call_id = f"{draw(_ID)}x{counter:04d}"
                calls.append({
                    "id": call_id, "type": "function",
                    "function": {"name": draw(_NAME), "arguments": json.dumps(draw(ARGS))},
                })
            text = draw(st.one_of(st.none(), TEXT))
            messages.append(Message(
                role="assistant", content=[TextBlock(text=text)] if text else [], tools_calls=calls,
            ))
            results = [
                ToolResultBlock(call_id=str(c["id"]), output=draw(TEXT), is_error=draw(st.booleans())) for c in calls
            ]
            split = draw(st.booleans()) if split_results is None else split_results
            if split:
                messages.extend(Message.tool_message([r]) for r in results)
            else:
                messages.append(Message.tool_message(list(results)))
        messages.append(Message.text_message(draw(TEXT), role="assistant"))
    return AgentState(context=messages)


def native_conversation(state: AgentState, layout: str = "document") -> Conversation:
    return Conversation(state=state, format="native", container={"context": []}, layout=layout)  # type: ignore[arg-type]


def convert(conversation: Conversation, to: str) -> tuple[Any, Conversation]:
    """(the value written in format ``to``, that value read back by the ``to`` adapter)."""
    value = formats.adapter(to).write(conversation)
    back = orjson.loads(orjson.dumps(value))
    return back, formats.adapter(to).read(back, source="converted.json", layout=conversation.layout)


def reasoning_blocks(message: Message) -> list[ReasoningBlock]:
    return [b for b in message.content if isinstance(b, ReasoningBlock)]


# Every manager as a command line, for the property tests that run each one on a format.
MANAGER_COMMANDS = st.one_of(
    st.builds(lambda n: ["trim", "-n", str(n)], st.integers(1, 4)),
    st.builds(lambda n: ["trim", "--max-tokens", str(n)], st.integers(1, 60)),
    st.builds(lambda k: ["trim", "--clear-tool-results", "--keep-tool-results", str(k)], st.integers(0, 2)),
    st.builds(lambda n: ["trim", "--max-tool-output", str(n)], st.integers(1, 10)),
    st.just(["trim", "--remove-tool-msgs"]),
    st.builds(
        lambda n, k: ["summarize", "--model", "offline", "--max-messages", str(n), "--keep-recent", str(k)],
        st.integers(2, 6),
        st.integers(1, 2),
    ),
)
