"""The outline path's edits inside records: ``trim --max-tool-output`` alone, each long tool
result cut in its record where the format's writer would write the edited message as that
same record with the new text (:data:`CUTS`, :data:`BLOCK_CUTS`), and what the clearing
(:mod:`ctxmgr.files._fast_clearing`) shares with it: the edited records' outline, report
and figures (:func:`changed`). Anything else declines (``None``): the full path.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from ctxmgr.files._figures import Figures
from ctxmgr.formats._base import Outline
from ctxmgr.state._managers import BaseContextManager
from ctxmgr.state._tokens import UNITS_PER_TOKEN, text_units, tokens_from_units

if TYPE_CHECKING:
    from ctxmgr.files._settings import Settings
    from ctxmgr.state._compaction import ChainContextManager
    from ctxmgr.state._truncation import ToolOutputTruncationManager

__all__ = [
    "BLOCK_CUTS",
    "CUTS",
    "LISTED",
    "LIST_KEYS",
    "MERGING",
    "at",
    "changed",
    "compaction_names",
    "is_clearing",
    "replaced",
    "truncate_outline",
]


@cache
def compaction_names() -> Any:
    """The compaction managers' module names the fast path uses, loaded once (only a
    compaction option built these managers, so loading them costs nothing more); a
    namespace, so that a dataset's lines do not each run the import statements."""
    from types import SimpleNamespace

    from ctxmgr.state._budget import TokenBudgetContextManager
    from ctxmgr.state._compaction import CLEARED_PREFIX, ChainContextManager, measured_report, totals
    from ctxmgr.state._truncation import ToolOutputTruncationManager, truncate_output

    return SimpleNamespace(
        ChainContextManager=ChainContextManager,
        TokenBudgetContextManager=TokenBudgetContextManager,
        ToolOutputTruncationManager=ToolOutputTruncationManager,
        CLEARED_PREFIX=CLEARED_PREFIX,
        measured_report=measured_report,
        totals=totals,
        truncate_output=truncate_output,
    )


def is_clearing(manager: BaseContextManager[Any]) -> bool:
    """Whether ``manager`` is a :class:`~ctxmgr.state.ToolResultClearingManager` (its
    module, which loads the model, is only looked at once something has loaded it)."""
    module = sys.modules.get("ctxmgr.state._clearing")
    return module is not None and type(manager) is module.ToolResultClearingManager


def truncate_outline(
    value: Any, outline: Outline, line_format: str, manager: ChainContextManager, settings: Settings
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]] | None:
    """``--max-tool-output`` alone on an outline: ``(outline, kept, report, figures,
    edited)``, the outline's ``rebuild`` giving the records with each long tool result cut
    in its record (those of ``edited``), as the writer writes the edited message; ``None``
    (the full path) for what the writer would not write that way (see :data:`CUTS`)."""
    if line_format == "native":
        return _truncate_native(value, outline, manager, settings)
    if line_format in BLOCK_CUTS:
        return _truncate_blocks(value, outline, line_format, manager, settings)
    cut_of = CUTS.get(line_format)
    if cut_of is None or outline.chars is None or outline.records is None:
        return None
    key, plain, _ = cut_of
    compaction = compaction_names()
    limit = cast("ToolOutputTruncationManager", manager.managers[0]).max_tool_output
    over = (limit + 1) * UNITS_PER_TOKEN  # a text of this many units or more is cut
    records = outline.records
    edits: dict[int, tuple[Any, str, str]] = {}
    for index, role in enumerate(outline.roles):
        if role != "tool":
            continue
        run = records(index)
        record = run[0] if len(run) == 1 else None
        text = None if record is None else record.get(key)
        if text.__class__ is not str:
            return None  # content parts, or several records: the model's output is not their text
        # A tool message's units are its output's: at most 8 a character, 1 if ASCII.
        if 8 * len(text) < over or (len(text) if text.isascii() else text_units(text)) < over:
            continue
        if record is None or not plain(record):
            return None  # more than the writer writes: the full path
        if not text.startswith(compaction.CLEARED_PREFIX):
            edits[index] = (record, text, compaction.truncate_output(text, limit))
    return edited_records(outline, line_format, edits, settings, truncated_outputs=len(edits))


