"""The Gemini adapter: camelCase and snake_case, id-less call pairing, thought signatures,
compaction, summary placement, conversion checked against ``google.genai.types.Content``."""

from __future__ import annotations

import copy
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

from ctxmgr import formats
from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE, SUMMARY_HEADER
from ctxmgr.formats._gemini import GeminiFormat
from ctxmgr.formats._records import JsonlRecords
from ctxmgr.state import MessageContextManager, SummaryContextManager, ToolResultBlock

ADAPTER = GeminiFormat()
HEADER = SUMMARY_HEADER


def _rest() -> dict[str, Any]:
    """REST spelling; parallel calls without ids; thought parts and signatures."""
    return {
        "systemInstruction": {"parts": [{"text": "You are an airline agent."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Check ABC and DEF."}]},
            {"role": "model", "parts": [
                {"text": "Two lookups needed.", "thought": True},
                {"functionCall": {"name": "get_reservation", "args": {"id": "ABC"}}, "thoughtSignature": "c2ln"},
                {"functionCall": {"name": "get_reservation", "args": {"id": "DEF"}}},
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "get_reservation", "response": {"output": "ABC: confirmed"}}},
                {"functionResponse": {"name": "get_reservation", "response": {"error": "DEF: not found"}}},
            ]},
            {"role": "model", "parts": [{"text": "ABC is confirmed; DEF was not found.", "thoughtSignature": "dHM="}]},
            {"role": "user", "parts": [{"text": "Cancel ABC."}, {"inlineData": {"mimeType": "image/png",
                                                                             "data": "iVBORw0KGgo="}}]},
            {"role": "model", "parts": [{"functionCall": {"name": "cancel", "args": {"id": "ABC"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "cancel",
                                                             "response": {"status": "cancelled", "refund": 87}}}]},
            {"role": "model", "parts": [{"text": "Done."}]},
            {"role": "user", "parts": [{"text": "Thanks!"}]},
        ],
        "generationConfig": {"temperature": 0.2, "thinkingConfig": {"includeThoughts": True}},
        "tools": [{"functionDeclarations": [{"name": "get_reservation"}, {"name": "cancel"}]}],
    }


def _snake() -> dict[str, Any]:
    """The Python SDK's spelling, with ids, the system instruction inside ``config``."""
    return {
        "model": "gemini-2.5-flash",
        "config": {"system_instruction": "Be brief.", "temperature": 0},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
            {"role": "model", "parts": [
                {"function_call": {"id": "fc_1", "name": "weather", "args": {"city": "Paris"}},
                 "thought_signature": "AAEC"},
                {"function_call": {"id": "fc_2", "name": "weather", "args": {"city": "Rome"}}},
            ]},
            {"role": "user", "parts": [
                {"function_response": {"id": "fc_2", "name": "weather", "response": {"output": "sunny"}}},
                {"function_response": {"id": "fc_1", "name": "weather", "response": {"output": "rain"}}},
            ]},
            {"role": "model", "parts": [{"text": "Paris: rain. Rome: sunny."}]},
        ],
    }


# --- detection -----------------------------------------------------------------------------


def test_samples_are_detected_with_certainty() -> None:
    value = sample_value("gemini.json")
    assert ADAPTER.detect(value) == CERTAIN
    assert formats.detect(value, source="s").name == "gemini"
    assert formats.detect(_snake(), source="s").name == "gemini"
    assert formats.detect(_rest()["contents"], source="s").name == "gemini"


@pytest.mark.parametrize(
    "value",
    [
        [],
        [{"role": "user", "content": "hi"}],
        [{"role": "assistant", "parts": [{"text": "x"}]}],
        {"messages": [{"role": "user", "content": "hi"}]},
        {"contents": "hi"},
        {"contents": [{"role": "user", "parts": "hi"}]},
        [{"type": "human", "data": {"content": "hi"}}],
        {"context": []},
        None,
        3.5,
    ],
)
def test_detect_rejects_other_shapes(value: Any) -> None:
    assert ADAPTER.detect(value) == NO


