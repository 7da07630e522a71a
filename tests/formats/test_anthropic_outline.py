"""The Anthropic outline: what it accepts, the full reader and writer read and write the same.

The outline (:func:`ctxmgr.formats._detection.anthropic.outline`) is the trim fast path's
reader; the full one is :mod:`ctxmgr.formats._anthropic`. Trimming through either must
give the same bytes, warnings, errors, detection and counts: the top-level ``system`` is
message 0, a user record holding tool results is a ``tool`` message, thinking blocks
stay in their (signed) records.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import (
    budget_managers,
    explored,
    scripts,
    trim,
    trim_both_ways,
    trim_document_both_ways,
    trim_rows_both_ways,
)
from hypothesis import HealthCheck, given, strategies as st

from ctxmgr import _io as io, formats
from ctxmgr._validate import shape_of
from ctxmgr.files import FileResult, Settings
from ctxmgr.formats._base import SUMMARY_HEADER
from ctxmgr.formats._detection.anthropic import outline
from ctxmgr.state import MessageContextManager, message_units
from ctxmgr.state._tools import call_ids, result_ids

ROOT = Path(__file__).resolve().parents[2]

# Values of every JSON type, some right for a field and some wrong.
ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["", "a", "toolu_1", "user", "text"]),
    st.just([]),
    st.just(["x"]),
    st.just({}),
    st.just({"type": "text"}),
)
# Text of every weight class of the token estimate; TEXTS, sometimes ctxmgr's summary mark,
# at the start or after a blank line.
SCRIPTS = scripts(5)
# The same with lone surrogates, which JSON text (and so a file) cannot hold but a value
# built in memory can: for the units test, which reads no file.
SURROGATES = st.lists(
    st.one_of(SCRIPTS, st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=None)), max_size=3
).map("".join)
TEXTS = st.integers(0, 19).flatmap(
    lambda n: (
        SCRIPTS.map(lambda t: f"{SUMMARY_HEADER}\n{t}")
        if n == 0
        else SCRIPTS.map(lambda t: f"{t}\n\n{SUMMARY_HEADER}\nearlier")
        if n == 1
        else SCRIPTS
    )
)
IDS = st.sampled_from(["toolu_1", "toolu_2", "toolu_3"] * 3 + [""])
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-9, 9), st.floats(-9, 9, allow_nan=False), SCRIPTS),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(SCRIPTS, inner, max_size=2)),
    max_leaves=4,
)


def _mostly(draw: st.DrawFn, good: st.SearchStrategy[Any]) -> Any:
    """A right value, or (one time in twelve) any value."""
    return draw(good) if draw(st.integers(0, 11)) else draw(ANY)


def _maybe(draw: st.DrawFn, block: dict[str, Any], key: str, good: st.SearchStrategy[Any]) -> None:
    """Leave ``key`` out, or set it to a right value, or (rarely) to any value."""
    choice = draw(st.integers(0, 9))
    if choice < 5:
        return
    block[key] = draw(good) if choice < 9 else draw(ANY)


TEXT_PART = st.builds(lambda t: {"type": "text", "text": t}, TEXTS)
RESULT_CONTENT = st.integers(0, 19).flatmap(
    lambda n: (
        ANY
        if n == 0
        else st.lists(
            st.one_of(
                TEXT_PART,
                st.just({"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}),
                st.builds(lambda v: {"type": "search_result", "content": v}, JSON),
                st.just({"text": "no type"}),
                st.just("not a block"),
            ),
            min_size=1,
            max_size=3,
        )
        if n < 4
        else st.lists(TEXT_PART, max_size=3)
        if n < 8
        else st.none()
        if n < 10
        else TEXTS
    )
)
"""A tool_result's content: mostly a string, sometimes text parts, other blocks (kept
as JSON in the result's text), parts the reader rejects, or a wrong type."""


