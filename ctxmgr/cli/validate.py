"""``ctxmgr validate``: report what provider APIs would reject, per message."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from ctxmgr._validate import TARGETS, check_messages
from ctxmgr.cli.console import note, print_json, printable, reader_warnings, run_notes, warning_digest
from ctxmgr.cli.errors import EXIT_CHANGED, EXIT_INPUT, EXIT_OK, report
from ctxmgr.cli.inputs import InputFile, WalkRules, expand_inputs, is_not_a_conversation, skipped_file
from ctxmgr.errors import InputError, UsageError
from ctxmgr.files import read_conversations

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
    walk: WalkRules | None = None,
    plans: Callable[[Sequence[InputFile]], list[tuple[str | None, str | None]]] | None = None,
) -> int:
    """Check every conversation of every input; return 0, 1 (problems) or 2 (bad input).

    Problems and "ok" lines go to ``out`` (standard output: they are the result);
    input errors to ``console`` (standard error). ``plans`` gives each input its
    ``--for`` and ``--from`` (from the configuration nearest to it).
    """
    out = out or Console(highlight=False, emoji=False)
    files: list[dict[str, Any]] = []
    input_failed = False
    problems_found = False
    entries = expand_inputs(arguments, walk)
    chosen = plans(entries) if plans is not None else [(target, fmt)] * len(entries)
    _check_choices(chosen)
    for entry, (target, fmt) in zip(entries, chosen, strict=True):
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
            if is_not_a_conversation(entry, error):
                files.pop()
                skipped = skipped_file(entry)
                note("skipped", f"{skipped.path} {skipped.detail}")
                continue
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
    digest = warning_digest()
    if digest is not None:
        console.print(digest, markup=False, soft_wrap=True, highlight=False)
    code = EXIT_INPUT if input_failed else EXIT_CHANGED if problems_found else EXIT_OK
    if json_report:
        print_json({"files": files, "notes": run_notes(), "exit_code": code})
    return code


def _check_choices(chosen: list[tuple[str | None, str | None]]) -> None:
    """Refuses an unknown ``--for`` or ``--from`` before any file is read, so a typo costs no output."""
    for file_target, file_format in dict.fromkeys(chosen):
        if file_target is not None and file_target not in TARGETS:
            raise UsageError(f"--for must be one of {', '.join(TARGETS)}, got {file_target!r}")
        if file_format is not None:
            from ctxmgr.formats import adapter

            adapter(file_format)
