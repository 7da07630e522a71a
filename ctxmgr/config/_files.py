"""Defaults for the flags, from a project's config file and from the user's own.

Two kinds of file set defaults, in the same layout: keys are the long flag names
(``max-messages`` or ``max_messages``); top-level keys apply to every command that has
the flag; a table named after a command (``[summarize]``) applies to that command and
wins over the top level::

    [tool.ctxmgr]               # pyproject.toml; a ctxmgr.toml has no [tool.ctxmgr] prefix
    max-messages = 6

    [tool.ctxmgr.summarize]
    token-budget = 6000

The **project file** is the nearest ``ctxmgr.toml`` or ``pyproject.toml`` with a
``[tool.ctxmgr]`` table, walking up from the current folder. It belongs to whoever wrote
the repository, possibly a stranger's pull request, so it is untrusted input:

- it may set only *how to compact* (:data:`~ctxmgr.config.PROJECT_MAY_SET`, a per-command
  allowlist derived from the flag table, so an option added later is refused until its
  entry says a project may set it). Where data, keys or writes go and
  what code runs (``model``, ``provider``, ``base-url``, ``api-key-file``, ``cache``,
  ``output``, ``in-place``, ``manager``, ``option``, ...), and what the model is told to
  write into a system message (``summary-system-prompt``), needs the user to trust the
  project: ``ctxmgr --trust-project-config``, ``CTXMGR_TRUST_PROJECT_CONFIG=1``, or the
  folder holding the file listed in ``[trust] projects`` of the user config. Without that, a
  project file setting such a key is an error naming the file, the table and the key.
- it must be owned by the user running ctxmgr and not writable by others, unless its folder
  is listed in ``CTXMGR_SAFE_DIRECTORIES`` (``os.pathsep``-separated; ``*``: any) or in
  ``[trust] safe-directories`` of the user config, as git's ``safe.directory``. That opt-in
  does not trust the file's trusted-only keys.

The **user config** (``platformdirs.user_config_path("ctxmgr") / "config.toml"``, on Linux
``$XDG_CONFIG_HOME/ctxmgr/config.toml``; ``CTXMGR_CONFIG`` names another file) is trusted
like the environment, because only the user can write it: it may set any key, and holds the
``[trust]`` table. It is refused if another user owns it or others can write it.

Precedence: command-line flag > the user's environment (``OPENAI_BASE_URL``,
``GOOGLE_GEMINI_BASE_URL``, the API key variables, ``CTXMGR_CACHE_DIR``, ...) > project
file > user config > built-in default. A configured value that loses to the environment
is named in a ``note:`` on standard error and in ``ctxmgr config``.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxmgr import _provider_registry as provider_registry
from ctxmgr._redact import hide_url_credentials, scrub
from ctxmgr._terminal import escape_text
from ctxmgr.config._flag import Flag
from ctxmgr.config._flags import COMMANDS, PROJECT_MAY_SET
from ctxmgr.config._values import convert_configured, yes_or_no
from ctxmgr.errors import UsageError

__all__ = [
    "PROVIDER_ENV_OVERRIDES",
    "Config",
    "Configured",
    "describe",
    "find_config",
    "load_config",
    "printable",
    "provider_overrides",
    "toml_value",
    "user_config_path",
]

# A config file is a few lines; anything larger is not one (and is not read whole).
_MAX_CONFIG_BYTES = 1 << 20

# The same for the provider's address and key, where which variables count depends on the
# provider the run calls (known only once the command's flags are read): OPENAI_API_KEY
# says nothing about a Gemini key file. See :func:`provider_overrides`.
PROVIDER_ENV_OVERRIDES: dict[str, dict[str, tuple[str, ...]]] = {
    "base_url": {e.name: e.url_variables for e in provider_registry.ENTRIES if e.url_variables},
    "api_key_file": {e.name: e.key_variables for e in provider_registry.ENTRIES if e.key_variables},
}


def provider_overrides(config: Config, provider: str, configured: dict[str, bool]) -> dict[str, str]:
    """For each of ``summarize``'s configured (not flag-given) ``base_url`` and
    ``api_key_file``, the note to give when the environment of ``provider`` overrides it.

    ``configured`` says, per parameter, whether its value came from a config file.
    """
    notes: dict[str, str] = {}
    for param, by_provider in PROVIDER_ENV_OVERRIDES.items():
        present = [v for v in by_provider.get(provider, ()) if os.environ.get(v, "").strip()]
        if present and configured.get(param) and param in config.sources.get("summarize", {}):
            flag = param.replace("_", "-")
            source = config.sources["summarize"][param]
            notes[param] = f"{printable(source)} {flag} is not used: {', '.join(present)} is set in the environment"
    return notes


@dataclass
class Configured:
    """One configured value that did not become a default, and why."""

    command: str
    flag: str
    value: Any
    source: str
    reason: str


@dataclass
class Config:
    """Configured defaults: per command, the value, where it came from and whether it was trusted.

    ``problems`` are errors found in the files (a trusted-only key in an untrusted project,
    a project file owned by someone else): every command but ``config`` stops on them.
    """

    path: Path | None = None
    table: str = ""
    defaults: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, dict[str, str]] = field(default_factory=dict)
    trusted: dict[str, dict[str, bool]] = field(default_factory=dict)
    environment: dict[str, dict[str, str]] = field(default_factory=dict)
    user_path: Path | None = None
    user_found: bool = False
    project_trusted: bool = False
    trust_reason: str = ""
    ownership: str = ""
    project_read: bool = False
    overridden: list[Configured] = field(default_factory=list)
    refused: list[Configured] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unused_files: list[str] = field(default_factory=list)
    """Config files passed over (a ``pyproject.toml`` beside the ``ctxmgr.toml`` used)."""

    def notes(self, command: str | None) -> list[str]:
        """One line per file passed over, and per configured value of ``command`` that the
        environment overrode."""
        return [f"{printable(path)} is not used: {why}" for path, why in self._unused()] + [
            f"{printable(item.source)} {item.flag.removeprefix('--')} is not used: {item.reason}"
            for item in self.overridden
            if command is None or item.command == command
        ]

    def _unused(self) -> list[tuple[str, str]]:
        return [(path, f"{printable(self.path)} beside it is used instead") for path in self.unused_files]


# -- finding and reading files ---------------------------------------------------------


def user_config_path() -> Path:
    """``$CTXMGR_CONFIG``, else ``config.toml`` in the platform's user config folder."""
    explicit = os.environ.get("CTXMGR_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    import platformdirs  # only here: most runs need nothing else of it

    return platformdirs.user_config_path("ctxmgr", appauthor=False) / "config.toml"


def find_config(start: Path | None = None) -> tuple[Path, dict[str, Any]] | None:
    """The nearest ``ctxmgr.toml`` or ``pyproject.toml`` with a ``[tool.ctxmgr]`` table.

    Ownership is not checked here (:func:`load_config` does): a ``pyproject.toml`` of
    someone else's that holds no ``[tool.ctxmgr]`` is simply passed by.
    """
    return _find_with_status(start, [])


def _open_regular(path: Path) -> tuple[int, os.stat_result]:
    """A read descriptor on ``path`` and its status, refusing what is not a regular file.

    Non-blocking, so a FIFO put in a file's place cannot hang the run; the status is that
    of the file opened, not of a name that could change in between.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UsageError(f"{printable(path)}: cannot read: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise UsageError(f"{printable(path)}: not a regular file")
    return fd, info


def _read(path: Path, info_out: list[os.stat_result] | None = None) -> dict[str, Any]:
    fd, info = _open_regular(path)
    if info_out is not None:
        info_out.append(info)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(_MAX_CONFIG_BYTES + 1)
    if len(data) > _MAX_CONFIG_BYTES:
        raise UsageError(f"{printable(path)}: larger than {_MAX_CONFIG_BYTES // 1024} KiB: not a config file")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{printable(path)}: invalid TOML: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{printable(path)}: invalid TOML: {exc}") from None


def _owner_problem(path: Path, info: os.stat_result, *, owners: set[int], writable_mask: int) -> str | None:
    """Why ``path`` (and the link naming it, if any) may not be trusted as its owner's, or None."""
    try:
        link = os.lstat(path)
    except OSError:
        link = info
    for status in (info, link):
        if status.st_uid not in owners:
            return f"owned by uid {status.st_uid}, not by you (uid {os.geteuid()})"
    if info.st_mode & writable_mask:
        who = "other users" if writable_mask == 0o002 else "its group or other users"
        return f"writable by {who} (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def _flag_setting(name: str, raw: str) -> bool:
    answer = yes_or_no(raw)
    if answer is not None:
        return answer
    raise UsageError(f"{name} must be 1 or 0 (true/false), got {printable(raw)!r}")


def _folders(source: str, entries: Any, *, any_folder: bool = True) -> list[str]:
    """Absolute folder names from a ``[trust]`` list or an environment variable (``*``: any)."""
    if not isinstance(entries, list) or not all(isinstance(entry, str) for entry in entries):
        raise UsageError(f"{source}: expected a list of folder names")
    folders: list[str] = []
    for entry in entries:
        if entry == "*":
            if not any_folder:
                raise UsageError(
                    f"{source}: '*' is not accepted here: list each project's folder, "
                    "or set CTXMGR_TRUST_PROJECT_CONFIG=1 for one run"
                )
            folders.append(entry)
            continue
        expanded = Path(entry).expanduser()
        if not expanded.is_absolute():
            raise UsageError(f"{source}: {printable(entry)!r} is not an absolute folder name")
        folders.append(str(expanded.resolve()))
    return folders


@dataclass
class _UserConfig:
    path: Path
    found: bool = False
    table: dict[str, Any] = field(default_factory=dict)
    projects: list[str] = field(default_factory=list)
    safe_directories: list[str] = field(default_factory=list)


def _load_user_config() -> _UserConfig:
    path = user_config_path()
    user = _UserConfig(path=path)
    if not os.environ.get("CTXMGR_CONFIG") and not os.path.lexists(path):
        return user  # no user config: nothing to apply
    statuses: list[os.stat_result] = []
    data = _read(path, statuses)
    if hasattr(os, "geteuid"):
        # Root may own it too: a system-managed file (a symlink into a read-only store)
        # is as trustworthy as the system itself.
        problem = _owner_problem(path, statuses[0], owners={os.geteuid(), 0}, writable_mask=0o022)
        if problem:
            raise UsageError(
                f"{printable(path)}: user config {problem}: refused; it is trusted only if only you can write it"
            )
    trust = data.pop("trust", {})
    if not isinstance(trust, dict):
        raise UsageError(f"{printable(path)}: [trust] must be a table")
    for key, value in trust.items():
        if key == "projects":
            user.projects = _folders(f"{printable(path)}: [trust] projects", value, any_folder=False)
        elif key in ("safe-directories", "safe_directories"):
            user.safe_directories = _folders(f"{printable(path)}: [trust] safe-directories", value)
        else:
            raise UsageError(
                f"{printable(path)}: unknown setting {key!r} in [trust]; known: projects, safe-directories"
            )
    user.found = True
    user.table = data
    return user


def printable(text: object) -> str:
    """``text`` as it may be shown on a terminal: no credentials, no control characters."""
    return escape_text(scrub(str(text)))


# -- turning files into defaults -------------------------------------------------------


def _param_names(flags: tuple[Flag, ...]) -> dict[str, str]:
    """Flag spellings (``max-messages``, ``max_messages``) to the parameter name."""
    names: dict[str, str] = {}
    for flag in flags:
        for spelling in (flag.param, flag.name, flag.config_key):
            names[spelling] = names[spelling.replace("_", "-")] = names[spelling.replace("-", "_")] = flag.param
    return names


def _check_keys(path: str, table: dict[str, Any], commands: dict[str, tuple[Flag, ...]], prefix: str) -> None:
    """Unknown commands or settings are errors, never skipped."""
    known_everywhere: set[str] = set()
    for command in commands.values():
        known_everywhere.update(_param_names(command))
    for key, value in table.items():
        if isinstance(value, dict):
            if key == "trust":
                raise UsageError(
                    f"{path}: [{prefix}trust]: a project file cannot grant trust; "
                    f"list the project in [trust] of your user config ({printable(user_config_path())})"
                )
            if key not in commands:
                raise UsageError(
                    f"{path}: unknown command table [{prefix}{printable(key)}]; commands: {', '.join(sorted(commands))}"
                )
            names = _param_names(commands[key])
            for sub in value:
                if sub not in names:
                    raise UsageError(f"{path}: unknown setting {sub!r} for {key}")
        elif key not in known_everywhere:
            raise UsageError(f"{path}: unknown setting {key!r}")


def _layers(
    table: dict[str, Any], command: str, names: dict[str, str], label: str, prefix: str
) -> Iterator[tuple[str, str, Any, str, str]]:
    """(parameter, key, value, source, table name) for ``command``: top level, then its table."""
    where = f" [{prefix.rstrip('.')}]" if prefix else ""
    for key, value in table.items():
        if not isinstance(value, dict) and key in names:
            yield names[key], key, value, f"{label}{where}", f"[{prefix.rstrip('.')}] " if prefix else ""
    section = table.get(command)
    if isinstance(section, dict):
        for key, value in section.items():
            yield names[key], key, value, f"{label} [{prefix}{command}]", f"[{prefix}{command}] "


def load_config(
    start: Path | None = None, *, trust_flag: bool = False, commands: dict[str, tuple[Flag, ...]] = COMMANDS
) -> Config:
    """Read the user config and the nearest project config, and decide what each may set.

    Raises :class:`UsageError` for what cannot be read at all (invalid TOML, an unknown
    key, a user config others can write); collects in ``Config.problems`` what the user
    must decide on (a trusted-only key in an untrusted project, a project file owned by
    someone else), so ``ctxmgr config`` can still show it.
    """
    user = _load_user_config()
    user_label = f"user config {printable(user.path)}"
    if user.found:
        _check_keys(user_label, user.table, commands, "")
    config = Config(user_path=user.path, user_found=user.found)
    project_table, prefix = _read_project(config, user, commands, start, trust_flag)
    for name, command in commands.items():
        defaults, sources, trusted = _configured(config, name, command, user, user_label, project_table, prefix)
        config.environment[name] = _environment(config, name, command, defaults, sources, trusted)
        config.defaults[name] = defaults
        config.sources[name] = sources
        config.trusted[name] = trusted
    return config


def _read_project(
    config: Config, user: _UserConfig, commands: dict[str, tuple[Flag, ...]], start: Path | None, trust_flag: bool
) -> tuple[dict[str, Any], str]:
    """Find the nearest project file, decide whether it is read and trusted (into ``config``),
    and return its table and its key prefix (``tool.ctxmgr.`` in a ``pyproject.toml``)."""
    statuses: list[os.stat_result] = []
    found = _find_with_status(start, statuses, config.unused_files)
    if found is None:
        return {}, ""
    path, project_table = found
    config.path = path
    prefix = "tool.ctxmgr." if path.name == "pyproject.toml" else ""
    config.table = "[tool.ctxmgr]" if prefix else ""
    folder = str(path.parent)
    config.ownership, config.project_read = "yours", True
    problem = None
    if hasattr(os, "geteuid"):
        problem = _owner_problem(path, statuses[0], owners={os.geteuid()}, writable_mask=0o002)
    if problem is not None:
        safe, by = _safe_directory(folder, user)
        if safe:
            config.ownership = f"{problem}; accepted: its folder is a safe directory ({by})"
        else:
            config.ownership, config.project_read = f"{problem}: not read", False
            config.problems.append(
                f"{printable(path)}: {problem}: not read; if you trust that folder, list it in "
                f"CTXMGR_SAFE_DIRECTORIES or in [trust] safe-directories of {printable(user.path)}"
            )
    if config.project_read:
        _check_keys(printable(path), project_table, commands, prefix)
    config.project_trusted, config.trust_reason = _project_trust(folder, user, trust_flag)
    return project_table, prefix


def _configured(
    config: Config,
    name: str,
    command: tuple[Flag, ...],
    user: _UserConfig,
    user_label: str,
    project_table: dict[str, Any],
    prefix: str,
) -> tuple[dict[str, Any], dict[str, str], dict[str, bool]]:
    """The defaults of one command from the user config, then the project file over it:
    (value, source, trusted) by parameter; what the project may not set goes to
    ``config.refused`` and ``config.problems``."""
    names = _param_names(command)
    defaults: dict[str, Any] = {}
    sources: dict[str, str] = {}
    trusted: dict[str, bool] = {}
    objects = {flag.param: flag for flag in command}
    for param, key, value, source, where in _layers(user.table, name, names, user_label, ""):
        _check_value(objects[param], value, f"{user_label}: {where}{key}")
        defaults[param], sources[param], trusted[param] = value, source, True
    if not config.project_read or config.path is None:
        return defaults, sources, trusted
    label = printable(config.path)
    for param, key, value, source, where in _layers(project_table, name, names, label, prefix):
        _check_value(objects[param], value, f"{label}: {where}{key}")
        flag = objects[param].flag
        bound = objects[param].bound
        too_much = bound is not None and _exceeds(_as_number(objects[param], value), bound)
        if config.project_trusted or (objects[param].project and not too_much):
            defaults[param], sources[param], trusted[param] = value, source, config.project_trusted
            continue
        if too_much:
            message = (
                f"{label}: {where}{key} = {value!r}: a project file may set it up to {bound:g}; "
                f"pass {flag}, or trust this project (see 'ctxmgr config')"
            )
        else:
            what = objects[param].refused_because or "where data, keys or writes go or what code runs"
            message = (
                f"{label}: {where}{key}: a project file may not set {what}; "
                f"pass {flag}, or trust this project (see 'ctxmgr config')"
            )
        config.refused.append(Configured(name, flag, value, source, message))
        if message not in config.problems:
            config.problems.append(message)
    return defaults, sources, trusted


def _environment(
    config: Config,
    name: str,
    command: tuple[Flag, ...],
    defaults: dict[str, Any],
    sources: dict[str, str],
    trusted: dict[str, bool],
) -> dict[str, str]:
    """The variables that set a parameter of one command, by parameter; a configured value
    they override leaves ``defaults`` for ``config.overridden``."""
    flags = {flag.param: flag.flag for flag in command}
    environment: dict[str, str] = {}
    for param, variables in ((flag.param, flag.env) for flag in command):
        present = [variable for variable in variables if os.environ.get(variable)]
        if not present:
            continue
        environment[param] = "environment " + ", ".join(present)
        if param in defaults:
            config.overridden.append(
                Configured(
                    name,
                    flags[param],
                    defaults.pop(param),
                    sources.pop(param),
                    f"{', '.join(present)} is set in the environment",
                )
            )
            trusted.pop(param)
    for param, by_provider in PROVIDER_ENV_OVERRIDES.items():
        present = [v for names_ in by_provider.values() for v in names_ if os.environ.get(v, "").strip()]
        if param in flags and present:
            # Which one applies depends on the provider a run calls: shown here, and
            # decided (with a note when it beats a configured value) when a run starts.
            environment[param] = "environment " + ", ".join(present)
    return environment


def _check_value(flag: Flag, value: Any, where: str) -> None:
    """Refuse, naming the file, table and key, a value its flag would refuse (later, and
    as if it had been typed on the command line)."""
    try:
        convert_configured(flag, value)
    except ValueError as exc:
        raise UsageError(f"{where} = {printable(repr(value))}: {exc}") from None


def _as_number(flag: Flag, value: Any) -> Any:
    """``value`` converted as the flag converts it ("1000" is 1000), for the bounds."""
    try:
        return convert_configured(flag, value)
    except ValueError:
        return value  # refused with its file and key by _check_values


def _exceeds(value: Any, bound: float) -> bool:
    """Whether a configured number is above ``bound`` (NaN and infinity are)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not value <= bound


def _has_ctxmgr_table(path: Path) -> bool:
    """Whether ``path`` is a readable ``pyproject.toml`` with a ``[tool.ctxmgr]`` table."""
    if not path.is_file():
        return False
    try:
        tool = _read(path).get("tool")
    except UsageError:
        return True  # unreadable: whatever it holds is not used, and the note says so
    return isinstance(tool, dict) and isinstance(tool.get("ctxmgr"), dict)


def _find_with_status(
    start: Path | None, statuses: list[os.stat_result], unused: list[str] | None = None
) -> tuple[Path, dict[str, Any]] | None:
    """:func:`find_config`, keeping the status of the file read (for the ownership check)
    and, in ``unused``, a ``pyproject.toml`` with ``[tool.ctxmgr]`` that a ``ctxmgr.toml``
    beside it shadows."""
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        own = candidate / "ctxmgr.toml"
        if own.is_file():
            statuses.clear()
            data = _read(own, statuses)
            table = _own_table(own, data)
            if unused is not None and _has_ctxmgr_table(candidate / "pyproject.toml"):
                unused.append(str(candidate / "pyproject.toml"))
            return own, table
        project = candidate / "pyproject.toml"
        if project.is_file():
            statuses.clear()
            data = _read(project, statuses)
            tool = data.get("tool")
            if isinstance(tool, dict) and "ctxmgr" in tool:
                if not isinstance(tool["ctxmgr"], dict):
                    # Passing it over would let a parent folder's file apply instead.
                    raise UsageError(f"{printable(project)}: [tool.ctxmgr] must be a table")
                return project, tool["ctxmgr"]
    return None


def _own_table(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """The settings of a ``ctxmgr.toml``: the file itself, or its ``[tool.ctxmgr]`` table
    when it has one (then nothing may stand beside it: it would be read by no one)."""
    tool = data.get("tool")
    if tool is None:
        return data
    if not isinstance(tool, dict) or not isinstance(tool.get("ctxmgr"), dict):
        raise UsageError(f"{printable(path)}: [tool] must hold a [tool.ctxmgr] table and nothing else")
    beside = sorted(set(data) - {"tool"}) + sorted(set(tool) - {"ctxmgr"})
    if beside:
        where = ", ".join(printable(key) for key in beside)
        raise UsageError(f"{printable(path)}: {where}: outside [tool.ctxmgr], which holds this file's settings")
    return dict(tool["ctxmgr"])


def _safe_directory(folder: str, user: _UserConfig) -> tuple[bool, str]:
    raw = os.environ.get("CTXMGR_SAFE_DIRECTORIES", "")
    listed = _folders("CTXMGR_SAFE_DIRECTORIES", [entry for entry in raw.split(os.pathsep) if entry])
    if "*" in listed or folder in listed:
        return True, "CTXMGR_SAFE_DIRECTORIES"
    if "*" in user.safe_directories or folder in user.safe_directories:
        return True, f"[trust] safe-directories in {printable(user.path)}"
    return False, ""


def _project_trust(folder: str, user: _UserConfig, trust_flag: bool) -> tuple[bool, str]:
    if trust_flag:
        return True, "--trust-project-config"
    raw = os.environ.get("CTXMGR_TRUST_PROJECT_CONFIG")
    if raw is not None and _flag_setting("CTXMGR_TRUST_PROJECT_CONFIG", raw):
        return True, f"CTXMGR_TRUST_PROJECT_CONFIG={printable(raw)}"
    if folder in user.projects:
        return True, f"listed in [trust] projects of {printable(user.path)}"
    return False, (
        "not trusted: it may set only how to compact; to let it set the rest, pass --trust-project-config, "
        "set CTXMGR_TRUST_PROJECT_CONFIG=1, or list its folder in [trust] projects of the user config"
    )


# -- showing it --------------------------------------------------------------------------


def _shown(value: Any) -> Any:
    """``value`` as shown: a password or a key in a URL (``http://user:pass@host``, ``?api-key=``) is never printed."""
    if isinstance(value, str):
        return hide_url_credentials(value)
    if isinstance(value, list):
        return [_shown(item) for item in value]
    return value


def describe(config: Config, names: list[str]) -> dict[str, Any]:
    """What ``ctxmgr config --json`` prints: every value of ``names``' flags, its source and trust."""
    commands: dict[str, dict[str, dict[str, Any]]] = {}
    trusted: dict[str, dict[str, bool]] = {}
    for name in names:
        command = COMMANDS.get(name)
        if command is None:
            raise UsageError(f"unknown command {printable(name)!r}")
        settings: dict[str, dict[str, Any]] = {}
        trust: dict[str, bool] = {}
        configured = config.defaults.get(name, {})
        for option in command:
            flag = option.flag
            if option.param in configured:
                value, source = configured[option.param], config.sources[name][option.param]
                trust[flag] = config.trusted[name][option.param]
            else:
                value = option.default
                source = config.environment.get(name, {}).get(option.param, "default")
                trust[flag] = True
            settings[flag] = {"value": _shown(value), "source": source}
        commands[name] = settings
        trusted[name] = trust
    project: dict[str, Any] | None = None
    if config.path is not None:
        project = {
            "path": str(config.path),
            "table": config.table,
            "owner": config.ownership,
            "read": config.project_read,
            "trusted": config.project_trusted,
            "why": config.trust_reason,
            "passed_over": list(config.unused_files),
        }

    def listed(items: list[Configured], key: str) -> list[dict[str, Any]]:
        return [
            {
                "command": item.command,
                "flag": item.flag,
                "value": _shown(item.value),
                "source": item.source,
                key: item.reason,
            }
            for item in items
            if item.command in names
        ]

    return {
        "config_file": str(config.path) if config.path else None,
        "user_config": {"path": str(config.user_path) if config.user_path else None, "found": config.user_found},
        "project": project,
        "commands": commands,
        "trusted": trusted,
        "overridden": listed(config.overridden, "because"),
        "refused": listed(config.refused, "error"),
        "errors": list(config.problems),
        "project_may_set": {name: sorted(PROJECT_MAY_SET.get(name, ())) for name in names},
    }


def toml_value(value: Any) -> str:
    """``value`` as it would be written in a config file (``"fail"``, ``true``, ``[]``);
    a setting with no value says so (``(not set)``)."""
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # Quoted as in TOML; control characters are left to printable(), which shows them.
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return str(value)
