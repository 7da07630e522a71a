"""Run a manager over the command's inputs: one file, many, folders, globs or stdin.

Shared by ``trim``, ``summarize``, ``convert`` and ``run``: resolves inputs and
destinations, runs :func:`ctxmgr.files.compact_file` on each, shows the diff view,
progress and reports, and returns the exit code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxmgr import _io as io
from ctxmgr.cli.console import (
    located,
    note,
    print_json,
    printable,
    real_console,
    run_notes,
    show_warning,
    warning_digest,
)
from ctxmgr.cli.errors import EXIT_CHANGED, EXIT_INPUT, EXIT_OK, EXIT_PROVIDER, exit_code_for, report
from ctxmgr.cli.inputs import (
    InputFile,
    Inputs,
    Skipped,
    expand_inputs,
    find_inputs,
    is_not_a_conversation,
    print_skipped,
    skipped_file,
)
from ctxmgr.cli.options import Options, show_diff
from ctxmgr.cli.progress import ProgressView
from ctxmgr.errors import InputError, OutputError, ProviderError, UsageError
from ctxmgr.files import (
    CaptureSink,
    FileResult,
    FileSink,
    NullSink,
    Settings,
    Sink,
    StdoutSink,
    compact_file,
    run_without_loop,
)
from ctxmgr.files._settings import conversations_at_once, never_waits
from ctxmgr.files._summaries import summary_notes, summary_totals, summary_warnings
from ctxmgr.state._managers import BaseContextManager

if TYPE_CHECKING:
    from rich.console import Console

    from ctxmgr.providers._chain import SummarizerChain

__all__ = [
    "InputFile",
    "Inputs",
    "Options",
    "Plans",
    "Skipped",
    "expand_inputs",
    "find_inputs",
    "run_files",
    "summary_line",
]


def _pretty_lines(data: bytes) -> list[str]:
    """``data`` as indented JSON lines, a record at a time for JSONL, so that a change in
    a one-line record shows as the lines it touches, not one giant changed line."""
    import orjson

    def pretty(chunk: bytes) -> list[str]:
        try:
            text = orjson.dumps(orjson.loads(chunk), option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONDecodeError:
            text = chunk.decode("utf-8", "replace")  # read without error a moment ago: not reached
        return [line + "\n" for line in text.splitlines()]

    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:  # JSONL
        return [line for record in data.splitlines() for line in (pretty(record) if record.strip() else ["\n"])]
    return pretty(data)


def _diff_name(name: str) -> str:
    """A file name for a ``---``/``+++`` line, which is read in a CI log as it is: a name
    holding a newline, a terminal's control, a byte that is not UTF-8 (``\\udcff``), a
    backslash or a double quote is written in double quotes, as git does, with the
    escapes of everything ctxmgr prints (``\\n``, ``\\x1b``), so it cannot forge a line."""
    from ctxmgr._terminal import escape_text

    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    shown = escape_text(quoted).encode("utf-8", "backslashreplace").decode("utf-8")
    return name if shown == name else f'"{shown}"'


def _print_unified(entry: InputFile, sink: Sink, result: FileResult) -> None:
    """The unified diff of one file that would change, on standard output."""
    if not isinstance(sink, CaptureSink) or sink.data is None or entry.path is None or not result.changed:
        return
    import difflib

    from ctxmgr._terminal import escape_text

    try:
        before = Path(entry.path).read_bytes()
    except OSError:
        return  # it was read a moment ago; an error now is reported by nothing else to diff
    name = entry.path
    # a/ and b/ as git writes them (git apply, patch -p1), for a name below this folder.
    old, new = (name, name) if os.path.isabs(name) else (f"a/{name}", f"b/{name}")
    lines = difflib.unified_diff(_pretty_lines(before), _pretty_lines(sink.data), _diff_name(old), _diff_name(new))
    shown = "".join(lines)
    # Conversations are input: on a terminal, nothing in them may drive it.
    sys.stdout.write(escape_text(shown, multiline=True) if sys.stdout.isatty() else shown)
    sys.stdout.flush()


def _destination(entry: InputFile, options: Options, many: bool) -> Sink:
    if options.unified and entry.error is None:
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


def _output_folder(options: Options) -> str | None:
    """The real path of ``-o DIR`` when it is an existing folder (a walk must not read it)."""
    if options.output is None or str(options.output) == "-" or not os.path.isdir(options.output):
        return None
    return os.path.realpath(options.output)


def _check_options(options: Options, count: int) -> None:
    if options.in_place and options.output is not None:
        raise UsageError("--in-place and --output cannot be used together")
    if options.unified and (options.in_place or options.output is not None or options.json_report):
        raise UsageError("--diff prints the changes instead of writing them: drop --in-place, -o or --json")
    if not options.writes:
        return
    if count > 1 and options.output is not None and Path(options.output).exists() and not Path(options.output).is_dir():
        raise UsageError(f"-o {options.output}: several inputs need a folder, not a file")


def exit_code(results: Sequence[FileResult], options: Options) -> int:
    """2 an input error; 3 a summary failed; 1 a manager failed, ``--check`` found changes
    or ``--strict`` found rule violations; else 0."""
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
    if options.check and any(r.changed for r in results):
        return EXIT_CHANGED
    return EXIT_OK


Plans = Callable[[Sequence[InputFile]], Sequence[tuple[BaseContextManager[Any], Settings]]]
"""For each input, the manager and settings that compact it (see :mod:`ctxmgr.cli.nearest`)."""


def run_files(
    arguments: Sequence[str],
    manager: BaseContextManager[Any],
    settings: Settings,
    options: Options,
    console: Console,
    *,
    plans: Plans | None = None,
) -> int:
    """Compact every input; print diffs, warnings, errors and reports; return the exit code.

    ``manager`` and ``settings`` compact every input, unless ``plans`` gives each its
    own (from the configuration nearest to it); ``manager`` still opens and closes the
    summarizer they share, and holds the cache.
    """
    if options.engine is not None:
        from ctxmgr.cli.engine import check_engine, run_engine

        check_engine(arguments, options)
        local = _engine_inputs(arguments, options)
        found, sinks, all_results = run_engine(arguments, local, manager, settings, options)
    else:
        found, sinks, all_results = _run_here(arguments, manager, settings, options, console, plans)
    inputs = found.files
    results = _pass_over_non_conversations(inputs, all_results, found.skipped, options, arguments)
    chain = _chain(manager)
    stopped: ProviderError | None = chain.stopped if chain is not None else None
    diffs = {id(r): (e, s) for e, r, s in zip(inputs, all_results, sinks, strict=True)} if options.unified else {}
    for result in results:
        # Worded like every other warning of the file: on standard error and in --json.
        result.warnings.extend(summary_warnings(result))
        _print_result(result, options, console, stopped)
        if id(result) in diffs:
            _print_unified(*diffs[id(result)], result)
    if stopped is not None:
        _print_stopped(results, stopped, console)
    cache_report = _finish_cache(manager, options, console)
    code = exit_code(results, options)
    if not options.quiet:
        _print_closing(inputs, results, found.skipped, options, console)
    if options.json_report:
        print_json(_json_report(results, found.skipped, manager, stopped, cache_report, code))
    return code


def check_destinations(
    arguments: Sequence[str], manager: BaseContextManager[Any], settings: Settings, options: Options
) -> None:
    """Make every check a write to the outputs of ``arguments`` makes before anything is
    read (links, ``-o`` folder rules, FIFOs and devices, two inputs to one file), reading,
    sending and writing nothing: for a command that keeps files beside its outputs or
    sends paid requests before it writes them (``summarize --batch``).

    Where each output goes depends on the options alone, so no file's nearest
    configuration is consulted (the run that follows reads them, and says what it uses).
    """
    found = find_inputs(arguments, options.rules, output_folder=_output_folder(options))
    _plan(found.files, manager, settings, options, None)


def _run_here(
    arguments: Sequence[str],
    manager: BaseContextManager[Any],
    settings: Settings,
    options: Options,
    console: Console,
    plans: Plans | None,
) -> tuple[Inputs, list[Sink], list[FileResult]]:
    """Find the inputs and compact each in this process (and its forked ones)."""
    found = find_inputs(arguments, options.rules, output_folder=_output_folder(options))
    chosen, sinks = _plan(found.files, manager, settings, options, plans)
    if not options.quiet:
        print_skipped(found.skipped)
    return found, sinks, _execute(_run_all(found.files, sinks, manager, chosen, options, console), chosen)


def _engine_inputs(arguments: Sequence[str], options: Options) -> Inputs:
    """The local inputs of an ``--engine`` run, found by this path's walk, and its local
    ``-o`` checked as this path checks it, before the engine starts: the same files,
    skips and refusals with or without ``--engine``. Remote arguments are the engine's."""
    from ctxmgr.cli.engine import remote_arguments

    remote = remote_arguments(arguments)
    local = [argument for argument in arguments if argument not in remote]
    found = find_inputs(local, options.rules, output_folder=_output_folder(options)) if local else Inputs([])
    readable = [entry for entry in found.files if entry.error is None]
    output = None if options.output is None else str(options.output)
    if options.writes and output is not None and output != "-" and "://" not in output:
        follow = options.follow_symlinks
        _refuse_links(output, follow)
        if output.endswith(("/", os.sep)) or os.path.isdir(output):
            for entry in readable:
                # Its parts (NAME-00000.jsonl...) go beside this name; each is checked as it is written.
                _inside(Path(output), entry.relative, follow_symlinks=follow)
        elif len(readable) + len(remote) == 1:
            io.check_write_target(output, follow_symlinks=follow)
    if not options.quiet:
        print_skipped(found.skipped)
    return found


