"""The format registry: one entry per conversation format, all ctxmgr knows of it.

An entry (:class:`FormatEntry`) names a format, its light module (``light``) and its
adapter; the light module holds the parts below under fixed names (``score``, ``clue``,
``outline``, ``CARRIED``, ``DECLARATION``):

* ``detect``: ``score(value) -> NO | PLAUSIBLE | CERTAIN``, how sure the format is that
  a parsed JSON value is one of its conversations;
* ``clue``: ``clue(value) -> int``, how strongly the value's shape points to the format
  when no format recognises it (``0``: not at all); the strongest clue names the format
  whose reader explains what is wrong;
* ``outline`` (optional): the fast path's reader, ``outline(value) -> Outline | None``,
  which ``trim``, ``validate`` and ``stats`` use without building messages or importing
  pydantic;
* ``declaration`` (with an outline): the rules both readers are driven by (roles, where
  ids live, the fields that may carry the summary marker), a
  :class:`~ctxmgr.formats._declaration.Declaration`;
* ``adapter``: the full reader and writer (a :class:`~ctxmgr.formats._base.FormatAdapter`);
* ``carries`` (optional): the record and part fields its reader carries into the model
  (a :class:`Carried`); converting, the others are counted as lost;
* ``rules`` (optional): the provider's rule on where tool results go, which makes the
  format a ``validate --for`` target (see :mod:`ctxmgr._shapes`);
* ``container_keys``: the keys of a container object that hold the format's list of
  records (a dataset line is a conversation if one of them holds a list);
* ``session_log``: the format is a log an agent tool writes for itself (Claude Code,
  Codex): read, compacted and written back in the tool's shape, but never the target
  of a conversion from another format, which would need an invented session;
* ``companions`` (optional): a glob, relative to a session file's folder, of the files
  that belong to that session (``{stem}`` is the file's name without its extension;
  Claude Code's subagents: ``"{stem}/subagents/*.jsonl"``): ``stats`` counts them on the
  session's line.

Code is named by ``"module:attribute"`` and imported on first use: this module imports
nothing of ctxmgr, so the command line builds its help text from it without loading the
formats, and the trim fast path reaches an outline reader without loading any adapter.
Every part of a format's detection, outline reader and carried fields lives in its light
module (``ctxmgr/formats/_detection/<format>.py``, no pydantic), its reader and writer in
``ctxmgr/formats/_<format>.py``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache
from typing import Any, Literal

__all__ = [
    "CONVERSATION_KEYS",
    "CONVERTIBLE",
    "ENTRIES",
    "NAMES",
    "TARGETS",
    "Carried",
    "FormatEntry",
    "Rules",
    "entry",
    "names_text",
    "outline_reader",
    "refuse_conversion",
    "register",
    "rules",
    "unregister",
]

Rules = Literal["next-message", "tool-run"]
"""Where a provider wants the results of an assistant's tool calls: all in the single next
message (Anthropic, Gemini), or in the run of tool messages right after it (OpenAI)."""


class Carried:
    """The fields a format's reader carries into the model (a registry entry's ``carries``).

    The rest lives only in each message's source record: written back untouched to the
    same format, counted as lost when converting to another (see
    :mod:`ctxmgr.formats._uncarried`). Identifiers and bookkeeping the target rebuilds
    (ids, status, "type") count as carried.

    Attributes:
        record: Fields of a message record (item, content) the reader maps.
        part: Fields of a content part (block) the reader maps.
        modelled_parts: The part types the reader models; another part is carried whole,
            as one block.
        parts_by_key: Parts have no type: one is modelled if it holds one of
            ``modelled_parts`` as a key (Gemini).
        modelled_records: The record types the reader models (``None``: all); others are
            carried whole.
        only_to: Part fields that reach only the formats named (signatures, encrypted
            reasoning).
    """

    # A plain class, not a dataclass: this module loads with every command, and building
    # a dataclass costs more start-up than the whole registry.
    __slots__ = ("modelled_parts", "modelled_records", "only_to", "part", "parts_by_key", "record")

    def __init__(
        self,
        *,
        record: frozenset[str],
        part: frozenset[str],
        modelled_parts: frozenset[str] = frozenset(),
        parts_by_key: bool = False,
        modelled_records: frozenset[str | None] | None = None,
        only_to: dict[str, frozenset[str]] | None = None,
    ) -> None:
        self.record = record
        self.part = part
        self.modelled_parts = modelled_parts
        self.parts_by_key = parts_by_key
        self.modelled_records = modelled_records
        self.only_to = only_to or {}


@cache
def _resolve(reference: str) -> Any:
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


class FormatEntry:
    """One format: its command-line name and where its parts live (see the module docstring)."""

    __slots__ = (
        "adapter",
        "carries",
        "clue",
        "companions",
        "container_keys",
        "declares",
        "detect",
        "name",
        "outline",
        "rules",
        "session_log",
    )

    def __init__(
        self,
        *,
        name: str,
        light: str,
        adapter: str,
        outline: bool = False,
        carries: bool = True,
        rules: Rules | None = None,
        container_keys: tuple[str, ...] = (),
        session_log: bool = False,
        companions: str | None = None,
    ) -> None:
        # The light module's parts have fixed names: score, clue, outline, CARRIED, DECLARATION.
        self.name = name
        self.detect = f"{light}:score"
        self.clue = f"{light}:clue"
        self.adapter = adapter
        self.outline = f"{light}:outline" if outline else None
        self.declares = f"{light}:DECLARATION" if outline else None
        self.carries = f"{light}:CARRIED" if carries else None
        self.rules = rules
        self.container_keys = container_keys
        self.session_log = session_log
        self.companions = companions

    def __repr__(self) -> str:
        return f"FormatEntry(name={self.name!r})"

    def score(self, value: Any) -> int:
        """The detection score of ``value`` (NO, PLAUSIBLE or CERTAIN)."""
        score: Callable[[Any], int] = _resolve(self.detect)
        return score(value)

    def clue_strength(self, value: Any) -> int:
        """How strongly ``value``'s shape points to this format (0: not at all)."""
        clue: Callable[[Any], int] = _resolve(self.clue)
        return clue(value)

    def adapter_class(self) -> type[Any]:
        """The adapter class, a ``ctxmgr.formats._base.FormatAdapter`` (imports the full
        reader, and pydantic)."""
        cls: type[Any] = _resolve(self.adapter)
        return cls

    def declaration(self) -> Any:
        """The rules both readers are driven by (a ``Declaration``; ``None`` for a format
        without an outline reader, whose full reader stands alone)."""
        return None if self.declares is None else _resolve(self.declares)

    def carried(self) -> Carried | None:
        """The fields the reader carries into the model (``None``: all, as native does)."""
        if self.carries is None:
            return None
        carried: Carried = _resolve(self.carries)
        return carried


