"""The trim fast path: a plain trim applied to a conversation's outline, without building
a single message.

The same rule (:meth:`MessageContextManager.select`) on the same records gives the same
bytes as the full path; only the ``Message`` per record is skipped (and pydantic, and
the format readers). It declines (``None``) whatever needs the full reader: a
conversation its format's outline (:mod:`ctxmgr.formats._outlines`) does not find plainly
well-formed, so errors and the reader's warnings are worded by the full reader. The
provider-rule problems of what is kept (a reused call id, a result cut from its call)
are found and worded here, from the outline's call ids, exactly as the full path words
them; only under ``--strict`` does a document with one go the full path, which then
writes nothing. Whether a run may take it at all is
:func:`ctxmgr.files._settings.plain_trim`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from functools import cache
from itertools import chain, pairwise
from typing import TYPE_CHECKING, Any, cast

from ctxmgr import _io as io, formats
from ctxmgr._shapes import outline_clear
from ctxmgr.errors import InputError
from ctxmgr.files._figures import Figures, outline_figures, summary_field_units
from ctxmgr.files._reading import UNPARSED, is_conversation_record
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings, plain_trim
from ctxmgr.formats._base import Outline
from ctxmgr.formats._meaning import may_mean_nothing
from ctxmgr.formats._outlines import OUTLINES
from ctxmgr.state._managers import BaseContextManager, MessageContextManager, trim_selection
from ctxmgr.state._rules import unsafe_cuts_of
from ctxmgr.state._tokens import UNITS_PER_TOKEN, text_units, tokens_from_units

if TYPE_CHECKING:
    from ctxmgr.state._budget import TokenBudgetContextManager
    from ctxmgr.state._clearing import ToolResultClearingManager
    from ctxmgr.state._compaction import ChainContextManager
    from ctxmgr.state._truncation import ToolOutputTruncationManager

__all__ = ["fast_document", "fast_line"]


def fast_document(
    value: Any,
    layout: str,
    pretty: bool,
    name: str,
    manager: BaseContextManager[Any],
    settings: Settings,
    result: FileResult,
) -> tuple[bytes, bool] | None:
    """Trim one whole parsed document from its outline: ``(output, changed)``, or ``None``
    for the full path. A 100,000-message file then costs little more than parsing and
    writing it. Not when the document's diff view (message by message) is to be shown."""
    if layout != "document" or not isinstance(value, dict | list):
        return None
    if settings.keep_outcomes or not _fast_rule(manager, settings):
        return None
    try:
        detected = settings.fmt or formats.detect_name(value, source=name)
    except InputError:
        return None  # the full path reports it, with the closest format's explanation
    if settings.fmt not in (None, detected):
        return None
    # Under --strict a rule problem means nothing is written: the full path does that.
    trimmed = _trim_outline(
        value, manager, detected, result, settings, decline_problems=settings.strict, named=settings.fmt is not None
    )
    if trimmed is None:
        return None
    kept, outline, problems = trimmed
    result.format = detected
    result.warnings.extend(problems)
    output = io.dumps(value if kept is None else outline.rebuild(kept), "document", pretty=pretty)
    return output, kept is not None


def fast_line(
    number: int,
    raw: bytes,
    name: str,
    manager: BaseContextManager[Any],
    settings: Settings,
    result: FileResult,
    first_format: list[str],
) -> tuple[bytes | None, Any]:
    """Trim one dataset line from its outline: ``(output, record)``, the output ``None``
    for the full path, which is then handed the record if it was parsed here (else
    :data:`~ctxmgr.files._reading.UNPARSED`).

    ``first_format`` holds the dataset's format once a line has settled it; the first
    line the fast path trims settles it (its format is found without the readers).
    """
    if not _fast_rule(manager, settings):
        return None, UNPARSED
    record = io.loads(raw, name, line=number)
    candidates = first_format or _light_formats(record, name, settings)
    line_format = candidates[0] if candidates else None
    if line_format is None or settings.fmt not in (None, line_format):
        return None, record
    trimmed = _trim_outline(record, manager, line_format, result, settings, line=number)
    if trimmed is None:
        return None, record
    if not first_format:  # the first line settles the dataset's format (and those it also reads as)
        first_format.extend(candidates)
        result.format = line_format
    kept, outline, problems = trimmed
    if problems:
        (result.errors if settings.strict else result.warnings).extend(f"line {number}: {p}" for p in problems)
    if kept is None:
        return raw + b"\n", record
    output = io.dumps(outline.rebuild(kept), "document")  # deep nesting included (see io.dumps)
    return (output[:-1] + b"\r\n" if raw.endswith(b"\r") else output), record