def _plan(
    inputs: Sequence[InputFile],
    manager: BaseContextManager[Any],
    settings: Settings,
    options: Options,
    plans: Plans | None,
) -> tuple[Sequence[tuple[BaseContextManager[Any], Settings]], list[Sink]]:
    """Each input's manager and settings, and its destination; refuses two inputs
    written to one file. Before anything is read: a file's nearest configuration may be
    refused (exit 2)."""
    readable = sum(1 for entry in inputs if entry.error is None)
    _check_options(options, readable)
    chosen = plans(inputs) if plans is not None else [(manager, settings)] * len(inputs)
    for _, each in chosen:
        each.keep_outcomes = show_diff(options)
        # Token estimates cost a pass over every message's text: only when they are shown.
        each.measure = each.keep_outcomes or options.json_report
    sinks = [_destination(entry, options, readable > 1) for entry in inputs]
    targets: dict[str, str] = {}
    for entry, sink in zip(inputs, sinks, strict=True):
        if isinstance(sink, FileSink) and sink.name is not None:
            other = targets.setdefault(os.path.realpath(sink.name), entry.path or "-")
            if other != (entry.path or "-"):
                raise UsageError(f"{other} and {entry.path} would both be written to {sink.name}")
    return chosen, sinks


def _execute(
    work: Coroutine[Any, Any, list[FileResult]], chosen: Sequence[tuple[BaseContextManager[Any], Settings]]
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
            note("note", f"{folder}: removed {leftovers} of interrupted ctxmgr runs")
    return results


async def _kept_in(held: list[list[FileResult]], work: Coroutine[Any, Any, list[FileResult]]) -> None:
    """Run ``work`` and keep its results in ``held``, so the main task's result is ``None``.

    Once the main task is done, Python 3.11's ``asyncio.run`` restores the SIGINT handler,
    and ``signal`` formats the handler it replaces (a partial holding the task) into an
    error message it then discards: ``repr`` of the task, its result included, which would
    be every file's results and notes written out in full, for nothing.
    """
    held.append(await work)


def _pass_over_non_conversations(
    inputs: Sequence[InputFile],
    results: list[FileResult],
    skipped: list[Skipped],
    options: Options,
    arguments: Sequence[str],
) -> list[FileResult]:
    """The results of the files holding conversations: a file a walk found that holds
    none (a package.json) is skipped (added to ``skipped``), not failed."""
    passed = [entry for entry, r in zip(inputs, results, strict=True) if is_not_a_conversation(entry, r.input_error)]
    if not passed:
        return results
    passed_over = [skipped_file(entry) for entry in passed]
    skipped.extend(passed_over)
    if not options.quiet:
        print_skipped(passed_over)
    kept = [r for e, r in zip(inputs, results, strict=True) if not is_not_a_conversation(e, r.input_error)]
    if not kept:
        # Everything found was passed over: a run that reads nothing must not pass.
        names = ", ".join(entry.path or "-" for entry in passed[:3])
        raise InputError(f"no conversation found ({len(passed)} skipped: {names})", source=" ".join(arguments))
    return kept


def _print_closing(
    inputs: Sequence[InputFile],
    results: Sequence[FileResult],
    skipped: Sequence[Skipped],
    options: Options,
    console: Console,
) -> None:
    """The digest of repeated warnings, and the run's closing line when it is wanted."""
    many = _wants_summary_line(inputs, options)
    digest = warning_digest(always=many)
    if digest is not None:
        console.print(digest, markup=False, soft_wrap=True, highlight=False)
    if many:
        console.print(summary_line(results, skipped, options), markup=False, soft_wrap=True, highlight=False)


def _json_report(
    results: Sequence[FileResult],
    skipped: Sequence[Skipped],
    manager: BaseContextManager[Any],
    stopped: ProviderError | None,
    cache_report: dict[str, Any] | None,
    code: int,
) -> dict[str, Any]:
    """The ``--json`` report of the run."""
    # A summary manager (or a subclass) reports its summaries, even when none was made.
    summarizes = callable(getattr(manager, "summarize_span", None))
    payload: dict[str, Any] = {
        "files": [r.as_json(summaries=summarizes, stopped=stopped) for r in results],
        "skipped": [{"path": s.path, "reason": s.reason} for s in skipped],
        "totals": {
            "files": len(results),
            "changed": sum(1 for r in results if r.changed),
            "failed": sum(1 for r in results if r.failed or r.errors),
            "skipped": len(skipped),
            "unread": sum(1 for s in skipped if s.unread),
            "conversations": sum(r.conversations for r in results),
            "messages_before": sum(r.messages_before for r in results),
            "messages_after": sum(r.messages_after for r in results),
            "tokens_before": sum(r.tokens_before for r in results),
            "tokens_after": sum(r.tokens_after for r in results),
            "dropped": _dropped_totals(results),
            **(summary_totals(results) if summarizes else {}),
        },
        "exit_code": code,
    }
    if stopped is not None:
        left = sum(1 for r in results for e in r.provider_errors if e is stopped)
        payload["stopped"] = {"error": printable(stopped), "conversations_not_sent": left}
    if cache_report is not None:
        payload["cache"] = cache_report
    payload["notes"] = run_notes()
    return payload


def _wants_summary_line(inputs: Sequence[InputFile], options: Options) -> bool:
    """The closing line is for runs over many files or found ones: a single file named
    keeps to its own lines (``would change NAME``)."""
    return len(inputs) > 1 or any(entry.found for entry in inputs)


def summary_line(results: Sequence[FileResult], skipped: Sequence[Skipped], options: Options) -> str:
    """What the run did, in one line: ``3 files: 2 would change, 1 unchanged; 6 skipped``,
    and of the skipped, how many hold files left unread because of where they are
    (``(1 hidden or package path with files not read)``).

    Parts that would say zero are left out, as black does.
    """
    failed = sum(1 for r in results if r.failed or r.errors)
    changed = sum(1 for r in results if r.changed and not (r.failed or r.errors))
    unchanged = len(results) - failed - changed
    verb = "changed" if options.writes else "would change"
    counts = [(changed, verb), (unchanged, "unchanged"), (failed, "failed")]
    line = f"{_count(len(results), 'file')}: {', '.join(f'{n} {what}' for n, what in counts if n)}"
    # What a pull request could keep from --check by its name alone, counted apart.
    unread = sum(1 for item in skipped if item.unread)
    hidden = f" ({unread} hidden or package path{'s' if unread > 1 else ''} with files not read)" if unread else ""
    return line + (f"; {len(skipped)} skipped{hidden}" if skipped else "")


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _dropped_totals(results: Sequence[FileResult]) -> dict[str, int]:
    """What the run's conversions left out, by kind, over every file."""
    total: dict[str, int] = {}
    for result in results:
        for kind, count in result.dropped.items():
            total[kind] = total.get(kind, 0) + count
    return total


def _chain(manager: BaseContextManager[Any]) -> SummarizerChain | None:
    """The summarizer chain ``manager`` calls (:func:`ctxmgr.providers.chain_of`)."""
    module = sys.modules.get("ctxmgr.providers._chain")  # never imported: this run has no chain
    return module.chain_of(manager) if module is not None else None


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
    chosen: Sequence[tuple[BaseContextManager[Any], Settings]],
    options: Options,
    console: Console,
) -> list[FileResult]:
    """Compact every input with its manager and settings (``chosen``); up to
    ``--concurrency`` files at once, results in order. ``manager`` opens and closes the
    summarizer all of them share."""
    settings = chosen[0][1] if chosen else Settings()
    summarizer = _chain(manager)
    view: ProgressView | None = None
    if not options.quiet and sys.stderr.isatty():
        view = ProgressView(real_console(console), [entry.path for entry in inputs], summarizer)

    async def one(
        index: int, entry: InputFile, sink: Sink, plan: tuple[BaseContextManager[Any], Settings]
    ) -> FileResult:
        advance, done = view.file(index) if view is not None else (None, None)
        if entry.error is not None:  # met by a walk, never opened
            result = FileResult(source=entry.path or "-", input_error=entry.error)
        else:
            result = await compact_file(entry.path, plan[0], sink, plan[1], progress=advance)
        if isinstance(sink, FileSink) and sink.warnings:
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