ENTRIES: tuple[FormatEntry, ...] = (
    FormatEntry(
        name="native",
        light="ctxmgr.formats._detection.native",
        outline=True,
        carries=False,
        adapter="ctxmgr.formats._native:NativeFormat",
        container_keys=("context",),
    ),
    FormatEntry(
        name="openai-chat",
        light="ctxmgr.formats._detection.openai_chat",
        outline=True,
        adapter="ctxmgr.formats._openai_chat:OpenAIChatFormat",
        rules="tool-run",
        container_keys=("messages",),
    ),
    FormatEntry(
        name="openai-responses",
        light="ctxmgr.formats._detection.openai_responses",
        outline=True,
        adapter="ctxmgr.formats._openai_responses:OpenAIResponsesFormat",
        rules="tool-run",
        container_keys=("input",),
    ),
    FormatEntry(
        name="anthropic",
        light="ctxmgr.formats._detection.anthropic",
        outline=True,
        adapter="ctxmgr.formats._anthropic:AnthropicFormat",
        rules="next-message",
        container_keys=("messages",),
    ),
    FormatEntry(
        name="gemini",
        light="ctxmgr.formats._detection.gemini",
        outline=True,
        adapter="ctxmgr.formats._gemini:GeminiFormat",
        rules="next-message",
        container_keys=("contents",),
    ),
    FormatEntry(
        name="langchain",
        light="ctxmgr.formats._detection.langchain",
        outline=True,
        adapter="ctxmgr.formats._langchain:LangChainFormat",
    ),
    FormatEntry(
        name="sharegpt",
        light="ctxmgr.formats._detection.sharegpt",
        adapter="ctxmgr.formats._sharegpt:ShareGPTFormat",
        container_keys=("conversations",),
    ),
    FormatEntry(
        name="gemini-cli",
        light="ctxmgr.formats._detection.gemini_cli",
        adapter="ctxmgr.formats._gemini_cli:GeminiCliFormat",
        session_log=True,
    ),
    FormatEntry(
        name="agents-runstate",
        light="ctxmgr.formats._detection.agents_runstate",
        adapter="ctxmgr.formats._agents_runstate:AgentsRunStateFormat",
        session_log=True,
    ),
    FormatEntry(
        name="claude-code",
        light="ctxmgr.formats._detection.claude_code",
        adapter="ctxmgr.formats._claude_code:ClaudeCodeFormat",
        session_log=True,
        companions="{stem}/subagents/*.jsonl",
    ),
    FormatEntry(
        name="swe-agent",
        light="ctxmgr.formats._detection.swe_agent",
        adapter="ctxmgr.formats._swe_agent:SweAgentFormat",
        container_keys=("history",),
        session_log=True,
    ),
    FormatEntry(
        name="openhands",
        light="ctxmgr.formats._detection.openhands",
        adapter="ctxmgr.formats._openhands:OpenHandsFormat",
        container_keys=("history",),
        session_log=True,
    ),
    FormatEntry(
        name="codex",
        light="ctxmgr.formats._detection.codex",
        adapter="ctxmgr.formats._codex:CodexFormat",
        session_log=True,
    ),
    FormatEntry(
        name="mcp-sampling",
        light="ctxmgr.formats._detection.mcp_sampling",
        adapter="ctxmgr.formats._mcp_sampling:MCPSamplingFormat",
        container_keys=("messages",),
    ),
    FormatEntry(
        name="vercel-ai",
        light="ctxmgr.formats._detection.vercel_ai",
        adapter="ctxmgr.formats._vercel_ai:VercelAIFormat",
        container_keys=("messages",),
    ),
)
"""Every format, in detection order (a tie of PLAUSIBLE scores goes to the first)."""

