"""``trim --max-tokens`` on the outline fast path gives exactly the full path's output.

The token budget's rule (:meth:`TokenBudgetContextManager.select`) runs on an outline's
roles, units and call ids; the kept records are written back untouched. Bytes, warnings,
counts and the ``--json`` counters must be those of the full path (the model).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import explored, scripts, trim_both_ways, trim_document_both_ways, trim_rows_both_ways
from hypothesis import HealthCheck, given, strategies as st

from ctxmgr import _io as io
from ctxmgr.files import FileResult, Settings
from ctxmgr.formats._detection.openai_chat import outline
from ctxmgr.state._compose import trim_manager

ROOT = Path(__file__).resolve().parents[2]
TAU = ROOT / "tests" / "data" / "tau-airline-slice.jsonl"

texts = st.one_of(st.text(max_size=30), scripts(30))
ids = st.sampled_from(["call_a", "call_b", "call_c", "call_d", ""])


@st.composite
def turn(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A user turn, an assistant answer, or a tool call with its results (sometimes an
    orphaned result, a missing result or a reused or empty id)."""
    kind = draw(st.sampled_from(["user", "assistant", "tools", "system", "developer", "orphan"]))
    if kind in ("user", "assistant", "system", "developer"):
        content = draw(st.one_of(texts, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": texts}))))
        return [{"role": kind, "content": content}]
    if kind == "orphan":
        return [{"role": "tool", "tool_call_id": draw(ids), "content": draw(texts)}]
    made = draw(st.lists(ids, min_size=1, max_size=2))
    arguments = draw(st.one_of(st.just("{}"), st.fixed_dictionaries({"q": texts}).map(orjson.dumps).map(bytes.decode)))
    call = {"role": "assistant", "content": draw(st.one_of(st.none(), texts))}
    call["tool_calls"] = [
        {"id": i, "type": "function", "function": {"name": "lookup", "arguments": arguments}} for i in made
    ]
    answered = draw(st.lists(st.sampled_from(made), max_size=len(made)))
    return [call, *({"role": "tool", "tool_call_id": i, "content": draw(texts)} for i in answered)]


conversations = st.lists(turn(), max_size=10).map(lambda turns: {"messages": [m for t in turns for m in t], "id": 1})
budgets = st.fixed_dictionaries(
    {"max_tokens": st.integers(1, 40)},
    optional={
        "start_on": st.just("user"),
        "max_messages": st.integers(0, 3),
        "pin_index": st.lists(st.integers(0, 12), max_size=2),
    },
)


def _manager(options: dict[str, Any]) -> Any:
    options = dict(options)
    return trim_manager(options.pop("max_messages", None), **options)


@explored(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(conversations, min_size=1, max_size=5), options=budgets, strict=st.booleans())
def test_fast_and_full_budgets_agree(
    tmp_path: Path, rows: list[dict[str, Any]], options: dict[str, Any], strict: bool
) -> None:
    first = {"messages": [{"role": "user", "content": "hi"}], "id": 0}  # settles the format
    trim_rows_both_ways(tmp_path, [first, *rows], _manager(options), strict=strict)


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=conversations, options=budgets, pretty=st.booleans(), strict=st.booleans())
def test_documents_agree(
    tmp_path: Path, value: dict[str, Any], options: dict[str, Any], pretty: bool, strict: bool
) -> None:
    trim_document_both_ways(tmp_path, value, _manager(options), pretty=pretty, strict=strict)


@pytest.mark.parametrize(
    "options",
    [
        {"max_tokens": 2000},
        {"max_tokens": 2000, "start_on": "user"},
        {"max_tokens": 300, "pin_index": [3, 400]},
        {"max_tokens": 50},  # the rules alone are over it: a warning on every line
        {"max_tokens": 1500, "max_messages": 2},
    ],
)
def test_real_agent_conversations_agree(tmp_path: Path, options: dict[str, Any]) -> None:
    fast, _ = trim_both_ways(TAU, _manager(options), tmp_path)
    assert fast.compaction is not None
    assert fast.compaction["messages_dropped"] > 0
    assert fast.messages_after < fast.messages_before


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "native", "anthropic", "gemini", "langchain"])
def test_real_conversations_in_each_format_agree(tmp_path: Path, fmt: str) -> None:
    """The tau lines converted to each format: both paths agree under a budget, and the
    fast path takes them."""
    from ctxmgr import formats
    from ctxmgr.files import _fastpath as fastpath

    lines = []
    for raw in TAU.read_bytes().splitlines():
        conversation = formats.load_value(orjson.loads(raw), source=str(TAU), layout="document")
        lines.append(formats.dump(conversation, to=fmt).rstrip(b"\n"))
    data = tmp_path / "tau.jsonl"
    data.write_bytes(b"\n".join(lines) + b"\n")
    manager = _manager({"max_tokens": 1500, "start_on": "user"})
    fast, _ = trim_both_ways(data, manager, tmp_path)
    assert fast.compaction is not None
    assert fast.compaction["messages_dropped"] > 0
    result, first = FileResult(source=str(data)), [fmt]
    taken = [fastpath.fast_line(n, raw, str(data), manager, Settings(), result, first)[0] is not None
             for n, raw in enumerate(lines, 1)]
    assert sum(taken) >= 0.9 * len(taken)


