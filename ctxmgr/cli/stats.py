"""``ctxmgr stats``: a table (or JSON) of what the conversations hold."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ctxmgr._exits import EXIT_INPUT, EXIT_OK
from ctxmgr._stats import FileStats, Triggers, group_companions
from ctxmgr.cli.console import (
    escape,
    print_json,
    print_line,
    printable,
    reader_warnings,
    run_notes,
    run_skipped,
    show_warnings,
    warning_digest,
)
from ctxmgr.cli.errors import report
from ctxmgr.cli.inputs import expand_inputs, note_skipped_file
from ctxmgr.cli.tables import print_rows
from ctxmgr.errors import InputError
from ctxmgr.files._loading import Outlined, read_conversations, read_outlines
from ctxmgr.files._reading import is_sqlite_file
from ctxmgr.files._walk import InputFile, WalkRules, is_not_a_conversation, nothing_read
from ctxmgr.state._tokens import reference_estimate_tokens, script_aware_reference_tokens

if TYPE_CHECKING:
    from rich.console import Console

    from ctxmgr.state import Message

__all__ = ["stats_files"]

_ROLES = ("system", "user", "assistant", "tool")
_BY_SCRIPT = "a token per 4 ASCII characters, per 2 Cyrillic or Greek ones, per CJK character"
_ESTIMATE_NAMES: dict[Callable[[Sequence[Message]], int], str] = {
    reference_estimate_tokens: "4 characters a token, tool outputs left out, as the reference counts",
    script_aware_reference_tokens: "by script, tool outputs left out",
}


def stats_files(
    arguments: Sequence[str],
    *,
    triggers: Triggers,
    fmt: str | None,
    json_report: bool,
    top: int,
    console: Console,
    out: Console,
    rules: WalkRules | None = None,
    plans: Callable[[Sequence[InputFile]], list[tuple[Triggers, str | None]]] | None = None,
    fast: bool = True,
) -> int:
    """Print the statistics of every input (a session database: each session); 2 if an
    input could not be read. ``plans`` gives each input its triggers and input format (from
    the configuration nearest to it; without it, ``triggers`` and ``fmt`` apply to all). Unless
    ``fast`` is false, outlines are counted (see :meth:`FileStats.takes`); the report is the same."""
    results: list[FileStats] = []
    passed: list[InputFile] = []  # found, and holding no conversation
    warnings: dict[str, list[str]] = {}
    failed = False
    entries = expand_inputs(arguments, rules)
    chosen = plans(entries) if plans is not None else [(triggers, fmt)] * len(entries)
    for entry, (file_triggers, file_format) in zip(entries, chosen, strict=True):
        stats = FileStats(path=entry.path or "<stdin>", top=top)
        try:
            if is_sqlite_file(entry.path):  # one line per session of an Agents SDK session database
                results.extend(_session_stats(str(entry.path), file_triggers, top))
                continue
            read = (
                read_outlines(entry.path, fmt=file_format, take=FileStats.takes(file_triggers))
                if fast
                else read_conversations(entry.path, fmt=file_format)
            )
            for line, conversation in read:
                if isinstance(conversation, Outlined):  # no reader warnings: the outline declines those
                    stats.add_outline(conversation, file_triggers, line)
                    warnings.setdefault(stats.path, [])
                    continue
                stats.add(conversation, file_triggers, line)
                said = reader_warnings(console, stats.path, line, conversation.warnings, quiet=True)
                warnings.setdefault(stats.path, []).extend(said)
        except InputError as error:
            if is_not_a_conversation(entry, error):
                note_skipped_file(entry)
                passed.append(entry)
                continue
            failed = True
            show_warnings(console, stats.path, warnings.get(stats.path, []))
            report(console, error)
            continue
        show_warnings(console, stats.path, warnings.get(stats.path, []))  # one line per kind
        results.append(stats)
    if passed and not results and not failed:
        report(console, nothing_read(passed, arguments))
        return EXIT_INPUT
    results = group_companions(results)
    digest = warning_digest()
    if digest is not None:
        console.print(digest, markup=False, soft_wrap=True, highlight=False)
    if json_report:
        total = FileStats(path="total")
        for stats in results:
            total.conversations += stats.conversations
            total.messages += stats.messages
            total.roles.update(stats.roles)
            total.tool_calls += stats.tool_calls
            total.tokens += stats.tokens
            total.with_summary += stats.with_summary
            total.trim_would_fire += stats.trim_would_fire
            total.summary_would_fire += stats.summary_would_fire
        files = [{**s.as_dict(), "warnings": warnings.get(s.path, [])} for s in results]
        # "totals", as every command names its run's figures; "total" stays for the scripts that read it.
        totals = total.as_dict()
        payload = {"files": files, "skipped": run_skipped(), "totals": totals, "total": totals, "notes": run_notes()}
        print_json(payload)
    elif results:  # no table at all when no input could be read: the errors say it all
        _print_table(results, triggers, out)
    return EXIT_INPUT if failed else EXIT_OK


def _session_stats(path: str, triggers: Triggers, top: int) -> list[FileStats]:
    from ctxmgr.files._session_compaction import session_conversations  # sqlite3: only for a database

    found: list[FileStats] = []
    for info, conversation in session_conversations(path):
        stats = FileStats(path=f"{path}#{info.session_id}", top=top)
        stats.add(conversation, triggers, None)
        found.append(stats)
    return found


def _print_table(results: Sequence[FileStats], triggers: Triggers, out: Console) -> None:
    headers = ["file", "format", "conv", "msgs", "s/u/a/t", "calls", "tokens", "summ", "trim?", "sum?"]
    rows = [
        [
            printable(s.path + (f" (+{len(s.companions)})" if s.companions else "")),
            printable(s.format or "-"),
            str(s.conversations),
            str(s.messages),
            "/".join(str(s.roles[r]) for r in _ROLES),
            str(s.tool_calls),
            str(s.tokens),
            str(s.with_summary),
            _fires(s.trim_would_fire, s.conversations),
            _fires(s.summary_would_fire, s.conversations),
        ]
        for s in results
    ]
    footer = None
    if len(results) > 1:
        footer = [
            "total",
            "",
            str(sum(s.conversations for s in results)),
            str(sum(s.messages for s in results)),
            "/".join(str(sum(s.roles[r] for s in results)) for r in _ROLES),
            str(sum(s.tool_calls for s in results)),
            str(sum(s.tokens for s in results)),
            str(sum(s.with_summary for s in results)),
            str(sum(s.trim_would_fire for s in results)),
            str(sum(s.summary_would_fire for s in results)),
        ]
    print_rows(out, headers, rows, footer=footer, left=2)
    summary_rule = (
        f"more than {triggers.summary_max_messages} messages" if triggers.summary_max_messages is not None else ""
    )
    if triggers.token_budget is not None:
        summary_rule += (" or " if summary_rule else "") + f"more than {triggers.token_budget} est. tokens"
        summary_rule += f" ({_ESTIMATE_NAMES.get(triggers.token_estimate, 'your estimate')})"
    legend = (
        f"s/u/a/t: system/user/assistant/tool messages; summ: conversations with a summary; "
        f"tokens: estimated by script ({_BY_SCRIPT}); trim?: more than {triggers.trim_max_messages} user turns; "
        f"sum?: summarize would fire at {summary_rule or 'never (no trigger)'}"
    )
    if any(s.companions for s in results):
        legend += "; (+N): a session counted with its N companion files (its subagents' logs)"
    print_line(out, legend, markup=lambda: f"[dim]{escape(legend)}[/]", soft_wrap=True)
    for stats in results:
        if stats.largest:
            _print_largest(out, stats)


def _print_largest(out: Console, stats: FileStats) -> None:
    biggest = printable(
        ", ".join(
            f"#{index}{f' (line {line})' if line is not None else ''} {role} ~{tokens}"
            for tokens, index, line, role in stats.largest
        )
    )
    path = printable(stats.path)

    def marked() -> str:
        return f"[dim]{escape(path)} largest:[/] {escape(biggest)}"

    print_line(out, f"{path} largest: {biggest}", markup=marked, soft_wrap=True)


def _fires(count: int, conversations: int) -> str:
    if conversations == 1:
        return "yes" if count else "no"
    return f"{count}/{conversations}"
