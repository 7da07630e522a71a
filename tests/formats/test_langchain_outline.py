"""The LangChain outline: what it accepts, the full reader reads the same, and trimming
from it gives the full path's bytes, warnings, errors and counts."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import budget_managers, explored, scripts, trim_both_ways, trim_document_both_ways, trim_rows_both_ways
from hypothesis import HealthCheck, given, strategies as st

from ctxmgr import formats
from ctxmgr._validate import shape_of
from ctxmgr.errors import InputError
from ctxmgr.formats._base import SUMMARY_HEADER
from ctxmgr.formats._detection.langchain import outline
from ctxmgr.state import MessageContextManager, message_units
from ctxmgr.state._tools import call_ids, result_ids

REPO = Path(__file__).resolve().parents[2]
TAU = REPO / "bench" / "tau" / "tau-airline-gpt4o.jsonl"

# Values of every JSON type, some right for a field and some wrong.
ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["", "x", "call_a", "user", "text", "human"]),
    st.just([]),
    st.just(["x"]),
    st.just({}),
    st.just({"k": 1}),
)
SCRIPTS = scripts(6)
HEADED = st.sampled_from([SUMMARY_HEADER + "\nearlier", SUMMARY_HEADER])
IDS = st.sampled_from(["call_a", "call_b", "call_c", "call_d", "call_e"])
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-9, 9), st.floats(-9, 9, allow_nan=False), SCRIPTS),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(SCRIPTS, inner, max_size=2)),
    max_leaves=4,
)
CLASS_OF = {
    "human": "HumanMessage",
    "ai": "AIMessage",
    "system": "SystemMessage",
    "tool": "ToolMessage",
    "chat": "ChatMessage",
    "function": "FunctionMessage",
}
CHUNK_OF = {
    "human": "HumanMessageChunk",
    "ai": "AIMessageChunk",
    "tool": "ToolMessageChunk",
    "chat": "ChatMessageChunk",
}


def _record(draw: st.DrawFn, kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as a ``messages_to_dict`` record or (one time in three) an ``lc`` constructor,
    now and then under a chunk's type or class."""
    chunk = kind in CHUNK_OF and draw(st.integers(0, 5)) == 0
    if draw(st.integers(0, 2)):
        return {"type": CHUNK_OF[kind] if chunk else kind, "data": {"type": kind, **data}}
    cls = CHUNK_OF[kind] if chunk else CLASS_OF[kind]
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": data}


# -- records the outline takes ------------------------------------------------------------

_TEXT_PARTS = st.lists(st.one_of(SCRIPTS, st.builds(lambda t: {"type": "text", "text": t}, SCRIPTS)), max_size=3)
"""Text alone: a tool message's output is then its texts joined by newlines."""
_PARTS = st.lists(
    st.one_of(
        SCRIPTS,
        st.builds(lambda t: {"type": "text", "text": t}, SCRIPTS),
        st.builds(lambda t: {"type": "text", "text": t, "annotations": [{"type": "citation"}]}, SCRIPTS),
        st.just({"type": "tool_use", "id": "call_a", "name": "lookup", "input": {}}),
        st.just({"type": "thinking", "thinking": "hm", "signature": "c2ln"}),
        st.just({"type": "reasoning", "summary": [{"type": "summary_text", "text": "so"}]}),
        st.just({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}),
        st.just({"type": "image_url", "image_url": 7}),
        st.just({"type": "file", "source_type": "base64", "data": "AAAA", "mime_type": "application/pdf"}),
        st.just({"type": "audio", "url": "https://x/a.wav"}),
    ),
    max_size=3,
)
CONTENT = st.one_of(SCRIPTS, SCRIPTS, _TEXT_PARTS, _PARTS)