def _print_stopped(results: Sequence[FileResult], stopped: ProviderError, console: Console) -> None:
    """The one line for the error that stopped the calls: where it first struck, and
    how many conversations it left as they were."""
    where = ""
    left = files = 0
    for result in results:
        lines = [
            line
            for error, line in zip(result.provider_errors, result.provider_error_lines, strict=True)
            if error is stopped
        ]
        if lines:
            files += 1
            left += len(lines)
            if not where:
                where = f"{result.source}:{lines[0]}: " if lines[0] is not None else f"{result.source}: "
    scope = f"{_count(left, 'conversation')} in {_count(files, 'file')}" if files > 1 else _count(left, "conversation")
    from rich.markup import escape

    text = (
        f"{where}{stopped}; no further calls: every call would fail the same way "
        f"({scope} left as they were, written unchanged where output was asked for)"
    )
    console.print(f"[bold red]error:[/] {escape(printable(text))}", soft_wrap=True)


def _print_result(result: FileResult, options: Options, console: Console, stopped: ProviderError | None = None) -> None:
    name = printable(result.source)
    if result.input_error is not None:
        report(console, result.input_error)
        return
    viewed = show_diff(options)
    notes = [] if options.quiet else summary_notes(result)
    if not (
        viewed
        or notes
        or result.bad_lines
        or result.errors
        or result.provider_errors
        or (result.warnings and not options.quiet)
        or (options.check and result.changed and not options.quiet)
    ):
        return  # nothing to print: Rich (and the model, for the diff) stays unimported
    from rich.markup import escape

    if viewed:
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
            show_warning(console, name, warning)
    for error in result.bad_lines + result.errors:
        console.print(f"[bold red]error:[/] {escape(located(name, printable(error)))}", soft_wrap=True)
    # The error that stopped the calls gets one line for the whole run (_print_stopped).
    own = [line for e, line in zip(result.provider_errors, result.provider_messages(), strict=True) if e is not stopped]
    for provider_error in own:
        console.print(f"[bold red]error:[/] {escape(located(name, printable(provider_error)))}", soft_wrap=True)
    if options.check and result.changed and not options.quiet:
        console.print(f"would change {escape(name)}", soft_wrap=True)
