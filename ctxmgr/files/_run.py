"""A run over paths: the walk, each file's plan and destination, the compaction of
every file, and what happened, returned (nothing here prints).

:func:`compact_paths` is what ``trim``, ``summarize`` and ``convert`` do for files,
folders, glob patterns or standard input; the command line calls it and renders the
:class:`RunResult`. What a caller shows while the run goes (what the walk skipped, notes
as they are made, a progress bar) it learns through a :class:`RunEvents`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ctxmgr import _io as io
from ctxmgr._exits import EXIT_CHANGED, EXIT_INPUT, EXIT_OK, EXIT_PROVIDER, exit_code_for
from ctxmgr.errors import OutputError, ProviderError, UsageError
from ctxmgr.files._backup import BackupSink
from ctxmgr.files._coroutines import run_without_loop
from ctxmgr.files._driver import compact_file
from ctxmgr.files._engine import Engine, check_engine, remote_paths, run_engine
from ctxmgr.files._results import FileResult
from ctxmgr.files._settings import Settings, conversations_at_once, never_waits
from ctxmgr.files._sinks import CaptureSink, FileSink, NullSink, Sink, StdoutSink
from ctxmgr.files._summaries import summary_warnings
from ctxmgr.files._walk import (
    InputFile,
    Inputs,
    Note,
    Skipped,
    WalkRules,
    find_inputs,
    is_not_a_conversation,
    nothing_read,
    skipped_file,
)

if TYPE_CHECKING:
    from ctxmgr.cache import CacheStats
    from ctxmgr.providers._chain import SummarizerChain
    from ctxmgr.state._managers import BaseContextManager

__all__ = [
    "Plans",
    "Progress",
    "RunEvents",
    "RunOptions",
    "RunResult",
    "check_destinations",
    "compact_paths",
    "exit_code",
]

Plans = Callable[[Sequence[InputFile]], Sequence[tuple["BaseContextManager[Any]", Settings]]]
"""For each input, the manager and settings that compact it (a command line gives each
file those of the configuration nearest to it)."""


@dataclass(frozen=True)
class RunOptions:
    """Where a run's outputs go and which files it reads: the output side of a run.

    Attributes:
        output: A file or a folder (``-o``); ``"-"`` or ``None``: standard output, for
            one input (several need ``in_place``, a folder, ``check`` or ``write=False``).
        in_place: Write each output over its input.
        check: Write nothing; the exit code is 1 when a file would change.
        diff: Write nothing; keep each output in a :class:`~ctxmgr.files.CaptureSink`
            (for a unified diff against its input).
        write: ``False``: write nothing without ``in_place`` or an ``output`` file or
            folder (a caller reporting on standard output).
        follow_symlinks: Walks and patterns follow symbolic links out of the tree, and
            writes go through a symbolic link to its target (both refused otherwise).
        exclude: Patterns of paths a walk leaves out, besides what git ignores.
        include: Patterns of files a walk picks up (empty: ``*.json``, ``*.jsonl``).
        keep_outcomes: Set on every file's settings (for a diff view); ``None`` keeps them.
        measure: Set on every file's settings (token estimates); ``None`` keeps them.
        engine: Where dataset lines are compacted: ``None`` here, or an :class:`Engine`
            (Ray Data tasks, for ``--engine ray``).
        backup: Keep what each written file loses in its sidecar,
            ``NAME.ctxmgr-removed.jsonl`` beside it (see :func:`ctxmgr.files.restore`);
            files only (standard output cannot be restored).
    """

    output: Path | str | None = None
    in_place: bool = False
    check: bool = False
    diff: bool = False
    write: bool = True
    follow_symlinks: bool = False
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    keep_outcomes: bool | None = None
    measure: bool | None = None
    engine: Engine | None = None
    backup: bool = False

    @property
    def writes(self) -> bool:
        """Whether the data is written: not under ``check`` or ``diff``, nor when
        ``write`` is false (unless ``in_place`` or an output file or folder says where)."""
        if self.check or self.diff:
            return False
        return self.write or self.in_place or str(self.output) not in ("None", "-")

    @property
    def rules(self) -> WalkRules:
        """How folder walks and patterns choose files."""
        return WalkRules(self.follow_symlinks, self.exclude, self.include)


class Progress(Protocol):
    """A view of a run's progress: :meth:`file` gives each input its counter."""

    def file(self, index: int) -> tuple[Callable[[int, int], None], Callable[[], None]]:
        """The ``progress(conversations, nbytes)`` callback of input ``index``, and the
        call that marks it done."""
        ...

    def close(self) -> None:
        """The run is over."""
        ...


