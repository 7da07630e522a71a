"""Checks for what provider APIs reject in a conversation's tool calls and structure.

Works on the model (``Message`` list), so it applies to every format; ``target`` adds
a format's own rules (Anthropic wants every result in the message right after the call).
:func:`check_outline` is its twin on an outline (``validate`` on a conversation its
format's outline reader accepts): the same rules on the same shapes, with no model
imported, and the property tests of ``tests/cli/test_outline_reports.py`` hold the two to
the same report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ctxmgr._shapes import TARGETS, Problem, Shape, check_shapes

if TYPE_CHECKING:
    from ctxmgr.formats._base import Outline
    from ctxmgr.state.message import Message

__all__ = ["TARGETS", "Problem", "Shape", "check_messages", "check_outline", "check_shapes", "shape_of"]


def shape_of(message: Message) -> Shape:
    """The :class:`Shape` of a model message."""
    return _shapes_of([message])[0]


def _shapes_of(messages: Sequence[Message]) -> list[Shape]:
    # The model is imported here, once a call: the outline twin below needs none of it.
    from ctxmgr.state._blocks import ReasoningBlock, ToolResultBlock
    from ctxmgr.state._tools import call_ids, result_ids

    def orphan_reasoning(message: Message) -> bool:
        if message.role != "assistant" or message.tools_calls or message.text():
            return False
        blocks = message.content
        return bool(blocks) and all(isinstance(b, ReasoningBlock) for b in blocks)

    return [
        Shape(
            role=message.role,
            calls=tuple(call_ids(message)),
            results=tuple(result_ids(message)),
            empty_tool=message.role == "tool" and not any(isinstance(b, ToolResultBlock) for b in message.content),
            orphan_reasoning=orphan_reasoning(message),
        )
        for message in messages
    ]


def check_messages(
    messages: Sequence[Message], *, target: str | None = None, name: Callable[[int], str] | None = None
) -> list[Problem]:
    """Every problem found, in message order (see :func:`~ctxmgr._shapes.check_shapes`
    for the rules and ``name``)."""
    return check_shapes(_shapes_of(messages), target=target, name=name)


def check_outline(
    outline: Outline,
    *,
    target: str | None = None,
    indices: Sequence[int] | None = None,
    name: Callable[[int], str] | None = None,
) -> list[Problem]:
    """:func:`check_messages` on a conversation read from its outline, or on its messages
    ``indices`` only (what a trim keeps; problems are then at positions in ``indices``).

    An outline gives each message's role, calls and results; it declines empty tool
    messages and lone reasoning items, so neither flag of a :class:`Shape` is ever set.
    """
    roles, calls, results = outline.roles, outline.calls, outline.results
    chosen = range(len(roles)) if indices is None else indices
    shapes = [Shape(roles[i], calls[i], results[i]) for i in chosen]
    return check_shapes(shapes, target=target, name=name)