def _trim_outline(
    value: Any,
    manager: BaseContextManager[Any],
    line_format: str,
    result: FileResult,
    settings: Settings,
    *,
    decline_problems: bool = False,
    line: int | None = None,
    named: bool = False,
) -> tuple[list[int] | None, Outline, list[str]] | None:
    """``(kept, outline, problems)``: the trim's choice on ``value``'s outline (``kept``
    ``None`` for all), counted into ``result``, and the provider-rule problems of what is
    kept, worded as the full path words them; ``None`` if there is no outline, or there
    are problems and ``decline_problems``, or when a whole file read under a ``named``
    format may mean nothing in it (the full reader judges that)."""
    outline_of = OUTLINES.get(line_format)
    outline = None if outline_of is None else outline_of(value)
    if outline is None or (named and may_mean_nothing(outline)):
        return None
    figures = None
    edited: Collection[int] = ()
    if isinstance(manager, MessageContextManager):
        roles = outline.roles
        if manager.remove_tool_msgs:
            kept = manager.select(roles, [bool(c) for c in outline.calls])
        else:
            kept = trim_selection(roles, manager.max_messages)  # what select() does then
        report = None
    elif type(cast("ChainContextManager", manager).managers[0]) is _compaction().ToolOutputTruncationManager:
        truncated = _truncate_outline(value, outline, line_format, cast("ChainContextManager", manager), settings)
        if truncated is None:
            return None
        outline, kept, report, figures, edited = truncated
    elif _clearing(cast("ChainContextManager", manager).managers[0]):
        cleared = _clear_outline(value, outline, line_format, cast("ChainContextManager", manager), settings)
        if cleared is None:
            return None
        outline, kept, report, figures, edited = cleared
    else:
        budgeted = _budget_outline(outline, manager)
        if budgeted is None:
            return None
        kept, report = budgeted
    problems = _rule_problems(outline, kept, line_format, edited) if settings.check_rules else []
    if problems and decline_problems:
        return None
    if figures is None:
        units = summary_field_units(line_format, value)
        figures = outline_figures(outline, kept, measure=settings.measure, summary_units=units)
    result.count(figures)
    if report is not None:  # as the full path counts a compaction manager's report
        result.add_compaction(_compaction().totals([report]))
        result.add_compaction_warnings(report.warnings, line)
    return kept, outline, problems


def _fast_rule(manager: BaseContextManager[Any], settings: Settings) -> bool:
    """Whether the fast path may apply ``manager``'s rule: the plain trim's, a token
    budget alone (``trim --max-tokens``, with ``-n`` and ``--start-on`` too) without
    ``pin_match`` (which reads the messages' text), or the tool-output cut alone
    (``trim --max-tool-output``; see :func:`_truncate_outline`), writing the same format."""
    if plain_trim(manager, settings):
        return True
    if not settings.fast or settings.to is not None or settings.keep_outcomes or settings.fix_call_ids:
        return False
    compaction = _compaction()
    if type(manager) is not compaction.ChainContextManager or len(cast("ChainContextManager", manager).managers) != 1:
        return False
    budget = cast("ChainContextManager", manager).managers[0]
    if type(budget) is compaction.ToolOutputTruncationManager or _clearing(budget):
        return True
    return (
        type(budget) is compaction.TokenBudgetContextManager and not cast("TokenBudgetContextManager", budget).pin_match
    )


@cache
def _compaction() -> Any:
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


def _clearing(manager: BaseContextManager[Any]) -> bool:
    """Whether ``manager`` is a :class:`~ctxmgr.state.ToolResultClearingManager` (its
    module, which loads the model, is only looked at once something has loaded it)."""
    module = sys.modules.get("ctxmgr.state._clearing")
    return module is not None and type(manager) is module.ToolResultClearingManager