class RunEvents:
    """What a run says while it goes, in order; each method does nothing here, and a
    caller overrides those it shows (the command line prints them on standard error)."""

    def note(self, note: Note) -> None:
        """A note about the whole run, as it is made (also in :attr:`RunResult.notes`)."""

    def skipped(self, items: Sequence[Skipped]) -> None:
        """Entries passed over on purpose: what the walk left out (once every input has
        its destination, before any is read), then found files that hold no conversation
        (once they are read). All are in :attr:`RunResult.skipped`."""

    def progress(self, paths: Sequence[str | None], summarizer: Any) -> Progress | None:
        """A progress view for the inputs about to be read (``summarizer``: the chain
        whose ``calls`` it may count, or ``None``); ``None``: no view."""
        return None


@dataclass
class RunResult:
    """What a run did.

    Attributes:
        results: One :class:`~ctxmgr.files.FileResult` per file holding conversations
            (or that failed), in input order.
        skipped: What was passed over on purpose, each with its path and reason: what
            the walk left out, and found files holding no conversation.
        notes: What was said about the whole run (git's ignore rules not applied,
            leftovers of interrupted runs removed, an engine's notes), in order.
        exit_code: 0 done; 1 a manager failed, ``check`` found changes or ``strict``
            found rule violations; 2 an input error; 3 a summary failed (see
            :func:`exit_code`).
        stopped: The provider error that stopped every further call, if one did.
        cache: What the summary cache did (its size cap applied), when the run had one.
        outputs: Every input found, with its destination and result, in order (found
            files holding no conversation included).
    """

    results: list[FileResult]
    skipped: list[Skipped]
    notes: list[Note]
    exit_code: int
    stopped: ProviderError | None = None
    cache: CacheStats | None = None
    outputs: list[tuple[InputFile, Sink, FileResult]] = field(default_factory=list)

    @property
    def inputs(self) -> list[InputFile]:
        """Every input found, in order."""
        return [entry for entry, _, _ in self.outputs]


class _Said(RunEvents):
    """Keeps the notes of a run for its result, and passes every event on."""

    def __init__(self, events: RunEvents) -> None:
        self.events = events
        self.notes: list[Note] = []

    def note(self, note: Note) -> None:
        self.notes.append(note)
        self.events.note(note)

    def skipped(self, items: Sequence[Skipped]) -> None:
        self.events.skipped(items)

    def progress(self, paths: Sequence[str | None], summarizer: Any) -> Progress | None:
        return self.events.progress(paths, summarizer)


