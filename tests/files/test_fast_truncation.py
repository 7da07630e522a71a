"""``trim --max-tool-output`` and ``--clear-tool-results`` on the outline fast path give
exactly the full path's output.

In OpenAI chat, Responses, Anthropic, Gemini, LangChain and native files a long tool
result held as a string is cut inside its record, as the writer writes the edited message;
everything else (content parts, a record with keys the writer does not write) takes the
full path. Bytes,
warnings, counts and the ``--json`` counters must be those of the full path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import explored, scripts, trim_both_ways, trim_document_both_ways, trim_rows_both_ways
from hypothesis import HealthCheck, given, strategies as st

from ctxmgr import formats
from ctxmgr.files import FileResult, Settings, _fastpath as fastpath
from ctxmgr.state._compose import trim_manager

ROOT = Path(__file__).resolve().parents[2]
TAU = ROOT / "tests" / "data" / "tau-airline-slice.jsonl"
FORMATS = ["openai-chat", "openai-responses", "native", "anthropic", "gemini", "langchain"]

words = st.one_of(st.text(max_size=12), scripts(12))
# Tool outputs: long text, JSON (objects, arrays, long strings), an already cleared one.
outputs = st.one_of(
    st.builds(lambda w, n: " ".join([w] * n), words, st.integers(0, 80)),
    st.builds(
        lambda w, n: json.dumps({"items": [{"name": w, "i": i} for i in range(n)], "note": w * n}),
        words,
        st.integers(0, 30),
    ),
    st.builds(lambda n: json.dumps(["x" * n, n]), st.integers(0, 300)),
    st.builds(lambda w: "[tool result cleared by ctxmgr: lookup call_a, 9 characters]" + w * 40, words),
)
ids = st.sampled_from(["call_a", "call_b", "call_c"])


@st.composite
def turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A user turn, or a tool call with its results: a string output (with or without the
    tool's name, sometimes with a key the writer does not write), or content parts."""
    if draw(st.booleans()):
        return [{"role": "user", "content": draw(words)}]
    made = draw(st.lists(ids, min_size=1, max_size=2, unique=True))
    call = {"role": "assistant", "content": None}
    call["tool_calls"] = [
        {"id": i, "type": "function", "function": {"name": "lookup", "arguments": "{}"}} for i in made
    ]
    results: list[dict[str, Any]] = []
    for call_id in made:
        result: dict[str, Any] = {"role": "tool", "tool_call_id": call_id}
        shape = draw(st.sampled_from(["plain", "named", "extra", "parts"]))
        if shape == "named":
            result["name"] = "lookup"
        if shape == "extra":
            result["status"] = "ok"
        content = draw(outputs)
        result["content"] = [{"type": "text", "text": content}] if shape == "parts" else content
        results.append(result)
    return [call, *results]


conversations = st.lists(turn(), max_size=6).map(
    lambda turns: {"messages": [{"role": "system", "content": "rules"}, *(m for t in turns for m in t)], "id": 1}
)


@explored(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(conversations, min_size=1, max_size=4), limit=st.integers(1, 60), strict=st.booleans())
def test_fast_and_full_cuts_agree(tmp_path: Path, rows: list[dict[str, Any]], limit: int, strict: bool) -> None:
    first = {"messages": [{"role": "user", "content": "hi"}], "id": 0}  # settles the format
    trim_rows_both_ways(tmp_path, [first, *rows], trim_manager(None, max_tool_output=limit), strict=strict)


@explored(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=conversations, limit=st.integers(1, 60), pretty=st.booleans())
def test_documents_agree(tmp_path: Path, value: dict[str, Any], limit: int, pretty: bool) -> None:
    trim_document_both_ways(tmp_path, value, trim_manager(None, max_tool_output=limit), pretty=pretty)


