"""``--engine``: compact the inputs' dataset lines elsewhere (see :mod:`ctxmgr._engines`).

The command line's part is small: refuse what an engine cannot do, take the local
inputs as the one-machine path finds them (``run_files`` walks them and checks ``-o``
with its own functions: the same refusals and skips, worded the same), and hand back one
:class:`~ctxmgr.files.FileResult` per file for the usual report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctxmgr.cli.console import note
from ctxmgr.cli.inputs import InputFile, Inputs
from ctxmgr.cli.options import show_diff
from ctxmgr.errors import UsageError
from ctxmgr.files import FileResult, NullSink, Settings, Sink
from ctxmgr.state._managers import BaseContextManager

if TYPE_CHECKING:
    from ctxmgr.cli.options import Options

__all__ = ["ENGINES", "check_engine", "run_engine"]

ENGINES = ("ray",)


def check_engine(arguments: Sequence[str], options: Options) -> None:
    """Refuse what ``options.engine`` cannot do, before anything is read."""
    if options.engine not in ENGINES:
        raise UsageError(f"--engine must be {' or '.join(map(repr, ENGINES))}, got {options.engine!r}")
    if not arguments or "-" in arguments:
        raise UsageError("--engine reads files, folders or URLs, not standard input")
    if options.in_place:
        raise UsageError("--engine writes to -o PATH or standard output, not --in-place")
    if options.unified:
        raise UsageError("--diff reads the files here; drop --engine")


def remote_arguments(arguments: Sequence[str]) -> list[str]:
    """The arguments Ray Data reads itself (``s3://``, ``gs://``...): not walked here."""
    return [argument for argument in arguments if "://" in argument]


def run_engine(
    arguments: Sequence[str],
    local: Inputs,
    manager: BaseContextManager[Any],
    settings: Settings,
    options: Options,
) -> tuple[Inputs, list[Sink], list[FileResult]]:
    """Compact ``arguments`` with ``options.engine``: ``local``, the files the walk of the
    one-machine path found (their ``-o`` already checked), and the remote arguments."""
    settings.keep_outcomes = False  # a dataset's view shows totals
    settings.measure = show_diff(options) or options.json_report
    from ctxmgr._engines.ray import RayOutput, compact_on_ray

    readable = [entry for entry in local.files if entry.error is None and entry.path is not None]
    output = RayOutput(None if options.output is None else str(options.output), writes=options.writes)
    paths = [entry.path for entry in readable if entry.path is not None] + remote_arguments(arguments)
    relative = {entry.path: entry.relative for entry in readable if entry.path is not None}
    done = compact_on_ray(paths, manager, settings, output, relative=relative, notify=lambda text: note("note", text))
    unread = [
        FileResult(source=entry.path or "-", kind="dataset", input_error=entry.error)
        for entry in local.files
        if entry.error is not None
    ]
    results = unread + done
    # A file the walk found keeps its entry (found files get the closing line, as here).
    walked = {entry.path: entry for entry in local.files}
    files = [walked.get(r.source) or InputFile(path=r.source, relative=r.source) for r in results]
    return Inputs(files=files, skipped=local.skipped), [NullSink() for _ in results], results
