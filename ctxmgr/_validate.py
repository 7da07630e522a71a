"""Checks for what provider APIs reject in a conversation's tool calls and structure.

Works on the model (``Message`` list), so it applies to every format; ``target`` adds
a format's own rules (Anthropic wants every result in the message right after the call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ctxmgr._shapes import TARGETS, Problem, Shape, check_shapes
from ctxmgr.state._blocks import ReasoningBlock, ToolResultBlock
from ctxmgr.state._tools import call_ids, result_ids
from ctxmgr.state.message import Message

__all__ = ["TARGETS", "Problem", "Shape", "check_messages", "check_shapes", "shape_of"]


def _is_orphan_reasoning(message: Message) -> bool:
    if message.role != "assistant" or message.tools_calls or message.text():
        return False
    blocks = message.content
    return bool(blocks) and all(isinstance(b, ReasoningBlock) for b in blocks)


def shape_of(message: Message) -> Shape:
    """The :class:`Shape` of a model message."""
    return Shape(
        role=message.role,
        calls=tuple(call_ids(message)),
        results=tuple(result_ids(message)),
        empty_tool=message.role == "tool" and not any(isinstance(b, ToolResultBlock) for b in message.content),
        orphan_reasoning=_is_orphan_reasoning(message),
    )


def check_messages(
    messages: Sequence[Message], *, target: str | None = None, name: Callable[[int], str] | None = None
) -> list[Problem]:
    """Every problem found, in message order (see :func:`~ctxmgr._shapes.check_shapes`
    for the rules and ``name``)."""
    return check_shapes([shape_of(m) for m in messages], target=target, name=name)