def test_an_empty_contents_request_is_still_gemini() -> None:
    assert ADAPTER.detect({"contents": []}) == CERTAIN
    assert PLAUSIBLE < CERTAIN  # nothing of Gemini is merely plausible: 'parts' is its own


# --- reading ---------------------------------------------------------------------------------


def test_id_less_calls_and_responses_pair_by_name_and_order() -> None:
    context = read("gemini", _rest()).state.context
    assert [m.role for m in context] == ["system", "user", "assistant", "tool", "assistant", "user", "assistant",
                                         "tool", "assistant", "user"]
    calls = context[2].tools_calls or []
    assert [c["id"] for c in calls] == ["gemini_get_reservation_0", "gemini_get_reservation_1"]
    assert [c["function"]["arguments"] for c in calls] == ['{"id": "ABC"}', '{"id": "DEF"}']
    results = [b for b in context[3].content if isinstance(b, ToolResultBlock)]
    assert [(b.call_id, b.output, b.is_error) for b in results] == [
        ("gemini_get_reservation_0", "ABC: confirmed", False),
        ("gemini_get_reservation_1", "DEF: not found", True),
    ]
    cancel = [b for b in context[7].content if isinstance(b, ToolResultBlock)]
    assert cancel[0].call_id == "gemini_cancel_0"
    assert cancel[0].output == {"status": "cancelled", "refund": 87}
    assert context[7].text() == '{"status": "cancelled", "refund": 87}'
    assert reasoning_blocks(context[2])[0].summary == "Two lookups needed."
    assert context[2].text() == ""  # a thought is not visible text


def test_ids_pair_even_when_responses_come_in_another_order() -> None:
    context = read("gemini", _snake()).state.context
    assert context[0].role == "system"
    assert context[0].text() == "Be brief."
    assert [c["id"] for c in context[2].tools_calls or []] == ["fc_1", "fc_2"]
    assert [(b.call_id, b.output) for b in context[3].content if isinstance(b, ToolResultBlock)] == [
        ("fc_2", "sunny"), ("fc_1", "rain"),
    ]


def test_a_response_without_a_call_gets_an_id_of_its_own() -> None:
    value = [{"role": "user", "parts": [{"functionResponse": {"name": "lost", "response": {}}}]}]
    block = read("gemini", value).state.context[0].content[0]
    assert isinstance(block, ToolResultBlock)
    assert block.call_id == "gemini_lost_0_orphan"
    assert structural_problems(read("gemini", value).state.context) == [
        "message 0: tool result for call 'gemini_lost_0_orphan' has no earlier matching call",
        "message 0: the conversation starts with a tool result",
    ]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"contents": {}}, "contents: expected a list of contents, got object"),
        ({"contents": [], "systemInstruction": 4}, "systemInstruction: expected a string or an object with 'parts'"),
        ({"contents": [], "systemInstruction": {"parts": "x"}}, "systemInstruction.parts: expected a list"),
        ({"contents": [[]]}, "contents[0]: expected a content object, got array"),
        ({"contents": [{"role": "assistant", "parts": []}]}, "contents[0].role: expected 'user' or 'model'"),
        ({"contents": [{"role": "user"}]}, "contents[0].parts: required field is missing"),
        ({"contents": [{"role": "user", "parts": ["hi"]}]}, "contents[0].parts[0]: expected a part object"),
        ({"contents": [{"role": "user", "parts": [{"text": 1}]}]}, "contents[0].parts[0].text: expected a string"),
        ({"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
         "contents[0].parts[0].functionCall: expected an object with a 'name' string"),
        ({"contents": [{"role": "model", "parts": [{"function_call": {"name": "f", "args": [1]}}]}]},
         "contents[0].parts[0].functionCall.args: expected an object, got array"),
        ({"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "id": 3}}]}]},
         "contents[0].parts[0].functionResponse.id: expected a string"),
        (7, "expected an object with 'contents' or a list of contents, got number"),
    ],
)
def test_bad_input_is_an_input_error_naming_the_json_path(value: Any, message: str) -> None:
    with pytest.raises(InputError) as caught:
        ADAPTER.read(value, source="in.json", layout="document")
    assert message in str(caught.value)


