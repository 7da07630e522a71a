"""Run a manager over the command's inputs and render what happened.

Shared by ``trim``, ``summarize``, ``convert`` and ``run``: :func:`run_files` calls
:func:`ctxmgr.files.compact_paths` once, shows what it says while it goes (what the walk
skipped, notes, the progress bar), then each file's diff view, warnings and errors, the
closing line and the ``--json`` report, and returns the exit code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxmgr.cli.console import (
    located,
    note,
    print_json,
    printable,
    real_console,
    run_notes,
    show_warnings,
    showing_every_warning,
    warning_digest,
)
from ctxmgr.cli.errors import report
from ctxmgr.cli.inputs import print_skipped
from ctxmgr.cli.options import Options, show_diff
from ctxmgr.errors import ProviderError, UsageError
from ctxmgr.files import (
    CaptureSink,
    Engine,
    FileResult,
    InputFile,
    Note,
    Plans,
    RunEvents,
    RunOptions,
    RunResult,
    Settings,
    Sink,
    Skipped,
    compact_paths,
)
from ctxmgr.files._summaries import summary_notes, summary_totals
from ctxmgr.state._managers import BaseContextManager

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from rich.console import Console

    from ctxmgr.cache import CacheStats
    from ctxmgr.files import Progress

__all__ = ["Options", "check_destinations", "run_files", "run_options", "summary_line"]


def run_options(options: Options) -> RunOptions:
    """The library's options of a run for the command's flags: ``--json`` alone takes
    standard output (nothing written), the view keeps outcomes, and token estimates are
    counted only when shown (they cost a pass over every message's text)."""
    view = show_diff(options)
    return RunOptions(
        output=options.output,
        in_place=options.in_place,
        check=options.check,
        diff=options.unified,
        write=not options.json_report,
        follow_symlinks=options.follow_symlinks,
        exclude=options.exclude,
        include=options.include,
        keep_outcomes=view,
        measure=view or options.json_report,
        engine=None if options.engine is None else _engine(options.engine),
        # A rewrite of the user's own file keeps a way back unless told not to.
        backup=options.in_place if options.backup is None else options.backup,
    )


def _on_ray(
    paths: list[str],
    manager: BaseContextManager[Any],
    settings: Settings,
    *,
    output: str | None,
    writes: bool,
    relative: Mapping[str, str],
    notify: Callable[[str], None],
) -> list[FileResult]:
    """``--engine ray``: Ray Data tasks (Ray is imported only here)."""
    from ctxmgr._engines.ray import RayOutput, compact_on_ray

    return compact_on_ray(paths, manager, settings, RayOutput(output, writes=writes), relative=relative, notify=notify)


ENGINES: dict[str, Engine] = {"ray": _on_ray}
"""The engines ``--engine`` names."""


def _engine(name: str) -> Engine:
    if name not in ENGINES:
        raise UsageError(f"--engine must be {' or '.join(map(repr, ENGINES))}, got {name!r}")
    return ENGINES[name]


class _Noted(RunEvents):
    """The notes of a run, on standard error (and kept for ``--json``)."""

    def note(self, note: Note) -> None:
        _say(note)


class _Shown(_Noted):
    """What a run says while it goes, on standard error."""

    def __init__(self, options: Options, console: Console) -> None:
        self.options = options
        self.console = console

    def skipped(self, items: Sequence[Skipped]) -> None:
        if not self.options.quiet:
            print_skipped(items)

    def progress(self, paths: Sequence[str | None], summarizer: Any) -> Progress | None:
        if self.options.quiet or not sys.stderr.isatty():
            return None
        from ctxmgr.cli.progress import ProgressView

        # Calls and tokens are counted only where something is sent (not the offline digest).
        sending = summarizer if getattr(summarizer, "sends", False) else None
        return ProgressView(real_console(self.console), paths, sending)


def _say(item: Note) -> None:
    """Say a note of the library's on standard error (and keep it for ``--json``)."""
    note(item.level, item.message)


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
    chosen = run_options(options)
    planned: dict[str | None, BaseContextManager[Any]] = {}
    if plans is not None:
        plans = _recording(plans, planned)
    run = compact_paths(arguments, manager, settings, chosen, plans=plans, events=_Shown(options, console))
    stopped = run.stopped
    diffs = {id(r): (e, s) for e, s, r in run.outputs} if options.unified else {}
    viewed = show_diff(options)
    for result in run.results:
        # What the file's managers kept, in words, under its view.
        rule = _rule(planned.get(result.source, manager)) if viewed else None
        _print_result(result, options, console, stopped, rule)
        if result.backup and not (options.quiet or options.json_report):  # --json names it
            undo = result.destination or result.source
            text = f"backup: {result.backup} (ctxmgr restore {undo} puts the file back)"
            console.print(printable(text), markup=False, highlight=False, soft_wrap=True)
        if id(result) in diffs:
            _print_unified(*diffs[id(result)], result)
    if stopped is not None:
        _print_stopped(run.results, stopped, console)
    if run.cache is not None and not options.quiet:
        _print_cache(run.cache, console)
    if not options.quiet:
        _print_closing(run, chosen.writes, console)
    if options.json_report:
        print_json(_json_report(run, manager))
    return run.exit_code


def check_destinations(
    arguments: Sequence[str], manager: BaseContextManager[Any], settings: Settings, options: Options
) -> None:
    """Make every check a write to the outputs of ``arguments`` makes before anything is
    read, reading, sending and writing nothing (see :func:`ctxmgr.files._run.check_destinations`)."""
    from ctxmgr.files._run import check_destinations as check

    check(arguments, manager, settings, run_options(options), events=_Noted())


def _print_cache(stats: CacheStats, console: Console) -> None:
    """What the summary cache ignored, could not store or evicted."""
    from rich.markup import escape

    for line in stats.warnings():
        console.print(f"[yellow]warning:[/] {escape(printable(line))}", soft_wrap=True)
    for line in stats.notes():
        console.print(f"note: {escape(printable(line))}", soft_wrap=True)


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


def _recording(plans: Plans, planned: dict[str | None, BaseContextManager[Any]]) -> Plans:
    """``plans``, noting in ``planned`` the manager each input path is compacted with."""

    def recorded(entries: Sequence[InputFile]) -> Sequence[tuple[BaseContextManager[Any], Settings]]:
        chosen = plans(entries)
        planned.update((entry.path, each) for entry, (each, _) in zip(entries, chosen, strict=True))
        return chosen

    return recorded


def _rule(manager: BaseContextManager[Any]) -> str | None:
    from ctxmgr.cli.diff import describe_rule

    return describe_rule(manager)


def _print_result(
    result: FileResult,
    options: Options,
    console: Console,
    stopped: ProviderError | None = None,
    rule: str | None = None,
) -> None:
    name = printable(result.source)
    if result.input_error is not None:
        report(console, result.input_error)
        return
    viewed = show_diff(options)
    notes = [] if options.quiet else summary_notes(result) + result.compaction_notes()
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
                    rule=rule,
                )
    for line in notes:
        console.print(f"note: {escape(name)}: {escape(printable(line))}", soft_wrap=True)
    if not options.quiet:
        # Under -v every warning; else the compaction's once per kind for the file, and each kind once.
        show_warnings(console, name, result.warnings if showing_every_warning() else result.shown_warnings())
    for error in result.bad_lines + result.errors:
        console.print(f"[bold red]error:[/] {escape(located(name, printable(error)))}", soft_wrap=True)
    if viewed and result.kind != "conversation":
        # A dataset's totals come after its warnings, so they stay on screen.
        console.print(
            f"[bold]{escape(name)}[/]: {result.conversations} conversations, "
            f"{result.changed_conversations} changed; messages {result.messages_before} → "
            f"{result.messages_after}; est. tokens {result.tokens_before} → {result.tokens_after}"
            + (f"; {result.summaries_added} summaries added" if result.summaries_added else ""),
            soft_wrap=True,
        )
    # The error that stopped the calls gets one line for the whole run (_print_stopped).
    own = [line for e, line in zip(result.provider_errors, result.provider_messages(), strict=True) if e is not stopped]
    for provider_error in own:
        console.print(f"[bold red]error:[/] {escape(located(name, printable(provider_error)))}", soft_wrap=True)
    if options.check and result.changed and not options.quiet:
        console.print(f"would change {escape(name)}", soft_wrap=True)


