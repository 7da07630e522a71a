"""Reducers: how a graph runtime merges an update into a state field, as the reference names them.

``AgentState.context`` carries :func:`add_messages` in its annotation. ctxmgr has no
graph runtime; the reducers are here for code that calls them, and
:func:`remove_tool_messages` is the rule ``remove_tool_msgs=True`` applies.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ctxmgr.state._tools import remove_completed_tool_sequences
from ctxmgr.state.message import Message

__all__ = ["Message", "add_messages", "append_items", "remove_tool_messages", "replace_messages", "replace_value"]

M = TypeVar("M", bound="Message")
T = TypeVar("T")


def add_messages(left: list[M], right: list[M]) -> list[M]:
    """``left`` followed by the messages of ``right`` whose id is not in ``left``.

    Partial (``delta=True``) messages of ``right`` are not added: they are streaming
    fragments of a message still being written. Duplicates within ``right`` are kept.
    """
    known = {message.message_id for message in left}
    return left + [m for m in right if m.message_id not in known and m.delta is False]


def replace_messages(left: list[M], right: list[M]) -> list[M]:
    """``right``: the update replaces the whole list."""
    return right


def append_items(left: list[Any], right: list[Any]) -> list[Any]:
    """``left`` followed by the items of ``right`` whose ``.id`` is not in ``left``."""
    known = {item.id for item in left}
    return left + [item for item in right if item.id not in known]


def replace_value(left: Any, right: T) -> T:
    """``right``: the update replaces the value."""
    return right


def remove_tool_messages(messages: list[M]) -> list[M]:
    """``messages`` without their completed tool-call sequences, final answers kept.

    A sequence is complete when an assistant message with ``tools_calls`` is followed by
    its ``tool`` messages and then an assistant message without ``tools_calls``; the
    calling message and the results go, the answer stays. Anything incomplete is kept.
    An empty list is returned as is; otherwise the result is a new list.
    """
    if not messages:
        return messages
    return remove_completed_tool_sequences(messages)