def _budget_outline(outline: Outline, manager: BaseContextManager[Any]) -> tuple[list[int] | None, Any] | None:
    """The token budget's choice on an outline (``None`` for all kept) and its
    :class:`~ctxmgr.state.CompactionReport`, the same as the budget gives on the
    conversation's messages; ``None`` (the full path) when the outline does not count
    characters, or holds an empty id (the model's rules do not count one as an id)."""
    compaction = _compaction()
    assert type(manager) is compaction.ChainContextManager
    budget = cast("TokenBudgetContextManager", cast("ChainContextManager", manager).managers[0])
    assert type(budget) is compaction.TokenBudgetContextManager
    chars, calls, results, roles = outline.chars, outline.calls, outline.results, outline.roles
    if chars is None or "" in chain.from_iterable(calls) or "" in chain.from_iterable(results):
        return None
    warnings: list[str] = []
    pinned = budget.pinned_positions(len(roles), calls, results, warnings)
    units = outline.units()
    selected, over = budget.select(roles, units, lambda: unsafe_cuts_of(roles, calls, results), pinned)
    warnings.extend(over)
    chosen = set(selected)
    gone = [i for i in range(len(roles)) if i not in chosen]
    units_before = sum(units)
    report = compaction.measured_report(
        type(budget).__name__,
        units_before=units_before if roles else None,
        units_after=units_before - sum(units[i] for i in gone) if selected else None,
        chars_removed=sum(map(chars, gone)),
        messages_dropped=len(gone),
        warnings=warnings,
    )
    return (selected if gone else None), report


def _truncate_outline(
    value: Any, outline: Outline, line_format: str, manager: ChainContextManager, settings: Settings
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]] | None:
    """``--max-tool-output`` alone on an outline: ``(outline, kept, report, figures,
    edited)``, the outline's ``rebuild`` giving the records with each long tool result cut
    in its record (those of ``edited``), as the writer writes the edited message; ``None``
    (the full path) for what the writer would not write that way (see :data:`_CUTS`)."""
    if line_format in _BLOCK_CUTS:
        return _truncate_blocks(value, outline, line_format, manager, settings)
    cut_of = _CUTS.get(line_format)
    if cut_of is None or outline.chars is None or outline.records is None:
        return None
    key, plain, _ = cut_of
    compaction = _compaction()
    limit = cast("ToolOutputTruncationManager", manager.managers[0]).max_tool_output
    roles = outline.roles
    units = outline.units()
    edits: dict[int, tuple[Any, str]] = {}
    for index, role in enumerate(roles):
        if role != "tool":
            continue
        run = outline.records(index)
        record = run[0] if len(run) == 1 else None
        text = None if record is None else record.get(key)
        if text.__class__ is not str:
            return None  # content parts, or several records: the model's output is not their text
        if units[index] // UNITS_PER_TOKEN <= limit:
            continue  # (a tool message's units are its output's)
        if record is None or not plain(record):
            return None  # more than the writer writes: the full path
        if not text.startswith(compaction.CLEARED_PREFIX):
            edits[index] = (record, compaction.truncate_output(text, limit))
    return _edited(outline, line_format, units, edits, settings, truncated_outputs=len(edits))


def _truncate_blocks(
    value: Any, outline: Outline, line_format: str, manager: ChainContextManager, settings: Settings
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]] | None:
    """``--max-tool-output`` alone on an Anthropic, Gemini or LangChain outline, as
    :func:`_truncate_outline` for the OpenAI formats: each result over the limit is cut in
    its record where the format's writer would write the edited message as that same
    record with the new text (see :data:`_BLOCK_CUTS`); ``None`` (the full path) for a
    record to cut that is not in that shape, or for two cut tool messages in a row (the
    writers merge those into one record)."""
    if outline.chars is None:
        return None
    listed = value if value.__class__ is list else value.get(_LIST_KEYS[line_format])
    roles = outline.roles
    offset = len(roles) - len(listed)  # a system prompt held apart
    if offset not in (0, 1):
        return None
    paths_of = _BLOCK_CUTS[line_format]
    compaction = _compaction()
    limit = cast("ToolOutputTruncationManager", manager.managers[0]).max_tool_output
    over = (limit + 1) * UNITS_PER_TOKEN  # a text of this many units or more is cut
    units = outline.units()
    changes: dict[int, tuple[Any, Any, int, int]] = {}
    context: dict[str, Any] = {}
    cuts = 0
    last_cut = -2  # the last message cut, and the last one that is not a system message
    previous = -1
    for index, role in enumerate(roles):
        if role == "system":
            continue
        if role != "tool" or units[index] < over or index < offset:
            previous = index
            continue  # nothing in the message can be over (a message counts its results' text)
        record = listed[index - offset]
        paths = paths_of(record, outline.results[index], value, context)
        if paths is None:
            return None  # not in the writer's shape: the full path
        new = record
        units_delta = chars_delta = 0
        for path in paths:
            text = _at(record, path)
            if 8 * len(text) < over or text.startswith(compaction.CLEARED_PREFIX):
                continue  # (at most 8 units a character)
            before = len(text) if text.isascii() else text_units(text)
            if before < over:
                continue
            cut = compaction.truncate_output(text, limit)
            new = _replaced(new, path, cut)
            units_delta += text_units(cut) - before
            chars_delta += len(text) - len(cut)
            cuts += 1
        if new is not record:
            if last_cut == previous and line_format in _MERGING:
                return None  # the writer merges two edited tool messages in a row
            changes[index] = (record, new, units_delta, chars_delta)
            last_cut = index
        previous = index
    return _changed(outline, line_format, units, changes, settings, truncated_outputs=cuts)