_BY_NAME = {format_entry.name: format_entry for format_entry in ENTRIES}

NAMES: tuple[str, ...] = tuple(_BY_NAME)
"""Every format's command-line name, in detection order."""

TARGETS: tuple[str, ...] = tuple(e.name for e in ENTRIES if e.rules is not None)
"""The formats with provider rules: the values of ``validate --for``."""

CONVERSATION_KEYS: tuple[str, ...] = tuple(dict.fromkeys(k for e in ENTRIES for k in e.container_keys))
"""Keys under which some format's container holds its list of records."""

CONVERTIBLE: tuple[str, ...] = tuple(e.name for e in ENTRIES if not e.session_log)
"""The formats a conversion may write: every format but the session logs."""


def register(format_entry: FormatEntry) -> None:
    """Add a format from outside the package (a plugin, a test): after the others in
    detection order, so it loses a tie of PLAUSIBLE scores to them.

    Its parts are named like a built-in entry's (``"module:attribute"``; the light module
    holds ``score``, ``clue`` and, with ``outline=True``, ``outline`` and
    ``DECLARATION``). Once added it is detected, read, written and converted like the
    others, and ``trim`` takes its outline reader. Lookups read at import time keep
    what they read: the command line's help text lists the formats it was loaded with.
    A name already taken raises ``ValueError``.
    """
    if format_entry.name in _BY_NAME:
        raise ValueError(f"format {format_entry.name!r} is already registered")
    _rebuild((*ENTRIES, format_entry))


def unregister(name: str) -> None:
    """Remove the format called ``name`` (``KeyError`` if there is none)."""
    found = _BY_NAME[name]
    _rebuild(tuple(e for e in ENTRIES if e is not found))


def _rebuild(entries: tuple[FormatEntry, ...]) -> None:
    """Make ``entries`` the registry, and every lookup derived from it."""
    global ENTRIES, NAMES, TARGETS, CONVERSATION_KEYS, CONVERTIBLE  # the registry's one writer
    ENTRIES = entries
    _BY_NAME.clear()
    _BY_NAME.update((e.name, e) for e in entries)
    NAMES = tuple(_BY_NAME)
    TARGETS = tuple(e.name for e in entries if e.rules is not None)
    CONVERSATION_KEYS = tuple(dict.fromkeys(k for e in entries for k in e.container_keys))
    CONVERTIBLE = tuple(e.name for e in entries if not e.session_log)


def entry(name: str) -> FormatEntry:
    """The entry called ``name`` (``KeyError`` if there is none)."""
    return _BY_NAME[name]


def outline_reader(name: str) -> Callable[[Any], Any] | None:
    """The outline reader of format ``name`` (``value -> Outline | None``), if it has one
    (imports no adapter)."""
    found = _BY_NAME.get(name)
    if found is None or found.outline is None:
        return None
    reader: Callable[[Any], Any] = _resolve(found.outline)
    return reader


def refuse_conversion(source: str | None, to: str | None) -> None:
    """Raise ``ValueError`` when writing format ``to`` from format ``source`` would need
    an invented session: ``to`` is a session log and ``source`` another format (or
    unknown, ``None``). The message is one line for the user."""
    found = _BY_NAME.get(to) if to is not None else None
    if found is None or not found.session_log or source == to:
        return
    raise ValueError(
        f"{to} is a session log its tool writes; converting "
        f"{'another format' if source is None else source} into it would need an invented session "
        f"(convert to one of: {names_text(CONVERTIBLE, last=', ')})"
    )


def rules(name: str | None) -> Rules | None:
    """The tool-result rule of format ``name`` (``None``: no format, or no rule)."""
    found = _BY_NAME.get(name) if name is not None else None
    return None if found is None else found.rules


def names_text(names: tuple[str, ...] | None = None, *, last: str = " or ") -> str:
    """``names`` (default: every format's) for a help text: ``"a, b, c or d"``
    (``last=", "`` for a plain list)."""
    names = NAMES if names is None else names
    return ", ".join(names[:-1]) + last + names[-1] if len(names) > 1 else "".join(names)
