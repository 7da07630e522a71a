"""Complexity and memory bounds, checked without timing (timings live in bench/).

Work is counted, not timed: Python lines executed inside ``ctxmgr`` and calls by name
(pydantic validations, ``message_units``...) while an input of n, 2n and 4n messages is
compacted. For linear work (plus a constant), the growth from 2n to 4n is twice the growth
from n to 2n; quadratic work would make it four times. Streaming a dataset is checked
with ``tracemalloc``: the peak stays the same whatever the number of lines.
"""

from __future__ import annotations

import asyncio
import io
import random
import sys
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import orjson
import pytest

import ctxmgr
from ctxmgr._validate import check_messages
from ctxmgr.files import FileResult, FileSink, NullSink, Settings, _reading as reading, compact_file
from ctxmgr.state import (
    BaseContextManager,
    Message,
    MessageContextManager,
    SummaryContextManager,
    ToolResultBlock,
    find_safe_cut,
    remove_completed_tool_sequences,
)

PACKAGE = str(Path(ctxmgr.__file__).resolve().parent)

# -- counting work -------------------------------------------------------------------------


class Operations:
    """Lines executed in ctxmgr's own code, and calls (Python and C) by qualified name."""

    def __init__(self) -> None:
        self.lines = 0
        self.calls: Counter[str] = Counter()

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        return self._local if frame.f_code.co_filename.startswith(PACKAGE) else None

    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line":
            self.lines += 1
        return self._local

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self.calls[frame.f_code.co_qualname] += 1
        elif event == "c_call":
            self.calls[getattr(arg, "__qualname__", getattr(arg, "__name__", "?"))] += 1

    def run(self, fn: Callable[[], Any]) -> Any:
        sys.settrace(self._global)
        sys.setprofile(self._profile)
        try:
            return fn()
        finally:
            sys.setprofile(None)
            sys.settrace(None)


def count(fn: Callable[[], Any]) -> Operations:
    operations = Operations()
    operations.run(fn)
    return operations


def assert_linear(name: str, counts: list[int], *, per_message: bool = True) -> None:
    """``counts`` for sizes n, 2n, 4n grow linearly: (c4 - c2) is about 2 * (c2 - c1).

    ``per_message=False`` also accepts a constant count (work done in bulk).
    """
    c1, c2, c4 = counts
    if per_message:
        assert c2 > c1, f"{name}: no work per message? {counts}"
    # 10% slack for the odd extra branch; quadratic growth would give 4x, not 2x.
    assert c4 - c2 <= 2.2 * (c2 - c1), f"{name} grows faster than linearly: {counts} for n, 2n, 4n"


# -- conversations -------------------------------------------------------------------------


def openai_conversation(turns: int) -> dict[str, Any]:
    """System prompt, then ``turns`` user turns; every other turn makes two parallel tool calls."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a support agent."}]
    for turn in range(turns):
        messages.append({"role": "user", "content": f"Question {turn}: where is order {turn}?"})
        if turn % 2 == 0:
            ids = [f"call_{turn}_a", f"call_{turn}_b"]
            messages.append({
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": i, "type": "function", "function": {"name": "get_order", "arguments": '{"id": "1"}'}}
                    for i in ids
                ],
            })
            messages.extend({"role": "tool", "tool_call_id": i, "content": '{"status": "shipped"}'} for i in ids)
        messages.append({"role": "assistant", "content": f"Answer {turn}: it has shipped."})
    return {"messages": messages, "tools": [], "parallel_tool_calls": True}


def native_conversation(turns: int) -> dict[str, Any]:
    """The same conversation as native ``{"context": [...]}``."""
    context = []
    for index, record in enumerate(openai_conversation(turns)["messages"]):
        message: dict[str, Any] = {"message_id": f"m{index}", "role": record["role"], "timestamp": 1.0}
        if record["role"] == "tool":
            result = {"type": "tool_result", "call_id": record["tool_call_id"], "output": record["content"]}
            message["content"] = [result]
        else:
            message["content"] = [{"type": "text", "text": record["content"]}] if record["content"] else []
        if record.get("tool_calls"):
            message["tools_calls"] = record["tool_calls"]
        context.append(message)
    return {"context": context}


BUILDERS = {"native": native_conversation, "openai-chat": openai_conversation}
TURNS = 60  # about 200 messages; then 2n and 4n


def compact_document(path: Path, manager: BaseContextManager[Any]) -> FileResult:
    """The CLI's path for one file: read, detect, validate, compact, count, check, dump."""
    result = asyncio.run(compact_file(str(path), manager, NullSink(), Settings(measure=True, fast=False)))
    assert result.input_error is None, result.input_error
    return result


# -- trim ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(BUILDERS))
def test_trim_of_a_file_is_linear_in_messages(tmp_path: Path, fmt: str) -> None:
    warm_up = tmp_path / "warm-up.json"
    warm_up.write_bytes(orjson.dumps(BUILDERS[fmt](2)))
    compact_document(warm_up, MessageContextManager(max_messages=1))  # builds the models' validators once
    runs = []
    for factor in (1, 2, 4):
        path = tmp_path / f"{fmt}-{factor}.json"
        path.write_bytes(orjson.dumps(BUILDERS[fmt](TURNS * factor)))
        runs.append(count(lambda p=path: compact_document(p, MessageContextManager(max_messages=3))))
    assert_linear("lines executed in ctxmgr", [r.lines for r in runs])
    # openai-chat validates message by message; native validates the whole state at once.
    assert_linear("pydantic validations", [r.calls["SchemaValidator.validate_python"] for r in runs],
                  per_message=fmt == "openai-chat")
    assert_linear("message_units (token estimate)", [r.calls["message_units"] for r in runs])
    assert_linear("all calls", [sum(r.calls.values()) for r in runs])