@st.composite
def plain_records(
    draw: st.DrawFn, kinds: tuple[str, ...] = ("human", "human", "human", "ai", "ai", "system", "chat")
) -> Any:
    """A record without calls or results that the outline takes, in varied shapes."""
    kind = draw(st.sampled_from(kinds))
    content = draw(CONTENT)
    data: dict[str, Any] = {"content": content}
    if kind == "chat":
        data["role"] = draw(st.sampled_from(["user", "human", "assistant", "ai", "model", "system", "developer"]))
        if data["role"] in ("assistant", "ai", "model") and isinstance(content, list):
            content.append("")  # reasoning alone would be an orphan
    elif kind == "ai":
        data.update(tool_calls=draw(st.sampled_from([[], None])), invalid_tool_calls=[])
        extra = draw(st.integers(0, 5))
        if extra == 0:
            data["additional_kwargs"] = {"reasoning_content": draw(SCRIPTS)}
        elif extra == 1:
            data["additional_kwargs"] = {"tool_calls": []}
        elif extra == 2:
            data["additional_kwargs"] = {"reasoning": {"type": "reasoning", "id": "rs_1", "summary": []}}
        if extra == 2 or isinstance(content, list):
            data["content"] = [*content, "x"] if isinstance(content, list) else content + "x"
    if draw(st.booleans()):
        data["id"] = draw(st.sampled_from(["m1", None, ""]))
    return _record(draw, kind, data)


@st.composite
def tool_turn(draw: st.DrawFn) -> list[Any]:
    """An AI message's calls (in ``tool_calls``, the legacy ``additional_kwargs``, or
    ``invalid_tool_calls``) and their results: the pairings a trim keeps or cuts."""
    # From a wider pool than IDS: a call id used twice in one conversation is still drawn
    # now and then (then the rule check sends the conversation to the full reader).
    ids = draw(st.lists(st.sampled_from([f"call_{n}" for n in range(12)]), min_size=1, max_size=3, unique=True))
    data: dict[str, Any] = {"content": draw(st.one_of(st.just(""), SCRIPTS, _PARTS))}
    place = draw(st.integers(0, 5))
    split = draw(st.integers(0, len(ids))) if place == 0 else len(ids) if place < 3 else 0
    calls, rest = ids[:split], ids[split:]
    data["tool_calls"] = [
        {"name": draw(SCRIPTS), "args": draw(st.one_of(st.none(), st.dictionaries(SCRIPTS, JSON, max_size=2))), "id": i}
        for i in calls
    ]
    if rest and place < 5:
        data["invalid_tool_calls"] = [
            {"name": draw(st.one_of(SCRIPTS, st.none())), "args": draw(st.one_of(SCRIPTS, st.none())), "id": i}
            for i in rest
        ]
    elif rest:
        data["additional_kwargs"] = {
            "tool_calls": [
                {
                    "id": i,
                    "type": "function",
                    "function": {"name": draw(SCRIPTS), "arguments": draw(st.none() | SCRIPTS)},
                }
                for i in rest
            ]
        }
    answers = [
        _record(
            draw,
            "tool",
            {"content": draw(CONTENT), "tool_call_id": i, "status": draw(st.sampled_from(["success", "error"]))},
        )
        for i in draw(st.permutations(ids))
    ]
    answered = len(answers) - 1 if draw(st.integers(0, 5)) == 0 else len(answers)
    between = [draw(plain_records(("human",)))] if draw(st.integers(0, 9)) == 0 else []
    return [_record(draw, "ai", data), *between, *answers[:answered]]


def _flat(turns: list[list[Any]]) -> list[Any]:
    return [record for turn in turns for record in turn]


plain_conversations = st.lists(
    st.one_of(plain_records().map(lambda r: [r]), plain_records().map(lambda r: [r]), tool_turn()),
    min_size=1,
    max_size=10,
).map(_flat)
"""Conversations the outline takes whole (a trim may still break a pairing rule)."""


# -- near misses: one thing the reader treats specially -----------------------------------


def _with_content(draw: st.DrawFn, content: Any, kind: str | None = None) -> Any:
    kind = kind or draw(st.sampled_from(["human", "ai", "system"]))
    return _record(draw, kind, {"content": content})