def _at(record: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        record = record[step]
    return record


def _replaced(record: Any, path: tuple[Any, ...], text: str) -> Any:
    """A copy of ``record`` with the value at ``path`` replaced by ``text`` (the
    containers on the path copied, everything else shared)."""
    if not path:
        return text
    step, rest = path[0], path[1:]
    copy = list(record) if record.__class__ is list else dict(record)
    copy[step] = _replaced(record[step], rest, text)
    return copy


_MERGING = frozenset({"anthropic", "gemini"})
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
    ``{"name", "response": {"output": text}, "id"}`` with the name of the first call of
    its id (what the Gemini writer names it), in a camelCase file."""
    parts = record.get("parts")
    if list(record) != ["role", "parts"] or record["role"] != "user" or parts.__class__ is not list:
        return None
    if "names" not in context:
        from ctxmgr.formats._gemini_spelling import spelling

        context["names"] = None if spelling(value) != "camel" else _gemini_call_names(value)
    names = context["names"]
    if names is None:
        return None
    paths: list[tuple[Any, ...]] = []
    for position, part in enumerate(parts):
        body = part.get("functionResponse") if part.__class__ is dict and len(part) == 1 else None
        if body.__class__ is not dict or list(body) != ["name", "response", "id"]:
            return None
        response = body["response"]
        if response.__class__ is not dict or list(response) != ["output"] or response["output"].__class__ is not str:
            return None
        if body["id"] not in ids or names.get(body["id"]) != body["name"]:
            return None
        paths.append(("parts", position, "functionResponse", "response", "output"))
    return paths


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


_BLOCK_CUTS: dict[str, Callable[[Any, tuple[str, ...], Any, dict[str, Any]], list[tuple[Any, ...]] | None]] = {
    "anthropic": _anthropic_paths,
    "gemini": _gemini_paths,
    "langchain": _langchain_paths,
}
"""Per format, where a tool message's results are in its record when the format's writer
would write the message, edited, as that record with new texts (``None`` otherwise)."""


def _clear_outline(
    value: Any, outline: Outline, line_format: str, manager: ChainContextManager, settings: Settings
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]] | None:
    """``--clear-tool-results`` alone (no ``--clear-tool-inputs``, no ``--max-tokens``) on
    an OpenAI chat outline (Anthropic, Gemini, LangChain: :func:`_clear_blocks`), as
    :func:`_truncate_outline` for ``--max-tool-output``: the
    results of all but the ``keep_tool_results`` most recent answered calls (none of an
    excluded tool) replaced by the manager's placeholder in their records; ``None`` (the
    full path) for a record the writer would not write that way."""
    clearing = cast("ToolResultClearingManager", manager.managers[0])
    if clearing.clear_tool_inputs or clearing.max_tokens is not None:
        return None
    if line_format in _BLOCK_CUTS:
        return _clear_blocks(value, outline, line_format, clearing, settings)
    if line_format != "openai-chat" or outline.chars is None or outline.records is None:
        return None
    records = outline.records
    calls = _chat_calls(outline, records)
    if calls is None:
        return None
    answered = [call for call in calls if call[3]]
    keep = clearing.keep_tool_results
    protected = {id(call) for call in (answered[len(answered) - keep :] if keep else [])}
    prefix = _compaction().CLEARED_PREFIX
    edits: dict[int, tuple[Any, str]] = {}
    for call in answered:
        call_id, name, _, answers = call
        if name in clearing.exclude_tools or id(call) in protected:
            continue
        for index in answers:
            (record,) = records(index)
            text = record.get("content")
            if text.__class__ is not str or not _plain_chat_result(record):
                return None  # content parts or more keys: the full path
            placeholder = f"{prefix}{name} {call_id}, {len(text):,} characters]"
            if not text.startswith(prefix) and len(text) > len(placeholder):
                edits[index] = (record, placeholder)
    return _edited(outline, line_format, outline.units(), edits, settings, cleared_results=len(edits))


def _clear_blocks(
    value: Any, outline: Outline, line_format: str, clearing: ToolResultClearingManager, settings: Settings
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]] | None:
    """``--clear-tool-results`` alone on an Anthropic, Gemini or LangChain outline: the
    calls found as ``ToolResultClearingManager`` finds them (names read from the
    records), each result to clear replaced in its record where the writer would write
    the edited message as that record (:data:`_BLOCK_CUTS`); ``None`` (the full path)
    otherwise, or for two edited tool messages in a row where the writer merges them."""
    if outline.chars is None:
        return None
    listed = value if value.__class__ is list else value.get(_LIST_KEYS[line_format])
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
    prefix = _compaction().CLEARED_PREFIX
    paths_of = _BLOCK_CUTS[line_format]
    up, id_key = _RESULT_IDS[line_format]
    context: dict[str, Any] = {}
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
            for path in paths:
                text = _at(record, path)
                placeholder = f"{prefix}{name} {call_id}, {len(text):,} characters]"
                if _at(record, path[:up])[id_key] == call_id and _clears_text(text, placeholder, prefix):
                    new = _replaced(record if new is None else new, path, placeholder)
                    units_delta += text_units(placeholder) - text_units(text)
                    chars_delta += len(text) - len(placeholder)
                    cleared += 1
            if new is not None:
                changes[index] = (record, new, units_delta, chars_delta)
    if _merges(line_format, roles, offset, changes):
        return None
    return _changed(outline, line_format, outline.units(), changes, settings, cleared_results=cleared)


def _merges(line_format: str, roles: list[str], offset: int, changes: Collection[int]) -> bool:
    """Whether the writer would merge two of the edited tool messages (two in a row, with
    only system messages between them, in Anthropic and Gemini)."""
    talking = [index for index in range(offset, len(roles)) if roles[index] != "system"]
    return line_format in _MERGING and any(a in changes and b in changes for a, b in pairwise(talking))


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


_CALL_NAMES: dict[str, Callable[[Any], list[tuple[Any, str]]]] = {
    "anthropic": _anthropic_calls,
    "gemini": _gemini_calls,
    "langchain": _langchain_calls,
}
"""The ``(id, name)`` of each call a record makes, as the reader's message names them."""
_RESULT_IDS = {"anthropic": (-1, "tool_use_id"), "gemini": (-2, "id"), "langchain": (-1, "tool_call_id")}
"""Where a result's call id is beside its text (of :data:`_BLOCK_CUTS`' paths): the
steps back from the text, and the key."""


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


