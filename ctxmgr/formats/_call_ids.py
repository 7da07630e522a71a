"""``--fix-call-ids``: reused tool call ids renumbered, each call with its results.

Chat Completions takes a call id used twice in one conversation (GPT-4o writes them, and
the API accepted them), Anthropic's Messages API refuses it. :func:`fix_call_ids` gives
every call after the first of an id a new one, ``ID_2`` (``ID_3``..., skipping ids the
conversation already holds), and the results that follow it the same: a result answers
the latest call of its id, as the APIs read them. The renumbering is deterministic (the
same input gives the same ids) and reaches both the model, which conversions write, and
each message's source records, which are written back to their own format: the ids are
found there where the format's declaration says they live (:mod:`ctxmgr.formats._declaration`).
The new ids keep to letters, digits, ``_`` and ``-`` when the old ones did, as Anthropic
requires of ``tool_use`` ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxmgr import _format_registry as format_registry
from ctxmgr.formats._base import Conversation
from ctxmgr.formats._declaration import replace_at
from ctxmgr.state import Message, RemoteToolCallBlock, ToolCallBlock, ToolResultBlock

__all__ = ["fix_call_ids"]


def fix_call_ids(conversation: Conversation) -> int:
    """Renumber the reused call ids of ``conversation`` in place; how many calls got a new id."""
    messages = conversation.state.context
    taken = {call_id for message in messages for call_id in _call_ids(message)}
    seen: set[str] = set()
    latest: dict[str, str] = {}  # an id as written: the id its latest call now has
    renamed = 0
    declaration = _declaration(conversation.format)
    for message in messages:
        calls: dict[str, str] = {}
        for call_id in _call_ids(message):
            if call_id in seen and call_id not in calls:
                calls[call_id] = _fresh(call_id, taken)
                renamed += 1
            seen.add(call_id)
        latest.update(calls)
        latest.update((call_id, call_id) for call_id in _call_ids(message) if call_id not in calls)
        results = {r: latest[r] for r in _result_ids(message) if r in latest and latest[r] != r}
        if not calls and not results:
            continue
        _rename_in_model(message, calls, results)
        records = message.source_in(conversation.format)
        if records is not None and declaration is not None:
            for record in records:
                for path in declaration.call_ids:
                    replace_at(record, path, calls)
                for path in declaration.result_ids:
                    replace_at(record, path, results)
    return renamed


def _declaration(fmt: str) -> Any:
    try:
        return format_registry.entry(fmt).declaration()
    except KeyError:
        return None


def _fresh(call_id: str, taken: set[str]) -> str:
    number = 2
    while f"{call_id}_{number}" in taken:
        number += 1
    fresh = f"{call_id}_{number}"
    taken.add(fresh)
    return fresh


def _call_ids(message: Message) -> list[str]:
    """The ids of the calls ``message`` makes, each once, in order."""
    found = [b.id for b in message.content if isinstance(b, ToolCallBlock | RemoteToolCallBlock)]
    found += [str(c["id"]) for c in message.tools_calls or () if isinstance(c, dict) and c.get("id")]
    return list(dict.fromkeys(found))


def _result_ids(message: Message) -> list[str]:
    return [b.call_id for b in message.content if isinstance(b, ToolResultBlock)]


def _rename_in_model(message: Message, calls: Mapping[str, str], results: Mapping[str, str]) -> None:
    for block in message.content:
        if isinstance(block, ToolCallBlock | RemoteToolCallBlock) and block.id in calls:
            block.id = calls[block.id]
        elif isinstance(block, ToolResultBlock) and block.call_id in results:
            block.call_id = results[block.call_id]
    for call in message.tools_calls or ():
        if isinstance(call, dict) and call.get("id") in calls:
            call["id"] = calls[call["id"]]
