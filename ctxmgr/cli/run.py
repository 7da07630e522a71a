"""Run a manager over the command's inputs: one file, many, folders, globs or stdin.

Shared by ``trim``, ``summarize``, ``convert`` and ``run``: resolves inputs and
destinations, runs :func:`ctxmgr.batch.compact_file` on each, shows the diff view,
progress and reports, and returns the exit code.
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

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
from ctxmgr.cli.console import real_console
from ctxmgr.cli.errors import EXIT_CHANGED, EXIT_INPUT, EXIT_OK, EXIT_PROVIDER, exit_code_for, report
from ctxmgr.errors import InputError, OutputError, UsageError
from ctxmgr.state.managers import BaseContextManager, MessageContextManager

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["InputFile", "Options", "expand_inputs", "run_files"]

_EXTENSIONS = (".json", ".jsonl")


@dataclass(frozen=True)
class InputFile:
    """One input: its path (``None`` for stdin) and its name relative to what was given."""

    path: str | None
    relative: str


@dataclass
class Options:
    """Output-side options shared by every compacting command."""

    output: Path | str | None = None
    in_place: bool = False
    check: bool = False
    json_report: bool = False
    diff: bool | None = None
    quiet: bool = False


def expand_inputs(arguments: Sequence[str]) -> list[InputFile]:
    """Files, folders (searched recursively for .json/.jsonl) and glob patterns."""
    if not arguments:
        if sys.stdin is None or sys.stdin.isatty():
            # Waiting for a conversation typed at the terminal is never what was meant.
            raise UsageError("no input: name a file or folder, or pipe a conversation to standard input")
        return [InputFile(None, "-")]
    found: list[InputFile] = []
    seen: set[str] = set()

    def add(path: str, relative: str) -> None:
        key = os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            found.append(InputFile(path, relative))

    for argument in arguments:
        if argument == "-":
            if len(arguments) > 1:
                raise UsageError("standard input ('-') cannot be combined with other inputs")
            return [InputFile(None, "-")]
        if os.path.isdir(argument):
            count = len(found)
            for root, dirs, files in os.walk(argument):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for file_name in sorted(files):
                    if file_name.endswith(_EXTENSIONS) and not file_name.startswith("."):
                        full = os.path.join(root, file_name)
                        add(full, os.path.relpath(full, argument))
            if len(found) == count:
                raise InputError("no .json or .jsonl files in this folder", source=argument)
        elif glob.has_magic(argument) and not os.path.exists(argument):
            matches = sorted(glob.glob(argument, recursive=True))
            if not matches:
                raise InputError("no file matches this pattern", source=argument)
            for match in matches:
                if os.path.isfile(match):
                    add(match, _relative_name(match))
        else:
            add(argument, _relative_name(argument))
    return found


def _relative_name(path: str) -> str:
    """Where a file given by path lands under ``-o DIR``: its path below the working folder."""
    absolute = os.path.abspath(path)
    here = os.path.abspath(os.curdir)
    if absolute.startswith(here + os.sep):
        return os.path.relpath(absolute, here)
    return os.path.basename(absolute)


def _destination(entry: InputFile, options: Options, many: bool) -> Sink:
    if options.check or options.json_report:
        return NullSink()
    if options.in_place:
        if entry.path is None:
            raise UsageError("--in-place needs files, not standard input")
        return FileSink(entry.path)
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
    if not many and not named_folder and not output.is_dir():
        return FileSink(output)
    # Folders are made when the file is written, so a failed input creates nothing.
    return FileSink(_inside(output, entry.relative), make_parents=True)


def _inside(folder: Path, relative: str) -> Path:
    """``folder/relative``, refusing anything that would land outside ``folder``."""
    base = folder.resolve()
    target = (base / relative).resolve()
    if target != base and base not in target.parents:
        raise OutputError(f"{relative}: would be written outside {folder}")
    return target


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


def _file_report(result: FileResult) -> dict[str, Any]:
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
    inputs = expand_inputs(arguments)
    many = len(inputs) > 1
    _check_options(options, len(inputs))
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
    work = _run_all(inputs, sinks, manager, settings, options, console)
    if type(manager) is MessageContextManager and settings.concurrency <= 1:
        results = run_without_loop(work)
    else:
        import asyncio

        results = asyncio.run(work)
    for result in results:
        _print_result(result, options, console)
    if options.json_report:
        payload = {
            "files": [_file_report(r) for r in results],
            "totals": {
                "files": len(results),
                "changed": sum(1 for r in results if r.changed),
                "failed": sum(1 for r in results if r.failed or r.errors),
                "conversations": sum(r.conversations for r in results),
                "messages_before": sum(r.messages_before for r in results),
                "messages_after": sum(r.messages_after for r in results),
                "tokens_before": sum(r.tokens_before for r in results),
                "tokens_after": sum(r.tokens_after for r in results),
            },
            "exit_code": exit_code(results, options),
        }
        sys.stdout.buffer.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
        sys.stdout.buffer.flush()
    return exit_code(results, options)


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
        result = await compact_file(entry.path, manager, sink, settings, progress=advance)
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
    name = result.source
    if result.input_error is not None:
        report(console, result.input_error)
        return
    show_diff = _show_diff(options)
    if not (
        show_diff
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
            for outcome in result.outcomes:
                render_diff(
                    console,
                    name=name,
                    before=outcome.before,
                    after=outcome.after,
                    summary_before=outcome.summary_before,
                    summary_after=outcome.summary_after,
                )
        else:
            console.print(
                f"[bold]{escape(name)}[/]: {result.conversations} conversations, "
                f"{result.changed_conversations} changed; messages {result.messages_before} → "
                f"{result.messages_after}; est. tokens {result.tokens_before} → {result.tokens_after}"
                + (f"; {result.summaries_added} summaries added" if result.summaries_added else ""),
                soft_wrap=True,
            )
    if not options.quiet:
        for warning in result.warnings:
            console.print(f"[yellow]warning:[/] {escape(name)}: {escape(warning)}", soft_wrap=True)
    for error in result.bad_lines + result.errors:
        console.print(f"[bold red]error:[/] {escape(name)}: {escape(error)}", soft_wrap=True)
    for provider_error in result.provider_messages():
        console.print(f"[bold red]error:[/] {escape(name)}: {escape(provider_error)}", soft_wrap=True)
    if options.check and result.changed and not options.quiet:
        console.print(f"would change {escape(name)}", soft_wrap=True)
