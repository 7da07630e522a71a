"""Each file's settings from the configuration nearest to it, as ruff does.

``cd /tmp && ctxmgr trim --check /proj/fixtures/*.json`` compacts each fixture as
``/proj/pyproject.toml`` says. The settings of *how a file is compacted*
(:data:`~ctxmgr.config.PER_FILE`, the flags of the table whose scope is a file: limits,
triggers, formats, strictness) come from the configuration nearest above that file; the
settings of the run as a whole (where output goes, ``--check``, ``--diff``, concurrency,
the model and its connection) come from the current folder's. Flags given on the command
line win over both.

Each configuration file is read with the same trust rules as the current folder's
(:func:`ctxmgr.config.load_config`): a project file may set only what
``PROJECT_MAY_SET`` lists unless the user trusts that project, and a refused setting in
any file stops the run before anything is read, sent or written. A nearer file's
run-wide setting that differs from the run's own is named in a note, never applied
silently.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ctxmgr.config._files import Config, load_config, printable
from ctxmgr.config._flag import FILE
from ctxmgr.config._flags import COMMANDS
from ctxmgr.config._values import convert_configured

__all__ = ["NearestConfigs"]


class NearestConfigs:
    """The configuration of each input of one command, read once per folder.

    ``here`` is the current folder's configuration, the one the run's parameters come from.
    """

    def __init__(self, command: str, here: Config, *, trust_flag: bool = False) -> None:
        self.command = command
        self.here = here
        self._trust_flag = trust_flag
        self._by_folder: dict[str, Config] = {}

    def config_for(self, path: str | None) -> Config:
        """The configuration nearest above ``path`` (``None``, standard input: the current folder's)."""
        if path is None:
            return self.here
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in self._by_folder:
            try:
                config = load_config(Path(folder), trust_flag=self._trust_flag)
            except PermissionError:
                # A folder that cannot be searched for a config file holds no file that
                # can be read either: that input fails on its own, with its own error.
                config = self.here
            # The same file as the current folder's: the same object, so its parameters
            # are the command's own.
            self._by_folder[folder] = self.here if config.path == self.here.path else config
        return self._by_folder[folder]

    def params(
        self, config: Config, params: dict[str, Any], given: Collection[str]
    ) -> tuple[dict[str, Any], list[str]]:
        """The command's ``params`` with ``config``'s per-file settings, and the notes to give.

        ``given`` names the parameters the user gave (command line, environment): they stay
        as given. A run-wide setting of ``config`` that differs from the run's own is not
        applied; a note says so.
        """
        params = dict(params)
        if config is self.here:
            return params, []
        notes: list[str] = []
        configured = config.defaults.get(self.command, {})
        for flag in COMMANDS[self.command]:
            if flag.param in given:
                continue
            value = configured.get(flag.param, flag.default)
            if flag.scope == FILE:
                params[flag.param] = convert_configured(flag, value) if value is not None else None
            elif flag.param in configured and value != params.get(flag.param):
                where = config.sources[self.command][flag.param]
                notes.append(
                    f"{printable(where)} {flag.name} is not used: it applies to the whole run, "
                    "which takes it from the current folder's configuration"
                )
        return params, notes
