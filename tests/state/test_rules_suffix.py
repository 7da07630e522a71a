"""The token budget's tail search reads the split points from where its tail may start:
:func:`unsafe_cuts_from` must be :func:`unsafe_cuts_of` there, whatever the ids (reused,
answered twice, never answered, a call and its result in one message)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from ctxmgr.state._rules import unsafe_cuts_from, unsafe_cuts_of

ids = st.sampled_from(["a", "b", "c", "d"])
message = st.tuples(
    st.sampled_from(["user", "assistant", "tool", "system"]),
    st.lists(ids, max_size=2).map(tuple),
    st.lists(ids, max_size=2).map(tuple),
)


@given(st.lists(message, max_size=14), st.integers(-2, 16))
def test_suffix_is_the_whole_ones_suffix(messages: list[tuple[str, tuple[str, ...], tuple[str, ...]]], lo: int) -> None:
    roles = [m[0] for m in messages]
    calls = [m[1] for m in messages]
    results = [m[2] for m in messages]
    whole = unsafe_cuts_of(roles, calls, results)
    part = unsafe_cuts_from(roles, calls, results, lo)
    start = max(0, min(lo, len(roles)))
    assert len(part) == len(whole)
    assert part[start:] == whole[start:]
    assert not any(part[:start])


def test_a_result_far_from_its_call_marks_every_point_between() -> None:
    roles = ["user", "assistant", "user", "assistant", "tool", "user"]
    calls = [(), ("x",), (), (), (), ()]
    results = [(), (), (), (), ("x",), ()]
    assert unsafe_cuts_from(roles, calls, results, 3) == [False, False, False, True, True, False, False]
    assert unsafe_cuts_of(roles, calls, results)[3:] == [True, True, False, False]
