"""The LangChain adapter: ``messages_to_dict`` and ``lc`` constructor records, LangGraph
state containers, tool pairing, compaction, the summary message, conversions."""

from __future__ import annotations

import copy
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

from ctxmgr import formats
from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import CERTAIN, NO, SUMMARY_HEADER
from ctxmgr.formats._langchain import LangChainFormat
from ctxmgr.formats._records import JsonlRecords
from ctxmgr.state import MessageContextManager, SummaryContextManager, ToolResultBlock

ADAPTER = LangChainFormat()
HEADER = SUMMARY_HEADER


def _data(kind: str, content: Any, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": kind,
                            "name": None, "id": None}
    if kind == "ai":
        data.update(tool_calls=[], invalid_tool_calls=[], usage_metadata=None)
    data.update(fields)
    return {"type": kind, "data": data}


def _call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def _chat() -> list[dict[str, Any]]:
    return [
        _data("system", "You are an airline agent."),
        _data("human", "Check ABC and DEF.", id="h-1"),
        _data("ai", [{"type": "thinking", "thinking": "Two lookups.", "signature": "c2ln"},
                     {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"id": "ABC"}}],
              tool_calls=[_call("lookup", "toolu_1", id="ABC"), _call("lookup", "toolu_2", id="DEF")],
              response_metadata={"model_name": "claude-sonnet-4-5", "stop_reason": "tool_use"}),
        _data("tool", "ABC: confirmed", tool_call_id="toolu_1", artifact=None, status="success"),
        _data("tool", "DEF: not found", tool_call_id="toolu_2", artifact={"raw": 404}, status="error"),
        _data("ai", "ABC is confirmed; DEF was not found."),
        _data("human", [{"type": "text", "text": "Cancel ABC."},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]),
        _data("ai", "", tool_calls=[_call("cancel", "call_3", id="ABC")]),
        _data("tool", "cancelled", tool_call_id="call_3", artifact=None, status="success"),
        _data("ai", "Done."),
        _data("human", "Thanks!"),
    ]


def _lc(cls: str, **kwargs: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


def _lc_chat() -> list[dict[str, Any]]:
    return [
        _lc("SystemMessage", content="Be brief.", type="system"),
        _lc("HumanMessage", content="Weather in Oslo?", type="human"),
        _lc("AIMessage", content="", type="ai", tool_calls=[_call("weather", "c1", city="Oslo")],
            invalid_tool_calls=[]),
        _lc("ToolMessage", content="snow", type="tool", tool_call_id="c1", status="success"),
        _lc("AIMessageChunk", content="It snows.", type="AIMessageChunk", tool_calls=[], invalid_tool_calls=[]),
    ]


# --- detection ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [
    sample_value("langchain.json"),
    _chat(),
    _lc_chat(),
    {"messages": _chat(), "thread_id": "t-1", "remaining_steps": 24},
])
def test_detected_with_certainty(value: Any) -> None:
    assert ADAPTER.detect(value) == CERTAIN
    assert formats.detect(value, source="s").name == "langchain"


