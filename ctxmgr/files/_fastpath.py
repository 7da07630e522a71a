"""The trim fast path: a plain trim applied to a conversation's outline, without building
a single message.

The same rule (:meth:`MessageContextManager.select`) on the same records gives the same
bytes as the full path; only the ``Message`` per record is skipped (and pydantic, and
the format readers). It declines (``None``) whatever needs the full reader: a
conversation its format's outline (:mod:`ctxmgr.formats._outlines`) does not find plainly
well-formed, so errors are worded by the full reader, or a cut the structural pairing
check does not clear, so warnings are exact. Whether a run may take it at all is
:func:`ctxmgr.files._settings.plain_trim`.
"""

from __future__ import annotations

from typing import Any

from ctxmgr import _io as io, formats
from ctxmgr._shapes import outline_clear
from ctxmgr.errors import InputError
from ctxmgr.files._figures import outline_figures, summary_field_units
from ctxmgr.files._reading import UNPARSED, is_conversation_record
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings, plain_trim
from ctxmgr.formats._base import Outline
from ctxmgr.formats._outlines import OUTLINES
from ctxmgr.state._managers import BaseContextManager, MessageContextManager, trim_selection

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
    if not plain_trim(manager, settings) or settings.keep_outcomes:
        return None
    try:
        detected = settings.fmt or formats.detect_name(value, source=name)
    except InputError:
        return None  # the full path reports it, with the closest format's explanation
    if settings.fmt not in (None, detected):
        return None
    trimmed = _trim_outline(value, manager, detected, result, settings.measure)
    if trimmed is None:
        return None
    result.format = detected
    kept, outline = trimmed
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
    if not plain_trim(manager, settings):
        return None, UNPARSED
    record = io.loads(raw, name, line=number)
    line_format = first_format[0] if first_format else _light_format(record, name, settings)
    if line_format is None or settings.fmt not in (None, line_format):
        return None, record
    trimmed = _trim_outline(record, manager, line_format, result, settings.measure)
    if trimmed is None:
        return None, record
    if not first_format:  # the first line settles the dataset's format
        first_format.append(line_format)
        result.format = line_format
    kept, outline = trimmed
    if kept is None:
        return raw + b"\n", record
    output = io.dumps(outline.rebuild(kept), "document")  # deep nesting included (see io.dumps)
    return (output[:-1] + b"\r\n" if raw.endswith(b"\r") else output), record


def _trim_outline(
    value: Any, manager: BaseContextManager[Any], line_format: str, result: FileResult, measure: bool
) -> tuple[list[int] | None, Outline] | None:
    """``(kept, outline)``: the trim's choice on ``value``'s outline (``kept`` ``None``
    for all), counted into ``result``; ``None`` if there is no outline or its cut needs
    the full path's warning."""
    outline_of = OUTLINES.get(line_format)
    outline = None if outline_of is None else outline_of(value)
    if outline is None:
        return None
    assert isinstance(manager, MessageContextManager)
    # The full path's rule check runs on the same ids: any problem to warn about sends
    # the conversation to the full path, which words the warning.
    clear, kept = _checked_selection(outline, manager, line_format)
    if not clear:
        return None
    units = summary_field_units(line_format, value)
    result.count(outline_figures(outline, kept, measure=measure, summary_units=units))
    return kept, outline


def _checked_selection(
    outline: Outline, manager: MessageContextManager, line_format: str
) -> tuple[bool, list[int] | None]:
    """``(clear, kept)``: the trim's choice on ``outline``, and whether its output passes
    the provider-rule check (if not, the full path runs and words the warning)."""
    roles = outline.roles
    if manager.remove_tool_msgs:
        kept = manager.select(roles, [bool(c) for c in outline.calls])
    else:
        kept = trim_selection(roles, manager.max_messages)  # what select() does then
    if outline.has_tools:
        chosen = range(len(roles)) if kept is None else kept
        target = line_format if line_format != "native" else None
        if not outline_clear(roles, outline.calls, outline.results, chosen, target=target):
            return False, kept
    return True, kept


def _light_format(record: Any, name: str, settings: Settings) -> str | None:
    """The first line's format, found without the readers (for the fast path).

    ``None`` leaves the line to the full path (which also words any error).
    """
    if settings.fmt is not None:
        return settings.fmt
    try:
        return formats.detect_name(record, source=name) if is_conversation_record(record) else None
    except InputError:
        return None