def test_jsonl_errors_name_the_line() -> None:
    records = JsonlRecords([{"role": "user", "parts": [{"text": "a"}]}, {"role": "model"}], [1, 2])
    with pytest.raises(InputError) as caught:
        ADAPTER.read(records, source="c.jsonl", layout="jsonl")
    assert str(caught.value) == "c.jsonl:2: parts: required field is missing"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["role", "parts", "text", "functionCall", "function_response", "name", "id", "args",
                         "response", "thought", "inlineData", "data", "contents", "systemInstruction"]),
        inner, max_size=4),
    max_leaves=20,
)


@explored(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(_JSON, st.fixed_dictionaries({"contents": st.lists(_JSON, max_size=4)},
                                               optional={"systemInstruction": _JSON})))
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


# --- lossless round trips -------------------------------------------------------------------------


@pytest.mark.parametrize("value", [
    _rest(),
    _snake(),
    _rest()["contents"],
    {"contents": [], "systemInstruction": "just a string"},
    {"contents": [], "system_instruction": ["a", {"text": "b"}]},
    {"contents": [{"parts": [{"text": "no role"}]}], "systemInstruction": {"role": "user", "parts": []}},
    {"contents": [{"role": "model", "parts": [{"executableCode": {"language": "PYTHON", "code": "print(1)"}},
                                              {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}},
                                              {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/x"}}]}]},
])
def test_read_then_write_gives_back_the_input(value: Any) -> None:
    assert write(read("gemini", value)) == value


def test_sample_round_trips_through_bytes() -> None:
    data = sample_bytes("gemini.json")
    conversation = formats.load(data, source="gemini.json")
    assert conversation.format == "gemini"
    assert orjson.loads(formats.dump(conversation)) == orjson.loads(data)


# --- compaction ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", range(0, 5))
def test_trim_keeps_system_instruction_signatures_and_records(keep: int) -> None:
    value = _rest()
    conversation = read("gemini", value)
    MessageContextManager(max_messages=keep).trim_context(conversation.state)
    out = write(conversation)
    assert {k: v for k, v in out.items() if k != "contents"} == {k: v for k, v in value.items() if k != "contents"}
    assert out["contents"] == value["contents"][len(value["contents"]) - len(out["contents"]):]
    assert structural_problems(read("gemini", out).state.context, "gemini") == []


def test_trim_of_id_less_calls_re_pairs_the_kept_part_the_same_way() -> None:
    # After a cut the n-th-call numbering restarts in the kept part: calls and responses
    # are kept together, so they still pair.
    value = _rest()
    conversation = read("gemini", value)
    MessageContextManager(max_messages=2).trim_context(conversation.state)
    again = read("gemini", write(conversation))
    calls = again.state.context[2].tools_calls or []
    results = [b.call_id for b in again.state.context[3].content if isinstance(b, ToolResultBlock)]
    assert [c["id"] for c in calls] == ["gemini_cancel_0"]
    assert results == ["gemini_cancel_0"]


def test_remove_tool_msgs_drops_completed_sequences_with_their_signatures() -> None:
    conversation = read("gemini", _rest())
    MessageContextManager(max_messages=10, remove_tool_msgs=True).trim_context(conversation.state)
    out = write(conversation)
    assert out["contents"] == [_rest()["contents"][i] for i in (0, 3, 4, 7, 8)]
    text = json.dumps(out["contents"])
    assert "functionCall" not in text
    assert "functionResponse" not in text
    assert "c2ln" not in text  # the signature went with its call


@pytest.mark.parametrize("keep_recent", range(0, 9))
def test_summarize_never_splits_parallel_calls_from_their_responses(keep_recent: int) -> None:
    conversation = read("gemini", _rest())
    manager: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=3, keep_recent=keep_recent, summarizer=FixedSummarizer("S1"),
    )
    manager.trim_context(conversation.state)
    out = write(conversation)
    assert structural_problems(read("gemini", out).state.context, "gemini") == []
    if conversation.state.context_summary:
        assert out["systemInstruction"]["parts"] == [{"text": "You are an airline agent."}, {"text": f"{HEADER}\nS1"}]


def test_summary_goes_into_system_instruction_and_a_second_run_appends() -> None:
    conversation = read("gemini", _rest())
    manager: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=3, keep_recent=2, summarizer=FixedSummarizer("S1"))
    manager.trim_context(conversation.state)
    first = orjson.loads(formats.dump(conversation))
    again = formats.load(orjson.dumps(first), source="again.json")
    assert again.state.context_summary == "S1"
    assert again.state.context[0].text() == "You are an airline agent."
    again.state.context[1:1] = read("gemini", [
        {"role": "user", "parts": [{"text": "a"}]}, {"role": "model", "parts": [{"text": "b"}]}]).state.context
    second: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=2, keep_recent=2, summarizer=FixedSummarizer("S2"))
    second.trim_context(again.state)
    out = orjson.loads(formats.dump(again))
    assert out["systemInstruction"]["parts"] == [{"text": "You are an airline agent."}, {"text": f"{HEADER}\nS1\n\nS2"}]


def test_snake_case_summary_stays_in_config_and_in_the_string() -> None:
    conversation = read("gemini", _snake())
    conversation.state.context_summary = "S"
    out = write(conversation)
    assert out["config"] == {"system_instruction": f"Be brief.\n\n{HEADER}\nS", "temperature": 0}
    assert list(out) == ["model", "config", "contents"]
    assert read("gemini", out).state.context_summary == "S"


def test_new_system_instruction_uses_the_file_spelling() -> None:
    snake = {"contents": [{"role": "model", "parts": [{"function_call": {"name": "f", "args": {}}}]}]}
    conversation = read("gemini", snake)
    conversation.state.context_summary = "S"
    assert write(conversation) == {"system_instruction": {"parts": [{"text": f"{HEADER}\nS"}]}, **snake}
    camel = {"contents": [{"role": "user", "parts": [{"text": "x"}]}]}
    conversation = read("gemini", camel)
    conversation.state.context_summary = "S"
    assert write(conversation) == {"systemInstruction": {"parts": [{"text": f"{HEADER}\nS"}]}, **camel}


def test_summary_as_message_is_the_first_part_of_the_first_user_content() -> None:
    value = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "yo"}]}]}
    conversation = read("gemini", value)
    conversation.state.context_summary = "S"
    conversation.summary_as = "message"
    out = write(conversation)
    assert out == {"contents": [{"role": "user", "parts": [{"text": f"{HEADER}\nS"}, {"text": "hi"}]},
                                {"role": "model", "parts": [{"text": "yo"}]}]}
    again = read("gemini", out)
    assert again.state.context_summary == "S"
    again.summary_as = "message"
    assert write(again) == out


