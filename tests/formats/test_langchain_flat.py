"""LangChain's flat ``model_dump()`` messages and LangGraph's thread state
``{"values": {"messages": [...]}}``: detected unasked, read, written back in their own
shape, compacted by every manager, and converted to and from the six formats (property
tests: pairs kept, the same conversation read back, the shape kept)."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import explored
from _format_support import ARGS, MANAGER_COMMANDS, TEXT, view
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from ctxmgr import _format_registry as format_registry, formats
from ctxmgr._validate import check_messages
from ctxmgr.cli import app
from ctxmgr.formats._base import CERTAIN
from ctxmgr.formats._detection.langchain import outline, score

runner = CliRunner()
HERE = Path(__file__).resolve().parents[1] / "conversations" / "frameworks" / "langchain"
FLAT = orjson.loads((HERE / "model_dump.json").read_bytes())
STATE = orjson.loads((HERE / "thread_state.json").read_bytes())
SIX = ["native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"]


def _read(value: Any) -> formats.Conversation:
    return formats.load_value(copy.deepcopy(value), source="test.json", layout="document")


def test_flat_dumps_and_thread_states_are_langchain_for_certain() -> None:
    for value in (FLAT, STATE, {"messages": FLAT}):
        assert score(value) == CERTAIN
        assert formats.detect_candidates(value, source="t") == ["langchain"]
    conversation = _read(STATE)
    assert [m.role for m in conversation.state.context] == [
        "system", "user", "assistant", "tool", "tool", "assistant", "user", "assistant", "tool", "assistant",
    ]  # fmt: skip
    assert conversation.state.context[2].tools_calls is not None
    assert [c["id"] for c in conversation.state.context[2].tools_calls] == ["call_paris", "call_lyon"]
    assert check_messages(conversation.state.context) == []
    # The fast path declines both shapes: the full reader reads them.
    assert outline(FLAT) is None
    assert outline(STATE) is None


def test_real_dumps_are_written_back_as_they_were() -> None:
    for value in (FLAT, STATE):
        assert orjson.loads(formats.dump(_read(value))) == value


def test_a_flat_record_without_a_tool_call_id_names_its_field() -> None:
    broken = copy.deepcopy(FLAT)
    del broken[3]["tool_call_id"]
    with pytest.raises(formats.InputError, match=r"\[3\]\.tool_call_id: a tool message needs"):
        _read(broken)


def test_the_summary_goes_after_the_system_prompt_inside_the_thread_state() -> None:
    conversation = _read(STATE)
    conversation.state.context_summary = "Paris and Lyon were looked up."
    written = orjson.loads(formats.dump(conversation))
    assert set(written) == set(STATE)  # next, config, metadata... kept
    messages = written["values"]["messages"]
    summary = messages[1]
    assert summary["type"] == "system"
    assert summary["content"].endswith("Paris and Lyon were looked up.")
    assert "data" not in summary  # the file's own flat shape
    assert "additional_kwargs" in summary
    again = _read(written)
    assert again.state.context_summary == "Paris and Lyon were looked up."
    assert len(again.state.context) == len(STATE["values"]["messages"])


def test_written_records_are_what_langchain_core_reads() -> None:
    messages_module = pytest.importorskip("langchain_core.messages")
    conversation = _read(FLAT)
    conversation.state.context_summary = "Earlier: weather."
    conversation.state.context = conversation.state.context[:1] + conversation.state.context[6:]
    classes = {"system": "SystemMessage", "human": "HumanMessage", "ai": "AIMessage", "tool": "ToolMessage"}
    for record in orjson.loads(formats.dump(conversation)):
        cls = getattr(messages_module, classes[record["type"]])
        assert cls.model_validate(record).model_dump(mode="json") == record


def test_the_cli_trims_a_thread_state_in_place_of_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_bytes((HERE / "thread_state.json").read_bytes())
    result = runner.invoke(app, ["trim", "-n", "1", "--no-view", "-i", str(path)])
    assert result.exit_code == 0, result.stderr
    written = orjson.loads(path.read_bytes())
    assert {k: v for k, v in written.items() if k != "values"} == {k: v for k, v in STATE.items() if k != "values"}
    kept = written["values"]["messages"]
    assert [m["id"] for m in kept] == ["sys-1", "h-2", "run-ai-3", "t-3", "run-ai-4"]
    assert all(m in STATE["values"]["messages"] for m in kept)


# -- generated dumps, every manager ----------------------------------------------------------

_NAMES = st.sampled_from(["get_weather", "search", "book"])


def _record(kind: str, content: Any, number: int, **more: Any) -> dict[str, Any]:
    record = {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": kind, "name": None}
    record["id"] = f"m-{number}"
    if kind == "ai":
        record.update(tool_calls=[], invalid_tool_calls=[], usage_metadata=None)
    record.update(more)
    return record


@st.composite
def flat_dumps(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A flat ``model_dump()`` list: an optional system prompt, human turns, AI calls (one
    or two at once) each answered by a ToolMessage, and answers."""
    records: list[dict[str, Any]] = []
    if draw(st.booleans()):
        records.append(_record("system", draw(TEXT), 0))
    for _ in range(draw(st.integers(1, 4))):
        records.append(_record("human", draw(TEXT), len(records)))
        for _ in range(draw(st.integers(0, 2))):
            calls = [
                {"name": draw(_NAMES), "args": draw(ARGS), "id": f"call_{len(records)}_{k}", "type": "tool_call"}
                for k in range(draw(st.integers(1, 2)))
            ]
            records.append(_record("ai", "", len(records), tool_calls=calls))
            for call in calls:
                more = {"tool_call_id": call["id"], "artifact": None, "status": "success"}
                records.append(_record("tool", draw(TEXT), len(records), **more))
        records.append(_record("ai", draw(TEXT), len(records)))
    return records