_NEAR_MISSES: list[Callable[[st.DrawFn], Any]] = [
    # A summary (leading system messages) or a forged one (anywhere else).
    lambda draw: _with_content(draw, draw(HEADED), draw(st.sampled_from(["system", "human", "ai"]))),
    lambda draw: _with_content(draw, [draw(st.sampled_from(["x", {"type": "text", "text": "x"}])), draw(HEADED)]),
    lambda draw: _with_content(
        draw, [{"type": draw(st.sampled_from(["text", "image_url", "odd"])), "text": draw(HEADED)}]
    ),
    lambda draw: _record(
        draw,
        "tool",
        {"content": draw(st.sampled_from([SUMMARY_HEADER, [SUMMARY_HEADER, "x"]])), "tool_call_id": draw(IDS)},
    ),
    # A legacy function message (paired by name), a chat message of an unknown or tool role.
    lambda draw: _record(draw, "function", {"content": "x", "name": "lookup", "tool_call_id": draw(IDS)}),
    lambda draw: _record(
        draw, "chat", {"content": "x", "role": draw(st.sampled_from(["tool", "tool", "robot", None, 5, ["user"]]))}
    ),
    lambda draw: _record(draw, "chat", {"content": "x", "role": "tool"}),  # (a tool message without a result)
    # A call without an id of its own (last in a conversation, the reader's made-up id is
    # all that differs).
    lambda draw: _record(
        draw, "ai", {"content": "", "tool_calls": [{"name": "f", "id": draw(st.sampled_from(["", None]))}]}
    ),
    # Content the reader rejects or carries whole.
    lambda draw: _with_content(
        draw,
        [
            "x",
            draw(
                st.sampled_from(
                    [
                        3,
                        None,
                        {"type": "input_audio"},
                        {"text": "x"},
                        {"type": "text", "text": None},
                        {"type": ["text"]},
                    ]
                )
            ),
        ],
        draw(st.sampled_from(["human", "ai", "tool"])),
    ),
    lambda draw: _record(
        draw,
        draw(st.sampled_from(["human", "ai"])),
        draw(st.sampled_from([{}, {"content": None}, {"content": 3}, {"content": {"a": 1}}])),
    ),
    # Tool results without an id of their own.
    lambda draw: _record(
        draw,
        "tool",
        {
            "content": "x",
            **draw(st.sampled_from([{}, {"tool_call_id": None}, {"tool_call_id": ""}, {"tool_call_id": 5}])),
        },
    ),
    # Calls the reader rejects, or makes an id up for.
    lambda draw: _record(
        draw,
        "ai",
        {
            "content": "",
            "tool_calls": draw(
                st.sampled_from(
                    [
                        {"name": "f"},
                        [{"name": "f", "args": {}}],
                        [{"name": "f", "args": {}, "id": ""}],
                        [{"name": None, "args": {}, "id": "call_a"}],
                        [{"name": "f", "args": "{}", "id": "call_a"}],
                        [{"name": "f", "args": [1], "id": "call_a"}],
                        ["call_a"],
                    ]
                )
            ),
        },
    ),
    lambda draw: _record(
        draw,
        "ai",
        {
            "content": "",
            "additional_kwargs": draw(
                st.sampled_from(
                    [
                        {"tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]},
                        {"tool_calls": [{"id": "call_a", "function": "f"}]},
                        {"tool_calls": [{"id": "call_a", "function": {"name": None}}]},
                        {"tool_calls": ["call_a"]},
                    ]
                )
            ),
        },
    ),
    lambda draw: _record(draw, "ai", {"content": "", "additional_kwargs": {"function_call": {"name": "f"}}}),
    lambda draw: _record(
        draw,
        "ai",
        {
            "content": "x",
            "invalid_tool_calls": [{"name": "f", "args": "{", "id": draw(st.sampled_from([None, "", 5]))}],
        },
    ),
    # Reasoning alone in an assistant message: an orphan reasoning item to the rule check.
    lambda draw: _record(
        draw, "ai", {"content": [{"type": draw(st.sampled_from(["thinking", "reasoning", "redacted_thinking"]))}]}
    ),
    lambda draw: _record(
        draw, "ai", {"content": "", "additional_kwargs": {"reasoning": {"type": "reasoning", "summary": []}}}
    ),
    lambda draw: _record(draw, "chat", {"content": [{"type": "thinking", "thinking": "t"}], "role": "assistant"}),
    # Records of another shape: a key beside the form's (a native sign), broken lc forms.
    lambda draw: {
        **draw(plain_records()),
        draw(st.sampled_from(["message_id", "tools_calls", "role", "content"])): draw(ANY),
    },
    lambda draw: {"type": "human", "data": {"content": "x"}, "message_id": "m1"},  # native's sign
    lambda draw: {
        "lc": draw(st.sampled_from([2, "1", None])),
        "type": "constructor",
        "id": ["x", "HumanMessage"],
        "kwargs": {"content": "x"},
    },
    lambda draw: {
        "lc": 1,
        "type": "constructor",
        "id": draw(st.sampled_from([[], "x", ["RobotMessage"], [["x"]]])),
        "kwargs": {"content": "x"},
    },
    lambda draw: {
        "lc": 1,
        "type": "constructor",
        "id": ["HumanMessage"],
        "kwargs": draw(st.sampled_from([None, "x", []])),
    },
    lambda draw: {"type": draw(st.sampled_from(["robot", None, ["human"]])), "data": {"content": "x"}},
    lambda draw: {"type": "human", "data": draw(st.sampled_from(["x", None, [], {"content_": "x"}]))},
    lambda draw: draw(ANY),
]


# The near misses in a record's meaning (all but the last 8) weigh double: a careless
# outline would take them, where it would rarely take a record of another shape.
_LIKELY = _NEAR_MISSES[:-8]


@st.composite
def near_misses(draw: st.DrawFn) -> Any:
    return draw(st.sampled_from(_NEAR_MISSES + _LIKELY))(draw)


@st.composite
def answer_misses(draw: st.DrawFn, call_id: str) -> Any:
    """Something in a tool result's place that the reader does not read as one."""
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return _record(draw, "function", {"content": "x", "name": "lookup", "tool_call_id": call_id})
    if choice == 1:
        return _record(draw, "chat", {"content": "x", "role": "tool", "tool_call_id": call_id})
    if choice == 2:
        return _record(draw, "tool", {"content": draw(HEADED), "tool_call_id": call_id})
    return _record(draw, "tool", {"content": "x", "tool_call_id": draw(st.sampled_from([None, "", 5]))})


@st.composite
def conversations(draw: st.DrawFn) -> list[Any]:
    """A plain conversation, mostly with one near miss in it: first, last (what a trim
    keeps) or anywhere, or in a tool result's place."""
    messages: list[Any] = draw(plain_conversations)
    where = draw(st.sampled_from(["none", "first", "last", "last", "last", "anywhere", "answer"]))
    answers = [i for i, m in enumerate(messages) if (m.get("data") or m.get("kwargs")).get("tool_call_id")]
    if where == "answer" and answers:
        at = draw(st.sampled_from(answers))
        record = messages[at]
        messages[at] = draw(answer_misses((record.get("data") or record.get("kwargs"))["tool_call_id"]))
    elif where != "none":
        at = {"first": 0, "last": len(messages)}.get(where)
        messages.insert(draw(st.integers(0, len(messages))) if at is None else at, draw(near_misses()))
    return messages


@st.composite
def containers(draw: st.DrawFn) -> Any:
    """A bare message list or a dataset row; now and then empty, or a plain conversation
    beside a key another format claims (a "context" list is native's, "contents" Gemini's)."""
    shape = draw(st.integers(0, 9))
    if shape >= 8:
        foreign = draw(st.sampled_from(["context", "context", "contents", "contents", "system", "input"]))
        value = draw(st.sampled_from([[], [{"role": "user", "parts": [{"text": "x"}]}], [{"parts": []}], "x", None]))
        return {"messages": draw(plain_conversations), foreign: value}
    messages = [] if draw(st.integers(0, 29)) == 0 else draw(conversations())
    return messages if shape < 3 else {"task_id": 3, "messages": messages}


# -- the paths agree ----------------------------------------------------------------------


PLAIN_FIRST = {"messages": [{"type": "human", "data": {"content": "hi", "type": "human"}}], "task_id": 0}


@explored(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(containers(), min_size=1, max_size=5), keep=st.integers(0, 3), remove_tools=st.booleans())
def test_fast_and_full_paths_agree_on_datasets(tmp_path: Path, rows: list[Any], keep: int, remove_tools: bool) -> None:
    # A plain first line settles the format: the other lines are the ones under test
    # (test_first_lines_agree covers the first line itself).
    trim_rows_both_ways(
        tmp_path, [PLAIN_FIRST, *rows], MessageContextManager(max_messages=keep, remove_tool_msgs=remove_tools)
    )


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(containers(), min_size=1, max_size=3), keep=st.integers(0, 2), remove_tools=st.booleans())
def test_first_lines_agree(tmp_path: Path, rows: list[Any], keep: int, remove_tools: bool) -> None:
    """The first line may settle the dataset's format on the fast path: same result."""
    trim_rows_both_ways(tmp_path, rows, MessageContextManager(max_messages=keep, remove_tool_msgs=remove_tools))


