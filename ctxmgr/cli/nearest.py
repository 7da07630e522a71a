"""Each file's settings from the configuration nearest to it, as ruff does.

``cd /tmp && ctxmgr trim --check /proj/fixtures/*.json`` compacts each fixture as
``/proj/pyproject.toml`` says. The settings of *how a file is compacted*
(:data:`PER_FILE`: limits, triggers, formats, strictness) come from the configuration
nearest above that file; the settings of the run as a whole (where output goes,
``--check``, ``--diff``, concurrency, the model and its connection) come from the
current folder's. Flags given on the command line win over both.

Each configuration file is read with the same trust rules as the current folder's
(:func:`ctxmgr.cli.config.load_config`): a project file may set only what
``PROJECT_MAY_SET`` lists unless the user trusts that project, and a refused setting in
any file stops the run before anything is read, sent or written. A nearer file's
run-wide setting that differs from the run's own is named in a note, never applied
silently.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import typer
from typer.core import TyperGroup

from ctxmgr.cli.config import Config, load_config
from ctxmgr.cli.console import note, printable
from ctxmgr.cli.errors import report
from ctxmgr.cli.params import convert_configured
from ctxmgr.errors import UsageError
from ctxmgr.files import InputFile

__all__ = ["PER_FILE", "NearestConfig"]

_FORMATS = frozenset({"from_format", "to_format", "summary_as", "strict", "on_error"})

PER_FILE: dict[str, frozenset[str]] = {
    "trim": _FORMATS | {"max_messages", "remove_tool_msgs"},
    "summarize": _FORMATS
    | {
        "max_messages",
        "token_budget",
        "trigger_estimate",
        "keep_recent",
        "remove_tool_msgs",
        "summary_system_prompt",
        "max_summary_tokens",
        "max_input_tokens",
        "require_facts",
        "preserve_tool_pairs",
    },
    "run": _FORMATS,
    "convert": _FORMATS,
    "stats": frozenset({"max_messages", "summary_max_messages", "token_budget", "trigger_estimate", "from_format"}),
    "validate": frozenset({"target", "from_format"}),
}
"""Per command, the parameters each file takes from its nearest configuration."""

_GIVEN = ("COMMANDLINE", "ENVIRONMENT")  # names of click's ParameterSource: what the user typed

T = TypeVar("T")


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
        self._here: Config = here if isinstance(here, Config) else Config()
        self._trust_flag = bool(root.meta.get("ctxmgr.trust_flag", False))
        group = root.command
        assert isinstance(group, TyperGroup)
        self._group = group
        self._by_folder: dict[str, Config] = {}
        self._built: dict[Path | None, T] = {}
        self.used: dict[Path | None, int] = {}
        """How many inputs each configuration file compacts (``None``: no file)."""

    def plans(self, entries: Sequence[InputFile]) -> list[T]:
        """What compacts each entry, every configuration read and checked first: a refused
        setting in any of them is reported (each one) and raised as :class:`UsageError`."""
        configs = [self._config_for(entry.path) for entry in entries]
        problems = list(dict.fromkeys(p for config in configs for p in config.problems))
        if problems:
            console = _error_console()
            for problem in problems[:-1]:
                report(console, problem)
            raise UsageError(problems[-1])
        plans: list[T] = []
        for config in configs:
            if config.path not in self._built:
                self._built[config.path] = self._build(self._params(config))
            self.used[config.path] = self.used.get(config.path, 0) + 1
            plans.append(self._built[config.path])
        for path, count in self.used.items():
            if path != self._here.path:
                where = printable(path) if path is not None else "no configuration file (built-in defaults)"
                note("note", f"{count} input{'s' if count > 1 else ''} use{'s' if count == 1 else ''} {where}")
        return plans

    def _config_for(self, path: str | None) -> Config:
        if path is None:
            return self._here
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in self._by_folder:
            try:
                config = load_config(self._group, Path(folder), trust_flag=self._trust_flag)
            except PermissionError:
                # A folder that cannot be searched for a config file holds no file that
                # can be read either: that input fails on its own, with its own error.
                config = self._here
            # The same file as the current folder's: the same object, so its parameters
            # are the command's own.
            self._by_folder[folder] = self._here if config.path == self._here.path else config
        return self._by_folder[folder]

    def _params(self, config: Config) -> dict[str, Any]:
        """The command's parameters with ``config``'s per-file settings (flags still win)."""
        params = dict(self._ctx.params)
        if config is self._here:
            return params
        command = self._ctx.command
        name = self._ctx.info_name or ""
        per_file = PER_FILE.get(name, frozenset())
        configured = config.defaults.get(name, {})
        for param in command.params:
            source = self._ctx.get_parameter_source(param.name) if param.name is not None else None
            if param.name is None or (source is not None and source.name in _GIVEN):
                continue
            value = configured.get(param.name, param.default)
            if param.name in per_file:
                params[param.name] = convert_configured(command, param, value) if value is not None else None
            elif param.name in configured and value != params.get(param.name):
                where = config.sources[name][param.name]
                flag = param.opts[0] if param.opts else param.name
                note(
                    "note",
                    f"{printable(where)} {flag.removeprefix('--')} is not used: it applies to the whole run, "
                    "which takes it from the current folder's configuration",
                )
        return params


def _error_console() -> Any:
    from ctxmgr.cli.console import lazy_console

    return lazy_console(stderr=True, highlight=False, emoji=False)
