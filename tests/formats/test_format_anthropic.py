"""The Anthropic Messages adapter: detection, lossless round trips, compaction, summary
placement, conversion checked against the ``anthropic`` package's own param types."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import orjson
import pytest
from _fast_paths import explored
from _format_support import (
    TEXT,
    FixedSummarizer,
    convert,
    native_conversation,
    native_conversations,
    pairing,
    read,
    reasoning_blocks,
    sample_bytes,
    sample_value,
    structural_problems,
    view,
    write,
)
from hypothesis import HealthCheck, given, strategies as st
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr.errors import FormatDetectionError, InputError, UsageError
from ctxmgr.formats._anthropic import AnthropicFormat
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE, SUMMARY_HEADER
from ctxmgr.formats._records import JsonlRecords
from ctxmgr.state import (
    MessageContextManager,
    SummaryContextManager,
    ToolResultBlock,
)

ADAPTER = AnthropicFormat()


def _chat() -> dict[str, Any]:
    """A small request with parallel calls, thinking, cache_control and unknown keys."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "system": [{"type": "text", "text": "You are an airline agent.", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "get_reservation", "input_schema": {"type": "object"}}],
        "x-dataset-row": 7,
        "messages": [
            {"role": "user", "content": "Check reservations ABC and DEF."},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Two lookups.", "signature": "c2lnLTE="},
                {"type": "tool_use", "id": "toolu_1", "name": "get_reservation", "input": {"id": "ABC"}},
                {"type": "tool_use", "id": "toolu_2", "name": "get_reservation", "input": {"id": "DEF"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ABC: confirmed"},
                {"type": "tool_result", "tool_use_id": "toolu_2",
                 "content": [{"type": "text", "text": "DEF: not found"}], "is_error": True},
            ]},
            {"role": "assistant", "content": [{"type": "text", "text": "ABC is confirmed; DEF was not found.",
                                               "citations": None}]},
            {"role": "user", "x-note": "kept",
             "content": [{"type": "text", "text": "Cancel ABC.", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [
                {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
                {"type": "tool_use", "id": "toolu_3", "name": "cancel", "input": {"id": "ABC"}},
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3", "content": "cancelled"}]},
            {"role": "assistant", "content": "Done: ABC is cancelled."},
            {"role": "user", "content": "Thanks!"},
        ],
    }


# --- detection --------------------------------------------------------------------------


def test_sample_is_detected_with_certainty() -> None:
    value = sample_value("anthropic.json")
    assert ADAPTER.detect(value) == CERTAIN
    assert formats.detect(value, source="s").name == "anthropic"


@pytest.mark.parametrize(
    ("value", "score"),
    [
        ([{"role": "user", "content": "hi"}], PLAUSIBLE),
        ({"messages": [{"role": "user", "content": "hi"}]}, PLAUSIBLE),
        ({"system": "be brief", "messages": [{"role": "user", "content": "hi"}]}, CERTAIN),
        ({"model": "claude-opus-4", "messages": [{"role": "user", "content": "hi"}]}, CERTAIN),
        ({"messages": [{"role": "user", "content": "hi"}], "tools": [{"name": "f", "input_schema": {}}]}, CERTAIN),
        ([{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}], CERTAIN),
        ([{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}]}],
         CERTAIN),
        ([{"role": "user", "content": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}]}],
         CERTAIN),
    ],
)
def test_detect_scores(value: Any, score: int) -> None:
    assert ADAPTER.detect(value) == score


