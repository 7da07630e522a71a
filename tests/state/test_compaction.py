"""The compaction managers: token budget, tool-result clearing, tool-output truncation,
their chain and :func:`compact_messages`, on hand-made and real conversations."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ctxmgr import formats
from ctxmgr._validate import check_messages
from ctxmgr.errors import UsageError
from ctxmgr.state import (
    AgentState,
    ChainContextManager,
    Message,
    MessageContextManager,
    TokenBudgetContextManager,
    ToolOutputTruncationManager,
    ToolResultBlock,
    ToolResultClearingManager,
    collect_compaction_reports,
    compact_messages,
)
from ctxmgr.state._compaction import tokens_of
from ctxmgr.state._tokens import text_units
from ctxmgr.state._truncation import head_and_tail, truncate_output

DATA = Path(__file__).resolve().parents[1] / "data"


def tau(name: str = "tau-airline-slice.jsonl") -> list[list[Message]]:
    lines = (DATA / name).read_bytes().splitlines()
    return [formats.load(line, source=f"line {i}").state.context for i, line in enumerate(lines, 1)]


def call(index: int, name: str = "read_file", args: str = '{"path": "a.py"}') -> Message:
    message = Message.text_message("", role="assistant", message_id=f"a{index}")
    message.tools_calls = [{"id": f"call_{index}", "type": "function", "function": {"name": name, "arguments": args}}]
    return message


def result(index: int, output: Any) -> Message:
    return Message.tool_message([ToolResultBlock(call_id=f"call_{index}", output=output)], message_id=f"t{index}")


def agent_log(calls: int = 6, size: int = 400) -> list[Message]:
    """A system prompt, one request, ``calls`` tool calls with ``size``-character outputs, an answer."""
    messages = [Message.text_message("You are careful.", role="system", message_id="s")]
    messages.append(Message.text_message("Fix the bug in a.py", message_id="u"))
    for i in range(calls):
        messages += [call(i), result(i, f"line {i} " + "x" * size)]
    messages.append(Message.text_message("Done.", role="assistant", message_id="f"))
    return messages


def problems(messages: list[Message]) -> set[str]:
    """What a provider would reject, by kind (real logs reuse call ids: not new)."""
    return {problem.code for problem in check_messages(messages)}


def ids(messages: list[Message]) -> list[str | int]:
    return [m.message_id for m in messages]


# --- the token budget -------------------------------------------------------------------


def test_the_budget_keeps_the_newest_whole_pairs_with_the_rules_and_the_request() -> None:
    messages = agent_log()
    with collect_compaction_reports() as reports:
        kept = compact_messages(messages, max_tokens=300)
    assert tokens_of(kept) <= 300
    assert ids(kept)[:2] == ["s", "u"]
    assert ids(kept)[-1] == "f"
    assert kept[2].role == "assistant"  # never a tool result first
    assert check_messages(kept) == []
    (report,) = reports
    assert report.messages_dropped == len(messages) - len(kept) > 0
    assert report.tokens_removed == tokens_of(messages) - tokens_of(kept)
    assert report.chars_removed > 0
    assert report.warnings == []


def test_a_budget_everything_fits_in_changes_nothing() -> None:
    messages = agent_log()
    state = AgentState(context=list(messages))
    TokenBudgetContextManager(max_tokens=100_000).trim_context(state)
    assert all(a is b for a, b in zip(state.context, messages, strict=True))


def test_rules_and_request_over_the_budget_are_kept_alone_with_one_warning() -> None:
    messages = agent_log()
    messages[0] = Message.text_message("rule " * 400, role="system", message_id="s")
    with collect_compaction_reports() as reports:
        kept = compact_messages(messages, max_tokens=50)
    assert ids(kept) == ["s", "u"]
    (warning,) = reports[0].warnings
    assert "take 504 tokens, over the budget of 50" in warning


def test_start_on_user_begins_the_tail_on_a_user_message_when_one_fits() -> None:
    messages = [
        Message.text_message(f"{role} {i} " + "y" * 40, role=role, message_id=i)
        for i, role in enumerate(["user", "assistant", "user", "assistant", "user", "assistant"])
    ]
    plain = compact_messages(messages, max_tokens=40)
    on_user = compact_messages(messages, max_tokens=40, start_on="user")
    assert ids(plain) == [3, 4, 5]
    assert ids(on_user) == [4, 5]


def test_max_messages_and_max_tokens_both_hold() -> None:
    messages = [
        Message.text_message(f"{role} {i}", role=role, message_id=i)
        for i, role in enumerate(["system", "user", "assistant", "user", "assistant", "user", "assistant"])
    ]
    both = compact_messages(messages, max_tokens=1000, max_messages=2)
    assert ids(both) == ids(MessageContextManager(max_messages=2).trim_context(AgentState(context=messages)).context)


def test_pins_keep_their_place_with_their_partner_and_the_tail_follows() -> None:
    messages = agent_log()
    with collect_compaction_reports() as reports:
        kept = compact_messages(messages, max_tokens=300, pin_index=[3, 99], pin_match=["line 1 ", "nowhere"])
    # pin 3 is call_0's result: its call (2) comes with it; "line 1 " is call_1's result.
    assert ids(kept)[:6] == ["s", "u", "a0", "t0", "a1", "t1"]
    assert check_messages(kept) == []
    assert reports[0].warnings == [
        "pin_index 99 is past the last message (15 messages)",
        "pin_match 'nowhere' matched no message",
    ]


def test_a_pinned_result_brings_its_own_call_when_the_call_id_is_reused() -> None:
    """Real logs reuse call ids (3% of the tau-bench conversations): a pinned result pairs
    with the nearest call of its id before it, as ``validate`` pairs them, not the last one."""
    messages = agent_log(calls=4)
    reused = call(1)
    reused.message_id = "again"
    messages[-1:-1] = [reused, result(1, "second answer " + "y" * 400)]
    messages[-2].message_id = "t_again"
    kept = compact_messages(messages, max_tokens=250, pin_match=["line 1 "])
    assert ids(kept)[:4] == ["s", "u", "a1", "t1"]
    assert problems(kept) <= problems(messages)  # duplicate ids, as in the input; no orphan


@pytest.mark.parametrize(
    "options",
    [
        {"max_tokens": 0},
        {"max_tokens": -5},
        {"max_tokens": True},
        {"max_tokens": 10, "start_on": "ai"},
        {"max_tokens": 10, "pin_match": ["("]},
        {"start_on": "user"},
        {},
        {"max_tool_output": 0},
        {"clear_tool_results": True, "keep_tool_results": -1},
    ],
)
def test_bad_values_are_usage_errors(options: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        compact_messages(agent_log(), **options)


# --- clearing ---------------------------------------------------------------------------


def test_clearing_keeps_the_recent_results_and_names_what_it_removed() -> None:
    messages = agent_log(calls=5, size=100)
    manager = ToolResultClearingManager(keep_tool_results=2, exclude_tools=["grep"], clear_tool_inputs=True)
    with collect_compaction_reports() as reports:
        state = manager.trim_context(AgentState(context=list(messages)))
    outputs = [m.content[0].output for m in state.context if m.role == "tool"]  # type: ignore[union-attr]
    assert outputs[:3] == [f"[tool result cleared by ctxmgr: read_file call_{i}, 107 characters]" for i in range(3)]
    assert outputs[3:] == [f"line {i} " + "x" * 100 for i in (3, 4)]
    arguments = [m.tools_calls[0]["function"]["arguments"] for m in state.context if m.tools_calls]
    assert [json.loads(a) for a in arguments[:3]] == [{"ctxmgr_cleared": "16 characters"}] * 3
    assert arguments[3] == '{"path": "a.py"}'
    assert messages[3].content[0].output.startswith("line 0")  # type: ignore[union-attr]  # the input is untouched
    assert check_messages(state.context) == []
    assert reports[0].cleared_results == 3
    assert reports[0].tokens_removed == tokens_of(messages) - tokens_of(state.context) > 0
    # Cleared again: nothing more to clear.
    with collect_compaction_reports() as again:
        manager.trim_context(state)
    assert again[0].cleared_results == 0


def test_excluded_tools_are_never_cleared() -> None:
    messages = [*agent_log(calls=2), call(9, name="grep"), result(9, "z" * 300), *agent_log(calls=3)[2:]]
    kept = compact_messages(messages, clear_tool_results=True, keep_tool_results=0, exclude_tools=["grep"])
    assert [m.content[0].output for m in kept if m.message_id == "t9"] == ["z" * 300]  # type: ignore[union-attr]


def test_clearing_with_a_budget_clears_oldest_first_only_until_it_fits() -> None:
    messages = agent_log(calls=6, size=400)
    total = tokens_of(messages)
    with collect_compaction_reports() as reports:
        kept = compact_messages(messages, clear_tool_results=True, keep_tool_results=1, max_tokens=total - 150)
    cleared = [m.message_id for m in kept if m.role == "tool" and "cleared by ctxmgr" in m.text()]
    assert cleared == ["t0", "t1"]
    assert reports[0].cleared_results == 2
    assert reports[1].messages_dropped == 0  # the budget then holds without dropping


def test_reused_call_ids_pair_each_result_with_the_call_before_it() -> None:
    messages = [call(1, name="search"), result(1, "a" * 150), call(1, name="book"), result(1, "b" * 150)]
    kept = compact_messages(messages, clear_tool_results=True, keep_tool_results=1)
    assert kept[1].text() == "[tool result cleared by ctxmgr: search call_1, 150 characters]"
    assert kept[3].text() == "b" * 150


def test_a_result_shorter_than_its_placeholder_is_not_cleared() -> None:
    messages = [call(1), result(1, "[]"), call(2), result(2, "ok" * 100), call(3), result(3, "z")]
    with collect_compaction_reports() as reports:
        kept = compact_messages(messages, clear_tool_results=True, keep_tool_results=0)
    assert [m.text() for m in kept if m.role == "tool"] == [
        "[]",
        "[tool result cleared by ctxmgr: read_file call_2, 200 characters]",
        "z",
    ]
    assert reports[0].cleared_results == 1


# --- truncation -------------------------------------------------------------------------


def test_head_and_tail_fit_the_budget_and_name_the_cut() -> None:
    text = "".join(f"{i:05d}\n" for i in range(5000))
    cut = head_and_tail(text, 400)
    assert text_units(cut) <= 400
    assert cut.startswith("00000\n")
    assert cut.endswith("04999\n")
    removed = int(cut.split("[... ")[1].split(" characters")[0].replace(",", ""))
    assert len(cut) - len(f"\n[... {removed:,} characters cut by ctxmgr ...]\n") + removed == len(text)


def test_json_output_stays_parseable_cut_inside_strings_and_arrays() -> None:
    value = {"id": 7, "rows": [{"n": i, "text": "w" * 300} for i in range(200)], "status": "ok"}
    cut = truncate_output(json.dumps(value), 300)
    parsed = json.loads(cut)
    assert text_units(cut) <= 1200
    assert parsed["id"] == 7
    assert parsed["status"] == "ok"
    assert parsed["rows"][0]["n"] == 0
    assert parsed["rows"][-1]["n"] == 199
    assert any("items cut by ctxmgr" in str(row) for row in parsed["rows"])


def test_an_object_with_many_keys_is_cut_inside_only_when_strings_and_arrays_cannot_do() -> None:
    value = {"reservation_id": "MDCLVA", **{f"field_{i}": f"value {i}" for i in range(60)}, "insurance": "no"}
    cut = truncate_output(json.dumps(value), 60)
    parsed = json.loads(cut)
    assert text_units(cut) <= 240
    keys = list(parsed)
    assert (keys[0], keys[-1]) == ("reservation_id", "insurance")
    (marker,) = [key for key in parsed if "keys cut by ctxmgr" in key]
    assert parsed[marker] is None
    assert len(parsed) - 1 + int(marker.split()[1]) == len(value)
    # Where cutting strings and arrays is enough, every key stays.
    rows = {"a": 1, "b": 2, "rows": list(range(400))}
    assert list(json.loads(truncate_output(json.dumps(rows), 60))) == ["a", "b", "rows"]


def _json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_real_json_tool_outputs_stay_json() -> None:
    """The tau-bench tool outputs are JSON objects (a user, a reservation) and arrays of
    them (flights): at 200 tokens every one cut stays parseable and within the budget (at
    100, the arrays of arrays of flights are cut as text: two flights of two keys each
    are already over)."""
    cut = 0
    for messages in tau():
        for before, after in zip(messages, compact_messages(messages, max_tool_output=200), strict=True):
            if before.role == "tool" and after is not before and _json(before.content[0].output):  # type: ignore[union-attr]
                text = after.content[0].output  # type: ignore[union-attr]
                json.loads(text)
                assert text_units(text) <= 800
                cut += 1
    assert cut > 20


def test_content_parts_stay_valid_and_images_are_never_cut_in_half() -> None:
    parts = [{"type": "text", "text": "t" * 4000}, {"type": "image", "source": {"data": "A" * 9000}}]
    cut = truncate_output(parts, 200)
    assert [p["type"] for p in cut] == ["text", "text"]
    assert cut[1]["text"].startswith("[image part removed by ctxmgr: ")
    assert "cut by ctxmgr" in cut[0]["text"]


def test_the_truncation_manager_counts_what_it_cut() -> None:
    messages = agent_log(calls=3, size=2000)
    with collect_compaction_reports() as reports:
        kept = ToolOutputTruncationManager(100).trim_context(AgentState(context=list(messages))).context
    assert all(text_units(m.text()) // 4 <= 100 for m in kept if m.role == "tool")
    assert reports[0].truncated_outputs == 3
    assert reports[0].chars_removed > 4500
    assert check_messages(kept) == []


# --- the chain, and real conversations --------------------------------------------------


def test_the_chain_runs_in_order_and_awaits() -> None:
    chain = ChainContextManager(
        ToolResultClearingManager(1), ToolOutputTruncationManager(50), TokenBudgetContextManager(200)
    )
    with collect_compaction_reports() as reports:
        state = asyncio.run(chain.atrim_context(AgentState(context=agent_log(size=1000))))
    assert [r.manager for r in reports] == [
        "ToolResultClearingManager",
        "ToolOutputTruncationManager",
        "TokenBudgetContextManager",
    ]
    assert tokens_of(state.context) <= 200
    assert check_messages(state.context) == []


@pytest.mark.parametrize(
    "options",
    [
        {"max_tokens": 2000},
        {"max_tokens": 1500, "start_on": "user"},
        {"clear_tool_results": True, "keep_tool_results": 2, "clear_tool_inputs": True},
        {"max_tool_output": 200},
        {"clear_tool_results": True, "max_tool_output": 100, "max_tokens": 2500},
    ],
)
def test_real_conversations_stay_valid_and_within_budget(options: dict[str, Any]) -> None:
    for messages in tau():
        with collect_compaction_reports() as reports:
            kept = compact_messages(messages, **options)
        assert problems(kept) <= problems(messages), options
        assert [m for m in kept if m.role == "system"] == [m for m in messages if m.role == "system"]
        assert [m for m in messages if m.role == "user"][-1].message_id in ids(kept)
        if "max_tokens" in options and not any(r.warnings for r in reports):
            assert tokens_of(kept) <= options["max_tokens"]
        if "max_tool_output" in options:
            assert all(text_units(m.text()) // 4 <= options["max_tool_output"] for m in kept if m.role == "tool")


@pytest.mark.parametrize("target", ["openai-chat", "openai-responses", "anthropic", "gemini", "langchain", "native"])
def test_edited_messages_are_written_in_every_format(target: str) -> None:
    line = (DATA / "tau-airline-sample.jsonl").read_bytes().splitlines()[1]
    conversation = formats.load(formats.dump(formats.load(line, source="x"), to=target), source="y", fmt=target)
    conversation_before = list(conversation.state.context)
    conversation.state.context = compact_messages(
        conversation.state.context, clear_tool_results=True, keep_tool_results=1, max_tool_output=50
    )
    back = formats.load(formats.dump(conversation), source="z", fmt=target).state.context
    assert check_messages(back) == []
    texts = [m.text() for m in back if m.role == "tool"]
    cleared = sum("[tool result cleared by ctxmgr: " in t for t in texts)
    assert cleared == sum(len(m.text()) > 100 for m in conversation_before if m.role == "tool") - 1
