"""Run a manager over the command's inputs: one file, many, folders, globs or stdin.

Shared by ``trim``, ``summarize``, ``convert`` and ``run``: resolves inputs and
destinations, runs :func:`ctxmgr.batch.compact_file` on each, shows the diff view,
progress and reports, and returns the exit code.
"""

from __future__ import annotations

import glob
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxmgr import io
from ctxmgr.batch import (
    FileResult,
    FileSink,
    NullSink,
    Settings,
    Sink,
    StdoutSink,
    compact_file,
    run_without_loop,
)
from ctxmgr.cli.console import note, print_json, printable, real_console, run_notes
from ctxmgr.cli.errors import EXIT_CHANGED, EXIT_INPUT, EXIT_OK, EXIT_PROVIDER, exit_code_for, report
from ctxmgr.cli.summaries import summary_json, summary_notes, summary_totals, summary_warnings
from ctxmgr.errors import InputError, OutputError, UsageError
from ctxmgr.state.managers import BaseContextManager, MessageContextManager

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["InputFile", "Inputs", "Options", "Skipped", "expand_inputs", "find_inputs", "run_files"]

_EXTENSIONS = (".json", ".jsonl")


@dataclass(frozen=True)
class InputFile:
    """One input: its path (``None`` for stdin) and its name relative to what was given.

    ``error`` is set for an entry a folder walk met but must not read (an unreadable
    folder, a FIFO, a device): it is reported as that input's error, never opened.
    """

    path: str | None
    relative: str
    error: InputError | None = None


@dataclass(frozen=True)
class Skipped:
    """Something a folder walk or a pattern passed over on purpose.

    ``reason`` is short (for ``--json``); ``detail`` follows the path on standard error.
    """

    path: str
    reason: str
    detail: str


@dataclass
class Inputs:
    """What the command's arguments name: files in order, and what was passed over."""

    files: list[InputFile]
    skipped: list[Skipped]


@dataclass
class Options:
    """Output-side options shared by every compacting command.

    ``follow_symlinks``: folder walks and patterns follow symbolic links out of the tree,
    and writes go through a symbolic link to its target (both refused otherwise).
    """

    output: Path | str | None = None
    in_place: bool = False
    check: bool = False
    json_report: bool = False
    diff: bool | None = None
    quiet: bool = False
    follow_symlinks: bool = False


def expand_inputs(arguments: Sequence[str], *, follow_symlinks: bool = False) -> list[InputFile]:
    """Files, folders (searched recursively for .json/.jsonl) and glob patterns.

    For commands that only read (``stats``, ``validate``): what was skipped is named on
    standard error; an entry that cannot be read (see :func:`find_inputs`) is an error,
    each one named, the last raised.
    """
    found = find_inputs(arguments, follow_symlinks=follow_symlinks)
    for item in found.skipped:
        note("skipped", f"{item.path} {item.detail}")  # in the --json report's notes too
    problems = [entry.error for entry in found.files if entry.error is not None]
    for problem in problems[:-1]:
        sys.stderr.write(f"error: {printable(problem)}\n")
    if problems:
        raise problems[-1]
    return found.files


