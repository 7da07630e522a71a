"""The streaming fast path for trimming datasets gives exactly the full path's output.

The fast path reads only roles and tool-call flags (``outline``) and skips building a
``Message`` per record; it must decline (so the full reader runs) whenever the full
reader would do something else: report an error, lift a summary, pair legacy calls.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import explored, trim_document_both_ways, trim_rows_both_ways
from hypothesis import HealthCheck, example, given, strategies as st

from ctxmgr.files import FileResult, FileSink, Settings, compact_file
from ctxmgr.formats._base import SUMMARY_HEADER
from ctxmgr.formats._detection.openai_chat import outline
from ctxmgr.state import MessageContextManager

_HALF = len(SUMMARY_HEADER) // 2
# Short texts, and now and then ctxmgr's summary header: whole, after other text, or
# split in two (its halves in two parts of one message).
texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from([SUMMARY_HEADER, SUMMARY_HEADER[:_HALF], SUMMARY_HEADER[_HALF:], f"x {SUMMARY_HEADER} y"]),
)
# Text of every weight class of the token estimate (ASCII, U+0080..U+1FFF, U+2000..U+FFFF
# with lone surrogates, beyond U+FFFF), mixed within one string.
scripts = st.text(
    st.one_of(
        st.characters(max_codepoint=0x7F),
        st.characters(min_codepoint=0x80, max_codepoint=0x1FFF),
        st.characters(min_codepoint=0x2000, max_codepoint=0xFFFF, categories=None),
        st.characters(min_codepoint=0x10000),
    ),
    max_size=12,
)
call_ids = st.sampled_from(["call_a", "call_b", "call_c", "call_d", ""])


@st.composite
def chat_message(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "robot"]))
    message: dict[str, Any] = {"role": role}
    content = draw(
        st.one_of(
            texts,
            st.none(),
            st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": texts}), max_size=2),
            st.just([{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]),
            st.just([{"type": "input_audio", "input_audio": {"data": "AAA", "format": "wav"}}]),
            st.integers(-1000, 1000),  # wrong type: the full reader reports it
        )
    )
    message["content"] = content
    if role == "assistant" and draw(st.booleans()):
        arguments = st.one_of(st.just("{}"), st.fixed_dictionaries({"q": texts}), st.none())
        message["tool_calls"] = [
            {"id": draw(call_ids), "type": "function", "function": {"name": "lookup", "arguments": draw(arguments)}}
            for _ in range(draw(st.integers(1, 2)))
        ]
    if role == "assistant" and draw(st.integers(0, 3)) == 0:
        message["refusal"] = draw(st.one_of(texts, st.none()))
    if role == "tool":
        message["tool_call_id"] = draw(st.one_of(call_ids, st.none()))
    if role == "function":
        message["name"] = "lookup"
    if draw(st.integers(0, 9)) == 0:  # the summary's name, on any role
        message["name"] = "ctxmgr_summary"
    return message


conversations = st.lists(chat_message(), max_size=14).map(lambda ms: {"messages": ms, "id": 7})


def _run(
    path: Path, out: Path, manager: MessageContextManager, fast: bool, measure: bool = True, strict: bool = False
) -> tuple[FileResult, bytes | None]:
    settings = Settings(fast=fast, measure=measure, strict=strict)
    result = asyncio.run(compact_file(str(path), manager, FileSink(out), settings))
    return result, out.read_bytes() if out.exists() else None


@explored(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(conversations, min_size=1, max_size=6),
    keep=st.integers(0, 3),
    remove_tools=st.booleans(),
    strict=st.booleans(),
)
def test_fast_and_full_paths_agree(
    tmp_path: Path, rows: list[dict[str, Any]], keep: int, remove_tools: bool, strict: bool
) -> None:
    # A plain first line settles the format: the other lines are the ones under test
    # (test_first_lines_agree covers the first line itself).
    first = {"messages": [{"role": "user", "content": "hi"}], "id": 0}
    manager = MessageContextManager(max_messages=keep, remove_tool_msgs=remove_tools)
    # Rule problems (reused ids, results cut from their calls) are worded on the fast path
    # too; token estimates are counted from the records there, from messages on the full one.
    trim_rows_both_ways(tmp_path, [first, *rows], manager, strict=strict)


@explored(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(conversations, min_size=1, max_size=3), keep=st.integers(0, 2))
def test_first_lines_agree(tmp_path: Path, rows: list[dict[str, Any]], keep: int) -> None:
    """The first line may settle the dataset's format on the fast path: same result."""
    trim_rows_both_ways(tmp_path, rows, MessageContextManager(max_messages=keep))


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _refusal(text: str) -> dict[str, str]:
    return {"type": "refusal", "refusal": text}


