"""What a flag is (:class:`Flag`) and how its command-line value becomes the library's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ctxmgr.errors import UsageError

if TYPE_CHECKING:
    from ctxmgr.state import Message

__all__ = [
    "FILE",
    "RUN",
    "Feeds",
    "Flag",
    "Scope",
    "make_flag",
    "optional_count",
    "patterns",
    "positions",
    "start_on",
    "trigger_estimate",
]

Scope = Literal["file", "run"]
Feeds = Literal["", "manager", "compaction", "format", "output", "summarizer", "batch", "triggers", "validation"]
"""The library object a flag configures ("": none; the command reads it itself; "compaction":
the compaction managers, :func:`ctxmgr.state.compact_messages`' keywords)."""
FILE: Scope = "file"
RUN: Scope = "run"


def optional_count(value: str, flag: str) -> int | None:
    """A ``TOKENS|none`` value: a whole number >= 0, or ``None`` for ``none``."""
    if value.lower() == "none":
        return None
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"{flag} must be a whole number or 'none', got {value!r}") from None
    if number < 0:
        raise UsageError(f"{flag} must be >= 0, got {number}")
    return number


def trigger_estimate(value: str, flag: str) -> Callable[[Sequence[Message]], int]:
    """The token estimate ``--trigger-estimate`` names."""
    from ctxmgr.state._tokens import TRIGGER_ESTIMATES

    estimate = TRIGGER_ESTIMATES.get(value)
    if estimate is None:
        raise UsageError(f"{flag} must be 'reference' or 'script', got {value!r}")
    return estimate


def start_on(value: str | None, flag: str) -> str | None:
    """``--start-on``: ``user``, or nothing."""
    if value is not None and value != "user":
        raise UsageError(f"{flag} must be 'user', got {value!r}")
    return value


def positions(value: list[str] | None, flag: str) -> tuple[int, ...]:
    """A repeatable option of 0-based positions."""
    found = []
    for text in value or ():
        try:
            number = int(text)
        except ValueError:
            raise UsageError(f"{flag} must be a whole number >= 0, got {text!r}") from None
        if number < 0:
            raise UsageError(f"{flag} must be a whole number >= 0, got {number}")
        found.append(number)
    return tuple(found)


def patterns(value: list[str] | None, flag: str) -> tuple[str, ...]:
    """A repeatable pattern option as a tuple (none given: empty)."""
    return tuple(value or ())


@dataclass(frozen=True)
class Flag:
    """One option as the commands that list it take it.

    Attributes:
        name: The long flag without its dashes (``max-messages``); config files use it.
        param: The parameter name the command receives (``max_messages``).
        kind: Its type, ``None`` left out (``int``, ``str``, ``Path``, ``list[str]``).
        default: Its value when nothing sets it.
        help: The help text.
        scope: :data:`FILE` (each file takes it from its nearest config) or :data:`RUN`.
        project: Whether an untrusted project file may set it.
        bound: The highest value a project file may set (``None``: no bound).
        env: Environment variables that decide it when no flag is given: a config
            file's value gives way to them.
        refused_because: What a project setting it is told, where "where data, keys or
            writes go or what code runs" would not say it.
        feeds: The library object it configures (``manager``, ``format``, ``output``,
            ``summarizer``, ``batch``, ``run``) and ``arg`` the keyword there.
        parse: Turns the command-line value into the library's (given the flag's
            spelling, for messages).
        short: A one-letter alias (``-n``).
        negative: Whether it has a ``--no-`` form.
        optional: Whether ``None`` is a value (nothing given).
        metavar: What the help calls its value.
        min: The smallest value the command line accepts.
        show_default: Whether the help shows the default.
        key: The key config files use besides the flag's name (``exclude-tools`` for the
            repeatable ``--exclude-tool``); ``""``: the name alone.
    """

    name: str
    param: str
    kind: Any
    default: Any
    help: str
    scope: Scope = RUN
    project: bool = False
    bound: float | None = None
    env: tuple[str, ...] = ()
    refused_because: str | None = None
    feeds: Feeds = ""
    arg: str = ""
    parse: Callable[[Any, str], Any] | None = None
    short: str | None = None
    negative: bool = False
    optional: bool = False
    metavar: str | None = None
    min: float | None = None
    show_default: bool = True
    key: str = ""

    @property
    def flag(self) -> str:
        """Its long spelling: ``--max-messages``."""
        return f"--{self.name}"

    @property
    def config_key(self) -> str:
        """The key config files name it by (its long name, unless :attr:`key` says)."""
        return self.key or self.name

    @property
    def keyword(self) -> str:
        """The keyword of the library argument it feeds."""
        return self.arg or self.param


def make_flag(name: str, kind: Any, default: Any, help: str, **details: Any) -> Flag:
    return Flag(name, details.pop("param", name.replace("-", "_")), kind, default, help, **details)
