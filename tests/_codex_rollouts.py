"""Codex rollouts for the tests: the real ones vendored under
``tests/conversations/agents/codex``, and a strategy generating rollouts as Codex writes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ctxmgr.formats._detection.codex import SUMMARY_PREFIX

FOLDER = Path(__file__).resolve().parent / "conversations" / "agents" / "codex"
ROLLOUTS = sorted(FOLDER.glob("rollout-*.jsonl"))
"""The real rollouts (see their SOURCE.md)."""

CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
"""The calls the generated rollouts make, and the item type of each one's output."""

_TEXT = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=12)
_REASONING = {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "e"}


def said(role: str, text: str) -> dict[str, Any]:
    """A Responses message item as Codex writes one."""
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


@st.composite
def rollouts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A rollout as Codex writes one: session_meta, rules, turns of user, reasoning, text
    and parallel calls with outputs, events between them; sometimes a compaction first."""
    stamp = iter(f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z" for n in range(3600))
    instructions = {"text": draw(_TEXT)} if draw(st.booleans()) else None
    meta: dict[str, Any] = {"id": "s", "cwd": "/w"}
    if instructions:
        meta["base_instructions"] = instructions

    def record(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": next(stamp), "type": kind, "payload": payload}

    out = [record("session_meta", meta)]
    rules = [said("developer", draw(_TEXT))]
    if draw(st.booleans()):
        earlier = [said("user", draw(_TEXT))]
        if draw(st.booleans()):
            earlier.append(said("user", f"{SUMMARY_PREFIX}\n{draw(_TEXT)}"))
        out.append(record("compacted", {"message": "", "replacement_history": [*rules, *earlier]}))
        out.append(record("event_msg", {"type": "context_compacted"}))
    else:
        out.extend(record("response_item", item) for item in rules)
    call = 0
    for _ in range(draw(st.integers(1, 5))):
        text = draw(_TEXT)
        out.append(record("event_msg", {"type": "task_started"}))
        out.append(record("turn_context", {"model": "m"}))
        out.append(record("response_item", said("user", text)))
        out.append(record("event_msg", {"type": "user_message", "message": text}))
        for _ in range(draw(st.integers(0, 2))):
            out.append(
                record("response_item", {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "e"})
            )
            kinds = draw(st.lists(st.sampled_from(list(CALLS)), max_size=3))
            for kind in kinds:
                call += 1
                key = "arguments" if kind == "function_call" else "input"
                out.append(record("response_item", {"type": kind, "name": "shell", key: "{}", "call_id": f"c{call}"}))
            out.append(record("event_msg", {"type": "token_count", "info": None}))
            for n, kind in enumerate(kinds):
                output = draw(_TEXT) * draw(st.integers(1, 40))
                item = {"type": CALLS[kind], "call_id": f"c{call - len(kinds) + n + 1}", "output": output}
                out.append(record("response_item", item))
        answer = draw(_TEXT)
        out.append(record("event_msg", {"type": "agent_message", "message": answer}))
        out.append(
            record(
                "response_item",
                said("assistant", answer),
            )
        )
    out.append(record("event_msg", {"type": "task_complete"}))
    return out