def test_outline_declines_what_the_full_reader_treats_specially() -> None:
    plain = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}
    assert outline(plain) is not None
    declined = [
        {"messages": [{"role": "robot", "content": "hi"}]},
        {"messages": [{"role": "user", "content": 5}]},
        {"messages": [{"role": "function", "name": "f", "content": "x"}]},
        {"messages": [{"role": "assistant", "function_call": {"name": "f", "arguments": "{}"}}]},
        {"messages": [{"role": "system", "name": "ctxmgr_summary", "content": "earlier"}]},
        {"messages": [{"role": "tool", "content": "x"}]},
        # The full reader warns that a tool message carries the summary's name.
        {"messages": [{"role": "tool", "tool_call_id": "call_1", "name": "ctxmgr_summary", "content": None}]},
        # ... and about the header split between two text parts (it reads them joined).
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": SUMMARY_HEADER[:_HALF]},
                        {"type": "text", "text": SUMMARY_HEADER[_HALF:] + " x"},
                    ],
                }
            ]
        },
        # ... and in a system message split between a text and a refusal part, or with a
        # stray "text" key between its halves (the reader lifts it as a summary).
        {
            "messages": [
                {"role": "system", "content": [_text(SUMMARY_HEADER[:_HALF]), _refusal(SUMMARY_HEADER[_HALF:])]}
            ]
        },
        {
            "messages": [
                {"role": "system", "content": [_refusal(SUMMARY_HEADER[:_HALF]), _text(SUMMARY_HEADER[_HALF:])]}
            ]
        },
        {
            "messages": [
                {
                    "role": "system",
                    "content": [
                        _text(SUMMARY_HEADER[:_HALF]),
                        {"type": "image_url", "image_url": {"url": "u"}, "text": "zz"},
                        _text(SUMMARY_HEADER[_HALF:] + "\nS"),
                    ],
                }
            ]
        },
        {"messages": [{"role": [1], "content": "x"}]},
        {"messages": [{"role": "user", "content": [{"type": "input_audio"}]}]},
        {"messages": [], "system": "anthropic-style"},
        {"messages": "not a list"},
        "a string",
    ]
    for value in declined:
        assert outline(value) is None, value