def find_inputs(arguments: Sequence[str], *, follow_symlinks: bool = False, output_folder: str | None = None) -> Inputs:
    """Files, folders (searched recursively for .json/.jsonl) and glob patterns.

    What the user names is read as named: a symbolic link, a FIFO or ``/dev/stdin``
    given as an argument is read (a stream is read as it comes). What a walk or a
    pattern finds is the repository's, possibly an attacker's:

    * a symbolic link is not followed unless ``follow_symlinks``: its target is read at
      its own path when the walk takes it there; one pointing elsewhere (outside the
      folder, a hidden or non-JSON file) is skipped and listed in :attr:`Inputs.skipped`;
    * a FIFO, device or socket with a .json/.jsonl name, and a folder that cannot be
      listed, become entries with an ``error`` (never opened: a FIFO would block);
    * ``output_folder`` (the real path of ``-o DIR``) is not walked, so a run never
      reads its own outputs back.
    """
    if not arguments:
        if sys.stdin is None or sys.stdin.isatty():
            # Waiting for a conversation typed at the terminal is never what was meant.
            raise UsageError("no input: name a file or folder, or pipe a conversation to standard input")
        return Inputs([InputFile(None, "-")], [])
    walker = _Walker(follow_symlinks, output_folder)
    for argument in arguments:
        if argument == "-":
            if len(arguments) > 1:
                raise UsageError("standard input ('-') cannot be combined with other inputs")
            return Inputs([InputFile(None, "-")], [])
        count, passed = len(walker.files), len(walker.skipped)
        folder = os.path.isdir(argument)
        if folder:
            walker.walk(argument)
            nothing = "no .json or .jsonl files in this folder"
        elif glob.has_magic(argument) and not os.path.exists(argument):
            matches = sorted(glob.glob(argument, recursive=True))
            if not matches:
                raise InputError("no file matches this pattern", source=argument)
            walker.matches(argument, matches)
            nothing = "no file matches this pattern"
        else:
            walker.add(argument, _relative_name(argument))
            continue
        passed_over = [s.path for s in walker.skipped[passed:]]
        if len(walker.files) == count and (passed_over or folder):
            # Everything found was passed over: a run that reads nothing must not pass.
            note = f" ({len(passed_over)} skipped: {', '.join(passed_over[:3])})" if passed_over else ""
            raise InputError(f"{nothing}{note}", source=argument)
    return Inputs(walker.files, walker.skipped)