def _edited(
    outline: Outline,
    line_format: str,
    units: list[int],
    edits: dict[int, tuple[Any, str]],
    settings: Settings,
    **counts: int,
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]]:
    """The outline of the records with ``edits`` (message index: its record and the new
    text of its tool result) rendered as the format's writer renders the edited message,
    with the report and figures the full path gives."""
    _, _, rendered = _CUTS[line_format]
    chars = outline.chars
    assert chars is not None
    changes = {
        index: (record, rendered(record, text), text_units(text) - units[index], chars(index) - len(text))
        for index, (record, text) in edits.items()
    }
    return _changed(outline, line_format, units, changes, settings, **counts)


def _changed(
    outline: Outline,
    line_format: str,
    units: list[int],
    changes: dict[int, tuple[Any, Any, int, int]],
    settings: Settings,
    **counts: int,
) -> tuple[Outline, list[int] | None, Any, Figures, Collection[int]]:
    """The outline of the records with ``changes`` (message index: its record, the record
    written in its place, and the units and characters that changes the message by),
    with the report and figures the full path gives."""
    roles = outline.roles
    units_before = sum(units)
    units_after = units_before + sum(change[2] for change in changes.values())
    report = _compaction().measured_report(
        "ToolOutputTruncationManager" if "truncated_outputs" in counts else "ToolResultClearingManager",
        units_before=units_before if roles else None,
        units_after=units_after if roles else None,
        chars_removed=sum(change[3] for change in changes.values()),
        **counts,
    )
    count = len(roles)
    measured = tokens_from_units([units_before]) if count and settings.measure else 0
    if not changes:
        return outline, None, report, Figures(count, count, measured, measured), ()
    by_record = {id(record): new for record, new, _, _ in changes.values()}
    whole = outline.rebuild(list(range(count)))  # every record, in place
    listed = whole if whole.__class__ is list else whole[_LIST_KEYS[line_format]]
    cut = [by_record.get(id(record), record) for record in listed]
    edited = cut if whole.__class__ is list else {**whole, _LIST_KEYS[line_format]: cut}
    after = tokens_from_units([units_after]) if settings.measure else 0
    figures = Figures(count, count, measured, after, changed=True)
    return replace(outline, rebuild=lambda kept: edited), list(range(count)), report, figures, changes.keys()


