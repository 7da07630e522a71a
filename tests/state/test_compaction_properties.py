"""Property tests of the compaction managers on random agent conversations: pairs stay
valid, the budget holds, the rules, pins and last request survive, order is kept."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import explored
from hypothesis import given, settings, strategies as st

from ctxmgr import formats
from ctxmgr._validate import check_messages
from ctxmgr.errors import CtxmgrError
from ctxmgr.files import RunOptions, compact_paths, restore
from ctxmgr.state import AgentState, Message, ToolResultBlock, collect_compaction_reports, compact_messages
from ctxmgr.state._compaction import tokens_of
from ctxmgr.state._compose import trim_manager
from ctxmgr.state._tokens import text_units

TEXT = st.text(alphabet=st.sampled_from('ab cd{}"é中🙂\n'), max_size=300)


def output_strategy() -> st.SearchStrategy[Any]:
    json_text = st.lists(st.dictionaries(st.sampled_from("xyz"), TEXT, max_size=3), max_size=30).map(json.dumps)
    parts = st.lists(
        st.one_of(
            TEXT.map(lambda t: {"type": "text", "text": t}),
            st.just({"type": "image", "source": {"data": "QUJD" * 200}}),
        ),
        min_size=1,
        max_size=4,
    )
    return st.one_of(TEXT, json_text, parts)


@st.composite
def agent_conversation(draw: st.DrawFn, *, reuse_ids: bool = False) -> list[Message]:
    """Rules, user turns and assistants calling tools (one or two calls, results right after);
    with ``reuse_ids``, a turn may call under an id an earlier turn used (as real logs do)."""
    messages: list[Message] = []
    used: list[int] = []
    steps = draw(st.lists(st.sampled_from(["system", "user", "assistant", "calls"]), min_size=3, max_size=25))
    for index, step in enumerate(steps):
        if step != "calls":
            messages.append(Message.text_message(f"{step} {index} " + draw(TEXT), role=step, message_id=index))
            continue
        count = draw(st.integers(min_value=1, max_value=2))
        caller = Message.text_message("", role="assistant", message_id=index)
        serial = draw(st.sampled_from(used)) if reuse_ids and used and draw(st.booleans()) else index
        used.append(index)
        caller.tools_calls = [
            {"id": f"c{serial}_{k}", "type": "function", "function": {"name": f"tool{k}", "arguments": '{"q": 1}'}}
            for k in range(count)
        ]
        messages.append(caller)
        for k in range(count):
            block = ToolResultBlock(call_id=f"c{serial}_{k}", output=draw(output_strategy()))
            messages.append(Message.tool_message([block], message_id=f"{index}_{k}"))
    return messages


policies = st.fixed_dictionaries(
    {},
    optional={
        "max_tokens": st.integers(min_value=1, max_value=400),
        "start_on": st.just("user"),
        "pin_index": st.lists(st.integers(min_value=0, max_value=40), max_size=2),
        "clear_tool_results": st.booleans(),
        "keep_tool_results": st.integers(min_value=0, max_value=3),
        "clear_tool_inputs": st.booleans(),
        "max_tool_output": st.integers(min_value=1, max_value=80),
    },
).filter(lambda p: "max_tokens" in p or p.get("clear_tool_results") or "max_tool_output" in p)


def _fix(policy: dict[str, Any]) -> dict[str, Any]:
    if "max_tokens" not in policy:
        policy = {k: v for k, v in policy.items() if k not in ("start_on", "pin_index")}
    return policy


@given(agent_conversation(), policies)
def test_every_policy_keeps_pairs_rules_pins_and_the_last_request(
    messages: list[Message], policy: dict[str, Any]
) -> None:
    policy = _fix(policy)
    with collect_compaction_reports() as reports:
        kept = compact_messages(messages, **policy)
    assert check_messages(kept) == []
    positions = {m.message_id: i for i, m in enumerate(messages)}
    order = [positions[m.message_id] for m in kept]
    assert order == sorted(set(order))  # a subsequence, in order
    kept_ids = {m.message_id for m in kept}
    assert {m.message_id for m in messages if m.role == "system"} <= kept_ids
    users = [m.message_id for m in messages if m.role == "user"]
    assert not users or users[-1] in kept_ids
    assert {messages[i].message_id for i in policy.get("pin_index", ()) if i < len(messages)} <= kept_ids
    if "max_tokens" in policy and not any(r.warnings and "over the budget" in r.warnings[-1] for r in reports):
        assert tokens_of(kept) <= policy["max_tokens"]
    assert sum(r.messages_dropped for r in reports) == len(messages) - len(kept)
    assert sum(r.tokens_removed for r in reports) >= 0


@given(agent_conversation(), st.integers(min_value=20, max_value=80))
def test_truncated_outputs_fit_json_stays_json_and_parts_stay_parts(messages: list[Message], limit: int) -> None:
    kept = compact_messages(messages, max_tool_output=limit)
    for before, after in zip(messages, kept, strict=True):
        if before.role != "tool":
            assert after is before
            continue
        old, new = before.content[0].output, after.content[0].output  # type: ignore[union-attr]
        if text_units(before.text()) // 4 <= limit:
            assert after is before
        elif isinstance(old, str):
            assert "cut by ctxmgr" in new or json.loads(new) == json.loads(old)  # re-spaced JSON may fit
            assert text_units(new) <= limit * 4
            if "items cut by ctxmgr" in new:  # cut inside the JSON: still JSON, still a list
                assert isinstance(json.loads(new), list)
        else:
            assert isinstance(new, list)
            assert len(new) == len(old)
            for part_before, part_after in zip(old, new, strict=True):
                assert part_after["type"] == "text"
                if part_before["type"] == "image":
                    assert part_after["text"].startswith("[image part removed by ctxmgr: ")


FORMATS = ["openai-chat", "openai-responses", "anthropic", "gemini", "langchain", "native"]


@settings(max_examples=60)
@given(agent_conversation(), policies, st.sampled_from(FORMATS))
def test_every_format_every_policy_written_and_read_back(
    messages: list[Message], policy: dict[str, Any], fmt: str
) -> None:
    """In each format: what compacting writes reads back with no new kind of problem
    ``validate --for FORMAT`` finds, within the budget, the rules and last request kept."""
    policy = _fix(policy)
    native = AgentState(context=messages).model_dump_json().encode()
    try:
        data = formats.dump(formats.load(native, source="generated", fmt="native"), to=fmt)
    except CtxmgrError:
        return  # a conversation the format cannot hold (covered by the format's own tests)
    conversation = formats.load(data, source="in", fmt=fmt)
    read = list(conversation.state.context)
    target = None if fmt == "native" else fmt
    with collect_compaction_reports() as reports:
        conversation.state.context = compact_messages(read, **policy)
    back = formats.load(formats.dump(conversation), source="out", fmt=fmt).state.context
    found = {p.code for p in check_messages(back, target=target)}
    assert found <= {p.code for p in check_messages(read, target=target)}
    assert [m.text() for m in back if m.role == "system"] == [m.text() for m in read if m.role == "system"]
    users = [m.text() for m in read if m.role == "user"]
    assert not users or users[-1] in [m.text() for m in back]
    warned = any("over the budget" in w for r in reports for w in r.warnings)
    if "max_tokens" in policy and not warned:
        assert tokens_of(conversation.state.context) <= policy["max_tokens"]


# -- in place in every format, then restored ----------------------------------------------------

in_place_policies = st.sampled_from(["max_tokens", "clearing", "truncation", "all three"]).flatmap(
    lambda name: st.fixed_dictionaries(
        {
            **({"max_tokens": st.integers(min_value=1, max_value=400)} if name in ("max_tokens", "all three") else {}),
            **({"clear_tool_results": st.just(True)} if name in ("clearing", "all three") else {}),
            **(
                {"max_tool_output": st.integers(min_value=1, max_value=80)}
                if name in ("truncation", "all three")
                else {}
            ),
        },
        optional={
            **(
                {
                    "start_on": st.just("user"),
                    "pin_index": st.lists(st.integers(min_value=0, max_value=30), max_size=2),
                    "pin_match": st.lists(st.sampled_from(["user 1 ", "assistant 2 ", "no such text"]), max_size=1),
                }
                if "max_tokens" in name or name == "all three"
                else {}
            ),
            **(
                {
                    "keep_tool_results": st.integers(min_value=0, max_value=3),
                    "exclude_tools": st.lists(st.sampled_from(["tool0", "tool1"]), max_size=1),
                    "clear_tool_inputs": st.booleans(),
                }
                if name in ("clearing", "all three")
                else {}
            ),
        },
    )
)


@pytest.mark.parametrize("fmt", FORMATS)
@explored(max_examples=25, deadline=None)
@given(messages=agent_conversation(reuse_ids=True), policy=in_place_policies, dataset=st.booleans())
def test_every_format_every_policy_in_place_then_restored(
    messages: list[Message], policy: dict[str, Any], fmt: str, dataset: bool
) -> None:
    """A file in each format (a document, or a dataset of two lines) trimmed in place as
    ``trim -i`` does: read back, no new kind of problem, within the budget unless warned,
    the rules, pins and last request kept; ``restore`` gives the file back byte for byte."""
    native = AgentState(context=messages).model_dump_json().encode()
    try:
        document = formats.dump(formats.load(native, source="generated", fmt="native"), to=fmt)
    except CtxmgrError:
        return  # a conversation the format cannot hold (covered by the format's own tests)
    line = orjson.dumps(orjson.loads(document))
    data = line + b"\n" + line + b"\n" if dataset else document
    read = formats.load(line, source="in", fmt=fmt).state.context
    target = None if fmt == "native" else fmt
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("runs.jsonl" if dataset else "chat.json")
        path.write_bytes(data)
        run = compact_paths([str(path)], trim_manager(None, **policy), options=RunOptions(in_place=True, backup=True))
        (result,) = run.results
        assert run.exit_code == 0, result.input_error
        written = path.read_bytes()
        outputs = written.splitlines() if dataset else [written]
        assert len(outputs) == (2 if dataset else 1)
        for output in outputs:
            back = formats.load(output, source="out", fmt=fmt).state.context
            assert {p.code for p in check_messages(back, target=target)} <= {
                p.code for p in check_messages(read, target=target)
            }
            texts = [m.text() for m in back]
            assert [m.text() for m in back if m.role == "system"] == [m.text() for m in read if m.role == "system"]
            users = [m.text() for m in read if m.role == "user"]
            assert not users or users[-1] in texts
            if "max_tokens" in policy:
                pinned = [read[i] for i in policy.get("pin_index", ()) if i < len(read)]
                pinned += [m for m in read for p in policy.get("pin_match", ()) if re.search(p, m.text())]
                assert all(m.text() in texts for m in pinned if m.role != "tool")
                warned = any("over the budget" in w for w in result.warnings)
                assert warned or tokens_of(back) <= policy["max_tokens"]
        if result.written:
            RESTORED.append((fmt, dataset))
            restore(path)
        assert path.read_bytes() == data


RESTORED: list[tuple[str, bool]] = []


def test_the_in_place_property_restored_every_format() -> None:
    """The property above is not vacuous: it rewrote and restored documents and datasets
    in every format."""
    # The property may have run on another worker, or for some formats only: run it here for
    # each format this process has not seen rewritten and restored.
    for fmt in sorted(set(FORMATS) - {fmt for fmt, _ in RESTORED}):
        test_every_format_every_policy_in_place_then_restored(fmt=fmt)
    assert {fmt for fmt, _ in RESTORED} == set(FORMATS)
    assert {dataset for _, dataset in RESTORED} == {True, False}
