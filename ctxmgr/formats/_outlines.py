"""Outlines: what the trim rule needs of a conversation, read straight from parsed JSON.

An outline (:class:`~ctxmgr.formats._base.Outline`) holds each message's role and the ids
of the tool calls it makes and answers. ``ctxmgr trim`` applies its rule and the
provider-rule check to the outline and writes the kept records as they were, so a
conversation in a format with an outline reader is trimmed without building a single
``Message`` (or importing pydantic). A reader declines, with ``None``, anything the full
reader would treat specially or reject; the full path then handles it, with its wording.
What both readers must agree on (roles, where ids live, the fields that may carry the
summary marker) each format declares once (:mod:`ctxmgr.formats._declaration`).

Each outline reader lives in its format's light module, beside its detection (for
example :func:`ctxmgr.formats._detection.openai_chat.outline`), and is named by the
format's registry entry (:mod:`ctxmgr._format_registry`); :data:`OUTLINES` is the lookup.
:func:`outlined` reads a parsed value from its outline as the full reader would read it
(``validate`` and ``stats`` count and check such a conversation without the model).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from ctxmgr import _format_registry as format_registry
from ctxmgr.errors import InputError
from ctxmgr.formats import detect_name
from ctxmgr.formats._base import Outline
from ctxmgr.state._tokens import text_units

__all__ = ["OUTLINES", "Outlined", "outlined", "summary_field_units"]


class _Outlines(Mapping[str, Callable[[Any], Outline | None]]):
    """The outline readers by format name, read from the registry at each lookup (a
    format registered later included)."""

    def __getitem__(self, name: str) -> Callable[[Any], Outline | None]:
        reader = format_registry.outline_reader(name)
        if reader is None:
            raise KeyError(name)
        return reader

    def __iter__(self) -> Iterator[str]:
        return (name for name in format_registry.NAMES if format_registry.entry(name).outline is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


OUTLINES: Mapping[str, Callable[[Any], Outline | None]] = _Outlines()
"""Outline readers by format name (the formats whose registry entry names one)."""


class Outlined(NamedTuple):
    """A conversation read from its outline, without building a ``Message``: its format,
    its outline and the parsed JSON value."""

    format: str
    outline: Outline
    value: Any


def outlined(value: Any, fmt: str | None, *, source: str) -> Outlined | None:
    """``value`` (a parsed document or dataset line) read from its outline, as the full
    reader would read it as format ``fmt`` (``None``: detected); ``None`` when the format
    has no outline reader or the outline declines.

    Also declined: an empty call or result id, which the model's rules do not count as an
    id (:func:`~ctxmgr.state._tools.call_ids`) while an outline keeps it.
    """
    if fmt is None:
        try:
            fmt = detect_name(value, source=source)
        except InputError:
            return None  # the full path reports it, with the closest format's explanation
    reader = OUTLINES.get(fmt)
    outline = None if reader is None else reader(value)
    if outline is None:
        return None
    if any("" in ids for ids in outline.calls) or any("" in ids for ids in outline.results):
        return None
    return Outlined(fmt, outline, value)


def summary_field_units(line_format: str, value: Any) -> int:
    """Units (:func:`~ctxmgr.state._tokens.text_units`) of the summary field of an
    outlined conversation (0 if none)."""
    if line_format != "native":
        return 0  # only an AgentState has the field; elsewhere the key is not read
    summary = value.get("context_summary") if isinstance(value, dict) else None
    return text_units(summary) if isinstance(summary, str) else 0