def test_trim_removing_tool_sequences_is_linear() -> None:
    runs = []
    for factor in (1, 2, 4):
        raw = native_conversation(TURNS * factor)["context"]
        messages = [Message.model_validate(record) for record in raw]
        manager = MessageContextManager(max_messages=3, remove_tool_msgs=True)

        def trim(messages: list[Message] = messages, manager: MessageContextManager = manager) -> None:
            from ctxmgr.state import AgentState

            manager.trim_context(AgentState(context=list(messages)))

        runs.append(count(trim))
    assert_linear("lines executed in ctxmgr", [r.lines for r in runs])


# -- safe cut, rule checks, summaries -----------------------------------------------------------


def _worst_case_for_cuts(turns: int) -> list[Message]:
    """Every split point is unsafe: the first call's result comes last, so cuts walk to 0."""
    messages = [Message.model_validate(r) for r in native_conversation(turns)["context"]]
    first_caller = next(i for i, m in enumerate(messages) if m.tools_calls)
    call_id = messages[first_caller].tools_calls[0]["id"]  # type: ignore[index]
    late = [i for i, m in enumerate(messages) if any(isinstance(b, ToolResultBlock) and b.call_id == call_id
                                                     for b in m.content)]
    moved = messages.pop(late[0])
    messages.append(moved)
    return messages


def test_find_safe_cut_is_linear_even_when_every_cut_is_unsafe() -> None:
    runs = []
    for factor in (1, 2, 4):
        messages = _worst_case_for_cuts(TURNS * factor)
        cuts: list[int] = []
        runs.append(count(lambda m=messages, out=cuts: out.append(find_safe_cut(m, len(m) - 2))))
        assert cuts[0] <= 2  # walked back (almost) to the start: the whole list was scanned
    assert_linear("lines executed in find_safe_cut", [r.lines for r in runs])
    assert_linear("call_ids calls", [r.calls["call_ids"] for r in runs])


def test_rule_checks_and_tool_sequence_removal_are_linear() -> None:
    runs = []
    for factor in (1, 2, 4):
        messages = [Message.model_validate(r) for r in native_conversation(TURNS * factor)["context"]]

        def work(messages: list[Message] = messages) -> None:
            check_messages(messages, target="anthropic")
            check_messages(messages, target="openai-chat")
            remove_completed_tool_sequences(messages)

        runs.append(count(work))
    assert_linear("lines executed in ctxmgr", [r.lines for r in runs])


def test_summarize_path_is_linear(tmp_path: Path) -> None:
    """Split at a safe cut, render the old part, summarize offline, write back."""
    runs = []
    for factor in (1, 2, 4):
        path = tmp_path / f"summarize-{factor}.json"
        path.write_bytes(orjson.dumps(openai_conversation(TURNS * factor)))
        manager = SummaryContextManager("offline", max_messages=10, keep_recent=8)
        runs.append(count(lambda p=path, m=manager: compact_document(p, m)))
    assert_linear("lines executed in ctxmgr", [r.lines for r in runs])
    assert_linear("pydantic validations", [r.calls["SchemaValidator.validate_python"] for r in runs])


# -- streaming memory ------------------------------------------------------------------------------


def _dataset(path: Path, lines: int) -> int:
    """``lines`` conversations of about 3 KB each; returns the file size."""
    rng = random.Random(5)
    with open(path, "wb") as handle:
        for index in range(lines):
            conversation = openai_conversation(rng.randint(4, 8))
            conversation["messages"][0]["content"] = f"Agent {index}. " + "Policy text. " * 100
            handle.write(orjson.dumps(conversation) + b"\n")
    return path.stat().st_size


def _peak_while_compacting(source: Path, target: Path) -> int:
    manager = MessageContextManager(max_messages=2)
    tracemalloc.start()
    try:
        result = asyncio.run(compact_file(str(source), manager, FileSink(target), Settings()))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.input_error is None
    assert result.kind == "dataset"
    assert result.changed_conversations == result.conversations
    return peak


def test_streaming_a_dataset_uses_memory_independent_of_its_length(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Smaller read chunks than the real 1 MB, so small files span many chunks and the
    # test stays fast under tracemalloc; the bound does not depend on the chunk size.
    monkeypatch.setattr(reading, "SNIFF_BYTES", 64 * 1024)
    small = tmp_path / "small.jsonl"
    large = tmp_path / "large.jsonl"
    small_size = _dataset(small, 150)
    large_size = _dataset(large, 600)
    assert large_size > 3 * small_size > 3 * reading.SNIFF_BYTES  # several read chunks each
    peak_small = _peak_while_compacting(small, tmp_path / "small-out.jsonl")
    peak_large = _peak_while_compacting(large, tmp_path / "large-out.jsonl")
    # Bounded by the read chunk and one conversation, not by the file: 4x the lines,
    # (about) the same peak, and far below the file size.
    assert peak_large < peak_small * 1.25 + 256 * 1024, (peak_small, peak_large, small_size, large_size)
    assert peak_large < large_size / 2, (peak_large, large_size)


# -- line splitting ----------------------------------------------------------------------------------


def _split(data: bytes) -> Iterator[tuple[int, bytes]]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return iter(list(enumerate(lines, start=1)))


def test_dataset_lines_are_split_the_same_at_any_chunk_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(11)
    for _ in range(500):
        monkeypatch.setattr(reading, "SNIFF_BYTES", rng.randint(1, 9))
        data = bytes(rng.choice(b"ab\n") for _ in range(rng.randint(0, 60)))
        head = rng.randint(0, len(data))
        got = list(reading.iter_lines(io.BytesIO(data[head:]), data[:head]))
        assert got == list(_split(data)), (data, head)