@explored(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=containers(), pretty=st.booleans(), keep=st.integers(0, 3), remove_tools=st.booleans())
def test_documents_agree_too(tmp_path: Path, value: Any, pretty: bool, keep: int, remove_tools: bool) -> None:
    trim_document_both_ways(
        tmp_path, value, MessageContextManager(max_messages=keep, remove_tool_msgs=remove_tools), pretty=pretty
    )


# A plain conversation that passes the rule check, with a call whose name no near miss uses.
BASE = [
    {"type": "system", "data": {"content": "rules"}},
    {"type": "human", "data": {"content": "q1"}},
    {"type": "ai", "data": {"content": "", "tool_calls": [{"name": "find", "args": {"q": "é"}, "id": "c1"}]}},
    {"type": "tool", "data": {"content": "found", "tool_call_id": "c1"}},
    {"type": "ai", "data": {"content": "a1"}},
    {"type": "human", "data": {"content": "q2"}},
]


@pytest.mark.parametrize("index", range(len(_NEAR_MISSES) + 1))
@explored(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), keep=st.integers(0, 3), remove_tools=st.booleans(), bare=st.booleans())
def test_each_near_miss_agrees(
    tmp_path: Path, index: int, data: st.DataObject, keep: int, remove_tools: bool, bare: bool
) -> None:
    """Every kind of near miss (the last: one in a tool result's place), alone in a
    conversation that is otherwise plain: the paths still agree."""
    messages = list(BASE)
    if index < len(_NEAR_MISSES):
        at = data.draw(st.sampled_from([len(messages), 0, 1, 3]), label="at")
        messages.insert(at, _NEAR_MISSES[index](data.draw))
    else:
        messages[3] = data.draw(answer_misses("c1"), label="answer")
    path = tmp_path / "rows.jsonl"
    path.write_bytes(orjson.dumps(PLAIN_FIRST) + b"\n" + orjson.dumps(messages if bare else {"messages": messages}))
    trim_both_ways(path, MessageContextManager(max_messages=keep, remove_tool_msgs=remove_tools), tmp_path)


