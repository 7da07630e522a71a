"""``BaseContextManager``, ``MessageContextManager`` and the tool-sequence rules."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from pydantic import Field

from ctxmgr.state import (
    AgentState,
    BaseContextManager,
    Message,
    MessageContextManager,
    ToolCallBlock,
    ToolResultBlock,
    find_safe_cut,
    remove_completed_tool_sequences,
)

# -- builders ------------------------------------------------------------------------


def system(text: str = "sys") -> Message:
    return Message.text_message(text, role="system")


def user(text: str = "q") -> Message:
    return Message.text_message(text)


def answer(text: str = "a") -> Message:
    return Message.text_message(text, role="assistant")


def calling(*call_ids: str, text: str = "") -> Message:
    """An assistant message making tool calls, in the OpenAI chat shape the reference uses."""
    message = Message.text_message(text, role="assistant") if text else Message(role="assistant", content=[])
    message.tools_calls = [
        {"id": call_id, "type": "function", "function": {"name": f"fn_{call_id}", "arguments": "{}"}}
        for call_id in call_ids
    ]
    return message


def result(*call_ids: str) -> Message:
    return Message.tool_message([ToolResultBlock(call_id=c, output=f"out {c}") for c in call_ids])


def state_of(*messages: Message, summary: str | None = None) -> AgentState:
    return AgentState(context=list(messages), context_summary=summary)


def same(actual: list[Message], expected: list[Message]) -> bool:
    """The same message objects, in the same order."""
    return len(actual) == len(expected) and all(a is b for a, b in zip(actual, expected, strict=True))


def both_ways(manager: MessageContextManager, messages: list[Message]) -> list[Message]:
    """Run trim_context and atrim_context on copies of the same list; they must agree."""
    sync_state = state_of(*messages)
    async_state = state_of(*messages)
    sync_out = manager.trim_context(sync_state)
    async_out = asyncio.run(manager.atrim_context(async_state))
    assert sync_out is sync_state
    assert async_out is async_state
    assert same(sync_state.context, async_state.context)
    return sync_state.context


# -- the seed's example, verbatim ------------------------------------------------------


def test_the_seeds_example_prints_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    state = AgentState(
        context=[
            Message.text_message("You are terse.", role="system"),
            Message.text_message("First question"),
            Message.text_message("First answer", role="assistant"),
            Message.text_message("Second question"),
            Message.text_message("Second answer", role="assistant"),
            Message.text_message("Third question"),
        ]
    )
    manager = MessageContextManager(max_messages=2)
    state = manager.trim_context(state)
    for m in state.context:
        print(f"{m.role} | {m.text()}")
    assert capsys.readouterr().out == (
        "system | You are terse.\nuser | Second question\nassistant | Second answer\nuser | Third question\n"
    )


# -- BaseContextManager ----------------------------------------------------------------


def test_base_is_abstract() -> None:
    with pytest.raises(TypeError):
        BaseContextManager()  # type: ignore[abstract]


def test_base_is_generic_over_the_state() -> None:
    alias = BaseContextManager[AgentState]
    assert alias.__origin__ is BaseContextManager  # type: ignore[attr-defined]
    assert len(BaseContextManager.__parameters__) == 1  # type: ignore[attr-defined]

    class Keep(BaseContextManager[AgentState]):
        def trim_context(self, state: AgentState) -> AgentState:
            return state

        async def atrim_context(self, state: AgentState) -> AgentState:
            return state

    state = AgentState()
    assert Keep().trim_context(state) is state
    assert asyncio.run(Keep().atrim_context(state)) is state


def test_subclass_with_only_trim_context_cannot_be_instantiated() -> None:
    class OnlySync(BaseContextManager[AgentState]):
        def trim_context(self, state: AgentState) -> AgentState:
            return state

    with pytest.raises(TypeError, match="atrim_context"):
        OnlySync()  # type: ignore[abstract]


def test_subclass_with_only_atrim_context_cannot_be_instantiated() -> None:
    class OnlyAsync(BaseContextManager[AgentState]):
        async def atrim_context(self, state: AgentState) -> AgentState:
            return state

    with pytest.raises(TypeError, match="trim_context"):
        OnlyAsync()  # type: ignore[abstract]


def test_message_context_manager_is_a_base_context_manager() -> None:
    manager = MessageContextManager()
    assert isinstance(manager, BaseContextManager)
    assert (manager.max_messages, manager.remove_tool_msgs) == (10, False)


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True])
def test_max_messages_must_be_a_whole_number(bad: Any) -> None:
    with pytest.raises(Exception, match="max_messages"):
        MessageContextManager(max_messages=bad)


# -- MessageContextManager rules -------------------------------------------------------


def test_empty_context_is_unchanged() -> None:
    for remove in (False, True):
        state = AgentState(context_summary="kept")
        context = state.context
        out = MessageContextManager(max_messages=0, remove_tool_msgs=remove).trim_context(state)
        assert out is state
        assert out.context is context
        assert out.context == []
        assert out.context_summary == "kept"


def test_at_most_max_user_messages_leaves_the_context_untouched() -> None:
    messages = [system(), user(), answer(), calling("c1"), result("c1"), answer(), user(), answer()]
    state = state_of(*messages)
    context = state.context
    MessageContextManager(max_messages=2).trim_context(state)
    assert state.context is context  # not even replaced by a copy
    assert same(state.context, messages)


def test_only_role_user_counts() -> None:
    # 2 user messages among many others: max_messages=2 keeps everything.
    messages = [system(), user(), *[answer() for _ in range(10)], result("x"), user(), system()]
    assert same(both_ways(MessageContextManager(max_messages=2), messages), messages)
    # one fewer allowed: trims from the last user message on.
    kept = both_ways(MessageContextManager(max_messages=1), messages)
    assert same(kept, [messages[0], messages[-1], messages[-2]])


def test_system_messages_from_anywhere_come_first_in_order() -> None:
    s1, s2, s3 = system("one"), system("two"), system("three")
    u1, a1, u2, a2, u3 = user("u1"), answer("a1"), user("u2"), answer("a2"), user("u3")
    messages = [u1, s1, a1, u2, s2, a2, u3, s3]
    kept = both_ways(MessageContextManager(max_messages=2), messages)
    assert same(kept, [s1, s2, s3, u2, a2, u3])


def test_everything_after_the_cut_user_message_is_kept() -> None:
    u1, u2 = user("u1"), user("u2")
    tail = [answer(), calling("c1"), result("c1"), answer("final")]
    messages = [u1, answer(), u2, *tail]
    assert same(both_ways(MessageContextManager(max_messages=1), messages), [u2, *tail])


def test_max_messages_zero_keeps_only_system_messages() -> None:
    s1, s2 = system("a"), system("b")
    messages = [s1, user(), answer(), s2, user(), calling("c"), result("c")]
    assert same(both_ways(MessageContextManager(max_messages=0), messages), [s1, s2])


def test_max_messages_zero_with_no_user_message_is_unchanged() -> None:
    messages = [system(), answer(), calling("c"), result("c")]
    assert same(both_ways(MessageContextManager(max_messages=0), messages), messages)


def test_same_state_object_is_mutated_and_returned_and_summary_untouched() -> None:
    messages = [system(), user("1"), answer(), user("2"), answer(), user("3")]
    for run in ("sync", "async"):
        state = state_of(*messages, summary="an earlier summary")
        manager = MessageContextManager(max_messages=1, remove_tool_msgs=True)
        out = manager.trim_context(state) if run == "sync" else asyncio.run(manager.atrim_context(state))
        assert out is state
        assert same(state.context, [messages[0], messages[-1]])
        assert state.context_summary == "an earlier summary"


def test_trim_keeps_the_state_subclass_and_its_fields() -> None:
    class MyState(AgentState):
        plan: list[str] = Field(default_factory=list)

    state = MyState(context=[user("1"), user("2")], plan=["x"])
    out = MessageContextManager(max_messages=1).trim_context(state)
    assert out is state
    assert out.plan == ["x"]
    assert [m.text() for m in out.context] == ["2"]


def test_trimming_twice_changes_nothing_more() -> None:
    messages = [system(), user(), answer(), user(), calling("c"), result("c"), answer(), user()]
    manager = MessageContextManager(max_messages=2)
    once = both_ways(manager, messages)
    assert same(both_ways(manager, once), once)


# -- remove_tool_msgs --------------------------------------------------------------------


def test_remove_tool_msgs_writes_the_filtered_list_back_even_without_trimming() -> None:
    u, a, final = user(), calling("c1"), answer("final")
    state = state_of(u, a, result("c1"), final)
    MessageContextManager(max_messages=5, remove_tool_msgs=True).trim_context(state)
    assert same(state.context, [u, final])


def test_remove_tool_msgs_writes_a_new_list_back_when_nothing_was_removed() -> None:
    messages = [user(), answer()]
    state = state_of(*messages)
    context = state.context
    MessageContextManager(max_messages=5, remove_tool_msgs=True).trim_context(state)
    assert same(state.context, messages)
    assert state.context is not context  # the filtered list is written back


def test_remove_tool_msgs_happens_before_counting_and_cutting() -> None:
    u1, u2 = user("1"), user("2")
    final = answer("final")
    messages = [system(), u1, calling("c1"), result("c1"), answer("f1"), u2, calling("c2"), result("c2"), final]
    kept = both_ways(MessageContextManager(max_messages=1, remove_tool_msgs=True), messages)
    assert same(kept, [messages[0], u2, final])


def test_without_remove_tool_msgs_tool_messages_stay() -> None:
    messages = [user(), calling("c1"), result("c1"), answer()]
    assert same(both_ways(MessageContextManager(max_messages=1), messages), messages)


# -- completed tool sequences ---------------------------------------------------------------


def test_completed_sequence_keeps_only_the_final_answer() -> None:
    u, final = user(), answer("done")
    messages = [u, calling("c1", "c2"), result("c1"), result("c2"), final]
    assert same(remove_completed_tool_sequences(messages), [u, final])


def test_completed_sequence_with_no_tool_messages() -> None:
    u, final = user(), answer("done")
    assert same(remove_completed_tool_sequences([u, calling("c1"), final]), [u, final])


def test_chained_calls_only_the_last_pair_is_completed() -> None:
    u, a1, t1, a2, t2, f = user(), calling("c1"), result("c1"), calling("c2"), result("c2"), answer("F")
    assert same(remove_completed_tool_sequences([u, a1, t1, a2, t2, f]), [u, a1, t1, f])


def test_pending_results_are_kept() -> None:
    messages = [user(), calling("c1"), result("c1")]
    assert same(remove_completed_tool_sequences(messages), messages)
    messages = [user(), calling("c1")]
    assert same(remove_completed_tool_sequences(messages), messages)


def test_user_message_in_between_is_not_a_completed_sequence() -> None:
    messages = [calling("c1"), result("c1"), user("wait"), answer("ok")]
    assert same(remove_completed_tool_sequences(messages), messages)
    messages = [calling("c1"), user("wait"), answer("ok")]
    assert same(remove_completed_tool_sequences(messages), messages)


def test_orphan_tool_message_is_kept() -> None:
    messages = [user(), result("nobody"), answer()]
    assert same(remove_completed_tool_sequences(messages), messages)


def test_empty_tools_calls_is_not_a_call() -> None:
    empty = answer("x")
    empty.tools_calls = []
    messages = [user(), empty, result("c"), answer()]
    assert same(remove_completed_tool_sequences(messages), messages)


def test_final_answer_with_empty_tools_calls_completes_a_sequence() -> None:
    final = answer("final")
    final.tools_calls = []
    u = user()
    assert same(remove_completed_tool_sequences([u, calling("c"), result("c"), final]), [u, final])


def test_several_completed_sequences_and_scan_continues_after_each() -> None:
    u1, f1, u2, f2 = user(), answer("f1"), user(), answer("f2")
    messages = [u1, calling("a"), result("a"), f1, u2, calling("b"), f2]
    assert same(remove_completed_tool_sequences(messages), [u1, f1, u2, f2])


def test_a_final_answer_is_not_reused_as_the_next_calling_message() -> None:
    # After A(calls) T F, scanning resumes after F; a following T is an orphan, kept.
    u, final, orphan = user(), answer("F"), result("late")
    assert same(remove_completed_tool_sequences([u, calling("c"), result("c"), final, orphan]), [u, final, orphan])


def test_tool_call_blocks_alone_do_not_make_a_calling_message() -> None:
    # The reference's rule looks at tools_calls only.
    block_call = Message(role="assistant", content=[ToolCallBlock(id="c", name="f")])
    messages = [user(), block_call, result("c"), answer()]
    assert same(remove_completed_tool_sequences(messages), messages)


def test_input_list_is_not_modified() -> None:
    messages = [user(), calling("c"), result("c"), answer()]
    copy = list(messages)
    remove_completed_tool_sequences(messages)
    assert same(messages, copy)


# -- find_safe_cut -----------------------------------------------------------------------------


def test_safe_cut_keeps_a_safe_point() -> None:
    messages = [user(), answer(), user(), answer()]
    for cut in range(len(messages) + 1):
        assert find_safe_cut(messages, cut) == cut


def test_safe_cut_never_splits_a_call_from_its_result() -> None:
    messages = [user(), calling("c1"), result("c1"), answer(), user()]
    assert find_safe_cut(messages, 2) == 1  # between the call and its result: move before the call
    assert find_safe_cut(messages, 3) == 3  # after the result: fine
    assert find_safe_cut(messages, 1) == 1


def test_safe_cut_with_parallel_calls_in_separate_tool_messages() -> None:
    messages = [user(), calling("c1", "c2", "c3"), result("c1"), result("c2"), result("c3"), answer()]
    for cut in (2, 3, 4):
        assert find_safe_cut(messages, cut) == 1
    assert find_safe_cut(messages, 5) == 5


def test_safe_cut_with_parallel_results_in_one_message() -> None:
    messages = [user(), calling("c1", "c2"), result("c1", "c2"), answer()]
    assert find_safe_cut(messages, 2) == 1
    assert find_safe_cut(messages, 3) == 3


def test_safe_cut_with_results_far_from_their_call() -> None:
    messages = [user(), calling("c1"), answer("thinking"), user("hm"), result("c1"), answer()]
    for cut in (2, 3, 4):
        assert find_safe_cut(messages, cut) == 1


def test_safe_cut_never_starts_the_kept_part_with_a_tool_message() -> None:
    messages = [user(), answer(), result("unknown"), answer()]
    assert find_safe_cut(messages, 2) == 1  # messages[2:] would start with the tool message
    assert find_safe_cut(messages, 3) == 3


def test_safe_cut_uses_tool_call_blocks_too() -> None:
    block_call = Message(role="assistant", content=[ToolCallBlock(id="b1", name="f")])
    messages = [user(), block_call, user("x"), result("b1"), answer()]
    assert find_safe_cut(messages, 3) == 1


def test_safe_cut_returns_zero_when_nothing_earlier_is_safe() -> None:
    messages = [calling("c1"), result("c1"), answer()]
    assert find_safe_cut(messages, 1) == 0
    assert find_safe_cut([result("c"), result("d")], 1) == 0


def test_safe_cut_clamps_out_of_range_cuts() -> None:
    messages = [user(), answer()]
    assert find_safe_cut(messages, 10) == 2
    assert find_safe_cut(messages, -3) == 0
    assert find_safe_cut([], 5) == 0


def test_safe_cut_is_linear() -> None:
    # One call whose result is the last message makes every cut unsafe: a quadratic
    # implementation re-checking each candidate would take minutes at this size.
    n = 100_000
    filler = answer()
    messages = [calling("first"), *[filler] * (n - 2), result("first")]
    started = time.perf_counter()
    assert find_safe_cut(messages, n - 1) == 0
    assert time.perf_counter() - started < 5


def test_names_that_moved_are_still_importable_where_they_were() -> None:
    from ctxmgr.formats import AnthropicFormat, NativeFormat, OpenAIChatFormat
    from ctxmgr.state import SummaryContextManager as Exported
    from ctxmgr.state._managers import DEFAULT_SUMMARY_PROMPT, SummaryContextManager
    from ctxmgr.state._transcript import DEFAULT_SUMMARY_PROMPT as PROMPT

    assert SummaryContextManager is Exported
    assert DEFAULT_SUMMARY_PROMPT == PROMPT
    assert [NativeFormat().name, OpenAIChatFormat().name, AnthropicFormat().name] == [
        "native",
        "openai-chat",
        "anthropic",
    ]
    import ctxmgr.formats
    import ctxmgr.state._managers

    with pytest.raises(AttributeError):
        ctxmgr.state._managers.NoSuchThing  # noqa: B018
    with pytest.raises(AttributeError):
        ctxmgr.formats.NoSuchFormat  # noqa: B018