@st.composite
def blocks(draw: st.DrawFn) -> Any:
    kind = draw(
        st.sampled_from(
            ["text"] * 4
            + ["tool_use"] * 2
            + ["tool_result"] * 2
            + ["thinking", "redacted_thinking", "image", "document", "server_tool_use", "mystery", "image_url", "odd"]
        )
    )
    if kind == "odd":
        return draw(st.one_of(ANY, st.just({"text": "no type"})))
    block: dict[str, Any] = {"type": kind}
    if kind == "text":
        block["text"] = _mostly(draw, TEXTS)
        _maybe(draw, block, "citations", st.just([{"type": "char_location", "cited_text": "x"}]))
    elif kind == "tool_use":
        block["id"] = _mostly(draw, IDS)
        block["name"] = _mostly(draw, SCRIPTS)
        _maybe(draw, block, "input", st.dictionaries(SCRIPTS, JSON, max_size=2))
    elif kind == "tool_result":
        block["tool_use_id"] = _mostly(draw, IDS)
        _maybe(draw, block, "content", RESULT_CONTENT)
        _maybe(draw, block, "is_error", st.one_of(st.booleans(), st.none()))
    elif kind == "thinking":
        block["thinking"] = _mostly(draw, TEXTS)
        block["signature"] = "EqQBCkYIBxgCKkBsig"
    elif kind == "redacted_thinking":
        block["data"] = "EmwKAhgBEgy3va"
    elif kind in ("image", "document"):
        _maybe(
            draw,
            block,
            "source",
            st.sampled_from(
                [
                    {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"},
                    {"type": "url", "url": "https://x/y.pdf"},
                    {"type": "text", "media_type": "text/plain", "data": "a document's text"},
                ]
            ),
        )
        _maybe(draw, block, "title", SCRIPTS)
    elif kind == "server_tool_use":
        block.update(id="srvtoolu_1", name="web_search", input={"query": "q"})
    if draw(st.integers(0, 9)) == 0:
        block["cache_control"] = {"type": "ephemeral"}
    return block


@st.composite
def records(draw: st.DrawFn) -> Any:
    """A record of any shape: mostly well-formed, sometimes one field wrong."""
    if draw(st.integers(0, 40)) == 0:
        return draw(ANY)
    role = _mostly(draw, st.sampled_from(["user", "assistant"] * 4 + ["system", "system", "tool", "robot"]))
    record: dict[str, Any] = {"role": role}
    choice = draw(st.integers(0, 29))
    if choice < 12:
        record["content"] = draw(TEXTS)
    elif choice < 28:
        record["content"] = draw(st.lists(blocks(), max_size=3))
    elif choice == 28:
        record["content"] = draw(ANY)
    if draw(st.integers(0, 14)) == 0:
        record[draw(st.sampled_from(["name", "id", "tool_calls", "type", "cache_control"]))] = draw(ANY)
    return record


@st.composite
def plain_turns(draw: st.DrawFn, texts: st.SearchStrategy[str] = SCRIPTS) -> list[Any]:
    """Well-formed turns with tool use: a question, calls and their results (ids reused
    sometimes, a result sometimes late or missing), thinking, an answer; ``texts``
    their texts, tool names, inputs' keys and values."""
    turns: list[Any] = []
    for _ in range(draw(st.integers(1, 4))):
        turns.append({"role": "user", "content": draw(texts)})
        if draw(st.booleans()):
            ids = draw(st.lists(IDS.filter(bool), min_size=1, max_size=2))
            content: list[Any] = []
            if draw(st.booleans()):
                content.append({"type": "thinking", "thinking": draw(texts), "signature": "sig"})
            if draw(st.booleans()):
                content.append({"type": "text", "text": draw(texts)})
            content += [
                {
                    "type": "tool_use",
                    "id": i,
                    "name": draw(texts),
                    "input": draw(st.dictionaries(texts, st.one_of(JSON, texts))),
                }
                for i in ids
            ]
            turns.append({"role": "assistant", "content": content})
            answered = draw(st.lists(st.sampled_from(ids), min_size=0, max_size=2)) if draw(st.booleans()) else ids
            results: list[Any] = [
                {"type": "tool_result", "tool_use_id": i, "content": draw(RESULT_CONTENT)} for i in answered
            ]
            if draw(st.integers(0, 3)) == 0:
                results.append({"type": "text", "text": draw(texts)})
            turns.append({"role": "user", "content": results})
        answer = draw(st.one_of(texts, st.lists(st.builds(lambda t: {"type": "text", "text": t}, texts))))
        turns.append({"role": "assistant", "content": answer})
    return turns


SYSTEMS = st.integers(0, 19).flatmap(
    lambda n: (
        ANY
        if n == 0
        else st.sampled_from([None, "absent"])  # null, or no "system" key
        if n < 5
        else TEXTS
        if n < 12
        else st.lists(
            st.one_of(
                st.builds(lambda t: {"type": "text", "text": t}, TEXTS),
                st.builds(lambda t: {"type": "text", "text": t, "cache_control": {"type": "ephemeral"}}, SCRIPTS),
            ),
            max_size=2,
        )
    )
)


@st.composite
def conversations(draw: st.DrawFn) -> Any:
    """A dataset line or document: ``{"system", "messages", ...}`` or a bare message list."""
    messages = draw(
        st.one_of(
            plain_turns(),
            st.lists(records(), max_size=6),
            st.tuples(plain_turns(), st.lists(records(), max_size=2)).map(lambda p: p[0] + p[1]),
        )
    )
    if draw(st.integers(0, 9)) == 0:
        return messages
    value: dict[str, Any] = {"task_id": draw(st.integers(0, 9))}
    system = draw(SYSTEMS)
    if system != "absent":
        value["system"] = system
    if draw(st.integers(0, 4)) == 0:
        value["model"] = draw(st.sampled_from(["claude-sonnet-4-5", "gpt-4o"]))
    if draw(st.integers(0, 19)) == 0:
        value[draw(st.sampled_from(["context", "contents", "role", "seed"]))] = draw(ANY)
    value["messages"] = messages
    return value


MANAGERS = st.builds(MessageContextManager, max_messages=st.integers(0, 3), remove_tool_msgs=st.booleans())
PLAIN_FIRST = {"system": "You book flights.", "messages": [{"role": "user", "content": "hi"}]}


@explored(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(conversations(), min_size=1, max_size=5), manager=MANAGERS)
def test_fast_and_full_paths_agree_on_datasets(tmp_path: Path, rows: list[Any], manager: MessageContextManager) -> None:
    # A plain first line settles the format: the other lines are the ones under test
    # (test_first_lines_agree covers the first line itself).
    trim_rows_both_ways(tmp_path, [PLAIN_FIRST, *rows], manager)


@explored(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(conversations(), min_size=1, max_size=3), manager=MANAGERS)
def test_first_lines_agree(tmp_path: Path, rows: list[Any], manager: MessageContextManager) -> None:
    """The first line may settle the dataset's format on the fast path: same result."""
    trim_rows_both_ways(tmp_path, rows, manager)


@explored(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=conversations(), pretty=st.booleans(), manager=MANAGERS)
def test_documents_agree_too(tmp_path: Path, value: Any, pretty: bool, manager: MessageContextManager) -> None:
    trim_document_both_ways(tmp_path, value, manager, pretty=pretty)


@explored(max_examples=150, deadline=None)
@given(value=conversations(), data=st.data())
def test_what_the_outline_takes_the_reader_reads_the_same(value: Any, data: st.DataObject) -> None:
    """An accepted value: detected as Anthropic, read without a warning into messages of
    the outline's roles, call ids, result ids and token units; ``rebuild(kept)`` is what
    the writer writes of those messages."""
    found = outline(value)
    if found is None:
        return
    assert formats.detect_name(value, source="x") == "anthropic"
    conversation = formats.load_value(value, source="x", layout="document")
    assert conversation.warnings == []
    assert conversation.state.context_summary is None
    context = conversation.state.context
    assert found.roles == [m.role for m in context]
    assert found.calls == [tuple(call_ids(m)) for m in context]
    assert found.results == [tuple(result_ids(m)) for m in context]
    assert [bool(c) for c in found.calls] == [bool(m.tools_calls) for m in context]  # the trim rule's flag
    assert not any(shape_of(m).orphan_reasoning or shape_of(m).empty_tool for m in context)
    assert found.units() == [message_units(m) for m in context]
    from ctxmgr.state._compaction import _chars  # ... and characters, as a budget's report counts them

    assert found.chars is not None
    assert [found.chars(i) for i in range(len(found.roles))] == list(map(_chars, context))
    kept = data.draw(st.lists(st.sampled_from(range(len(context))), unique=True).map(sorted)) if context else []
    conversation.state.context = [context[i] for i in kept]
    assert io.dumps(found.rebuild(kept), "document") == formats.dump(conversation)


@explored(max_examples=100, deadline=None)
@given(
    st.one_of(plain_turns(SURROGATES), plain_turns(SURROGATES).map(lambda m: {"system": "s", "messages": m})),
    st.one_of(
        st.none(), SURROGATES, st.lists(st.builds(lambda t: {"type": "text", "text": t}, SURROGATES), max_size=2)
    ),
)
def test_outline_units_are_the_readers_message_units(messages: Any, system: Any) -> None:
    """Token reports from the fast path: each message's counted units, exactly, in any
    script (tool inputs as the reader's JSON arguments, results' text parts joined with
    newlines, other result content as JSON)."""
    value = messages if system is None or isinstance(messages, list) else {**messages, "system": system}
    found = outline(value)
    if found is None:
        return
    conversation = formats.load_value(value, source="x", layout="document")
    assert found.units() == [message_units(m) for m in conversation.state.context]
    from ctxmgr.state._compaction import _chars  # ... and characters, as a budget's report counts them

    assert found.chars is not None
    assert [found.chars(i) for i in range(len(found.roles))] == list(map(_chars, conversation.state.context))


def test_it_reads_roles_calls_and_results() -> None:
    value = {
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "EqQB"},
                    {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
                    {"type": "tool_use", "id": "t2", "name": "f"},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "r1"},
                    {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "r2"}]},
                ],
            },
            {
                "role": "assistant",
                "content": [{"type": "redacted_thinking", "data": "x"}, {"type": "text", "text": "a"}],
            },
        ],
        "max_tokens": 1024,
    }
    found = outline(value)
    assert found is not None
    assert found.roles == ["system", "user", "assistant", "tool", "assistant"]
    assert found.calls == [(), (), ("t1", "t2"), (), ()]
    assert found.results == [(), (), (), ("t1", "t2"), ()]
    assert found.has_tools
    # The system prompt stays in "system"; the kept records follow it, untouched.
    assert found.rebuild([0, 4]) == {**value, "messages": [value["messages"][3]]}
    assert found.rebuild([0, 1, 2, 3, 4]) == value
    assert found.units() == [
        5,
        1,
        len(
            str(
                [
                    {"id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
                    {"id": "t2", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                ]
            )
        ),
        4,
        1,
    ]
    bare = outline(value["messages"])
    assert bare is not None
    assert bare.roles == ["user", "assistant", "tool", "assistant"]
    assert bare.rebuild([3]) == [value["messages"][3]]


SYSTEM_KEY = {"system": "s"}
USER = {"role": "user", "content": "q"}


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("a string", "not a conversation"),
        ({"system": "s", "messages": "x"}, "messages not a list"),
        ({"system": 3, "messages": [USER]}, "system of a wrong type (the reader rejects it)"),
        ({"system": [{"type": "text"}], "messages": [USER]}, "system block without text"),
        ({**SYSTEM_KEY, "messages": [{"role": "tool", "content": "x"}]}, "a role the reader rejects"),
        ({**SYSTEM_KEY, "messages": [{"role": ["user"], "content": "x"}]}, "an unhashable role"),
        ({**SYSTEM_KEY, "messages": [{"role": "user"}]}, "no content"),
        ({**SYSTEM_KEY, "messages": [{"role": "user", "content": None}]}, "null content"),
        ({**SYSTEM_KEY, "messages": [{"role": "user", "content": "q", "name": "n"}]}, "a key beside role and content"),
        ({**SYSTEM_KEY, "messages": [{"role": "user", "content": ["q"]}]}, "a block that is no object"),
        ({**SYSTEM_KEY, "messages": [{"role": "user", "content": [{"text": "q"}]}]}, "a block without a type"),
        ({**SYSTEM_KEY, "messages": [{"role": "user", "content": [{"type": "text"}]}]}, "text without text"),
        (
            {**SYSTEM_KEY, "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
            "a Chat Completions part",
        ),
        (
            {**SYSTEM_KEY, "messages": [{"role": "system", "content": [{"type": "image", "source": {}}]}, USER]},
            "media in a system record (the reader rejects it)",
        ),
        (
            {**SYSTEM_KEY, "messages": [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f"}]}]},
            "a tool call in a user record (passed through, not paired)",
        ),
        (
            {
                **SYSTEM_KEY,
                "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "", "name": "f"}]}],
            },
            "a call with an empty id",
        ),
        (
            {**SYSTEM_KEY, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]}]},
            "a call without a name",
        ),
        (
            {
                **SYSTEM_KEY,
                "messages": [
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": None}]}
                ],
            },
            "a call whose input is no object",
        ),
        (
            {
                **SYSTEM_KEY,
                "messages": [{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]}],
            },
            "a result in an assistant record",
        ),
        (
            {**SYSTEM_KEY, "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": ""}]}]},
            "a result with an empty id",
        ),
        (
            {
                **SYSTEM_KEY,
                "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": 1}]}],
            },
            "is_error not a boolean",
        ),
        (
            {
                **SYSTEM_KEY,
                "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": 5}]}],
            },
            "result content of a wrong type",
        ),
        (
            {
                **SYSTEM_KEY,
                "messages": [
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"x": 1}]}]}
                ],
            },
            "a result part without a type",
        ),
        (
            {**SYSTEM_KEY, "messages": [{"role": "user", "content": [{"type": "thinking", "thinking": "x"}]}]},
            "thinking outside an assistant record",
        ),
        (
            {
                **SYSTEM_KEY,
                "messages": [USER, {"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}],
            },
            "an assistant record of thinking alone (the rule check warns)",
        ),
        ([USER, {"role": "assistant", "content": "a"}], "text only and no system: detection says OpenAI chat"),
        ({"messages": [USER], "context": []}, "a native container key"),
        ({"messages": [USER], "contents": [], "system": "s"}, "a Gemini container key"),
        ({"messages": [USER], "role": "user", "system": "s"}, "a container that is also a message"),
    ],
)
def test_it_declines(value: Any, why: str) -> None:
    assert outline(value) is None, why