@pytest.mark.parametrize(
    "value",
    [
        [],
        {"messages": []},
        [{"role": "tool", "tool_call_id": "c", "content": "x"}],
        [{"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]}],
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x"}}]}],
        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        [{"type": "human", "data": {"content": "hi"}}],
        [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        {"context": []},
        "text",
        42,
        None,
    ],
)
def test_detect_rejects_other_shapes(value: Any) -> None:
    assert ADAPTER.detect(value) == NO


def test_a_plain_message_list_goes_to_openai_chat_which_wins_ties() -> None:
    value = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert ADAPTER.detect(value) == PLAUSIBLE
    assert formats.detect(value, source="s").name == "openai-chat"


def test_garbage_is_not_recognised_by_any_format() -> None:
    with pytest.raises(FormatDetectionError):
        formats.detect({"foo": [1, 2]}, source="s")


# --- reading ----------------------------------------------------------------------------


def test_read_maps_roles_calls_results_and_thinking() -> None:
    conversation = read("anthropic", _chat())
    roles = [m.role for m in conversation.state.context]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant",
                     "user"]
    system, _, caller, results = conversation.state.context[:4]
    assert system.text() == "You are an airline agent."
    assert caller.tools_calls == [
        {"id": "toolu_1", "type": "function", "function": {"name": "get_reservation", "arguments": '{"id": "ABC"}'}},
        {"id": "toolu_2", "type": "function", "function": {"name": "get_reservation", "arguments": '{"id": "DEF"}'}},
    ]
    assert [b.details for b in reasoning_blocks(caller)] == [_chat()["messages"][1]["content"][0]]
    blocks = [b for b in results.content if isinstance(b, ToolResultBlock)]
    assert [(b.call_id, b.output, b.is_error) for b in blocks] == [
        ("toolu_1", "ABC: confirmed", False), ("toolu_2", "DEF: not found", True),
    ]
    assert results.text() == "ABC: confirmedDEF: not found"


def test_tool_result_with_text_beside_it_is_one_tool_message_keeping_the_text() -> None:
    value = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"},
                                     {"type": "text", "text": "and also..."}]},
    ]
    message = read("anthropic", value).state.context[1]
    assert message.role == "tool"
    assert message.text() == "42and also..."


def test_unknown_blocks_are_carried_in_the_record_and_as_passthrough() -> None:
    server = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "x"}}
    found = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    value = [{"role": "user", "content": "search"}, {"role": "assistant", "content": [server, found]}]
    conversation = read("anthropic", value)
    assert write(conversation) == value
    passthrough = conversation.state.context[1].content
    assert [(b.model_extra or {})["block"] for b in passthrough] == [server, found]
    converted, _ = convert(conversation, "gemini")
    assert converted["contents"][1]["parts"] == []
    assert "anthropic server_tool_use block" in conversation.dropped


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"messages": "nope"}, "messages: expected a list of messages, got string"),
        ({"system": 3, "messages": []}, "system: expected a string or a list of text blocks, got number"),
        ({"system": [{"type": "image"}], "messages": []}, "system[0]: expected a text block"),
        ({"messages": [{"role": "user", "content": "a"}, 5]}, "messages[1]: expected a message object, got number"),
        ({"messages": [{"role": "bot", "content": "a"}]}, "messages[0].role: expected 'user' or 'assistant'"),
        ({"messages": [{"role": "user"}]}, "messages[0].content: required field is missing"),
        ({"messages": [{"role": "user", "content": 1}]}, "messages[0].content: expected a string or a list"),
        ({"messages": [{"role": "user", "content": [{"text": "x"}]}]}, "messages[0].content[0]: expected a content"),
        ({"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]},
         "messages[0].content[0].tool_use_id: a tool_result block needs"),
        ({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": []}]}]},
         "messages[0].content[0].input: expected an object, got array"),
        ([{"role": "user", "content": [{"type": "text", "text": None}]}], "[0].content[0].text: a text block needs"),
        ("just text", "expected an object with 'messages' or a list of messages, got string"),
    ],
)
def test_bad_input_is_an_input_error_naming_the_json_path(value: Any, message: str) -> None:
    with pytest.raises(InputError) as caught:
        ADAPTER.read(value, source="in.json", layout="document")
    assert message in str(caught.value)
    assert str(caught.value).startswith("in.json: ")


def test_jsonl_errors_name_the_line() -> None:
    records = JsonlRecords([{"role": "user", "content": "a"}, {"role": "user", "content": 3}], [1, 4])
    with pytest.raises(InputError) as caught:
        ADAPTER.read(records, source="in.jsonl", layout="jsonl")
    assert str(caught.value) == "in.jsonl:4: content: expected a string or a list of blocks, got number"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["role", "content", "type", "text", "id", "input", "tool_use_id", "system", "messages",
                         "name", "source", "is_error"]), inner, max_size=5),
    max_leaves=20,
)


@explored(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_JSON, st.fixed_dictionaries({"messages": st.lists(_JSON, max_size=4)}, optional={"system": _JSON})))
def test_any_json_is_read_or_refused_with_an_input_error(value: Any) -> None:
    assert ADAPTER.detect(value) in (NO, PLAUSIBLE, CERTAIN)
    refused: str | None
    try:
        conversation = ADAPTER.read(value, source="fuzz.json", layout="document")
    except InputError as caught:
        refused = str(caught)
    else:
        refused = None
    if refused is not None:
        assert "cannot read this" not in refused  # a checked path, not the last-resort guard
        return
    assert write(conversation) == value


