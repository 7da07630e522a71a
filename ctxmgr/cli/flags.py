"""A command's parameters as the library's objects, by the flag table's entries.

Each option's entry in :data:`ctxmgr.config.COMMANDS` names the library object it feeds
and the keyword there (``feeds``, ``arg``); :func:`ctxmgr.config.arguments` collects them.
Here are the objects every compacting command builds that way: the format
:class:`~ctxmgr.files.Settings` and the output :class:`~ctxmgr.cli.options.Options`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxmgr.config import arguments
from ctxmgr.errors import UsageError

if TYPE_CHECKING:
    from ctxmgr.cli.options import Options
    from ctxmgr.files import Settings
    from ctxmgr.files._walk import WalkRules

__all__ = ["Values", "check_jobs", "format_settings", "output_options", "walk_rules"]


class Values:
    """A command's parameters by name (``flags.model``), for the run-wide ones a command reads itself."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = dict(params)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.params[name]
        except KeyError:
            raise AttributeError(name) from None


def format_settings(command: str, params: dict[str, Any], concurrency: int = 1) -> Settings:
    """How ``command`` reads and writes files: its flags that feed the format settings,
    checked (``--from``, ``--to``, ``--summary-as``, ``--on-error``, ``--concurrency``)."""
    from ctxmgr.files import Settings
    from ctxmgr.formats import adapter

    chosen = arguments(command, "format", params)
    for name in ("fmt", "to"):
        if chosen.get(name) is not None:
            adapter(chosen[name])
    if chosen.get("to") is not None:
        _refuse_conversion(chosen.get("fmt"), chosen["to"], command)
    summary_as = chosen.get("summary_as")
    if summary_as is not None and summary_as not in ("field", "message", "system"):
        raise UsageError(f"--summary-as must be field, message or system, got {summary_as!r}")
    if chosen["on_error"] not in ("fail", "skip"):
        raise UsageError(f"--on-error must be 'fail' or 'skip', got {chosen['on_error']!r}")
    if concurrency < 1:
        raise UsageError(f"--concurrency must be >= 1, got {concurrency}")
    return Settings(**chosen, concurrency=concurrency)


def _refuse_conversion(source: str | None, to: str, command: str) -> None:
    """``--to`` a session log, refused before anything is read: always for ``convert``
    (its every input is converted), and for another command when ``--from`` names
    another format (otherwise the writer refuses each file of another format as it is
    read, see :func:`ctxmgr.formats.dump`)."""
    from ctxmgr._format_registry import refuse_conversion

    if command != "convert" and source is None:
        return
    try:
        refuse_conversion(None if command == "convert" else source, to)
    except ValueError as refused:
        raise UsageError(str(refused)) from None


def output_options(command: str, params: dict[str, Any], **fixed: Any) -> Options:
    """Where and how ``command`` writes and reports: its flags that feed the output
    options, and ``fixed`` values for those it has no flag for."""
    from ctxmgr.cli.options import Options

    return Options(**arguments(command, "output", params), **fixed)


def walk_rules(options: Options) -> WalkRules:
    """How the command's folder walks and patterns choose files."""
    from ctxmgr.files._walk import WalkRules

    return WalkRules(options.follow_symlinks, options.exclude, options.include)


def check_jobs(jobs: int | None, engine: str | None) -> None:
    """``--jobs`` and ``--engine`` choose between two ways of running: one of them."""
    if engine is not None and jobs is not None:
        raise UsageError("--jobs sets the processes of the one-machine path; drop it with --engine")
