"""Outlines: what the trim rule needs of a conversation, read straight from parsed JSON.

An outline (:class:`~ctxmgr.formats._base.Outline`) holds each message's role and the ids
of the tool calls it makes and answers. ``ctxmgr trim`` applies its rule and the
provider-rule check to the outline and writes the kept records as they were, so a
conversation in a format with an outline reader is trimmed without building a single
``Message`` (or importing pydantic). A reader declines, with ``None``, anything the full
reader would treat specially or reject; the full path then handles it, with its wording.

Each outline reader lives in its format's light module, beside its detection (for
example :func:`ctxmgr.formats._detection.openai_chat.outline`), and is named by the
format's registry entry (:mod:`ctxmgr._format_registry`); :data:`OUTLINES` is the lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxmgr import _format_registry as format_registry
from ctxmgr.formats._base import Outline

__all__ = ["OUTLINES"]

OUTLINES: dict[str, Callable[[Any], Outline | None]] = {
    name: reader for name in format_registry.NAMES if (reader := format_registry.outline_reader(name)) is not None
}
"""Outline readers by format name (the formats whose registry entry names one)."""