# --- lossless round trips -----------------------------------------------------------------


@pytest.mark.parametrize("value", [
    _chat(),
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "text", "text": "hey"}]}],
    {"system": "", "messages": []},
    {"system": None, "messages": [{"role": "user", "content": ""}]},
    {"system": "plain", "messages": [{"role": "system", "content": "in-list system"},
                                     {"role": "user", "content": "hi"}]},
    {"messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "terms"}, "title": "T"},
        {"type": "search_result", "source": "https://x", "title": "x", "content": []},
    ]}]},
])
def test_read_then_write_gives_back_the_input(value: Any) -> None:
    assert write(read("anthropic", value)) == value


def test_sample_round_trips_through_bytes() -> None:
    data = sample_bytes("anthropic.json")
    conversation = formats.load(data, source="anthropic.json")
    assert conversation.format == "anthropic"
    assert orjson.loads(formats.dump(conversation)) == orjson.loads(data)


def test_jsonl_round_trip() -> None:
    data = b'{"role":"user","content":"hi"}\n{"role":"assistant","content":[{"type":"text","text":"yo"}]}\n'
    conversation = formats.load(data, source="c.jsonl", fmt="anthropic")
    assert conversation.layout == "jsonl"
    assert formats.dump(conversation).splitlines() == [orjson.dumps(orjson.loads(x)) for x in data.splitlines()]


# --- compaction -------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", range(0, 5))
def test_trim_keeps_system_container_and_untouched_records(keep: int) -> None:
    value = _chat()
    conversation = read("anthropic", value)
    records = {id(m.source[0]) for m in conversation.state.context if m.source}
    MessageContextManager(max_messages=keep).trim_context(conversation.state)
    out = write(conversation)
    assert out["system"] == value["system"]
    assert {k: v for k, v in out.items() if k != "messages"} == {k: v for k, v in value.items() if k != "messages"}
    assert all(id(r) in records for r in out["messages"])  # the very records read, not copies
    assert out["messages"] == value["messages"][len(value["messages"]) - len(out["messages"]):]
    assert structural_problems(read("anthropic", out).state.context, "anthropic") == []
    users = [m for m in out["messages"] if m["role"] == "user" and not _has_results(m)]
    assert len(users) == min(keep, 3)


def _has_results(record: dict[str, Any]) -> bool:
    content = record["content"]
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def test_remove_tool_msgs_drops_completed_sequences_with_their_thinking() -> None:
    conversation = read("anthropic", _chat())
    MessageContextManager(max_messages=10, remove_tool_msgs=True).trim_context(conversation.state)
    out = write(conversation)
    assert out["messages"] == [_chat()["messages"][i] for i in (0, 3, 4, 7, 8)]
    text = json.dumps(out["messages"])
    assert "tool_use" not in text
    assert "tool_result" not in text
    assert "thinking" not in text


@pytest.mark.parametrize("keep_recent", range(0, 9))
def test_summarize_never_splits_parallel_calls_from_their_results(keep_recent: int) -> None:
    conversation = read("anthropic", _chat())
    manager: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=3, keep_recent=keep_recent, summarizer=FixedSummarizer("S1"),
    )
    manager.trim_context(conversation.state)
    out = write(conversation)
    again = read("anthropic", out)
    assert structural_problems(again.state.context, "anthropic") == []
    first = out["messages"][0] if out["messages"] else None
    assert first is None or not _has_results(first)
    if conversation.state.context_summary:
        assert out["system"][-1] == {"type": "text", "text": f"{SUMMARY_HEADER}\nS1"}
        assert out["system"][0] == _chat()["system"][0]


def test_summary_goes_into_system_and_a_second_run_appends() -> None:
    conversation = read("anthropic", _chat())
    first_manager: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=3, keep_recent=2, summarizer=FixedSummarizer("S1")
    )
    first_manager.trim_context(conversation.state)
    first = orjson.loads(formats.dump(conversation))
    assert [b["text"] for b in first["system"]] == ["You are an airline agent.", f"{SUMMARY_HEADER}\nS1"]
    second_run = formats.load(orjson.dumps(first), source="again.json")
    assert second_run.state.context_summary == "S1"
    assert second_run.state.context[0].role == "system"
    second_run.state.context.insert(1, read("anthropic", [{"role": "user", "content": "more"}]).state.context[0])
    second_run.state.context.insert(2, read("anthropic", [{"role": "assistant", "content": "ok"}]).state.context[0])
    second_manager: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=2, keep_recent=2, summarizer=FixedSummarizer("S2")
    )
    second_manager.trim_context(second_run.state)
    out = orjson.loads(formats.dump(second_run))
    assert [b["text"] for b in out["system"]] == ["You are an airline agent.", f"{SUMMARY_HEADER}\nS1\n\nS2"]


