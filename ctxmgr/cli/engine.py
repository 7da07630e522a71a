"""``--engine``: compact the inputs' dataset lines elsewhere (see :mod:`ctxmgr._engines`).

The command line's part is small: refuse what an engine cannot do, find the local
inputs and check the output as the one-machine path does (the same walk, the same
refusals and skips, worded the same), and hand back one :class:`~ctxmgr.files.FileResult`
per file for the usual report.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxmgr import _io as io
from ctxmgr.cli.console import note
from ctxmgr.cli.inputs import InputFile, Inputs, find_inputs, print_skipped
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
    settings.keep_outcomes = False  # a dataset's view shows totals
    settings.measure = show_diff(options) or options.json_report
    from ctxmgr._engines.ray import RayOutput, compact_on_ray
    from ctxmgr.cli.run import _output_folder

    remote = [argument for argument in arguments if "://" in argument]
    local = [argument for argument in arguments if "://" not in argument]
    # Local inputs are found by the walk of the one-machine path: links out of the tree,
    # what git ignores, hidden entries and the output folder are left out and named.
    found = find_inputs(local, options.rules, output_folder=_output_folder(options)) if local else Inputs([])
    readable = [entry for entry in found.files if entry.error is None and entry.path is not None]
    _check_output(options, readable, len(readable) + len(remote) > 1)
    if not options.quiet:
        print_skipped(found.skipped)
    output = RayOutput(None if options.output is None else str(options.output), writes=options.writes)
    paths = [entry.path for entry in readable if entry.path is not None] + remote
    relative = {entry.path: entry.relative for entry in readable if entry.path is not None}
    done = compact_on_ray(paths, manager, settings, output, relative=relative, notify=lambda text: note("note", text))
    unread = [
        FileResult(source=entry.path or "-", kind="dataset", input_error=entry.error)
        for entry in found.files
        if entry.error is not None
    ]
    results = unread + done
    files = [InputFile(path=result.source, relative=result.source) for result in results]
    return Inputs(files=files, skipped=found.skipped), [NullSink() for _ in results], results


def _check_output(options: Options, inputs: Sequence[InputFile], many: bool) -> None:
    """Refuse a local ``-o`` the one-machine path would refuse, before anything is read or
    Ray is started: a path through a link in the working folder, a link or a special
    file as the target, a file's name that leads out of ``-o DIR``."""
    from ctxmgr.cli.run import _inside, _refuse_links

    if not options.writes or options.output is None or str(options.output) == "-" or "://" in str(options.output):
        return
    follow = options.follow_symlinks
    output = Path(options.output)
    _refuse_links(str(output), follow)
    named_folder = str(options.output).endswith(("/", os.sep))
    if not named_folder and not output.is_dir():
        if not many:
            io.check_write_target(output, follow_symlinks=follow)
        return
    for entry in inputs:
        # The parts (NAME-00000.jsonl...) go beside this name; each is checked as it is written.
        _inside(output, entry.relative, follow_symlinks=follow)