def _print_closing(run: RunResult, writes: bool, console: Console) -> None:
    """The digest of repeated warnings, and the run's closing line when it is wanted."""
    many = _wants_summary_line(run.inputs)
    digest = warning_digest(always=many)
    if digest is not None:
        console.print(digest, markup=False, soft_wrap=True, highlight=False)
    if many:
        console.print(summary_line(run.results, run.skipped, writes), markup=False, soft_wrap=True, highlight=False)


def _compaction_totals(results: list[FileResult]) -> dict[str, int]:
    """The compaction managers' counters summed over the files (none when none ran)."""
    totals: dict[str, int] = {}
    for result in results:
        for name, value in (result.compaction or {}).items():
            totals[name] = totals.get(name, 0) + value
    return totals


def _fixed_totals(results: list[FileResult]) -> dict[str, int]:
    """The call ids ``--fix-call-ids`` renumbered, summed (none when it was not asked)."""
    counts = [r.call_ids_fixed for r in results if r.call_ids_fixed is not None]
    return {"call_ids_fixed": sum(counts)} if counts else {}


def _json_report(run: RunResult, manager: BaseContextManager[Any]) -> dict[str, Any]:
    """The ``--json`` report of the run."""
    results, skipped, stopped = run.results, run.skipped, run.stopped
    # A summary manager (or a subclass), alone or first in run's chain with the compaction
    # options, reports its summaries, even when none was made.
    from ctxmgr.state._compaction import ChainContextManager

    members = manager.managers if isinstance(manager, ChainContextManager) else [manager]
    summarizes = any(callable(getattr(m, "summarize_span", None)) for m in members)
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
            **_compaction_totals(results),
            **_fixed_totals(results),
        },
        "exit_code": run.exit_code,
    }
    if stopped is not None:
        left = sum(1 for r in results for e in r.provider_errors if e is stopped)
        payload["stopped"] = {"error": printable(stopped), "conversations_not_sent": left}
    if run.cache is not None:
        payload["cache"] = run.cache.as_json()
    payload["notes"] = run_notes()
    return payload


def _wants_summary_line(inputs: Sequence[InputFile]) -> bool:
    """The closing line is for runs over many files or found ones: a single file named
    keeps to its own lines (``would change NAME``)."""
    return len(inputs) > 1 or any(entry.found for entry in inputs)


def summary_line(results: Sequence[FileResult], skipped: Sequence[Skipped], writes: bool) -> str:
    """What the run did, in one line: ``3 files: 2 would change, 1 unchanged; 6 skipped``,
    and of the skipped, how many hold files left unread because of where they are
    (``(1 hidden or package path with files not read)``).

    Parts that would say zero are left out, as black does.
    """
    failed = sum(1 for r in results if r.failed or r.errors)
    changed = sum(1 for r in results if r.changed and not (r.failed or r.errors))
    unchanged = len(results) - failed - changed
    verb = "changed" if writes else "would change"
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