@st.composite
def responses_turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A user message, or function calls with their outputs: a string output (sometimes
    with an ``id`` or ``status`` the writer does not write back), or content parts."""
    if draw(st.booleans()):
        return [{"type": "message", "role": "user", "content": draw(words)}]
    made = draw(st.lists(ids, min_size=1, max_size=2, unique=True))
    items: list[dict[str, Any]] = [
        {"type": "function_call", "call_id": i, "name": "lookup", "arguments": "{}"} for i in made
    ]
    for call_id in made:
        output = draw(outputs)
        item: dict[str, Any] = {"type": "function_call_output", "call_id": call_id, "output": output}
        shape = draw(st.sampled_from(["plain", "plain", "status", "parts"]))
        if shape == "status":
            item["status"] = "completed"
        if shape == "parts":
            item["output"] = [{"type": "input_text", "text": output}]
        items.append(item)
    return items


responses = st.lists(responses_turn(), max_size=6).map(
    lambda turns: {"input": [{"type": "message", "role": "system", "content": "rules"}, *(i for t in turns for i in t)]}
)


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(responses, min_size=1, max_size=4), limit=st.integers(1, 60))
def test_fast_and_full_cuts_agree_in_responses_files(tmp_path: Path, rows: list[dict[str, Any]], limit: int) -> None:
    first = {"input": [{"type": "message", "role": "user", "content": "hi"}]}  # settles the format
    trim_rows_both_ways(tmp_path, [first, *rows], trim_manager(None, max_tool_output=limit))


def _converted(tmp_path: Path, fmt: str) -> tuple[Path, list[bytes]]:
    lines = []
    for raw in TAU.read_bytes().splitlines():
        conversation = formats.load_value(orjson.loads(raw), source=str(TAU), layout="document")
        lines.append(formats.dump(conversation, to=fmt).rstrip(b"\n"))
    data = tmp_path / "tau.jsonl"
    data.write_bytes(b"\n".join(lines) + b"\n")
    return data, lines


@pytest.mark.parametrize("fmt", FORMATS)
def test_real_conversations_in_each_format_agree(tmp_path: Path, fmt: str) -> None:
    """The tau lines converted to each format: both paths agree at 200 tokens a result;
    every line is cut on the fast path."""
    data, lines = _converted(tmp_path, fmt)
    manager = trim_manager(None, max_tool_output=200)
    fast, full = trim_both_ways(data, manager, tmp_path)
    assert fast.compaction is not None
    assert fast.compaction["truncated_outputs"] > 0
    assert fast.compaction == full.compaction
    result, first = FileResult(source=str(data)), [fmt]
    taken = [
        fastpath.fast_line(n, raw, str(data), manager, Settings(), result, first)[0] is not None
        for n, raw in enumerate(lines, 1)
    ]
    assert all(taken)


def test_the_real_chat_lines_are_cut_in_their_records(tmp_path: Path) -> None:
    """The tau-bench lines as they are (tool records with the tool's name): every one on
    the fast path, each cut result in its own record, every other key kept (the tool's
    ``name`` included)."""
    manager = trim_manager(None, max_tool_output=100)
    fast, _ = trim_both_ways(TAU, manager, tmp_path)
    assert fast.compaction is not None
    assert fast.compaction["truncated_outputs"] > 0
    result, first = FileResult(source=str(TAU)), []
    for number, raw in enumerate(TAU.read_bytes().splitlines(), 1):
        output, _ = fastpath.fast_line(number, raw, str(TAU), manager, Settings(), result, first)
        assert output is not None
        pairs = zip(orjson.loads(raw)["messages"], orjson.loads(output)["messages"], strict=True)
        cut = [(old, new) for old, new in pairs if "cut by ctxmgr" in str(new.get("content"))]
        assert all(new == {**old, "content": new["content"]} and "name" in new for old, new in cut)
    assert result.compaction == fast.compaction


def test_what_the_cut_leaves_to_the_full_path() -> None:
    """A long result in content parts or with a key the writer does not write, and a cut
    chained with another manager: the full path."""
    long = "word " * 400
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    ]}  # fmt: skip
    shapes = [
        {"role": "tool", "tool_call_id": "call_a", "content": [{"type": "text", "text": long}]},
        {"role": "tool", "tool_call_id": "call_a", "content": long, "status": "ok"},
    ]
    for result in shapes:
        raw = orjson.dumps({"messages": [{"role": "user", "content": "q"}, call, result]})
        manager = trim_manager(None, max_tool_output=20)
        assert fastpath.fast_line(1, raw, "x", manager, Settings(), FileResult(source="x"), [])[0] is None
    raw = orjson.dumps({"messages": [{"role": "user", "content": "q"}, call, shapes[1] | {"status": None}]})
    raw = raw.replace(b',"status":null', b"")
    assert fastpath.fast_line(1, raw, "x", trim_manager(None, max_tool_output=20), Settings(), FileResult("x"), [])[0]
    chained = trim_manager(None, max_tool_output=20, max_tokens=50)
    assert fastpath.fast_line(1, raw, "x", chained, Settings(), FileResult(source="x"), [])[0] is None


def test_an_edits_counters_are_the_reports_in_its_order() -> None:
    """The counters an outline edit gives are those the full path takes from the manager's
    report, in the same order (the ``--json`` report lists them in it), each line's added
    up; a cut by a whole number of tokens removes that many without the line's total."""
    from ctxmgr.state._compaction import COUNTERS

    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    ]}  # fmt: skip
    result = FileResult(source="x")
    for number, text in enumerate(["word " * 400, "x" * 2001, "é" * 900], 1):
        raw = orjson.dumps({"messages": [{"role": "user", "content": "q"}, call, {
            "role": "tool", "tool_call_id": "call_a", "content": text}]})  # fmt: skip
        output, _ = fastpath.fast_line(number, raw, "x", trim_manager(None, max_tool_output=20), Settings(), result, [])
        assert output is not None
    assert result.compaction is not None
    assert list(result.compaction) == list(COUNTERS)
    assert result.compaction["truncated_outputs"] == 3


