"""Carrying a record's other keys into the record written for an edited copy of it.

A compaction manager that clears or cuts a tool result (or clears a call's arguments)
edits the message, and the writer renders the edit from the model. The model does not
hold every key a record had: an OpenAI chat tool message's ``name``, a Responses
item's ``id`` and ``status``, an Anthropic block's ``cache_control``, a LangChain
message's ``id``, ``artifact`` and ``additional_kwargs``, a key no one has defined yet.
:func:`carry_keys` lays the rendered records over the records the original was read
from, so every key the edit did not change is written back as it was:

- a key of the original that the rendered record lacks, or renders as ``null``, keeps
  its original value (``{"role": "tool", "name": "get", ...}`` keeps ``name``);
- a key the rendered record adds is written only when it holds something (a writer's
  empty defaults, such as LangChain's ``"additional_kwargs": {}``, are not added);
- lists of the same length are laid over item by item, other lists are the rendered
  ones; under the keys that hold what an edit changes (:data:`EDITED_KEYS`: a result's
  output, a call's arguments) the rendered value is taken whole, so nothing cut comes
  back.

The records are matched in order when both sides have as many, each pair of the same
``role``/``type``; otherwise the rendered records are written as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

EDITED_KEYS = frozenset({"output", "response", "args", "arguments", "input"})
"""Keys whose rendered value replaces the original whole: what clearing and cutting edit
(the text or parts of a result sit under ``content`` too, which is a string or a list
whose items are matched by position and ``type``, so a cut never gains keys back)."""


def carry_keys(originals: Sequence[Any] | None, rendered: list[Any]) -> list[Any]:
    """``rendered`` with the keys of ``originals`` carried in (see the module docstring)."""
    if not originals or len(originals) != len(rendered):
        return rendered
    if not all(_same_kind(old, new) for old, new in zip(originals, rendered, strict=True)):
        return rendered
    return [_overlay(old, new) for old, new in zip(originals, rendered, strict=True)]


def carry_record_keys(originals: Sequence[Any] | None, record: dict[str, Any]) -> dict[str, Any]:
    """:func:`carry_keys` for a message rendered as one record."""
    carried: dict[str, Any] = carry_keys(originals, [record])[0]
    return carried


def _same_kind(old: Any, new: Any) -> bool:
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return False
    return bool(old.get("role") == new.get("role") and old.get("type") == new.get("type"))


def _overlay(old: Any, new: Any) -> Any:
    if isinstance(old, dict) and isinstance(new, dict):
        if old.get("type") != new.get("type"):
            return new
        merged: dict[str, Any] = {}
        for key, value in old.items():
            if key not in new or new[key] is None:
                merged[key] = value
            elif key in EDITED_KEYS:
                merged[key] = new[key]
            else:
                merged[key] = _overlay(value, new[key])
        for key, value in new.items():
            if key not in old and not _empty(value):
                merged[key] = value
        return merged
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [_overlay(a, b) for a, b in zip(old, new, strict=True)]
    return new


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, dict | list | str) and not value)
