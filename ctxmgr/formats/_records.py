"""Helpers shared by format adapters: JSONL records and validation error wording."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ctxmgr.errors import InputError
from ctxmgr.formats._base import JsonlRecords
from ctxmgr.state._blocks import BLOCK_TYPES

__all__ = ["JsonlRecords", "input_error", "validation_message"]


def _format_loc(loc: tuple[int | str, ...]) -> tuple[str, str | None]:
    """A JSON path for ``loc``, and the content block type named in it, if any.

    pydantic puts the tag of a discriminated union in the location
    (``content, 0, "text", "text"``); it is not a key of the file, so it is left out of
    the path and reported as the block's type instead.
    """
    out = ""
    block_type: str | None = None
    parts = list(loc)
    index = 0
    while index < len(parts):
        part = parts[index]
        if isinstance(part, int):
            out += f"[{part}]"
            if index >= 1 and parts[index - 1] == "content" and index + 1 < len(parts):
                tag = parts[index + 1]
                if isinstance(tag, str) and tag in BLOCK_TYPES:
                    block_type = tag
                    index += 1
        else:
            out += f".{part}" if out else str(part)
        index += 1
    return out, block_type


def _describe(error: ErrorDetails, block_type: str | None) -> str:
    kind = error["type"]
    given = error.get("input")
    if kind == "union_tag_invalid" and isinstance(given, dict):
        return f"unknown content block type {given.get('type')!r} (expected one of: {', '.join(sorted(BLOCK_TYPES))})"
    if kind == "union_tag_not_found":
        return f"content block without a 'type' key (expected one of: {', '.join(sorted(BLOCK_TYPES))})"
    if kind == "model_attributes_type" and block_type is None:
        return f"expected an object, got {type(given).__name__}"
    if kind == "list_type" and isinstance(given, str):
        return 'expected a list of content blocks, got a string (write [{"type": "text", "text": ...}])'
    if kind == "missing":
        return "required field is missing"
    return str(error["msg"])


def validation_message(exc: ValidationError, prefix: str = "") -> str:
    """One line for a pydantic error: where (a JSON path) and what is wrong."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc, block_type = _format_loc(tuple(first["loc"]))
    path = f"{prefix}{'.' if prefix and loc and not loc.startswith('[') else ''}{loc}"
    message = _describe(first, block_type)
    if block_type is not None and first["type"] not in ("union_tag_invalid", "union_tag_not_found"):
        message += f" (in a {block_type!r} block)"
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"{path}: {message}{more}" if path else f"{message}{more}"


def input_error(message: str, *, source: str, records: Any = None, index: int | None = None) -> InputError:
    """An InputError for record ``index`` of ``records``, with its JSONL line if known."""
    line = None
    if isinstance(records, JsonlRecords) and index is not None and index < len(records.line_numbers):
        line = records.line_numbers[index]
    return InputError(message, source=source, line=line)