def compact_paths(
    paths: Sequence[str],
    manager: BaseContextManager[Any],
    settings: Settings | None = None,
    options: RunOptions | None = None,
    *,
    plans: Plans | None = None,
    events: RunEvents | None = None,
) -> RunResult:
    """Compact every file that ``paths`` name, as ``ctxmgr trim`` (or ``summarize``,
    ``convert``) does, and return what happened.

    Each path is a file, a folder (walked for ``*.json`` and ``*.jsonl``, leaving out
    what git ignores, hidden entries and installed packages, each named in
    :attr:`RunResult.skipped`), a glob pattern, or ``"-"`` for standard input. A found
    file that holds no conversation is skipped; a file named is always read.

    Args:
        paths: Files, folders and patterns.
        manager: Compacts every input (unless ``plans`` gives each its own); it opens and
            closes the summarizer they share, and holds the cache.
        settings: How files are read, compacted and written (default :class:`Settings`).
        options: Where outputs go (default :class:`RunOptions`: standard output, for
            one input; ``RunOptions(check=True)`` writes nothing).
        plans: Each input's manager and settings, from the list of inputs.
        events: Told of skipped entries, notes and progress while the run goes.

    Returns:
        The results, skipped entries, notes and exit code of the run, as the command
        line reports them; ``check`` makes the code 1 when a file would change.

    Raises:
        UsageError: Options that cannot go together, or outputs that would collide,
            before anything is read.
        InputError: A path that names nothing, or inputs that hold no conversation.
        OutputError: An output that would be written through a link or outside its folder.
    """
    settings = settings if settings is not None else Settings()
    options = options if options is not None else RunOptions()
    said = _Said(events if events is not None else RunEvents())
    if options.engine is not None:
        check_engine(paths, in_place=options.in_place, diff=options.diff)
        if options.backup:
            raise UsageError("--backup is made where the files are written here; drop it with --engine")
        found, sinks, all_results = run_engine(
            options.engine,
            paths,
            _engine_inputs(paths, options, said),
            manager,
            settings,
            output=None if options.output is None else str(options.output),
            writes=options.writes,
            measure=options.measure,
            notify=lambda text: said.note(Note("note", text)),
        )
    else:
        found, sinks, all_results = _run_here(paths, manager, settings, options, said, plans)
    results = _pass_over_non_conversations(found, all_results, said, paths)
    for result in results:
        result.warnings.extend(summary_warnings(result))
    chain = _chain(manager)
    stopped: ProviderError | None = chain.stopped if chain is not None else None
    return RunResult(
        results=results,
        skipped=found.skipped,
        notes=said.notes,
        exit_code=exit_code(results, check=options.check),
        stopped=stopped,
        cache=_finish_cache(manager),
        outputs=list(zip(found.files, sinks, all_results, strict=True)),
    )


def exit_code(results: Sequence[FileResult], *, check: bool = False) -> int:
    """2 an input error; 3 a summary failed; 1 a manager failed, ``check`` found changes
    or ``strict`` found rule violations; else 0."""
    codes = {exit_code_for(r.input_error) for r in results if r.input_error is not None}
    if EXIT_INPUT in codes or any(r.bad_lines for r in results):
        return EXIT_INPUT
    if EXIT_PROVIDER in codes:
        return EXIT_PROVIDER
    if codes:
        return max(codes)  # a manager's failure (1), or an error no rule expected (70, 74)
    if any(r.provider_errors for r in results):
        return EXIT_PROVIDER
    if any(r.errors for r in results):
        return EXIT_CHANGED
    if check and any(r.changed for r in results):
        return EXIT_CHANGED
    return EXIT_OK


def check_destinations(
    paths: Sequence[str],
    manager: BaseContextManager[Any],
    settings: Settings,
    options: RunOptions,
    *,
    events: RunEvents | None = None,
) -> None:
    """Make every check a write to the outputs of ``paths`` makes before anything is
    read (links, output folder rules, FIFOs and devices, two inputs to one file),
    reading, sending and writing nothing: for a caller that keeps files beside its
    outputs or sends paid requests before it writes them (``summarize --batch``).

    Where each output goes depends on the options alone, so no file's own plan is
    consulted (the run that follows makes them). ``events`` hears the walk's notes.
    """
    found = find_inputs(paths, options.rules, output_folder=_output_folder(options))
    for item in found.notes:
        (events or RunEvents()).note(item)
    _plan(found.files, manager, settings, options, None)


def _run_here(
    paths: Sequence[str],
    manager: BaseContextManager[Any],
    settings: Settings,
    options: RunOptions,
    said: _Said,
    plans: Plans | None,
) -> tuple[Inputs, list[Sink], list[FileResult]]:
    """Find the inputs and compact each in this process (and its forked ones)."""
    found = find_inputs(paths, options.rules, output_folder=_output_folder(options))
    for item in found.notes:
        said.note(item)
    chosen, sinks = _plan(found.files, manager, settings, options, plans)
    said.skipped(found.skipped)
    return found, sinks, _execute(_run_all(found.files, sinks, manager, chosen, said), chosen, said)