def _truncate_blocks(
    value: Any, outline: Outline, line_format: str, manager: ChainContextManager, settings: Settings
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]] | None:
    """``--max-tool-output`` alone on an Anthropic, Gemini or LangChain outline, as
    :func:`truncate_outline` for the OpenAI formats: each result over the limit is cut in
    its record where the format's writer would write the edited message as that same
    record with the new text (see :data:`BLOCK_CUTS`); ``None`` (the full path) for a
    record to cut that is not in that shape, or for two cut tool messages in a row (the
    writers merge those into one record)."""
    if outline.chars is None:
        return None
    listed = value if value.__class__ is list else value.get(LIST_KEYS[line_format])
    roles = outline.roles
    offset = len(roles) - len(listed)  # a system prompt held apart
    if offset not in (0, 1):
        return None
    paths_of, short = BLOCK_CUTS[line_format], _SHORT[line_format]
    limit = cast("ToolOutputTruncationManager", manager.managers[0]).max_tool_output
    over = (limit + 1) * UNITS_PER_TOKEN  # a text of this many units or more is cut
    changes: dict[int, tuple[Any, Any, int, int]] = {}
    context: dict[str, Any] = {"calls": outline.calls, "offset": offset}  # (see _first_call_name)
    units: list[int] = []  # counted only for a message not in the writer's shape
    cuts = least = 0  # (least: the units of the cut texts)
    last_cut = -2  # the last message cut, and the last one that is not a system message
    previous = -1
    for index, role in enumerate(roles):
        if role == "system":
            continue
        if role != "tool" or index < offset:
            previous = index
            continue
        record = listed[index - offset]
        if short(record, over):
            previous = index
            continue  # nothing in it is cut
        paths = paths_of(record, outline.results[index], value, context)
        if paths is None:
            units = units or outline.units()
            if units[index] < over:  # (a message counts its results' text)
                previous = index
                continue  # nothing in it is cut: the shape does not matter
            return None  # not in the writer's shape: the full path
        new, units_delta, chars_delta, count, kept = _cut_texts(record, paths, limit)
        cuts += count
        least += kept
        if new is not record:
            if (last_cut == previous and line_format in MERGING) or not confirmed(line_format, record, value, context):
                return None  # the writer merges two edited tool messages in a row, or writes it otherwise
            changes[index] = (record, new, units_delta, chars_delta)
            last_cut = index
        previous = index
    in_list = (value, listed, offset) if line_format in LISTED else None
    return changed(outline, line_format, changes, settings, least=least, listed=in_list, truncated_outputs=cuts)


LISTED = frozenset({"anthropic", "gemini", "langchain"})
"""The formats whose outline's ``rebuild`` of every message is the conversation with
its list of records (see :func:`changed`'s ``listed``)."""


def _under(text: str, over: int) -> bool:
    """Whether ``text`` holds fewer than ``over`` units: its length first (at most 8 units
    a character), then its length if it is ASCII, else its units."""
    return 8 * len(text) < over or (len(text) if text.isascii() else text_units(text)) < over


def _short_results(record: Any, over: int, key: str) -> bool:
    """Whether every ``tool_result`` block of ``record``'s content holds a string at
    ``key`` too short to be over (Anthropic's ``content``, native's ``output``)."""
    for block in record["content"]:
        if block["type"] == "tool_result":
            text = block.get(key)
            if text.__class__ is not str or not _under(text, over):
                return False
    return True