def test_real_lines_take_the_fast_path(tmp_path: Path) -> None:
    """Every tau line is trimmed from its outline (no message built)."""
    from ctxmgr.files import _fastpath as fastpath

    manager = _manager({"max_tokens": 2000})
    result = FileResult(source=str(TAU))
    first: list[str] = []
    for number, raw in enumerate(TAU.read_bytes().splitlines(), 1):
        output, _ = fastpath.fast_line(number, raw, str(TAU), manager, Settings(), result, first)
        assert output is not None
    assert result.compaction is not None
    assert result.compaction["messages_dropped"] > 0


def test_what_the_fast_path_leaves_to_the_full_one(tmp_path: Path) -> None:
    """A text pin, another manager in the chain, a conversion, or the view: the full path."""
    from ctxmgr.files import _fastpath as fastpath

    value = {"messages": [{"role": "user", "content": "x" * 400}, {"role": "user", "content": "hi"}]}
    raw = orjson.dumps(value)
    plain = _manager({"max_tokens": 10})
    assert fastpath.fast_line(1, raw, "x", plain, Settings(), FileResult(source="x"), [])[0] is not None
    for manager, settings in [
        (_manager({"max_tokens": 10, "pin_match": ["hi"]}), Settings()),
        (_manager({"max_tokens": 10, "max_tool_output": 5}), Settings()),
        (plain, Settings(to="anthropic")),
        (plain, Settings(fast=False)),
    ]:
        assert fastpath.fast_line(1, raw, "x", manager, settings, FileResult(source="x"), [])[0] is None
    value_doc, layout, pretty = io.parse(raw, "x.json")
    viewed = Settings(keep_outcomes=True)
    assert fastpath.fast_document(value_doc, layout, pretty, "x.json", plain, viewed, FileResult(source="x")) is None


@explored(max_examples=200, deadline=None)
@given(conversations)
def test_outline_chars_are_the_reports_chars(record: dict[str, Any]) -> None:
    """``chars_removed`` from the fast path: each message's characters as the reports count them."""
    from ctxmgr import formats
    from ctxmgr.errors import InputError
    from ctxmgr.state._compaction import _chars

    found = outline(record)
    if found is None:
        return
    try:
        conversation = formats.load_value(record, source="x", layout="document", fmt="openai-chat")
    except InputError:
        return
    assert found.chars is not None
    assert [found.chars(i) for i in range(len(found.roles))] == list(map(_chars, conversation.state.context))
