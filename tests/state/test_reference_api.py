"""The reference's API on ctxmgr.state: module names, hooks, the call_llm seam, execution state.

These run without the reference; ``test_reference_compat.py`` compares with it.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from pathlib import Path
from typing import Any
from unittest.mock import AsyncMock, patch

import pytest
from _compat_tables import compat_tables
from llm_server import LLMServer, Reply
from pydantic import ValidationError

import ctxmgr.state
from ctxmgr.state import (
    AgentState,
    ExecutionState,
    ExecutionStatus,
    Message,
    MessageContextManager,
    StopRequestStatus,
    SummaryContextManager,
    ToolCallBlock,
    ToolResult,
    ToolResultBlock,
    estimate_tokens,
)
from ctxmgr.state._blocks import DocumentBlock, MediaRef, TextBlock
from ctxmgr.state._report import collect_summary_reports
from ctxmgr.state._transcript import render_messages

SEAM = "ctxmgr.state.summary_context_manager.call_llm"


def seam(answer: Any = "The summary.") -> AsyncMock:
    return AsyncMock(return_value=(answer, 0, 0, 0))


class Recorder:
    """A summarizer of our own: records the requests, answers as told."""

    name = "recorder"

    def __init__(self, answer: str = "SUMMARY") -> None:
        self.answer = answer
        self.requests: list[str] = []

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        self.requests.append(text)
        return self.answer


def chat(count: int) -> list[Message]:
    return [
        Message.text_message(f"turn {i}", role="user" if i % 2 == 0 else "assistant", message_id=f"m{i}")
        for i in range(count)
    ]


def ids(messages: list[Message]) -> list[str | int]:
    return [m.message_id for m in messages]


# -- names -----------------------------------------------------------------------------------


def test_every_name_the_readme_lists_is_where_it_says() -> None:
    tables = compat_tables()
    for label, names in tables["reference module"].items():
        module = ctxmgr.state if label == "tenxgraph.core.state" else importlib.import_module(f"ctxmgr.state.{label}")
        missing = sorted(name for name in names if not hasattr(module, name))
        assert not missing, (label, missing)
    assert tables["reference module"]["tenxgraph.core.state"] <= set(ctxmgr.state.__all__)
    instances = {
        "SummaryContextManager": SummaryContextManager("gpt-4o-mini"),
        "MessageContextManager": MessageContextManager(),
        "ToolResult": ToolResult("x"),
    }
    for cls_name, members in tables["reference class"].items():
        cls = getattr(ctxmgr.state, cls_name)
        fields = set(getattr(cls, "model_fields", {}))
        instance = instances.get(cls_name)
        for member in members:
            assert member in fields or hasattr(cls, member) or hasattr(instance, member), (cls_name, member)


def test_what_the_readme_lists_as_absent_is_absent_and_says_why() -> None:
    absent = set(compat_tables()["absent from ctxmgr"])
    assert absent == {
        "stream_chunks",
        "stream_emitter",
        "StreamChunk",
        "StreamEvent",
        "StreamEmitter",
        "Message.with_image",
        "Message.with_file",
    }
    for name in ("StreamChunk", "StreamEvent", "StreamEmitter"):
        with pytest.raises(AttributeError, match="streaming has no meaning offline"):
            getattr(ctxmgr.state, name)
    for module in ("stream_chunks", "stream_emitter"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"ctxmgr.state.{module}")
    assert not hasattr(Message, "with_image")
    assert not hasattr(Message, "with_file")


def test_submodules_are_attributes_of_the_package_and_unknown_names_are_not() -> None:
    assert ctxmgr.state.reducers.add_messages is ctxmgr.state.add_messages
    assert ctxmgr.state.agent_state.ExecMeta is ExecutionState
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = ctxmgr.state.nothing_here


def test_the_message_manager_can_be_subscripted_and_subclassed_as_the_reference_is() -> None:
    class PlanState(AgentState):
        plan: str = "answer"

    class KeepOne(MessageContextManager[PlanState]):
        pass

    assert MessageContextManager[PlanState] is MessageContextManager
    state = KeepOne(max_messages=1).trim_context(PlanState(context=chat(4)))
    assert ids(state.context) == ["m2", "m3"]


# -- the call_llm seam -----------------------------------------------------------------------


def test_without_a_summarizer_one_request_is_one_call_llm_call() -> None:
    manager = SummaryContextManager("gemini-2.0-flash", max_messages=3, keep_recent=2, max_summary_tokens=99)
    state = AgentState(context=chat(6))
    old = state.context[:4]
    with patch(SEAM, new=seam()) as call_llm:
        manager.trim_context(state)
    call_llm.assert_called_once_with(
        "gemini-2.0-flash",
        manager.request_text(old),
        system_prompt=manager.summary_system_prompt,
        max_tokens=99,
        api_style="responses",
    )
    assert state.context_summary == "The summary."
    assert ids(state.context) == ["m4", "m5"]


def test_a_split_span_calls_call_llm_once_per_request() -> None:
    messages = [Message.text_message(f"turn {i} " + "word " * 200, message_id=f"m{i}") for i in range(8)]
    manager = SummaryContextManager(
        "gpt-4o-mini", max_messages=1, keep_recent=1, max_input_tokens=700, max_summary_tokens=50
    )
    with patch(SEAM, new=seam("Part summary.")) as call_llm, collect_summary_reports() as reports:
        manager.trim_context(AgentState(context=messages))
    (report,) = reports
    assert report.parts > 1
    assert call_llm.call_count == report.calls == report.parts + report.rounds - 1


def test_require_facts_asks_call_llm_once_more() -> None:
    state = AgentState(context=[Message.text_message("Booking HAT268 for mia_li_3668", message_id="m0"), *chat(3)])
    manager = SummaryContextManager("gpt-4o-mini", max_messages=2, keep_recent=2, require_facts=True)
    answers = AsyncMock(side_effect=[("No ids here.", 0, 0, 0), ("Booking HAT268 for mia_li_3668.", 0, 0, 0)])
    with patch(SEAM, new=answers):
        manager.trim_context(state)
    assert answers.call_count == 2
    assert state.context_summary == "Booking HAT268 for mia_li_3668."


def test_a_given_summarizer_is_called_instead_of_call_llm() -> None:
    recorder = Recorder("Mine.")
    manager = SummaryContextManager("gpt-4o-mini", max_messages=3, keep_recent=2, summarizer=recorder)
    with patch(SEAM, new=seam()) as call_llm:
        state = manager.trim_context(AgentState(context=chat(6)))
    call_llm.assert_not_called()
    assert len(recorder.requests) == 1
    assert state.context_summary == "Mine."
    assert manager._provider == "recorder"


@pytest.mark.parametrize(("answer", "logged"), [(None, False), (42, True)])
def test_an_answer_that_is_no_text_leaves_the_state_unchanged(
    caplog: pytest.LogCaptureFixture, answer: Any, logged: bool
) -> None:
    state = AgentState(context=chat(6))
    with caplog.at_level(logging.WARNING, logger="ctxmgr"), patch(SEAM, new=seam(answer)):
        SummaryContextManager("gpt-4o-mini", max_messages=3, keep_recent=2).trim_context(state)
    assert ids(state.context) == ids(chat(6))
    assert state.context_summary is None
    assert ("call_llm answered int, not text" in caplog.text) is logged


def test_call_llm_asks_the_provider_and_returns_the_references_tuple(
    llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxmgr.state.summary_context_manager import call_llm

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-seam")
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_url)
    llm_server.script(Reply.ok("  A short summary.\n"))
    request_call = call_llm("gpt-4o-mini", "USER: hi", system_prompt="Be brief.", max_tokens=77, api_style="chat")
    answer = asyncio.run(request_call)
    assert answer == ("A short summary.", 0, 0, 0)
    request = llm_server.last
    assert (request.kind, request.instructions, request.max_tokens) == ("chat", "Be brief.", 77)
    assert request.input_text == "USER: hi"
    with pytest.raises(TypeError):
        asyncio.run(call_llm("gpt-4o-mini", "x", temperature=0.2))  # type: ignore[call-arg]


def test_the_offline_model_goes_through_call_llm_too() -> None:
    state = AgentState(context=chat(6))
    SummaryContextManager("offline", max_messages=3, keep_recent=2).trim_context(state)
    assert state.context_summary is not None
    assert "turn 0" in state.context_summary


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("gpt-4o-mini", "openai"),
        ("gemini-2.0-flash", "google"),
        ("google/gemma-3", "google"),
        ("llama3.2", "openai"),
        ("offline", "offline"),
        # ctxmgr has no Anthropic provider: an OpenAI-compatible server answers these.
        ("claude-3-5-sonnet", "openai"),
        ("anthropic/claude-sonnet-4", "openai"),
        # an unknown prefix is part of the name (a Hugging Face id), sent to OpenAI whole
        ("meta/gemini-x", "openai"),
    ],
)
def test_provider_is_the_string_of_the_provider_called(model: str, provider: str) -> None:
    assert SummaryContextManager(model)._provider == provider


def test_provider_comes_from_the_seam_modules_detect_provider() -> None:
    with patch("ctxmgr.state.summary_context_manager.detect_provider", return_value="elsewhere"):
        assert SummaryContextManager("gpt-4o-mini")._provider == "elsewhere"


def test_summary_system_prompt_holds_the_instruction_sent() -> None:
    from ctxmgr.state.summary_context_manager import _DEFAULT_SUMMARY_PROMPT

    assert SummaryContextManager("m").summary_system_prompt == _DEFAULT_SUMMARY_PROMPT
    assert SummaryContextManager("m", summary_system_prompt="Be brief.").summary_system_prompt == "Be brief."
    assert SummaryContextManager("m", summary_system_prompt="").summary_system_prompt == _DEFAULT_SUMMARY_PROMPT


# -- hooks -----------------------------------------------------------------------------------


def test_should_summarize_and_split_context_overrides_decide_the_span() -> None:
    class Always(SummaryContextManager[AgentState]):
        def _should_summarize(self, messages: list[Any]) -> bool:
            return True

        def _split_context(self, messages: list[Any]) -> tuple[list[Any], list[Any]]:
            return messages[:1], messages[1:]

    recorder = Recorder()
    manager = Always("gpt-4o-mini", max_messages=None, summarizer=recorder)
    state = AgentState(context=chat(3))
    assert manager.prepare(state.model_copy()) == (state.context[:1], state.context[1:])  # --dry-run sees it too
    manager.trim_context(state)
    assert ids(state.context) == ["m1", "m2"]
    assert "turn 0" in recorder.requests[0]
    assert "turn 1" not in recorder.requests[0]


def test_a_summarize_override_is_applied_and_reported() -> None:
    class Fixed(SummaryContextManager[AgentState]):
        async def _summarize(self, messages: list[Message]) -> str:
            return f"{len(messages)} messages."

    state = AgentState(context=chat(5), context_summary="Before.")
    with patch(SEAM, new=seam()) as call_llm, collect_summary_reports() as reports:
        Fixed("gpt-4o-mini", max_messages=2, keep_recent=1).trim_context(state)
    call_llm.assert_not_called()
    assert state.context_summary == "Before.\n\n4 messages."
    assert [(r.messages, r.calls, r.failed) for r in reports] == [(4, 0, False)]


def test_the_default_summarize_can_be_awaited_on_its_own() -> None:
    manager = SummaryContextManager("gpt-4o-mini", summarizer=Recorder("Alone."))
    assert asyncio.run(manager._summarize(chat(2))) == "Alone."


def test_trim_override_is_what_both_trim_methods_apply() -> None:
    class FirstTwo(MessageContextManager):
        def _trim(self, messages: list[Message]) -> list[Message] | None:
            return messages[:2]

    assert ids(FirstTwo().trim_context(AgentState(context=chat(5))).context) == ["m0", "m1"]
    assert ids(asyncio.run(FirstTwo().atrim_context(AgentState(context=chat(5)))).context) == ["m0", "m1"]


def test_trim_returns_none_or_the_messages_to_keep() -> None:
    manager = MessageContextManager(max_messages=1)
    assert manager._trim([]) is None
    assert manager._trim(chat(2)) is None  # one user turn: nothing to cut
    assert ids(manager._trim(chat(4)) or []) == ["m2", "m3"]
    cleaning = MessageContextManager(max_messages=5, remove_tool_msgs=True)
    assert ids(cleaning._trim(chat(2)) or []) == ["m0", "m1"]  # cleaned list, even with nothing cut


# -- the trigger's estimate ------------------------------------------------------------------


def _tool_heavy() -> list[Message]:
    return [
        Message.text_message("q", message_id="u"),
        Message(role="assistant", content=[], tools_calls=[{"id": "c1", "name": "f"}], message_id="a"),
        Message.tool_message([ToolResultBlock(call_id="c1", output="x" * 400)], message_id="t"),
        Message(role="user", content=[DocumentBlock(text="d" * 40)], message_id="doc"),
    ]


def test_the_trigger_counts_as_the_reference_and_can_count_tool_outputs() -> None:
    from ctxmgr.state.summary_context_manager import _estimate_tokens

    messages = _tool_heavy()
    calls_chars = len(str(messages[1].tools_calls))
    assert _estimate_tokens(messages) == (1 + calls_chars + 40) // 4  # documents count, tool outputs do not
    assert estimate_tokens(messages) == (1 + calls_chars + 400) // 4  # the reports' estimate: the reverse
    reference_like = SummaryContextManager("m", max_messages=None, token_budget=50)
    assert not reference_like._should_summarize(messages)
    counting = SummaryContextManager("m", max_messages=None, token_budget=50, token_estimate=estimate_tokens)
    assert counting._should_summarize(messages)


# -- what the summarizer is shown ------------------------------------------------------------


def test_a_span_with_nothing_to_show_makes_no_call_and_says_so() -> None:
    recorder = Recorder()
    empty = [
        Message(role="user", content=[], message_id="e0"),
        Message(role="assistant", content=[TextBlock(text="")], message_id="e1"),
    ]
    state = AgentState(context=[*empty, *chat(2)])
    with collect_summary_reports() as reports:
        SummaryContextManager("m", max_messages=2, keep_recent=2, summarizer=recorder).trim_context(state)
    assert recorder.requests == []
    assert ids(state.context) == ["e0", "e1", "m0", "m1"]
    (report,) = reports
    assert (report.calls, report.failed) == (0, False)
    assert report.notes == [
        "the 2 messages to summarize hold nothing to show the summarizer (no text, no tool call, no tool "
        "result shown): nothing was sent and they were kept"
    ]


def test_tool_results_are_shown_unless_switched_off() -> None:
    messages = [
        Message(role="assistant", content=[], tools_calls=[{"id": "c1", "name": "lookup"}], message_id="a"),
        Message.tool_message([ToolResultBlock(call_id="c1", output="ORDER-77 shipped")], message_id="t"),
        *chat(2),
    ]
    shown, hidden = Recorder(), Recorder()
    for recorder, include in ((shown, True), (hidden, False)):
        manager = SummaryContextManager(
            "m", max_messages=1, keep_recent=2, summarizer=recorder, include_tool_results=include
        )
        manager.trim_context(AgentState(context=list(messages)))
    assert "ORDER-77 shipped" in shown.requests[0]
    assert "ORDER-77" not in hidden.requests[0]
    assert "lookup" in hidden.requests[0]  # the call still is


@pytest.mark.parametrize(
    ("entry", "shown"),
    [
        ({"name": "search"}, "[calls tool search({}) id=]"),
        ({"id": "c1", "name": "search", "args": {"q": "x"}}, '[calls tool search({"q": "x"}) id=c1]'),
        ({"id": "c2", "type": "web_search", "query": "news"}, '[calls tool web_search({"query": "news"}) id=c2]'),
        ({"id": "c3", "type": "function", "function": {"name": "f", "arguments": "{}"}}, "[calls tool f({}) id=c3]"),
    ],
)
def test_every_tools_calls_entry_is_in_the_transcript(entry: dict[str, Any], shown: str) -> None:
    message = Message(role="assistant", content=[], tools_calls=[entry])
    assert render_messages([message]) == f"ASSISTANT: {shown}"


# -- Message -------------------------------------------------------------------------------


def test_text_reads_what_model_construct_was_given() -> None:
    mixed = Message.model_construct(
        role="assistant",
        content=[
            TextBlock(text="a "),
            {"type": "tool_result", "call_id": "c", "output": {"n": 1}},
            {"type": "text", "text": None},
            {"type": "image"},
            ToolResultBlock(call_id="c", output=Path("/x")),  # not JSON: its str
        ],
    )
    assert mixed.text() == 'a {"n": 1}"/x"'
    assert Message.model_construct(role="user", content="plain").text() == "plain"
    assert Message.model_construct(role="user", content={"raw": True}).text() == "{'raw': True}"
    assert Message.model_construct(role="user", content=None).text() == ""


def test_constructors(tmp_path: Path) -> None:
    image = Message.image_message(image_url="https://example.com/a.png", text="look", message_id=7)
    assert image.message_id == 7  # kept as given
    assert [b.type for b in image.content] == ["text", "image"]
    with pytest.raises(ValueError, match="image_url or image_base64"):
        Message.image_message()
    path = tmp_path / "clip.wav"
    path.write_bytes(b"RIFF")
    audio = Message.from_file(str(path))
    assert audio.content[0].type == "audio"
    assert audio.content[0].media.data_base64 == "UklGRg=="  # type: ignore[union-attr]
    with pytest.raises(FileNotFoundError):
        Message.from_file(str(tmp_path / "missing.pdf"))
    message = Message.tool_message(content=[ToolResultBlock(call_id="c", output="ok")])
    message.attach_media(MediaRef(url="https://example.com/d.pdf"), as_type="document")
    assert [b.type for b in message.content] == ["tool_result", "document"]
    with pytest.raises(ValueError, match="Unsupported media type"):
        message.attach_media(MediaRef(), as_type="file")  # type: ignore[arg-type]
    assert Message.model_validate({"role": "user", "content": [], "timestamp": None}).timestamp is None


# -- execution state and reducers ------------------------------------------------------------


def test_execution_state_methods() -> None:
    state = AgentState()
    assert (state.execution_meta.current_node, state.is_running(), state.is_interrupted()) == ("__start__", True, False)
    state.set_current_node("agent")
    state.advance_step()
    state.set_interrupt("tools", "needs approval", ExecutionStatus.INTERRUPTED_AFTER, {"ask": "ok?"})
    assert state.is_interrupted()
    assert not state.is_running()
    state.clear_interrupt()
    assert state.is_running()
    state.execution_meta.stop_current_execution = StopRequestStatus.STOP_REQUESTED
    assert state.is_stopped_requested()
    state.error("boom")
    assert state.execution_meta.model_dump(mode="json") == {
        "current_node": "agent",
        "step": 1,
        "status": "error",
        "interrupted_node": None,
        "interrupt_reason": None,
        "interrupt_data": None,
        "thread_id": None,
        "stop_current_execution": "stop_requested",
        "internal_data": {"error": "boom"},
    }
    state.complete()
    assert state.execution_meta.status == "completed"


def test_statuses_are_read_from_strings_even_strictly_and_bad_ones_are_named() -> None:
    read = {"status": "interrupted_before", "stop_current_execution": "stopped"}
    meta = ExecutionState.model_validate(read, strict=True)
    assert meta.status is ExecutionStatus.INTERRUPTED_BEFORE
    assert meta.stop_current_execution is StopRequestStatus.STOPPED
    with pytest.raises(ValidationError, match="'running', 'interrupted_before'"):
        ExecutionState.model_validate({"status": "paused"}, strict=True)
    restored = ExecutionState.from_dict({"current_node": "n", "status": "completed", "_internal_data": {"k": 1}})
    assert (restored.status, restored.internal_data) == ("completed", {"k": 1})
    with pytest.raises(KeyError):
        ExecutionState.from_dict({})


def test_reducers() -> None:
    from ctxmgr.state.reducers import add_messages, append_items, remove_tool_messages, replace_messages, replace_value

    a, b, c = chat(3)
    partial = Message.text_message("stream", message_id="p")
    partial.delta = True
    assert ids(add_messages([a, b], [b, c, partial])) == ["m0", "m1", "m2"]
    assert replace_messages([a], [b]) == [b]
    assert replace_value(1, 2) == 2
    assert [i.id for i in append_items([ToolCallBlock(id="x", name="n")], [ToolCallBlock(id="x", name="n")])] == ["x"]
    empty: list[Message] = []
    assert remove_tool_messages(empty) is empty
    assert AgentState.model_fields["context"].metadata == [add_messages]


def test_tool_result() -> None:
    assert ToolResult(content="done").message == "done"
    assert ToolResult("a", {"k": 1}) == ToolResult(message="a", state={"k": 1})
    assert hash(ToolResult("a", {"k": 1})) == hash(ToolResult("a", {"k": 1}))
    assert ToolResult("a") != ToolResult("a", is_error=True)
    assert repr(ToolResult("a")) == "ToolResult(message='a', state=None, is_error=False)"


def test_stats_predicts_the_summary_trigger_with_the_triggers_estimate() -> None:
    from ctxmgr._stats import FileStats, Triggers
    from ctxmgr.formats._base import Conversation

    messages = _tool_heavy()  # 400 characters of tool output, which the trigger does not count
    conversation = Conversation(state=AgentState(context=messages), format="native", container=None, layout="document")
    stats = FileStats(path="x.json")
    stats.add(conversation, Triggers(summary_max_messages=None, token_budget=50))
    assert stats.summary_would_fire == 0
    assert not SummaryContextManager("m", max_messages=None, token_budget=50)._should_summarize(messages)
