"""What a walk found, said on standard error: the notes of the walk, what it skipped.

The walk itself is the library's (:func:`ctxmgr.files.find_inputs`); this module says
what it returned, in the words of every command.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence

from ctxmgr.cli.console import note, printable, record_note, record_skipped
from ctxmgr.files._walk import InputFile, Inputs, Skipped, WalkRules, find_inputs, skipped_file

__all__ = ["expand_inputs", "note_skipped_file", "print_skipped", "show_walk"]

_SKIPPED_SHOWN = 5
"""Skipped entries named one by one on standard error, per reason (``--json`` has all)."""


def note_skipped_file(entry: InputFile) -> None:
    """Name a found file that holds no conversation, for a command that only reads: on
    standard error, and in the ``--json`` report's notes and ``skipped`` list."""
    skipped = skipped_file(entry)
    note("skipped", f"{skipped.path} {skipped.detail}")
    record_skipped(skipped.path, skipped.reason)


def print_skipped(items: Sequence[Skipped], write: object = None) -> list[str]:
    """The lines naming what was skipped: each entry, but past a few of one reason, a
    count (``--json`` lists every one). Returned, and written to standard error unless
    ``write`` is ``False``."""
    by_reason: dict[str, list[Skipped]] = defaultdict(list)
    for item in items:
        by_reason[item.reason].append(item)
    lines: list[str] = []
    for reason, group in by_reason.items():
        shown = group if len(group) <= _SKIPPED_SHOWN else group[: _SKIPPED_SHOWN - 2]
        lines.extend(f"skipped: {printable(item.path)} {printable(item.detail)}" for item in shown)
        if len(shown) < len(group):
            lines.append(f"skipped: {len(group) - len(shown)} more ({reason}; every one is in --json)")
    if write is not False:
        for line in lines:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
    return lines


def show_walk(found: Inputs, *, quiet: bool) -> None:
    """Say what a walk could not apply (always) and what it skipped (unless ``quiet``)."""
    for item in found.notes:
        note(item.level, item.message)
    if not quiet:
        print_skipped(found.skipped)


def expand_inputs(arguments: Sequence[str], rules: WalkRules | None = None) -> list[InputFile]:
    """Files, folders and glob patterns, for commands that only read (``stats``,
    ``validate``, dry runs).

    What was skipped is named on standard error (and kept for the ``--json`` notes); an
    entry that cannot be read (see :func:`ctxmgr.files.find_inputs`) is an error, each
    one named, the last raised.
    """
    found = find_inputs(arguments, rules or WalkRules())
    for said in found.notes:
        note(said.level, said.message)
    for item in found.skipped:
        record_note("skipped", f"{item.path} {item.detail}")
        record_skipped(item.path, item.reason)
    print_skipped(found.skipped)
    problems = [entry.error for entry in found.files if entry.error is not None]
    for problem in problems[:-1]:
        sys.stderr.write(f"error: {printable(problem)}\n")
    if problems:
        raise problems[-1]
    return found.files