@pytest.mark.parametrize("value", [
    [],
    {"messages": []},
    [{"role": "user", "content": "hi"}],
    [{"type": "human", "text": "no content key"}],  # (a flat model_dump() holds its content)
    [{"type": "human", "data": {"text": "no content key"}}],
    [{"type": "robot", "data": {"content": "x"}}],
    [{"lc": 1, "type": "constructor", "id": ["x", "NotAMessage"], "kwargs": {}}],
    [_data("human", "ok"), {"role": "user", "content": "mixed"}],
    {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
    "hi",
    None,
])
def test_detect_rejects_other_shapes(value: Any) -> None:
    assert ADAPTER.detect(value) == NO


# --- reading ------------------------------------------------------------------------------------


def test_read_maps_types_calls_results_and_reasoning() -> None:
    context = read("langchain", _chat()).state.context
    assert [m.role for m in context] == ["system", "user", "assistant", "tool", "tool", "assistant", "user",
                                         "assistant", "tool", "assistant", "user"]
    assert context[1].message_id == "h-1"
    assert context[2].tools_calls == [
        {"id": "toolu_1", "type": "function", "function": {"name": "lookup", "arguments": '{"id": "ABC"}'}},
        {"id": "toolu_2", "type": "function", "function": {"name": "lookup", "arguments": '{"id": "DEF"}'}},
    ]
    assert reasoning_blocks(context[2])[0].summary == "Two lookups."
    assert context[2].text() == ""  # the tool_use part repeats tool_calls and is not text
    failed = context[4].content[0]
    assert isinstance(failed, ToolResultBlock)
    assert (failed.call_id, failed.output, failed.is_error) == ("toolu_2", "DEF: not found", True)
    assert context[6].text() == "Cancel ABC."


def test_lc_constructor_records_and_chunks_read_like_messages() -> None:
    context = read("langchain", _lc_chat()).state.context
    assert [m.role for m in context] == ["system", "user", "assistant", "tool", "assistant"]
    assert context[2].tools_calls == [
        {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}]
    assert context[4].text() == "It snows."


def test_legacy_function_calls_pair_by_name_and_order() -> None:
    value = [
        _data("human", "q"),
        _data("ai", "", additional_kwargs={"function_call": {"name": "f", "arguments": '{"a": 1}'}}),
        _data("function", "r1", name="f"),
        _data("ai", "", additional_kwargs={"tool_calls": [
            {"id": "call_x", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}),
        _data("tool", "r2", tool_call_id="call_x"),
        _data("chat", "an old chat message", role="assistant"),
    ]
    conversation = read("langchain", value)
    context = conversation.state.context
    assert (context[1].tools_calls or [])[0]["id"] == "langchain_f_0"
    assert [b.call_id for b in context[2].content if isinstance(b, ToolResultBlock)] == ["langchain_f_0"]
    assert (context[3].tools_calls or [])[0]["id"] == "call_x"
    assert context[5].role == "assistant"
    assert structural_problems(context) == []
    assert write(conversation) == value


def test_unknown_chat_roles_are_read_as_user_with_a_warning() -> None:
    conversation = read("langchain", [_data("chat", "hello", role="narrator")])
    assert conversation.state.context[0].role == "user"
    assert conversation.warnings == ["[0]: chat role 'narrator' is read as 'user'"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([_data("human", "a"), 3], "[1]: not a LangChain message"),
        ({"messages": "x"}, "messages: expected a list of LangChain messages, got string"),
        ([_data("human", 5)], "[0].data.content: expected a string or a list of parts, got number"),
        ([_data("human", [None])], "[0].data.content[0]: expected a string or a part object, got null"),
        ([_data("tool", "x")], "[0].data.tool_call_id: a tool message needs a non-empty string 'tool_call_id'"),
        ([_data("function", "x")], "[0].data.name: a function message needs a 'name' string"),
        ([_data("ai", "", tool_calls=[{"args": {}}])], "[0].data.tool_calls[0]: expected an object with a 'name'"),
        ([_data("ai", "", tool_calls=[{"name": "f", "args": "x"}])], "[0].data.tool_calls[0].args: expected an object"),
        ([_lc("ToolMessage", content="x")], "[0].kwargs.tool_call_id: a tool message needs"),
        ({"messages": [_data("human", "a"), {"x": 1}]}, "messages[1]: not a LangChain message"),
        (4, "expected a list of LangChain messages or an object with 'messages', got number"),
    ],
)
def test_bad_input_is_an_input_error_naming_the_json_path(value: Any, message: str) -> None:
    with pytest.raises(InputError) as caught:
        ADAPTER.read(value, source="in.json", layout="document")
    assert message in str(caught.value)


def test_jsonl_errors_name_the_line() -> None:
    records = JsonlRecords([_data("human", "a"), _data("ai", 1)], [1, 2])
    with pytest.raises(InputError) as caught:
        ADAPTER.read(records, source="c.jsonl", layout="jsonl")
    assert str(caught.value) == "c.jsonl:2: data.content: expected a string or a list of parts, got number"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "data", "content", "tool_calls", "tool_call_id", "name", "args", "id", "lc",
                         "kwargs", "additional_kwargs", "function_call", "role", "status", "messages"]),
        inner, max_size=4),
    max_leaves=20,
)
_RECORD = st.builds(lambda kind, data: {"type": kind, "data": data},
                    st.sampled_from(["human", "ai", "tool", "function", "chat", "system"]),
                    st.dictionaries(st.sampled_from(["content", "tool_calls", "tool_call_id", "name",
                                                     "additional_kwargs", "role", "status", "id"]), _JSON))


@explored(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_JSON, st.lists(_RECORD, max_size=4)))
def test_any_json_is_read_or_refused_with_an_input_error(value: Any) -> None:
    assert ADAPTER.detect(value) in (NO, CERTAIN)
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


# --- lossless round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [
    _chat(),
    _lc_chat(),
    {"messages": _chat(), "thread_id": "t-1", "summary": None},
    [_data("ai", "x", invalid_tool_calls=[{"name": "f", "args": "{bad", "id": "c9", "error": "bad json"}]),
     _data("tool", "could not parse", tool_call_id="c9", status="error")],
])
def test_read_then_write_gives_back_the_input(value: Any) -> None:
    assert write(read("langchain", value)) == value


def test_sample_round_trips_through_bytes() -> None:
    data = sample_bytes("langchain.json")
    conversation = formats.load(data, source="langchain.json")
    assert conversation.format == "langchain"
    assert orjson.loads(formats.dump(conversation)) == orjson.loads(data)


