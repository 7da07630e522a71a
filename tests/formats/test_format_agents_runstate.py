"""OpenAI Agents SDK run states (``RunState.to_json()``): detected (not as native
AgentState), read as the conversation a resumed run sends the model, compacted by every
manager and written back as a run state whose lists agree; converted to the six formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr.cli import app
from ctxmgr.formats._agents_runstate import MESSAGE_ITEM_TYPES
from ctxmgr.formats._detection import native
from ctxmgr.state import MessageContextManager, ToolResultBlock
from ctxmgr.state._compose import trim_manager
from ctxmgr.state._tools import call_ids, result_ids

FOLDER = Path(__file__).parent.parent / "conversations" / "agents" / "agents-sdk"
REAL = sorted(FOLDER.glob("*.json"))
SUPPORT = FOLDER / "support-refund-pending.json"
SIX = ["native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"]


def _load(path: Path) -> formats.Conversation:
    return formats.load(path.read_bytes(), source=path.name)


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, [*args])


def test_the_real_files_are_there() -> None:
    assert [p.name for p in REAL] == [
        "custom-tool-call.json",
        "pending-tool-approval.json",
        "support-refund-pending.json",
    ]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_a_run_state_is_detected_and_native_does_not_claim_it(path: Path) -> None:
    value = json.loads(path.read_bytes())
    assert formats.detect_name(value, source=path.name) == "agents-runstate"
    assert native.score(value) == 0
    assert native.score({"context": {}}) == 1  # a broken AgentState is still native's to explain


def test_a_broken_run_state_names_the_field(tmp_path: Path) -> None:
    value = json.loads(SUPPORT.read_bytes())
    value["generated_items"] = "none"
    source = tmp_path / "state.json"
    source.write_text(json.dumps(value))
    result = _run("validate", str(source))
    assert result.exit_code == 2
    assert "generated_items: expected a list of run items" in result.output
    assert "agents-runstate" in result.output


def test_the_conversation_is_the_input_then_the_generated_items() -> None:
    context = _load(SUPPORT).state.context
    given = ["user", "assistant", "tool", "assistant", "user"]
    generated = ["assistant", "tool", "tool", "assistant", "tool", "assistant"]
    assert [m.role for m in context] == [*given, *generated]
    assert [str(m.message_id) for m in context[:2]] == ["input-1", "input-2"]
    assert str(context[5].message_id) == "item-1"
    # The approval item repeats the pending call: it is not a second call.
    calls = [c for m in context for c in sorted(call_ids(m))]
    assert calls == ["call_1", "call_2", "call_3", "call_4", "call_5"]
    assert sorted(call_ids(context[-1])) == ["call_5"]  # pending, unanswered
    assert not result_ids(context[-1])


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_validate_stats_and_a_trim_that_keeps_everything(path: Path, tmp_path: Path) -> None:
    assert _run("validate", str(path)).exit_code == 0
    result = _run("stats", str(path))
    assert result.exit_code == 0, result.output
    assert "agents-runstate" in result.output
    out = tmp_path / "out.json"
    result = _run("trim", "-n", "1000", "--no-view", "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == path.read_bytes()


def _consistent(before: dict[str, Any], after: dict[str, Any]) -> None:
    """What a resumed run checks: the generated items and the lists that follow them agree."""
    items = after["generated_items"]
    indexes = after["generated_session_item_indexes"]
    assert len(indexes) == len(items)
    for item, index in zip(items, indexes, strict=True):
        if index is not None:
            assert after["session_items"][index] == item
    keys = {(i["raw_item"].get("type"), i["raw_item"].get("call_id") or i["raw_item"].get("id")) for i in items}
    for response in after["model_responses"]:
        assert any((o.get("type"), o.get("call_id") or o.get("id")) in keys for o in response["output"])
    for key in ("current_turn", "current_step", "last_model_response", "last_processed_response", "session_items"):
        assert after[key] == before[key]
    # Every output answers a call the model was sent before it.
    seen: set[str] = set()
    given = after["original_input"] if isinstance(after["original_input"], list) else []
    for raw in [*given, *(i["raw_item"] for i in items if i["type"] in MESSAGE_ITEM_TYPES)]:
        if raw.get("type", "").endswith("_output"):
            assert raw["call_id"] in seen
        elif "call_id" in raw:
            seen.add(raw["call_id"])


def test_trim_keeps_the_last_turn_and_the_lists_agree(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = _run("trim", "-n", "1", "--no-view", "-o", str(out), str(SUPPORT))
    assert result.exit_code == 0, result.output
    before, after = json.loads(SUPPORT.read_bytes()), json.loads(out.read_bytes())
    assert after["original_input"] == before["original_input"][-1:]  # the last question
    assert after["generated_items"] == before["generated_items"]
    _consistent(before, after)


def test_a_token_budget_drops_generated_items_and_their_model_responses(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = _run("trim", "--max-tokens", "150", "--no-view", "-o", str(out), str(SUPPORT))
    assert result.exit_code == 0, result.output
    before, after = json.loads(SUPPORT.read_bytes()), json.loads(out.read_bytes())
    assert [i["type"] for i in after["generated_items"]] == ["tool_call_item", "tool_approval_item"]
    assert after["generated_session_item_indexes"] == [7, 8]
    assert len(after["model_responses"]) == 1 < len(before["model_responses"])
    _consistent(before, after)


@pytest.mark.parametrize(
    "option", [["--max-tool-output", "10"], ["--clear-tool-results", "--keep-tool-results", "1", "--clear-tool-inputs"]]
)
def test_edited_items_keep_their_run_item(option: list[str], tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = _run("trim", *option, "--no-view", "-o", str(out), str(SUPPORT))
    assert result.exit_code == 0, result.output
    before, after = json.loads(SUPPORT.read_bytes()), json.loads(out.read_bytes())
    assert len(after["generated_items"]) == len(before["generated_items"])
    edited = 0
    for old, new, index in zip(
        before["generated_items"], after["generated_items"], after["generated_session_item_indexes"], strict=True
    ):
        assert {k: v for k, v in old.items() if k not in ("raw_item", "output")} == {
            k: v for k, v in new.items() if k not in ("raw_item", "output")
        }
        if old != new:
            edited += 1
            assert index is None  # no longer the session's item
            if "output" in new:
                assert new["output"] == new["raw_item"]["output"]
                assert len(new["output"]) < len(old["output"])
    assert edited >= 3
    invocations = after["context"]["tool_invocations"]
    if "--clear-tool-inputs" in option:
        # A cleared call no longer matches its invocation record's fingerprint: the record goes.
        cleared = {i["raw_item"]["call_id"] for i in after["generated_items"] if "ctxmgr_cleared" in str(i["raw_item"])}
        assert cleared
        assert not cleared & invocations.keys()
        assert "call_5" in invocations
    else:
        assert invocations == before["context"]["tool_invocations"]
    _consistent(before, after)


def test_summarize_puts_the_summary_at_the_head_of_the_input(tmp_path: Path) -> None:
    out, again = tmp_path / "out.json", tmp_path / "again.json"
    arguments = ["summarize", "--model", "offline", "--max-messages", "6", "--keep-recent", "3", "--no-view"]
    result = _run(*arguments, "-o", str(out), str(SUPPORT))
    assert result.exit_code == 0, result.output
    before, after = json.loads(SUPPORT.read_bytes()), json.loads(out.read_bytes())
    first = after["original_input"][0]
    assert first["role"] == "developer"
    assert first["content"][0]["text"].startswith("[ctxmgr: summary of the earlier conversation]")
    _consistent(before, after)
    conversation = _load(out)
    assert conversation.state.context_summary
    assert _run("trim", "-n", "1000", "--no-view", "-o", str(again), str(out)).exit_code == 0
    assert again.read_bytes() == out.read_bytes()


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
@pytest.mark.parametrize("target", SIX)
def test_convert_to_the_six_formats_validates(path: Path, target: str, tmp_path: Path) -> None:
    out = tmp_path / f"out-{target}.json"
    result = _run("convert", "--to", target, "-o", str(out), str(path))
    assert result.exit_code == 0, result.output
    assert _run("validate", str(out)).exit_code == 0
    before, after = _load(path).state.context, _load(out).state.context
    assert sorted(c for m in after for c in call_ids(m)) == sorted(c for m in before for c in call_ids(m))
    assert sorted(r for m in after for r in result_ids(m)) == sorted(r for m in before for r in result_ids(m))


# -- property: every manager keeps the run state's lists in agreement ----------------------

words = st.text(alphabet="abcdefgh ", min_size=1, max_size=30).map(str.strip).filter(bool)
AGENT = {"name": "support"}


def _item(kind: str, raw: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": kind, "raw_item": raw, "agent": AGENT, **extra}


@st.composite
def run_states(draw: st.DrawFn) -> dict[str, Any]:
    given: Any = draw(words)
    if draw(st.booleans()):
        given = [{"role": "user", "content": given}]
    items: list[Any] = []
    responses: list[Any] = []
    serial = 0
    for step in range(draw(st.integers(1, 4))):
        output: list[Any] = []
        calls = []
        for _ in range(draw(st.integers(0, 2))):
            serial += 1
            raw = {"type": "function_call", "id": f"fc_{serial}", "call_id": f"call_{serial}", "name": "lookup"}
            raw["arguments"] = json.dumps({"q": draw(words)})
            calls.append(raw)
            output.append(raw)
            items.append(_item("tool_call_item", raw, description=""))
        for raw in calls:
            text = draw(words) * draw(st.integers(1, 20))
            result = {"type": "function_call_output", "call_id": raw["call_id"], "output": text}
            items.append(_item("tool_call_output_item", result, output=text))
        if not calls or draw(st.booleans()):
            message = {"type": "message", "id": f"msg_{step}", "role": "assistant", "status": "completed"}
            message["content"] = [{"type": "output_text", "text": draw(words), "annotations": []}]
            output.append(message)
            items.append(_item("message_output_item", message))
        responses.append({"output": output, "response_id": f"resp_{step}", "usage": {}})
    return {
        "$schemaVersion": "1.21",
        "current_turn": len(responses),
        "current_agent": AGENT,
        "original_input": given,
        "model_responses": responses,
        "context": {"usage": {}, "approvals": {}, "tool_invocations": {}},
        "generated_items": items,
        "session_items": items,
        "generated_session_item_indexes": list(range(len(items))),
        "current_step": None,
        "last_model_response": responses[-1],
        "last_processed_response": None,
    }


managers = st.one_of(
    st.builds(lambda n: MessageContextManager(max_messages=n), st.integers(1, 3)),
    st.builds(lambda n: trim_manager(None, max_tokens=n), st.integers(5, 150)),
    st.builds(
        lambda keep, inputs: trim_manager(
            None, clear_tool_results=True, keep_tool_results=keep, clear_tool_inputs=inputs
        ),
        st.integers(0, 2),
        st.booleans(),
    ),
    st.builds(lambda n: trim_manager(None, max_tool_output=n), st.integers(1, 10)),
)


@settings(max_examples=60, deadline=None)
@given(state=run_states(), manager=managers)
def test_every_manager_keeps_the_lists_in_agreement(state: dict[str, Any], manager: Any) -> None:
    conversation = formats.load(json.dumps(state, indent=2).encode(), source="state.json")
    conversation.state = manager.trim_context(conversation.state)
    written = json.loads(formats.dump(conversation))
    _consistent(state, written)
    # Kept items keep their order and their run item.
    originals = [json.dumps(i, sort_keys=True) for i in state["generated_items"]]
    kept = [json.dumps(i, sort_keys=True) for i in written["generated_items"] if i in state["generated_items"]]
    assert kept == [o for o in originals if o in kept]
    # Read back, it is the conversation the manager left.
    again = formats.load(json.dumps(written).encode(), source="again.json")
    assert _said(again.state.context) == _said(conversation.state.context)


def _said(messages: list[Any]) -> list[Any]:
    return [
        (
            m.role,
            m.text(),
            sorted(call_ids(m)),
            [(b.call_id, b.output) for b in m.content if isinstance(b, ToolResultBlock)],
        )
        for m in messages
    ]


def test_converting_another_format_into_a_run_state_is_refused(tmp_path: Path) -> None:
    source, out = tmp_path / "chat.json", tmp_path / "out.json"
    source.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    result = _run("convert", "--to", "agents-runstate", "-o", str(out), str(source))
    assert result.exit_code == 2
    assert "is a session log its tool writes; converting another format into it" in " ".join(result.output.split())
    assert not out.exists()
