"""The ``openai-chat`` adapter: detection, lossless round trips, compaction, conversion."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import explored
from hypothesis import HealthCheck, given, strategies as st
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from pydantic import ConfigDict, TypeAdapter
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr.cli import app
from ctxmgr.errors import CtxmgrError, InputError, UsageError
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE, SUMMARY_HEADER, Conversation
from ctxmgr.formats._interop import passthrough_value
from ctxmgr.formats._openai_chat import SUMMARY_NAME, OpenAIChatFormat, output_text
from ctxmgr.formats._records import JsonlRecords
from ctxmgr.state import (
    AgentState,
    AudioBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    MediaRef,
    Message,
    MessageContextManager,
    ReasoningBlock,
    SummaryContextManager,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxmgr.state._tools import call_ids, result_ids

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CHAT = OpenAIChatFormat()
# The SDK's request types, with unknown keys rejected (TypedDicts ignore them by default).
OFFICIAL: TypeAdapter[ChatCompletionMessageParam] = TypeAdapter(
    ChatCompletionMessageParam, config=ConfigDict(extra="forbid")
)


def read(value: Any, layout: str = "document") -> Conversation:
    return CHAT.read(value, source="test.json", layout=layout)  # type: ignore[arg-type]


def ordered(value: Any) -> str:
    """JSON text that keeps key order, so equality also checks the order of keys."""
    return json.dumps(value)


def assert_round_trip(value: Any) -> None:
    original = copy.deepcopy(value)
    out = CHAT.write(read(value))
    assert out == original
    assert ordered(out) == ordered(original)


def call(call_id: str, name: str = "lookup", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class FixedSummarizer:
    """A summarizer that answers with a fixed text and records what it was sent."""

    name = "fixed"

    def __init__(self, text: str = "They talked about an order.") -> None:
        self.text = text
        self.requests: list[str] = []

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        self.requests.append(text)
        return self.text


def summarize(conversation: Conversation, text: str, **options: Any) -> FixedSummarizer:
    summarizer = FixedSummarizer(text)
    manager: SummaryContextManager[AgentState] = SummaryContextManager(
        "fixed", summarizer=summarizer, on_error="raise", **options
    )
    conversation.state = asyncio.run(manager.atrim_context(conversation.state))
    return summarizer


def assert_paired(records: list[dict[str, Any]]) -> None:
    """Every tool message answers a call made earlier; every call but the last gets a result."""
    calls: list[str] = []
    answered: set[str] = set()
    for record in records:
        for c in record.get("tool_calls") or ():
            calls.append(c["id"])
        if record.get("role") == "tool":
            assert record["tool_call_id"] in calls, f"orphan result {record['tool_call_id']}"
            answered.add(record["tool_call_id"])
    last = next((r for r in reversed(records) if r.get("tool_calls")), None)
    pending = {c["id"] for c in (last or {}).get("tool_calls") or ()}
    assert set(calls) - answered <= pending


# -- a hand-written conversation with every feature ------------------------------------

PARALLEL = [
    {"role": "developer", "content": "You are a shop assistant.", "x_note": {"kept": True}},
    {"role": "user", "name": "ana", "content": [
        {"type": "text", "text": "Where are orders "},
        {"type": "text", "text": "A1 and B2?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/receipt.png", "detail": "low"}},
    ]},
    {"role": "assistant", "content": None, "tool_calls": [
        call("call_a", "get_order", '{"id": "A1"}'), call("call_b", "get_order", '{"id": "B2"}'),
    ], "refusal": None},
    {"role": "tool", "tool_call_id": "call_a", "content": '{"status": "shipped"}'},
    {"role": "tool", "tool_call_id": "call_b", "content": [{"type": "text", "text": "delayed"}]},
    {"role": "assistant", "content": "A1 shipped; B2 is delayed."},
    {"role": "user", "content": "Can you hack the warehouse?"},
    {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't help with that."}]},
    {"role": "user", "content": "Fine. Old style then.", "weight": 0},
    {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
    {"role": "function", "name": "get_weather", "content": "rain"},
    {"role": "assistant", "content": "It rains in Oslo.", "audio": {"id": "audio_1"}},
]


# -- detection ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c", "content": "x"}],
        [{"role": "developer", "content": "be brief"}],
        [{"role": "assistant", "content": None, "tool_calls": [call("c")]}],
        [{"role": "function", "name": "f", "content": "x"}],
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}],
        [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]}],
        [{"role": "assistant", "content": None, "refusal": "no"}],
        {"messages": [{"role": "user", "content": "hi"}],
         "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
        {"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_object"}},
        PARALLEL,
    ],
)
def test_openai_only_signs_are_certain(value: Any) -> None:
    assert CHAT.detect(value) == CERTAIN


@pytest.mark.parametrize(
    "value",
    [
        [{"role": "user", "content": "hi"}],
        [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        {"messages": [{"role": "user", "content": "hi"}], "model": "gpt-4o"},
        {"messages": []},
        {"role": "user", "content": "hi"},
    ],
)
def test_plain_role_content_records_are_plausible(value: Any) -> None:
    assert CHAT.detect(value) == PLAUSIBLE


@pytest.mark.parametrize(
    "value",
    [
        [],
        "hello",
        42,
        None,
        {"context": []},
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        [{"type": "message", "role": "user", "content": "hi"}],
        [{"type": "human", "data": {"content": "hi"}}],
        [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}],
        [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}],
        [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        [{"role": "model", "content": "hi"}],
        [{"role": "user", "content": 3}],
        [{"role": "user"}],
        {"messages": [{"role": "user", "content": "hi"}], "system": "Anthropic keeps it here"},
        {"messages": "not a list"},
        [{"role": "user", "content": "hi"}, "stray"],
    ],
)
def test_other_shapes_are_not_chat(value: Any) -> None:
    assert CHAT.detect(value) == NO


def test_detection_order_gives_plausible_ties_to_openai_chat() -> None:
    # The same list is plausible for Responses (easy input messages) and Anthropic too.
    assert formats.detect([{"role": "user", "content": "hi"}], source="x").name == "openai-chat"
    assert formats.detect({"messages": [{"role": "user", "content": "hi"}]}, source="x").name == "openai-chat"


def test_samples_are_detected_as_their_format() -> None:
    for name in ("openai-chat", "openai-responses"):
        conversation = formats.load((SAMPLES / f"{name}.json").read_bytes(), source=name)
        assert conversation.format == name


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
    | st.sampled_from(["user", "assistant", "tool", "system", "developer", "function", "text", "image_url",
                       "function", "custom", "refusal", SUMMARY_HEADER]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["role", "content", "messages", "tool_calls", "tool_call_id", "type", "text", "id",
                         "function", "name", "arguments", "function_call", "image_url", "url", "input_audio",
                         "file", "refusal", "custom", "input", "data"]) | st.text(max_size=3),
        children, max_size=5,
    ),
    max_leaves=25,
)


@explored(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(JSON)
def test_detect_never_raises_and_read_raises_only_input_errors(value: Any) -> None:
    assert CHAT.detect(value) in (NO, PLAUSIBLE, CERTAIN)
    try:
        conversation = CHAT.read(value, source="fuzz.json", layout="document")
    except InputError:
        return
    # What reads must write back unchanged.
    assert CHAT.write(conversation) == value


# -- reading into the model -------------------------------------------------------------


def test_mapping_onto_the_model() -> None:
    messages = read(PARALLEL).state.context
    assert [m.role for m in messages] == [
        "system", "user", "assistant", "tool", "tool", "assistant", "user", "assistant", "user", "assistant",
        "tool", "assistant",
    ]
    user = messages[1]
    assert user.text() == "Where are orders A1 and B2?"
    image = next(b for b in user.content if isinstance(b, ImageBlock))
    assert image.media is not None
    assert image.media.url == "https://example.com/receipt.png"
    assert call_ids(messages[2]) == ["call_a", "call_b"]
    assert messages[2].tools_calls == [call("call_a", "get_order", '{"id": "A1"}'),
                                       call("call_b", "get_order", '{"id": "B2"}')]
    assert result_ids(messages[3]) == ["call_a"]
    assert messages[3].text() == '{"status": "shipped"}'
    assert messages[4].text() == "delayed"
    assert messages[7].text() == "I can't help with that."  # refusal parts are visible text
    # Legacy function calls get a synthesized id that their result shares.
    assert call_ids(messages[9]) == ["call_fn_9"]
    assert result_ids(messages[10]) == ["call_fn_9"]
    assert all(m.source == (r,) for m, r in zip(messages, PARALLEL, strict=True))


def test_media_parts_map_to_media_blocks() -> None:
    parts = [
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/"}},
        {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
        {"type": "file", "file": {"file_id": "file-1", "filename": "a.pdf"}},
        {"type": "future_part", "stuff": 1},
    ]
    message = read([{"role": "user", "content": parts}]).state.context[0]
    image, audio, document, unknown = message.content
    assert passthrough_value(unknown, "openai-chat") == {"type": "future_part", "stuff": 1}
    assert isinstance(image, ImageBlock)
    assert image.media == MediaRef(kind="data", data_base64="/9j/",
                                                                     mime_type="image/jpeg")
    assert isinstance(audio, AudioBlock)
    assert audio.media is not None
    assert audio.media.mime_type == "audio/wav"
    assert isinstance(document, DocumentBlock)
    assert document.media is not None
    assert document.media.file_id == "file-1"


def test_refusal_field_counts_as_text_and_custom_tool_calls_pair() -> None:
    records = [
        {"role": "assistant", "content": None, "refusal": "Sorry, no."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "ct_1", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1"}}]},
        {"role": "tool", "tool_call_id": "ct_1", "content": "1"},
    ]
    messages = read(records).state.context
    assert messages[0].text() == "Sorry, no."
    assert messages[1].tools_calls == [call("ct_1", "sql", "SELECT 1")]
    assert result_ids(messages[2]) == ["ct_1"]
    assert_round_trip(records)


def test_two_legacy_calls_of_one_function_pair_in_order() -> None:
    records = [
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": "{}"}},
        {"role": "function", "name": "f", "content": "first"},
        {"role": "function", "name": "f", "content": "second"},
        {"role": "function", "name": "g", "content": "orphan"},
    ]
    messages = read(records).state.context
    assert [call_ids(m) for m in messages[:2]] == [["call_fn_0"], ["call_fn_1"]]
    assert [result_ids(m) for m in messages[2:]] == [["call_fn_0"], ["call_fn_1"], ["call_fn_result_4"]]


# -- lossless round trips -----------------------------------------------------------------


def test_samples_come_back_byte_for_byte() -> None:
    data = (SAMPLES / "openai-chat.json").read_bytes()
    conversation = formats.load(data, source="openai-chat.json")
    assert formats.dump(conversation) == data


@pytest.mark.parametrize(
    "value",
    [
        PARALLEL,
        {"model": "gpt-4o", "temperature": 0.2, "messages": PARALLEL, "tools": [], "metadata": {"run": 7}},
        {"messages": [{"role": "system", "content": [{"type": "text", "text": "s", "cache_control": {"x": 1}}]}]},
        [{"content": "keys in an unusual order", "role": "user", "zz": 1, "aa": [None]}],
        {"role": "user", "content": "one message object"},
        [{"role": "assistant", "content": "", "tool_calls": []}],
    ],
)
def test_unchanged_conversations_round_trip(value: Any) -> None:
    assert_round_trip(value)


def test_jsonl_of_messages_round_trips_and_reports_lines() -> None:
    lines = b"".join(orjson.dumps(r) + b"\n" for r in PARALLEL)
    conversation = formats.load(lines, source="chat.jsonl")
    assert conversation.format == "openai-chat"
    assert conversation.layout == "jsonl"
    assert formats.dump(conversation) == lines
    bad = lines + b'{"role": "tool", "content": "no id"}\n'
    with pytest.raises(InputError) as caught:
        formats.load(bad, source="chat.jsonl")
    assert caught.value.line == len(PARALLEL) + 1
    assert "tool_call_id: required string is missing" in str(caught.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"messages": [{"role": "user", "content": "hi"}, 7]}, "messages[1]: expected a message object"),
        ([{"role": "robot", "content": "x"}], "[0].role: unknown role 'robot'"),
        ([{"content": "x"}], "[0].role: required string is missing"),
        ([{"role": "user", "content": {"text": "x"}}], "[0].content: expected a string, null or a list"),
        ([{"role": "user", "content": [{"text": "x"}]}], "[0].content[0].type: required string is missing"),
        ([{"role": "user", "content": [{"type": "text", "text": 5}]}], "[0].content[0].text: expected a string"),
        ([{"role": "assistant", "tool_calls": {"id": "c"}}], "[0].tool_calls: expected a list"),
        ([{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f"}}]}],
         "[0].tool_calls[0].id: required string is missing"),
        ([{"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}],
         "[0].tool_calls[0].function.name: required string is missing"),
        ([{"role": "function", "content": "x"}], "[0].name: required string is missing"),
        ({"messages": {"role": "user"}}, "messages: expected a list"),
        ({"prompt": "hi"}, "expected a list of chat messages or an object with a 'messages' list"),
        ("text", "expected a list of chat messages, got a string"),
    ],
)
def test_bad_input_is_one_input_error_naming_the_path(value: Any, message: str) -> None:
    with pytest.raises(InputError) as caught:
        read(value)
    assert message in str(caught.value)
    assert str(caught.value).startswith("test.json: ")


# -- compaction keeps pairing ----------------------------------------------------------


def sample_instructions() -> str:
    instructions: str = json.loads((SAMPLES / "openai-responses.json").read_text())["instructions"]
    return instructions


def tau_sample() -> dict[str, Any]:
    value: dict[str, Any] = json.loads((SAMPLES / "openai-chat.json").read_text())
    return value


def test_trim_keeps_records_untouched_and_the_wrapper() -> None:
    value = tau_sample()
    conversation = read(value)
    MessageContextManager(max_messages=1).trim_context(conversation.state)
    out = CHAT.write(conversation)
    assert [k for k in out if k != "messages"] == ["task_id", "trial", "reward", "model", "tools"]
    assert out["tools"] is value["tools"]
    kept = out["messages"]
    assert kept[0] is value["messages"][0]  # the system prompt, the same object
    assert sum(1 for r in kept if r["role"] == "user") == 1
    assert all(any(r is original for original in value["messages"]) for r in kept)
    assert_paired(kept)


def test_remove_tool_msgs_drops_completed_sequences() -> None:
    conversation = read(copy.deepcopy(PARALLEL))
    MessageContextManager(max_messages=10, remove_tool_msgs=True).trim_context(conversation.state)
    out = CHAT.write(conversation)
    assert [r["role"] for r in out] == ["developer", "user", "assistant", "user", "assistant", "user", "assistant"]
    assert not any(r.get("tool_calls") or r.get("function_call") or r["role"] in ("tool", "function") for r in out)
    assert out[2]["content"] == "A1 shipped; B2 is delayed."
    assert out[-1]["content"] == "It rains in Oslo."


def test_summary_cut_never_splits_parallel_results() -> None:
    records = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": None, "tool_calls": [call("p1"), call("p2"), call("p3")]},
        {"role": "tool", "tool_call_id": "p1", "content": "r1"},
        {"role": "tool", "tool_call_id": "p2", "content": "r2"},
        {"role": "tool", "tool_call_id": "p3", "content": "r3"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "u2"},
        {"role": "assistant", "content": "bye"},
    ]
    for keep_recent in range(1, 8):
        conversation = read(copy.deepcopy(records))
        summarize(conversation, "S", max_messages=0, keep_recent=keep_recent)
        out = CHAT.write(conversation)
        assert_paired(out)
        # The recent part never starts with a result: the cut moved before the calls.
        first = next(r for r in out if r["role"] not in ("system",))
        assert first["role"] != "tool"


@explored(max_examples=150, deadline=None)
@given(st.data())
def test_trimmed_random_conversations_stay_paired(data: st.DataObject) -> None:
    records = data.draw(chat_conversations())
    messages = records["messages"] if isinstance(records, dict) else records
    keep = data.draw(st.integers(min_value=0, max_value=4))
    conversation = read(copy.deepcopy(records))
    MessageContextManager(max_messages=keep, remove_tool_msgs=data.draw(st.booleans())).trim_context(
        conversation.state
    )
    out = CHAT.write(conversation)
    kept = out["messages"] if isinstance(out, dict) else out
    assert sum(1 for r in kept if r["role"] == "user") <= keep
    assert all(r in messages for r in kept)
    assert_paired([r for r in kept if r["role"] != "function" and not r.get("function_call")])


# -- the summary slot ----------------------------------------------------------------------


def test_summary_message_goes_after_the_system_prompt_and_a_second_run_appends() -> None:
    conversation = read(tau_sample())
    summarize(conversation, "First summary.", max_messages=10, keep_recent=4)
    out = CHAT.write(conversation)
    messages = out["messages"]
    assert messages[0]["role"] == "system"
    assert messages[0]["content"].startswith("# Airline Agent Policy")
    assert messages[1] == {"role": "system", "name": SUMMARY_NAME,
                           "content": f"{SUMMARY_HEADER}\nFirst summary."}
    assert len(messages) == 2 + 4

    again = read(json.loads(json.dumps(out)))
    assert again.state.context_summary == "First summary."
    assert not any(m.text().startswith(SUMMARY_HEADER) for m in again.state.context)
    assert CHAT.write(again) == out  # unchanged: identical, summary record included

    recorder = summarize(again, "Second summary.", max_messages=3, keep_recent=2)
    assert SUMMARY_HEADER not in recorder.requests[0]  # the old summary is not summarized again
    final = CHAT.write(again)["messages"]
    summaries = [r for r in final if r.get("name") == SUMMARY_NAME]
    assert len(summaries) == 1
    assert summaries[0]["content"] == f"{SUMMARY_HEADER}\nFirst summary.\n\nSecond summary."


def test_summary_in_the_system_prompt_is_found_and_kept_there() -> None:
    records = [{"role": "system", "content": "Be kind."}] + [
        {"role": role, "content": f"{role} {i}"} for i in range(6) for role in ("user", "assistant")
    ]
    conversation = read(copy.deepcopy(records))
    conversation.summary_as = "system"
    summarize(conversation, "Earlier: greetings.", max_messages=4, keep_recent=2)
    out = CHAT.write(conversation)
    assert out[0] == {"role": "system", "content": f"Be kind.\n\n{SUMMARY_HEADER}\nEarlier: greetings."}
    assert records[0] == {"role": "system", "content": "Be kind."}  # the input is not mutated

    again = read(out)
    assert again.state.context_summary == "Earlier: greetings."
    assert again.state.context[0].text() == "Be kind."
    assert CHAT.write(again) == out  # default placement follows where the summary was found
    again.summary_as = "message"
    moved = CHAT.write(again)
    assert moved[0] == {"role": "system", "content": "Be kind."}
    assert moved[1]["name"] == SUMMARY_NAME


def test_summary_field_is_a_usage_error() -> None:
    conversation = read([{"role": "user", "content": "hi"}])
    conversation.state.context_summary = "s"
    conversation.summary_as = "field"
    with pytest.raises(UsageError, match="--summary-as field: openai-chat has no summary field"):
        CHAT.write(conversation)


def test_summary_is_a_record_in_a_jsonl_list() -> None:
    lines = b"".join(orjson.dumps(r) + b"\n" for r in [{"role": "user", "content": "hi"}])
    conversation = formats.load(lines, source="x.jsonl", fmt="openai-chat")
    conversation.state.context_summary = "S"
    out = CHAT.write(conversation)
    assert out == [{"role": "system", "name": SUMMARY_NAME, "content": f"{SUMMARY_HEADER}\nS"},
                   {"role": "user", "content": "hi"}]
    # Detected, the file is also valid Anthropic and Responses: no 'name', which they refuse.
    conversation = formats.load(lines, source="x.jsonl")
    conversation.state.context_summary = "S"
    assert CHAT.write(conversation)[0] == {"role": "system", "content": f"{SUMMARY_HEADER}\nS"}
    assert conversation.warnings == [
        "this file reads as openai-chat and as openai-responses and anthropic (--from chooses): the summary is "
        "written as a plain system message, which each of them takes"
    ]


# -- conversion into openai-chat -----------------------------------------------------------


def native(messages: list[Message], *, summary: str | None = None, container: Any = None) -> Conversation:
    state = AgentState(context=messages, context_summary=summary)
    return Conversation(state=state, format="native", container=container if container is not None else [])


def test_native_messages_render_to_valid_official_chat_params() -> None:
    messages = [
        Message.text_message("sys", role="system"),
        Message(role="user", content=[
            TextBlock(text="look: "),
            ImageBlock(media=MediaRef(kind="data", data_base64="iVBO", mime_type="image/png")),
            AudioBlock(media=MediaRef(kind="data", data_base64="UklG", mime_type="audio/wav")),
            DocumentBlock(media=MediaRef(kind="file_id", file_id="file-9")),
        ]),
        Message(role="assistant", content=[TextBlock(text="checking"), ToolCallBlock(id="tc", name="f", args={"a": 1})],
                tools_calls=[call("c1", "g", '{"x": 2}')]),
        Message.tool_message([ToolResultBlock(call_id="c1", output={"ok": True}),
                              ToolResultBlock(call_id="tc", output="fine")]),
        Message(role="assistant", content=[ReasoningBlock(summary="hm"), TextBlock(text="done")], reasoning="why"),
    ]
    conversation = native(messages, summary="Earlier stuff.", container={"context": []})
    out = CHAT.write(conversation)
    assert set(out) == {"messages"}
    for record in out["messages"]:
        OFFICIAL.validate_python(record)
    roles = [r["role"] for r in out["messages"]]
    assert roles == ["system", "system", "user", "assistant", "tool", "tool", "assistant"]
    assert out["messages"][1]["name"] == SUMMARY_NAME
    assistant = out["messages"][3]
    assert assistant["content"] == "checking"
    assert [c["id"] for c in assistant["tool_calls"]] == ["c1", "tc"]
    assert assistant["tool_calls"][1]["function"]["arguments"] == '{"a": 1}'
    assert out["messages"][4]["content"] == '{"ok": true}'
    assert [p["type"] for p in out["messages"][2]["content"]] == ["text", "image_url", "input_audio", "file"]
    assert conversation.dropped == {"reasoning block": 1, "reasoning text": 1}


def test_what_cannot_be_carried_is_a_warning_not_silence() -> None:
    messages = [
        Message(role="assistant", content=[ImageBlock(media=MediaRef(url="https://x/y.png"))]),
        Message(role="tool", content=[ToolResultBlock(call_id="c", output="x", is_error=True), TextBlock(text="note")]),
    ]
    conversation = native(messages)
    out = CHAT.write(conversation)
    assert out == [
        {"role": "assistant", "content": ""},
        {"role": "tool", "tool_call_id": "c", "content": "x"},
        {"role": "user", "content": "note"},
    ]
    assert conversation.dropped == {"image block in an assistant message": 1, "error flag of a tool result": 1}


def test_unknown_parts_survive_native_and_are_named_when_not_carried() -> None:
    records = [{"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "future_part", "x": 1}]}]
    conversation = read(copy.deepcopy(records))
    via_native = formats.load(formats.dump(conversation, to="native"), source="n.json")
    assert via_native.format == "native"
    assert orjson.loads(formats.dump(via_native, to="openai-chat")) == records
    conversation = read(copy.deepcopy(records))
    orjson.loads(formats.dump(conversation, to="openai-responses"))
    assert conversation.dropped == {"openai-chat future_part block in a user message": 1}


def test_responses_sample_converts_to_valid_chat() -> None:
    conversation = formats.load((SAMPLES / "openai-responses.json").read_bytes(), source="r.json")
    out = orjson.loads(formats.dump(conversation, to="openai-chat"))
    for record in out["messages"]:
        OFFICIAL.validate_python(record)
    assert_paired(out["messages"])
    assert any("reasoning" in kind for kind in conversation.dropped)
    # Function tools and the model carry over between the two OpenAI formats.
    assert not any("tool definition" in kind for kind in conversation.dropped)
    assert out["model"] == "gpt-5-mini"
    assert [t["function"]["name"] for t in out["tools"]] == ["get_user_details", "get_reservation_details",
                                                             "transfer_to_human_agents"]
    # A list: pydantic takes the extra="forbid" config for a list of TypedDicts, not for one.
    TypeAdapter(list[ChatCompletionToolParam], config=ConfigDict(extra="forbid")).validate_python(out["tools"])
    assert out["tools"][0]["function"]["strict"] is True
    # The request's instructions are the system prompt of the converted conversation.
    assert out["messages"][0] == {"role": "system", "content": sample_instructions()}


# -- properties -------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
EXTRA = st.dictionaries(
    st.sampled_from(["x_meta", "weight", "cache_control", "zz"]), st.integers(-(2**53), 2**53) | TEXT, max_size=2
)


@st.composite
def chat_content(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["str", "parts"]))
    if kind == "str":
        return draw(TEXT)
    parts = draw(st.lists(st.sampled_from(["text", "image", "unknown"]), min_size=1, max_size=3))
    out: list[dict[str, Any]] = []
    for part in parts:
        if part == "text":
            out.append({"type": "text", "text": draw(TEXT), **draw(EXTRA)})
        elif part == "image":
            out.append({"type": "image_url", "image_url": {"url": "https://e.com/" + draw(TEXT), "detail": "auto"}})
        else:
            out.append({"type": "new_kind", "payload": draw(TEXT)})
    return out


@st.composite
def chat_conversations(draw: st.DrawFn) -> Any:
    records: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 2))):
        records.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(TEXT), **draw(EXTRA)})
    counter = 0
    for _turn in range(draw(st.integers(0, 5))):
        user: dict[str, Any] = {"role": "user", "content": draw(chat_content()), **draw(EXTRA)}
        if draw(st.booleans()):
            user["name"] = "u"
        records.append(user)
        shape = draw(st.sampled_from(["text", "calls", "legacy", "refusal"]))
        if shape == "calls":
            ids = [f"call_{counter + k}" for k in range(draw(st.integers(1, 3)))]
            counter += len(ids)
            content = draw(st.none() | TEXT)
            records.append({"role": "assistant", "content": content,
                            "tool_calls": [call(i, draw(st.sampled_from(["f", "g"])), '{"q": 1}') for i in ids]})
            for i in draw(st.permutations(ids)):
                records.append({"role": "tool", "tool_call_id": i, "content": draw(TEXT), **draw(EXTRA)})
            if draw(st.booleans()):
                records.append({"role": "assistant", "content": draw(TEXT)})
        elif shape == "legacy":
            records.append({"role": "assistant", "content": None, "function_call": {"name": "old", "arguments": "{}"}})
            records.append({"role": "function", "name": "old", "content": draw(TEXT)})
            records.append({"role": "assistant", "content": draw(TEXT)})
        elif shape == "refusal":
            records.append({"role": "assistant", "content": None, "refusal": draw(TEXT)})
        else:
            records.append({"role": "assistant", "content": draw(chat_content()), **draw(EXTRA)})
    if draw(st.booleans()):
        return {"model": "gpt-4o", "messages": records, "temperature": draw(st.floats(0, 2))}
    return records


@explored(max_examples=200, deadline=None)
@given(chat_conversations())
def test_random_chat_conversations_round_trip_identically(value: Any) -> None:
    assert_round_trip(value)
    # And through bytes, as the CLI does it. (``fmt`` is given: a list whose messages all
    # have part lists is also plausible native, which comes first in detection order.)
    data = orjson.dumps(value)
    assert formats.dump(formats.load(data, source="r.json", fmt="openai-chat")) == data + b"\n"


def view(messages: list[Message]) -> list[tuple[Any, ...]]:
    """Roles, texts, calls and results; a tool message with n results counts as n."""
    out: list[tuple[Any, ...]] = []
    for message in messages:
        if message.role == "tool":
            out.extend(("tool", b.call_id, output_text(b.output)) for b in message.content
                       if isinstance(b, ToolResultBlock))
        else:
            calls = [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in message.tools_calls or ()]
            out.append((message.role, message.text(), calls))
    return out


@st.composite
def native_conversations(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(Message.text_message(draw(TEXT), role="system"))
    counter = 0
    for _turn in range(draw(st.integers(0, 5))):
        blocks: list[ContentBlock] = [TextBlock(text=draw(TEXT)) for _ in range(draw(st.integers(0, 2)))]
        messages.append(Message(role="user", content=blocks))
        if draw(st.booleans()):
            ids = [f"c{counter + k}" for k in range(draw(st.integers(1, 3)))]
            counter += len(ids)
            text = draw(TEXT)
            messages.append(Message(
                role="assistant", content=[TextBlock(text=text)] if text else [],
                tools_calls=[call(i, "fn", json.dumps({"n": k})) for k, i in enumerate(ids)],
            ))
            outputs = [draw(TEXT | st.dictionaries(st.sampled_from("ab"), st.integers(), max_size=2)) for _ in ids]
            split = draw(st.integers(1, len(ids)))  # results in one or two tool messages
            results = [ToolResultBlock(call_id=i, output=o) for i, o in zip(ids, outputs, strict=True)]
            messages.append(Message.tool_message(results[:split]))
            if results[split:]:
                messages.append(Message.tool_message(results[split:]))
        messages.append(Message.text_message(draw(TEXT), role="assistant"))
    return messages


@explored(max_examples=200, deadline=None)
@given(native_conversations(), st.booleans())
def test_native_to_chat_to_native_keeps_roles_texts_calls_and_pairing(messages: list[Message], wrap: bool) -> None:
    conversation = native(messages, container={"context": []} if wrap else [])
    out = CHAT.write(conversation)
    assert conversation.warnings == []
    records = out["messages"] if wrap else out
    for record in records:
        OFFICIAL.validate_python(record)
    back = read(json.loads(json.dumps(out))).state.context
    assert view(back) == view(messages)
    assert [call_ids(m) for m in back if m.role == "assistant"] == [call_ids(m) for m in messages
                                                                     if m.role == "assistant"]


# -- the command line ---------------------------------------------------------------------------


def test_cli_trim_gives_back_openai_chat_with_the_wrapper() -> None:
    result = CliRunner().invoke(app, ["trim", str(SAMPLES / "openai-chat.json"), "--max-messages", "2"])
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert list(out) == ["task_id", "trial", "reward", "model", "tools", "messages"]
    original = tau_sample()
    assert out["tools"] == original["tools"]
    assert out["task_id"] == 40
    assert sum(1 for r in out["messages"] if r["role"] == "user") == 2
    assert out["messages"][0] == original["messages"][0]
    assert out["messages"] == [r for r in original["messages"] if r in out["messages"]]  # records unchanged
    assert_paired(out["messages"])


def test_reading_never_leaks_a_non_ctxmgr_exception() -> None:
    # Shapes that would raise KeyError/TypeError/AttributeError in a careless reader.
    for value in ([{"role": "assistant", "function_call": "x"}], [{"role": "tool", "tool_call_id": 1}],
                  [{"role": "user", "content": [{"type": "image_url", "image_url": 3}]}],
                  [{"role": "user", "content": [{"type": "input_audio"}]}],
                  [{"role": "user", "content": [{"type": "file", "file": "x"}]}],
                  [{"role": "assistant", "tool_calls": [{"id": "c", "type": "custom", "custom": []}]}]):
        with pytest.raises(CtxmgrError):
            read(value)


def test_jsonl_records_type_is_what_the_reader_sees() -> None:
    # Guard for the JSONL error wording: the reader relies on io.parse giving JsonlRecords.
    conversation = formats.load(b'{"role":"user","content":"a"}\n{"role":"assistant","content":"b"}\n', source="x")
    assert isinstance(conversation.container, JsonlRecords)


def test_a_list_with_part_types_native_does_not_know_is_left_to_openai_chat() -> None:
    from ctxmgr import formats

    data = b'[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"u"}}]}]'
    conversation = formats.load(data, source="chat.json")
    assert conversation.format == "openai-chat"
    assert formats.dump(conversation) == data + b"\n"
