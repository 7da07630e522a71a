"""Helpers shared by format adapters: JSONL records and validation error wording."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ctxmgr.errors import InputError

__all__ = ["JsonlRecords", "input_error", "validation_message"]


class JsonlRecords(list[Any]):
    """The records of a JSONL file, remembering the line each came from."""

    def __init__(self, records: list[Any], line_numbers: list[int]) -> None:
        super().__init__(records)
        self.line_numbers = line_numbers


def _format_loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def validation_message(exc: ValidationError, prefix: str = "") -> str:
    """One line for a pydantic error: where (a JSON path) and what is wrong."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = _format_loc(tuple(first["loc"]))
    path = f"{prefix}{'.' if prefix and loc and not loc.startswith('[') else ''}{loc}"
    message = first["msg"]
    if first["type"] == "union_tag_invalid":
        message = f"unknown content block type {first['input'].get('type')!r}" if isinstance(
            first.get("input"), dict
        ) else message
    elif first["type"] == "missing":
        message = "required field is missing"
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"{path}: {message}{more}" if path else f"{message}{more}"


def input_error(message: str, *, source: str, records: Any = None, index: int | None = None) -> InputError:
    """An InputError for record ``index`` of ``records``, with its JSONL line if known."""
    line = None
    if isinstance(records, JsonlRecords) and index is not None and index < len(records.line_numbers):
        line = records.line_numbers[index]
    return InputError(message, source=source, line=line)