def _engine_inputs(paths: Sequence[str], options: RunOptions, said: _Said) -> Inputs:
    """The local inputs of an ``engine`` run, found by this path's walk, and its local
    output checked as this path checks it, before the engine starts: the same files,
    skips and refusals with or without an engine. Remote paths are the engine's."""
    remote = remote_paths(paths)
    local = [path for path in paths if path not in remote]
    found = find_inputs(local, options.rules, output_folder=_output_folder(options)) if local else Inputs([])
    for item in found.notes:
        said.note(item)
    readable = [entry for entry in found.files if entry.error is None]
    output = None if options.output is None else str(options.output)
    named_file = output is not None and output != "-" and "://" not in output
    if options.writes and output is not None and named_file and not io.is_null_device(output):
        follow = options.follow_symlinks
        _refuse_links(output, follow)
        if output.endswith(("/", os.sep)) or os.path.isdir(output):
            for entry in readable:
                # Its parts (NAME-00000.jsonl...) go beside this name; each is checked as it is written.
                _inside(Path(output), entry.relative, follow_symlinks=follow)
        elif len(readable) + len(remote) == 1:
            io.check_write_target(output, follow_symlinks=follow)
    said.skipped(found.skipped)
    return found


def _plan(
    inputs: Sequence[InputFile],
    manager: BaseContextManager[Any],
    settings: Settings,
    options: RunOptions,
    plans: Plans | None,
) -> tuple[Sequence[tuple[BaseContextManager[Any], Settings]], list[Sink]]:
    """Each input's manager and settings, and its destination; refuses two inputs
    written to one file. Before anything is read: a file's own plan may be refused."""
    readable = sum(1 for entry in inputs if entry.error is None)
    _check_options(options, readable)
    chosen = plans(inputs) if plans is not None else [(manager, settings)] * len(inputs)
    for _, each in chosen:
        if options.keep_outcomes is not None:
            each.keep_outcomes = options.keep_outcomes
        if options.measure is not None:
            each.measure = options.measure
    sinks = [_destination(entry, options, readable > 1) for entry in inputs]
    targets: dict[str, str] = {}
    for entry, sink in zip(inputs, sinks, strict=True):
        if isinstance(sink, FileSink | BackupSink) and sink.name is not None:
            other = targets.setdefault(os.path.realpath(sink.name), entry.path or "-")
            if other != (entry.path or "-"):
                raise UsageError(f"{other} and {entry.path} would both be written to {sink.name}")
    return chosen, sinks


def _check_options(options: RunOptions, count: int) -> None:
    if options.in_place and options.output is not None:
        raise UsageError("--in-place and --output cannot be used together")
    if options.diff and (options.in_place or options.output is not None or not options.write):
        raise UsageError("--diff prints the changes instead of writing them: drop --in-place, -o or --json")
    if not options.writes:
        return
    if options.backup and not options.in_place and str(options.output) in ("None", "-"):
        raise UsageError("--backup keeps what a written file loses: standard output cannot be restored (use -i or -o)")
    if options.output is not None and io.is_null_device(options.output):
        if options.backup:
            raise UsageError("--backup keeps what a written file loses: nothing written to the null device is kept")
        return
    if count > 1 and options.output is not None and Path(options.output).exists() and not Path(options.output).is_dir():
        raise UsageError(f"-o {options.output}: several inputs need a folder, not a file")


def _destination(entry: InputFile, options: RunOptions, many: bool) -> Sink:
    if options.diff and entry.error is None:
        if entry.path is None:
            raise UsageError("--diff needs files: standard input is read only once")
        return CaptureSink()
    if not options.writes or entry.error is not None:
        return NullSink()
    follow = options.follow_symlinks
    if options.in_place:
        if entry.path is None:
            raise UsageError("--in-place needs files, not standard input")
        # Before anything is read: a FIFO would block the read, a link would redirect the write.
        _refuse_links(entry.path, follow)
        io.check_write_target(entry.path, follow_symlinks=follow)
        return _backed_up(FileSink(entry.path, follow_symlinks=follow), entry, options)
    if options.output is None:
        if many:
            raise UsageError("several inputs need --in-place, -o DIR, --check or --json")
        return StdoutSink()
    if str(options.output) == "-":
        if many:
            raise UsageError("several inputs cannot all go to standard output; use -o DIR")
        return StdoutSink()
    if io.is_null_device(options.output):
        return NullSink()  # discarded, as a script sending output to /dev/null means
    # "-o out/" names a folder even before it exists (Path() would drop the slash).
    named_folder = str(options.output).endswith(("/", os.sep))
    output = Path(options.output)
    _refuse_links(str(output), follow)
    if not many and not named_folder and not output.is_dir():
        io.check_write_target(output, follow_symlinks=follow)
        return _backed_up(FileSink(output, follow_symlinks=follow), entry, options)
    # Folders are made when the file is written, so a failed input creates nothing.
    target = _inside(output, entry.relative, follow_symlinks=follow)
    io.check_write_target(target, follow_symlinks=follow)
    return _backed_up(FileSink(target, make_parents=True, follow_symlinks=follow), entry, options)


