"""Shared by the SWE-agent and OpenHands format tests: random agent runs (a system prompt,
a task, then turns of tool calls and their results, texts, follow-up requests) built in
each tool's own shape, and every manager the command line builds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _fast_paths import budget_managers
from _format_support import TEXT, FixedSummarizer
from hypothesis import strategies as st

from ctxmgr.state import (
    BaseContextManager,
    MessageContextManager,
    SummaryContextManager,
    ToolOutputTruncationManager,
    ToolResultClearingManager,
)

AGENTS = Path(__file__).resolve().parent / "conversations" / "agents"
SWE_AGENT_FILES = sorted((AGENTS / "swe-agent").glob("*.traj"))
OPENHANDS_FILES = sorted((AGENTS / "openhands").glob("*.json"))

_TOOLS = st.sampled_from(["bash", "str_replace_editor", "find_file", "execute_bash"])
_ARGS = st.dictionaries(st.sampled_from(["command", "path", "text"]), TEXT, min_size=1, max_size=2)


@dataclass
class Call:
    """One tool call and its output."""

    call_id: str
    name: str
    args: dict[str, Any]
    output: str


@dataclass
class Turn:
    """What happens after the task: an assistant turn with calls (and their outputs), an
    assistant text, or a new user request."""

    kind: str  # "calls", "say", "ask"
    text: str
    calls: list[Call]


@st.composite
def runs(draw: st.DrawFn, *, parallel: bool) -> tuple[str, str, list[Turn]]:
    """A system prompt, a task and 1 to 8 turns; ``parallel``: up to two calls a turn."""
    turns: list[Turn] = []
    count = 0
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["calls", "calls", "say", "ask"]))
        calls: list[Call] = []
        if kind == "calls":
            for _ in range(draw(st.integers(1, 2 if parallel else 1))):
                count += 1
                # Long enough, often, for a clearing placeholder or a cut to be shorter.
                output = draw(st.sampled_from(["ok\n", "total 360\n-rw-r--r-- ast.c\n"])) * draw(st.integers(0, 40))
                calls.append(Call(f"call_{count}", draw(_TOOLS), draw(_ARGS), output))
        turns.append(Turn(kind, draw(TEXT), calls))
    return draw(TEXT), draw(TEXT), turns


def swe_agent_trajectory(system: str, task: str, turns: list[Turn]) -> dict[str, Any]:
    """The run as SWE-agent writes a ``.traj``."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": system, "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": task, "agent": "main", "message_type": "observation"},
    ]
    steps: list[dict[str, Any]] = []
    for turn in turns:
        if turn.kind == "ask":
            history.append({"role": "user", "content": turn.text, "agent": "main", "message_type": "observation"})
        elif turn.kind == "say":
            history.append({"role": "assistant", "content": turn.text, "agent": "main", "message_type": "assistant"})
        for call in turn.calls:
            history.append(
                {
                    "role": "assistant",
                    "content": turn.text,
                    "thought": turn.text,
                    "action": f"{call.name} {json.dumps(call.args)}",
                    "agent": "main",
                    "tool_calls": [
                        {
                            "function": {"arguments": json.dumps(call.args), "name": call.name},
                            "id": call.call_id,
                            "type": "function",
                        }
                    ],
                    "message_type": "action",
                }
            )
            history.append(
                {
                    "role": "tool",
                    "content": call.output,
                    "agent": "main",
                    "message_type": "observation",
                    "tool_call_ids": [call.call_id],
                }
            )
            steps.append({"action": call.name, "observation": call.output, "response": turn.text, "thought": turn.text})
    return {
        "environment": "swe_main",
        "trajectory": steps,
        "history": history,
        "info": {"exit_status": "submitted", "model_stats": {"api_calls": len(steps)}},
        "replay_config": "{}",
    }


def openhands_events(system: str, task: str, turns: list[Turn]) -> list[dict[str, Any]]:
    """The run as OpenHands exports its event stream (a recall and state changes too)."""
    events: list[dict[str, Any]] = []

    def add(event: dict[str, Any]) -> int:
        event = {"id": len(events), "timestamp": f"2025-04-30T16:32:{len(events):02d}", **event}
        events.append(event)
        return int(event["id"])

    add({"source": "agent", "message": system, "action": "system", "args": {"content": system, "tools": []}})
    task_id = add({"source": "user", "message": task, "action": "message", "args": {"content": task}})
    recall = add({"source": "user", "message": "Retrieving", "action": "recall", "args": {"query": task}})
    add({"source": "environment", "message": "Added", "cause": recall, "observation": "recall", "content": "Added"})
    add({"source": "environment", "message": "", "observation": "agent_state_changed", "content": "", "cause": task_id})
    for number, turn in enumerate(turns):
        if turn.kind == "ask":
            add({"source": "user", "message": turn.text, "action": "message", "args": {"content": turn.text}})
        elif turn.kind == "say":
            add({"source": "agent", "message": turn.text, "action": "message", "args": {"content": turn.text}})
        response = {
            "id": f"response-{number}",
            "choices": [
                {
                    "message": {
                        "content": turn.text,
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "function": {"arguments": json.dumps(c.args), "name": c.name},
                                "id": c.call_id,
                                "type": "function",
                            }
                            for c in turn.calls
                        ],
                    }
                }
            ],
        }
        for call in turn.calls:
            metadata = {"function_name": call.name, "tool_call_id": call.call_id, "model_response": response}
            action = add(
                {
                    "source": "agent",
                    "message": f"Running {call.name}",
                    "action": "run",
                    "tool_call_metadata": metadata,
                    "args": {**call.args, "thought": turn.text},
                }
            )
            add(
                {
                    "source": "agent",
                    "message": "done",
                    "cause": action,
                    "observation": "run",
                    "tool_call_metadata": metadata,
                    "content": call.output,
                    "extras": {"command": "x", "metadata": {"exit_code": 0}},
                }
            )
    return events


def managers() -> st.SearchStrategy[BaseContextManager[Any]]:
    """Every manager the command line builds: trim -n, --max-tokens, --clear-tool-results
    (with and without the inputs), --max-tool-output, summarize (a fixed summarizer)."""
    return st.one_of(
        st.builds(MessageContextManager, max_messages=st.integers(0, 6), remove_tool_msgs=st.booleans()),
        budget_managers(most_tokens=300, last_pin=4),
        st.builds(
            ToolResultClearingManager,
            keep_tool_results=st.integers(0, 3),
            clear_tool_inputs=st.booleans(),
        ),
        st.builds(ToolOutputTruncationManager, max_tool_output=st.integers(10, 200)),
        st.builds(
            lambda keep: SummaryContextManager("fixed", max_messages=3, keep_recent=keep, summarizer=FixedSummarizer()),
            st.integers(0, 4),
        ),
    )
