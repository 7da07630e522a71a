"""Errors become exit codes here, and only here.

The codes and the error each stands for are :mod:`ctxmgr._exits`' (the library's run
reports them too); besides them, 141 says the reader of standard output went away (as a
shell reports a process ended by SIGPIPE). A failure never exits 1: a CI job reads 1 as
"found something", and a crash must not pass for a finding. ``CTXMGR_DEBUG=1`` re-raises
so the full traceback is shown instead of the one-line message.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from ctxmgr._exits import EXIT_INTERNAL, EXIT_OS, exit_code_for
from ctxmgr.cli.console import printable
from ctxmgr.errors import CtxmgrError

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "EXIT_CLOSED_PIPE",
    "closed_pipe",
    "handle_errors",
    "report",
    "report_unexpected",
]


def report(console: Console, error: BaseException | str) -> None:
    """Print ``error`` as one line on the error console."""
    # One line whatever the message holds (a newline, in a file name or a server's
    # message, is shown as "\n": it cannot start a second, forged line), and nothing a
    # terminal would act on.
    text = printable(str(error).strip()) or type(error).__name__
    from rich.markup import escape

    console.print(f"[bold red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)


EXIT_CLOSED_PIPE = 141


def closed_pipe() -> int:
    """Point standard output at /dev/null, so the interpreter's final flush does not fail
    again, and return :data:`EXIT_CLOSED_PIPE`."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return EXIT_CLOSED_PIPE


@contextmanager
def handle_errors(console: Console) -> Iterator[None]:
    """Turn errors into one line on standard error and the matching exit code.

    ctxmgr's own errors get their exit code (:func:`exit_code_for`). Anything else is an
    operating-system error such as a full disk (exit 74) or a bug (exit 70), never 1,
    which says "found something" (:func:`report_unexpected`); it is reported in one line
    too, because a traceback helps no one who ran the command, and ``CTXMGR_DEBUG=1``
    brings it back for whoever debugs it.
    """
    try:
        yield
    except (typer.Exit, typer.Abort, typer.TyperException):
        raise  # Typer's own way out, with its own code
    except CtxmgrError as error:
        if os.environ.get("CTXMGR_DEBUG"):
            raise
        report(console, error)
        raise typer.Exit(exit_code_for(error)) from None
    except KeyboardInterrupt:
        console.print("[bold red]interrupted[/]")
        raise typer.Exit(130) from None
    except BrokenPipeError:
        # The reader went away (`ctxmgr trim f | head`): stop quietly, with the status
        # a shell gives a process that SIGPIPE ended (128 + 13), never 1 ("would change").
        raise typer.Exit(closed_pipe()) from None
    except Exception as error:
        if os.environ.get("CTXMGR_DEBUG"):
            raise
        raise typer.Exit(report_unexpected(console, error)) from None


def report_unexpected(console: Console, error: Exception) -> int:
    """Report an error no rule of ctxmgr's expected, in one line; its exit code: an
    operating-system error (a full disk) 74, anything else (a bug) 70, never 1."""
    if isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        report(console, f"{where}{error.strerror or error}")
        return EXIT_OS
    report(console, f"unexpected {type(error).__name__}: {error} (set CTXMGR_DEBUG=1 for the traceback)")
    return EXIT_INTERNAL
