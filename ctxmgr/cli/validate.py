"""``ctxmgr validate``: report what provider APIs would reject, per message."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ctxmgr._exits import EXIT_CHANGED, EXIT_INPUT, EXIT_OK
from ctxmgr._shapes import TARGETS, Problem
from ctxmgr.cli.console import (
    escape,
    lazy_console,
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
from ctxmgr.errors import InputError, UsageError
from ctxmgr.files._loading import Outlined, read_conversations, read_outlines
from ctxmgr.files._reading import is_sqlite_file
from ctxmgr.files._walk import InputFile, WalkRules, is_not_a_conversation, nothing_read

if TYPE_CHECKING:
    from rich.console import Console

    from ctxmgr.formats._base import Conversation

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
    fast: bool = True,
) -> int:
    """Check every conversation of every input; return 0, 1 (problems) or 2 (bad input).

    Problems and "ok" lines go to ``out`` (standard output: they are the result);
    input errors to ``console`` (standard error). ``plans`` gives each input its
    ``--for`` and ``--from`` (from the configuration nearest to it). A conversation its
    format's outline reader accepts is checked from its outline (no model built) unless
    ``fast`` is false; the report is the same either way.
    """
    out = out or lazy_console(highlight=False, emoji=False)
    read = read_outlines if fast else read_conversations
    files: list[dict[str, Any]] = []
    input_failed = False
    problems_found = False
    passed: list[InputFile] = []  # found, and holding no conversation
    entries = expand_inputs(arguments, walk)
    chosen = plans(entries) if plans is not None else [(target, fmt)] * len(entries)
    _check_choices(chosen)
    for entry, (target, fmt) in zip(entries, chosen, strict=True):
        record, found, error = _validate_file(entry, target, fmt, read, console, None if json_report else out)
        if error is not None and is_not_a_conversation(entry, error):
            note_skipped_file(entry)
            passed.append(entry)
            continue
        files.append(record)
        problems_found = problems_found or found
        if not quiet:
            show_warnings(console, record["path"], record["warnings"])  # one line per kind
        if error is not None:
            input_failed = True
            if not json_report:
                report(console, error)
        elif not json_report and not quiet and not any(p["failure"] for p in record["problems"]):
            _print_ok(out, record["path"], record["conversations"])
    if passed and not files:
        report(console, nothing_read(passed, arguments))
        return EXIT_INPUT
    digest = warning_digest()
    if digest is not None:
        console.print(digest, markup=False, soft_wrap=True, highlight=False)
    code = EXIT_INPUT if input_failed else EXIT_CHANGED if problems_found else EXIT_OK
    if json_report:
        print_json({"files": files, "skipped": run_skipped(), "notes": run_notes(), "exit_code": code})
    return code


def _validate_file(
    entry: InputFile,
    target: str | None,
    fmt: str | None,
    read: Callable[..., Any],
    console: Console,
    out: Console | None,
) -> tuple[dict[str, Any], bool, InputError | None]:
    """Check one input: its ``--json`` record, whether it has problems (printed to
    ``out`` as they are found, unless ``--json``), and the error that stopped reading it."""
    name = entry.path or "<stdin>"
    record: dict[str, Any] = {"path": name, "format": None, "conversations": 0}
    record.update(problems=[], warnings=[], errors=[])
    found = False
    if is_sqlite_file(entry.path):  # an Agents SDK session database: each session, numbered as lines
        read = _sessions
    try:
        for line, conversation in read(entry.path, fmt=fmt):
            record["format"] = conversation.format
            record["conversations"] += 1
            rules = target or (conversation.format if conversation.format in TARGETS else None)
            if isinstance(conversation, Outlined):  # no reader warnings: the outline declines those
                problems = _check_outline(conversation, rules)
            else:
                record["warnings"] += reader_warnings(console, name, line, conversation.warnings, quiet=True)
                problems = _check_conversation(conversation.state.context, rules)
            found = _record_problems(record, line, problems, (conversation.format, target), out) or found
    except InputError as error:
        record["errors"].append(str(error))
        return record, found, error
    finally:
        if out is not None:
            _print_accepted(out, record)
    return record, found, None


def _sessions(path: str, fmt: str | None) -> Iterator[tuple[int, Conversation]]:
    from ctxmgr.files._session_compaction import session_conversations  # sqlite3: only for a database

    for number, (_, conversation) in enumerate(session_conversations(path), start=1):
        yield number, conversation


def _record_problems(
    record: dict[str, Any],
    line: int | None,
    problems: list[Problem],
    judged: tuple[str, str | None],
    out: Console | None,
) -> bool:
    """Add one conversation's ``problems`` to its file's ``record``, each with the
    providers that reject it and whether it is a failure here (``judged``: the file's
    format and ``--for``; see :func:`ctxmgr._shapes.fails_for`); print the failures to
    ``out`` (unless ``--json``). Whether there was a failure."""
    from ctxmgr._shapes import fails_for

    name = record["path"]
    failed = False
    for problem in problems:
        failure = fails_for(problem, *judged)
        failed = failed or failure
        where = f"{name}:{line}" if line is not None else name
        record["problems"].append(
            {
                "line": line,
                "message_index": problem.index,
                "code": problem.code,
                "message": problem.message,
                "providers": list(problem.providers),
                "failure": failure,
            }
        )
        if out is not None and failure:
            _print_problem(out, where, problem)
    return failed


_FIXED_BY = {"duplicate-call-id": "--fix-call-ids renumbers them", "duplicate-result": "--fix-call-ids renumbers them"}


def _print_accepted(out: Console, record: dict[str, Any]) -> None:
    """The problems of a file that are no failure here (its own provider accepts them):
    one line per kind, the first with how many more, who rejects them and the fix."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for problem in record["problems"]:
        if not problem["failure"]:
            kinds.setdefault(problem["code"], []).append(problem)
    fmt = record["format"]
    for code, same in kinds.items():
        first = same[0]
        more = f"; and {len(same) - 1:,} more like it" if len(same) > 1 else ""
        fix = f"; {_FIXED_BY[code]}" if code in _FIXED_BY else ""
        who = ", ".join(first["providers"])
        accepts = f"{fmt} accepts this, " if fmt in TARGETS else ""
        where = record["path"] if first["line"] is None else f"{record['path']}:{first['line']}"
        text = (
            f"note: {where}: message {first['message_index']}: {first['message']} "
            f"({accepts}{who} rejects it: --for {first['providers'][0]} fails on it{fix}{more})"
        )
        _print_text(out, printable(text))


