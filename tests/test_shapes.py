"""The provider rules' twins agree: ``outline_clear`` (the fast path's yes/no) and
``check_shapes`` (every problem, worded), side by side in :mod:`ctxmgr._shapes`."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

from ctxmgr._format_registry import NAMES, TARGETS, rules
from ctxmgr._shapes import Problem, Shape, check_shapes, outline_clear, reuse_accepted

_ROLES = st.sampled_from(["system", "user", "assistant", "tool"])
_IDS = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=2).map(tuple)


def _drawn(messages: list[tuple[str, tuple[str, ...], tuple[str, ...]]], data: st.DataObject) -> Any:
    """The outline's columns of ``messages``, a drawn selection of them, and its shapes."""
    roles = [m[0] for m in messages]
    calls = [m[1] for m in messages]
    results = [m[2] for m in messages]
    indices = data.draw(st.lists(st.integers(0, max(0, len(messages) - 1)), max_size=12).map(sorted))
    indices = [i for i in indices if i < len(messages)]
    return roles, calls, results, indices, [Shape(roles[i], calls[i], results[i]) for i in indices]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(_ROLES, _IDS, _IDS), max_size=12),
    st.data(),
    st.sampled_from([None, *NAMES]),
)
def test_outline_clear_answers_as_check_shapes_does(
    messages: list[tuple[str, tuple[str, ...], tuple[str, ...]]], data: st.DataObject, target: str | None
) -> None:
    """The fast path's yes/no rule check is the full check, rule for rule, for every format."""
    roles, calls, results, indices, shapes = _drawn(messages, data)
    assert outline_clear(roles, calls, results, indices, target=target) == (not check_shapes(shapes, target=target))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(_ROLES, _IDS, _IDS), max_size=12),
    st.data(),
    st.sampled_from([None, *NAMES]),
)
def test_outline_clear_with_reuse_ignores_only_reused_ids(
    messages: list[tuple[str, tuple[str, ...], tuple[str, ...]]], data: st.DataObject, target: str | None
) -> None:
    """With ``reuse``, the yes/no check is the full check with the reused-id problems
    (which only Anthropic rejects) left out, rule for rule."""
    roles, calls, results, indices, shapes = _drawn(messages, data)
    others = [p for p in check_shapes(shapes, target=target) if p.code not in ("duplicate-call-id", "duplicate-result")]
    assert outline_clear(roles, calls, results, indices, target=target, reuse=True) == (not others)


def test_reuse_is_accepted_where_the_provider_takes_it() -> None:
    assert {fmt: reuse_accepted(fmt) for fmt in TARGETS} == {
        "openai-chat": True,
        "openai-responses": True,
        "anthropic": False,
        "gemini": True,
    }
    assert reuse_accepted("native")
    assert reuse_accepted("langchain")


def test_each_target_takes_its_entrys_rule() -> None:
    """A result one message late: the OpenAI rule (a run of tool messages) lets a second
    tool message answer; the next-message rule (Anthropic, Gemini) does not."""
    shapes = [Shape("user"), Shape("assistant", ("a", "b")), Shape("tool", (), ("a",)), Shape("tool", (), ("b",))]
    for target in TARGETS:
        problems = check_shapes(shapes, target=target)
        if rules(target) == "next-message":
            assert problems == [
                Problem(
                    1,
                    "results-not-adjacent",
                    f"{target}: results of this message's tool calls must all be in the next message",
                )
            ]
        else:
            assert rules(target) == "tool-run"
            assert problems == []
    assert set(TARGETS) == {"openai-chat", "openai-responses", "anthropic", "gemini"}