def test_results_each_under_the_limit_are_passed_in_any_shape(tmp_path: Path) -> None:
    """A tool message whose results are strings each under the limit is passed as it is
    on the fast path, whatever its shape (here a result with a key the writer does not
    write, and results longer than the limit together): the full path cuts none either."""
    call = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "lookup", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "lookup", "input": {}},
    ]}  # fmt: skip
    results = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "a " * 300, "cache_control": {"type": "ephemeral"}},
        {"type": "tool_result", "tool_use_id": "t2", "content": "é " * 200},  # 600 units
    ]}  # fmt: skip
    row = {"messages": [{"role": "user", "content": "q"}, call, results]}
    raw = orjson.dumps(row)
    manager = trim_manager(None, max_tool_output=200)
    output, _ = fastpath.fast_line(1, raw, "x", manager, Settings(), FileResult(source="x"), [])
    assert output == raw + b"\n"
    fast, _ = trim_rows_both_ways(tmp_path, [row], manager)
    assert fast.compaction is not None
    assert not fast.compaction["truncated_outputs"]


clearings = st.fixed_dictionaries(
    {"clear_tool_results": st.just(True), "keep_tool_results": st.integers(0, 3)},
    optional={"exclude_tools": st.just(["lookup"]), "clear_tool_inputs": st.booleans()},
)


@explored(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(conversations, min_size=1, max_size=4), options=clearings)
def test_fast_and_full_clearings_agree(tmp_path: Path, rows: list[dict[str, Any]], options: dict[str, Any]) -> None:
    """Also with tools of two names, one excluded, and calls whose ids repeat."""
    for row in rows:
        for message in row["messages"]:
            for call in message.get("tool_calls") or ():
                if call["id"] == "call_b":
                    call["function"] = {"name": "search", "arguments": "{}"}
    first = {"messages": [{"role": "user", "content": "hi"}], "id": 0}
    trim_rows_both_ways(tmp_path, [first, *rows], trim_manager(None, **options))