def _short_gemini(record: Any, over: int) -> bool:
    for part in record["parts"]:
        if "functionResponse" in part or "function_response" in part:
            body = part.get("functionResponse")
            response = body.get("response") if body.__class__ is dict else None
            output = response.get("output") if response.__class__ is dict and len(response) == 1 else None
            if output.__class__ is not str:
                return False
            # _under, inline: it runs for every tool message of every line
            if 8 * len(output) >= over and (len(output) if output.isascii() else text_units(output)) >= over:
                return False
    return True


def _short_langchain(record: Any, over: int) -> bool:
    data = record.get("kwargs") if len(record) == 4 else record.get("data")
    content = data.get("content") if data.__class__ is dict else None
    return content.__class__ is str and _under(content, over)


_SHORT: dict[str, Callable[[Any, int], bool]] = {
    "anthropic": lambda record, over: _short_results(record, over, "content"),
    "gemini": _short_gemini,
    "langchain": _short_langchain,
    "native": lambda record, over: _short_results(record, over, "output"),
}
"""Per format, whether a tool message's record certainly holds no result of ``over``
units or more (each a string of fewer, which the model's output is, so that the full
path cuts none): its shape then does not matter, and it is not read further. ``False``
when unsure (a result that is not a string)."""


def _truncate_native(
    value: Any, outline: Outline, manager: ChainContextManager, settings: Settings
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]] | None:
    """``--max-tool-output`` alone on a native outline: each result over the limit cut in
    its record where the record is what the native writer writes for the edited message
    (:func:`_native_paths`); ``None`` (the full path) for one to cut in another shape."""
    if outline.chars is None:
        return None
    limit = cast("ToolOutputTruncationManager", manager.managers[0]).max_tool_output
    over = (limit + 1) * UNITS_PER_TOKEN
    changes: dict[int, tuple[Any, Any, int, int]] = {}
    units: list[int] = []  # counted only for a message not in the writer's shape
    cuts = least = 0  # (least: the units of the cut texts)
    for index, record in enumerate(value["context"]):
        # Any message may hold a tool result (the outline's blocks are text or results).
        if all(block["type"] != "tool_result" for block in record["content"]):
            continue
        if _short_results(record, over, "output"):
            continue
        paths = _native_paths(record)
        if paths is None:
            units = units or outline.units()
            if units[index] < over:  # (a message counts its results' text)
                continue
            return None
        new, units_delta, chars_delta, count, kept = _cut_texts(record, paths, limit)
        if new is not record:
            changes[index] = (record, new, units_delta, chars_delta)
            cuts += count
            least += kept
    return changed(outline, "native", changes, settings, least=least, truncated_outputs=cuts)


_NATIVE_KEYS = [
    "message_id", "role", "content", "delta", "tools_calls", "reasoning", "timestamp", "metadata", "usages", "raw",
    "parsed_content",
]  # fmt: skip
_NATIVE_RESULT_KEYS = ["type", "call_id", "output", "is_error", "status"]


def _native_paths(record: dict[str, Any]) -> list[tuple[Any, ...]] | None:
    """Where the outputs are in a native record (of the outline's accepted ones) that is
    already what the writer writes for the message edited (``reference_record``: every
    field, in its order, of a value the model keeps as it is): ``tool_result`` blocks
    alone, each of every field and a string output; no tool calls, no usage (the writer
    spells a usage in full), a float time. ``None`` otherwise.

    A ``raw`` holding the message's records in another format is read back by the full
    reader, which writes what they say where the file agrees with them: results of
    string outputs, compared equal, are the same values. The writer makes the edit in
    those records too (``formats._native``): here only in OpenAI chat tool records of a
    string content (:func:`_raw_edited`); any other ``raw`` is left to the full path."""
    if list(record) != _NATIVE_KEYS or record["tools_calls"] is not None or record["usages"] is not None:
        return None
    if record["raw"] is not None and not _plain_chat_raw(record["raw"]):
        return None
    if record["timestamp"].__class__ is not float:
        return None
    paths: list[tuple[Any, ...]] = []
    for position, block in enumerate(record["content"]):
        if list(block) != _NATIVE_RESULT_KEYS or block["type"] != "tool_result" or block["output"].__class__ is not str:
            return None
        paths.append(("content", position, "output"))
    return paths


