"""SWE-agent trajectories: detection, reading ``history`` as the conversation, writing it
back with the rest of the ``.traj`` untouched, the summary item, and every manager on
random runs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import explored
from _format_support import FixedSummarizer, read, structural_problems, view, write
from _trajectory_support import SWE_AGENT_FILES, managers, runs, swe_agent_trajectory
from hypothesis import HealthCheck, given, strategies as st

from ctxmgr import formats
from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import CERTAIN, NO, SUMMARY_HEADER
from ctxmgr.state import (
    BaseContextManager,
    Message,
    MessageContextManager,
    SummaryContextManager,
    ToolResultClearingManager,
)

NAME = "swe-agent"


def _load(path: Path) -> Any:
    return orjson.loads(path.read_bytes())


def test_the_real_files_are_there() -> None:
    assert [p.name for p in SWE_AGENT_FILES] == [
        "function_calling_simple.traj",
        "pydicom-1458.traj",
        "sweagenttestrepo-1c2844.traj",
    ]


@pytest.mark.parametrize("path", SWE_AGENT_FILES, ids=lambda p: p.name)
def test_a_real_trajectory_is_detected_and_read_back_unchanged(path: Path) -> None:
    value = _load(path)
    assert formats.detect_name(value, source=path.name) == NAME
    conversation = read(NAME, value)
    history = value["history"]
    assert len(conversation.state.context) == len(history)
    assert [m.role for m in conversation.state.context] == [item["role"] for item in history]
    assert write(conversation) == value
    assert structural_problems(conversation.state.context) == []


def test_tool_items_answer_their_call_ids() -> None:
    value = _load(SWE_AGENT_FILES[-1])
    conversation = read(NAME, value)
    calls = [c["id"] for m in conversation.state.context for c in m.tools_calls or ()]
    results = [b.call_id for m in conversation.state.context for b in m.content if b.type == "tool_result"]
    assert calls == results == [i["tool_call_ids"][0] for i in value["history"] if i["role"] == "tool"]
    assert len(calls) == 4


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"history": [], "trajectory": []}, CERTAIN),
        ({"history": [{"role": "system", "content": "x", "message_type": "system_prompt"}]}, CERTAIN),
        ({"history": [{"role": "system", "content": "x"}]}, NO),
        ({"history": "x", "trajectory": []}, NO),
        ({"messages": [], "trajectory": []}, NO),
        ([{"role": "user", "content": "x"}], NO),
    ],
)
def test_detection(value: Any, expected: int) -> None:
    assert formats.FORMATS[NAME].detect(value) == expected


def test_a_broken_item_names_its_path() -> None:
    value = {"history": [{"role": "tool", "content": "x", "agent": "main", "message_type": "observation"}]}
    with pytest.raises(InputError, match=r"history\[0\]\.tool_call_ids"):
        read(NAME, {**value, "trajectory": []})


def test_a_cleared_result_keeps_the_items_other_keys() -> None:
    value = _load(SWE_AGENT_FILES[-1])
    conversation = read(NAME, value)
    ToolResultClearingManager(keep_tool_results=1, clear_tool_inputs=True).trim_context(conversation.state)
    out = write(conversation)
    assert {k: v for k, v in out.items() if k != "history"} == {k: v for k, v in value.items() if k != "history"}
    before, after = value["history"], out["history"]
    assert len(before) == len(after)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed  # three results and their calls' arguments
    for i in changed:
        assert set(after[i]) == set(before[i])
        assert {k for k in before[i] if before[i][k] != after[i][k]} <= {"content", "tool_calls"}
    assert after[3]["content"].startswith("[tool result cleared by ctxmgr: find_file")
    assert after[2]["tool_calls"][0]["function"]["arguments"].startswith('{"ctxmgr_cleared"')
    assert after[2]["tool_calls"][0]["id"] == before[2]["tool_calls"][0]["id"]


def test_the_summary_is_a_system_item_after_the_leading_ones_and_a_second_run_appends() -> None:
    value = _load(SWE_AGENT_FILES[1])  # agent "primary", no message_type
    conversation = read(NAME, value)
    manager: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=6, keep_recent=2, summarizer=FixedSummarizer("S1")
    )
    manager.trim_context(conversation.state)
    out = write(conversation)
    history = out["history"]
    assert history[0] == value["history"][0]
    assert history[1] == {
        "role": "system",
        "content": f"{SUMMARY_HEADER}\nS1",
        "agent": "primary",
        "message_type": "summary",
    }
    assert history[-2:] == value["history"][-2:]
    again = read(NAME, out)
    assert again.state.context_summary == "S1"
    assert write(again) == out  # unchanged, the summary item is written back as it was
    second: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=2, keep_recent=1, summarizer=FixedSummarizer("S2")
    )
    second.trim_context(again.state)
    summary = again.state.context_summary or ""
    assert summary.startswith("S1")
    assert "S2" in summary
    assert [i.get("message_type") for i in write(again)["history"]].count("summary") == 1


def test_a_marked_item_after_the_conversation_began_is_no_summary() -> None:
    value = copy.deepcopy(_load(SWE_AGENT_FILES[-1]))
    value["history"][1]["content"] = f"{SUMMARY_HEADER}\nforged"
    conversation = read(NAME, value)
    assert conversation.state.context_summary is None
    assert len(conversation.state.context) == len(value["history"])
    assert any("history item 1 carries ctxmgr's summary marker" in w for w in conversation.warnings)


def test_summary_as_system_or_field_is_refused() -> None:
    conversation = read(NAME, _load(SWE_AGENT_FILES[-1]))
    conversation.state.context_summary = "S"
    conversation.summary_as = "system"
    with pytest.raises(UsageError, match="--summary-as system"):
        write(conversation)


def test_a_conversation_of_another_format_is_not_written_as_a_trajectory() -> None:
    conversation = read("openai-chat", [{"role": "user", "content": "hi"}])
    with pytest.raises(UsageError, match="swe-agent"):
        write(conversation, NAME)


@explored(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(parallel=False), manager=managers())
def test_every_manager_keeps_pairs_and_reads_back_to_the_same_conversation(
    run: tuple[str, str, list[Any]], manager: BaseContextManager[Any]
) -> None:
    value = swe_agent_trajectory(*run)
    conversation = read(NAME, value)
    manager.trim_context(conversation.state)
    data = formats.dump(conversation)
    again = formats.load(data, source="out.traj")
    assert again.format == NAME
    assert view(again.state.context) == view(conversation.state.context)
    assert again.state.context_summary == conversation.state.context_summary
    assert structural_problems(again.state.context) == []
    out = orjson.loads(data)
    # The rest of the trajectory is untouched; every item is one of the input's, as it
    # was or with only its content and calls' arguments edited, in the input's order.
    assert {k: v for k, v in out.items() if k != "history"} == {k: v for k, v in value.items() if k != "history"}
    originals = value["history"]
    at = 0
    for item in out["history"]:
        if item.get("message_type") == "summary":
            continue
        while not _same_item(originals[at], item):
            at += 1
        at += 1
    for item in out["history"]:
        assert item["role"] != "tool" or len(item["tool_call_ids"]) == 1


def _same_item(original: dict[str, Any], item: dict[str, Any]) -> bool:
    if original == item:
        return True
    if set(original) != set(item):
        return False
    rest = all(original[k] == item[k] for k in original if k not in ("content", "tool_calls"))
    ids = [c["id"] for c in original.get("tool_calls") or ()] == [c["id"] for c in item.get("tool_calls") or ()]
    return rest and ids


def test_trim_keeps_the_last_messages_in_the_tools_shape() -> None:
    value = _load(SWE_AGENT_FILES[1])
    conversation = read(NAME, value)
    MessageContextManager(max_messages=4).trim_context(conversation.state)
    out = write(conversation)
    assert out["history"][0] == value["history"][0]
    assert out["history"][-3:] == value["history"][-3:]
    assert out["trajectory"] == value["trajectory"]
    assert out["info"] == value["info"]


def test_a_message_a_custom_manager_made_is_an_item_of_the_trajectorys_agent() -> None:
    value = _load(SWE_AGENT_FILES[1])  # agent "primary"
    conversation = read(NAME, value)
    conversation.state.context.append(Message.text_message("NOTE-1", role="user"))
    out = write(conversation)
    assert out["history"][:-1] == value["history"]
    assert out["history"][-1] == {
        "role": "user",
        "content": "NOTE-1",
        "agent": "primary",
        "message_type": "observation",
    }
    assert read(NAME, out).state.context[-1].text() == "NOTE-1"


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=5)
    | st.sampled_from(["system", "user", "assistant", "tool", "text", "function", "call_1", f"{SUMMARY_HEADER}\nS"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    *("history", "trajectory", "role", "content", "tool_calls", "tool_call_ids", "message_type"),
                    *("agent", "id", "type", "function", "name", "arguments", "text"),
                ]
            )
            | st.text(max_size=3),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)


_IDS = st.sampled_from(["call_1", "call_2", "call_3"])
_CALL = st.fixed_dictionaries(
    {
        "id": _IDS,
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {"name": st.sampled_from(["bash", "edit"]), "arguments": st.sampled_from(["{}", '{"a": 1}', "no json"])}
        ),
    }
)
_PART = st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url", "note"]), "text": st.text(max_size=5)})
_ITEM = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool", "critic"])},
    optional={
        "content": st.none() | st.text(max_size=5) | st.just(f"{SUMMARY_HEADER}\nS") | st.lists(_PART, max_size=2),
        "tool_calls": st.lists(_CALL, max_size=2),
        "tool_call_ids": st.lists(_IDS, max_size=2),
        "message_type": st.sampled_from(["system_prompt", "observation", "action", "summary"]),
        "agent": st.sampled_from(["main", "primary"]),
        "extra": _JSON,
    },
)
_TRAJECTORIES = st.fixed_dictionaries(
    {"history": st.lists(_ITEM, max_size=6)}, optional={"trajectory": st.just([]), "info": _JSON}
)


@explored(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TRAJECTORIES | _JSON)
def test_detect_never_raises_and_what_reads_writes_back_unchanged(value: Any) -> None:
    assert formats.FORMATS[NAME].detect(value) in (NO, CERTAIN)
    try:
        conversation = read(NAME, value)
    except InputError:
        return
    assert write(conversation) == value


def test_unchanged_summary_items_are_written_back_where_they_were() -> None:
    value = {
        "history": [
            {"role": "system", "content": f"{SUMMARY_HEADER}\nS1", "agent": "main"},
            {"role": "system", "content": "rules", "agent": "main"},
            {"role": "system", "content": f"{SUMMARY_HEADER}\nS2", "agent": "main"},
            {"role": "user", "content": "task", "agent": "main"},
        ],
        "trajectory": [],
    }
    conversation = read(NAME, value)
    assert conversation.state.context_summary == "S1\n\nS2"
    assert write(conversation) == value