def _responses_variety(row: dict[str, Any], custom: bool, built_in: bool) -> dict[str, Any]:
    """A Responses row with tools of two names, sometimes a custom tool's call and output,
    and sometimes a built-in tool's item (which the reader makes a call block of)."""
    items: list[dict[str, Any]] = []
    for item in row["input"]:
        item = dict(item)
        if item.get("call_id") == "call_b" and item["type"] == "function_call":
            item["name"] = "search"
            if custom:
                item = {"type": "custom_tool_call", "call_id": "call_b", "name": "search", "input": "q"}
        elif item.get("call_id") == "call_b" and custom:
            item["type"] = "custom_tool_call_output"
        items.append(item)
    if built_in:
        items.insert(1, {"type": "web_search_call", "id": "ws_1", "status": "completed"})
    return {"input": items}


@explored(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(st.builds(_responses_variety, responses, st.booleans(), st.booleans()), min_size=1, max_size=4),
    options=clearings,
)
def test_fast_and_full_clearings_agree_in_responses_files(
    tmp_path: Path, rows: list[dict[str, Any]], options: dict[str, Any]
) -> None:
    first = {"input": [{"type": "message", "role": "user", "content": "hi"}]}  # settles the format
    trim_rows_both_ways(tmp_path, [first, *rows], trim_manager(None, **options))


@pytest.mark.parametrize("keep", [0, 2])
def test_real_chat_lines_are_cleared_on_the_fast_path(tmp_path: Path, keep: int) -> None:
    manager = trim_manager(None, clear_tool_results=True, keep_tool_results=keep, exclude_tools=["get_user_details"])
    fast, _ = trim_both_ways(TAU, manager, tmp_path)
    assert fast.compaction is not None
    assert fast.compaction["cleared_results"] > 0
    result, first = FileResult(source=str(TAU)), []
    for number, raw in enumerate(TAU.read_bytes().splitlines(), 1):
        assert fastpath.fast_line(number, raw, str(TAU), manager, Settings(), result, first)[0] is not None
    assert result.compaction == fast.compaction
    # The inputs cleared too, or clearing under a budget: the full path.
    for options in ({"clear_tool_inputs": True}, {"max_tokens": 2000}):
        other = trim_manager(None, clear_tool_results=True, **options)
        raw = TAU.read_bytes().splitlines()[0]
        assert fastpath.fast_line(1, raw, str(TAU), other, Settings(), FileResult(source="x"), [])[0] is None


# -- Anthropic, Gemini and LangChain: results cut in their records ---------------------

block_ids = st.sampled_from(["call_a", "call_b", "call_c", "call.d"])  # call.d: an id the writer rewrites


def _anthropic_result(draw: st.DrawFn, call_id: str) -> dict[str, Any]:
    """A tool_result block: plain, or in a shape the writer does not write back as is."""
    content = draw(outputs)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": content}
    shape = draw(st.sampled_from(["plain", "plain", "error", "not-error", "cached", "parts", "keys"]))
    if shape == "error":
        block["is_error"] = True
    elif shape == "not-error":
        block["is_error"] = False
    elif shape == "cached":
        block["cache_control"] = {"type": "ephemeral"}
    elif shape == "parts":
        block["content"] = [{"type": "text", "text": content}]
    elif shape == "keys":
        block = {"type": "tool_result", "content": content, "tool_use_id": call_id}
    return block


