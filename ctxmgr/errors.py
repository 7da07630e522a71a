"""The one exception tree of ctxmgr.

Everything ctxmgr raises on purpose derives from :class:`CtxmgrError`; the CLI maps
each branch to an exit code in one place (``ctxmgr.cli.errors``)::

    CtxmgrError                   base; never raised itself
    ├── InputError                a file or stream we cannot read or understand   (exit 2)
    │   └── FormatDetectionError  valid JSON of no format, or of several            (exit 2)
    │       └── UnknownFormatError  of no format at all, nor near one              (exit 2)
    ├── UsageError                contradictory or invalid options                 (exit 2)
    ├── OutputError               a destination we cannot write                   (exit 2)
    ├── ProviderError             the summarizer failed: HTTP error, timeout, …    (exit 3)
    │   ├── MissingKeyError       no API key in the environment                    (exit 3)
    │   ├── ProviderNotInstalledError  the provider's SDK is not importable        (exit 3)
    │   ├── MissingFactsError     the summary lacks facts ``require_facts`` demands (exit 3)
    │   ├── SummaryCutOffError    the answer was cut off at the output-token cap    (exit 3)
    │   └── PendingSummaryError   a request built from an answer still in a provider batch;
    │                             in ``ctxmgr.providers._batch``, raised only while a
    │                             batch run collects requests, a pass that writes nothing
    └── ManagerError              a custom context manager failed to import, build or run (exit 1)

Messages are one line, name the file (and line/column) where there is one, and say what
to do next where there is something to do.
"""

from __future__ import annotations

__all__ = [
    "CtxmgrError",
    "FormatDetectionError",
    "InputError",
    "ManagerError",
    "MissingFactsError",
    "MissingKeyError",
    "OutputError",
    "ProviderError",
    "ProviderNotInstalledError",
    "SummaryCutOffError",
    "UnknownFormatError",
    "UsageError",
]


class CtxmgrError(Exception):
    """Base of every error ctxmgr raises on purpose.

    Pickled as it is (its message and fields), so an error a worker process met keeps
    its wording in the report it sends back; Python's default would build it anew from
    its message alone, through an ``__init__`` that takes other arguments.
    """

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuilt, (type(self), self.args, dict(self.__dict__)))


def _rebuilt(cls: type[CtxmgrError], args: tuple[object, ...], fields: dict[str, object]) -> CtxmgrError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(fields)
    return error


class InputError(CtxmgrError):
    """An input file or stream could not be read, parsed or validated.

    Args:
        message: What is wrong, in one line.
        source: The file name (or ``<stdin>``) the problem is in.
        line: 1-based line number, when known.
        column: 1-based column number, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.source or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"

    def located(self, source: str) -> InputError:
        """Return a copy of this error attributed to ``source`` (keeps line/column)."""
        return type(self)(self.message, source=source, line=self.line, column=self.column)


class FormatDetectionError(InputError):
    """The input is valid JSON but matches no (or more than one) known format."""


class UnknownFormatError(FormatDetectionError):
    """The input matches no known format at all (rather than several), nor does its
    shape point to one (a broken conversation of the closest format is a
    :class:`FormatDetectionError` naming what is broken)."""


class UsageError(CtxmgrError):
    """Options that cannot work together, or an invalid option value."""


class OutputError(CtxmgrError):
    """A destination that cannot be written (read-only file or folder, outside -o DIR, …)."""


class ProviderError(CtxmgrError):
    """The summarizer failed. ``provider`` names it; the message says why.

    Never includes an API key: messages are built from status codes and SDK messages,
    which we scrub of the key before storing (see ``ctxmgr.providers._base.scrub``).

    Attributes:
        provider: Which provider failed (``openai``, ``google``...).
        reason: The message without the provider prefix.
        retryable: Whether trying again may succeed (429, 5xx, timeouts, connections).
        status_code: The HTTP status of the failed answer, when there was one.
        retry_after: Seconds the server asked us to wait (``Retry-After``), if it did.
        every_call: Whether every other call would fail the same way (no key, a key the
            server refuses, an unknown model, a host that cannot be reached): a batch
            stops calling at the first such error. By default, for 401, 403 and 404.
    """

    every_call_by_default = False

    def __init__(
        self,
        message: str,
        *,
        provider: str = "provider",
        retryable: bool = False,
        status_code: int | None = None,
        retry_after: float | None = None,
        every_call: bool | None = None,
    ) -> None:
        self.provider = provider
        self.reason = message
        self.retryable = retryable
        self.status_code = status_code
        self.retry_after = retry_after
        if every_call is None:
            every_call = self.every_call_by_default or status_code in _EVERY_CALL_STATUS
        self.every_call = every_call
        super().__init__(f"{provider}: {message}")


# Unauthorized, forbidden, not found (an unknown model, a wrong base URL): the same
# request with other text gets the same answer.
_EVERY_CALL_STATUS = frozenset({401, 403, 404})


class MissingKeyError(ProviderError):
    """No API key was found; the message names the environment variable to set."""

    every_call_by_default = True


class SummaryCutOffError(ProviderError):
    """The answer was cut off at the output-token cap (``max_summary_tokens``): no summary."""


class ProviderNotInstalledError(ProviderError):
    """The SDK a provider needs is not importable; the message gives the pip command."""

    every_call_by_default = True


class MissingFactsError(ProviderError):
    """The summary still lacks facts of its span after the model was asked for them."""


class ManagerError(CtxmgrError):
    """A custom context manager's code failed as it was imported, built or run (a
    ``--manager`` naming no such file, module or class is a :class:`UsageError`)."""
