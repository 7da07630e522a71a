"""The error console, built on first use: Rich costs start-up time that a ``trim``
whose output goes to a pipe, with nothing to report, never needs to pay.

Output that Rich would write as plain text (a console not built yet, writing to a pipe
or a file in UTF-8; lines with no markup to escape) is written without importing it:
:func:`plain_width` tells when, from Rich's own rules, and :func:`print_line` (and the
table of :func:`ctxmgr.cli.tables.print_rows`) write it. ``validate`` and ``stats`` in a
pipe then cost no Rich; ``tests/cli/test_plain_output.py`` holds both to Rich's bytes.
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from ctxmgr._redact import scrub
from ctxmgr._terminal import escape_text, write_for

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "lazy_console",
    "escape",
    "located",
    "note",
    "plain_width",
    "print_line",
    "print_json",
    "printable",
    "real_console",
    "reader_warnings",
    "record_note",
    "record_skipped",
    "reset_notes",
    "run_notes",
    "run_skipped",
    "show_every_warning",
    "show_warning",
    "show_warnings",
    "showing_every_warning",
    "warning_digest",
    "warning_kind",
]


def printable(text: object, *, multiline: bool = False) -> str:
    """``text`` as it may be shown on a terminal: no credentials, no control characters.

    API keys and passwords in URLs become ``***`` (:func:`ctxmgr._redact.scrub`: a last
    line of defence behind the providers' own scrubbing). ``ESC`` becomes ``\\x1b``, a
    newline ``\\n`` (unless ``multiline``: then newlines and tabs stay, so a summary
    keeps its lines), a right-to-left override ``\\u202e``.
    Use it on everything printed that came from a file, a name or a model.
    """
    return escape_text(scrub(str(text)), multiline=multiline)


class _LazyConsole:
    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def real(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


def real_console(console: Console) -> Console:
    """The Rich console itself, for code that needs a true ``Console`` (live displays
    enter it as a context manager, which a proxy's ``__getattr__`` cannot forward)."""
    return console.real() if isinstance(console, _LazyConsole) else console


def lazy_console(**options: Any) -> Console:
    """A ``rich.console.Console(**options)`` that imports Rich when first used."""
    return cast("Console", _LazyConsole(**options))


_PLAIN_OPTIONS = frozenset({"highlight", "emoji"})


def plain_width(console: Console) -> int | None:
    """The width ``console`` renders at, if it writes plain text: ``None`` when Rich must
    write (a console built already or given options of its own, a terminal, an encoding
    other than UTF-8, Windows, an IPython shell).

    Rich's own rules for a console with no width, file or terminal setting of its own
    (``Console.is_terminal``, ``Console.size``, ``Console.encoding``): not a terminal
    means no styles at all; the width is ``COLUMNS``, else the first of standard input,
    output and error that is a terminal, else 80.
    """
    if not isinstance(console, _LazyConsole) or console._console is not None:
        return None
    if not _PLAIN_OPTIONS.issuperset(console._options) or sys.platform == "win32":
        return None
    import builtins

    stream = sys.stdout
    if hasattr(builtins, "get_ipython") or stream is None:
        return None
    if not (getattr(stream, "encoding", "utf-8") or "utf-8").lower().startswith("utf") or _rich_terminal(stream):
        return None
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    for descriptor in (0, 1, 2):
        try:
            return os.get_terminal_size(descriptor).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def _rich_terminal(stream: Any) -> bool:
    """Whether Rich takes ``stream`` for a terminal (``Console.is_terminal``)."""
    environ = os.environ
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def plain_text(text: str) -> bool:
    """Whether Rich shows ``text`` as it is: printable, with nothing its markup escapes."""
    return "[" not in text and "\\" not in text and text.isprintable()


def escape(text: str) -> str:
    """``rich.markup.escape``, Rich imported when first called."""
    from rich.markup import escape

    return escape(text)


def print_line(
    console: Console, text: str, *, markup: Callable[[], str] | None = None, soft_wrap: bool = False
) -> None:
    """``console.print(markup(), soft_wrap=soft_wrap, highlight=False)``, written without
    Rich when it would write ``text`` as it is (see :func:`plain_width`).

    ``text`` is the line as shown (already :func:`printable`); ``markup`` makes the same
    line for Rich, escaped and with any styles (default: ``text`` escaped). A line that is
    not soft wrapped goes plain only when it fits the width whole, in ASCII (one cell a
    character).
    """
    width = plain_width(console)
    if width is not None and plain_text(text) and (soft_wrap or (text.isascii() and len(text) <= width)):
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
        return
    console.print(escape(text) if markup is None else markup(), soft_wrap=soft_wrap, highlight=False)


def print_json(payload: object) -> None:
    """A ``--json`` report on standard output: indented, and on a terminal written so
    that nothing in it (a file name, a server's message) can drive the terminal.

    A file name that is not UTF-8 (``b"\\xff.json"``) reaches Python as text holding a
    lone surrogate for each such byte (``"\\udcff.json"``), which orjson refuses to
    write. Such a report is written by the standard library instead, with every
    character past ASCII as a ``\\uXXXX`` escape: the same values, and the name's
    bytes come back exactly (``os.fsencode(json.loads(report)["files"][0]["path"])``).
    """
    import orjson

    try:
        data = orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE, default=str)
    except orjson.JSONEncodeError:
        import json

        data = (json.dumps(payload, indent=2, ensure_ascii=True, default=str) + "\n").encode("ascii")
    write_for(sys.stdout.buffer, data)
    sys.stdout.buffer.flush()


_notes: list[dict[str, str]] = []
_skipped: list[dict[str, str]] = []


def reset_notes() -> None:
    """Forget the notes, skipped inputs and warnings of an earlier command run in this
    process (tests run many)."""
    _notes.clear()
    _skipped.clear()
    _warning_kinds.clear()


def record_skipped(path: str, reason: str) -> None:
    """Keep an input passed over on purpose for the ``--json`` report's ``skipped`` list
    (:func:`run_skipped`), in the shape ``trim`` and ``summarize`` report it."""
    _skipped.append({"path": path, "reason": reason})


def run_skipped() -> list[dict[str, str]]:
    """The inputs this command passed over (each ``{"path", "reason"}``)."""
    return list(_skipped)


def note(level: str, text: str) -> None:
    """Say something about the whole run (not one file) on standard error, now, and keep
    it for the ``--json`` report (:func:`run_notes`): a config value the environment
    overrode, a key file others can read. ``level`` is ``note`` or ``warning``."""
    shown = printable(text)
    _notes.append({"level": level, "message": shown})
    sys.stderr.write(f"{level}: {shown}\n")
    sys.stderr.flush()


def record_note(level: str, text: str) -> None:
    """Keep a note for the ``--json`` report without printing it (its caller prints a
    shorter form: a count past a few entries)."""
    _notes.append({"level": level, "message": printable(text)})


def run_notes() -> list[dict[str, str]]:
    """The notes of this command so far (each ``{"level", "message"}``)."""
    return list(_notes)


def reader_warnings(console: Console, name: str, line: int | None, warnings: list[str], *, quiet: bool) -> list[str]:
    """Say what a reader noticed in one conversation (a forged summary marker...) on the
    error console, unless ``quiet``; return the lines for the ``--json`` report, which
    keeps them whatever ``quiet`` says. Commands that only read use this."""
    shown = [warning if line is None else f"line {line}: {warning}" for warning in warnings]
    if not quiet:
        show_warnings(console, name, shown)
    return shown


# -- warnings: one style, one line per kind per file, and a closing digest ----------------

_LINE = re.compile(r"line (\d+): ")
_WHERE = re.compile(r"^(?:[\w-]+ )?(?:output )?message \d+:? ")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_PLACES = re.compile(r" \((?:messages?|lines?) [\d, ]+\)")

_warning_kinds: Counter[str] = Counter()
_every_warning = False


def showing_every_warning() -> bool:
    """Whether ``--verbose`` asked for every warning."""
    return _every_warning


def show_every_warning(verbose: bool) -> None:
    """``-v/--verbose``: print every warning, not one line per kind per file."""
    global _every_warning  # the run's one setting, as the counter below is its one tally
    _every_warning = verbose


def located(name: str, text: str) -> str:
    """``text`` about file ``name`` in the one style of every message: ``name:12: ...``
    for a text that starts with ``line 12: `` (a dataset line), else ``name: text``."""
    match = _LINE.match(text)
    if match is None:
        return f"{name}: {text}"
    return f"{name}:{match.group(1)}: {text[match.end() :]}"


def warning_kind(text: str) -> str:
    """What a warning says, without where and about what (line and message numbers,
    quoted ids): the key the digest counts by."""
    text = _LINE.sub("", text, count=1) if _LINE.match(text) else text
    text = _WHERE.sub("", text, count=1)
    text = _QUOTED.sub("…", text)
    text = _PLACES.sub("", text)
    return re.sub(r"\d+", "N", text)


def show_warning(console: Console, name: str, text: str) -> None:
    """Print one warning about file ``name`` (see :func:`show_warnings`)."""
    show_warnings(console, name, [text])


def show_warnings(console: Console, name: str, texts: Sequence[str]) -> None:
    """Print the warnings about file ``name``: one line per kind, the first of that kind
    (so its position) with how many more there are; every one under ``--verbose`` (and
    in ``--json``, which keeps them all). Each is counted for :func:`warning_digest`."""
    kinds: dict[str, list[str]] = {}
    for text in texts:
        kinds.setdefault(warning_kind(text), []).append(text)
    for kind, same in kinds.items():
        _warning_kinds[kind] += len(same)
    if _every_warning:  # in the order they came
        for text in texts:
            console.print(f"[yellow]warning:[/] {escape(printable(located(name, text)))}", soft_wrap=True)
        return
    for same in kinds.values():
        more = f" (and {len(same) - 1:,} more like it; -v lists every one)" if len(same) > 1 else ""
        console.print(f"[yellow]warning:[/] {escape(printable(located(name, same[0])))}{more}", soft_wrap=True)


def warning_digest(*, always: bool = False) -> str | None:
    """The closing line of a run's warnings, by kind, most frequent first, for a run over
    many files (``always``) that had any."""
    total = sum(_warning_kinds.values())
    if not total or not always:
        return None
    kinds = _warning_kinds.most_common()
    shown = "; ".join(f"{count:,} {printable(kind)}" for kind, count in kinds[:5])
    if len(kinds) > 5:
        shown += f"; {len(kinds) - 5} other kinds"
    return f"warnings: {total:,} ({shown}); -v or --json lists every one"
