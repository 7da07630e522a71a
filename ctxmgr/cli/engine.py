"""``--engine``: compact the inputs' dataset lines elsewhere (see :mod:`ctxmgr._engines`).

The command line's part is small: refuse what an engine cannot do, pick the output,
and hand back one :class:`~ctxmgr.files.FileResult` per file for the usual report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctxmgr.cli.inputs import InputFile, Inputs
from ctxmgr.cli.options import show_diff
from ctxmgr.errors import UsageError
from ctxmgr.files import FileResult, NullSink, Settings, Sink
from ctxmgr.state._managers import BaseContextManager

if TYPE_CHECKING:
    from ctxmgr.cli.options import Options

__all__ = ["ENGINES", "run_engine"]

ENGINES = ("ray",)


def run_engine(
    arguments: Sequence[str], manager: BaseContextManager[Any], settings: Settings, options: Options
) -> tuple[Inputs, list[Sink], list[FileResult]]:
    """Compact ``arguments`` (files, folders, ``s3://``... paths) with ``options.engine``."""
    if options.engine not in ENGINES:
        raise UsageError(f"--engine must be {' or '.join(map(repr, ENGINES))}, got {options.engine!r}")
    if not arguments or "-" in arguments:
        raise UsageError("--engine reads files, folders or URLs, not standard input")
    if options.in_place:
        raise UsageError("--engine writes to -o PATH or standard output, not --in-place")
    if options.unified:
        raise UsageError("--diff reads the files here; drop --engine")
    if options.exclude or options.include:
        raise UsageError("--exclude and --include choose files of a walk here; with --engine, name the files")
    settings.keep_outcomes = False  # a dataset's view shows totals
    settings.measure = show_diff(options) or options.json_report
    from ctxmgr._engines.ray import RayOutput, compact_on_ray

    output = RayOutput(None if options.output is None else str(options.output), writes=options.writes)
    results = compact_on_ray(list(arguments), manager, settings, output)
    files = [InputFile(path=result.source, relative=result.source) for result in results]
    return Inputs(files=files, skipped=[]), [NullSink() for _ in results], results