class _Walker:
    """Collects the files of folder walks and glob matches (see :func:`find_inputs`)."""

    def __init__(self, follow_symlinks: bool, output_folder: str | None) -> None:
        self.follow = follow_symlinks
        self.output_folder = output_folder
        self.files: list[InputFile] = []
        self.skipped: list[Skipped] = []
        self._seen: set[str] = set()
        self._output_named = False

    def add(self, path: str, relative: str) -> bool:
        """Add ``path`` unless it is already in; whether it was added."""
        # Following links, one file may be reached by two paths: it is read once.
        key = os.path.realpath(path) if self.follow else os.path.abspath(path)
        if key in self._seen:
            return False
        self._seen.add(key)
        self.files.append(InputFile(path, relative))
        return True

    def problem(self, path: str, message: str) -> None:
        key = os.path.abspath(path)
        if key not in self._seen:
            self._seen.add(key)
            self.files.append(InputFile(path, path, InputError(message, source=path)))

    def skip(self, path: str, reason: str, detail: str) -> None:
        self.skipped.append(Skipped(path, reason, detail))

    def is_output(self, path: str, real: str) -> bool:
        if self.output_folder is None or real != self.output_folder:
            return False
        if not self._output_named:  # once, however many walks meet it
            self._output_named = True
            self.skip(path, "output folder", "(the output folder)")
        return True

    def walk(self, root: str) -> None:
        """Every non-hidden .json/.jsonl file below ``root``, in sorted order."""
        root_real = os.path.realpath(root)
        visited = {root_real}  # real folders walked: a loop of links ends here
        pending = [(root, root_real)]
        hidden_folders = 0
        while pending:
            folder, real = pending.pop()
            try:
                with os.scandir(folder) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError as exc:
                self.problem(folder, f"cannot read this folder: {exc.strerror or exc}")
                continue
            subfolders: list[tuple[str, str]] = []
            for entry in entries:
                path = os.path.join(folder, entry.name)
                if entry.name.startswith("."):
                    # Hidden: left out as tools leave out .git, but never without a word.
                    if entry.name.endswith(_EXTENSIONS):
                        self.skip(path, "hidden file", "(a hidden file; name it to include it)")
                    elif entry.is_dir(follow_symlinks=False):
                        hidden_folders += 1
                    continue
                try:
                    if entry.is_symlink():
                        self._link(path, root, root_real, visited, subfolders)
                    elif entry.is_dir(follow_symlinks=False):
                        below = os.path.join(real, entry.name)
                        if not self.is_output(path, below):
                            visited.add(below)
                            subfolders.append((path, below))
                    elif entry.name.endswith(_EXTENSIONS):
                        # is_file() answers from the listing; stat() only for what is not one.
                        mode = stat.S_IFREG if entry.is_file(follow_symlinks=False) else entry.stat().st_mode
                        self._file(path, mode, os.path.relpath(path, root))
                except OSError as exc:
                    self.problem(path, f"cannot read: {exc.strerror or exc}")
            pending.extend(reversed(subfolders))
        if hidden_folders:
            count = f"{hidden_folders} hidden folder{'s' if hidden_folders > 1 else ''}"
            self.skip(root, "hidden folders", f"({count} below it; name one to include it)")

    def _file(self, path: str, mode: int, relative: str) -> None:
        if stat.S_ISREG(mode):
            if not self.add(path, relative) and self.follow:
                self.skip(path, "same file as another input", "(the same file as another input)")
        else:
            # Never opened: a FIFO would block the run, a device would be read forever.
            self.problem(path, f"{io.file_kind(mode)}, not a regular file; not read")

    def _link(self, path: str, root: str, root_real: str, visited: set[str], subfolders: list[tuple[str, str]]) -> None:
        target = os.path.realpath(path)
        try:
            mode = os.stat(path).st_mode
        except OSError:
            if path.endswith(_EXTENSIONS):
                self.skip(path, "broken symbolic link", f"-> {os.readlink(path)} (a broken symbolic link)")
            return
        folder = stat.S_ISDIR(mode)
        if not folder and not path.endswith(_EXTENSIONS):
            return  # not a conversation file's name: the walk would not take it anyway
        inside = _within(target, root_real)
        if self.follow:
            if folder:
                if target not in visited and not self.is_output(path, target):
                    visited.add(target)
                    subfolders.append((path, target))
            else:
                self._file(path, mode, os.path.relpath(path, root))
            return
        if not inside:
            self.skip(
                path,
                "symbolic link to outside the folder",
                f"-> outside {root} (a symbolic link; --follow-symlinks to include)",
            )
            return
        relative = os.path.relpath(target, root_real)
        if self._left_out(relative, target) or not (folder or target.endswith(_EXTENSIONS)):
            self.skip(
                path,
                "symbolic link to a path the walk leaves out",
                f"-> {relative} (a symbolic link to a path the walk leaves out; --follow-symlinks to include)",
            )
        else:
            # The walk reaches the target at its own path: read there, once.
            self.skip(path, "symbolic link inside the folder", f"-> {relative} (a symbolic link; its target is read)")

    def _left_out(self, relative: str, real: str) -> bool:
        """Whether a walk leaves out this path (``relative`` to its folder): hidden, or output."""
        hidden = relative != "." and any(part.startswith(".") for part in relative.split(os.sep))
        return hidden or (self.output_folder is not None and _within(real, self.output_folder))

    def matches(self, pattern: str, matches: list[str]) -> None:
        """The files a glob pattern matched, with the walk's rules for links and special files.

        The pattern's folder is its part before the first wildcard (``chats`` for
        ``chats/**/*.json``): a match that is a link, or lies below one, counts as a
        link from that folder.
        """
        root = _static_prefix(pattern)
        root_real = os.path.realpath(root)
        root_abs = os.path.abspath(root)
        for match in matches:
            try:
                mode = os.stat(match).st_mode
            except OSError as exc:
                if os.path.islink(match):
                    self.skip(match, "broken symbolic link", f"-> {os.readlink(match)} (a broken symbolic link)")
                else:
                    self.problem(match, f"cannot read: {exc.strerror or exc}")
                continue
            if stat.S_ISDIR(mode):
                continue  # a pattern's folders are not searched
            real = os.path.realpath(match)
            if self.output_folder is not None and _within(real, self.output_folder):
                self.is_output(self.output_folder, self.output_folder)
                continue
            plain = os.path.normpath(os.path.join(root_real, os.path.relpath(os.path.abspath(match), root_abs)))
            if self.follow or real == plain:
                self._file(match, mode, _relative_name(match))
            elif not _within(real, root_real):
                self.skip(
                    match,
                    "symbolic link to outside the folder",
                    f"-> outside {root} (a symbolic link; --follow-symlinks to include)",
                )
            elif self._left_out(relative := os.path.relpath(real, root_real), real):
                self.skip(
                    match,
                    "symbolic link to a path the walk leaves out",
                    f"-> {relative} (a symbolic link to a path the walk leaves out; --follow-symlinks to include)",
                )
            else:
                # A link inside the pattern's folder: its target is read, at its own path.
                shown = os.path.join(root, relative)
                self._file(shown, mode, _relative_name(shown))