def _backed_up(sink: FileSink, entry: InputFile, options: RunOptions) -> Sink:
    """``sink``, writing its sidecar first when ``options.backup`` asks for one."""
    if not options.backup:
        return sink
    if entry.path is None:
        raise UsageError("--backup needs files: standard input is read only once (drop --backup)")
    return BackupSink(sink, entry.path)


def _refuse_links(path: str, follow_symlinks: bool) -> None:
    """Refuse a write whose path, as the user wrote it, goes through a symbolic link
    inside the working folder (unless ``follow_symlinks``).

    The working folder is the repository's, possibly an attacker's: ``-i chats/`` or
    ``-o out/`` planted as a link would send the writes wherever it points. Above the
    working folder the path is the system's and the user's (``/tmp`` is a link on
    macOS): there only its last component is checked (see :func:`ctxmgr._io.check_write_target`).
    """
    if follow_symlinks:
        return
    absolute = os.path.abspath(path)
    here = os.getcwd()
    if not absolute.startswith(here.rstrip(os.sep) + os.sep):
        return
    current = here
    for part in os.path.relpath(absolute, here).split(os.sep):
        current = os.path.join(current, part)
        if os.path.islink(current):
            shown = os.path.relpath(current)
            raise OutputError(
                f"{shown}: is a symbolic link (to {os.readlink(current)}); not written through it "
                "(--follow-symlinks writes to its target)"
            )


def _inside(folder: Path, relative: str, *, follow_symlinks: bool = False) -> Path:
    """``folder/relative``, refusing anything that would land outside ``folder``.

    The folders in between are resolved: a symbolic link among them that leads outside
    ``folder`` is refused. The file itself is resolved only with ``follow_symlinks``
    (otherwise a link there is refused by the write, see :func:`ctxmgr._io.check_write_target`).
    """
    base = folder.resolve()
    joined = base / relative
    target = joined.resolve() if follow_symlinks else joined.parent.resolve() / joined.name
    if target != base and base not in target.parents:
        raise OutputError(f"{relative}: would be written outside {folder}")
    return target


def _output_folder(options: RunOptions) -> str | None:
    """The real path of the output when it is an existing folder (a walk must not read it)."""
    if options.output is None or str(options.output) == "-" or not os.path.isdir(options.output):
        return None
    return os.path.realpath(options.output)


def _execute(
    work: Coroutine[Any, Any, list[FileResult]],
    chosen: Sequence[tuple[BaseContextManager[Any], Settings]],
    said: _Said,
) -> list[FileResult]:
    """Run ``work``, without an event loop when no plan needs one; say which leftovers of
    killed runs were removed (swept once per folder, not once per file written)."""
    with io.sweep_each_folder_once() as swept:
        if all(never_waits(m) for m, _ in chosen):
            results = run_without_loop(work)
        else:
            import asyncio

            held: list[list[FileResult]] = []
            asyncio.run(_kept_in(held, work))
            results = held[0]
    for folder, removed in swept.items():
        if removed:
            leftovers = f"{removed} leftover temporary file{'s' if removed > 1 else ''}"
            said.note(Note("note", f"{folder}: removed {leftovers} of interrupted ctxmgr runs"))
    return results


