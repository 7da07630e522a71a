"""Command-line values of plain types, converted without pydantic.

Typer (0.29) converts every parameter value through a pydantic ``TypeAdapter`` it builds
on first use. For a ``trim`` of a small file that is a third of the run: importing
pydantic and building an adapter per option costs more than reading, trimming and
writing the file. The parameters of the invoked command whose type is plain (``str``,
``bool``, ``int`` and ``float`` with an optional range, and lists of strings) get the converter
below instead; anything else (paths, choices, custom parsers, clamped ranges, and any
Typer whose internals differ from what this expects) keeps Typer's own.

Messages follow click's classic wording, with the value given:
``'abc' is not a valid integer.``, ``-1 is not in the range x>=0.``
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from typer.core import TyperGroup

__all__ = ["PlainGroup", "name_values", "use_plain_conversion"]

_INTEGER = re.compile(r"[+-]?\d+(?:_\d+)*", re.ASCII)
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})

RuntimeParam: Any
try:  # Typer's internals: without them, nothing here applies (Typer converts as before)
    from typer._click.exceptions import BadParameter
    from typer._coercion import RuntimeParam
except ImportError:  # pragma: no cover - another Typer version
    RuntimeParam = None


def yes_or_no(word: str) -> bool | None:
    """``True``/``False`` for the words a flag takes as a boolean (``""`` is no), else ``None``."""
    word = word.strip().lower()
    if word in _TRUE or word in _FALSE or word == "":
        return word in _TRUE
    return None


def _number_range(info: Any) -> str:
    low, high = info.min, info.max
    if low is not None and high is not None:
        return f"{low}<=x<={high}"
    return f"x>={low}" if low is not None else f"x<={high}"


def _convert(kind: type, value: Any, info: Any) -> Any:
    """``value`` as ``kind``; ``ValueError`` with the message to show if it is not one.

    Values come from the command line (strings) or from a config file (TOML types), and
    are taken as loosely as Typer's own conversion took them: any scalar as a string
    (``token-budget = 6000`` for a ``str`` option), whole floats and ``1_000`` as
    integers, ``0``/``1`` and ``""`` as booleans.
    """
    if kind is str:
        if value is None or isinstance(value, list | dict):
            raise ValueError(f"{value!r} is not a valid string.")
        return value if isinstance(value, str) else str(value)
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and (answer := yes_or_no(value)) is not None:
            return answer
        raise ValueError(f"{value!r} is not a valid boolean.")
    if isinstance(value, bool):  # a bool is an int to Python, never to a user
        raise ValueError(f"{value!r} is not a valid {'integer' if kind is int else 'number'}.")
    if kind is int:
        if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            number: int | float = int(value)
        elif isinstance(value, int):
            number = value
        elif isinstance(value, float) and value.is_integer():
            number = int(value)
        else:
            raise ValueError(f"{value!r} is not a valid integer.")
    elif isinstance(value, int | float):
        number = float(value)
    else:
        try:
            number = float(value.strip() if isinstance(value, str) else "not a number")
        except ValueError:
            raise ValueError(f"{value!r} is not a valid number.") from None
    if number != number:  # NaN: fails every comparison, so every range check would pass it
        raise ValueError(f"{value!r} is not a valid number.")
    if (info.min is not None and number < info.min) or (info.max is not None and number > info.max):
        raise ValueError(f"{number} is not in the range {_number_range(info)}.")
    return number


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _PlainParam(RuntimeParam):  # type: ignore[misc]  # Typer internals, untyped here
        """Converts a ``str``/``bool``/``int``/``float`` value (or a list of strings)."""

        kind: type = str
        many: bool = False

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                if self.many:
                    items = value if isinstance(value, list | tuple) else [value]
                    return [_convert(self.kind, item, self.parameter_info) for item in items]
                return _convert(self.kind, value, self.parameter_info)
            except ValueError as exc:
                raise BadParameter(str(exc), ctx=ctx, param=param) from None


def _plain_param(param: Any) -> Any:
    """The plain converter for ``param``, or ``None`` to leave it to Typer."""
    descriptor = getattr(param, "type_descriptor", None)
    info = getattr(descriptor, "parameter_info", None)
    if descriptor is None or info is None or getattr(info, "parser", None) is not None:
        return None
    if getattr(info, "clamp", False) or descriptor.is_choice or descriptor.is_path:
        return None
    annotation = descriptor.annotation
    if annotation in (str, int, float, bool):
        kind, many = annotation, False
    elif annotation == list[str]:
        kind, many = str, True
    else:
        return None
    if kind is str and (getattr(info, "min", None) is not None or getattr(info, "max", None) is not None):
        return None
    return _PlainParam(parameter_info=info, annotation=annotation, kind=kind, many=many)


def convert_configured(param: Any, value: Any) -> Any:
    """A value from a config file as ``param`` will take it; ``ValueError`` with the
    message to show if it cannot be one. Parameters Typer converts itself (paths...)
    are returned as they are: the flag's own conversion checks them later."""
    plain = _plain_param(param)
    if plain is None:
        return value
    if plain.many:
        items = value if isinstance(value, list | tuple) else [value]
        return [_convert(plain.kind, item, plain.parameter_info) for item in items]
    return _convert(plain.kind, value, plain.parameter_info)


def use_plain_conversion(command: Any) -> None:
    """Give ``command``'s plain-typed parameters the converter above (see the module)."""
    if RuntimeParam is None or getattr(command, "_ctxmgr_plain", False):
        return
    for param in getattr(command, "params", ()):
        _install(param)
    # The --help option is built afresh on each call, outside ``params``.
    make_help_option = getattr(command, "get_help_option", None)
    if make_help_option is not None:

        def get_help_option(ctx: Any) -> Any:
            option = make_help_option(ctx)
            _install(option)
            return option

        command.get_help_option = get_help_option
    command._ctxmgr_plain = True


def _install(param: Any) -> None:
    if getattr(param, "_runtime_param", "absent") is not None:
        return  # already built, or not a Typer parameter of the kind expected
    plain = _plain_param(param)
    if plain is not None:
        param._runtime_param = plain


_VALUE_NAMES = {int: "N", float: "NUMBER", str: "TEXT"}


def name_values(command: Any) -> None:
    """Help names what a value is (``N``, ``TEXT``, ``PATH``, or the metavar given:
    ``[fail|skip]``), never its Python type (``<list[str]>``, ``<int range>``)."""
    for param in getattr(command, "params", ()):
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None:
            continue
        if getattr(param, "param_type_name", "") == "argument":
            if param.metavar is not None:
                param.display_type_rich = lambda ctx: None  # the metavar says it
            continue
        if param.metavar is not None or getattr(param, "is_flag", False):
            continue
        annotation = descriptor.annotation
        element = get_args(annotation)[0] if get_origin(annotation) is list else annotation
        param.metavar = "PATH" if descriptor.is_path else _VALUE_NAMES.get(element)


class PlainGroup(TyperGroup):
    """The command group: its own parameters and the invoked command's convert plainly."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        use_plain_conversion(self)
        return super().make_context(info_name, args, parent, **extra)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            use_plain_conversion(command)
            name_values(command)
        return command