def _shaped(records: list[dict[str, Any]], state: bool) -> Any:
    return {"values": {"messages": records, "step": 3}, "next": [], "metadata": {"step": 3}} if state else records


@explored(max_examples=40, deadline=None)
@given(flat_dumps(), st.booleans(), MANAGER_COMMANDS)
def test_every_manager_keeps_pairs_and_the_shape(
    records: list[dict[str, Any]], state: bool, command: list[str]
) -> None:
    value = _shaped(records, state)
    with tempfile.TemporaryDirectory() as folder:
        source, out = Path(folder) / "in.json", Path(folder) / "out.json"
        source.write_bytes(orjson.dumps(value))
        result = runner.invoke(app, [*command, "--no-view", "-o", str(out), str(source)])
        assert result.exit_code == 0, result.stderr
        written = orjson.loads(out.read_bytes() if out.exists() else source.read_bytes())
    if state:
        assert {k: v for k, v in written.items() if k != "values"} == {"next": [], "metadata": {"step": 3}}
        assert written["values"]["step"] == 3
        kept = written["values"]["messages"]
    else:
        kept = written
    # Every record keeps the flat shape; records kept untouched are the input's, in order.
    assert all("data" not in r and "lc" not in r and r["type"] in ("system", "human", "ai", "tool") for r in kept)
    untouched = iter(records)
    assert all(any(r == other for other in untouched) for r in kept if r in records)
    conversation = _read(written)
    assert conversation.format == "langchain"
    assert check_messages(conversation.state.context) == []
    again = _read(orjson.loads(formats.dump(conversation)))
    assert view(again.state.context) == view(conversation.state.context)
    assert again.state.context_summary == conversation.state.context_summary
    assert orjson.loads(formats.dump(again)) == written


@explored(max_examples=25, deadline=None)
@given(flat_dumps(), st.booleans(), st.sampled_from(SIX))
def test_conversions_validate_and_come_back(records: list[dict[str, Any]], state: bool, target: str) -> None:
    conversation = _read(_shaped(records, state))
    converted = formats.load(formats.dump(conversation, to=target), source="c.json")
    assert converted.format == target or converted.also_reads_as
    rules = target if target in format_registry.TARGETS else None
    assert check_messages(converted.state.context, target=rules) == []
    back = _read(orjson.loads(formats.dump(converted, to="langchain")))
    assert view(back.state.context) == view(conversation.state.context)


def test_a_thread_state_through_native_comes_back_as_it_was() -> None:
    native = formats.load(formats.dump(_read(STATE), to="native"), source="n.json")
    assert orjson.loads(formats.dump(native, to="langchain")) == STATE
    assert native.warnings == []
    flat = formats.load(formats.dump(_read(FLAT), to="native"), source="n.json")
    assert orjson.loads(formats.dump(flat, to="langchain")) == FLAT
