"""OpenHands event streams: detection, events read as OpenHands' conversation memory sends
them, written back as events (``cause`` links kept whole), the summary in a
``condensation`` action, and every manager on random runs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import explored
from _format_support import FixedSummarizer, read, structural_problems, view, write
from _trajectory_support import OPENHANDS_FILES, managers, openhands_events, runs
from hypothesis import HealthCheck, given, strategies as st

from ctxmgr import formats
from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import CERTAIN, NO
from ctxmgr.state import (
    BaseContextManager,
    MessageContextManager,
    SummaryContextManager,
    ToolOutputTruncationManager,
    ToolResultClearingManager,
)
from ctxmgr.state._compose import trim_manager

NAME = "openhands"


def _load(path: Path) -> Any:
    return orjson.loads(path.read_bytes())


def _pony() -> Any:
    return _load(OPENHANDS_FILES[1])


def test_the_real_files_are_there() -> None:
    assert [p.name for p in OPENHANDS_FILES] == ["basic.json", "ponyc-multi-swe-bench.json"]


@pytest.mark.parametrize("path", OPENHANDS_FILES, ids=lambda p: p.name)
def test_a_real_stream_is_detected_and_written_back_unchanged(path: Path) -> None:
    value = _load(path)
    assert formats.detect_name(value, source=path.name) == NAME
    conversation = read(NAME, value)
    assert write(conversation) == value
    assert structural_problems(conversation.state.context) == []


def test_events_are_read_as_openhands_sends_them() -> None:
    conversation = read(NAME, _pony())
    context = conversation.state.context
    events = _pony()
    assert [m.role for m in context] == ["system", "user", *["assistant", "tool"] * 6, "assistant"]
    assert context[0].text() == events[0]["args"]["content"]
    assert context[1].text() == events[1]["args"]["content"]
    # The recall action and its observation are no messages: they travel with the task.
    assert [e["id"] for m in context[:2] for e in m.source or ()] == [0, 1]
    call = (context[2].tools_calls or [])[0]
    assert call["id"] == "toolu_01"
    assert call["function"] == {
        "name": "execute_bash",
        "arguments": '{"command": "ls -l /workspace/ponylang__ponyc__0.1"}',
    }
    assert context[2].text().startswith("The task involves fixing an issue")
    assert context[3].content[0].call_id == "toolu_01"  # type: ignore[union-attr]
    assert context[3].content[0].output == events[5]["content"]  # type: ignore[union-attr]
    assert context[-1].text() == events[-1]["message"]  # finish: the last assistant turn


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([{"id": 0, "source": "user", "action": "message", "args": {"content": "x"}}], CERTAIN),
        ({"instance_id": "x", "history": [{"id": 0, "source": "agent", "observation": "null"}]}, CERTAIN),
        ([{"id": 0, "source": "user", "action": "message"}, {"role": "user", "content": "x"}], NO),
        ([], NO),
        ([{"role": "user", "content": "x"}], NO),
        ({"history": [{"role": "system", "content": "x", "message_type": "system_prompt"}]}, NO),
    ],
)
def test_detection(value: Any, expected: int) -> None:
    assert formats.FORMATS[NAME].detect(value) == expected


def test_an_evaluation_record_keeps_its_other_keys() -> None:
    record = {"instance_id": "ponylang__ponyc-4595", "history": _pony(), "metrics": {"cost": 1.5}}
    conversation = read(NAME, record)
    trim_manager(None, max_tokens=3500).trim_context(conversation.state)
    out = write(conversation)
    assert list(out) == ["instance_id", "history", "metrics"]
    assert out["metrics"] == {"cost": 1.5}
    assert len(out["history"]) < len(record["history"])


def test_trim_drops_the_events_of_dropped_messages() -> None:
    events = _pony()
    conversation = read(NAME, events)
    trim_manager(None, max_tokens=3500).trim_context(conversation.state)
    assert [m.role for m in conversation.state.context] == ["system", "user", *["assistant", "tool"] * 2, "assistant"]
    out = write(conversation)
    ids = [e["id"] for e in out]
    assert ids == [0, 1, 2, 4, 27, 28, 47, 48, 49]  # the task with its recall pair, the last two calls
    assert all(e == events[[x["id"] for x in events].index(e["id"])] for e in out)
    assert all(e.get("cause") is None or e["cause"] in ids for e in out)


def test_a_cleared_result_replaces_only_the_observations_content() -> None:
    events = _pony()
    conversation = read(NAME, events)
    ToolResultClearingManager(keep_tool_results=1, clear_tool_inputs=True).trim_context(conversation.state)
    out = write(conversation)
    assert [e["id"] for e in out] == [e["id"] for e in events]
    changed = [(a, b) for a, b in zip(events, out, strict=True) if a != b]
    observations = [b for a, b in changed if "observation" in a]
    actions = [(a, b) for a, b in changed if "action" in a]
    assert len(observations) == 5
    assert all(b["content"].startswith("[tool result cleared by ctxmgr: ") for b in observations)
    for before, after in actions:
        assert after["args"] == before["args"]  # OpenHands builds the action from them
        call = after["tool_call_metadata"]["model_response"]["choices"][0]["message"]["tool_calls"][0]
        assert call["function"]["arguments"].startswith('{"ctxmgr_cleared"')
    assert read(NAME, out).state.context[3].content[0].output.startswith("[tool result cleared")  # type: ignore[union-attr]


def test_a_shortened_output_is_written_in_the_observation() -> None:
    conversation = read(NAME, _load(OPENHANDS_FILES[0]))
    ToolOutputTruncationManager(max_tool_output=200).trim_context(conversation.state)
    out = write(conversation)
    assert len(out[2]["content"]) < len(_load(OPENHANDS_FILES[0])[2]["content"])
    assert out[2]["extras"] == _load(OPENHANDS_FILES[0])[2]["extras"]


def test_the_summary_is_a_condensation_action_and_a_second_run_appends() -> None:
    events = _pony()
    conversation = read(NAME, events)
    manager: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=6, keep_recent=2, summarizer=FixedSummarizer("S1")
    )
    manager.trim_context(conversation.state)
    out = write(conversation)
    condensation = out[-1]
    assert condensation["action"] == "condensation"
    assert condensation["id"] == max(e["id"] for e in events) + 1
    assert condensation["args"] == {
        "forgotten_event_ids": [],
        "forgotten_events_start_id": None,
        "forgotten_events_end_id": None,
        "summary": "S1",
        "summary_offset": 1,  # after the system prompt
    }
    assert out[0] == events[0]
    again = read(NAME, out)
    assert again.state.context_summary == "S1"
    assert write(again) == out
    second: SummaryContextManager[Any] = SummaryContextManager(
        "fixed", max_messages=2, keep_recent=1, summarizer=FixedSummarizer("S2")
    )
    second.trim_context(again.state)
    rewritten = write(again)
    assert [e.get("action") for e in rewritten].count("condensation") == 1
    assert "S2" in rewritten[-1]["args"]["summary"]


def test_events_a_condensation_forgot_are_no_messages_and_stay_forgotten() -> None:
    events = copy.deepcopy(_pony())
    forgotten = [5, 6, 7, 8]
    events.append(
        {
            "id": 50,
            "timestamp": "2025-04-30T16:35:00",
            "source": "agent",
            "message": "Summary: S0",
            "action": "condensation",
            "args": {"forgotten_event_ids": forgotten, "summary": "S0", "summary_offset": 2},
        }
    )
    conversation = read(NAME, events)
    assert conversation.state.context_summary == "S0"
    assert all(e["id"] not in forgotten for m in conversation.state.context for e in m.source or ())
    assert write(conversation) == events  # nothing changed: written back as it was
    trim_manager(None, max_tokens=3500).trim_context(conversation.state)
    out = write(conversation)
    assert out[-1]["action"] == "condensation"
    assert out[-1]["args"]["summary"] == "S0"
    written_ids = {e["id"] for e in out}
    assert set(out[-1]["args"]["forgotten_event_ids"]) == set(forgotten) & written_ids


def test_summary_as_system_is_refused() -> None:
    conversation = read(NAME, _pony())
    conversation.state.context_summary = "S"
    conversation.summary_as = "system"
    with pytest.raises(UsageError, match="--summary-as system"):
        write(conversation)


def test_a_conversation_of_another_format_is_not_written_as_events() -> None:
    conversation = read("openai-chat", [{"role": "user", "content": "hi"}])
    with pytest.raises(UsageError, match="openhands"):
        write(conversation, NAME)


@explored(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(parallel=True), manager=managers())
def test_every_manager_keeps_pairs_and_causes_and_reads_back_to_the_same_conversation(
    run: tuple[str, str, list[Any]], manager: BaseContextManager[Any]
) -> None:
    events = openhands_events(*run)
    conversation = read(NAME, events)
    manager.trim_context(conversation.state)
    data = formats.dump(conversation)
    again = formats.load(data, source="out.json")
    assert again.format == NAME
    assert view(again.state.context) == view(conversation.state.context)
    assert again.state.context_summary == conversation.state.context_summary
    assert structural_problems(again.state.context) == []
    out = orjson.loads(data)
    ids = [e["id"] for e in out]
    assert ids == sorted(set(ids))  # the input's order, no event twice
    assert all(e.get("cause") is None or e["cause"] in ids for e in out)
    by_id = {e["id"]: e for e in events}
    for event in out:
        if event.get("action") == "condensation":
            assert event is out[-1]
            assert event["args"]["summary"] == conversation.state.context_summary
            continue
        original = by_id[event["id"]]
        assert set(event) == set(original)
        assert {k for k in event if event[k] != original[k]} <= {"content", "tool_call_metadata"}


def test_an_event_caused_by_a_dropped_event_is_dropped_with_it() -> None:
    events = [
        {"id": 0, "source": "user", "message": "first", "action": "message", "args": {"content": "first"}},
        {"id": 1, "source": "agent", "message": "one", "action": "message", "args": {"content": "one"}},
        {"id": 2, "source": "user", "message": "second", "action": "message", "args": {"content": "second"}},
        # Travels with "second", but was caused by "first" (an answer to an early request).
        {"id": 3, "source": "environment", "observation": "agent_state_changed", "content": "", "cause": 0},
        {"id": 4, "source": "agent", "message": "two", "action": "message", "args": {"content": "two"}},
    ]
    conversation = read(NAME, events)
    assert [m.text() for m in conversation.state.context] == ["first", "one", "second", "two"]
    MessageContextManager(max_messages=1).trim_context(conversation.state)
    assert [e["id"] for e in write(conversation)] == [2, 4]
    assert conversation.warnings == [
        "openhands: 1 event(s) dropped with the event their cause names (every cause written points to an event in "
        "the file)"
    ]


def test_a_record_that_is_no_event_is_an_error_naming_it() -> None:
    value = [*_pony()[:2], {"role": "user", "content": "hi"}]
    with pytest.raises(InputError, match=r"\[2\]: not an OpenHands event"):
        read(NAME, value)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(0, 5)
    | st.text(max_size=5)
    | st.sampled_from(["user", "agent", "message", "run", "system", "finish", "condensation", "error", "call_1"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    *("id", "source", "action", "observation", "args", "content", "cause", "tool_call_metadata"),
                    *("history", "tool_call_id", "function_name", "model_response", "choices", "message", "summary"),
                    "tool_calls",
                ]
            )
            | st.text(max_size=3),
            children,
            max_size=6,
        )
    ),
    max_leaves=30,
)


_IDS = st.sampled_from(["call_1", "call_2", "call_3"])
_RESPONSE = st.fixed_dictionaries(
    {
        "id": st.sampled_from(["r1", "r2"]),
        "choices": st.lists(
            st.fixed_dictionaries(
                {
                    "message": st.fixed_dictionaries(
                        {"content": st.none() | st.text(max_size=4)},
                        optional={
                            "tool_calls": st.lists(
                                st.fixed_dictionaries(
                                    {
                                        "id": _IDS,
                                        "function": st.fixed_dictionaries(
                                            {"name": st.just("run"), "arguments": st.sampled_from(["{}", "x"])}
                                        ),
                                    }
                                ),
                                max_size=2,
                            )
                        },
                    )
                }
            ),
            max_size=1,
        ),
    }
)
_EVENT = st.fixed_dictionaries(
    {"id": st.integers(0, 6), "source": st.sampled_from(["user", "agent", "environment"])},
    optional={
        "action": st.sampled_from(["system", "message", "finish", "run", "recall", "condensation"]),
        "observation": st.sampled_from(["run", "error", "condense", "null"]),
        "args": st.fixed_dictionaries(
            {},
            optional={
                "content": st.text(max_size=4),
                "thought": st.text(max_size=4),
                "summary": st.text(max_size=4),
                "summary_offset": st.integers(0, 3),
                "forgotten_event_ids": st.lists(st.integers(0, 6), max_size=3),
            },
        ),
        "content": st.text(max_size=4),
        "message": st.text(max_size=4),
        "cause": st.integers(0, 6),
        "tool_call_metadata": st.fixed_dictionaries(
            {"tool_call_id": _IDS, "function_name": st.just("run")}, optional={"model_response": _RESPONSE}
        ),
        "extra": _JSON,
    },
)


@explored(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_EVENT, min_size=1, max_size=8) | _JSON)
def test_detect_never_raises_and_what_reads_writes_back_unchanged(value: Any) -> None:
    assert formats.FORMATS[NAME].detect(value) in (NO, CERTAIN)
    try:
        conversation = read(NAME, value)
    except InputError:
        return
    assert write(conversation) == value


def test_a_command_the_user_ran_and_its_output_are_user_turns() -> None:
    events = [
        {"id": 0, "source": "user", "message": "hi", "action": "message", "args": {"content": "hi"}},
        {"id": 1, "source": "user", "message": "Running", "action": "run", "args": {"command": "ls -a"}},
        {"id": 2, "source": "environment", "cause": 1, "observation": "run", "content": "a.txt", "extras": {}},
        {"id": 3, "source": "agent", "message": "ok", "action": "message", "args": {"content": "ok"}},
    ]
    conversation = read(NAME, events)
    context = conversation.state.context
    assert [(m.role, m.text()) for m in context] == [
        ("user", "hi"),
        ("user", "User executed the command:\nls -a"),
        ("user", "a.txt"),
        ("assistant", "ok"),
    ]
    assert write(conversation) == events