def test_summary_as_field_is_a_usage_error() -> None:
    conversation = read("gemini", _rest())
    conversation.summary_as = "field"
    with pytest.raises(UsageError, match="no summary field"):
        write(conversation)


# --- conversion, checked against google-genai's types.Content -----------------------------------


def _official_check(value: dict[str, Any]) -> None:
    from google.genai import types

    for content in value["contents"]:
        parsed = types.Content.model_validate(content)
        assert parsed.role in ("user", "model")
        assert parsed.parts
    if "systemInstruction" in value:
        types.Content.model_validate(value["systemInstruction"])


def test_official_types_accept_both_spellings_of_our_samples() -> None:
    _official_check(sample_value("gemini.json"))
    from google.genai import types

    for content in _snake()["contents"]:
        types.Content.model_validate(content)


def test_official_types_reject_what_is_not_a_content() -> None:
    from google.genai import types
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        types.Content.model_validate({"role": "user", "parts": [{"functionCall": {"name": "f"}, "bogus": 1}]})


def test_native_sample_converts_to_valid_gemini() -> None:
    conversation = formats.load(sample_bytes("support-chat.json"), source="support-chat.json")
    value, back = convert(conversation, "gemini")
    _official_check(value)
    assert view(back.state.context) == view(conversation.state.context)