def _plain_chat_raw(raw: Any) -> bool:
    """``raw`` of OpenAI chat tool records alone, each with a string ``content``."""
    if raw.__class__ is not dict or raw.get("format") != "openai-chat" or list(raw) != ["format", "records"]:
        return False
    records = raw["records"]
    return (
        records.__class__ is list
        and bool(records)
        and all(
            r.__class__ is dict and r.get("role") == "tool" and plain_chat_result(r) and r["content"].__class__ is str
            for r in records
        )
    )


def _raw_edited(record: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` (``record`` with results edited) with the same edits made in the chat
    records its ``raw`` keeps (see :func:`_native_paths`), as the native writer makes them:
    each content equal to an edited output becomes the new output."""
    raw = record["raw"]
    if raw is None:
        return new
    edits = {
        before["output"]: after["output"]
        for before, after in zip(record["content"], new["content"], strict=True)
        if before["output"] != after["output"]
    }
    records = [{**r, "content": edits[r["content"]]} if r["content"] in edits else r for r in raw["records"]]
    return {**new, "raw": {"format": raw["format"], "records": records}}


def _cut_texts(record: Any, paths: list[tuple[Any, ...]], limit: int) -> tuple[Any, int, int, int, int]:
    """``record`` with each text at ``paths`` over ``limit`` tokens cut (a copy, or
    ``record`` itself when none is), the units, characters and texts that cuts, and the
    units of the cut texts."""
    compaction = compaction_names()
    over = (limit + 1) * UNITS_PER_TOKEN
    new = record
    units_delta = chars_delta = cuts = kept = 0
    for path in paths:
        text = at(record, path)
        if 8 * len(text) < over or text.startswith(compaction.CLEARED_PREFIX):
            continue  # (at most 8 units a character)
        before = len(text) if text.isascii() else text_units(text)
        if before < over:
            continue
        cut = compaction.truncate_output(text, limit)
        new = replaced(new, path, cut)
        after = text_units(cut)
        units_delta += after - before
        chars_delta += len(text) - len(cut)
        cuts += 1
        kept += after
    return new, units_delta, chars_delta, cuts, kept


def at(record: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        record = record[step]
    return record


def replaced(record: Any, path: tuple[Any, ...], text: str) -> Any:
    """A copy of ``record`` with the value at ``path`` replaced by ``text`` (the
    containers on the path copied, everything else shared)."""
    if not path:
        return text
    step, rest = path[0], path[1:]
    copy = list(record) if record.__class__ is list else dict(record)
    copy[step] = replaced(record[step], rest, text)
    return copy


MERGING = frozenset({"anthropic", "gemini"})
"""The formats whose writers put an edited tool message's results into the record of the
edited tool message before it (the results of one turn go in one record)."""
_ANTHROPIC_RESULT_KEYS = ["type", "tool_use_id", "content"]
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]+$")
"""An id the Anthropic writer keeps as it is (``ctxmgr.formats._interop.safe_id``'s
rule, which importing that module, and the model with it, would cost a trim)."""


def _anthropic_paths(
    record: Any, ids: tuple[str, ...], value: Any, context: dict[str, Any]
) -> list[tuple[Any, ...]] | None:
    """Where the results' texts are in a user record of ``tool_result`` blocks alone, each
    of ``type``, ``tool_use_id`` (an id the writer keeps) and string ``content`` (and
    ``is_error`` true): the shape the Anthropic writer renders an edited tool message in."""
    content = record.get("content")
    if list(record) != ["role", "content"] or record["role"] != "user" or content.__class__ is not list:
        return None
    paths: list[tuple[Any, ...]] = []
    for position, block in enumerate(content):
        keys = list(block)
        if keys != _ANTHROPIC_RESULT_KEYS and (keys[:3] != _ANTHROPIC_RESULT_KEYS or keys[3:] != ["is_error"]):
            return None
        if len(keys) == 4 and block["is_error"] is not True:
            return None
        call_id = block["tool_use_id"]
        if block["type"] != "tool_result" or block["content"].__class__ is not str or not _SAFE_ID.match(call_id):
            return None
        paths.append(("content", position, "content"))
    return paths


def _gemini_paths(
    record: Any, ids: tuple[str, ...], value: Any, context: dict[str, Any]
) -> list[tuple[Any, ...]] | None:
    """Where the outputs are in a user content of ``functionResponse`` parts alone, each
    ``{"name", "response": {"output": text}, "id"}``; the names are checked by
    :func:`_gemini_names`, once a record is edited."""
    parts = record.get("parts")
    if list(record) != ["role", "parts"] or record["role"] != "user" or parts.__class__ is not list:
        return None
    paths: list[tuple[Any, ...]] = []
    for position, part in enumerate(parts):
        body = part.get("functionResponse") if part.__class__ is dict and len(part) == 1 else None
        if body.__class__ is not dict or list(body) != ["name", "response", "id"]:
            return None
        response = body["response"]
        if response.__class__ is not dict or list(response) != ["output"] or response["output"].__class__ is not str:
            return None
        if body["id"] not in ids:
            return None
        paths.append(("parts", position, "functionResponse", "response", "output"))
    return paths


def _gemini_names(record: Any, value: Any, context: dict[str, Any]) -> bool:
    """Whether each ``functionResponse`` of an edited record (of :func:`_gemini_paths`'
    shape) has the name of the first call of its id (what the Gemini writer names it),
    in a camelCase file (read once a conversation, when a record is edited)."""
    if "camel" not in context:
        from ctxmgr.formats._gemini_spelling import spelling

        context["camel"] = spelling(value) == "camel"
    if not context["camel"]:
        return False
    for part in record["parts"]:
        body = part["functionResponse"]
        if _first_call_name(body["id"], value, context) != body["name"]:
            return False
    return True


def _first_call_name(call_id: str, value: Any, context: dict[str, Any]) -> str | None:
    """The name of the first ``functionCall`` of id ``call_id`` in a Gemini conversation,
    as :func:`_gemini_call_names` gives it: looked up in the record where the outline's
    call ids (``context["calls"]``, the messages' from ``context["offset"]``) first hold
    it, when that record has it (the outline also holds the ids it minted for calls
    without one); else every call read once."""
    calls = context.get("calls")
    if calls is not None:
        first = context.get("first")
        if first is None:
            first = context["first"] = {}
            for position, ids in enumerate(calls):
                for each in ids:
                    first.setdefault(each, position)
        index = first.get(call_id)
        if index is not None:
            contents = value if value.__class__ is list else value["contents"]
            for part in contents[index - context["offset"]]["parts"]:
                call = part.get("functionCall")
                if call.__class__ is dict and call.get("id") == call_id:
                    name: str = call["name"]  # (a string: the outline read it)
                    return name
    if "names" not in context:
        context["names"] = _gemini_call_names(value)
    found: str | None = context["names"].get(call_id)
    return found


def _gemini_call_names(value: Any) -> dict[str, str]:
    """The name of the first ``functionCall`` of each id in a Gemini conversation."""
    names: dict[str, str] = {}
    for record in value if value.__class__ is list else value.get("contents") or ():
        for part in record.get("parts") or ():
            call = part.get("functionCall") if part.__class__ is dict else None
            if call.__class__ is dict and call.get("id").__class__ is str and call.get("name").__class__ is str:
                names.setdefault(call["id"], call["name"])
    return names


_LANGCHAIN_TOOL_KEYS = [
    "content", "additional_kwargs", "response_metadata", "type", "name", "id", "tool_call_id", "artifact", "status",
]  # fmt: skip


def _langchain_paths(
    record: Any, ids: tuple[str, ...], value: Any, context: dict[str, Any]
) -> list[tuple[Any, ...]] | None:
    """Where the output is in a ``{"type": "tool", "data": {...}}`` record holding what
    the LangChain writer writes for an edited tool message: every field of a
    ``ToolMessage`` at its default, a string ``content``, status ``success``."""
    data = record.get("data")
    if list(record) != ["type", "data"] or record["type"] != "tool" or data.__class__ is not dict:
        return None
    if list(data) != _LANGCHAIN_TOOL_KEYS or data["content"].__class__ is not str:
        return None
    if data["additional_kwargs"] != {} or data["response_metadata"] != {} or data["type"] != "tool":
        return None
    if data["name"] is not None or data["id"] is not None or data["artifact"] is not None:
        return None
    if data["status"] != "success" or data["tool_call_id"] not in ids:
        return None
    return [("data", "content")]


BLOCK_CUTS: dict[str, Callable[[Any, tuple[str, ...], Any, dict[str, Any]], list[tuple[Any, ...]] | None]] = {
    "anthropic": _anthropic_paths,
    "gemini": _gemini_paths,
    "langchain": _langchain_paths,
    "native": lambda record, ids, value, context: _native_paths(record),
}
"""Per format, where a tool message's results are in its record when the format's writer
would write the message, edited, as that record with new texts (``None`` otherwise), but
for what :func:`confirmed` checks of an edited record. (Native's truncation walks every
message, :func:`_truncate_native`: a result may be in any.)"""


def confirmed(line_format: str, record: Any, value: Any, context: dict[str, Any]) -> bool:
    """What the writer needs of an edited record beyond :data:`BLOCK_CUTS`' shape, read
    only for a record edited: a Gemini response's name (see :func:`_gemini_names`)."""
    return line_format != "gemini" or _gemini_names(record, value, context)


def edited_records(
    outline: Outline,
    line_format: str,
    edits: dict[int, tuple[Any, str, str]],
    settings: Settings,
    **counts: int,
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]]:
    """The outline of the records with ``edits`` (message index: its record, the text of
    its tool result, which is the message's whole counted text, and the new text)
    rendered as the format's writer renders the edited message, with the report and
    figures the full path gives."""
    _, _, rendered = CUTS[line_format]
    changes = {}
    least = 0  # the units of the new texts
    for index, (record, old, new) in edits.items():
        units = text_units(new)
        changes[index] = (record, rendered(record, new), units - text_units(old), len(old) - len(new))
        least += units
    return changed(outline, line_format, changes, settings, least=least, listed=None, **counts)


def report_counters(
    *,
    messages_dropped: int = 0,
    cleared_results: int = 0,
    truncated_outputs: int = 0,
    chars_removed: int = 0,
    tokens_removed: int = 0,
) -> dict[str, int]:
    """The counters of a compaction manager's report as
    :func:`ctxmgr.state._compaction.totals` gives them (in ``COUNTERS``' order, removals
    never below 0), built on an outline without a report a line."""
    return {
        "messages_dropped": messages_dropped,
        "cleared_results": cleared_results,
        "truncated_outputs": truncated_outputs,
        "chars_removed": max(0, chars_removed),
        "tokens_removed": max(0, tokens_removed),
    }


def changed(
    outline: Outline,
    line_format: str,
    changes: dict[int, tuple[Any, Any, int, int]],
    settings: Settings,
    *,
    least: int = 0,
    listed: tuple[Any, list[Any], int] | None = None,
    **counts: int,
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]]:
    """The outline of the records with ``changes`` (message index: its record, the record
    written in its place, and the units and characters that changes the message by),
    with the report's counters and the figures the full path gives (the counters
    :func:`~ctxmgr.state._compaction.totals` gives of the manager's report, which warns
    of nothing here). ``least``: the units of the new
    texts together (the output's units are at least as many). ``listed``: the
    conversation, its list of records and the offset of message ``i``'s record in it
    (``i - offset``), where the outline's ``rebuild`` of every message is that list in
    the conversation (Anthropic, Gemini, LangChain): the edited records are put in
    place in a copy of it, without a rebuild or a search.

    The messages' units are counted only for a measured run, or for a change whose
    tokens removed depend on them: the estimate is the total units // 4, so a change by
    a whole number of tokens removes exactly that many whatever the total (once the
    output holds 4 units or more: ``least``)."""
    roles = outline.roles
    count = len(roles)
    units_delta = sum([change[2] for change in changes.values()])
    whole_tokens = not units_delta % UNITS_PER_TOKEN and least >= UNITS_PER_TOKEN
    if settings.measure or (changes and not whole_tokens):
        units_before = sum(outline.units()) if count else 0
        measured = tokens_from_units([units_before]) if count else 0
        after = tokens_from_units([units_before + units_delta]) if count else 0
        tokens_removed = measured - after
    else:
        measured = after = 0
        tokens_removed = -units_delta // UNITS_PER_TOKEN  # (0 without a change)
    # The counters of the manager's report (an edit warns of nothing).
    report = report_counters(
        cleared_results=counts.get("cleared_results", 0),
        truncated_outputs=counts.get("truncated_outputs", 0),
        chars_removed=sum([change[3] for change in changes.values()]),
        tokens_removed=tokens_removed,
    )
    if not settings.measure:
        measured = after = 0
    if not changes:
        return outline, None, report, Figures(count, count, measured, measured), ()
    if line_format == "native":
        changes = {i: (record, _raw_edited(record, new), *rest) for i, (record, new, *rest) in changes.items()}
    edited: Any
    if listed is not None:
        value, records, offset = listed
        cut = list(records)
        for index, (_, new_record, _, _) in changes.items():
            cut[index - offset] = new_record
        edited = cut if records is value else {**value, LIST_KEYS[line_format]: cut}
    else:
        by_record = {id(record): new for record, new, _, _ in changes.values()}
        whole = outline.rebuild(list(range(count)))  # every record, in place
        records = whole if whole.__class__ is list else whole[LIST_KEYS[line_format]]
        cut = [by_record.get(id(record), record) for record in records]
        edited = cut if whole.__class__ is list else {**whole, LIST_KEYS[line_format]: cut}
    figures = Figures(count, count, measured, after, changed=True)
    # The outline with a rebuild of the edited records (dataclasses.replace costs more a line).
    roles, calls, results = outline.roles, outline.calls, outline.results
    new = Outline(roles, calls, results, lambda kept: edited, outline.units, outline.chars, outline.records)
    return new, list(range(count)), report, figures, changes.keys()


def plain_chat_result(record: dict[str, Any]) -> bool:
    """A tool record of ``role``, ``tool_call_id`` and ``content`` (and a string
    ``name``, which the writer carries into the edited result)."""
    named = "name" in record
    return len(record) == 3 + named and "tool_call_id" in record and (not named or record["name"].__class__ is str)


def _plain_responses_result(record: dict[str, Any]) -> bool:
    """A ``function_call_output`` item of ``type``, ``call_id`` and ``output`` alone."""
    return len(record) == 3 and record.get("type") == "function_call_output" and "call_id" in record


CUTS: dict[str, tuple[str, Callable[[dict[str, Any]], bool], Callable[[dict[str, Any], str], dict[str, Any]]]] = {
    "openai-chat": (
        "content",
        plain_chat_result,
        lambda record, text: {**record, "content": text},
    ),
    "openai-responses": (
        "output",
        _plain_responses_result,
        lambda record, text: {**record, "output": text},
    ),
}
"""Where ``--max-tool-output`` cuts a result in its record, per format: the key holding
the output, which records are in the shape the format's writer renders for an edited
result (a tool message of one such record, its output a string), and that rendering.
Anthropic, Gemini and LangChain: :data:`BLOCK_CUTS`."""
LIST_KEYS = {
    "native": "context",
    "openai-chat": "messages",
    "openai-responses": "input",
    "anthropic": "messages",
    "gemini": "contents",
    "langchain": "messages",
}
