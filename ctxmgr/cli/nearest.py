"""Each input's nearest configuration, for a command being run (see :mod:`ctxmgr.config._nearest`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import typer

from ctxmgr.cli.console import note, printable
from ctxmgr.cli.errors import report
from ctxmgr.config import Config, NearestConfigs
from ctxmgr.errors import UsageError

if TYPE_CHECKING:
    from ctxmgr.files import InputFile

__all__ = ["NearestConfig", "given"]

_GIVEN = ("COMMANDLINE", "ENVIRONMENT")  # names of click's ParameterSource: what the user typed

T = TypeVar("T")


def given(ctx: typer.Context) -> set[str]:
    """The parameters of ``ctx``'s command that the user gave (command line, environment)."""
    return {
        name for name in ctx.params if (source := ctx.get_parameter_source(name)) is not None and source.name in _GIVEN
    }


class NearestConfig(Generic[T]):
    """Builds, once per configuration file, what ``build`` makes of a command's parameters.

    ``ctx`` is the invoked command's context: its parameters are those of the current
    folder's configuration, and the ones given on the command line stay as given.
    """

    def __init__(self, ctx: typer.Context, build: Callable[[dict[str, Any]], T]) -> None:
        self._ctx = ctx
        self._build = build
        root = ctx.find_root()
        here = root.meta.get("ctxmgr.config")
        self._configs = NearestConfigs(
            ctx.info_name or "",
            here if isinstance(here, Config) else Config(),
            trust_flag=bool(root.meta.get("ctxmgr.trust_flag", False)),
        )
        self._built: dict[Path | None, T] = {}
        self.used: dict[Path | None, int] = {}
        """How many inputs each configuration file compacts (``None``: no file)."""

    def plans(self, entries: Sequence[InputFile]) -> list[T]:
        """What compacts each entry, every configuration read and checked first: a refused
        setting in any of them is reported (each one) and raised as :class:`UsageError`."""
        configs = [self._configs.config_for(entry.path) for entry in entries]
        problems = list(dict.fromkeys(p for config in configs for p in config.problems))
        if problems:
            console = _error_console()
            for problem in problems[:-1]:
                report(console, problem)
            raise UsageError(problems[-1])
        plans: list[T] = []
        for config in configs:
            if config.path not in self._built:
                params, notes = self._configs.params(config, self._ctx.params, given(self._ctx))
                for line in notes:
                    note("note", line)
                self._built[config.path] = self._build(params)
            self.used[config.path] = self.used.get(config.path, 0) + 1
            plans.append(self._built[config.path])
        for path, count in self.used.items():
            if path != self._configs.here.path:
                where = printable(path) if path is not None else "no configuration file (built-in defaults)"
                note("note", f"{count} input{'s' if count > 1 else ''} use{'s' if count == 1 else ''} {where}")
        return plans


def _error_console() -> Any:
    from ctxmgr.cli.console import lazy_console

    return lazy_console(stderr=True, highlight=False, emoji=False)
