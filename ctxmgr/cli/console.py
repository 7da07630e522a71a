"""The error console, built on first use: Rich costs start-up time that a ``trim``
whose output goes to a pipe, with nothing to report, never needs to pay."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["lazy_console", "real_console"]


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