def test_string_system_stays_a_string() -> None:
    value = {"system": "Be brief.", "messages": [{"role": "user", "content": "a"}]}
    conversation = read("anthropic", value)
    conversation.state.context_summary = "S"
    out = write(conversation)
    assert out == {"system": f"Be brief.\n\n{SUMMARY_HEADER}\nS", "messages": value["messages"]}
    again = read("anthropic", out)
    assert again.state.context_summary == "S"
    assert again.state.context[0].text() == "Be brief."
    assert write(again) == out


def test_summary_as_message_merges_into_the_first_user_message() -> None:
    value = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    conversation = read("anthropic", value)
    conversation.state.context_summary = "S"
    conversation.summary_as = "message"
    out = write(conversation)
    assert out["messages"][0] == {"role": "user", "content": [
        {"type": "text", "text": f"{SUMMARY_HEADER}\nS"}, {"type": "text", "text": "hi"}]}
    assert [m["role"] for m in out["messages"]] == ["user", "assistant"]  # still alternating
    again = read("anthropic", out)
    assert again.state.context_summary == "S"
    assert again.state.context[0].text() == "hi"
    again.summary_as = "message"
    assert write(again) == out


def test_summary_as_message_before_an_assistant_turn_is_its_own_user_message() -> None:
    conversation = read("anthropic", [{"role": "assistant", "content": "hello"}])
    conversation.state.context_summary = "S"
    out = write(conversation)  # a list has no 'system': the message slot is used
    assert out == [{"role": "user", "content": [{"type": "text", "text": f"{SUMMARY_HEADER}\nS"}]},
                   {"role": "assistant", "content": "hello"}]
    assert read("anthropic", out).state.context_summary == "S"
    assert len(read("anthropic", out).state.context) == 1


def test_summary_as_field_is_a_usage_error() -> None:
    conversation = read("anthropic", _chat())
    conversation.summary_as = "field"
    with pytest.raises(UsageError, match="no summary field"):
        write(conversation)


# --- conversion, checked against the anthropic package's types ------------------------------


def _official_check(value: dict[str, Any]) -> None:
    """Validate a request against ``anthropic.types``; unknown keys are errors too."""
    from anthropic.types import (
        DocumentBlockParam,
        ImageBlockParam,
        MessageParam,
        RedactedThinkingBlockParam,
        TextBlockParam,
        ThinkingBlockParam,
        ToolResultBlockParam,
        ToolUseBlockParam,
    )
    from pydantic import TypeAdapter

    by_type: dict[str, Any] = {
        "text": TextBlockParam, "image": ImageBlockParam, "document": DocumentBlockParam,
        "tool_use": ToolUseBlockParam, "tool_result": ToolResultBlockParam, "thinking": ThinkingBlockParam,
        "redacted_thinking": RedactedThinkingBlockParam,
    }
    system = value.get("system")
    if system is not None:
        TypeAdapter(str | list[TextBlockParam]).validate_python(system)
    messages = TypeAdapter(list[MessageParam]).validate_python(value["messages"])
    assert len(messages) == len(value["messages"])
    for message in value["messages"]:
        assert set(message) == {"role", "content"}
        assert message["role"] in ("user", "assistant")
        for block in message["content"] if isinstance(message["content"], list) else ():
            kind = by_type[block["type"]]
            assert set(block) <= kind.__required_keys__ | kind.__optional_keys__, block
            TypeAdapter(kind).validate_python(block)


def test_native_sample_converts_to_valid_anthropic() -> None:
    conversation = formats.load(sample_bytes("support-chat.json"), source="support-chat.json")
    value, back = convert(conversation, "anthropic")
    _official_check(value)
    assert isinstance(value["system"], str)
    assert view(back.state.context) == view(conversation.state.context)


