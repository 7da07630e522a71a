"""``trim --max-tool-output`` (and ``--clear-tool-results`` in OpenAI chat files) on the
outline fast path gives exactly the full path's output.

In OpenAI chat and Responses files a long tool result held as a string is cut inside its
record, as the writer writes the edited message; everything else (content parts, a
record with keys the writer does not write, the other formats) takes the full path. Bytes,
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
    the OpenAI chat and Responses lines are cut on the fast path, the other formats' on
    the full one."""
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
    assert all(taken) if fmt in ("openai-chat", "openai-responses") else not any(taken)


def test_the_real_chat_lines_are_cut_in_their_records(tmp_path: Path) -> None:
    """The tau-bench lines as they are (tool records with the tool's name): every one on
    the fast path, the cut results written as the writer writes them."""
    manager = trim_manager(None, max_tool_output=100)
    fast, _ = trim_both_ways(TAU, manager, tmp_path)
    assert fast.compaction is not None
    assert fast.compaction["truncated_outputs"] > 0
    result, first = FileResult(source=str(TAU)), []
    for number, raw in enumerate(TAU.read_bytes().splitlines(), 1):
        output, _ = fastpath.fast_line(number, raw, str(TAU), manager, Settings(), result, first)
        assert output is not None
        cut = [m for m in orjson.loads(output)["messages"] if "cut by ctxmgr" in str(m.get("content"))]
        assert all(list(m) == ["role", "tool_call_id", "content"] for m in cut)
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
