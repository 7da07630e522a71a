"""The outline path's ``trim --clear-tool-results`` alone (no ``--clear-tool-inputs``, no
``--max-tokens``): the calls found as :class:`~ctxmgr.state.ToolResultClearingManager`
finds them, each result to clear replaced by the manager's placeholder in its record
where the format's writer would write the edited message as that record; ``None`` (the
full path) otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any, cast

from ctxmgr.files._fast_edits import (
    BLOCK_CUTS,
    CUTS,
    LIST_KEYS,
    LISTED,
    MERGING,
    at,
    changed,
    compaction_names,
    confirmed,
    edited_records,
    replaced,
)
from ctxmgr.files._figures import Figures
from ctxmgr.formats._base import Outline
from ctxmgr.state._tokens import text_units

if TYPE_CHECKING:
    from ctxmgr.files._settings import Settings
    from ctxmgr.state._clearing import ToolResultClearingManager
    from ctxmgr.state._compaction import ChainContextManager

__all__ = ["clear_outline"]


def clear_outline(
    value: Any, outline: Outline, line_format: str, manager: ChainContextManager, settings: Settings
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]] | None:
    """``--clear-tool-results`` alone (no ``--clear-tool-inputs``, no ``--max-tokens``) on
    an OpenAI chat or Responses outline (Anthropic, Gemini, LangChain, native:
    :func:`_clear_blocks`), as
    :func:`truncate_outline` for ``--max-tool-output``: the
    results of all but the ``keep_tool_results`` most recent answered calls (none of an
    excluded tool) replaced by the manager's placeholder in their records; ``None`` (the
    full path) for a record the writer would not write that way."""
    clearing = cast("ToolResultClearingManager", manager.managers[0])
    if clearing.clear_tool_inputs or clearing.max_tokens is not None:
        return None
    if line_format in BLOCK_CUTS:
        return _clear_blocks(value, outline, line_format, clearing, settings)
    calls_of = _OPENAI_CALLS.get(line_format)
    if calls_of is None or outline.chars is None or outline.records is None:
        return None
    records = outline.records
    calls = calls_of(outline, records)
    if calls is None:
        return None
    key, plain, _ = CUTS[line_format]
    answered = [call for call in calls if call[3]]
    keep = clearing.keep_tool_results
    protected = {id(call) for call in (answered[len(answered) - keep :] if keep else [])}
    prefix = compaction_names().CLEARED_PREFIX
    edits: dict[int, tuple[Any, str, str]] = {}
    for call in answered:
        call_id, name, _, answers = call
        if name in clearing.exclude_tools or id(call) in protected:
            continue
        for index in answers:
            run = records(index)
            record = run[0] if len(run) == 1 else None
            text = None if record is None else record.get(key)
            if record is None or text.__class__ is not str or not plain(record):
                return None  # content parts, more keys or more records: the full path
            placeholder = f"{prefix}{name} {call_id}, {len(text):,} characters]"
            if not text.startswith(prefix) and len(text) > len(placeholder):
                edits[index] = (record, text, placeholder)
    return edited_records(outline, line_format, edits, settings, cleared_results=len(edits))


def _clear_blocks(
    value: Any, outline: Outline, line_format: str, clearing: ToolResultClearingManager, settings: Settings
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]] | None:
    """``--clear-tool-results`` alone on an Anthropic, Gemini, LangChain or native outline: the
    calls found as ``ToolResultClearingManager`` finds them (names read from the
    records), each result to clear replaced in its record where the writer would write
    the edited message as that record (:data:`BLOCK_CUTS`); ``None`` (the full path)
    otherwise, or for two edited tool messages in a row where the writer merges them."""
    if outline.chars is None:
        return None
    listed = value if value.__class__ is list else value.get(LIST_KEYS[line_format])
    roles = outline.roles
    offset = len(roles) - len(listed)
    if offset not in (0, 1):
        return None
    calls = _block_calls(outline, line_format, listed, offset)
    if calls is None:
        return None
    answered = [call for call in calls if call[3]]
    keep = clearing.keep_tool_results
    protected = {id(call) for call in (answered[len(answered) - keep :] if keep else [])}
    paths_of = BLOCK_CUTS[line_format]
    context: dict[str, Any] = {"calls": outline.calls, "offset": offset}  # (see confirmed)
    changes: dict[int, tuple[Any, Any, int, int]] = {}
    cleared = 0
    for call in answered:
        call_id, name, _, answers = call
        if name in clearing.exclude_tools or id(call) in protected:
            continue
        for index in answers:
            record, new, units_delta, chars_delta = changes.get(index) or (listed[index - offset], None, 0, 0)
            paths = paths_of(record, outline.results[index], value, context)
            if paths is None:
                return None
            new, units_delta, chars_delta, count = _clear_texts(
                record, new, paths, (call_id, name), _RESULT_IDS[line_format], units_delta, chars_delta
            )
            cleared += count
            if new is not None:
                if not confirmed(line_format, record, value, context):
                    return None  # the writer would write it otherwise
                changes[index] = (record, new, units_delta, chars_delta)
    if _merges(line_format, roles, offset, changes):
        return None
    in_list = (value, listed, offset) if line_format in LISTED else None
    return changed(outline, line_format, changes, settings, listed=in_list, cleared_results=cleared)


def _clear_texts(
    record: Any,
    new: Any,
    paths: list[tuple[Any, ...]],
    call: tuple[str, str],
    where_id: tuple[int, str],
    units_delta: int,
    chars_delta: int,
) -> tuple[Any, int, int, int]:
    """``new`` (``record`` edited so far, or ``None``) with the results at ``paths`` that
    answer ``call`` (its id and name) replaced by their placeholders, the units and
    characters changed so far with theirs, and how many it cleared."""
    prefix = compaction_names().CLEARED_PREFIX
    call_id, name = call
    up, id_key = where_id
    cleared = 0
    for path in paths:
        text = at(record, path)
        placeholder = f"{prefix}{name} {call_id}, {len(text):,} characters]"
        if at(record, path[:up])[id_key] == call_id and _clears_text(text, placeholder, prefix):
            new = replaced(record if new is None else new, path, placeholder)
            units_delta += text_units(placeholder) - text_units(text)
            chars_delta += len(text) - len(placeholder)
            cleared += 1
    return new, units_delta, chars_delta, cleared


def _merges(line_format: str, roles: list[str], offset: int, changes: Collection[int]) -> bool:
    """Whether the writer would merge two of the edited tool messages (two in a row, with
    only system messages between them, in Anthropic and Gemini)."""
    talking = [index for index in range(offset, len(roles)) if roles[index] != "system"]
    return line_format in MERGING and any(a in changes and b in changes for a, b in pairwise(talking))


def _clears_text(text: str, placeholder: str, prefix: str) -> bool:
    """Whether the manager clears ``text`` (not one cleared, and longer than its placeholder)."""
    return not text.startswith(prefix) and len(text) > len(placeholder)


def _block_calls(outline: Outline, line_format: str, listed: list[Any], offset: int) -> list[list[Any]] | None:
    """The calls of an Anthropic, Gemini or LangChain outline as
    ``ToolResultClearingManager._calls`` finds them, ``[id, name, position, result
    positions]`` each, oldest first (as :func:`_chat_calls`); ``None`` when a record's
    calls are not the outline's."""
    opened: dict[str, list[Any]] = {}
    calls: list[list[Any]] = []
    names_of = _CALL_NAMES[line_format]
    for index in range(offset, len(outline.roles)):
        for result_id in outline.results[index]:
            call = opened.get(result_id)
            if call is not None and call[2] < index and index not in call[3]:
                call[3].append(index)
        if outline.calls[index]:
            named = names_of(listed[index - offset])
            if tuple(call_id for call_id, _ in named) != outline.calls[index]:
                return None  # calls the outline counts otherwise: the full path
            for call_id, name in named:
                opened[call_id] = [call_id, name, index, []]
                calls.append(opened[call_id])
    return calls


