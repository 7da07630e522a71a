"""Command-line values of plain types, converted without pydantic, through Typer's public API.

Typer 0.29 converts every parameter value (all but a flag's own ``True``/``False``)
through a pydantic ``TypeAdapter`` it builds on first use; its ``parser=`` option goes
through one too, and ``click_type=`` is gone. For a ``trim`` of a small file that was a
third of the run: importing pydantic and building an adapter per option costs more than
reading, trimming and writing the file. So every command here is a :class:`PlainCommand`
(``@command(app)``, Typer's public ``cls=``): a ``typer.core.TyperCommand`` whose
``parse_args``, click's hook that turns the arguments into ``ctx.params``, converts the
parameters of plain type (``str``, ``bool``, ``int`` and ``float`` with an optional range,
lists of strings) itself and hands every other one (paths, choices, custom parsers,
clamped ranges) to its own ``handle_parse_result``, Typer's conversion, unless it has no
value at all (a ``--cache`` path not given is ``None`` without converting). Which parameters
are plain is read from the command function's annotations
(``Annotated[int, typer.Option(min=0)]``); an on/off flag no annotation declares
(``--help``) is plain too. The group's own flags stay Typer's: it takes a flag's ``False``
as it is, so the group's ``default_map`` (click's, in ``ctxmgr.cli.app``) gives ``False``
to those whose default is ``None`` (help, completion). Nothing of Typer's is written to,
and nothing is read from its private modules. ``parse_args`` follows click's (the same
parser, processing order and errors), so pyproject.toml pins the Typer range it is
tested with, and tests fail if a plain ``trim``, a ``--help`` or a usage error imports
Typer's conversion.

The conversion itself is :mod:`ctxmgr.config._values` (config files' values go through it
too); its messages follow click's classic wording, with the value given:
``'abc' is not a valid integer.``, ``-1 is not in the range x>=0.``

A command of the flag table (:data:`ctxmgr.config.COMMANDS`) gets its options from there:
:func:`command` gives the function one annotated parameter per entry (:func:`option`), so
the annotations read above are the table's.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast, get_args, get_origin

import typer
from typer.core import TyperCommand
from typer.models import ParameterInfo

from ctxmgr.config import COMMANDS, Flag
from ctxmgr.config._values import Plain, convert_plain, plain_kind

__all__ = ["PlainCommand", "command", "option", "plain_values"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

F = TypeVar("F", bound=Callable[..., Any])


def _without_none(annotation: Any) -> Any:
    """``X`` for ``X | None``, as Typer reads an optional parameter."""
    if get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


@functools.cache
def _parameters(function: Callable[..., Any]) -> dict[str, tuple[Any, ParameterInfo | None]]:
    """Each parameter of ``function``: ``(annotation less None, its typer.Option/Argument)``."""
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except (NameError, TypeError):  # a name only type checkers see: Typer converts them all
        return {}
    found: dict[str, tuple[Any, ParameterInfo | None]] = {}
    for name, parameter in inspect.signature(function).parameters.items():
        annotation = hints.get(name, parameter.annotation)
        info = parameter.default if isinstance(parameter.default, ParameterInfo) else None
        if get_origin(annotation) is Annotated:
            annotation, *extras = get_args(annotation)
            info = next((extra for extra in extras if isinstance(extra, ParameterInfo)), info)
        found[name] = (_without_none(annotation), info)
    return found


@functools.cache
def _plain_parameters(function: Callable[..., Any]) -> dict[str, Plain]:
    found: dict[str, Plain] = {}
    for name, (annotation, info) in _parameters(function).items():
        if info is not None and (info.parser is not None or info.clamp):
            continue  # a custom parser, or a range that clamps: Typer's
        low, high = (info.min, info.max) if info is not None else (None, None)
        plain = plain_kind(annotation, low, high)
        if plain is not None:
            found[name] = plain
    return found


def _function(command: object) -> Callable[..., Any] | None:
    """The function a Typer command was made from (Typer's callback wraps it)."""
    callback = getattr(command, "callback", None)
    return inspect.unwrap(callback) if callable(callback) else None


def plain_values(command: object) -> dict[str, Plain]:
    """The parameters of ``command`` converted here, by name (the others are Typer's)."""
    function = _function(command)
    return _plain_parameters(function) if function is not None else {}


# -- the command ---------------------------------------------------------------------------


def _processing_order(invoked: Sequence[Any], declared: Sequence[Any]) -> list[Any]:
    """click's order: eager parameters first, then as given on the command line, then
    the others as declared."""

    def key(param: Any) -> tuple[bool, float]:
        try:
            position = float(invoked.index(param))
        except ValueError:
            position = float("inf")
        return not param.is_eager, position

    return sorted(declared, key=key)


def _process(ctx: Any, param: Any, plain: Plain, value: Any) -> Any:
    """What Typer's ``process_value`` makes of ``value``, converted here."""
    several = param.multiple or param.nargs == -1
    if value is None:
        value = () if several else None
    elif several and isinstance(value, str):
        raise typer.BadParameter("Value must be an iterable.", ctx=ctx, param=param)
    else:
        try:
            value = convert_plain(plain, value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None
    if param.callback is not None:
        value = param.callback(ctx, param, value)
    return value


_FLAG = Plain(bool)


def _plain_for(param: Any, plain: dict[str, Plain]) -> Plain | None:
    """How ``param`` is converted here: by its annotation, or as the on/off flag it is
    (``--help``, which no annotation declares); ``None``: by Typer."""
    if param.name is None or param.required:
        return None
    if param.name in plain:
        return plain[param.name]
    return _FLAG if getattr(param, "is_bool_flag", False) else None


def _absent(ctx: Any, param: Any, opts: dict[str, Any]) -> bool:
    """Whether ``param`` (one Typer converts: a path...) has no value at all, so there is
    nothing to convert: Typer would build its converter (a pydantic ``TypeAdapter``) only to
    hand back ``None``, or ``()``. Not a required or prompting parameter (Typer says what
    is missing, or asks)."""
    if param.name is None or param.required or getattr(param, "prompt", None):
        return False
    value, _ = param.consume_value(ctx, opts)
    return value is None


class PlainCommand(TyperCommand):
    """A Typer command that converts its plain-typed parameters itself (see the module).

    ``ctx`` and ``formatter`` are typed ``Any``: their classes live in Typer's private
    ``typer._click``, which nothing here imports.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        plain = plain_values(self)
        if not plain or (not args and self.no_args_is_help):
            return super().parse_args(ctx, args)
        parser = self.make_parser(ctx)
        opts, rest, invoked = parser.parse_args(args=args)
        for param in _processing_order(invoked, self.get_params(ctx)):
            found = _plain_for(param, plain)
            if found is None and not _absent(ctx, param, opts):
                _, rest = param.handle_parse_result(ctx, opts, rest)
                continue
            value, source = param.consume_value(ctx, opts)
            ctx.set_parameter_source(param.name, source)
            try:
                value = _process(ctx, param, found or _FLAG, value)
            except Exception:
                if not ctx.resilient_parsing:  # shell completion parses what it can
                    raise
                value = None
            if param.expose_value:
                ctx.params[param.name] = value
        if rest and not ctx.allow_extra_args and not ctx.resilient_parsing:
            extra = " ".join(_CONTROL.sub(lambda match: f"\\x{ord(match[0]):02x}", str(arg)) for arg in rest)
            ctx.fail(f"Got unexpected extra argument(s) ({extra})")
        # click also adds the parser's option prefixes to a private set of the context,
        # read by shell completion: a command's context starts with its group's, and
        # every option here starts with "-" as the group's do.
        ctx.args = rest
        return rest

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """The Arguments and Options sections, each value named by what it is (``N``,
        ``TEXT``, ``PATH`` or the metavar given: ``[fail|skip]``), never by its Python
        type (``<list[str]>``, ``<int range>``)."""
        _name_values(self)
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                # The metavar says what the argument is; Typer would add its Python type.
                arguments.append((param.metavar, record[1]) if param.metavar is not None else record)
            elif param.param_type_name == "option":
                options.append(record)
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


_VALUE_NAMES = {int: "N", float: "NUMBER", str: "TEXT"}


def _name_values(command: PlainCommand) -> None:
    """Give each option that takes a value and has no metavar the name of what it is."""
    function = _function(command)
    parameters = _parameters(function) if function is not None else {}
    for param in command.params:
        if param.param_type_name != "option" or param.metavar is not None or getattr(param, "is_flag", False):
            continue
        annotation, info = parameters.get(param.name or "", (None, None))
        element = get_args(annotation)[0] if get_origin(annotation) is list else annotation
        param.metavar = "PATH" if _is_path(annotation, info) else _VALUE_NAMES.get(element)


def _is_path(annotation: Any, info: ParameterInfo | None) -> bool:
    """Whether Typer takes the parameter as a path: a ``Path``, or path settings on a type
    that is neither text, a flag nor a number."""
    if get_origin(annotation) is not None or (info is not None and info.parser is not None):
        return False
    if isinstance(annotation, type) and issubclass(annotation, Path):
        return True
    if annotation in (str, bool, int, float) or info is None:
        return False
    return bool(info.allow_dash or info.path_type is not None or info.resolve_path)


# -- the flag table, declared ------------------------------------------------------------


def option(flag: Flag) -> Any:
    """``flag``'s annotation: ``Annotated[type, typer.Option(...)]`` as its entry declares it."""
    spelling = f"{flag.flag}/--no-{flag.name}" if flag.negative else flag.flag
    declared = typer.Option(
        *(spelling, *((flag.short,) if flag.short else ())),
        help=flag.help,
        metavar=flag.metavar,
        min=flag.min,
        show_default=flag.show_default,
    )
    kind = flag.kind | None if flag.optional else flag.kind
    return Annotated[kind, declared]


def _setting_verbosity(function: F) -> F:
    """``function``, first telling the console whether ``--verbose`` asks for every warning."""

    def verbose_aware(*args: Any, **kwargs: Any) -> Any:
        from ctxmgr.cli.console import show_every_warning

        show_every_warning(bool(kwargs.get("verbose")))
        return function(*args, **kwargs)

    # Not functools.wraps: its __wrapped__ would lead Typer back to the function's own
    # signature, past the table's options set on this one.
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(verbose_aware, attribute, getattr(function, attribute))
    return cast("F", verbose_aware)


def command(app: typer.Typer, name: str | None = None) -> Callable[[F], F]:
    """``@app.command(name)`` making a :class:`PlainCommand`: how every command here is declared.

    A command of the flag table (:data:`ctxmgr.config.COMMANDS`) takes its options from
    there: the function declares ``ctx``, its arguments and ``**flags``, and receives each
    option of the table in ``flags``, in the table's order.
    """

    def declare(function: F) -> F:
        flags = COMMANDS.get(name or function.__name__.replace("_", "-"))
        if flags:
            hints = typing.get_type_hints(function, include_extras=True)
            signature = inspect.signature(function)
            own = [
                parameter.replace(annotation=hints.get(parameter.name, parameter.annotation))
                for parameter in signature.parameters.values()
                if parameter.kind is not inspect.Parameter.VAR_KEYWORD
            ]
            table = [
                inspect.Parameter(
                    flag.param, inspect.Parameter.KEYWORD_ONLY, default=flag.default, annotation=option(flag)
                )
                for flag in flags
            ]
            if any(flag.param == "verbose" for flag in flags):
                function = _setting_verbosity(function)
            function.__signature__ = signature.replace(parameters=[*own, *table])  # type: ignore[attr-defined]
            function.__annotations__ = {p.name: p.annotation for p in [*own, *table]}
        return app.command(name, cls=PlainCommand)(function)

    return declare