# --- compaction ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", range(0, 5))
def test_trim_keeps_records_and_pairing(keep: int) -> None:
    value = {"messages": _chat(), "thread_id": "t-1"}
    conversation = read("langchain", value)
    MessageContextManager(max_messages=keep).trim_context(conversation.state)
    out = write(conversation)
    assert out["thread_id"] == "t-1"
    assert out["messages"][0] == value["messages"][0]  # the system message stays
    rest = out["messages"][1:]
    assert rest == value["messages"][len(value["messages"]) - len(rest):]
    assert len([m for m in rest if m["type"] == "human"]) == min(keep, 3)
    assert structural_problems(read("langchain", out).state.context) == []


def test_remove_tool_msgs_drops_completed_sequences() -> None:
    conversation = read("langchain", _chat())
    MessageContextManager(max_messages=10, remove_tool_msgs=True).trim_context(conversation.state)
    assert write(conversation) == [_chat()[i] for i in (0, 1, 5, 6, 9, 10)]


@pytest.mark.parametrize("keep_recent", range(0, 10))
def test_summarize_never_splits_parallel_calls_from_their_results(keep_recent: int) -> None:
    conversation = read("langchain", _chat())
    manager: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=3, keep_recent=keep_recent, summarizer=FixedSummarizer("S1"))
    manager.trim_context(conversation.state)
    out = write(conversation)
    assert structural_problems(read("langchain", out).state.context) == []
    if conversation.state.context_summary:
        assert out[0] == _chat()[0]
        assert out[1] == _data("system", f"{HEADER}\nS1")


def test_summary_message_sits_after_the_system_messages_and_a_second_run_appends() -> None:
    conversation = read("langchain", _chat())
    first: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=3, keep_recent=2, summarizer=FixedSummarizer("S1"))
    first.trim_context(conversation.state)
    out = orjson.loads(formats.dump(conversation))
    assert [r["type"] for r in out[:2]] == ["system", "system"]
    again = formats.load(orjson.dumps(out), source="again.json")
    assert again.state.context_summary == "S1"
    assert sum(1 for m in again.state.context if m.role == "system") == 1
    again.state.context[1:1] = read("langchain", [_data("human", "a"), _data("ai", "b")]).state.context
    second: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=2, keep_recent=2, summarizer=FixedSummarizer("S2"))
    second.trim_context(again.state)
    final = orjson.loads(formats.dump(again))
    summaries = [r for r in final if r["type"] == "system" and r["data"]["content"].startswith(HEADER)]
    assert summaries == [_data("system", f"{HEADER}\nS1\n\nS2")]


def test_summary_in_lc_form_files_is_an_lc_record() -> None:
    conversation = read("langchain", _lc_chat())
    conversation.state.context_summary = "S"
    out = write(conversation)
    assert out[1] == _lc("SystemMessage", content=f"{HEADER}\nS", type="system")
    assert read("langchain", out).state.context_summary == "S"


def test_summary_as_field_is_a_usage_error() -> None:
    conversation = read("langchain", _chat())
    conversation.summary_as = "field"
    with pytest.raises(UsageError, match="no summary field"):
        write(conversation)


# --- conversion -------------------------------------------------------------------------------------------


def test_native_sample_converts_to_langchain() -> None:
    conversation = formats.load(sample_bytes("support-chat.json"), source="support-chat.json")
    value, back = convert(conversation, "langchain")
    assert {r["type"] for r in value} <= {"system", "human", "ai", "tool"}
    assert view(back.state.context) == view(conversation.state.context)


def test_anthropic_text_beside_tool_results_becomes_a_human_message() -> None:
    anthropic = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"},
                                     {"type": "text", "text": "and thanks"}]},
    ]
    conversation = formats.load(orjson.dumps(anthropic), source="a.json", fmt="anthropic")
    out = orjson.loads(formats.dump(conversation, to="langchain"))
    assert [r["type"] for r in out] == ["ai", "tool", "human"]
    assert out[1]["data"]["tool_call_id"] == "t1"
    assert out[2]["data"]["content"] == "and thanks"


