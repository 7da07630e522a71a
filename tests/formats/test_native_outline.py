"""The native outline: what it accepts, the full (strict pydantic) reader reads the same."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import budget_managers, explored, scripts
from hypothesis import HealthCheck, given, strategies as st

from ctxmgr._validate import shape_of
from ctxmgr.files import FileResult, FileSink, Settings, compact_file
from ctxmgr.formats._detection.native import outline as native
from ctxmgr.state import AgentState, Message, MessageContextManager
from ctxmgr.state._tools import call_ids, result_ids

# Values of every JSON type, some right for a field and some wrong.
ANY = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["", "a", "call_1", "call_2", "completed", "running", "user"]),
    st.just([]),
    st.just(["x"]),
    st.just({}),
    st.just({"k": 1}),
)
SCRIPTS = scripts(4, lone_surrogates=True)
IDS = st.sampled_from(["call_1", "call_2", "call_3"] * 3 + [""])


def _maybe(draw: st.DrawFn, record: dict[str, Any], key: str, good: st.SearchStrategy[Any]) -> None:
    """Leave ``key`` out, or set it to a right value, or (rarely) to any value."""
    choice = draw(st.integers(0, 19))
    if choice < 10:
        return
    record[key] = draw(good) if choice < 19 else draw(ANY)


def _mostly(draw: st.DrawFn, good: st.SearchStrategy[Any]) -> Any:
    return draw(good) if draw(st.integers(0, 19)) else draw(ANY)


@st.composite
def blocks(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["text"] * 4 + ["tool_result"] * 3 + ["tool_call", "image", "reasoning", "odd"]))
    if kind == "odd":
        return draw(ANY)
    block: dict[str, Any] = {"type": kind}
    if kind == "text":
        block["text"] = _mostly(draw, st.text(max_size=5))
        _maybe(draw, block, "annotations", st.just([]))
    elif kind == "tool_result":
        block["call_id"] = _mostly(draw, IDS)
        # Outputs whose repr and JSON differ in length (non-ASCII text is escaped in JSON).
        _maybe(draw, block, "output", st.one_of(ANY, st.dictionaries(st.text(max_size=2), st.text(max_size=3))))
        _maybe(draw, block, "is_error", st.booleans())
        _maybe(draw, block, "status", st.sampled_from([None, "completed", "failed"]))
    elif kind == "tool_call":
        block.update(id=draw(IDS), name="f")
    if draw(st.integers(0, 9)) == 0:
        block["extra"] = draw(ANY)
    return block


@st.composite
def messages(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 40)) == 0:
        return draw(ANY)
    role = _mostly(draw, st.sampled_from(["user", "assistant", "system", "tool"]))
    content = _mostly(draw, st.lists(blocks(), max_size=2))
    if role == "tool" and isinstance(content, list) and draw(st.integers(0, 3)):
        content.append({"type": "tool_result", "call_id": draw(IDS), "output": "ok"})
    record: dict[str, Any] = {"role": role, "content": content}
    _maybe(draw, record, "message_id", st.one_of(st.text(max_size=3), st.integers(0, 9)))
    _maybe(draw, record, "timestamp", st.one_of(st.integers(0, 9), st.floats(0, 9)))
    _maybe(draw, record, "delta", st.booleans())
    _maybe(draw, record, "reasoning", st.one_of(st.none(), st.text(max_size=3)))
    _maybe(draw, record, "metadata", st.one_of(st.just({}), st.just({"ctxmgr_summary": True})))
    _maybe(draw, record, "raw", st.one_of(st.none(), st.just({"a": 1})))
    _maybe(draw, record, "parsed_content", st.one_of(st.none(), st.just({})))
    _maybe(
        draw,
        record,
        "tools_calls",
        st.lists(
            st.one_of(
                st.builds(lambda i: {"id": i, "type": "function", "function": {"name": "f"}}, IDS),
                st.builds(lambda i: {"id": i, "type": "function", "function": {"name": "f"}}, IDS),
                st.builds(lambda i: {"id": i, "type": "function", "function": {"name": "f"}}, IDS),
                ANY,
            ),
            max_size=2,
        ),
    )
    _maybe(
        draw,
        record,
        "usages",
        st.fixed_dictionaries(
            {
                "completion_tokens": st.integers(0, 9),
                "prompt_tokens": st.integers(0, 9),
                "total_tokens": st.one_of(st.integers(0, 9), st.integers(0, 9), ANY),
            },
            optional={
                "image_tokens": st.one_of(st.none(), st.integers(0, 9), ANY),
                "reasoning_tokens": st.one_of(st.integers(0, 9), ANY),
                "extra": ANY,
            },
        ),
    )
    if draw(st.integers(0, 6)) == 0:
        record["unknown_key"] = draw(ANY)
    return record


def _strict(model: Any, value: Any) -> Any:
    try:
        return model.model_validate(value, strict=True)
    except Exception:
        return None


@explored(max_examples=300, deadline=None)
@given(st.lists(messages(), max_size=5), st.one_of(st.none(), st.text(max_size=3), ANY))
def test_what_the_outline_takes_the_strict_reader_reads_the_same(context: list[Any], summary: Any) -> None:
    document = {"context": context, "context_summary": summary}
    outline = native(document)
    if outline is None:
        return
    state = _strict(AgentState, document)
    assert state is not None, "the outline took a document the full reader rejects"
    for i, message in enumerate(state.context):
        assert outline.roles[i] == message.role
        assert outline.calls[i] == tuple(call_ids(message))
        assert outline.results[i] == tuple(result_ids(message))
        assert bool(outline.calls[i]) == bool(message.tools_calls)  # the trim rule's flag
        shape = shape_of(message)
        assert not shape.empty_tool
        assert not shape.orphan_reasoning
    assert outline.rebuild([]) == {"context": [], "context_summary": summary}


def test_it_takes_plain_checkpoints_and_declines_the_rest() -> None:
    plain = {
        "context": [
            {"role": "system", "content": [{"type": "text", "text": "s"}], "message_id": "m1", "timestamp": 1.5},
            {
                "role": "assistant",
                "content": [],
                "tools_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
                "usages": {"completion_tokens": 1, "prompt_tokens": 2, "total_tokens": 3},
            },
            {"role": "tool", "content": [{"type": "tool_result", "call_id": "c1", "output": {"ok": True}}]},
        ],
        "execution_meta": {"current_node": "agent", "step": 3, "status": "completed"},
        "custom": [1, 2],
    }
    outline = native(plain)
    assert outline is not None
    assert outline.roles == ["system", "assistant", "tool"]
    assert outline.calls == [(), ("c1",), ()]
    assert outline.results == [(), (), ("c1",)]
    for broken in (
        {**plain, "execution_meta": {"step": "3"}},
        {**plain, "execution_meta": {"status": ["x"]}},
        {**plain, "context_summary": 3},
        {"context": [{"role": "user", "content": "text, not blocks"}]},
        {"context": [{"role": "user", "content": [{"type": "image", "media": None}]}]},
        {"context": [{"role": "tool", "content": [{"type": "text", "text": "no result"}]}]},
        {"context": [{"role": "user", "content": [], "timestamp": True}]},
        {"context": [{"role": ["user"], "content": []}]},
        [{"role": "user", "content": []}],
    ):
        assert native(broken) is None, broken


def _run(path: Path, out: Path, keep: int, fast: bool) -> tuple[FileResult, bytes | None]:
    out.unlink(missing_ok=True)
    settings = Settings(fast=fast, measure=True)
    result = asyncio.run(compact_file(str(path), MessageContextManager(keep), FileSink(out), settings))
    return result, out.read_bytes() if out.exists() else None


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(messages(), max_size=6), min_size=1, max_size=4), st.integers(0, 2), st.booleans())
def test_fast_and_full_paths_agree_on_native_files(
    tmp_path: Path, contexts: list[list[Any]], keep: int, dataset: bool
) -> None:
    data = tmp_path / ("rows.jsonl" if dataset else "state.json")
    documents = [{"context": c, "execution_meta": {"step": 1}} for c in contexts]
    if dataset:
        data.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in documents))
    else:
        data.write_bytes(orjson.dumps(documents[0], option=orjson.OPT_INDENT_2))
    fast, fast_out = _run(data, tmp_path / "fast.out", keep, True)
    full, full_out = _run(data, tmp_path / "full.out", keep, False)
    assert fast_out == full_out
    assert str(fast.input_error) == str(full.input_error)
    assert (fast.warnings, fast.errors, fast.bad_lines) == (full.warnings, full.errors, full.bad_lines)
    assert (fast.conversations, fast.messages_before, fast.messages_after) == (
        full.conversations,
        full.messages_before,
        full.messages_after,
    )
    assert (fast.tokens_before, fast.tokens_after) == (full.tokens_before, full.tokens_after)


def test_a_native_trim_imports_no_pydantic(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    turns = [Message.text_message(f"m{i}", role="user" if i % 2 == 0 else "assistant") for i in range(6)]
    state.write_bytes(orjson.dumps(AgentState(context=turns).model_dump(mode="json")))
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('PYDANTIC=' + str('pydantic' in sys.modules) + '\\n'))\n"
        f"sys.argv = ['ctxmgr', 'trim', {str(state)!r}, '-n', '1', '--no-view']\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert [m["content"][0]["text"] for m in orjson.loads(proc.stdout)["context"]] == ["m4", "m5"]
    assert proc.stderr.decode().splitlines()[-1] == "PYDANTIC=False"


@pytest.mark.parametrize("sample", ["support-chat.json", "booking-chat.jsonl"])
def test_the_samples_agree(tmp_path: Path, sample: str) -> None:
    path = Path(__file__).resolve().parents[2] / "samples" / sample
    fast, fast_out = _run(path, tmp_path / "fast.out", 1, True)
    full, full_out = _run(path, tmp_path / "full.out", 1, False)
    assert fast_out == full_out
    assert fast.warnings == full.warnings


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-9, 9), st.floats(-9, 9, allow_nan=False), SCRIPTS),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.text(max_size=2), inner, max_size=2)),
    max_leaves=4,
)


@st.composite
def plain_native_message(draw: st.DrawFn) -> dict[str, Any]:
    """A record the native outline takes, with every counted field in varied shapes."""
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    content: list[Any] = draw(st.lists(st.builds(lambda t: {"type": "text", "text": t}, SCRIPTS), max_size=2))
    if role == "tool" or draw(st.booleans()):
        result: dict[str, Any] = {"type": "tool_result", "call_id": draw(IDS)}
        if draw(st.booleans()):
            result["output"] = draw(JSON)
        content.append(result)
    message: dict[str, Any] = {"role": role, "content": content}
    if draw(st.booleans()):
        message["tools_calls"] = [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": draw(JSON)}}
            for i in draw(st.lists(st.sampled_from(["call_1", "call_2"]), max_size=2))
        ]
    return message


@explored(max_examples=200, deadline=None)
@given(st.one_of(st.lists(messages(), max_size=5), st.lists(plain_native_message(), max_size=5)))
def test_outline_units_are_the_models_message_units(context: list[Any]) -> None:
    from ctxmgr.state import message_units

    found = native({"context": context})
    if found is None:
        return
    state = AgentState.model_validate({"context": context}, strict=True)
    assert found.units() == [message_units(m) for m in state.context]
    # ... and characters, as a token budget's report counts them
    from ctxmgr.state._compaction import _chars

    assert found.chars is not None
    assert [found.chars(i) for i in range(len(found.roles))] == list(map(_chars, state.context))


@explored(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    contexts=st.lists(st.lists(st.one_of(messages(), plain_native_message()), max_size=6), min_size=1, max_size=4),
    manager=budget_managers(most_tokens=30, last_pin=6),
)
def test_token_budgets_agree_on_both_paths(tmp_path: Path, contexts: list[list[Any]], manager: Any) -> None:
    """``trim --max-tokens`` from the outline: the full path's bytes, warnings, counts and counters."""
    from _fast_paths import trim_rows_both_ways

    trim_rows_both_ways(tmp_path, [{"context": c, "execution_meta": {"step": 1}} for c in contexts], manager)