def _anthropic_calls(record: Any) -> list[tuple[Any, str]]:
    return [(b["id"], b["name"] or "tool") for b in record["content"] if b["type"] == "tool_use"]


def _gemini_calls(record: Any) -> list[tuple[Any, str]]:
    found = [part.get("functionCall") for part in record["parts"]]
    return [(call.get("id"), str(call.get("name") or "tool")) for call in found if call.__class__ is dict]


def _langchain_calls(record: Any) -> list[tuple[Any, str]]:
    data = record["kwargs"] if len(record) == 4 else record["data"]
    return [(call.get("id"), str(call.get("name") or "tool")) for call in data.get("tool_calls") or ()]


def _native_calls(record: Any) -> list[tuple[Any, str]]:
    found = [(call.get("id"), call.get("function")) for call in record.get("tools_calls") or ()]
    return [(call_id, str(function.get("name") or "tool")) for call_id, function in found if function.__class__ is dict]


_CALL_NAMES: dict[str, Callable[[Any], list[tuple[Any, str]]]] = {
    "anthropic": _anthropic_calls,
    "gemini": _gemini_calls,
    "langchain": _langchain_calls,
    "native": _native_calls,
}
"""The ``(id, name)`` of each call a record makes, as the reader's message names them."""
_RESULT_IDS = {
    "anthropic": (-1, "tool_use_id"),
    "gemini": (-2, "id"),
    "langchain": (-1, "tool_call_id"),
    "native": (-1, "call_id"),
}
"""Where a result's call id is beside its text (of :data:`BLOCK_CUTS`' paths): the
steps back from the text, and the key."""