def _within(path: str, folder: str) -> bool:
    """Whether the real path ``path`` is ``folder`` or below it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _static_prefix(pattern: str) -> str:
    """The folder a glob pattern searches: its leading components without wildcards."""
    parts: list[str] = []
    for part in pattern.split(os.sep):
        if glob.has_magic(part):
            break
        parts.append(part)
    prefix = os.sep.join(parts)
    return prefix or (os.sep if pattern.startswith(os.sep) else ".")


def _relative_name(path: str) -> str:
    """Where a file given by path lands under ``-o DIR``: its path below the working folder."""
    absolute = os.path.abspath(path)
    here = os.path.abspath(os.curdir)
    if absolute.startswith(here + os.sep):
        return os.path.relpath(absolute, here)
    return os.path.basename(absolute)


def _destination(entry: InputFile, options: Options, many: bool) -> Sink:
    if options.check or options.json_report or entry.error is not None:
        return NullSink()
    follow = options.follow_symlinks
    if options.in_place:
        if entry.path is None:
            raise UsageError("--in-place needs files, not standard input")
        # Before anything is read: a FIFO would block the read, a link would redirect the write.
        _refuse_links(entry.path, follow)
        io.check_write_target(entry.path, follow_symlinks=follow)
        return FileSink(entry.path, follow_symlinks=follow)
    if options.output is None:
        if many:
            raise UsageError("several inputs need --in-place, -o DIR, --check or --json")
        return StdoutSink()
    if str(options.output) == "-":
        if many:
            raise UsageError("several inputs cannot all go to standard output; use -o DIR")
        return StdoutSink()
    # "-o out/" names a folder even before it exists (Path() would drop the slash).
    named_folder = str(options.output).endswith(("/", os.sep))
    output = Path(options.output)
    _refuse_links(str(output), follow)
    if not many and not named_folder and not output.is_dir():
        io.check_write_target(output, follow_symlinks=follow)
        return FileSink(output, follow_symlinks=follow)
    # Folders are made when the file is written, so a failed input creates nothing.
    target = _inside(output, entry.relative, follow_symlinks=follow)
    io.check_write_target(target, follow_symlinks=follow)
    return FileSink(target, make_parents=True, follow_symlinks=follow)


def _refuse_links(path: str, follow_symlinks: bool) -> None:
    """Refuse a write whose path, as the user wrote it, goes through a symbolic link
    inside the working folder (unless ``follow_symlinks``).

    The working folder is the repository's, possibly an attacker's: ``-i chats/`` or
    ``-o out/`` planted as a link would send the writes wherever it points. Above the
    working folder the path is the system's and the user's (``/tmp`` is a link on
    macOS): there only its last component is checked (see :func:`ctxmgr.io.check_write_target`).
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
    (otherwise a link there is refused by the write, see :func:`ctxmgr.io.check_write_target`).
    """
    base = folder.resolve()
    joined = base / relative
    target = joined.resolve() if follow_symlinks else joined.parent.resolve() / joined.name
    if target != base and base not in target.parents:
        raise OutputError(f"{relative}: would be written outside {folder}")
    return target


def _output_folder(options: Options) -> str | None:
    """The real path of ``-o DIR`` when it is an existing folder (a walk must not read it)."""
    if options.output is None or str(options.output) == "-" or not os.path.isdir(options.output):
        return None
    return os.path.realpath(options.output)


def _check_options(options: Options, count: int) -> None:
    if options.in_place and options.output is not None:
        raise UsageError("--in-place and --output cannot be used together")
    if options.check and options.json_report:
        return
    if count > 1 and options.output is not None and Path(options.output).exists() and not Path(options.output).is_dir():
        raise UsageError(f"-o {options.output}: several inputs need a folder, not a file")


def _show_diff(options: Options) -> bool:
    if options.quiet or options.json_report:
        return False
    return sys.stderr.isatty() if options.diff is None else options.diff


def _file_report(result: FileResult, summarizes: bool) -> dict[str, Any]:
    """One file's entry of the ``--json`` report (with its summaries' in a summary run)."""
    return {
        "path": result.source,
        "destination": result.destination if result.written else None,
        "format": result.format,
        "kind": result.kind,
        "conversations": result.conversations,
        "changed": result.changed,
        "messages_before": result.messages_before,
        "messages_after": result.messages_after,
        "tokens_before": result.tokens_before,
        "tokens_after": result.tokens_after,
        "summaries_added": result.summaries_added,
        "dropped": dict(result.dropped),
        **(summary_json(result) | {"notes": summary_notes(result)} if summarizes else {}),
        "warnings": result.warnings,
        "errors": (
            ([str(result.input_error)] if result.input_error else [])
            + result.provider_messages()
            + result.bad_lines
            + result.errors
        ),
    }


def exit_code(results: Sequence[FileResult], options: Options) -> int:
    """2 an input error; 3 a summary failed; 1 a manager failed, ``--check`` found changes
    or ``--strict`` found rule violations; else 0."""
    codes = {exit_code_for(r.input_error) for r in results if r.input_error is not None}
    if EXIT_INPUT in codes or any(r.bad_lines for r in results):
        return EXIT_INPUT
    if EXIT_PROVIDER in codes:
        return EXIT_PROVIDER
    if codes:
        return EXIT_CHANGED
    if any(r.provider_errors for r in results):
        return EXIT_PROVIDER
    if any(r.errors for r in results):
        return EXIT_CHANGED
    if options.check and any(r.changed for r in results):
        return EXIT_CHANGED
    return EXIT_OK


def run_files(
    arguments: Sequence[str],
    manager: BaseContextManager[Any],
    settings: Settings,
    options: Options,
    console: Console,
) -> int:
    """Compact every input; print diffs, warnings, errors and reports; return the exit code."""
    found = find_inputs(arguments, follow_symlinks=options.follow_symlinks, output_folder=_output_folder(options))
    inputs = found.files
    readable = sum(1 for entry in inputs if entry.error is None)
    many = readable > 1
    _check_options(options, readable)
    settings.keep_outcomes = _show_diff(options)
    # Token estimates cost a pass over every message's text: only when they are shown.
    settings.measure = settings.keep_outcomes or options.json_report
    sinks = [_destination(entry, options, many) for entry in inputs]
    targets: dict[str, str] = {}
    for entry, sink in zip(inputs, sinks, strict=True):
        if isinstance(sink, FileSink) and sink.name is not None:
            other = targets.setdefault(os.path.realpath(sink.name), entry.path or "-")
            if other != (entry.path or "-"):
                raise UsageError(f"{other} and {entry.path} would both be written to {sink.name}")
    if options.json_report and (options.in_place or options.output not in (None, "-")):
        target = "--in-place" if options.in_place else f"-o {options.output}"
        note("note", f"--json prints a report instead of the data: {target} writes nothing")
    if not options.quiet:
        for item in found.skipped:
            console.print(f"skipped: {printable(item.path)} {printable(item.detail)}", markup=False, soft_wrap=True)
    work = _run_all(inputs, sinks, manager, settings, options, console)
    # Leftovers of killed runs are swept once per folder, not once per file written.
    with io.sweep_each_folder_once() as swept:
        if type(manager) is MessageContextManager and settings.concurrency <= 1:
            results = run_without_loop(work)
        else:
            import asyncio

            results = asyncio.run(work)
    for folder, removed in swept.items():
        if removed:
            leftovers = f"{removed} leftover temporary file{'s' if removed > 1 else ''}"
            note("note", f"{folder}: removed {leftovers} of interrupted ctxmgr runs")
    for result in results:
        # Worded like every other warning of the file: on standard error and in --json.
        result.warnings.extend(summary_warnings(result))
        _print_result(result, options, console)
    cache_report = _finish_cache(manager, options, console)
    if options.json_report:
        # A summary manager (or a subclass) reports its summaries, even when none was made.
        summarizes = callable(getattr(manager, "summarize_span", None))
        payload = {
            "files": [_file_report(r, summarizes) for r in results],
            "skipped": [{"path": s.path, "reason": s.reason} for s in found.skipped],
            "totals": {
                "files": len(results),
                "changed": sum(1 for r in results if r.changed),
                "failed": sum(1 for r in results if r.failed or r.errors),
                "conversations": sum(r.conversations for r in results),
                "messages_before": sum(r.messages_before for r in results),
                "messages_after": sum(r.messages_after for r in results),
                "tokens_before": sum(r.tokens_before for r in results),
                "tokens_after": sum(r.tokens_after for r in results),
                "dropped": _dropped_totals(results),
                **(summary_totals(results) if summarizes else {}),
            },
            "exit_code": exit_code(results, options),
        }
        if cache_report is not None:
            payload["cache"] = cache_report
        payload["notes"] = run_notes()
        print_json(payload)
    return exit_code(results, options)


def _dropped_totals(results: Sequence[FileResult]) -> dict[str, int]:
    """What the run's conversions left out, by kind, over every file."""
    total: dict[str, int] = {}
    for result in results:
        for kind, count in result.dropped.items():
            total[kind] = total.get(kind, 0) + count
    return total


