"""The exit codes of a run, and the error each one stands for.

0 done; 1 ``--check`` found changes, ``validate`` found problems, or a manager's code
failed; 2 usage or input error; 3 summarizer failure; 70 (``EX_SOFTWARE``) an unexpected
error, a bug in ctxmgr; 74 (``EX_IOERR``) an operating-system error nothing else handled;
75 (``EX_TEMPFAIL``) summaries are still in a provider batch (``summarize --batch``: run
the command again later). A failure never maps to 1: a CI job reads 1 as "found
something", and a crash must not pass for a finding.

The library's run (:func:`ctxmgr.files.compact_paths`) reports its code with these, and
the command line ends with them (:mod:`ctxmgr.cli.errors`).
"""

from __future__ import annotations

from ctxmgr.errors import InputError, ManagerError, OutputError, ProviderError, UsageError

__all__ = [
    "EXIT_CHANGED",
    "EXIT_INPUT",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_OS",
    "EXIT_PENDING",
    "EXIT_PROVIDER",
    "exit_code_for",
]

EXIT_OK = 0
EXIT_CHANGED = 1
EXIT_INPUT = 2
EXIT_PROVIDER = 3
EXIT_INTERNAL = 70
"""``EX_SOFTWARE`` of sysexits.h: an exception ctxmgr did not expect (a bug)."""
EXIT_OS = 74
"""``EX_IOERR`` of sysexits.h: an operating-system error no other rule handled."""
EXIT_PENDING = 75
"""``EX_TEMPFAIL`` of sysexits.h: try again later (summaries still in a provider batch)."""


def exit_code_for(error: BaseException) -> int:
    """The exit code an error ends the run with."""
    if isinstance(error, InputError | UsageError | OutputError):
        return EXIT_INPUT
    if isinstance(error, ProviderError):
        return EXIT_PROVIDER
    if isinstance(error, ManagerError):
        return EXIT_CHANGED
    if isinstance(error, OSError):
        return EXIT_OS
    return EXIT_INTERNAL
