"""The ``openai-responses`` adapter: detection, item grouping, round trips, compaction, conversion."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import explored
from hypothesis import HealthCheck, example, given, strategies as st
from openai.types.responses import FunctionToolParam, ResponseInputItemParam
from pydantic import ConfigDict, TypeAdapter
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr._validate import check_messages
from ctxmgr.cli import app
from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE, SUMMARY_HEADER, Conversation
from ctxmgr.formats._openai_chat import output_text
from ctxmgr.formats._openai_responses import OpenAIResponsesFormat
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
    ToolResultBlock,
)
from ctxmgr.state._tools import call_ids, result_ids

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
RESPONSES = OpenAIResponsesFormat()
# The SDK's input item types, with unknown keys rejected (TypedDicts ignore them by default).
OFFICIAL: TypeAdapter[ResponseInputItemParam] = TypeAdapter(
    ResponseInputItemParam, config=ConfigDict(extra="forbid")
)
CALL_TYPES = {"function_call", "custom_tool_call", "computer_call"}
OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output", "computer_call_output"}


def read(value: Any, layout: str = "document") -> Conversation:
    return RESPONSES.read(value, source="test.json", layout=layout)  # type: ignore[arg-type]


def assert_round_trip(value: Any) -> None:
    original = copy.deepcopy(value)
    out = RESPONSES.write(read(value))
    assert out == original
    assert json.dumps(out) == json.dumps(original)  # key order too


def sample() -> dict[str, Any]:
    value: dict[str, Any] = json.loads((SAMPLES / "openai-responses.json").read_text())
    return value


def items_of(value: Any) -> list[Any]:
    items: list[Any] = value["input"] if isinstance(value, dict) else value
    return items


def assert_valid_sequence(items: list[dict[str, Any]]) -> None:
    """What the API checks: outputs answer earlier calls, reasoning precedes its item."""
    calls: set[str] = set()
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind in CALL_TYPES:
            calls.add(item["call_id"])
        if kind in OUTPUT_TYPES:
            assert item["call_id"] in calls, f"output {item['call_id']} without its call"
        if kind == "reasoning":
            assert index + 1 < len(items), "reasoning item at the end"
            following = items[index + 1]
            assert following.get("role", "assistant") == "assistant", f"reasoning followed by {following}"
            assert following.get("type") not in OUTPUT_TYPES


class FixedSummarizer:
    """A summarizer that answers with a fixed text and records what it was sent."""

    name = "fixed"

    def __init__(self, text: str) -> None:
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


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def answer(text: str, item_id: str = "msg_1") -> dict[str, Any]:
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def reasoning(item_id: str, summary: str = "") -> dict[str, Any]:
    summaries = [{"type": "summary_text", "text": summary}] if summary else []
    return {"type": "reasoning", "id": item_id, "summary": summaries, "encrypted_content": f"gAAAA{item_id}"}


def function_call(call_id: str, name: str = "lookup") -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": json.dumps({"id": call_id}), "status": "completed"}


def function_output(call_id: str, output: Any = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


# -- detection ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        [{"type": "message", "role": "user", "content": "hi"}],
        [user("hi"), function_call("c1")],
        [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        [reasoning("rs_1"), answer("hi")],
        {"input": [user("hi")], "instructions": "be brief"},
        {"input": [user("hi")], "tools": [{"type": "function", "name": "f", "parameters": {}}]},
        {"input": "hi", "model": "gpt-5"},
        {"object": "response", "output": [answer("hi")]},
        function_output("c1"),
    ],
)
def test_responses_only_signs_are_certain(value: Any) -> None:
    assert RESPONSES.detect(value) == CERTAIN


@pytest.mark.parametrize("value", [[user("hi")], {"input": [user("hi")]}, {"input": []}])
def test_easy_input_messages_alone_are_plausible(value: Any) -> None:
    assert RESPONSES.detect(value) == PLAUSIBLE


@pytest.mark.parametrize(
    "value",
    [
        [],
        "hi",
        {"input": "hi"},  # an eval row, not a request
        {"messages": [user("hi")]},
        [{"role": "tool", "tool_call_id": "c", "content": "x"}],
        [{"role": "user", "name": "ana", "content": "hi"}],
        [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        [{"role": "assistant", "content": None, "tool_calls": []}],
        [{"type": "human", "data": {"content": "hi"}}],
        [{"type": "future_thing"}],
        [{"role": "model", "parts": [{"text": "hi"}]}],
        [user("hi"), 3],
        {"input": [user("hi")], "system": "anthropic"},
    ],
)
def test_other_shapes_are_not_responses(value: Any) -> None:
    assert RESPONSES.detect(value) == NO


def test_detection_through_the_registry() -> None:
    assert formats.detect(sample(), source="x").name == "openai-responses"
    assert formats.detect({"input": [user("hi")]}, source="x").name == "openai-responses"
    # A bare list of {role, content} is a tie that goes to openai-chat, first in order.
    assert formats.detect([user("hi")], source="x").name == "openai-chat"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4)
    | st.sampled_from(["message", "user", "assistant", "developer", "reasoning", "function_call",
                       "function_call_output", "input_text", "output_text", "custom_tool_call",
                       "mcp_approval_request", "local_shell_call_output", "item_reference", SUMMARY_HEADER]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "role", "content", "text", "input", "output", "call_id", "name", "arguments",
                         "id", "summary", "object", "instructions", "approval_request_id", "input_image",
                         "image_url", "file_id", "input_audio"]) | st.text(max_size=3),
        children, max_size=5,
    ),
    max_leaves=25,
)


@explored(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(JSON)
@example({"output": None, "type": ""})  # one item with an output of its own stays one item
@example({"output": [], "type": ""})  # a list there is still the item's own, not a stored response's
def test_detect_never_raises_and_read_raises_only_input_errors(value: Any) -> None:
    assert RESPONSES.detect(value) in (NO, PLAUSIBLE, CERTAIN)
    try:
        conversation = RESPONSES.read(value, source="fuzz.json", layout="document")
    except InputError:
        return
    assert RESPONSES.write(conversation) == value


# -- grouping items into messages ----------------------------------------------------------


def test_sample_groups_into_turns_with_parallel_calls_together() -> None:
    value = sample()
    system, *messages = read(value).state.context
    items = value["input"]
    assert system.role == "system"
    assert system.text() == value["instructions"]  # the instructions, as the system prompt
    assert [m.role for m in messages] == [
        "user", "assistant", "user", "assistant", "tool", "tool", "assistant",
        "user", "assistant", "user", "assistant", "user", "assistant", "tool", "assistant",
    ]
    parallel = messages[3]
    assert parallel.source == (items[4], items[5], items[6])  # reasoning + both calls, same objects
    assert all(a is b for a, b in zip(parallel.source or (), items[4:7], strict=True))
    assert call_ids(parallel) == [items[5]["call_id"], items[6]["call_id"]]
    assert [result_ids(m) for m in messages[4:6]] == [[items[5]["call_id"]], [items[6]["call_id"]]]
    assert isinstance(parallel.content[0], ReasoningBlock)
    assert parallel.content[0].summary is not None
    assert parallel.content[0].summary.startswith("**Looking up")
    assert messages[1].source == (items[1], items[2])  # reasoning rs_1 with the answer it preceded
    assert messages[1].text() == items[2]["content"][0]["text"]
    assert sum(len(m.source or ()) for m in messages) == len(items)  # nothing lost, nothing doubled
    assert check_messages([system, *messages], target="openai-responses") == []


def test_a_turn_is_text_reasoning_and_calls_until_someone_else_speaks() -> None:
    items = [
        user("q"),
        answer("Let me check.", "msg_a"),
        reasoning("rs_1"),
        function_call("c1"),
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        function_call("c2"),
        function_output("c1"),
        function_output("c2", [{"type": "input_text", "text": "two "}, {"type": "input_text", "text": "parts"}]),
        answer("Done.", "msg_b"),
    ]
    messages = read(items).state.context
    assert [m.role for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert messages[1].source == tuple(items[1:6])
    assert call_ids(messages[1]) == ["c1", "c2"]
    assert messages[1].text() == "Let me check."
    # The parts of an output stay separate (a newline), so their texts cannot run together.
    assert messages[3].text() == "two \nparts"


def test_pass_through_items_travel_with_the_next_item_or_the_last() -> None:
    items = [
        {"type": "item_reference", "id": "msg_old"},
        user("hello"),
        answer("hi"),
        {"type": "brand_new_item", "payload": [1, 2]},
    ]
    messages = read(items).state.context
    assert messages[0].source == (items[0], items[1])
    assert messages[1].source == (items[2], items[3])
    only = read([{"type": "brand_new_item"}]).state.context
    assert [m.role for m in only] == ["assistant"]
    assert only[0].text() == ""
    assert only[0].source == ({"type": "brand_new_item"},)


def test_items_survive_a_trip_through_native_and_are_named_when_not_carried() -> None:
    items = [user("find it"), reasoning("rs_1", "search first"),
             {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search"}},
             answer("Found.", "msg_1")]
    conversation = read(copy.deepcopy(items))
    via_native = formats.load(formats.dump(conversation, to="native"), source="n.json")
    back = orjson.loads(formats.dump(via_native, to="openai-responses"))
    assert back == items  # encrypted reasoning, the server call and the ids, as they were
    conversation = read(copy.deepcopy(items))
    formats.dump(conversation, to="openai-chat")
    assert "openai-responses web_search_call block in an assistant message" in conversation.dropped


def test_a_reasoning_item_without_its_item_is_an_orphan() -> None:
    messages = read([user("q"), reasoning("rs_1"), user("again")]).state.context
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert [p.code for p in check_messages(messages)] == ["orphan-reasoning"]


def test_other_client_calls_pair_by_their_ids() -> None:
    items = [
        user("go"),
        {"type": "custom_tool_call", "call_id": "ct", "name": "sql", "input": "SELECT 1"},
        {"type": "computer_call", "call_id": "cc", "action": {"type": "click", "x": 1, "y": 2},
         "pending_safety_checks": [], "status": "completed", "id": "cu_1"},
        {"type": "mcp_approval_request", "id": "mcpr_1", "name": "deploy", "arguments": "{}", "server_label": "ops"},
        {"type": "custom_tool_call_output", "call_id": "ct", "output": "1"},
        {"type": "computer_call_output", "call_id": "cc",
         "output": {"type": "computer_screenshot", "image_url": "https://x/s.png"}},
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
        {"type": "local_shell_call", "id": "ls_1", "call_id": "sh", "status": "completed",
         "action": {"type": "exec", "command": ["ls"], "env": {}}},
        {"type": "local_shell_call_output", "id": "sh", "output": "a.txt"},
    ]
    messages = read(items).state.context
    assert [m.role for m in messages] == ["user", "assistant", "tool", "tool", "tool", "assistant", "tool"]
    assert call_ids(messages[1]) == ["ct", "cc", "mcpr_1"]
    assert messages[1].tools_calls is not None
    assert messages[1].tools_calls[0]["function"] == {"name": "sql", "arguments": "SELECT 1"}
    assert [result_ids(m) for m in messages[2:5]] == [["ct"], ["cc"], ["mcpr_1"]]
    assert call_ids(messages[5]) == ["sh"]
    assert result_ids(messages[6]) == ["sh"]
    assert check_messages(messages) == []
    assert_round_trip(items)


def test_content_parts_map_to_blocks() -> None:
    item = {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "see "},
        {"type": "input_image", "detail": "high", "image_url": "data:image/png;base64,iVBO"},
        {"type": "input_file", "file_id": "file-7", "filename": "r.pdf"},
        {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
    ]}
    message = read([item]).state.context[0]
    text, image, document, audio = message.content
    assert text == TextBlock(text="see ")
    assert isinstance(image, ImageBlock)
    assert image.media == MediaRef(kind="data", data_base64="iVBO", mime_type="image/png")
    assert isinstance(document, DocumentBlock)
    assert document.media == MediaRef(kind="file_id", file_id="file-7", filename="r.pdf")
    assert isinstance(audio, AudioBlock)


# -- lossless round trips ----------------------------------------------------------------------


def test_sample_comes_back_byte_for_byte() -> None:
    data = (SAMPLES / "openai-responses.json").read_bytes()
    assert formats.dump(formats.load(data, source="r.json")) == data


@pytest.mark.parametrize(
    "value",
    [
        [user("hi"), reasoning("rs_1", "thinking"), answer("hello")],
        {"input": "just a string", "model": "gpt-5", "store": False},
        {"object": "response", "id": "resp_1", "status": "completed", "output": [reasoning("rs_9"), answer("x")],
         "usage": {"input_tokens": 3}},
        function_call("c1"),
        [{"content": "odd key order", "role": "user", "zz": {"n": 1}}, {"phase": "final_answer", **answer("p")}],
        [{"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "no"}]}],
        [{"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA"}, user("next")],
    ],
)
def test_unchanged_conversations_round_trip(value: Any) -> None:
    assert_round_trip(value)


def test_jsonl_of_items_round_trips_and_reports_lines() -> None:
    lines = b"".join(orjson.dumps(i) + b"\n" for i in sample()["input"])
    conversation = formats.load(lines, source="r.jsonl")
    assert conversation.format == "openai-responses"
    assert conversation.layout == "jsonl"
    assert formats.dump(conversation) == lines
    with pytest.raises(InputError) as caught:
        formats.load(lines + b'{"type": "function_call", "call_id": "c"}\n', source="r.jsonl")
    assert caught.value.line == len(sample()["input"]) + 1
    assert "name: required string is missing" in str(caught.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"input": [user("hi"), 4]}, "input[1]: expected an item object"),
        ([{"type": "message", "role": "robot", "content": "x"}], "[0].role: unknown role 'robot'"),
        ([{"type": "message", "content": "x"}], "[0].role: required string is missing"),
        ([{"content": "x"}], "[0].type: required string is missing"),
        ([{"type": 5}], "[0].type: expected a string"),
        ([{"role": "user", "content": 3}], "[0].content: expected a string or a list of parts"),
        ([{"role": "user", "content": [{"type": "input_text"}]}], "[0].content[0].text: expected a string"),
        ([{"role": "user", "content": ["x"]}], "[0].content[0]: expected an object"),
        ([{"type": "function_call", "name": "f", "arguments": "{}"}], "[0].call_id: required string is missing"),
        ([{"type": "function_call_output", "call_id": 3, "output": "x"}], "[0].call_id: expected a string"),
        ({"input": {"role": "user"}}, "input: expected a list of items"),
        ({"prompt": "x"}, "expected a list of Responses input items, a request with 'input'"),
        (7, "expected a list of Responses input items, got a number"),
    ],
)
def test_bad_input_is_one_input_error_naming_the_path(value: Any, message: str) -> None:
    with pytest.raises(InputError) as caught:
        read(value)
    assert message in str(caught.value)


# -- compaction keeps turns and pairs together ---------------------------------------------------


def test_trim_keeps_items_untouched_and_the_request_keys() -> None:
    value = sample()
    conversation = read(value)
    MessageContextManager(max_messages=1).trim_context(conversation.state)
    out = RESPONSES.write(conversation)
    assert [k for k in out if k != "input"] == [k for k in value if k != "input"]
    assert out["tools"] is value["tools"]
    assert out["instructions"] == value["instructions"]
    kept = out["input"]
    assert kept[0] is value["input"][-5]  # the last user message and everything after it
    assert all(a is b for a, b in zip(kept, value["input"][-5:], strict=True))
    assert_valid_sequence(kept)


def test_remove_tool_msgs_drops_the_whole_calling_turn_with_its_reasoning() -> None:
    value = sample()
    conversation = read(value)
    MessageContextManager(max_messages=10, remove_tool_msgs=True).trim_context(conversation.state)
    kept = RESPONSES.write(conversation)["input"]
    kinds = [i.get("type", "message") for i in kept]
    assert "function_call" not in kinds
    assert "function_call_output" not in kinds
    assert "rs_68a10002" not in {i.get("id") for i in kept}  # the parallel turn's reasoning went with it
    assert "rs_68a10004" in {i.get("id") for i in kept}  # the final answer keeps its own reasoning
    assert_valid_sequence(kept)


def test_summary_cut_moves_before_parallel_calls() -> None:
    items = [user("u1"), reasoning("rs_1"), answer("checking", "m1"), function_call("p1"), function_call("p2"),
             function_call("p3"), function_output("p1"), function_output("p2"), function_output("p3"),
             reasoning("rs_2"), answer("done", "m2"), user("u2"), answer("bye", "m3")]
    for keep_recent in range(1, 8):
        conversation = read(copy.deepcopy(items))
        summarize(conversation, "S", max_messages=0, keep_recent=keep_recent)
        out = RESPONSES.write(conversation)
        assert out[0]["role"] == "developer"
        assert_valid_sequence(out[1:])
        assert out[1].get("type") not in OUTPUT_TYPES


# -- the summary slot ------------------------------------------------------------------------------


def test_summary_item_goes_first_and_a_second_run_appends() -> None:
    conversation = read(sample())
    summarize(conversation, "First summary.", max_messages=8, keep_recent=4)
    out = RESPONSES.write(conversation)
    first = out["input"][0]
    assert first == {"type": "message", "role": "developer",
                     "content": [{"type": "input_text", "text": f"{SUMMARY_HEADER}\nFirst summary."}]}
    OFFICIAL.validate_python(first)
    assert_valid_sequence(out["input"][1:])

    again = read(json.loads(json.dumps(out)))
    assert again.state.context_summary == "First summary."
    assert RESPONSES.write(again) == out
    recorder = summarize(again, "Second summary.", max_messages=3, keep_recent=2)
    assert SUMMARY_HEADER not in recorder.requests[0]
    final = RESPONSES.write(again)["input"]
    texts = [i["content"][0]["text"] for i in final if i.get("role") == "developer"]
    assert texts == [f"{SUMMARY_HEADER}\nFirst summary.\n\nSecond summary."]


def test_summary_after_leading_system_items() -> None:
    items = [{"type": "message", "role": "system", "content": "rules"}, user("a"), answer("b")]
    conversation = read(items)
    conversation.state.context_summary = "S"
    out = RESPONSES.write(conversation)
    assert [i.get("role") for i in out] == ["system", "developer", "user", "assistant"]


def test_summary_as_system_uses_instructions_and_is_found_there() -> None:
    conversation = read(sample())
    conversation.summary_as = "system"
    summarize(conversation, "Earlier: the user asked.", max_messages=8, keep_recent=4)
    out = RESPONSES.write(conversation)
    assert out["instructions"].startswith("# Airline Agent Policy")
    assert out["instructions"].endswith(f"\n\n{SUMMARY_HEADER}\nEarlier: the user asked.")
    assert not any(i.get("role") == "developer" for i in out["input"])

    again = read(out)
    assert again.state.context_summary == "Earlier: the user asked."
    assert RESPONSES.write(again) == out  # default placement follows where it was found
    again.summary_as = "message"
    moved = RESPONSES.write(again)
    assert moved["instructions"] == sample()["instructions"]
    assert moved["input"][0]["role"] == "developer"


def test_summary_as_system_in_a_bare_list_goes_in_the_first_system_item() -> None:
    items = [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
             user("a")]
    conversation = read(copy.deepcopy(items))
    conversation.state.context_summary = "S"
    conversation.summary_as = "system"
    out = RESPONSES.write(conversation)
    assert out[0]["content"] == [{"type": "input_text", "text": "rules"},
                                 {"type": "input_text", "text": f"{SUMMARY_HEADER}\nS"}]
    assert items[0]["content"] == [{"type": "input_text", "text": "rules"}]  # input not mutated
    again = read(out)
    assert again.state.context_summary == "S"
    assert again.state.context[0].text() == "rules"
    assert RESPONSES.write(again) == out


def test_summary_with_a_string_input_becomes_a_list() -> None:
    conversation = read({"input": "hi", "model": "gpt-5"})
    conversation.state.context_summary = "S"
    out = RESPONSES.write(conversation)
    assert out["model"] == "gpt-5"
    assert [i["role"] for i in out["input"]] == ["developer", "user"]
    assert out["input"][1] == {"type": "message", "role": "user", "content": "hi"}


def test_summary_field_is_a_usage_error() -> None:
    conversation = read([user("a")])
    conversation.state.context_summary = "S"
    conversation.summary_as = "field"
    with pytest.raises(UsageError, match="openai-responses has no summary field"):
        RESPONSES.write(conversation)


# -- conversion into openai-responses --------------------------------------------------------------


def native(messages: list[Message], *, summary: str | None = None, container: Any = None) -> Conversation:
    state = AgentState(context=messages, context_summary=summary)
    return Conversation(state=state, format="native", container=container if container is not None else [])


def test_native_messages_render_to_valid_official_items() -> None:
    messages = [
        Message.text_message("sys", role="system"),
        Message(role="user", content=[
            TextBlock(text="look "),
            ImageBlock(media=MediaRef(kind="url", url="https://x/y.png")),
            DocumentBlock(media=MediaRef(kind="data", data_base64="JVBE", mime_type="application/pdf",
                                         filename="a.pdf")),
            AudioBlock(media=MediaRef(kind="data", data_base64="UklG", mime_type="audio/wav")),
        ]),
        Message(role="assistant", content=[ReasoningBlock(summary="hm"), TextBlock(text="calling")],
                tools_calls=[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
                             {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]),
        Message.tool_message([ToolResultBlock(call_id="c1", output={"v": 1}), ToolResultBlock(call_id="c2",
                                                                                             output="fine")]),
        Message.text_message("done", role="assistant"),
    ]
    conversation = native(messages, summary="Before.", container={"context": []})
    out = RESPONSES.write(conversation)
    assert list(out) == ["input"]
    for item in out["input"]:
        OFFICIAL.validate_python(item)
    assert [(i["type"], i.get("role")) for i in out["input"]] == [
        ("message", "system"), ("message", "developer"), ("message", "user"), ("message", "assistant"),
        ("function_call", None), ("function_call", None), ("function_call_output", None),
        ("function_call_output", None), ("message", "assistant"),
    ]
    assert out["input"][6]["output"] == '{"v": 1}'
    assert [p["type"] for p in out["input"][2]["content"]] == ["input_text", "input_image", "input_file"]
    assert "audio block in a user message" in conversation.dropped
    assert any(kind.startswith("reasoning block") for kind in conversation.dropped)
    back = read(json.loads(json.dumps(out)))
    assert back.state.context_summary == "Before."
    assert call_ids(back.state.context[2]) == ["c1", "c2"]


def test_chat_sample_converts_to_valid_responses_items() -> None:
    conversation = formats.load((SAMPLES / "openai-chat.json").read_bytes(), source="c.json")
    out = orjson.loads(formats.dump(conversation, to="openai-responses"))
    for item in out["input"]:
        OFFICIAL.validate_python(item)
    assert_valid_sequence(out["input"])
    assert conversation.warnings == []
    assert out["model"] == "gpt-4o"
    # A list: pydantic takes the extra="forbid" config for a list of TypedDicts, not for one.
    TypeAdapter(list[FunctionToolParam], config=ConfigDict(extra="forbid")).validate_python(out["tools"])
    assert out["tools"][0]["strict"] is False  # Chat functions are not strict unless they say so
    back = read(out).state.context
    chat_view = [(m.role, m.text(), call_ids(m), result_ids(m)) for m in conversation.state.context]
    assert [(m.role, m.text(), call_ids(m), result_ids(m)) for m in back] == chat_view


# -- properties ------------------------------------------------------------------------------------

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=10)


@st.composite
def responses_conversations(draw: st.DrawFn) -> Any:
    items: list[dict[str, Any]] = []
    n = 0

    def next_id(prefix: str) -> str:
        nonlocal n
        n += 1
        return f"{prefix}_{n}"

    if draw(st.booleans()):
        items.append({"type": "message", "role": draw(st.sampled_from(["system", "developer"])),
                      "content": [{"type": "input_text", "text": draw(TEXT)}]})
    for _turn in range(draw(st.integers(0, 5))):
        if draw(st.booleans()):
            items.append({"type": "item_reference", "id": next_id("ref")})
        if draw(st.booleans()):
            items.append(user(draw(TEXT)))
        else:
            items.append({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": draw(TEXT)},
                {"type": "input_image", "detail": "auto", "image_url": "https://e.com/i.png"},
            ]})
        if draw(st.booleans()):
            items.append(reasoning(next_id("rs"), draw(TEXT)))
        if draw(st.booleans()):
            items.append(answer(draw(TEXT), next_id("msg")))
        shape = draw(st.sampled_from(["calls", "server", "plain"]))
        if shape == "calls":
            ids = [next_id("call") for _ in range(draw(st.integers(1, 3)))]
            items.extend(function_call(i) for i in ids)
            items.extend(function_output(i, draw(TEXT)) for i in draw(st.permutations(ids)))
            if draw(st.booleans()):
                items.append(reasoning(next_id("rs")))
            items.append(answer(draw(TEXT), next_id("msg")))
        elif shape == "server":
            items.append({"type": "web_search_call", "id": next_id("ws"), "status": "completed",
                          "action": {"type": "search", "query": draw(TEXT)}})
            items.append(answer(draw(TEXT), next_id("msg")))
        else:
            items.append({"role": "assistant", "content": draw(TEXT)})
    if draw(st.booleans()):
        return {"model": "gpt-5", "instructions": draw(TEXT), "input": items, "store": False}
    return items


@explored(max_examples=200, deadline=None)
@given(responses_conversations())
def test_random_responses_conversations_round_trip_identically(value: Any) -> None:
    assert_round_trip(value)


@explored(max_examples=150, deadline=None)
@given(responses_conversations(), st.integers(0, 4), st.booleans())
def test_trimmed_random_conversations_keep_turns_whole(value: Any, keep: int, remove: bool) -> None:
    conversation = read(copy.deepcopy(value))
    MessageContextManager(max_messages=keep, remove_tool_msgs=remove).trim_context(conversation.state)
    kept = items_of(RESPONSES.write(conversation))
    assert_valid_sequence(kept)
    originals = items_of(value)
    assert all(item in originals for item in kept)
    assert sum(1 for i in kept if i.get("role") == "user") <= keep


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
                tools_calls=[{"id": i, "type": "function", "function": {"name": "fn", "arguments": "{}"}}
                             for i in ids],
            ))
            for i in ids:
                messages.append(Message.tool_message([ToolResultBlock(call_id=i, output=draw(TEXT))]))
        messages.append(Message.text_message(draw(TEXT), role="assistant"))
    return messages


@explored(max_examples=200, deadline=None)
@given(native_conversations())
def test_native_to_responses_to_native_keeps_roles_texts_calls_and_pairing(messages: list[Message]) -> None:
    conversation = native(messages)
    out = RESPONSES.write(conversation)
    assert conversation.warnings == []
    for item in out:
        OFFICIAL.validate_python(item)
    back = read(json.loads(json.dumps(out))).state.context
    assert view(back) == view(messages)


# -- the command line ------------------------------------------------------------------------------


def test_cli_trim_gives_back_a_responses_request() -> None:
    result = CliRunner().invoke(app, ["trim", str(SAMPLES / "openai-responses.json"), "--max-messages", "2"])
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    original = sample()
    assert list(out) == list(original)
    assert {k: v for k, v in out.items() if k != "input"} == {k: v for k, v in original.items() if k != "input"}
    assert sum(1 for i in out["input"] if i.get("role") == "user") == 2
    assert out["input"] == original["input"][-len(out["input"]):]
    assert_valid_sequence(out["input"])