def _finish_cache(manager: BaseContextManager[Any], options: Options, console: Console) -> dict[str, Any] | None:
    """Apply the summary cache's size cap; say what it ignored, could not store or evicted."""
    module = sys.modules.get("ctxmgr.cache")  # never imported: this run had no cache
    cache = module.find_cache(getattr(manager, "summarizer", None)) if module is not None else None
    if cache is None:
        return None
    stats = cache.finish()
    if not options.quiet:
        from rich.markup import escape

        for line in stats.warnings():
            console.print(f"[yellow]warning:[/] {escape(printable(line))}", soft_wrap=True)
        for line in stats.notes():
            console.print(f"note: {escape(printable(line))}", soft_wrap=True)
    report: dict[str, Any] = stats.as_json()
    return report


async def _run_all(
    inputs: Sequence[InputFile],
    sinks: Sequence[Sink],
    manager: BaseContextManager[Any],
    settings: Settings,
    options: Options,
    console: Console,
) -> list[FileResult]:
    """Compact every input; up to ``settings.concurrency`` files at once, results in order."""
    show_progress = not options.quiet and sys.stderr.isatty() and (len(inputs) > 1 or settings.concurrency > 1)
    done = 0
    bar: Any = None
    task: Any = None

    counter = getattr(getattr(manager, "summarizer", None), "calls", None)
    summarizer = getattr(manager, "summarizer", None) if counter is not None else None

    def advance(count: int) -> None:
        nonlocal done
        done += count
        if bar is not None:
            bar.update(task, conversations=done, calls=_calls_text(summarizer), refresh=True)

    async def one(entry: InputFile, sink: Sink) -> FileResult:
        if entry.error is not None:  # met by a walk, never opened
            result = FileResult(source=entry.path or "-", input_error=entry.error)
        else:
            result = await compact_file(entry.path, manager, sink, settings, progress=advance)
        if isinstance(sink, FileSink) and sink.warnings:
            # Worded for the file written: the input's name prefixes every warning.
            where = "" if sink.name == entry.path else f"{sink.name}: "
            result.warnings.extend(where + warning for warning in sink.warnings)
        if bar is not None:
            bar.advance(task)
            bar.refresh()
        return result

    async def each() -> list[FileResult]:
        pairs = zip(inputs, sinks, strict=True)
        if settings.concurrency <= 1:
            return [await one(entry, sink) for entry, sink in pairs]
        import asyncio

        semaphore = asyncio.Semaphore(settings.concurrency)

        async def limited(entry: InputFile, sink: Sink) -> FileResult:
            async with semaphore:
                return await one(entry, sink)

        return list(await asyncio.gather(*(limited(e, s) for e, s in pairs)))

    async def run() -> list[FileResult]:
        # A summarizer keeps one HTTP client for the whole run (aopen), closed before the
        # event loop ends (aclose).
        opener, closer = getattr(manager, "aopen", None), getattr(manager, "aclose", None)
        if opener is not None:
            await opener()
        try:
            return await each()
        finally:
            if closer is not None:
                await closer()

    if not show_progress:
        return await run()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[conversations]} conversations{task.fields[calls]}"),
        TimeElapsedColumn(),
        console=real_console(console),
        transient=True,
        # Redrawn on each update instead of by a timer thread: a process with a thread
        # running must not fork, so the thread would turn the parallel trim off.
        auto_refresh=False,
    ) as progress:
        bar = progress
        task = progress.add_task("files", total=len(inputs), conversations=0, calls=_calls_text(summarizer))
        return await run()


