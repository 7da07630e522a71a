"""``validate`` and ``stats`` from outlines give the full reader's reports, byte for byte.

A conversation whose format has an outline reader, and that the outline accepts, is
checked and counted from its outline (:func:`ctxmgr._validate.check_outline`,
:meth:`ctxmgr._stats.FileStats.add_outline`) and reported without Rich where Rich would
write plain text. These tests run each command both ways on generated conversations,
near-misses included (broken pairings, empty ids, summaries, other formats' keys, wrong
types), as documents and as datasets, and compare standard output, standard error and
the exit code: the outline path with its plain output against the full reader with Rich.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from rich.console import Console

from ctxmgr._stats import Triggers
from ctxmgr.cli.console import lazy_console, reset_notes
from ctxmgr.cli.stats import stats_files
from ctxmgr.cli.validate import validate_files
from ctxmgr.formats._outlines import OUTLINES

TEXT = st.one_of(
    st.sampled_from(["", "hi", "Order 4OG6T3 ships", "[x] done", "a\\b"]),
    st.just("[ctxmgr: summary of the earlier conversation]"),
    st.text(max_size=6),
)
IDS = st.sampled_from(["call_1", "call_2", "call_3", "call_1", "call_2", ""])
ODD = st.sampled_from([None, 3, True, [], {}, {"k": 1}, "x"])


def _sometimes(draw: st.DrawFn, good: st.SearchStrategy[Any]) -> Any:
    """Mostly a right value, sometimes any value."""
    return draw(good) if draw(st.integers(0, 14)) else draw(ODD)


@st.composite
def chat_message(draw: st.DrawFn) -> Any:
    """An OpenAI chat record: mostly plain, with every near-miss the outline must decline."""
    if draw(st.integers(0, 40)) == 0:
        return draw(ODD)
    role = draw(st.sampled_from(["system", "developer", "user", "assistant", "assistant", "tool", "tool", "function"]))
    parts = st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, TEXT),
            st.builds(lambda t: {"type": "refusal", "refusal": t}, TEXT),
            st.just({"type": "image_url", "image_url": {"url": "https://x/y.png"}}),
            st.just({"type": "input_audio", "input_audio": {"data": "AAA", "format": "wav"}}),
        ),
        max_size=2,
    )
    message: dict[str, Any] = {"role": role, "content": _sometimes(draw, st.one_of(TEXT, st.none(), parts))}
    if role == "assistant" and draw(st.booleans()):
        message["tool_calls"] = [
            {"id": _sometimes(draw, IDS), "type": "function", "function": {"name": "f", "arguments": "{}"}}
            for _ in range(draw(st.integers(0, 2)))
        ]
    if role == "user" and draw(st.integers(0, 9)) == 0:
        message["tool_calls"] = [{"id": "call_9", "type": "function", "function": {"name": "f"}}]
    if role == "tool":
        message["tool_call_id"] = _sometimes(draw, IDS)
    if role == "function":
        message["name"] = "f"
    if draw(st.integers(0, 14)) == 0:
        message[draw(st.sampled_from(["name", "type", "refusal", "reasoning_content", "extra"]))] = draw(
            st.one_of(TEXT, ODD, st.just("ctxmgr_summary"))
        )
    return message


@st.composite
def native_message(draw: st.DrawFn) -> Any:
    """A native (AgentState) message: plain text and results, and what the outline declines."""
    if draw(st.integers(0, 40)) == 0:
        return draw(ODD)
    role = draw(st.sampled_from(["system", "user", "assistant", "assistant", "tool", "tool"]))
    plain = st.one_of(
        st.builds(lambda t: {"type": "text", "text": t}, TEXT),
        st.builds(lambda i: {"type": "tool_result", "call_id": i, "output": "ok"}, IDS),
        st.builds(lambda i: {"type": "tool_result", "call_id": i, "output": {"a": [1]}, "is_error": True}, IDS),
    )
    declined = st.sampled_from(
        [{"type": "tool_call", "id": "call_1", "name": "f"}, {"type": "reasoning", "text": "hm"}]
    )
    block = plain if draw(st.integers(0, 9)) else declined
    message: dict[str, Any] = {"role": role, "content": _sometimes(draw, st.lists(block, max_size=2))}
    if role == "assistant" and draw(st.booleans()):
        message["tools_calls"] = [
            {"id": _sometimes(draw, IDS), "type": "function", "function": {"name": "f", "arguments": "{}"}}
            for _ in range(draw(st.integers(0, 2)))
        ]
    if draw(st.integers(0, 9)) == 0:
        message["metadata"] = draw(st.sampled_from([{}, {"ctxmgr_summary": True}, {"k": 1}]))
    if draw(st.integers(0, 9)) == 0:
        message["message_id"] = draw(st.one_of(st.text(max_size=3), st.integers(0, 9), ODD))
    return message


def chat_conversation() -> st.SearchStrategy[Any]:
    messages = st.lists(chat_message(), max_size=8)
    return st.one_of(messages.map(lambda m: {"messages": m, "id": 7}), messages.filter(bool))


def native_conversation() -> st.SearchStrategy[Any]:
    return st.builds(
        lambda context, summary: {"context": context, **summary},
        st.lists(native_message(), max_size=8),
        st.sampled_from([{}, {"context_summary": None}, {"context_summary": ""}, {"context_summary": "Earlier: hi"}]),
    )


# The other formats with outline readers: generated chat conversations written by the
# full writer (their near-misses are each outline's own property tests').
CONVERTED_FORMATS = sorted(set(OUTLINES) - {"openai-chat", "native"})


def _converted(value: Any, fmt: str) -> Any:
    from ctxmgr import formats
    from ctxmgr.errors import InputError

    try:
        conversation = formats.load_value(value, source="x", layout="document", fmt="openai-chat")
        return orjson.loads(formats.dump(conversation, to=fmt))
    except InputError:
        return None


def converted_conversation(fmt: str) -> st.SearchStrategy[Any]:
    return chat_conversation().map(lambda value: _converted(value, fmt)).filter(lambda value: value is not None)


CONVERSATIONS = st.one_of(
    chat_conversation(), native_conversation(), *(converted_conversation(fmt) for fmt in CONVERTED_FORMATS)
)
FORMATS = st.sampled_from([None, None, None, *sorted(OUTLINES)])


def _run(command: Callable[..., int], fast: bool, **options: Any) -> tuple[int, bytes, bytes]:
    """``command`` as the CLI runs it: the outline path with lazy consoles (plain output),
    or the full reader with Rich consoles; standard output and error as bytes."""
    reset_notes()
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    with redirect_stdout(stdout), redirect_stderr(stderr):
        if fast:
            console, shown = lazy_console(stderr=True, highlight=False, emoji=False), lazy_console(
                highlight=False, emoji=False
            )
        else:
            console, shown = Console(stderr=True, highlight=False, emoji=False), Console(highlight=False, emoji=False)
        code = command(console=console, out=shown, fast=fast, **options)
    reset_notes()
    return code, out.getvalue(), err.getvalue()


def _write(folder: Path, rows: list[Any], dataset: bool, name: str) -> Path:
    path = folder / (name + (".jsonl" if dataset else ".json"))
    if dataset:
        path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    else:
        path.write_bytes(orjson.dumps(rows[0]))
    return path


def _both(command: Callable[..., int], **options: Any) -> None:
    fast = _run(command, True, **options)
    full = _run(command, False, **options)
    assert fast == full


_EXAMPLES = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_EXAMPLES
@given(
    rows=st.lists(CONVERSATIONS, min_size=1, max_size=3),
    dataset=st.booleans(),
    target=st.sampled_from([None, None, "openai-chat", "anthropic", "gemini"]),
    fmt=FORMATS,
    json_report=st.booleans(),
    quiet=st.booleans(),
    columns=st.sampled_from(["100", "30", "12"]),
)
def test_validate_reports_the_same_from_outlines(
    tmp_path: Path,
    rows: list[Any],
    dataset: bool,
    target: str | None,
    fmt: str | None,
    json_report: bool,
    quiet: bool,
    columns: str,
) -> None:
    path = _write(tmp_path, rows, dataset, "conv")
    with mock.patch.dict(os.environ, {"COLUMNS": columns}):
        _both(validate_files, arguments=[str(path)], target=target, fmt=fmt, json_report=json_report, quiet=quiet)


@_EXAMPLES
@given(
    rows=st.lists(CONVERSATIONS, min_size=1, max_size=3),
    dataset=st.booleans(),
    fmt=FORMATS,
    json_report=st.booleans(),
    trim=st.sampled_from([None, 0, 1, 10]),
    summary=st.sampled_from([None, 0, 2, 30]),
    budget=st.sampled_from([None, None, 5]),
    top=st.integers(0, 3),
    columns=st.sampled_from(["200", "100", "60", "20"]),
    twice=st.booleans(),
)
def test_stats_reports_the_same_from_outlines(
    tmp_path: Path,
    rows: list[Any],
    dataset: bool,
    fmt: str | None,
    json_report: bool,
    trim: int | None,
    summary: int | None,
    budget: int | None,
    top: int,
    columns: str,
    twice: bool,
) -> None:
    paths = [_write(tmp_path, rows, dataset, "conv")]
    if twice:  # a second file: the table's footer of totals
        paths.append(_write(tmp_path, rows[::-1], dataset, "other"))
    triggers = Triggers(trim_max_messages=trim, summary_max_messages=summary, token_budget=budget)
    with mock.patch.dict(os.environ, {"COLUMNS": columns}):
        _both(
            stats_files,
            arguments=[str(p) for p in paths],
            triggers=triggers,
            fmt=fmt,
            json_report=json_report,
            top=top,
        )


@pytest.mark.parametrize("fmt", sorted(OUTLINES))
def test_the_generated_conversations_reach_the_outline_path(fmt: str) -> None:
    """The property tests above are worth something only if outlines accept many of the
    generated conversations (and decline many): count both."""
    from ctxmgr.formats._outlines import outlined

    strategies = {"openai-chat": chat_conversation(), "native": native_conversation()}
    strategy = strategies[fmt] if fmt in strategies else converted_conversation(fmt)
    taken: list[bool] = []

    @settings(max_examples=300, deadline=None, database=None)
    @given(strategy)
    def sample(value: Any) -> None:
        taken.append(outlined(value, fmt, source="x") is not None)

    sample()
    # Converted conversations are well-formed by construction: most are taken.
    most = 1.0 if fmt in CONVERTED_FORMATS else 0.95
    assert 0.1 < sum(taken) / len(taken) <= most, f"{sum(taken)} of {len(taken)} taken"