def _plain_chat_result(record: dict[str, Any]) -> bool:
    """A tool record of ``role``, ``tool_call_id`` and ``content`` (and a string
    ``name``, which the writer carries into the edited result)."""
    named = "name" in record
    return len(record) == 3 + named and "tool_call_id" in record and (not named or record["name"].__class__ is str)


def _plain_responses_result(record: dict[str, Any]) -> bool:
    """A ``function_call_output`` item of ``type``, ``call_id`` and ``output`` alone."""
    return len(record) == 3 and record.get("type") == "function_call_output" and "call_id" in record


_CUTS: dict[str, tuple[str, Callable[[dict[str, Any]], bool], Callable[[dict[str, Any], str], dict[str, Any]]]] = {
    "openai-chat": (
        "content",
        _plain_chat_result,
        lambda record, text: {**record, "content": text},
    ),
    "openai-responses": (
        "output",
        _plain_responses_result,
        lambda record, text: {"type": "function_call_output", "call_id": record["call_id"], "output": text},
    ),
}
"""Where ``--max-tool-output`` cuts a result in its record, per format: the key holding
the output, which records are in the shape the format's writer renders for an edited
result (a tool message of one such record, its output a string), and that rendering.
Anthropic, Gemini and LangChain: :data:`_BLOCK_CUTS`."""
_LIST_KEYS = {
    "openai-chat": "messages",
    "openai-responses": "input",
    "anthropic": "messages",
    "gemini": "contents",
    "langchain": "messages",
}


def _rule_problems(
    outline: Outline, kept: list[int] | None, line_format: str, edited: Collection[int] = ()
) -> list[str]:
    """The provider-rule problems of the kept messages, as the full path words them
    (:func:`ctxmgr.files._compaction.rule_problems`): each message named by its number
    in the input, an ``edited`` one (a cut tool result) as the output's. The yes-or-no
    check runs first; a clean cut, the usual case, builds nothing."""
    if not outline.has_tools:
        return []
    roles, calls, results = outline.roles, outline.calls, outline.results
    chosen = range(len(roles)) if kept is None else kept
    target = line_format if line_format != "native" else None
    if outline_clear(roles, calls, results, chosen, target=target):
        return []
    from ctxmgr._validate import check_outline  # only when there is a problem to word

    def name(position: int) -> str:
        index = chosen[position]
        return f"output message {position}" if index in edited else f"message {index}"

    from ctxmgr._shapes import fails_for  # what the format's own provider accepts is no warning

    problems = check_outline(outline, target=target, indices=chosen, name=name)
    return [f"{name(p.index)}: {p.message}" for p in problems if fails_for(p, line_format, None)]


def _light_formats(record: Any, name: str, settings: Settings) -> list[str]:
    """The first line's format, then the others it reads as, found without the readers
    (for the fast path).

    An empty list leaves the line to the full path (which also words any error).
    """
    if settings.fmt is not None:
        return [settings.fmt]
    try:
        return formats.detect_candidates(record, source=name) if is_conversation_record(record) else []
    except InputError:
        return []