# -- what the outline reads, against the model --------------------------------------------


@explored(max_examples=150, deadline=None)
@given(st.one_of(conversations(), plain_conversations), st.booleans())
def test_what_the_outline_takes_the_reader_reads_the_same(messages: list[Any], bare: bool) -> None:
    """Roles, call ids, result ids, the trim rule's flag and token units: exactly the
    model's, message by message; no message the rule check would flag on its own."""
    value: Any = messages if bare else {"messages": messages, "task_id": 1}
    found = outline(value)
    if found is None:
        return
    try:
        conversation = formats.load_value(value, source="x", layout="document", fmt="langchain")
    except InputError as error:
        raise AssertionError(f"the outline took what the reader rejects: {error}") from None
    assert conversation.warnings == []
    assert conversation.state.context_summary is None
    context = conversation.state.context
    assert len(found.roles) == len(context)
    for i, message in enumerate(context):
        assert found.roles[i] == message.role
        assert found.calls[i] == tuple(call_ids(message))
        assert found.results[i] == tuple(result_ids(message))
        assert bool(found.calls[i]) == bool(message.tools_calls)  # the trim rule's flag
        shape = shape_of(message)
        assert not shape.empty_tool
        assert not shape.orphan_reasoning
    assert found.units() == [message_units(m) for m in context]
    from ctxmgr.state._compaction import _chars  # ... and characters, as a budget's report counts them

    assert found.chars is not None
    assert [found.chars(i) for i in range(len(found.roles))] == list(map(_chars, context))
    assert formats.detect_name(value, source="x") == "langchain"
    kept = list(range(0, len(context), 2))
    assert found.rebuild(kept) == (
        [messages[i] for i in kept] if bare else {"messages": [messages[i] for i in kept], "task_id": 1}
    )


# -- what it declines ---------------------------------------------------------------------


def _human(content: Any = "hi") -> dict[str, Any]:
    return {"type": "human", "data": {"content": content, "type": "human"}}


def _ai(content: Any = "", **fields: Any) -> dict[str, Any]:
    return {"type": "ai", "data": {"content": content, "type": "ai", "tool_calls": [], **fields}}


def _tool(call_id: Any = "c1", content: Any = "ok") -> dict[str, Any]:
    return {"type": "tool", "data": {"content": content, "type": "tool", "tool_call_id": call_id}}