async def _kept_in(held: list[list[FileResult]], work: Coroutine[Any, Any, list[FileResult]]) -> None:
    """Run ``work`` and keep its results in ``held``, so the main task's result is ``None``.

    Once the main task is done, Python 3.11's ``asyncio.run`` restores the SIGINT handler,
    and ``signal`` formats the handler it replaces (a partial holding the task) into an
    error message it then discards: ``repr`` of the task, its result included, which would
    be every file's results and notes written out in full, for nothing.
    """
    held.append(await work)


async def _run_all(
    inputs: Sequence[InputFile],
    sinks: Sequence[Sink],
    manager: BaseContextManager[Any],
    chosen: Sequence[tuple[BaseContextManager[Any], Settings]],
    said: _Said,
) -> list[FileResult]:
    """Compact every input with its manager and settings (``chosen``); up to
    ``concurrency`` files at once, results in order. ``manager`` opens and closes the
    summarizer all of them share."""
    settings = chosen[0][1] if chosen else Settings()
    view = said.progress([entry.path for entry in inputs], _chain(manager))

    async def one(
        index: int, entry: InputFile, sink: Sink, plan: tuple[BaseContextManager[Any], Settings]
    ) -> FileResult:
        advance, done = view.file(index) if view is not None else (None, None)
        if entry.error is not None:  # met by a walk, never opened
            result = FileResult(source=entry.path or "-", input_error=entry.error)
        else:
            result = await compact_file(entry.path, plan[0], sink, plan[1], progress=advance)
        if isinstance(sink, BackupSink) and result.written:
            result.backup = str(sink.path)
        if isinstance(sink, FileSink | BackupSink) and sink.warnings:
            # Worded for the file written: the input's name prefixes every warning.
            where = "" if sink.name == entry.path else f"{sink.name}: "
            result.warnings.extend(where + warning for warning in sink.warnings)
        if done is not None:
            done()
        return result

    async def each() -> list[FileResult]:
        jobs = list(zip(range(len(inputs)), inputs, sinks, chosen, strict=True))
        if all(conversations_at_once(m, s) <= 1 for m, s in chosen):
            return [await one(*job) for job in jobs]
        import asyncio

        semaphore = asyncio.Semaphore(settings.concurrency)

        async def limited(
            index: int, entry: InputFile, sink: Sink, plan: tuple[BaseContextManager[Any], Settings]
        ) -> FileResult:
            async with semaphore:
                return await one(index, entry, sink, plan)

        return list(await asyncio.gather(*(limited(*job) for job in jobs)))

    # A summarizer keeps one HTTP client for the whole run (aopen), closed before the
    # event loop ends (aclose).
    opener, closer = getattr(manager, "aopen", None), getattr(manager, "aclose", None)
    if opener is not None:
        await opener()
    try:
        return await each()
    finally:
        if view is not None:
            view.close()
        if closer is not None:
            await closer()


def _pass_over_non_conversations(
    found: Inputs, results: list[FileResult], said: _Said, paths: Sequence[str]
) -> list[FileResult]:
    """The results of the files holding conversations: a file a walk found that holds
    none (a package.json) is skipped (added to ``found.skipped``), not failed."""
    inputs = found.files
    passed = [entry for entry, r in zip(inputs, results, strict=True) if is_not_a_conversation(entry, r.input_error)]
    if not passed:
        return results
    passed_over = [skipped_file(entry) for entry in passed]
    found.skipped.extend(passed_over)
    said.skipped(passed_over)
    kept = [r for e, r in zip(inputs, results, strict=True) if not is_not_a_conversation(e, r.input_error)]
    if not kept:
        raise nothing_read(passed, paths)
    return kept


def _chain(manager: BaseContextManager[Any]) -> SummarizerChain | None:
    """The summarizer chain ``manager`` calls (:func:`ctxmgr.providers.chain_of`)."""
    module = sys.modules.get("ctxmgr.providers._chain")  # never imported: this run has no chain
    return module.chain_of(manager) if module is not None else None


def _finish_cache(manager: BaseContextManager[Any]) -> CacheStats | None:
    """Apply the summary cache's size cap; what it ignored, could not store or evicted."""
    module = sys.modules.get("ctxmgr.cache")  # never imported: this run had no cache
    cache = module.find_cache(getattr(manager, "summarizer", None)) if module is not None else None
    return None if cache is None else cache.finish()