_RESPONSES_CALLS = frozenset({"function_call", "custom_tool_call"})
_RESPONSES_PLAIN = frozenset({None, "message", "function_call_output", "custom_tool_call_output", "reasoning"})
"""The items of a Responses outline that make no call (a built-in tool's item, which
the reader makes a call block of, leaves the line to the full path)."""


def _responses_calls(outline: Outline, records: Callable[[int], Sequence[Any]]) -> list[list[Any]] | None:
    """The calls of an OpenAI Responses outline as ``ToolResultClearingManager._calls``
    finds them (as :func:`_chat_calls`: function and custom tool calls, which the reader
    puts in ``tools_calls`` under their names); ``None`` for any other kind of item."""
    opened: dict[str, list[Any]] = {}
    calls: list[list[Any]] = []
    for index in range(len(outline.roles)):
        for result_id in outline.results[index]:
            call = opened.get(result_id)
            if call is not None and call[2] < index and index not in call[3]:
                call[3].append(index)
        for item in records(index):
            kind = item.get("type")
            if kind in _RESPONSES_CALLS:
                call_id = item["call_id"]
                opened[call_id] = [call_id, item["name"] or "tool", index, []]
                calls.append(opened[call_id])
            elif kind not in _RESPONSES_PLAIN:
                return None
    return calls


def _chat_calls(outline: Outline, records: Callable[[int], Sequence[Any]]) -> list[list[Any]] | None:
    """The calls of an OpenAI chat outline as ``ToolResultClearingManager._calls`` finds
    them, ``[id, name, position, result positions]`` each, oldest first: a result pairs
    with the latest call before it of its id; ``None`` for calls outside an assistant
    message (the outline does not count them)."""
    opened: dict[str, list[Any]] = {}
    calls: list[list[Any]] = []
    for index, role in enumerate(outline.roles):
        (record,) = records(index)
        for result_id in outline.results[index]:
            call = opened.get(result_id)
            if call is not None and call[2] < index and index not in call[3]:
                call[3].append(index)
        made = record.get("tool_calls")
        if made and role != "assistant":
            return None
        for made_call in made or ():
            function = made_call.get("function")
            call_id = made_call.get("id")
            if function.__class__ is dict and call_id.__class__ is str and call_id:
                opened[call_id] = [call_id, str(function.get("name") or "tool"), index, []]
                calls.append(opened[call_id])
    return calls


_OPENAI_CALLS = {"openai-chat": _chat_calls, "openai-responses": _responses_calls}
"""How the calls of an OpenAI outline are found, per format (the others: :func:`_clear_blocks`)."""