@st.composite
def anthropic_turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A user turn, or tool calls and their results: in one user record (sometimes with
    a text block too), or one record each (which the writer merges once edited)."""
    if draw(st.booleans()):
        return [{"role": "user", "content": draw(words)}]
    made = draw(st.lists(block_ids, min_size=1, max_size=2, unique=True))
    uses = [{"type": "tool_use", "id": i, "name": "lookup", "input": {}} for i in made]
    results = [_anthropic_result(draw, i) for i in made]
    records: list[dict[str, Any]] = [{"role": "assistant", "content": uses}]
    if draw(st.booleans()):
        records += [{"role": "user", "content": [result]} for result in results]
    else:
        text = [{"type": "text", "text": draw(words) or "and"}] if draw(st.booleans()) else []
        records.append({"role": "user", "content": results + text})
    return records


anthropic_rows = st.lists(anthropic_turn(), max_size=5).map(
    lambda turns: {"system": "rules", "messages": [m for t in turns for m in t]}
)


@st.composite
def gemini_turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A user turn, or function calls and their responses: plain, named other than the
    call, holding another key or a JSON object, in one content or one each."""
    if draw(st.booleans()):
        return [{"role": "user", "parts": [{"text": draw(words)}]}]
    made = draw(st.lists(ids, min_size=1, max_size=2, unique=True))
    name = draw(st.sampled_from(["lookup", "search"]))
    calls = [{"functionCall": {"name": name, "args": {}, "id": i}} for i in made]
    parts: list[dict[str, Any]] = []
    for call_id in made:
        output = draw(outputs)
        body: dict[str, Any] = {"name": name, "response": {"output": output}, "id": call_id}
        shape = draw(st.sampled_from(["plain", "plain", "renamed", "result", "object", "extra"]))
        if shape == "renamed":
            body["name"] = "other"
        elif shape == "result":
            body["response"] = {"result": output}
        elif shape == "object":
            body["response"] = {"output": output, "more": 1}
        elif shape == "extra":
            body["willContinue"] = False
        parts.append({"functionResponse": body})
    records: list[dict[str, Any]] = [{"role": "model", "parts": calls}]
    if draw(st.booleans()):
        return records + [{"role": "user", "parts": [part]} for part in parts]
    return [*records, {"role": "user", "parts": parts}]


gemini_rows = st.lists(gemini_turn(), max_size=5).map(
    lambda turns: {"systemInstruction": {"parts": [{"text": "rules"}]}, "contents": [m for t in turns for m in t]}
)