def _calls_text(summarizer: Any) -> str:
    """``, 12 calls, ~30,500 tokens`` for the progress bar of a summary run."""
    if summarizer is None:
        return ""
    return f", {summarizer.calls} calls, ~{summarizer.tokens:,} tokens sent"


def _print_result(result: FileResult, options: Options, console: Console) -> None:
    name = printable(result.source)
    if result.input_error is not None:
        report(console, result.input_error)
        return
    show_diff = _show_diff(options)
    notes = [] if options.quiet else summary_notes(result)
    if not (
        show_diff
        or notes
        or result.bad_lines
        or result.errors
        or result.provider_errors
        or (result.warnings and not options.quiet)
        or (options.check and result.changed and not options.quiet)
    ):
        return  # nothing to print: Rich (and the model, for the diff) stays unimported
    from rich.markup import escape

    if show_diff:
        from ctxmgr.cli.diff import render_diff

        if result.kind == "conversation":
            # One conversation: the file's figures are its own (as written, summary included).
            single = len(result.outcomes) == 1
            for outcome in result.outcomes:
                render_diff(
                    console,
                    name=name,
                    before=outcome.before,
                    after=outcome.after,
                    summary_before=outcome.summary_before,
                    summary_after=outcome.summary_after,
                    messages=(result.messages_before, result.messages_after) if single else None,
                    tokens=(result.tokens_before, result.tokens_after) if single else None,
                )
        else:
            console.print(
                f"[bold]{escape(name)}[/]: {result.conversations} conversations, "
                f"{result.changed_conversations} changed; messages {result.messages_before} → "
                f"{result.messages_after}; est. tokens {result.tokens_before} → {result.tokens_after}"
                + (f"; {result.summaries_added} summaries added" if result.summaries_added else ""),
                soft_wrap=True,
            )
    for line in notes:
        console.print(f"note: {escape(name)}: {escape(printable(line))}", soft_wrap=True)
    if not options.quiet:
        for warning in result.warnings:
            console.print(f"[yellow]warning:[/] {escape(name)}: {escape(printable(warning))}", soft_wrap=True)
    for error in result.bad_lines + result.errors:
        console.print(f"[bold red]error:[/] {escape(name)}: {escape(printable(error))}", soft_wrap=True)
    for provider_error in result.provider_messages():
        console.print(f"[bold red]error:[/] {escape(name)}: {escape(printable(provider_error))}", soft_wrap=True)
    if options.check and result.changed and not options.quiet:
        console.print(f"would change {escape(name)}", soft_wrap=True)