@explored(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(native_conversations())
def test_native_to_gemini_to_native_keeps_the_conversation(state: Any) -> None:
    conversation = native_conversation(state)
    expected = view(state.context)
    value, back = convert(conversation, "gemini")
    _official_check(value)
    assert all(c["role"] in ("user", "model") for c in value["contents"])
    assert view(back.state.context) == expected
    assert pairing(back.state.context) == pairing(state.context)
    assert structural_problems(back.state.context, "gemini") == []  # all results of a turn in one message
    native_again = formats.load(formats.dump(back, to="native"), source="n.json", fmt="native")
    assert view(native_again.state.context) == expected


def test_calls_from_other_formats_keep_their_ids_and_names_reach_the_responses() -> None:
    openai = {"messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "call_9", "content": "snow"},
    ]}
    conversation = formats.load(orjson.dumps(openai), source="o.json", fmt="openai-chat")
    out = orjson.loads(formats.dump(conversation, to="gemini"))
    assert out["contents"][1:] == [
        {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"city": "Oslo"}, "id": "call_9"}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"output": "snow"},
                                                         "id": "call_9"}}]},
    ]
    _official_check(out)


# --- properties: random Gemini files round-trip exactly -------------------------------------------


@st.composite
def gemini_files(draw: st.DrawFn) -> Any:
    snake = draw(st.booleans())

    def key(camel: str) -> str:
        return {"functionCall": "function_call", "functionResponse": "function_response",
                "thoughtSignature": "thought_signature", "inlineData": "inline_data", "mimeType": "mime_type",
                "systemInstruction": "system_instruction"}[camel] if snake else camel

    contents: list[Any] = []
    names: list[str] = []
    counter = 0
    use_ids = False
    for _ in range(draw(st.integers(0, 5))):
        if names:
            results: list[Any] = [{key("functionResponse"): {"name": n, "response": {"output": draw(TEXT)},
                                                **({"id": f"id_{counter - len(names) + i}"} if use_ids else {})}}
                     for i, n in enumerate(names)]
            contents.append({"role": "user", "parts": results})
            names = []
        else:
            part: dict[str, Any] = {"text": draw(TEXT)}
            if draw(st.booleans()):
                part = {key("inlineData"): {key("mimeType"): "image/jpeg", "data": "AAAA"}}
            contents.append({"role": "user", "parts": [part]})
        parts: list[Any] = []
        if draw(st.booleans()):
            parts.append({"text": draw(TEXT), "thought": True})
        if draw(st.booleans()):
            text_part: dict[str, Any] = {"text": draw(TEXT)}
            if draw(st.booleans()):
                text_part[key("thoughtSignature")] = draw(TEXT)
            parts.append(text_part)
        use_ids = draw(st.booleans())
        for _ in range(draw(st.integers(0, 3))):
            name = draw(st.sampled_from(["lookup", "book", "x.y"]))
            names.append(name)
            body: dict[str, Any] = {"name": name, "args": {"q": draw(TEXT)}}
            if use_ids:
                body["id"] = f"id_{counter}"
            counter += 1
            call: dict[str, Any] = {key("functionCall"): body}
            if draw(st.booleans()):
                call[key("thoughtSignature")] = "c2ln"
            parts.append(call)
        contents.append({"role": "model", "parts": parts})
    if draw(st.booleans()):
        return contents
    value: dict[str, Any] = {"contents": contents}
    system = draw(st.one_of(st.none(), TEXT, st.builds(lambda t: {"parts": [{"text": t}]}, TEXT)))
    if system is not None:
        value[key("systemInstruction")] = system
    if draw(st.booleans()):
        value["generationConfig" if not snake else "generation_config"] = {"temperature": 0.5}
    return value


