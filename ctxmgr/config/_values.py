"""Option values of plain types, converted as the command line converts them.

Values come from the command line (strings) or from a config file (TOML types), and are
taken as loosely as Typer's own conversion takes them. Messages follow click's classic
wording, with the value given: ``'abc' is not a valid integer.``, ``-1 is not in the range x>=0.``
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmgr.config._flag import Flag

__all__ = ["Plain", "convert_configured", "convert_plain", "plain_kind", "yes_or_no"]

_INTEGER = re.compile(r"[+-]?\d+(?:_\d+)*", re.ASCII)
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


def yes_or_no(word: str) -> bool | None:
    """``True``/``False`` for the words a flag takes as a boolean (``""`` is no), else ``None``."""
    word = word.strip().lower()
    if word in _TRUE or word in _FALSE or word == "":
        return word in _TRUE
    return None


@dataclass(frozen=True)
class Plain:
    """A parameter converted here: its type, whether it takes several values, its range."""

    kind: type
    many: bool = False
    min: float | None = None
    max: float | None = None


def _number_range(info: Any) -> str:
    low, high = info.min, info.max
    if low is not None and high is not None:
        return f"{low}<=x<={high}"
    return f"x>={low}" if low is not None else f"x<={high}"


def _convert(kind: type, value: Any, info: Any) -> Any:
    """``value`` as ``kind``; ``ValueError`` with the message to show if it is not one.

    Values come from the command line (strings) or from a config file (TOML types), and
    are taken as loosely as Typer's own conversion takes them: any scalar as a string
    (``token-budget = 6000`` for a ``str`` option), whole floats and ``1_000`` as
    integers, ``0``/``1`` and ``""`` as booleans. ``info`` holds the range (``min``, ``max``).
    """
    if kind is str:
        return _as_string(value)
    if kind is bool:
        return _as_boolean(value)
    if isinstance(value, bool):  # a bool is an int to Python, never to a user
        raise ValueError(f"{value!r} is not a valid {'integer' if kind is int else 'number'}.")
    number = _as_integer(value) if kind is int else _as_float(value)
    if number != number:  # NaN: fails every comparison, so every range check would pass it
        raise ValueError(f"{value!r} is not a valid number.")
    if (info.min is not None and number < info.min) or (info.max is not None and number > info.max):
        raise ValueError(f"{number} is not in the range {_number_range(info)}.")
    return number


def _as_string(value: Any) -> str:
    if value is None or isinstance(value, list | dict):
        raise ValueError(f"{value!r} is not a valid string.")
    return value if isinstance(value, str) else str(value)


def _as_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and (answer := yes_or_no(value)) is not None:
        return answer
    raise ValueError(f"{value!r} is not a valid boolean.")


def _as_integer(value: Any) -> int:
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError(f"{value!r} is not a valid integer.")


def _as_float(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value.strip() if isinstance(value, str) else "not a number")
    except ValueError:
        raise ValueError(f"{value!r} is not a valid number.") from None


def convert_plain(plain: Plain, value: Any) -> Any:
    if plain.many:
        items = value if isinstance(value, list | tuple) else [value]
        return [_convert(plain.kind, item, plain) for item in items]
    return _convert(plain.kind, value, plain)


# -- which parameters are plain: the command function's own annotations --------------------


def plain_kind(annotation: Any, low: float | None = None, high: float | None = None) -> Plain | None:
    """How a value of type ``annotation`` (``None`` left out) with the range ``low``,
    ``high`` is converted here; ``None``: by Typer (paths, ranged text)."""
    if annotation in (str, int, float, bool):
        kind, many = annotation, False
    elif annotation == list[str]:
        kind, many = str, True
    else:
        return None
    if kind is str and (low is not None or high is not None):
        return None
    return Plain(kind, many, low, high)


def convert_configured(flag: Flag, value: Any) -> Any:
    """A value from a config file as ``flag`` will take it; ``ValueError`` with the message
    to show if it cannot be one. Values of the types Typer converts itself (paths...) are
    returned as they are: the flag's own conversion checks them later."""
    plain = plain_kind(flag.kind, flag.min)
    return value if plain is None else convert_plain(plain, value)