def _lc(cls: str, **kwargs: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


def test_it_reads_both_forms_and_every_place_a_call_sits() -> None:
    value = {
        "messages": [
            _lc("SystemMessage", content="rules"),
            _human([{"type": "text", "text": "q"}, {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]),
            _ai(
                [{"type": "thinking", "thinking": "t"}, {"type": "tool_use", "id": "c1", "name": "f", "input": {}}],
                tool_calls=[{"name": "f", "args": {"q": 1}, "id": "c1"}],
                invalid_tool_calls=[{"name": "g", "args": "{bad", "id": "c2"}, 7],
            ),
            _lc("ToolMessage", content="r1", tool_call_id="c1"),
            _lc("ToolMessageChunk", content=[{"type": "text", "text": "r2"}], tool_call_id="c2"),
            _lc(
                "AIMessage",
                content="",
                additional_kwargs={"tool_calls": [{"id": "c3", "function": {"name": "f", "arguments": "{}"}}]},
            ),
            _tool("c3"),
            {"type": "chat", "data": {"content": "done", "role": "assistant"}},
            {"type": "developer", "data": {"content": "more rules"}},
        ],
        "thread_id": "t1",
    }
    found = outline(value)
    assert found is not None
    assert found.roles == ["system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant", "system"]
    assert found.calls == [(), (), ("c1", "c2"), (), (), ("c3",), (), (), ()]
    assert found.results == [(), (), (), ("c1",), ("c2",), (), ("c3",), (), ()]
    assert found.rebuild([1, 7]) == {"messages": [value["messages"][1], value["messages"][7]], "thread_id": "t1"}
    conversation = formats.load_value(value, source="x", layout="document")
    assert found.units() == [message_units(m) for m in conversation.state.context]
    from ctxmgr.state._compaction import _chars  # ... and characters, as a budget's report counts them

    assert found.chars is not None
    assert [found.chars(i) for i in range(len(found.roles))] == list(map(_chars, conversation.state.context))


@pytest.mark.parametrize(
    ("why", "value"),
    [
        ("empty list", []),
        ("empty messages", {"messages": []}),
        ("messages not a list", {"messages": {"a": _human()}}),
        ("not a container", "text"),
        ("native also claims it", {"messages": [_human()], "context": []}),
        ("Gemini also claims it", {"messages": [_human()], "contents": [{"parts": []}]}),
        ("not a record", [_human(), 5]),
        ("unknown type", [{"type": "robot", "data": {"content": "x"}}]),
        ("unknown class", [{"lc": 1, "type": "constructor", "id": ["x", "RobotMessage"], "kwargs": {"content": "x"}}]),
        ("lc 2", [{"lc": 2, "type": "constructor", "id": ["x", "HumanMessage"], "kwargs": {"content": "x"}}]),
        ("an empty id", [{"lc": 1, "type": "constructor", "id": [], "kwargs": {"content": "x"}}]),
        ("a key beside the form's", [{**_human(), "role": "user"}]),
        ("no data", [{"type": "human", "content": "x"}]),
        ("no content", [{"type": "human", "data": {"type": "human"}}]),
        ("null content", [_human(None)]),
        ("number content", [_human(3)]),
        ("a function message", [_ai(), {"type": "function", "data": {"content": "x", "name": "f"}}]),
        ("a chat message of an unknown role", [{"type": "chat", "data": {"content": "x", "role": "robot"}}]),
        ("a chat message of role tool", [{"type": "chat", "data": {"content": "x", "role": "tool"}}]),
        ("an unknown part", [_human([{"type": "input_audio"}])]),
        ("a part without a type", [_human([{"text": "x"}])]),
        ("a text part without text", [_human([{"type": "text", "text": None}])]),
        ("a part that is a number", [_human([3])]),
        ("an unhashable part type", [_human([{"type": ["text"]}])]),
        ("a tool message without an id", [_tool(None)]),
        ("a tool message with an empty id", [_tool("")]),
        ("tool_calls not a list", [_ai(tool_calls={"name": "f"})]),
        ("a call without an id", [_ai(tool_calls=[{"name": "f", "args": {}}])]),
        ("a call with an empty id", [_ai(tool_calls=[{"name": "f", "args": {}, "id": ""}])]),
        ("a call without a name", [_ai(tool_calls=[{"args": {}, "id": "c1"}])]),
        ("a call whose args are text", [_ai(tool_calls=[{"name": "f", "args": "{}", "id": "c1"}])]),
        ("a legacy call without an id", [_ai(additional_kwargs={"tool_calls": [{"function": {"name": "f"}}]})]),
        ("a legacy function_call", [_ai(additional_kwargs={"function_call": {"name": "f", "arguments": "{}"}})]),
        ("an invalid call without an id", [_ai(invalid_tool_calls=[{"name": "f", "args": "{"}])]),
        ("reasoning alone", [_human(), _ai([{"type": "thinking", "thinking": "t"}])]),
        ("a reasoning item alone", [_human(), _ai(additional_kwargs={"reasoning": {"type": "reasoning"}})]),
        (
            "reasoning alone in a chat message",
            [{"type": "chat", "data": {"content": [{"type": "reasoning"}], "role": "ai"}}],
        ),
    ],
)
def test_it_declines(why: str, value: Any) -> None:
    assert outline(value) is None, why


def test_it_takes_what_only_looks_odd() -> None:
    """Reasoning beside text or calls, a call part beside its call, a skipped non-object
    invalid call, an empty content: the reader reads them plainly."""
    for value in (
        [_human(), _ai([{"type": "thinking", "thinking": "t"}, {"type": "text", "text": ""}])],
        [_human(), _ai([{"type": "reasoning"}], tool_calls=[{"name": "f", "id": "c1"}]), _tool("c1")],
        [_human(), _ai([{"type": "tool_use", "id": "c1"}], tool_calls=[{"name": "f", "id": "c1"}]), _tool("c1", [])],
        [_human(), _ai("x", invalid_tool_calls=[7, None])],
        [_human(""), _ai(additional_kwargs={"reasoning_content": "why"}, tool_calls=None)],
    ):
        found = outline(value)
        assert found is not None, value
        conversation = formats.load_value(value, source="x", layout="document")
        assert conversation.warnings == []
        assert found.units() == [message_units(m) for m in conversation.state.context]
        from ctxmgr.state._compaction import _chars  # ... and characters, as a budget's report counts them

        assert found.chars is not None
        assert [found.chars(i) for i in range(len(found.roles))] == list(map(_chars, conversation.state.context))


# -- the real data ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tau_langchain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vendored tau-bench conversations, converted to LangChain (as ``ctxmgr convert`` does)."""
    lines = []
    for number, raw in enumerate(TAU.read_bytes().splitlines(), start=1):
        conversation = formats.load_value(orjson.loads(raw), source=f"tau:{number}", layout="document")
        lines.append(formats.dump(conversation, to="langchain"))
    path = tmp_path_factory.mktemp("tau") / "tau-langchain.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def test_the_real_data_takes_the_fast_path(tau_langchain: Path) -> None:
    lines = tau_langchain.read_bytes().splitlines()
    accepted = [outline(orjson.loads(line)) is not None for line in lines]
    assert len(lines) == 200
    assert sum(accepted) / len(lines) >= 0.95


def test_the_real_data_agrees_on_both_paths(tau_langchain: Path, tmp_path: Path) -> None:
    fast = trim_both_ways(tau_langchain, MessageContextManager(2), tmp_path)[0]
    assert fast.format == "langchain"
    assert fast.messages_after < fast.messages_before
    # Lines reuse call ids, which LangChain's providers take (only Anthropic refuses them): no warning.
    assert fast.warnings == []


def test_a_langchain_trim_imports_no_pydantic(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [{"messages": [_lc("SystemMessage", content="s"), _human("a"), _ai("b"), _human("c"), _ai("d")]}] * 3
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('PYDANTIC=' + str('pydantic' in sys.modules) + '\\n'))\n"
        f"sys.argv = ['ctxmgr', 'trim', {str(path)!r}, '-n', '1', '--no-view']\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    kept = [orjson.loads(line)["messages"] for line in proc.stdout.splitlines()]
    assert kept == [[rows[0]["messages"][0], *rows[0]["messages"][3:]]] * 3
    assert proc.stderr.decode().splitlines()[-1] == "PYDANTIC=False"


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(containers(), min_size=1, max_size=4), manager=budget_managers())
def test_token_budgets_agree_on_both_paths(tmp_path: Path, rows: list[Any], manager: Any) -> None:
    """``trim --max-tokens`` from the outline: the full path's bytes, warnings, counts and counters."""
    trim_rows_both_ways(tmp_path, [PLAIN_FIRST, *rows], manager)
