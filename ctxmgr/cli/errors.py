"""Errors become exit codes here, and only here.

0 done; 1 ``--check`` found changes, ``validate`` found problems, or a runtime failure;
2 usage or input error; 3 summarizer failure. ``CTXMGR_DEBUG=1`` re-raises so the full
traceback is shown instead of the one-line message.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.markup import escape

from ctxmgr.errors import (
    CtxmgrError,
    InputError,
    ManagerError,
    OutputError,
    ProviderError,
    UsageError,
)

__all__ = ["EXIT_CHANGED", "EXIT_INPUT", "EXIT_OK", "EXIT_PROVIDER", "exit_code_for", "handle_errors", "report"]

EXIT_OK = 0
EXIT_CHANGED = 1
EXIT_INPUT = 2
EXIT_PROVIDER = 3


def exit_code_for(error: BaseException) -> int:
    """The exit code an error ends the process with."""
    if isinstance(error, InputError | UsageError | OutputError):
        return EXIT_INPUT
    if isinstance(error, ProviderError):
        return EXIT_PROVIDER
    if isinstance(error, ManagerError):
        return EXIT_CHANGED
    return EXIT_CHANGED


def report(console: Console, error: BaseException) -> None:
    """Print ``error`` as one line on the error console."""
    text = " ".join(str(error).split()) or type(error).__name__
    console.print(f"[bold red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)


@contextmanager
def handle_errors(console: Console) -> Iterator[None]:
    """Turn ctxmgr errors into one line on standard error and the matching exit code."""
    try:
        yield
    except CtxmgrError as error:
        if os.environ.get("CTXMGR_DEBUG"):
            raise
        report(console, error)
        raise typer.Exit(exit_code_for(error)) from None
    except KeyboardInterrupt:
        console.print("[bold red]interrupted[/]")
        raise typer.Exit(130) from None