def test_the_real_tau_bench_conversations_take_the_fast_path(tmp_path: Path) -> None:
    """The vendored tau-bench conversations converted to Anthropic: the outline takes every
    line, the fast path trims all but those that reuse a tool-call id in the kept turns
    (the rule check's warning is worded by the full path), and both paths agree."""
    from ctxmgr.files import _fastpath as fastpath

    lines = [
        formats.dump(formats.load(line, source="tau"), to="anthropic")
        for line in (ROOT / "bench" / "tau" / "tau-airline-gpt4o.jsonl").read_bytes().splitlines()
    ]
    taken = sum(outline(orjson.loads(line)) is not None for line in lines)
    assert taken == len(lines) == 200
    manager = MessageContextManager(2)
    result, first = FileResult(source="tau"), []
    trimmed = [
        fastpath.fast_line(number, line[:-1], "tau", manager, Settings(), result, first)[0]
        for number, line in enumerate(lines, 1)
    ]
    assert sum(out is not None for out in trimmed) >= 0.95 * len(lines)
    data = tmp_path / "tau-anthropic.jsonl"
    data.write_bytes(b"".join(lines))
    full = trim_both_ways(data, manager)[1]
    assert full.format == "anthropic"
    assert full.changed_conversations == 200
    assert full.warnings  # the lines that reuse an id: worded by the full path on both


