"""``ctxmgr validate``: report what provider APIs would reject, per message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from ctxmgr.batch import read_conversations
from ctxmgr.cli.console import print_json, printable, reader_warnings, run_notes
from ctxmgr.cli.errors import EXIT_CHANGED, EXIT_INPUT, EXIT_OK, report
from ctxmgr.cli.run import expand_inputs
from ctxmgr.errors import InputError, UsageError
from ctxmgr.validate import TARGETS, check_messages

__all__ = ["validate_files"]


def validate_files(
    arguments: Sequence[str],
    *,
    target: str | None,
    fmt: str | None,
    json_report: bool,
    quiet: bool,
    console: Console,
    out: Console | None = None,
    follow_symlinks: bool = False,
) -> int:
    """Check every conversation of every input; return 0, 1 (problems) or 2 (bad input).

    Problems and "ok" lines go to ``out`` (standard output: they are the result);
    input errors to ``console`` (standard error).
    """
    out = out or Console(highlight=False, emoji=False)
    if target is not None and target not in TARGETS:
        raise UsageError(f"--for must be one of {', '.join(TARGETS)}, got {target!r}")
    if fmt is not None:
        from ctxmgr.formats import adapter

        adapter(fmt)
    files: list[dict[str, Any]] = []
    input_failed = False
    problems_found = False
    for entry in expand_inputs(arguments, follow_symlinks=follow_symlinks):
        name = entry.path or "<stdin>"
        record: dict[str, Any] = {
            "path": name,
            "format": None,
            "conversations": 0,
            "problems": [],
            "warnings": [],
            "errors": [],
        }
        files.append(record)
        try:
            for line, conversation in read_conversations(entry.path, fmt=fmt):
                record["format"] = conversation.format
                record["conversations"] += 1
                record["warnings"] += reader_warnings(console, name, line, conversation.warnings, quiet=quiet)
                rules = target or (conversation.format if conversation.format in TARGETS else None)
                for problem in check_messages(conversation.state.context, target=rules):
                    problems_found = True
                    where = f"{name}:{line}" if line is not None else name
                    record["problems"].append(
                        {"line": line, "message_index": problem.index, "code": problem.code, "message": problem.message}
                    )
                    if not json_report:
                        line_text = f"{escape(printable(where))}: {escape(printable(problem))}"
                        out.print(line_text, soft_wrap=True, highlight=False)
        except InputError as error:
            input_failed = True
            record["errors"].append(str(error))
            if not json_report:
                report(console, error)
        if not json_report and not quiet and not record["problems"] and not record["errors"]:
            out.print(
                f"{escape(printable(name))}: ok ({record['conversations']} conversation"
                f"{'s' if record['conversations'] != 1 else ''})",
                highlight=False,
            )
    code = EXIT_INPUT if input_failed else EXIT_CHANGED if problems_found else EXIT_OK
    if json_report:
        print_json({"files": files, "notes": run_notes(), "exit_code": code})
    return code
