"""Configuration: the flag table, the config files that set defaults, and their trust rules.

- :mod:`ctxmgr.config._flag`: what a flag is (:class:`Flag`: scope, trust, bound...).
- :mod:`ctxmgr.config._flags`: every option of the compacting commands, declared once
  (:data:`COMMANDS`), and what is derived from it (:data:`PER_FILE`,
  :data:`PROJECT_MAY_SET`, :data:`PROJECT_LIMITS`, :data:`ENV_OVERRIDES`).
- :mod:`ctxmgr.config._files`: reading the user's and the project's config files and
  deciding what each may set (:func:`load_config`, :class:`Config`, :func:`describe`).
- :mod:`ctxmgr.config._nearest`: each input's nearest configuration (:class:`NearestConfigs`).

Nothing here imports the command-line framework; ``ctxmgr.cli`` declares its options from
the table and renders what these functions return.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxmgr.config._flag import FILE, RUN, Flag
from ctxmgr.config._flags import (
    COMMANDS,
    ENV_OVERRIDES,
    PER_FILE,
    PROJECT_LIMITS,
    PROJECT_MAY_SET,
    arguments,
    flag_named,
)

if TYPE_CHECKING:
    from ctxmgr.config._files import (
        PROVIDER_ENV_OVERRIDES,
        Config,
        Configured,
        describe,
        find_config,
        load_config,
        provider_overrides,
        toml_value,
        user_config_path,
    )
    from ctxmgr.config._nearest import NearestConfigs

__all__ = [
    "COMMANDS",
    "ENV_OVERRIDES",
    "FILE",
    "PER_FILE",
    "PROJECT_LIMITS",
    "PROJECT_MAY_SET",
    "PROVIDER_ENV_OVERRIDES",
    "RUN",
    "Config",
    "Configured",
    "Flag",
    "NearestConfigs",
    "arguments",
    "describe",
    "find_config",
    "flag_named",
    "load_config",
    "provider_overrides",
    "toml_value",
    "user_config_path",
]

_LOADER = frozenset(
    {
        "PROVIDER_ENV_OVERRIDES",
        "Config",
        "Configured",
        "describe",
        "find_config",
        "load_config",
        "provider_overrides",
        "toml_value",
        "user_config_path",
    }
)


def __getattr__(name: str) -> Any:
    # The file loader (tomllib, the trust checks) loads on first use: the command line
    # declares its options from the table on every start, `ctxmgr --help` included.
    if name in _LOADER:
        from ctxmgr.config import _files

        return getattr(_files, name)
    if name == "NearestConfigs":
        from ctxmgr.config import _nearest

        return _nearest.NearestConfigs
    raise AttributeError(f"module 'ctxmgr.config' has no attribute {name!r}")
