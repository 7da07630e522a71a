"""Property-based tests of the trimming invariants and of the safe-cut rule."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings, strategies as st

from ctxmgr.state import (
    AgentState,
    Message,
    MessageContextManager,
    Role,
    ToolCallBlock,
    ToolResultBlock,
    find_safe_cut,
    remove_completed_tool_sequences,
)

ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


@st.composite
def messages_strategy(draw: st.DrawFn, max_size: int = 30) -> list[Message]:
    """Conversations of any shape: any role order, some assistants calling tools."""
    roles = draw(st.lists(st.sampled_from(ROLES), max_size=max_size))
    messages: list[Message] = []
    for index, role in enumerate(roles):
        message = Message.text_message(f"{role} {index}", role=role, message_id=index)
        if role == "assistant" and draw(st.booleans()):
            count = draw(st.integers(min_value=0, max_value=2))  # 0: an empty tools_calls list
            message.tools_calls = [
                {"id": f"c{index}_{k}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                for k in range(count)
            ]
        messages.append(message)
    return messages


def non_system(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role != "system"]


def ids(messages: list[Message]) -> list[int | str]:
    return [m.message_id for m in messages]


def trim(messages: list[Message], max_messages: int, remove_tool_msgs: bool) -> list[Message]:
    state = AgentState(context=list(messages), context_summary="s")
    out = MessageContextManager(max_messages=max_messages, remove_tool_msgs=remove_tool_msgs).trim_context(state)
    assert out is state
    assert state.context_summary == "s"
    return state.context


max_messages_strategy = st.integers(min_value=0, max_value=8)


@given(messages_strategy(), max_messages_strategy, st.booleans())
def test_system_messages_are_all_kept_and_first(messages: list[Message], max_messages: int, remove: bool) -> None:
    kept = trim(messages, max_messages, remove)
    systems = [m for m in messages if m.role == "system"]
    assert [m for m in kept if m.role == "system"] == systems
    if sum(1 for m in messages if m.role == "user") > max_messages:
        assert kept[: len(systems)] == systems
        assert all(m.role != "system" for m in kept[len(systems) :])


@given(messages_strategy(), max_messages_strategy, st.booleans())
def test_nothing_to_trim_leaves_the_messages_where_they_are(
    messages: list[Message], max_messages: int, remove: bool
) -> None:
    # Rule 3 comes before rule 4: with at most max_messages user messages the context is
    # unchanged (after tool-sequence removal), system messages included, wherever they are.
    if sum(1 for m in messages if m.role == "user") <= max_messages:
        expected = remove_completed_tool_sequences(messages) if remove else messages
        assert ids(trim(messages, max_messages, remove)) == ids(expected)


@given(messages_strategy(), max_messages_strategy, st.booleans())
def test_relative_order_is_kept(messages: list[Message], max_messages: int, remove: bool) -> None:
    kept = trim(messages, max_messages, remove)
    position = {m.message_id: i for i, m in enumerate(messages)}
    systems = [m for m in kept if m.role == "system"]
    rest = non_system(kept)
    assert [position[m.message_id] for m in systems] == sorted(position[m.message_id] for m in systems)
    assert [position[m.message_id] for m in rest] == sorted(position[m.message_id] for m in rest)


@given(messages_strategy(), max_messages_strategy)
def test_kept_non_system_part_is_a_suffix_of_the_input(messages: list[Message], max_messages: int) -> None:
    kept = non_system(trim(messages, max_messages, False))
    source = non_system(messages)
    assert ids(source[len(source) - len(kept) :]) == ids(kept)


@given(messages_strategy(), max_messages_strategy)
def test_with_remove_tool_msgs_the_kept_part_is_a_suffix_of_the_filtered_input(
    messages: list[Message], max_messages: int
) -> None:
    kept = non_system(trim(messages, max_messages, True))
    source = non_system(remove_completed_tool_sequences(messages))
    assert ids(source[len(source) - len(kept) :]) == ids(kept)


@given(messages_strategy(), max_messages_strategy, st.booleans())
def test_never_more_than_max_messages_user_messages(messages: list[Message], max_messages: int, remove: bool) -> None:
    kept = trim(messages, max_messages, remove)
    assert sum(1 for m in kept if m.role == "user") <= max_messages


@given(messages_strategy(), max_messages_strategy, st.booleans())
def test_as_many_user_turns_as_allowed_are_kept(messages: list[Message], max_messages: int, remove: bool) -> None:
    kept = trim(messages, max_messages, remove)
    available = sum(1 for m in messages if m.role == "user")
    assert sum(1 for m in kept if m.role == "user") == min(available, max_messages)


@given(messages_strategy(), max_messages_strategy)
def test_trimming_is_idempotent(messages: list[Message], max_messages: int) -> None:
    once = trim(messages, max_messages, False)
    twice = trim(once, max_messages, False)
    assert ids(twice) == ids(once)


@given(messages_strategy(), max_messages_strategy)
def test_with_remove_tool_msgs_a_second_run_only_removes_tool_steps(
    messages: list[Message], max_messages: int
) -> None:
    # Not idempotent by the reference's own rule: [u, A1, T1, A2, T2, F] gives
    # [u, A1, T1, F], and a second run then removes A1 and T1. What holds: the user turns
    # and system messages are stable, and only tool steps go.
    once = trim(messages, max_messages, True)
    twice = trim(once, max_messages, True)
    assert [m for m in twice if m.role in ("user", "system")] == [m for m in once if m.role in ("user", "system")]
    twice_ids = {id(m) for m in twice}
    for message in once:
        if id(message) not in twice_ids:
            assert message.role == "tool" or (message.role == "assistant" and message.tools_calls)
    # and repeating reaches a fixed point
    current = twice
    for _ in range(len(messages) + 1):
        following = trim(current, max_messages, True)
        if ids(following) == ids(current):
            break
        current = following
    assert ids(trim(current, max_messages, True)) == ids(current)


@given(messages_strategy(), max_messages_strategy, st.booleans())
def test_sync_and_async_agree(messages: list[Message], max_messages: int, remove: bool) -> None:
    manager = MessageContextManager(max_messages=max_messages, remove_tool_msgs=remove)
    sync_state = AgentState(context=list(messages))
    async_state = AgentState(context=list(messages))
    manager.trim_context(sync_state)
    asyncio.run(manager.atrim_context(async_state))
    assert ids(sync_state.context) == ids(async_state.context)


@given(messages_strategy(), max_messages_strategy, st.booleans())
def test_kept_messages_are_the_input_objects(messages: list[Message], max_messages: int, remove: bool) -> None:
    kept = trim(messages, max_messages, remove)
    originals = {id(m) for m in messages}
    assert all(id(m) in originals for m in kept)
    assert len({id(m) for m in kept}) == len(kept)


@given(messages_strategy())
def test_removing_completed_sequences_only_drops_calling_assistants_and_tool_results(
    messages: list[Message],
) -> None:
    kept = remove_completed_tool_sequences(messages)
    kept_ids = {id(m) for m in kept}
    for message in messages:
        if id(message) not in kept_ids:
            assert message.role == "tool" or (message.role == "assistant" and message.tools_calls)
    # every final answer of a removed sequence is kept: no assistant without calls goes
    assert [m for m in messages if m.role in ("user", "system") or (m.role == "assistant" and not m.tools_calls)] == [
        m for m in kept if m.role in ("user", "system") or (m.role == "assistant" and not m.tools_calls)
    ]


# -- find_safe_cut ------------------------------------------------------------------------------


@st.composite
def tool_conversations(draw: st.DrawFn) -> list[Message]:
    """Messages where tool results answer earlier calls (parallel ones included), some far
    away, some in one message together, plus orphan results without a known call."""
    length = draw(st.integers(min_value=0, max_value=25))
    messages: list[Message] = []
    open_calls: list[str] = []
    serial = 0
    for index in range(length):
        kind = draw(st.sampled_from(["user", "assistant", "call", "block_call", "result", "orphan", "system"]))
        if kind == "call":
            count = draw(st.integers(min_value=1, max_value=3))
            new = [f"c{serial + k}" for k in range(count)]
            serial += count
            message = Message(role="assistant", content=[])
            message.tools_calls = [
                {"id": c, "type": "function", "function": {"name": "f", "arguments": "{}"}} for c in new
            ]
            open_calls.extend(new)
        elif kind == "block_call":
            call_id = f"c{serial}"
            serial += 1
            message = Message(role="assistant", content=[ToolCallBlock(id=call_id, name="f")])
            open_calls.append(call_id)
        elif kind == "result" and open_calls:
            answered = draw(st.lists(st.sampled_from(open_calls), min_size=1, max_size=3, unique=True))
            for call_id in answered:
                open_calls.remove(call_id)
            message = Message.tool_message([ToolResultBlock(call_id=c, output="ok") for c in answered])
        elif kind == "orphan":
            message = Message.tool_message([ToolResultBlock(call_id=f"gone{index}", output="?")])
        elif kind == "system":
            message = Message.text_message("s", role="system")
        else:
            message = Message.text_message("x", role="user" if kind == "user" else "assistant")
        messages.append(message)
    return messages


def _calls_by_id(messages: list[Message]) -> dict[str, int]:
    where: dict[str, int] = {}
    for index, message in enumerate(messages):
        for call in message.tools_calls or ():
            where[call["id"]] = index
        for block in message.content:
            if isinstance(block, ToolCallBlock):
                where[block.id] = index
    return where


def _is_safe(messages: list[Message], cut: int) -> bool:
    """The rule, written out the slow way: no kept result answers a cut call, and the kept
    part does not start with a tool message."""
    where = _calls_by_id(messages)
    if cut < len(messages) and messages[cut].role == "tool":
        return False
    for message in messages[cut:]:
        for block in message.content:
            if isinstance(block, ToolResultBlock) and where.get(block.call_id, len(messages)) < cut:
                return False
    return True


@settings(max_examples=300)
@given(tool_conversations(), st.integers(min_value=-2, max_value=30))
def test_safe_cut_never_keeps_a_result_whose_call_was_cut(messages: list[Message], cut: int) -> None:
    safe = find_safe_cut(messages, cut)
    assert 0 <= safe <= max(0, min(cut, len(messages)))
    where = _calls_by_id(messages)
    for message in messages[safe:]:
        for block in message.content:
            if isinstance(block, ToolResultBlock) and block.call_id in where:
                assert where[block.call_id] >= safe or safe == 0


@settings(max_examples=300)
@given(tool_conversations(), st.integers(min_value=0, max_value=30))
def test_safe_cut_is_the_latest_safe_point(messages: list[Message], cut: int) -> None:
    safe = find_safe_cut(messages, cut)
    clamped = min(cut, len(messages))
    expected = next((c for c in range(clamped, 0, -1) if _is_safe(messages, c)), 0)
    assert safe == expected