def _langchain(kind: str, content: Any, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": kind}
    data |= {"name": None, "id": None}
    if kind == "ai":
        data |= {"tool_calls": fields.pop("tool_calls"), "invalid_tool_calls": [], "usage_metadata": None}
    elif kind == "tool":
        data |= {"tool_call_id": fields.pop("tool_call_id"), "artifact": None, "status": "success"}
    return {"type": kind, "data": data | fields}


@st.composite
def langchain_turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A human turn, or tool calls and their ToolMessages: with every field at its
    default, or a name, an id, an error status, an artifact, or content blocks."""
    if draw(st.booleans()):
        return [_langchain("human", draw(words))]
    made = draw(st.lists(ids, min_size=1, max_size=2, unique=True))
    calls = [{"name": "lookup", "args": {}, "id": i, "type": "tool_call"} for i in made]
    records = [_langchain("ai", "", tool_calls=calls)]
    for call_id in made:
        output = draw(outputs)
        shape = draw(st.sampled_from(["plain", "plain", "named", "id", "error", "artifact", "blocks"]))
        extra: dict[str, Any] = {
            "plain": {},
            "named": {"name": "lookup"},
            "id": {"id": "m1"},
            "error": {"status": "error"},
            "artifact": {"artifact": {"raw": 1}},
            "blocks": {},
        }[shape]
        content = [{"type": "text", "text": output}] if shape == "blocks" else output
        records.append(_langchain("tool", content, tool_call_id=call_id, **extra))
    return records


langchain_rows = st.lists(langchain_turn(), max_size=5).map(
    lambda turns: {"messages": [_langchain("system", "rules"), *(m for t in turns for m in t)]}
)


@pytest.mark.parametrize(
    ("rows", "first"),
    [
        (anthropic_rows, {"messages": [{"role": "user", "content": "hi"}], "system": "rules"}),
        (gemini_rows, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
        (langchain_rows, {"messages": [_langchain("human", "hi")]}),
    ],
    ids=["anthropic", "gemini", "langchain"],
)
def test_fast_and_full_cuts_agree_in_other_formats(tmp_path: Path, rows: Any, first: dict[str, Any]) -> None:
    """Results cut in their records on the fast path, or the line left to the full path:
    the same bytes, warnings and counts either way."""

    @explored(max_examples=120, deadline=None)
    @given(lines=st.lists(rows, min_size=1, max_size=4), limit=st.integers(1, 60))
    def agree(lines: list[dict[str, Any]], limit: int) -> None:
        trim_rows_both_ways(tmp_path, [first, *lines], trim_manager(None, max_tool_output=limit))

    agree()


@pytest.mark.parametrize("fmt", ["anthropic", "gemini", "langchain"])
def test_other_formats_lines_taken_and_left(tmp_path: Path, fmt: str) -> None:
    """A line whose long result is in the writer's shape is cut on the fast path; one in
    another shape (an error flag the writer drops, a renamed response, a ToolMessage with
    a name) is left to the full path; so is a cut in two tool messages in a row where the
    writer merges them (Anthropic, Gemini)."""
    long = "word " * 400
    plain, other, split = {
        "anthropic": (
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_a", "content": long}]}],
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_a", "content": long,
                                           "is_error": False}]}],
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": long}]}
             for i in ("call_a", "call_b")],
        ),
        "gemini": (
            [{"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"output": long},
                                                              "id": "call_a"}}]}],
            [{"role": "user", "parts": [{"functionResponse": {"name": "other", "response": {"output": long},
                                                              "id": "call_a"}}]}],
            [{"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"output": long},
                                                              "id": i}}]} for i in ("call_a", "call_b")],
        ),
        "langchain": (
            [_langchain("tool", long, tool_call_id="call_a")],
            [_langchain("tool", long, tool_call_id="call_a", name="lookup")],
            None,
        ),
    }[fmt]  # fmt: skip
    both = ["call_a", "call_b"]
    calls = {
        "anthropic": {"role": "assistant", "content": [
            {"type": "tool_use", "id": i, "name": "lookup", "input": {}} for i in both]},
        "gemini": {"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {}, "id": i}} for i in both]},
        "langchain": _langchain("ai", "", tool_calls=[
            {"name": "lookup", "args": {}, "id": i, "type": "tool_call"} for i in both]),
    }[fmt]  # fmt: skip
    key = "contents" if fmt == "gemini" else "messages"
    manager = trim_manager(None, max_tool_output=20)

    def taken(results: list[dict[str, Any]]) -> bool:
        answers = results if len(results) == 2 else [*results, *_second(fmt, long)]
        raw = orjson.dumps({key: [calls, *answers]})
        return fastpath.fast_line(1, raw, "x", manager, Settings(fmt=fmt), FileResult(source="x"), [])[0] is not None

    assert taken(plain)
    assert not taken(other)
    if split is not None:
        assert not taken(split)


@pytest.mark.parametrize("fmt", ["anthropic", "langchain"])
@pytest.mark.parametrize("clearing", [False, True])
def test_bare_lists_are_edited_in_place(tmp_path: Path, fmt: str, clearing: bool) -> None:
    """A document that is the list of records itself (no container object): the cut or
    cleared record is put in its place in the list, the same bytes as the full path's."""
    long = "word " * 400
    records = {
        "anthropic": [
            {"role": "user", "content": "look it up"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "call_a", "name": "lookup", "input": {}}]},
        ],
        "langchain": [_langchain("human", "look it up"), _langchain("ai", "", tool_calls=[
            {"name": "lookup", "args": {}, "id": "call_a", "type": "tool_call"}])],
    }[fmt]  # fmt: skip
    answer = {
        "anthropic": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_a", "content": long}]},
        "langchain": _langchain("tool", long, tool_call_id="call_a"),
    }[fmt]
    value = [*records, answer, *records[1:], {**answer}]
    options: dict[str, Any] = {"clear_tool_results": True, "keep_tool_results": 1} if clearing else {}
    manager = trim_manager(None, **options) if clearing else trim_manager(None, max_tool_output=20)
    fast, _ = trim_document_both_ways(tmp_path, value, manager, pretty=False)
    assert fast.compaction is not None
    assert fast.compaction["cleared_results" if clearing else "truncated_outputs"] >= 1
    assert fast.changed


