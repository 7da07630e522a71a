"""Defaults for every flag from ``[tool.ctxmgr]`` in the nearest ``pyproject.toml``
(or a ``ctxmgr.toml``); command-line flags win.

Keys are the long flag names (``max-messages`` or ``max_messages``). Top-level keys apply
to every command that has the flag; a sub-table (``[tool.ctxmgr.summarize]``) applies to
one command and wins over the top level::

    [tool.ctxmgr]
    max-messages = 6

    [tool.ctxmgr.summarize]
    model = "gpt-4o-mini"
    token-budget = 6000
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typer.core import TyperGroup, TyperOption

from ctxmgr.errors import UsageError

__all__ = ["Config", "find_config", "load_config"]

_NOT_CONFIGURABLE = frozenset({"files", "help", "version"})


@dataclass
class Config:
    """Configured defaults: per command, the value and where it came from."""

    path: Path | None = None
    defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, dict[str, str]] = field(default_factory=dict)


def find_config(start: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The nearest ``ctxmgr.toml`` or ``pyproject.toml`` with a ``[tool.ctxmgr]`` table."""
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        own = candidate / "ctxmgr.toml"
        if own.is_file():
            data = _read(own)
            table = data.get("tool", {}).get("ctxmgr", data) if isinstance(data.get("tool"), dict) else data
            return own, table
        project = candidate / "pyproject.toml"
        if project.is_file():
            data = _read(project)
            tool = data.get("tool")
            if isinstance(tool, dict) and isinstance(tool.get("ctxmgr"), dict):
                return project, tool["ctxmgr"]
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _param_names(command: Any) -> dict[str, str]:
    """Flag spellings (``max-messages``, ``max_messages``) to the parameter name."""
    names: dict[str, str] = {}
    for param in command.params:
        if param.name is None or param.name in _NOT_CONFIGURABLE or not isinstance(param, TyperOption):
            continue
        names[param.name] = param.name
        names[param.name.replace("_", "-")] = param.name
        for opt in param.opts:
            if opt.startswith("--"):
                names[opt[2:]] = param.name
                names[opt[2:].replace("-", "_")] = param.name
    return names


def load_config(group: TyperGroup, start: Path | None = None) -> Config:
    """Read the nearest configuration and check every key against the commands' flags."""
    found = find_config(start)
    if found is None:
        return Config()
    path, table = found
    commands = {name: cmd for name, cmd in group.commands.items() if name != "config"}
    config = Config(path=path)
    known_everywhere: set[str] = set()
    for command in commands.values():
        known_everywhere.update(_param_names(command))
    where = "[tool.ctxmgr]" if path.name == "pyproject.toml" else ""
    for key, value in table.items():
        if isinstance(value, dict):
            if key not in commands:
                raise UsageError(f"{path}: unknown command table [{key}]; commands: {', '.join(sorted(commands))}")
            continue
        if key not in known_everywhere:
            raise UsageError(f"{path}: unknown setting {key!r}")
    for name, command in commands.items():
        names = _param_names(command)
        defaults: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for key, value in table.items():
            if not isinstance(value, dict) and key in names:
                defaults[names[key]] = value
                sources[names[key]] = f"{path} {where}".strip()
        section = table.get(name)
        if isinstance(section, dict):
            for key, value in section.items():
                if key not in names:
                    raise UsageError(f"{path}: unknown setting {key!r} for {name}")
                defaults[names[key]] = value
                sources[names[key]] = f"{path} [{'tool.ctxmgr.' if where else ''}{name}]"
        config.defaults[name] = defaults
        config.sources[name] = sources
    return config
