"""The error console, built on first use: Rich costs start-up time that a ``trim``
whose output goes to a pipe, with nothing to report, never needs to pay."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from ctxmgr._terminal import escape_text, write_for
from ctxmgr.redact import scrub

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "lazy_console",
    "note",
    "print_json",
    "printable",
    "real_console",
    "reader_warnings",
    "reset_notes",
    "run_notes",
]


def printable(text: object, *, multiline: bool = False) -> str:
    """``text`` as it may be shown on a terminal: no credentials, no control characters.

    API keys and passwords in URLs become ``***`` (:func:`ctxmgr.redact.scrub`: a last
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


def print_json(payload: object) -> None:
    """A ``--json`` report on standard output: indented, and on a terminal written so
    that nothing in it (a file name, a server's message) can drive the terminal."""
    import sys

    import orjson

    data = orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE, default=str)
    write_for(sys.stdout.buffer, data)
    sys.stdout.buffer.flush()


_notes: list[dict[str, str]] = []


def reset_notes() -> None:
    """Forget the notes of an earlier command run in this process (tests run many)."""
    _notes.clear()


def note(level: str, text: str) -> None:
    """Say something about the whole run (not one file) on standard error, now, and keep
    it for the ``--json`` report (:func:`run_notes`): a config value the environment
    overrode, a key file others can read. ``level`` is ``note`` or ``warning``."""
    import sys

    shown = printable(text)
    _notes.append({"level": level, "message": shown})
    sys.stderr.write(f"{level}: {shown}\n")
    sys.stderr.flush()


def run_notes() -> list[dict[str, str]]:
    """The notes of this command so far (each ``{"level", "message"}``)."""
    return list(_notes)


def reader_warnings(console: Console, name: str, line: int | None, warnings: list[str], *, quiet: bool) -> list[str]:
    """Say what a reader noticed in one conversation (a forged summary marker...) on the
    error console, unless ``quiet``; return the lines for the ``--json`` report, which
    keeps them whatever ``quiet`` says. Commands that only read use this."""
    shown = [warning if line is None else f"line {line}: {warning}" for warning in warnings]
    if not quiet:
        from rich.markup import escape

        for warning in shown:
            text = f"{escape(printable(name))}: {escape(printable(warning))}"
            console.print(f"[yellow]warning:[/] {text}", soft_wrap=True)
    return shown