@explored(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(native_conversations())
def test_native_to_anthropic_to_native_keeps_the_conversation(state: Any) -> None:
    conversation = native_conversation(state)
    expected = view(state.context)
    value, back = convert(conversation, "anthropic")
    _official_check(value)
    roles = [m["role"] for m in value["messages"]]
    assert all(a != b or a == "user" for a, b in itertools.pairwise(roles))  # assistants never repeat
    assert view(back.state.context) == expected
    assert pairing(back.state.context) == pairing(state.context)
    assert structural_problems(back.state.context, "anthropic") == []  # all results of a turn in one message
    native_again = orjson.loads(formats.dump(back, to="native"))
    reread = formats.load(orjson.dumps(native_again), source="n.json", fmt="native")
    assert view(reread.state.context) == expected


def test_conversion_warns_instead_of_dropping_silently() -> None:
    gemini = {"contents": [{"role": "model", "parts": [
        {"text": "t", "thought": True}, {"executableCode": {"language": "PYTHON", "code": "1"}}]}],
        "generationConfig": {"temperature": 0}}
    conversation = formats.load(orjson.dumps(gemini), source="g.json")
    converted = orjson.loads(formats.dump(conversation, to="anthropic"))
    # Reasoning, server code execution and sampling settings have no place in Anthropic's.
    assert converted == {"messages": [{"role": "assistant", "content": []}]}
    assert conversation.dropped == {
        "reasoning block (Anthropic takes only its own signed thinking blocks)": 1,
        "gemini executableCode block": 1,
        "request setting temperature (the Anthropic API has none)": 1,
    }


# --- properties: random Anthropic files round-trip exactly ---------------------------------

_EXTRA = st.dictionaries(st.sampled_from(["x-meta", "cache_control", "citations"]),
                         st.one_of(st.none(), st.just({"type": "ephemeral"}), TEXT), max_size=2)


@st.composite
def anthropic_files(draw: st.DrawFn) -> Any:
    messages: list[Any] = []
    pending: list[str] = []
    counter = 0
    for _ in range(draw(st.integers(0, 6))):
        if pending:
            results = [{"type": "tool_result", "tool_use_id": p,
                        "content": draw(st.one_of(TEXT, st.just([{"type": "text", "text": "r"}]))),
                        **({"is_error": True} if draw(st.booleans()) else {})} for p in pending]
            messages.append({"role": "user", "content": results})
            pending = []
        else:
            content: Any = draw(st.one_of(TEXT, st.lists(
                st.builds(lambda t, e: {"type": "text", "text": t, **e}, TEXT, _EXTRA), min_size=1, max_size=2)))
            messages.append({"role": "user", "content": content})
        blocks: list[Any] = []
        if draw(st.booleans()):
            blocks.append({"type": "thinking", "thinking": draw(TEXT), "signature": draw(TEXT)})
        if draw(st.booleans()):
            blocks.append({"type": "text", "text": draw(TEXT), **draw(_EXTRA)})
        for _ in range(draw(st.integers(0, 2))):
            counter += 1
            pending.append(f"toolu_{counter}")
            blocks.append({"type": "tool_use", "id": f"toolu_{counter}", "name": "f", "input": {"n": counter}})
        if draw(st.booleans()):
            blocks.append({"type": "server_tool_use", "id": f"srv_{counter}", "name": "web_search", "input": {}})
        messages.append({"role": "assistant", "content": blocks if blocks else draw(TEXT)})
    container = draw(st.sampled_from(["list", "dict"]))
    if container == "list":
        return messages
    value: dict[str, Any] = {}
    if draw(st.booleans()):
        value["model"] = "claude-haiku-4-5"
    system = draw(st.one_of(st.none(), TEXT, st.lists(
        st.builds(lambda t, e: {"type": "text", "text": t, **e}, TEXT, _EXTRA), max_size=2)))
    if system is not None:
        value["system"] = system
    value["messages"] = messages
    extra_keys = st.sampled_from(["metadata", "temperature", "row"])
    value.update(draw(st.dictionaries(extra_keys, st.integers(0, 9), max_size=2)))
    return value


@explored(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anthropic_files())
def test_random_anthropic_files_round_trip_identically(value: Any) -> None:
    original = copy.deepcopy(value)
    conversation = formats.load(orjson.dumps(value), source="r.json", fmt="anthropic")
    assert orjson.loads(formats.dump(conversation)) == original
    if value and (ADAPTER.detect(value) == CERTAIN):
        assert formats.detect(value, source="r.json").name == "anthropic"


# --- the CLI ------------------------------------------------------------------------------------


def test_cli_trim_keeps_system_model_and_tools() -> None:
    from ctxmgr.cli import app

    value = sample_value("anthropic.json")
    result = CliRunner().invoke(app, ["trim", "samples/anthropic.json", "--max-messages", "2", "--no-view"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    for key in ("system", "model", "tools", "max_tokens", "thinking", "metadata"):
        assert out[key] == value[key]
    assert len(out["messages"]) < len(value["messages"])
    users = [m for m in out["messages"] if m["role"] == "user" and not _has_results(m)]
    assert len(users) == 2
    assert out["messages"] == value["messages"][-len(out["messages"]):]


def test_warnings_are_grouped_one_line_per_reason() -> None:
    from ctxmgr.state import AgentState, Message, ReasoningBlock, TextBlock

    state = AgentState(context=[
        Message.text_message("q"),
        Message(role="assistant", content=[ReasoningBlock(summary="hmm"), TextBlock(text="a")]),
        Message.text_message("q2"),
        Message(role="assistant", content=[ReasoningBlock(summary="hmm"), TextBlock(text="b")]),
    ])
    conversation = native_conversation(state)
    value, _ = convert(conversation, "anthropic")
    assert [m["content"] for m in value["messages"]] == ["q", "a", "q2", "b"]
    assert conversation.warnings == []
    assert conversation.dropped == {"reasoning block (Anthropic takes only its own signed thinking blocks)": 2}


def test_jsonl_conversion_keeps_the_system_prompt_as_a_system_message() -> None:
    from anthropic.types import MessageParam
    from pydantic import TypeAdapter

    data = (b'{"role":"system","content":[{"type":"text","text":"Be kind."}]}\n'
            b'{"role":"user","content":[{"type":"text","text":"hi"}]}\n')
    conversation = formats.load(data, source="n.jsonl", fmt="native")
    out = [orjson.loads(line) for line in formats.dump(conversation, to="anthropic").splitlines()]
    assert out == [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}]
    TypeAdapter(list[MessageParam]).validate_python(out)
    assert conversation.warnings == []
    back = formats.load(formats.dump(conversation, to="anthropic"), source="a.jsonl", fmt="anthropic")
    assert [(m.role, m.text()) for m in back.state.context] == [("system", "Be kind."), ("user", "hi")]


def test_summary_message_goes_after_system_role_messages_in_a_list() -> None:
    value = [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "hi"}]
    conversation = read("anthropic", value)
    conversation.state.context_summary = "S"
    out = write(conversation)
    assert out == [{"role": "system", "content": "Be kind."},
                   {"role": "user", "content": [{"type": "text", "text": f"{SUMMARY_HEADER}\nS"},
                                                {"type": "text", "text": "hi"}]}]
    again = read("anthropic", out)
    assert again.state.context_summary == "S"
    assert [(m.role, m.text()) for m in again.state.context] == [("system", "Be kind."), ("user", "hi")]
    assert write(again) == out


def test_a_native_summary_converts_into_system() -> None:
    conversation = formats.load(sample_bytes("support-chat.json"), source="support-chat.json")
    conversation.state.context_summary = "Earlier: refund discussed."
    value, back = convert(conversation, "anthropic")
    assert value["system"].endswith(f"\n\n{SUMMARY_HEADER}\nEarlier: refund discussed.")
    assert back.state.context_summary == "Earlier: refund discussed."
    assert back.state.context[0].text() == conversation.state.context[0].text()


# -- assistant messages stored as the Messages API answered them ------------------------------

_STORED = {  # what messages.append(response.model_dump()) keeps
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "text", "text": "Let me look that up."},
        {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 12, "output_tokens": 30},
}
_PLAIN_STORED = {**_STORED, "content": [{"type": "text", "text": "4"}], "stop_reason": "end_turn"}


@pytest.mark.parametrize("stored", [_STORED, _PLAIN_STORED], ids=["tool-use", "text"])
@pytest.mark.parametrize("container", ["list", "request"])
def test_a_stored_response_is_read_as_anthropic_unasked(stored: dict[str, Any], container: str) -> None:
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Paris?"}, stored]
    if stored is _STORED:
        result = {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "18C"}
        messages.append({"role": "user", "content": [result]})
    value: Any = messages if container == "list" else {"model": "claude-sonnet-4-5", "messages": messages}
    assert formats.detect(value, source="s").name == "anthropic"
    conversation = formats.load(orjson.dumps(value), source="s.json")
    assert conversation.format == "anthropic"
    assert conversation.state.context[1].role == "assistant"
    assert orjson.loads(formats.dump(conversation)) == value  # written back as it was, keys and all


def test_a_responses_message_item_is_not_taken_for_a_stored_response() -> None:
    item = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "4"}]}
    assert formats.detect([{"role": "user", "content": "2+2?"}, item], source="s").name == "openai-responses"
