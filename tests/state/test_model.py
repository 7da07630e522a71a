"""The conversation model: ``Message``, content blocks, ``AgentState``, ``TokenUsages``.

The JSON must be interchangeable with 10xGraph's ``model_dump_json()``: same fields, same
order, same defaults, and nothing lost when a file goes through ctxmgr.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import Field, ValidationError

from ctxmgr import compact, formats
from ctxmgr.errors import InputError
from ctxmgr.state import (
    AgentState,
    DataBlock,
    ErrorBlock,
    ExecutionMeta,
    ImageBlock,
    Message,
    MessageContextManager,
    ReasoningBlock,
    TextBlock,
    TokenUsages,
    ToolCallBlock,
    ToolResultBlock,
)

MESSAGE_FIELDS = [
    "message_id",
    "role",
    "content",
    "delta",
    "tools_calls",
    "reasoning",
    "timestamp",
    "metadata",
    "usages",
    "raw",
    "parsed_content",
]

MEDIA: dict[str, Any] = {
    "kind": "data",
    "url": None,
    "file_id": "file-abc",
    "data_base64": "iVBORw0KGgo=",
    "mime_type": "image/png",
    "size_bytes": 8,
    "sha256": "9f86d081884c7d65",
    "filename": "receipt.png",
    "width": 640,
    "height": 480,
    "duration_ms": 1500,
    "page": 2,
}
URL_MEDIA: dict[str, Any] = {**dict.fromkeys(MEDIA), "kind": "url", "url": "https://example.com/thumb.jpg"}

# One block of every type, every field set (and in the order the model dumps them), so a
# round trip that dropped, renamed, reordered or re-typed anything would show.
BLOCKS: dict[str, dict[str, Any]] = {
    "text": {"type": "text", "text": "Héllo — “quoted”", "annotations": [{"kind": "citation", "refs": ["r1"]}]},
    "image": {"type": "image", "media": MEDIA, "alt_text": "a receipt", "bbox": [0.0, 0.5, 10.25, 20.0]},
    "audio": {"type": "audio", "media": MEDIA, "transcript": "hello", "sample_rate": 16000, "channels": 2},
    "video": {"type": "video", "media": MEDIA, "thumbnail": URL_MEDIA},
    "document": {"type": "document", "media": MEDIA, "text": "page text", "pages": [1, 2], "excerpt": "exc"},
    "data": {"type": "data", "mime_type": "application/json", "data_base64": "e30=", "media": None},
    "tool_call": {
        "type": "tool_call",
        "id": "call_1",
        "name": "get_weather",
        "args": {"city": "Oslo", "days": [1, 2], "opts": {"metric": True, "x": None}},
        "tool_type": "function",
    },
    "remote_tool_call": {
        "type": "remote_tool_call",
        "id": "call_2",
        "name": "web_search",
        "args": {"q": "ctxmgr"},
        "tool_type": "remote",
    },
    "tool_result": {
        "type": "tool_result",
        "call_id": "call_1",
        "output": {"temp": -3.5, "ok": True, "list": [1, "two", None]},
        "is_error": False,
        "status": "completed",
    },
    "reasoning": {"type": "reasoning", "summary": "think first", "details": [{"step": 1, "text": "…"}]},
    "annotation": {"type": "annotation", "kind": "note", "refs": ["a", {"url": "u"}], "spans": [[0, 3]]},
    "error": {"type": "error", "message": "rate limited", "code": 429, "data": {"retry_after": 2}},
}


def full_message(content: list[dict[str, Any]], **overrides: Any) -> dict[str, Any]:
    """A message record with every field present, as the reference writes it."""
    record: dict[str, Any] = {
        "message_id": "msg-1",
        "role": "assistant",
        "content": content,
        "delta": False,
        "tools_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}
        ],
        "reasoning": "because",
        "timestamp": 1715810017.25,
        "metadata": {"node": "agent", "n": 3},
        "usages": {
            "completion_tokens": 39,
            "prompt_tokens": 1140,
            "total_tokens": 1179,
            "reasoning_tokens": 5,
            "cache_creation_input_tokens": 7,
            "cache_read_input_tokens": 11,
            "image_tokens": None,
            "audio_tokens": 2,
        },
        "raw": {"id": "resp_1", "object": "response"},
        "parsed_content": {"answer": 42},
    }
    record.update(overrides)
    return record


def key_orders(value: Any) -> Any:
    """Every key of ``value``, recursively, in order: equal only if the order is equal."""
    if isinstance(value, dict):
        return [(key, key_orders(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [key_orders(item) for item in value]
    return value


# -- Message fields and defaults -----------------------------------------------------


def test_message_fields_are_the_references_in_its_order() -> None:
    assert list(Message.model_fields) == MESSAGE_FIELDS


def test_message_defaults() -> None:
    before = time.time()
    message = Message(role="user", content=[])
    after = time.time()
    assert message.delta is False
    assert message.tools_calls is None
    assert message.reasoning is None
    assert message.metadata == {}
    assert message.usages is None
    assert message.raw is None
    assert message.parsed_content is None
    assert before <= message.timestamp <= after
    assert isinstance(message.message_id, str)
    assert uuid.UUID(message.message_id).version == 4


def test_default_message_ids_are_canonical_uuid4_strings() -> None:
    ids = [str(Message(role="user", content=[]).message_id) for _ in range(2000)]
    for value in ids:
        parsed = uuid.UUID(value)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, value)
    assert len(set(ids)) == len(ids)
    # All four variant digits (8, 9, a, b) occur: the variant bits come from random bytes.
    assert {value[19] for value in ids} == set("89ab")


def test_message_defaults_are_not_shared() -> None:
    first, second = Message(role="user", content=[]), Message(role="user", content=[])
    first.metadata["x"] = 1
    assert second.metadata == {}
    assert first.message_id != second.message_id


@pytest.mark.parametrize("message_id", ["abc", 7])
def test_message_id_is_str_or_int(message_id: str | int) -> None:
    assert Message(message_id=message_id, role="user", content=[]).message_id == message_id


def test_bare_string_content_is_rejected() -> None:
    with pytest.raises(ValidationError, match="content"):
        Message(role="user", content="hello")  # type: ignore[arg-type]


def test_empty_content_is_allowed() -> None:
    assert Message(role="assistant", content=[]).content == []


@pytest.mark.parametrize("role", ["user", "assistant", "system", "tool"])
def test_every_role_is_accepted(role: str) -> None:
    assert Message.model_validate({"role": role, "content": []}).role == role


@pytest.mark.parametrize("role", ["robot", "User", "developer", ""])
def test_other_roles_are_rejected(role: str) -> None:
    with pytest.raises(ValidationError, match="role"):
        Message.model_validate({"role": role, "content": []})


def test_unknown_block_type_is_a_clear_validation_error() -> None:
    with pytest.raises(ValidationError) as caught:
        Message.model_validate({"role": "user", "content": [{"type": "hologram", "text": "x"}]})
    text = str(caught.value)
    assert "hologram" in text
    assert "'type'" in text


def test_unknown_block_type_message_in_a_file_names_the_block_and_the_choices(tmp_path: Path) -> None:
    data = orjson.dumps(
        [{"message_id": "m1", "role": "user", "content": [{"type": "text", "text": "a"}, {"type": "hologram"}]}]
    )
    with pytest.raises(InputError) as caught:
        formats.load(data, source="chat.json")
    assert str(caught.value) == (
        "chat.json: looks like a native file: [0].content[1]: unknown content block type 'hologram' "
        "(expected one of: annotation, audio, "
        "data, document, error, image, reasoning, remote_tool_call, text, tool_call, tool_result, video)"
    )


def test_block_without_type_is_a_clear_error() -> None:
    with pytest.raises(InputError, match=r"\[0\]\.content\[0\]: content block without a 'type' key"):
        formats.load(b'[{"role": "user", "content": [{"text": "x"}]}]', source="f.json")


def test_field_error_inside_a_block_names_the_field_not_the_union_tag() -> None:
    with pytest.raises(InputError) as caught:
        formats.load(b'[{"role": "user", "content": [{"type": "text"}]}]', source="f.json")
    # The detected format is named: a reader's error is read against what the file looks like.
    assert str(caught.value) == (
        "f.json: looks like a native file: [0].content[0].text: required field is missing (in a 'text' block)"
    )


@pytest.mark.parametrize("block_type", sorted(BLOCKS))
def test_every_block_type_is_parsed_to_its_own_class(block_type: str) -> None:
    message = Message.model_validate({"role": "assistant", "content": [BLOCKS[block_type]]})
    block = message.content[0]
    assert block.type == block_type
    assert type(block).__name__.lower().replace("block", "") == block_type.replace("_", "")


def test_data_block_needs_a_mime_type() -> None:
    with pytest.raises(ValidationError, match="mime_type"):
        Message.model_validate({"role": "user", "content": [{"type": "data", "data_base64": "e30="}]})


def test_block_defaults() -> None:
    assert TextBlock(text="x").annotations == []
    call = ToolCallBlock(id="c", name="f")
    assert (call.args, call.tool_type) == ({}, None)
    remote = Message.model_validate(
        {"role": "assistant", "content": [{"type": "remote_tool_call", "id": "c", "name": "f"}]}
    ).content[0]
    assert remote.model_dump()["tool_type"] == "remote"
    result = ToolResultBlock(call_id="c")
    assert (result.output, result.is_error, result.status) == (None, False, None)
    annotation = Message.model_validate({"role": "user", "content": [{"type": "annotation"}]}).content[0]
    assert annotation.model_dump() == {"type": "annotation", "kind": "citation", "refs": [], "spans": None}
    media = ImageBlock(media={"url": "https://x"}).media  # type: ignore[arg-type]
    assert media is not None
    assert media.kind == "url"


def test_tool_result_status_is_checked() -> None:
    with pytest.raises(ValidationError, match="status"):
        ToolResultBlock(call_id="c", status="pending")  # type: ignore[arg-type]


# -- round trips ---------------------------------------------------------------------


@pytest.mark.parametrize("block_type", sorted(BLOCKS))
def test_every_block_type_round_trips_through_the_model(block_type: str) -> None:
    record = full_message([BLOCKS[block_type]])
    dumped = Message.model_validate(record, strict=True).model_dump(mode="json")
    assert dumped == record
    assert key_orders(dumped) == key_orders(record)
    again = Message.model_validate_json(Message.model_validate(record).model_dump_json()).model_dump(mode="json")
    assert again == record


def _write_and_trim(tmp_path: Path, document: Any, *, max_messages: int, name: str = "chat.json") -> Any:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2))
    outcome = compact(path.read_bytes(), MessageContextManager(max_messages=max_messages), source=str(path))
    return orjson.loads(outcome.output())


def test_every_block_type_round_trips_through_a_file_with_nothing_lost(tmp_path: Path) -> None:
    # Also the ints a float field would turn into floats, and keys the model does not know,
    # inside blocks and media: a kept message is written back from its own record.
    odd_blocks = [
        {**BLOCKS["image"], "bbox": [0, 0, 10, 10], "x_vendor": {"a": 1}},
        {**BLOCKS["video"], "media": {**MEDIA, "x_codec": "av1"}},
    ]
    state = {
        "context": [
            full_message([BLOCKS[t] for t in sorted(BLOCKS)], role="user", message_id="u1", tools_calls=None),
            full_message(odd_blocks, message_id=2),
        ],
        "context_summary": None,
        "execution_meta": ExecutionMeta().model_dump(mode="json"),
    }
    out = _write_and_trim(tmp_path, state, max_messages=10)
    assert out == state
    assert key_orders(out) == key_orders(state)
    assert out["context"][1]["content"][0]["bbox"] == [0, 0, 10, 10]
    assert all(isinstance(v, int) for v in out["context"][1]["content"][0]["bbox"])


def test_blocks_survive_a_trim_that_drops_other_messages(tmp_path: Path) -> None:
    messages = [
        full_message([BLOCKS["text"]], role="user", message_id="old", tools_calls=None),
        full_message([BLOCKS["text"]], role="user", message_id="new", tools_calls=None),
        full_message([BLOCKS[t] for t in sorted(BLOCKS)], message_id="answer"),
    ]
    out = _write_and_trim(tmp_path, messages, max_messages=1)
    assert out == messages[1:]
    assert key_orders(out) == key_orders(messages[1:])


# -- unknown keys --------------------------------------------------------------------


def test_unknown_keys_everywhere_are_kept_with_their_order(tmp_path: Path) -> None:
    first = full_message([BLOCKS["text"]], role="user", message_id="m1", tools_calls=None)
    # an extra message key in the middle of the known ones, not at the end
    second = {"message_id": "m2", "role": "user", "x_trace": {"span": "abc"}, "content": [BLOCKS["text"]],
              "timestamp": 5.0}
    third = {"role": "assistant", "content": [], "zz_first_seen": True, "message_id": "m3"}
    state = {
        "plan": ["look up", "answer"],  # a field of an AgentState subclass, before context
        "context": [first, second, third],
        "step_count": 4,
        "context_summary": "earlier: the user said hi",
        "execution_meta": {
            "current_node": "agent",
            "x_custom_meta": [1, 2],
            "step": 3,
            "status": "interrupted_after",
            "interrupted_node": ["tools"],
            "interrupt_reason": "approval",
            "interrupt_data": {"ask": "ok?"},
            "thread_id": "t-1",
            "stop_current_execution": "stop_requested",
            "internal_data": {"k": "v"},
        },
        "tail_field": None,
    }
    out = _write_and_trim(tmp_path, state, max_messages=1)
    expected = {**state, "context": [second, third]}
    assert out == expected
    assert key_orders(out) == key_orders(expected)


def test_agent_state_subclass_fields_survive_a_file_round_trip(tmp_path: Path) -> None:
    class PlanningState(AgentState):
        plan: list[str] = Field(default_factory=list)
        budget: float = 1.5

    state = PlanningState(
        context=[Message.text_message("q1", message_id="a"), Message.text_message("q2", message_id="b")],
        plan=["search", "answer"],
    )
    document = orjson.loads(state.model_dump_json())
    out = _write_and_trim(tmp_path, document, max_messages=1)
    assert out["plan"] == ["search", "answer"]
    assert out["budget"] == 1.5
    assert list(out) == ["context", "context_summary", "execution_meta", "plan", "budget"]
    restored = PlanningState.model_validate(out)
    assert [m.message_id for m in restored.context] == ["b"]


def test_agent_state_keeps_unknown_keys_on_the_model_too() -> None:
    state = AgentState.model_validate({"context": [], "user_profile": {"tier": "gold"}})
    assert state.model_dump()["user_profile"] == {"tier": "gold"}
    meta = ExecutionMeta.model_validate({"x_extra": 1})
    assert meta.model_dump()["x_extra"] == 1
    message = Message.model_validate({"role": "user", "content": [], "x_extra": [1]})
    assert message.model_dump()["x_extra"] == [1]


# -- Message.text and the constructors -----------------------------------------------


def test_text_joins_text_and_tool_results_without_separator() -> None:
    message = Message(
        role="tool",
        content=[
            TextBlock(text="A"),
            ImageBlock(),
            ToolResultBlock(call_id="c1", output="B"),
            ToolResultBlock(call_id="c2", output={"x": 1, "y": [1, 2]}),
            ReasoningBlock(summary="not this"),
            ToolResultBlock(call_id="c3", output=[1, "two"]),
            ToolResultBlock(call_id="c4", output=None),
            ToolResultBlock(call_id="c5", output=3.5),
            ErrorBlock(message="not this either"),
            DataBlock(mime_type="text/plain", data_base64="eA=="),
            TextBlock(text="C"),
        ],
    )
    assert message.text() == 'AB{"x": 1, "y": [1, 2]}[1, "two"]null3.5C'


def test_text_of_a_string_output_is_as_is_not_json() -> None:
    message = Message.tool_message([ToolResultBlock(call_id="c", output='"quoted"\nnew line')])
    assert message.text() == '"quoted"\nnew line'


def test_text_of_no_text_is_empty() -> None:
    assert Message(role="assistant", content=[ToolCallBlock(id="c", name="f")]).text() == ""
    assert Message(role="assistant", content=[]).text() == ""


def test_json_dumps_of_non_ascii_output_matches_the_reference() -> None:
    # The reference calls json.dumps with its defaults (ensure_ascii=True).
    message = Message.tool_message([ToolResultBlock(call_id="c", output={"city": "Zürich"})])
    assert message.text() == json.dumps({"city": "Zürich"}) == '{"city": "Z\\u00fcrich"}'


def test_text_message() -> None:
    message = Message.text_message("hello")
    assert message.role == "user"
    assert [b.model_dump() for b in message.content] == [{"type": "text", "text": "hello", "annotations": []}]
    assert uuid.UUID(str(message.message_id)).version == 4
    system = Message.text_message("be brief", role="system", message_id=12)
    assert (system.role, system.message_id, system.text()) == ("system", 12, "be brief")


def test_tool_message() -> None:
    result = ToolResultBlock(call_id="c1", output="42")
    message = Message.tool_message([result], message_id="t1", meta={"tool": "calc"})
    assert (message.role, message.message_id, message.metadata) == ("tool", "t1", {"tool": "calc"})
    assert message.content == [result]
    bare = Message.tool_message([{"type": "tool_result", "call_id": "c2", "output": "x"}])
    assert bare.metadata == {}
    assert isinstance(bare.content[0], ToolResultBlock)
    assert uuid.UUID(str(bare.message_id)).version == 4


# -- TokenUsages, ExecutionMeta, AgentState ------------------------------------------


def test_token_usages_defaults_and_required_fields() -> None:
    usages = TokenUsages(completion_tokens=1, prompt_tokens=2, total_tokens=3)
    assert usages.model_dump() == {
        "completion_tokens": 1,
        "prompt_tokens": 2,
        "total_tokens": 3,
        "reasoning_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "image_tokens": 0,
        "audio_tokens": 0,
    }
    for missing in ("completion_tokens", "prompt_tokens", "total_tokens"):
        values = {"completion_tokens": 1, "prompt_tokens": 2, "total_tokens": 3}
        del values[missing]
        with pytest.raises(ValidationError, match=missing):
            TokenUsages.model_validate(values)
    assert TokenUsages(completion_tokens=1, prompt_tokens=1, total_tokens=2, image_tokens=None).image_tokens is None


def test_agent_state_and_execution_meta_defaults() -> None:
    state = AgentState()
    assert state.context == []
    assert state.context_summary is None
    assert state.execution_meta.model_dump() == {
        "current_node": "__start__",
        "step": 0,
        "status": "running",
        "interrupted_node": None,
        "interrupt_reason": None,
        "interrupt_data": None,
        "thread_id": None,
        "stop_current_execution": "none",
        "internal_data": {},
    }
    assert AgentState().context is not state.context


@pytest.mark.parametrize(
    ("field", "value"), [("status", "paused"), ("stop_current_execution", "halt"), ("step", "three")]
)
def test_execution_meta_rejects_bad_values(field: str, value: str) -> None:
    with pytest.raises(ValidationError, match=field):
        ExecutionMeta.model_validate({field: value})


# -- interchange with the reference's model_dump_json() ------------------------------


def test_message_json_is_the_references_shape() -> None:
    message = Message.text_message("hi", message_id="m1")
    message.timestamp = 1715810000.5
    assert message.model_dump_json() == (
        '{"message_id":"m1","role":"user","content":[{"type":"text","text":"hi","annotations":[]}],'
        '"delta":false,"tools_calls":null,"reasoning":null,"timestamp":1715810000.5,"metadata":{},'
        '"usages":null,"raw":null,"parsed_content":null}'
    )


def _reference_checkpoint() -> AgentState:
    """A checkpoint as 10xGraph holds it: every block type, tool calls, usages, summary."""
    user = Message.model_validate(full_message([BLOCKS["text"], BLOCKS["image"]], role="user", tools_calls=None,
                                               message_id="u1"))
    calling = Message.model_validate(full_message([BLOCKS["tool_call"], BLOCKS["reasoning"]], message_id="a1"))
    result = Message.model_validate(full_message([BLOCKS["tool_result"]], role="tool", message_id="t1",
                                                 tools_calls=None))
    rest = Message.model_validate(full_message([BLOCKS[t] for t in sorted(BLOCKS)], message_id="a2",
                                               tools_calls=None))
    second = Message.text_message("and tomorrow?", message_id=99)
    second.timestamp = 1715810099.125
    return AgentState(
        context=[Message.text_message("You are terse.", role="system", message_id="s"), user, calling, result,
                 rest, second],
        context_summary="The user asked about the weather.",
        execution_meta=ExecutionMeta(current_node="agent", step=7, status="completed", thread_id="th-9",
                                     internal_data={"retries": 1}),
    )


@pytest.mark.parametrize("indent", [None, 2])
def test_reference_checkpoint_loads_and_is_written_back_identical(tmp_path: Path, indent: int | None) -> None:
    written = _reference_checkpoint().model_dump_json(indent=indent).encode()
    path = tmp_path / "checkpoint.json"
    path.write_bytes(written)
    outcome = compact(path.read_bytes(), MessageContextManager(max_messages=10), source=str(path))
    assert not outcome.changed
    # Identical text; ctxmgr ends what it writes with a newline, as text files do.
    assert outcome.output() == written + b"\n"


def test_reference_checkpoint_trimmed_keeps_each_kept_message_verbatim(tmp_path: Path) -> None:
    state = _reference_checkpoint()
    written = state.model_dump_json()
    outcome = compact(written.encode(), MessageContextManager(max_messages=1), source="checkpoint.json")
    out = orjson.loads(outcome.output())
    assert [m["message_id"] for m in out["context"]] == ["s", 99]
    original = orjson.loads(written)
    assert out["context"] == [original["context"][0], original["context"][5]]
    assert {k: v for k, v in out.items() if k != "context"} == {k: v for k, v in original.items() if k != "context"}
    # and what we wrote is what the reference would load
    reloaded = AgentState.model_validate_json(outcome.output())
    assert reloaded.model_dump_json() == AgentState(
        context=[state.context[0], state.context[5]],
        context_summary=state.context_summary,
        execution_meta=state.execution_meta,
    ).model_dump_json()


def test_state_read_from_a_file_is_the_model() -> None:
    written = _reference_checkpoint().model_dump_json().encode()
    conversation = formats.load(written, source="c.json")
    assert conversation.format == "native"
    assert conversation.state.model_dump_json() == written.decode()


# -- the token estimate --------------------------------------------------------------


def test_estimate_of_ascii_is_a_quarter_of_the_characters_and_at_least_one() -> None:
    from ctxmgr.state import estimate_tokens, message_units

    assert estimate_tokens([]) == 1
    assert estimate_tokens([Message.text_message("abc")]) == 1
    assert estimate_tokens([Message.text_message("a" * 8)]) == 2
    assert estimate_tokens([Message.text_message("a" * 6), Message.text_message("b" * 6)]) == 3  # 12 chars together
    calling = Message(role="assistant", content=[])
    calling.tools_calls = [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    # like the reference: the str() of the tools_calls list counts too
    assert message_units(calling) == len(str(calling.tools_calls))
    assert estimate_tokens([calling]) == len(str(calling.tools_calls)) // 4
    result = Message.tool_message([ToolResultBlock(call_id="c", output={"k": "v" * 10})])
    assert message_units(result) == len(json.dumps({"k": "v" * 10}))


@pytest.mark.parametrize("indent", [None, 2])
def test_reference_json_with_awkward_strings_and_floats_is_written_back_identical(indent: int | None) -> None:
    tricky = 'ctl\x00\x01\x1f\x7f tab\t nl\n q" bs\\ slash/ emoji😀 ls\u2028 ps\u2029 bom\ufeff é'
    first = Message.text_message(tricky, message_id="x")
    first.timestamp = 1e20
    second = Message.text_message("b", message_id=2)
    second.timestamp = 0.1 + 0.2
    written = AgentState(context=[first, second], context_summary=tricky).model_dump_json(indent=indent).encode()
    outcome = compact(written, MessageContextManager(max_messages=5), source="c.json")
    assert outcome.output() == written + b"\n"