def _check_outline(found: Outlined, rules: str | None) -> list[Problem]:
    from ctxmgr._validate import check_outline

    return check_outline(found.outline, target=rules)


def _check_conversation(context: Any, rules: str | None) -> list[Problem]:
    from ctxmgr._validate import check_messages

    return check_messages(context, target=rules)


def _print_ok(out: Console, name: str, count: int) -> None:
    shown, said = printable(name), f"ok ({count} conversation{'s' if count != 1 else ''})"
    print_line(out, f"{shown}: {said}", markup=lambda: f"{escape(shown)}: {said}", soft_wrap=True)


def _print_text(out: Console, text: str) -> None:
    print_line(out, text, markup=lambda: escape(text), soft_wrap=True)


def _print_problem(out: Console, where: str, problem: Problem) -> None:
    from_file, said = printable(where), printable(f"{problem} (rejected by {problem.rejected_by})")
    print_line(out, f"{from_file}: {said}", markup=lambda: f"{escape(from_file)}: {escape(said)}", soft_wrap=True)


def _check_choices(chosen: list[tuple[str | None, str | None]]) -> None:
    """Refuses an unknown ``--for`` or ``--from`` before any file is read, so a typo costs no output."""
    for file_target, file_format in dict.fromkeys(chosen):
        if file_target is not None and file_target not in TARGETS:
            raise UsageError(f"--for must be one of {', '.join(TARGETS)}, got {file_target!r}")
        if file_format is not None:
            from ctxmgr.formats import adapter

            adapter(file_format)
