"""A run's engine: the inputs' dataset lines compacted somewhere other than this process
(Ray Data tasks: :mod:`ctxmgr._engines.ray`).

The run's part is small: refuse what an engine cannot do, take the local inputs as the
one-machine path finds them (:func:`ctxmgr.files.compact_paths` walks them and checks
the output with its own functions: the same refusals and skips, worded the same), and
hand back one :class:`~ctxmgr.files.FileResult` per file for the usual result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ctxmgr.errors import UsageError
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings
from ctxmgr.files._sinks import NullSink, Sink
from ctxmgr.files._walk import InputFile, Inputs

if TYPE_CHECKING:
    from ctxmgr.state._managers import BaseContextManager

__all__ = ["Engine", "check_engine", "remote_paths", "run_engine"]


class Engine(Protocol):
    """Compacts dataset files elsewhere, one :class:`~ctxmgr.files.FileResult` per file,
    in order (:func:`ctxmgr._engines.ray.compact_on_ray` behind a small adapter)."""

    def __call__(
        self,
        paths: list[str],
        manager: BaseContextManager[Any],
        settings: Settings,
        *,
        output: str | None,
        writes: bool,
        relative: Mapping[str, str],
        notify: Callable[[str], None],
    ) -> list[FileResult]:
        """Compact ``paths`` (local files, and URLs the engine reads itself) into
        ``output`` (``None`` or ``"-"``: standard output; nothing when not ``writes``);
        ``relative`` names a local file below an output folder; ``notify`` says what
        the run should tell the user as it happens."""
        ...


def check_engine(paths: Sequence[str], *, in_place: bool, diff: bool) -> None:
    """Refuse what an engine cannot do, before anything is read."""
    if not paths or "-" in paths:
        raise UsageError("--engine reads files, folders or URLs, not standard input")
    if in_place:
        raise UsageError("--engine writes to -o PATH or standard output, not --in-place")
    if diff:
        raise UsageError("--diff reads the files here; drop --engine")


def remote_paths(paths: Sequence[str]) -> list[str]:
    """The paths an engine reads itself (``s3://``, ``gs://``...): not walked here."""
    return [path for path in paths if "://" in path]


def run_engine(
    engine: Engine,
    paths: Sequence[str],
    local: Inputs,
    manager: BaseContextManager[Any],
    settings: Settings,
    *,
    output: str | None,
    writes: bool,
    measure: bool | None,
    notify: Callable[[str], None],
) -> tuple[Inputs, list[Sink], list[FileResult]]:
    """Compact ``paths`` with ``engine``: ``local``, the files the walk of the
    one-machine path found (their output already checked), and the remote paths."""
    settings.keep_outcomes = False  # a dataset's view shows totals
    if measure is not None:
        settings.measure = measure
    readable = [entry for entry in local.files if entry.error is None and entry.path is not None]
    every = [entry.path for entry in readable if entry.path is not None] + remote_paths(paths)
    relative = {entry.path: entry.relative for entry in readable if entry.path is not None}
    done = engine(every, manager, settings, output=output, writes=writes, relative=relative, notify=notify)
    unread = [
        FileResult(source=entry.path or "-", kind="dataset", input_error=entry.error)
        for entry in local.files
        if entry.error is not None
    ]
    results = unread + done
    # A file the walk found keeps its entry (found files get the closing line, as here).
    walked = {entry.path: entry for entry in local.files}
    files = [walked.get(r.source) or InputFile(path=r.source, relative=r.source) for r in results]
    return Inputs(files=files, skipped=local.skipped, notes=local.notes), [NullSink() for _ in results], results
