"""``ctxmgr stats``: a table (or JSON) of what the conversations hold."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import orjson
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ctxmgr.batch import read_conversations
from ctxmgr.cli.errors import EXIT_INPUT, EXIT_OK, report
from ctxmgr.cli.run import expand_inputs
from ctxmgr.errors import InputError
from ctxmgr.stats import FileStats, Triggers

__all__ = ["stats_files"]

_ROLES = ("system", "user", "assistant", "tool")


def stats_files(
    arguments: Sequence[str], *, triggers: Triggers, fmt: str | None, json_report: bool, top: int,
    console: Console, out: Console,
) -> int:
    """Print the statistics of every input; 2 if an input could not be read."""
    results: list[FileStats] = []
    failed = False
    for entry in expand_inputs(arguments):
        stats = FileStats(path=entry.path or "<stdin>", top=top)
        try:
            for line, conversation in read_conversations(entry.path, fmt=fmt):
                stats.add(conversation, triggers, line)
        except InputError as error:
            failed = True
            report(console, error)
            continue
        results.append(stats)
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
        payload = {"files": [s.as_dict() for s in results], "total": total.as_dict()}
        sys.stdout.buffer.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
    else:
        _print_table(results, triggers, out)
    return EXIT_INPUT if failed else EXIT_OK


def _print_table(results: Sequence[FileStats], triggers: Triggers, out: Console) -> None:
    table = Table(title_justify="left", show_footer=len(results) > 1)
    table.add_column("file", footer="total", overflow="fold")
    table.add_column("format")
    table.add_column("conv.", justify="right", footer=str(sum(s.conversations for s in results)))
    table.add_column("messages", justify="right", footer=str(sum(s.messages for s in results)))
    for role in _ROLES:
        table.add_column(role, justify="right", footer=str(sum(s.roles[role] for s in results)))
    table.add_column("tool calls", justify="right", footer=str(sum(s.tool_calls for s in results)))
    table.add_column("est. tokens", justify="right", footer=str(sum(s.tokens for s in results)))
    table.add_column("summary", justify="right")
    table.add_column(f"trim > {triggers.trim_max_messages}", justify="right",
                     footer=str(sum(s.trim_would_fire for s in results)))
    table.add_column("summarize", justify="right", footer=str(sum(s.summary_would_fire for s in results)))
    for stats in results:
        table.add_row(
            escape(stats.path), stats.format or "-", str(stats.conversations), str(stats.messages),
            *(str(stats.roles[role]) for role in _ROLES),
            str(stats.tool_calls), str(stats.tokens), str(stats.with_summary),
            _fires(stats.trim_would_fire, stats.conversations), _fires(stats.summary_would_fire, stats.conversations),
        )
    out.print(table)
    for stats in results:
        if stats.largest:
            biggest = ", ".join(
                f"#{index}{f' (line {line})' if line is not None else ''} {role} ~{tokens}"
                for tokens, index, line, role in stats.largest
            )
            out.print(f"[dim]{escape(stats.path)} largest:[/] {escape(biggest)}", soft_wrap=True)


def _fires(count: int, conversations: int) -> str:
    if conversations == 1:
        return "yes" if count else "no"
    return f"{count}/{conversations}"
