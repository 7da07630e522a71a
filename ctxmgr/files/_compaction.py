"""Compacting one conversation through a manager: a whole document, or one dataset line.

Each function takes bytes already read, runs the fast path (:mod:`ctxmgr.files._fastpath`)
or the full path (format reader, manager, writer, provider-rule check), counts the
result into a :class:`~ctxmgr.files._results.FileResult`, and gives the bytes to write.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ctxmgr import _io as io, formats
from ctxmgr.errors import CtxmgrError, InputError
from ctxmgr.files._fastpath import fast_document, fast_line
from ctxmgr.files._reading import collector_paused, is_array_dataset
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings
from ctxmgr.files._sinks import Sink, is_in_place
from ctxmgr.formats._base import AMBIGUITY_NOTE, Conversation
from ctxmgr.state._managers import BaseContextManager

if TYPE_CHECKING:
    from ctxmgr._shapes import Problem
    from ctxmgr.state.message import Message

# The model (pydantic), the format readers and the pipeline are imported on the full
# path only: a trim the fast path settles never needs them, and importing them costs
# more than trimming a small file.

__all__ = ["compact_array_dataset", "compact_dataset_line", "compact_document", "finish_dataset", "rule_problems"]


async def compact_document(
    data: bytes, name: str, manager: BaseContextManager[Any], sink: Sink, settings: Settings, result: FileResult
) -> None:
    """Compact the document ``data`` (a file holding one conversation) into ``sink``."""
    value, layout, pretty = io.parse(data, name)
    if layout == "document" and is_array_dataset(value):
        await compact_array_dataset(value, pretty, _uses_crlf(data), name, manager, sink, settings, result)
        return
    fast = fast_document(value, layout, pretty, name, manager, settings, result)
    if fast is not None:
        output, changed = fast
        if _uses_crlf(data):
            output = output.replace(b"\n", b"\r\n")
        _write_or_abort(sink, output, result, changed or not is_in_place(sink, name), name, settings)
        return
    with collector_paused():
        conversation = formats.load_value(value, source=name, layout=layout, fmt=settings.fmt, whole_file=True)
    conversation.pretty = pretty
    conversation.summary_as = settings.summary_as
    result.format = conversation.format
    fixed = _fix_call_ids(conversation, settings, result)
    from ctxmgr._pipeline import acompact_conversation

    outcome = await acompact_conversation(conversation, manager)
    result.add(outcome, keep=settings.keep_outcomes, measure=settings.measure, to=settings.to)
    if fixed and not outcome.changed:
        result.changed_conversations += 1  # its ids changed: --check says so
    output = formats.dump(conversation, to=settings.to)
    if _uses_crlf(data):
        # Windows line endings stay Windows line endings (orjson writes "\n" only, and
        # escapes every newline inside strings, so each "\n" here ends a line).
        output = output.replace(b"\n", b"\r\n")
    result.warnings.extend(conversation.warnings)
    result.dropped.merge(conversation.dropped)
    result.note_dropped(settings.to, lossless=settings.lossless)
    if settings.lossless and result.dropped:
        sink.abort()
        return
    problems = rule_problems(conversation, settings, output, outcome.before)
    if problems and settings.strict:
        result.errors.extend(problems)
        sink.abort()
        return
    result.warnings.extend(problems)
    wanted = outcome.changed or fixed or settings.to is not None or not is_in_place(sink, name)
    _write_or_abort(sink, output, result, wanted, name, settings)


def _fix_call_ids(conversation: Conversation, settings: Settings, result: FileResult) -> bool:
    """``--fix-call-ids``: renumber the conversation's reused call ids (counted in
    ``result``); whether any was."""
    if not settings.fix_call_ids:
        return False
    from ctxmgr.formats._call_ids import fix_call_ids

    fixed = fix_call_ids(conversation)
    result.call_ids_fixed = (result.call_ids_fixed or 0) + fixed
    return fixed > 0


def _write_or_abort(sink: Sink, output: bytes, result: FileResult, wanted: bool, name: str, settings: Settings) -> None:
    """Write and commit ``output`` if it is ``wanted``, else leave the destination as it was."""
    if wanted:
        _refuse_live(sink, name, result, settings)
        sink.write(output)
        sink.commit()
        result.written = sink.name is not None
    else:
        sink.abort()


def _uses_crlf(data: bytes) -> bool:
    """Whether ``data`` ends its lines with CRLF (judged by its first line end)."""
    newline = data.find(b"\n")
    return newline > 0 and data[newline - 1 : newline] == b"\r"


def _refuse_live(sink: Sink, name: str, result: FileResult, settings: Settings) -> None:
    """An in-place rewrite of a file still being written is refused (see :mod:`ctxmgr.files._live`)."""
    if settings.force or not is_in_place(sink, name):
        return
    from ctxmgr import _format_registry as format_registry
    from ctxmgr.files._live import refuse_live

    fmt = result.format
    refuse_live(name, session_log=fmt in format_registry.NAMES and format_registry.entry(fmt).session_log)


def finish_dataset(name: str, sink: Sink, settings: Settings, result: FileResult, verify: Callable[[], None]) -> None:
    """Commit (or abort) a dataset's output once every line is written; ``verify`` runs
    first (it raises if the input changed while it was read)."""
    verify()
    result.note_dropped(settings.to, lossless=settings.lossless)
    if (settings.strict or settings.lossless) and result.errors:
        sink.abort()
        return
    if result.changed or settings.to is not None or not is_in_place(sink, name):
        _refuse_live(sink, name, result, settings)
        sink.commit()
        result.written = sink.name is not None
    else:
        sink.abort()


async def compact_array_dataset(
    value: list[Any],
    pretty: bool,
    crlf: bool,
    name: str,
    manager: BaseContextManager[Any],
    sink: Sink,
    settings: Settings,
    result: FileResult,
) -> None:
    """Compact a JSON array of conversations record by record, as a JSONL dataset's lines
    are (record ``n`` is numbered as line ``n`` would be), and write it back as an array,
    indented if it was read so."""
    result.kind = "dataset"
    if settings.fmt is None:
        from ctxmgr.files._loading import array_format

        settings = dataclasses.replace(settings, fmt=array_format(value, name))
    first_format: list[str] = []
    list_key = formats.adapter(settings.to).list_key if settings.to else None
    records: list[Any] = []
    for number, record in enumerate(value, start=1):
        raw = io.dumps(record, "document")[:-1]
        out = await compact_dataset_line(number, raw, name, manager, settings, result, first_format)
        written = record if out == raw + b"\n" else io.loads(out, name, line=number)
        if isinstance(written, list) and list_key is not None:
            # A writer's bare list (LangChain, a native list) would read back as one
            # conversation of messages, not as a record of this dataset.
            written = {list_key: written}
        records.append(written)
    result.note_dropped(settings.to, lossless=settings.lossless)
    if (settings.strict or settings.lossless) and result.errors:
        sink.abort()
        return
    output = io.dumps(records, "document", pretty=pretty)
    if crlf:
        output = output.replace(b"\n", b"\r\n")
    wanted = result.changed or settings.to is not None or not is_in_place(sink, name)
    _write_or_abort(sink, output, result, wanted, name, settings)


async def compact_dataset_line(
    number: int,
    raw: bytes,
    name: str,
    manager: BaseContextManager[Any],
    settings: Settings,
    result: FileResult,
    first_format: list[str],
) -> bytes:
    """The output of dataset line ``number`` (``raw``, without its line feed), with its
    line feed; blank lines, and bad ones under ``on_error="skip"``, as they were.

    ``first_format`` holds the dataset's format once its first line has settled it (a
    dataset holds one format); the caller keeps it from line to line.

    Raises:
        InputError: A bad line with ``on_error="fail"``.
    """
    if not raw.strip():
        return raw + b"\n"
    try:
        fast, record = fast_line(number, raw, name, manager, settings, result, first_format)
        if fast is not None:
            return fast
        return await _full_line(number, raw, name, manager, settings, result, first_format, record)
    except InputError as error:
        if settings.on_error == "fail":
            raise
        result.bad_lines.append(f"line {error.line or number}: {error.message}")
        return raw + b"\n"


async def _full_line(
    number: int,
    raw: bytes,
    name: str,
    manager: BaseContextManager[Any],
    settings: Settings,
    result: FileResult,
    first_format: list[str],
    record: Any,
) -> bytes:
    """A dataset line through the format reader, the manager and the writer."""
    from ctxmgr.files._loading import load_line

    expect, also = (first_format[0], tuple(first_format[1:])) if first_format else (None, ())
    conversation = load_line(number, raw, name, settings.fmt, expect, record, also=also)
    if not first_format:
        # Nothing settled the format before (see settled_format): this line does, with
        # the other formats it reads as (each line is then detected on its own).
        first_format.extend((conversation.format, *conversation.also_reads_as))
        result.format = conversation.format
    conversation.summary_as = settings.summary_as
    fixed = _fix_call_ids(conversation, settings, result)
    from ctxmgr._pipeline import acompact_conversation

    outcome = await acompact_conversation(conversation, manager)
    unchanged = not outcome.changed and not fixed and settings.to is None
    # A dataset's diff view shows totals: its lines' outcomes are not kept (they would
    # hold every message of the file in memory). The figures as written are read from
    # the line written (not from a second write of it).
    try:
        output = raw + b"\n" if unchanged else formats.dump(conversation, to=settings.to)
    except CtxmgrError:
        result.add(outcome, keep=False, measure=settings.measure, line=number, to=settings.to)
        raise  # counted, then the line fails, as it did when it was counted first
    result.add(
        outcome,
        keep=False,
        measure=settings.measure,
        line=number,
        to=settings.to,
        written=None if unchanged else output,
    )
    if fixed and not outcome.changed:
        result.changed_conversations += 1  # its ids changed: --check says so
    _add_warnings(conversation, number, result)  # the writer's too
    # Counted over the whole file, named in one line when it is done (finish_dataset).
    result.dropped.merge(conversation.dropped)
    try:
        problems = rule_problems(conversation, settings, output, outcome.before)
    except InputError as refused:
        raise InputError(refused.message, source=name, line=number) from None
    for problem in problems:
        (result.errors if settings.strict else result.warnings).append(f"line {number}: {problem}")
    if unchanged:
        return output  # untouched lines are copied byte for byte
    return output[:-1] + b"\r\n" if raw.endswith(b"\r") else output


def _add_warnings(conversation: Conversation, number: int, result: FileResult) -> None:
    """A dataset line's warnings; that it reads as several formats (nothing in the
    dataset tells them apart) is worded once for the file, as a compaction warning is."""
    if not conversation.also_reads_as:
        result.warnings.extend(f"line {number}: {w}" for w in conversation.warnings)
        return
    ambiguity = [w for w in conversation.warnings if w.startswith(AMBIGUITY_NOTE)]
    result.warnings.extend(f"line {number}: {w}" for w in conversation.warnings if w not in ambiguity)
    result.add_compaction_warnings(ambiguity, number)


def rule_problems(
    conversation: Conversation, settings: Settings, output: bytes, before: Sequence[Message] = ()
) -> list[str]:
    """Provider-rule problems of what is written (read back when converting: a writer may
    regroup messages, e.g. Anthropic merges tool results into one user message).

    Messages are numbered as in the input (``before``), as ``validate`` numbers them, so
    a warning points at the message to fix; one the input does not hold (a summary
    added) or a converted output's is named as the output's.
    """
    if not settings.check_rules:
        return []
    target = settings.to or conversation.format
    messages = conversation.state.context
    converted = settings.to is not None and settings.to != conversation.format
    if converted:
        # A writer bug would raise here; then the in-memory messages still get checked.
        with contextlib.suppress(InputError):
            messages = formats.load(output, source="<output>", fmt=settings.to).state.context
    from ctxmgr._validate import check_messages

    output_name = f"{settings.to} output" if converted else "output"
    read_at: dict[int, int] = {}

    def name(position: int) -> str:
        if not read_at:  # built only once there is a problem to word
            read_at.update((id(message), index) for index, message in enumerate(before))
        index = read_at.get(id(messages[position])) if position < len(messages) else None
        return f"message {index}" if index is not None else f"{output_name} message {position}"

    problems = check_messages(messages, target=target if target != "native" else None, name=name)
    if converted:
        _refuse_reused_ids(problems, settings.to)
    from ctxmgr._shapes import fails_for

    # What the output's own provider accepts (Chat Completions takes reused call ids) is
    # no warning: validate names it once, with who rejects it and the fix.
    return [f"{name(p.index)}: {p.message}" for p in problems if fails_for(p, target, None)]


_REUSED = ("duplicate-call-id", "duplicate-result")


def _refuse_reused_ids(problems: list[Problem], target: str | None) -> None:
    """A conversion never writes reused call ids where the target's provider refuses them
    (the Messages API requires unique ``tool_use`` ids): an error naming the fix."""
    reused = [p for p in problems if p.code in _REUSED and target in p.providers]
    if reused:
        raise InputError(
            f"converting to {target} would write {len(reused)} reused tool call id"
            f"{'s' if len(reused) != 1 else ''} ({reused[0].message}), which {target} refuses: "
            "--fix-call-ids renumbers them"
        )