def test_the_real_request_bodies_agree(tmp_path: Path) -> None:
    """The recorded Anthropic request bodies (thinking with signatures, redacted thinking,
    prompt caching, server tools, MCP): the outline takes them, and both paths agree."""
    paths = sorted((ROOT / "tests" / "conversations" / "anthropic").glob("*.json"))
    assert len(paths) == 6
    for path in paths:
        assert outline(orjson.loads(path.read_bytes())) is not None, path.name
        copy = tmp_path / path.name
        copy.write_bytes(path.read_bytes())
        for keep in (0, 1):
            trim_both_ways(copy, MessageContextManager(keep))


def test_an_anthropic_trim_imports_no_pydantic(tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(6)]
    request.write_bytes(orjson.dumps({"model": "claude-sonnet-4-5", "system": "s", "messages": turns}))
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('PYDANTIC=' + str('pydantic' in sys.modules) + '\\n'))\n"
        f"sys.argv = ['ctxmgr', 'trim', {str(request)!r}, '-n', '1', '--no-view']\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    out = orjson.loads(proc.stdout)
    assert out["system"] == "s"
    assert [m["content"] for m in out["messages"]] == ["m4", "m5"]
    assert proc.stderr.decode().splitlines()[-1] == "PYDANTIC=False"


def test_a_text_only_line_is_read_as_the_datasets_format_on_every_path(tmp_path: Path) -> None:
    """After an Anthropic first line, a text-only line without a system prompt (valid
    OpenAI chat too) is read as Anthropic, the dataset's format, on both paths alike."""
    data = tmp_path / "mixed.jsonl"
    chat = {"messages": [USER, {"role": "assistant", "content": "a"}, USER]}
    data.write_bytes(orjson.dumps(PLAIN_FIRST) + b"\n" + orjson.dumps(chat) + b"\n")
    outputs = []
    for fast in (True, False):
        result, out = trim(data, tmp_path / f"out-{fast}.jsonl", MessageContextManager(1), fast)
        assert result.input_error is None
        assert result.format == "anthropic"
        outputs.append(out)
    assert outputs[0] == outputs[1]
    assert outputs[0] is not None


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(conversations(), min_size=1, max_size=4), manager=budget_managers())
def test_token_budgets_agree_on_both_paths(tmp_path: Path, rows: list[Any], manager: Any) -> None:
    """``trim --max-tokens`` from the outline: the full path's bytes, warnings, counts and counters."""
    trim_rows_both_ways(tmp_path, [PLAIN_FIRST, *rows], manager)