@explored(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(native_conversations())
def test_native_to_langchain_to_native_keeps_the_conversation(state: Any) -> None:
    conversation = native_conversation(state)
    expected = view(state.context)
    value, back = convert(conversation, "langchain")
    assert all(r["type"] in ("system", "human", "ai", "tool") for r in value)
    assert view(back.state.context) == expected
    assert pairing(back.state.context) == pairing(state.context)
    native_again = formats.load(formats.dump(back, to="native"), source="n.json", fmt="native")
    assert view(native_again.state.context) == expected
    _official_check(value)


def _official_check(value: list[dict[str, Any]]) -> None:
    """Load with langchain_core when it is installed (it is not a test dependency)."""
    try:
        from langchain_core.messages import messages_from_dict
    except ImportError:
        return
    messages = messages_from_dict(value)
    assert [m.type for m in messages] == [r["type"] for r in value]


def test_langchain_core_reads_what_we_write() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import AIMessage, ToolMessage, messages_from_dict, messages_to_dict

    conversation = formats.load(sample_bytes("anthropic.json"), source="anthropic.json")
    conversation.state.context_summary = "S"
    out = orjson.loads(formats.dump(conversation, to="langchain"))
    # The request's other keys (model, tools...) stay beside the messages.
    assert out["model"] == orjson.loads(sample_bytes("anthropic.json"))["model"]
    messages = messages_from_dict(out["messages"])
    calls = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    results = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert sorted(str(c) for c in calls) == sorted(results)
    assert None not in calls
    assert messages_to_dict(messages) == out["messages"]


# --- properties: random LangChain files round-trip exactly ----------------------------------------------


@st.composite
def langchain_files(draw: st.DrawFn) -> Any:
    lc_form = draw(st.booleans())

    def record(kind: str, content: Any, **fields: Any) -> dict[str, Any]:
        if lc_form:
            cls = {"system": "SystemMessage", "human": "HumanMessage", "ai": "AIMessage", "tool": "ToolMessage"}
            return _lc(cls[kind], content=content, type=kind, **fields)
        return _data(kind, content, **fields)

    records: list[Any] = []
    if draw(st.booleans()):
        records.append(record("system", draw(TEXT)))
    counter = 0
    for _ in range(draw(st.integers(1, 5))):
        records.append(record("human", draw(st.one_of(TEXT, st.lists(
            st.builds(lambda t: {"type": "text", "text": t}, TEXT), min_size=1, max_size=2)))))
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            counter += 1
            calls.append(_call(draw(st.sampled_from(["a", "b"])), f"c{counter}", q=draw(TEXT)))
        records.append(record("ai", draw(TEXT) if not calls else "", tool_calls=calls))
        for call in calls:
            records.append(record("tool", draw(TEXT), tool_call_id=call["id"],
                                  status=draw(st.sampled_from(["success", "error"]))))
    if draw(st.booleans()):
        return {"messages": records, "extra": draw(st.integers(0, 9))}
    return records


@explored(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(langchain_files())
def test_random_langchain_files_round_trip_identically(value: Any) -> None:
    original = copy.deepcopy(value)
    conversation = formats.load(orjson.dumps(value), source="r.json")
    assert conversation.format == "langchain"
    assert orjson.loads(formats.dump(conversation)) == original
    assert structural_problems(conversation.state.context) == []


def test_cli_convert_langchain_to_anthropic_gives_valid_params() -> None:
    from anthropic.types import MessageParam
    from pydantic import TypeAdapter
    from typer.testing import CliRunner

    from ctxmgr.cli import app

    result = CliRunner().invoke(app, ["convert", "samples/langchain.json", "--to", "anthropic"])
    assert result.exit_code == 0, result.output
    out = orjson.loads(result.stdout)
    assert isinstance(out["system"], str)
    TypeAdapter(list[MessageParam]).validate_python(out["messages"])
    # the three parallel results, one LangChain ToolMessage each, share one user message
    results = [m for m in out["messages"] if m["role"] == "user" and isinstance(m["content"], list)
               and all(b["type"] == "tool_result" for b in m["content"])]
    assert sorted(len(m["content"]) for m in results) == [1, 1, 3]


def test_a_native_summary_converts_into_a_system_message() -> None:
    conversation = formats.load(sample_bytes("support-chat.json"), source="support-chat.json")
    conversation.state.context_summary = "Earlier: refund discussed."
    value, back = convert(conversation, "langchain")
    assert value[1] == _data("system", f"{HEADER}\nEarlier: refund discussed.")
    assert back.state.context_summary == "Earlier: refund discussed."


def test_responses_item_ids_become_the_langchain_messages_ids_and_the_rest_are_counted() -> None:
    request = {
        "input": [
            {"type": "message", "id": "msg_1", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "message", "id": "msg_2", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "id": "fco_1", "call_id": "call_1", "output": "done"},
        ]
    }
    conversation = formats.load(orjson.dumps(request), source="r.json")
    written = orjson.loads(formats.dump(conversation, to="langchain"))
    messages = written["messages"] if isinstance(written, dict) else written
    assert [m["data"]["id"] for m in messages] == ["msg_1", "msg_2", "fco_1"]
    # The assistant's message and its call are one LangChain message: the call's item id has no place.
    assert conversation.dropped == {"Responses item id (a LangChain message has one id)": 1}