def test_outline_reads_roles_and_calls() -> None:
    value = {
        "messages": [
            {"role": "developer", "content": "rules"},
            {"role": "user", "content": [{"type": "text", "text": "q"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
            {"role": "assistant", "content": "done"},
        ],
        "model": "gpt-4o",
    }
    found = outline(value)
    assert found is not None
    assert found.roles == ["system", "user", "assistant", "tool", "assistant"]
    assert found.calls == [(), (), ("c1",), (), ()]
    assert found.results == [(), (), (), ("c1",), ()]
    assert found.has_tools
    assert found.rebuild([0, 4]) == {"messages": [value["messages"][0], value["messages"][4]], "model": "gpt-4o"}


@explored(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    row=conversations,
    bare=st.booleans(),
    pretty=st.booleans(),
    keep=st.integers(0, 3),
    remove_tools=st.booleans(),
    strict=st.booleans(),
)
# An assistant's refusal is its text when it has no content: a forged header there is
# warned about on both paths.
@example(
    row={
        "messages": [
            {"role": "assistant", "content": None, "refusal": "[ctxmgr: summary of the earlier conversation]"}
        ]
    },
    bare=False,
    pretty=False,
    keep=0,
    remove_tools=False,
    strict=False,
)
def test_documents_agree_too(
    tmp_path: Path, row: dict[str, Any], bare: bool, pretty: bool, keep: int, remove_tools: bool, strict: bool
) -> None:
    value: Any = row["messages"] if bare else row
    manager = MessageContextManager(max_messages=keep, remove_tool_msgs=remove_tools)
    trim_document_both_ways(tmp_path, value, manager, pretty=pretty, strict=strict)


def test_the_sample_and_a_plain_dataset_take_the_fast_path(tmp_path: Path) -> None:
    from ctxmgr import _io as io
    from ctxmgr.files import _fastpath as fastpath

    sample = Path(__file__).resolve().parents[2] / "samples" / "openai-chat.json"
    value, layout, pretty = io.parse(sample.read_bytes(), str(sample))
    result = FileResult(source=str(sample))
    fast = fastpath.fast_document(
        value, layout, pretty, str(sample), MessageContextManager(2), Settings(measure=False), result
    )
    assert fast is not None
    output, changed = fast
    assert changed
    assert result.format == "openai-chat"
    _, full_out = _run(sample, tmp_path / "full.json", MessageContextManager(2), fast=False)
    assert output == full_out


def _reused_id_conversation() -> dict[str, Any]:
    """Two turns that each call a tool under the same id (as 3% of the real tau-bench lines do)."""

    def turn(question: str) -> list[dict[str, Any]]:
        call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        return [
            {"role": "user", "content": question},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "found"},
            {"role": "assistant", "content": "done"},
        ]

    return {"messages": [{"role": "system", "content": "be brief"}, *turn("a"), *turn("b"), *turn("c")]}


def test_a_reused_call_id_chat_accepts_is_no_warning_on_either_path(tmp_path: Path) -> None:
    from ctxmgr.files import _fastpath as fastpath

    raw = orjson.dumps(_reused_id_conversation())
    result = FileResult(source="rows.jsonl")
    output, _ = fastpath.fast_line(3, raw, "rows.jsonl", MessageContextManager(2), Settings(), result, [])
    assert output is not None  # no full reader (nor pydantic) for the check
    # Chat Completions takes a reused call id: validate names it once; a trim does not warn.
    assert result.warnings == []
    data = tmp_path / "rows.jsonl"
    data.write_bytes(raw + b"\n")
    full, _ = _run(data, tmp_path / "full.jsonl", MessageContextManager(2), fast=False)
    assert full.warnings == []


@given(
    claim=st.sampled_from(
        [
            {"messages": [{"role": "user", "content": [{"type": "text", "text": "b", "cache_control": {}}]}]},
            {"messages": [{"role": "user", "content": "b"}], "model": "claude-sonnet-4"},
            {"messages": [{"role": "user", "content": "b"}], "tools": [{"name": "f", "input_schema": {}}]},
        ]
    ),
    calls_first=st.booleans(),
)
@explored(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_chat_line_anthropic_would_claim_is_judged_as_the_full_path_judges_it(
    tmp_path: Path, claim: dict[str, Any], calls_first: bool
) -> None:
    """A later line with an Anthropic sign (and no tool message early on to rule
    Anthropic out) settles the dataset's format, which the text-only first line reads as
    too: both paths read the dataset alike, as Anthropic (else as OpenAI chat)."""
    line = dict(claim)
    if calls_first:  # a tool exchange first: now Anthropic cannot claim the line
        line["messages"] = [*_reused_id_conversation()["messages"][1:4], *line["messages"]]
    data = tmp_path / "rows.jsonl"
    first = {"messages": [{"role": "user", "content": "a"}]}
    data.write_bytes(orjson.dumps(first) + b"\n" + orjson.dumps(line) + b"\n")
    fast, fast_out = _run(data, tmp_path / "fast.jsonl", MessageContextManager(1), fast=True)
    full, full_out = _run(data, tmp_path / "full.jsonl", MessageContextManager(1), fast=False)
    assert (fast_out, str(fast.input_error)) == (full_out, str(full.input_error))
    assert full.input_error is None
    assert full.format == fast.format == ("openai-chat" if calls_first else "anthropic")
    for name in ("fast.jsonl", "full.jsonl"):
        (tmp_path / name).unlink(missing_ok=True)


def test_a_line_of_another_format_is_refused_on_every_path(tmp_path: Path) -> None:
    chat = {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}
    native = [
        {"message_id": "m1", "role": "user", "content": [{"type": "text", "text": "x"}]},
        {"message_id": "m2", "role": "user", "content": [{"type": "text", "text": "y"}]},
    ]
    data = tmp_path / "mixed.jsonl"
    data.write_bytes(orjson.dumps(chat) + b"\n" + orjson.dumps(native) + b"\n" + b"[]\n")
    for fast in (True, False):
        result, out = _run(data, tmp_path / f"out-{fast}.jsonl", MessageContextManager(1), fast=fast)
        assert out is None
        assert "this line is native but the first line is openai-chat" in str(result.input_error)


_parts = st.lists(
    st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": scripts}),
        st.fixed_dictionaries({"type": st.just("refusal"), "refusal": scripts}),
        st.just({"type": "image_url", "image_url": {"url": "https://x/y.png"}}),
    ),
    max_size=3,
)


@st.composite
def plain_chat_message(draw: st.DrawFn) -> dict[str, Any]:
    """A record the outline takes (every field it reads, in every plain shape)."""
    role = draw(st.sampled_from(["system", "developer", "user", "assistant", "tool"]))
    message: dict[str, Any] = {"role": role, "content": draw(st.one_of(scripts, st.none(), _parts))}
    if role == "tool":
        message["tool_call_id"] = draw(call_ids)
    if role == "assistant":
        if draw(st.booleans()):
            arguments = st.one_of(scripts, st.dictionaries(scripts, st.one_of(scripts, st.integers())), st.none())
            message["tool_calls"] = [
                {
                    "id": draw(call_ids),
                    "type": "function",
                    "function": {"name": draw(scripts), "arguments": draw(arguments)},
                }
                for _ in range(draw(st.integers(0, 2)))
            ]
        if draw(st.booleans()):
            message["refusal"] = draw(st.one_of(scripts, st.none()))
    return message


@explored(max_examples=200, deadline=None)
@given(st.one_of(conversations, st.lists(plain_chat_message(), min_size=1, max_size=6).map(lambda m: {"messages": m})))
def test_outline_units_are_the_readers_message_units(record: dict[str, Any]) -> None:
    """Token reports from the fast path: each message's counted units, exactly, in any script."""
    from ctxmgr import formats
    from ctxmgr.errors import InputError
    from ctxmgr.state import message_units

    found = outline(record)
    if found is None:
        return
    try:
        conversation = formats.load_value(record, source="x", layout="document", fmt="openai-chat")
    except InputError:
        return  # (a case the outline takes and the reader refuses is caught by the path tests)
    assert found.units() == [message_units(m) for m in conversation.state.context]


@pytest.mark.parametrize(
    "later",
    [
        [{"role": "user", "content": []}],
        [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    ],
)
def test_a_later_line_native_claims_goes_the_full_path(tmp_path: Path, later: list[Any]) -> None:
    """Detection gives a bare list of text parts (or of empty contents) to native, which
    comes first: after a chat line, the full path rejects the dataset, and so must the
    fast one (found by the fuzz profile)."""
    first = [{"role": "user", "content": ""}, {"role": "assistant", "content": ""}]
    fast, _ = trim_rows_both_ways(tmp_path, [first, later, []], MessageContextManager())
    assert "this line is native but the first line is openai-chat" in str(fast.input_error)