def _second(fmt: str, long: str) -> list[dict[str, Any]]:
    """A short second answer (not cut), after the first."""
    return {
        "anthropic": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_b", "content": "ok"}]}],
        "gemini": [{"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": {"output": "ok"},
                                                                    "id": "call_b"}}]}],
        "langchain": [_langchain("tool", "ok", tool_call_id="call_b")],
    }[fmt]  # fmt: skip


def _native(role: str, content: list[Any], **fields: Any) -> dict[str, Any]:
    """A native record as the writer writes one (every field, in its order)."""
    record: dict[str, Any] = {"message_id": f"m-{role}", "role": role, "content": content, "delta": False}
    record |= {"tools_calls": None, "reasoning": None, "timestamp": 0.0, "metadata": {}, "usages": None}
    return record | {"raw": None, "parsed_content": None} | fields


_USAGE = {"completion_tokens": 1, "prompt_tokens": 2, "total_tokens": 3}


@st.composite
def native_turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A user turn, or tool calls and their results: in the writer's shape, or with a
    field missing, a usage, an integer time, a text block beside the result, a JSON
    object for output, the result in a user message, or its OpenAI chat record in
    ``raw`` (which the full reader reads back)."""
    if draw(st.booleans()):
        return [_native("user", [{"type": "text", "text": draw(words), "annotations": []}])]
    made = draw(st.lists(ids, min_size=1, max_size=2, unique=True))
    calls = [{"id": i, "type": "function", "function": {"name": "lookup", "arguments": "{}"}} for i in made]
    records = [_native("assistant", [], tools_calls=calls)]
    for call_id in made:
        output = draw(outputs)
        block: dict[str, Any] = {"type": "tool_result", "call_id": call_id, "output": output}
        block |= {"is_error": draw(st.booleans()), "status": None}
        shape = draw(st.sampled_from(["plain", "plain", "short", "usage", "int", "text", "object", "user", "raw"]))
        content: list[Any] = [block]
        fields: dict[str, Any] = {}
        if shape == "text":
            content.append({"type": "text", "text": "note", "annotations": []})
        elif shape == "object":
            block["output"] = {"output": output}
        elif shape == "usage":
            fields["usages"] = _USAGE
        elif shape == "int":
            fields["timestamp"] = 0
        elif shape == "raw":
            chat = {"role": "tool", "tool_call_id": call_id, "content": output}
            fields["raw"] = {"format": "openai-chat", "records": [chat]}
            block["is_error"] = False
        record = _native("user" if shape == "user" else "tool", content, **fields)
        records.append({"role": record["role"], "content": content} if shape == "short" else record)
    return records


native_rows = st.lists(native_turn(), max_size=5).map(
    lambda turns: {"task_id": 1, "context": [m for t in turns for m in t], "context_summary": None}
)


@pytest.mark.parametrize(
    ("rows", "first"),
    [
        (anthropic_rows, {"messages": [{"role": "user", "content": "hi"}], "system": "rules"}),
        (gemini_rows, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
        (langchain_rows, {"messages": [_langchain("human", "hi")]}),
        (native_rows, {"context": [_native("user", [{"type": "text", "text": "hi", "annotations": []}])]}),
    ],
    ids=["anthropic", "gemini", "langchain", "native"],
)
def test_fast_and_full_clearings_agree_in_other_formats(tmp_path: Path, rows: Any, first: dict[str, Any]) -> None:
    """``--clear-tool-results`` (with ``--keep-tool-results``, ``--exclude-tool``, and
    ``--clear-tool-inputs``, which the full path does): the same either way."""

    @explored(max_examples=120, deadline=None)
    @given(lines=st.lists(rows, min_size=1, max_size=4), options=clearings)
    def agree(lines: list[dict[str, Any]], options: dict[str, Any]) -> None:
        trim_rows_both_ways(tmp_path, [first, *lines], trim_manager(None, **options))

    agree()


@pytest.mark.parametrize("fmt", ["openai-responses", "anthropic", "gemini", "langchain", "native"])
def test_real_lines_are_cleared_on_the_fast_path_in_other_formats(tmp_path: Path, fmt: str) -> None:
    data, lines = _converted(tmp_path, fmt)
    manager = trim_manager(None, clear_tool_results=True, keep_tool_results=2, exclude_tools=["get_user_details"])
    fast, _ = trim_both_ways(data, manager, tmp_path)
    assert fast.compaction is not None
    assert fast.compaction["cleared_results"] > 0
    result, first = FileResult(source=str(data)), [fmt]
    for number, raw in enumerate(lines, 1):
        assert fastpath.fast_line(number, raw, str(data), manager, Settings(), result, first)[0] is not None
    assert result.compaction == fast.compaction


def test_fast_and_full_cuts_agree_in_native_files(tmp_path: Path) -> None:
    """Native results cut in their records on the fast path, or the line left to the
    full path: the same bytes, warnings and counts either way."""
    first = {"context": [_native("user", [{"type": "text", "text": "hi", "annotations": []}])]}

    @explored(max_examples=150, deadline=None)
    @given(lines=st.lists(native_rows, min_size=1, max_size=4), limit=st.integers(1, 60))
    def agree(lines: list[dict[str, Any]], limit: int) -> None:
        trim_rows_both_ways(tmp_path, [first, *lines], trim_manager(None, max_tool_output=limit))

    agree()


def test_native_lines_taken_and_left() -> None:
    """A native line whose long result is in the writer's shape is cut on the fast path;
    one with a field the writer spells otherwise (a usage, an integer time) is left to the
    full path, and so is a long output that is not a string."""
    long = "word " * 400
    calls = [{"id": "call_a", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]
    result = {"type": "tool_result", "call_id": "call_a", "output": long, "is_error": False, "status": None}
    manager = trim_manager(None, max_tool_output=20)

    def taken(**fields: Any) -> bool:
        block = result | fields.pop("block", {})
        value = {"context": [_native("assistant", [], tools_calls=calls), _native("tool", [block], **fields)]}
        raw = orjson.dumps(value)
        return (
            fastpath.fast_line(1, raw, "x", manager, Settings(fmt="native"), FileResult(source="x"), [])[0] is not None
        )

    assert taken()
    assert not taken(usages=_USAGE)
    assert not taken(timestamp=0)
    assert not taken(block={"output": {"text": long}})
    assert taken(block={"output": {"text": "short"}})  # nothing to cut: the shape does not matter


@explored(max_examples=200, deadline=None)
@given(text=st.one_of(outputs, words), limit=st.integers(1, 60))
def test_kept_cuts_are_the_cuts(text: str, limit: int) -> None:
    """``truncate_output`` keeps its last cuts of short texts: a kept cut is the cut made
    anew, the first time and every time after."""
    from ctxmgr.state._truncation import UNITS_PER_TOKEN, _truncate_text, truncate_output

    fresh = _truncate_text.__wrapped__(text, limit * UNITS_PER_TOKEN)
    assert truncate_output(text, limit) == fresh
    assert truncate_output(text, limit) == fresh
    longer = text + "x" * (1 << 15)  # past what is kept: cut anew
    assert truncate_output(longer, limit) == _truncate_text.__wrapped__(longer, limit * UNITS_PER_TOKEN)


def test_the_outline_counters_are_the_reports_in_its_order() -> None:
    from ctxmgr.files._fast_edits import report_counters
    from ctxmgr.state._compaction import COUNTERS

    assert list(report_counters()) == list(COUNTERS)
    assert report_counters(chars_removed=-3, tokens_removed=-1, messages_dropped=2) == dict.fromkeys(COUNTERS, 0) | {
        "messages_dropped": 2
    }
