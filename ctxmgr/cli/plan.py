"""``summarize --dry-run``: what would be summarized, at what cost, without calling."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from ctxmgr._exits import EXIT_INPUT, EXIT_OK
from ctxmgr.cli.console import print_json, printable, run_notes, run_skipped, show_warnings, warning_digest
from ctxmgr.cli.errors import report
from ctxmgr.cli.inputs import expand_inputs, note_skipped_file
from ctxmgr.cli.tables import print_rows
from ctxmgr.files import InputFile, Settings
from ctxmgr.files._plan import plan_summaries
from ctxmgr.files._walk import WalkRules
from ctxmgr.state import SummaryContextManager

__all__ = ["plan_files"]


def plan_files(
    arguments: Sequence[str],
    manager: SummaryContextManager[Any],
    settings: Settings,
    *,
    json_report: bool,
    console: Console,
    rules: WalkRules | None = None,
    plans: Callable[[Sequence[InputFile]], Sequence[tuple[Any, Settings]]] | None = None,
) -> int:
    """Print, per file, the conversations that would be summarized, the calls and input tokens.

    ``plans`` gives each input its manager and settings (from the configuration nearest to it).
    """
    rows: list[dict[str, Any]] = []
    failed = False
    entries = expand_inputs(arguments, rules)
    chosen = plans(entries) if plans is not None else [(manager, settings)] * len(entries)
    for plan in plan_summaries(entries, chosen):
        show_warnings(console, plan.name, plan.warnings)
        if plan.not_a_conversation:
            note_skipped_file(plan.entry)
            continue
        rows.append(plan.as_json())
        if plan.error is not None:
            failed = True
            if not json_report:
                report(console, plan.error)
    digest = warning_digest()
    if digest is not None:
        console.print(digest, markup=False, soft_wrap=True, highlight=False)
    limit, why = manager.input_budget()
    if json_report:
        totals = {
            key: sum(r[key] for r in rows)
            for key in ("conversations", "calls", "messages_summarized", "input_tokens", "split")
        }
        print_json(
            {"files": rows, "skipped": run_skipped(), "totals": totals, "input_limit": limit, "notes": run_notes()}
        )
    else:
        keys = ("conversations", "calls", "messages_summarized", "input_tokens")
        footer = ["total", *(str(sum(r[k] for r in rows)) for k in keys)] if len(rows) > 1 else None
        print_rows(
            console,
            ["file", "conversations", "calls", "messages summarized", "est. input tokens"],
            [[printable(row["path"]), *(str(row[k]) for k in keys)] for row in rows],
            footer=footer,
            title=f"dry run: {printable(manager.model)} (nothing was called)",
        )
        split = sum(r["split"] for r in rows)
        if split:
            # Later rounds are counted as if every summary were max-summary-tokens long.
            console.print(
                f"{split} {'spans exceed' if split > 1 else 'span exceeds'} the input budget of "
                f"{limit:,} tokens a request ({escape(why)}) and would be summarized in parts, then combined "
                "(counted at most).",
                soft_wrap=True,
            )
    return EXIT_INPUT if failed else EXIT_OK
