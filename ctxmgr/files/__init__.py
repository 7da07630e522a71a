"""Compacting files: one conversation, or a JSONL dataset streamed line by line.

A file is a *dataset* when it is JSONL whose first record is itself a whole conversation
(``{"messages": [...]}``, ``{"contents": [...]}``, a row with a ``context``, a list of
messages, ...). Datasets are processed as a stream: memory stays bounded by the largest
line (times the number of conversations in flight), never by the file. Any other file
is read whole as one conversation. Results go to a :class:`Sink`, which commits
atomically or not at all: with ``on_error="fail"`` a bad line means nothing is written.

The public calls:

- :func:`compact_paths`: files, folders, glob patterns or standard input, walked,
  compacted and written as ``ctxmgr trim`` (``summarize``, ``convert``) does, returning a
  :class:`RunResult` (results, skipped entries, notes, exit code); :class:`RunOptions`
  says where outputs go, :class:`RunEvents` hears what the run says while it goes.
- :func:`compact_file` (async): a file (or standard input) into a sink, returning a
  :class:`FileResult`; :func:`run_without_loop` drives it when the manager never waits.
- :func:`compact_lines`: a batch of dataset lines in memory, returning a
  :class:`LinesResult` (output lines, warnings, counts), for engines that split a
  dataset themselves (Spark, Dask, and ``--engine ray`` in :mod:`ctxmgr._engines.ray`);
  :func:`acompact_lines` inside an event loop.
- :func:`read_conversations`: every conversation of a file, for reading only.
- :func:`restore`: a file ctxmgr wrote with a backup, back as it was (a :class:`Restored`).

One job per module; imports point down this list:

- :mod:`~ctxmgr.files._settings`: :class:`Settings`, and whether a run is a plain trim.
- :mod:`~ctxmgr.files._summaries`, :mod:`~ctxmgr.files._figures`,
  :mod:`~ctxmgr.files._results`: what happened to a file (counted, merged, reported).
- :mod:`~ctxmgr.files._sinks`: where output goes.
- :mod:`~ctxmgr.files._backup`: the sidecar of a written file, and :func:`restore`.
- :mod:`~ctxmgr.files._reading`: bytes of a file (dataset or document, lines, whole).
- :mod:`~ctxmgr.files._loading`: conversations out of files.
- :mod:`~ctxmgr.files._fast_edits`, :mod:`~ctxmgr.files._fast_clearing`: tool results cut
  or cleared inside their records, on an outline.
- :mod:`~ctxmgr.files._fastpath`: the plain trim from an outline.
- :mod:`~ctxmgr.files._compaction`: one document or one dataset line through a manager.
- :mod:`~ctxmgr.files._coroutines`: running coroutines with or without an event loop.
- :mod:`~ctxmgr.files._lines`: :func:`compact_lines`.
- :mod:`~ctxmgr.files._processes`, :mod:`~ctxmgr.files._parallel`: a large dataset over
  several processes.
- :mod:`~ctxmgr.files._driver`: :func:`compact_file`.
- :mod:`~ctxmgr.files._walk`: what paths name (files, folder walks, patterns).
- :mod:`~ctxmgr.files._plan`: what a summary run would send, without sending it.
- :mod:`~ctxmgr.files._engine`, :mod:`~ctxmgr.files._run`: :func:`compact_paths`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxmgr.files._backup import Restored
    from ctxmgr.files._coroutines import run_without_loop
    from ctxmgr.files._driver import compact_file
    from ctxmgr.files._engine import Engine
    from ctxmgr.files._lines import LinesResult, acompact_lines, compact_lines
    from ctxmgr.files._loading import read_conversations
    from ctxmgr.files._reading import is_conversation_record
    from ctxmgr.files._restore import restore
    from ctxmgr.files._results import FileResult
    from ctxmgr.files._run import Plans, Progress, RunEvents, RunOptions, RunResult, compact_paths
    from ctxmgr.files._settings import Settings
    from ctxmgr.files._sinks import CaptureSink, FileSink, NullSink, Sink, StdoutSink
    from ctxmgr.files._walk import InputFile, Note, Skipped

# Loaded on first use: a trim needs no lines, a validate or a stats reads without the
# driver, and each module costs start-up time.
_LAZY = {
    "Restored": "ctxmgr.files._backup",
    "restore": "ctxmgr.files._restore",
    "CaptureSink": "ctxmgr.files._sinks",
    "Engine": "ctxmgr.files._engine",
    "FileResult": "ctxmgr.files._results",
    "FileSink": "ctxmgr.files._sinks",
    "InputFile": "ctxmgr.files._walk",
    "LinesResult": "ctxmgr.files._lines",
    "Note": "ctxmgr.files._walk",
    "NullSink": "ctxmgr.files._sinks",
    "Plans": "ctxmgr.files._run",
    "Progress": "ctxmgr.files._run",
    "RunEvents": "ctxmgr.files._run",
    "RunOptions": "ctxmgr.files._run",
    "RunResult": "ctxmgr.files._run",
    "Settings": "ctxmgr.files._settings",
    "Sink": "ctxmgr.files._sinks",
    "Skipped": "ctxmgr.files._walk",
    "StdoutSink": "ctxmgr.files._sinks",
    "acompact_lines": "ctxmgr.files._lines",
    "compact_file": "ctxmgr.files._driver",
    "compact_lines": "ctxmgr.files._lines",
    "compact_paths": "ctxmgr.files._run",
    "is_conversation_record": "ctxmgr.files._reading",
    "read_conversations": "ctxmgr.files._loading",
    "run_without_loop": "ctxmgr.files._coroutines",
}

__all__ = [
    "CaptureSink",
    "Engine",
    "FileResult",
    "FileSink",
    "InputFile",
    "LinesResult",
    "Note",
    "NullSink",
    "Plans",
    "Progress",
    "RunEvents",
    "RunOptions",
    "Restored",
    "RunResult",
    "Settings",
    "Sink",
    "Skipped",
    "StdoutSink",
    "acompact_lines",
    "compact_file",
    "compact_lines",
    "compact_paths",
    "is_conversation_record",
    "read_conversations",
    "restore",
    "run_without_loop",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