@explored(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gemini_files())
def test_random_gemini_files_round_trip_identically(value: Any) -> None:
    original = copy.deepcopy(value)
    conversation = formats.load(orjson.dumps(value), source="r.json", fmt="gemini")
    assert orjson.loads(formats.dump(conversation)) == original
    assert structural_problems(conversation.state.context) == []
    if value and (not isinstance(value, list) or all(c["parts"] for c in value)):
        assert formats.detect(value, source="r.json").name == "gemini"


# --- the CLI ------------------------------------------------------------------------------------------


def test_cli_trim_keeps_system_instruction_tools_and_config() -> None:
    from typer.testing import CliRunner

    from ctxmgr.cli import app

    value = sample_value("gemini.json")
    result = CliRunner().invoke(app, ["trim", "samples/gemini.json", "--max-messages", "1", "--no-view"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert {k: v for k, v in out.items() if k != "contents"} == {k: v for k, v in value.items() if k != "contents"}
    assert out["contents"] == value["contents"][-len(out["contents"]):]
    assert out["contents"][0] == {"role": "user", "parts": [{"text": value["contents"][-1]["parts"][0]["text"]}]}


def test_cli_summarize_twice_appends_to_the_one_summary_part(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from ctxmgr.cli import app

    runner = CliRunner()
    first = tmp_path / "first.json"
    result = runner.invoke(app, ["summarize", "samples/gemini.json", "--max-messages", "4", "--keep-recent", "4",
                                 "--no-view", "-o", str(first)])
    assert result.exit_code == 0, result.output
    once = json.loads(first.read_text())
    assert len(once["systemInstruction"]["parts"]) == 2
    result = runner.invoke(app, ["summarize", str(first), "--max-messages", "2", "--keep-recent", "2", "--no-view"])
    assert result.exit_code == 0, result.output
    twice = json.loads(result.stdout)
    parts = twice["systemInstruction"]["parts"]
    assert len(parts) == 2
    assert parts[1]["text"].startswith(once["systemInstruction"]["parts"][1]["text"] + "\n\n")
    assert parts[1]["text"].count(HEADER) == 1


def test_function_call_signatures_survive_a_trip_through_native() -> None:
    value = {"contents": [
        {"role": "user", "parts": [{"text": "Weather?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {}}, "thoughtSignature": "c2ln"}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"output": "sun"}}}]},
    ]}
    conversation = read("gemini", value)
    assert conversation.state.context[1].metadata == {"gemini_thought_signatures": {"gemini_weather_0": "c2ln"}}
    native = formats.load(formats.dump(conversation, to="native"), source="n.json", fmt="native")
    back = orjson.loads(formats.dump(native, to="gemini"))
    assert back == value  # the records as they were: no id where the file had none
    _official_check(back)
    # Converted to another format and back, the call is rendered from the model: its
    # signature comes from the message's metadata.
    langchain = formats.load(formats.dump(native, to="langchain"), source="l.json", fmt="langchain")
    again = orjson.loads(formats.dump(langchain, to="gemini"))
    assert again["contents"][1] == {"role": "model", "parts": [
        {"functionCall": {"name": "weather", "args": {}, "id": "gemini_weather_0"}, "thoughtSignature": "c2ln"}]}


def test_a_native_summary_converts_into_the_system_instruction() -> None:
    conversation = formats.load(sample_bytes("support-chat.json"), source="support-chat.json")
    conversation.state.context_summary = "Earlier: refund discussed."
    value, back = convert(conversation, "gemini")
    assert value["systemInstruction"]["parts"][-1] == {"text": f"{HEADER}\nEarlier: refund discussed."}
    _official_check(value)
    assert back.state.context_summary == "Earlier: refund discussed."
