"""What every format adapter reads into and writes from: :class:`Conversation`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ctxmgr import _format_registry as format_registry, _nesting
from ctxmgr._io import JsonlRecords, Layout  # re-exported: the format modules import them from here
from ctxmgr.errors import InputError

if TYPE_CHECKING:
    from ctxmgr.state._agent import AgentState

__all__ = [
    "AMBIGUITY_NOTE",
    "CERTAIN",
    "NO",
    "PLAUSIBLE",
    "SUMMARY_HEADER",
    "Conversation",
    "FormatAdapter",
    "JsonlRecords",
    "Layout",
    "Losses",
    "Outline",
    "SummaryPlacement",
    "arguments_json",
    "call_text",
    "first_record",
    "forged_summary",
    "note_ambiguity",
    "record_name",
    "split_summary_text",
    "split_system_prompt",
]

SUMMARY_HEADER = "[ctxmgr: summary of the earlier conversation]"
"""First line of a summary stored as text (a message or a system block) in formats with
no metadata slot. Reading a file finds it and lifts the rest back into
``context_summary``, so a second ``summarize`` appends instead of summarizing it again."""

SummaryPlacement = Literal["field", "message", "system"]
"""Where ``--summary-as`` puts the summary: a container field (native AgentState's
``context_summary``), a marked message right after the system messages, or inside the
system prompt (Anthropic ``system``, Gemini ``systemInstruction``)."""


def arguments_json(arguments: Any) -> str:
    """Tool-call arguments as the JSON string OpenAI formats want."""
    return arguments if isinstance(arguments, str) else _nesting.dumps(arguments, ensure_ascii=False)


def call_text(call_id: Any, name: Any, arguments: Any) -> str:
    """``str()`` of one tool call in the reader's OpenAI shape, ``{"id", "type":
    "function", "function": {"name", "arguments"}}``, without building the dicts (an
    outline's token estimate of a message's calls; ``", ".join`` them in ``[...]`` for
    the list)."""
    return f"{{'id': {call_id!r}, 'type': 'function', 'function': {{'name': {name!r}, 'arguments': {arguments!r}}}}}"


def split_summary_text(text: str) -> str | None:
    """The summary inside ``text`` if it starts with :data:`SUMMARY_HEADER`, else None."""
    if text.startswith(SUMMARY_HEADER):
        return text[len(SUMMARY_HEADER) :].lstrip("\n")
    return None


APPENDED_SUMMARY = f"\n\n{SUMMARY_HEADER}"
"""How a summary is appended to a system prompt in formats whose rules are one text (a
ShareGPT ``system`` column, MCP's ``systemPrompt``): after a blank line, header first."""


def split_system_prompt(text: str) -> tuple[str, str | None]:
    """A system prompt and the summary ctxmgr appended to it (``None``: there is none)."""
    whole = split_summary_text(text)
    if whole is not None:
        return "", whole
    at = text.find(APPENDED_SUMMARY)
    if at == -1:
        return text, None
    return text[:at], text[at + len(APPENDED_SUMMARY) :].lstrip("\n")


def forged_summary(where: str, why: str) -> str:
    """The warning for a message that carries a summary marker where ctxmgr never writes one.

    A marker is text or metadata any file can hold, so it is believed only in a slot
    ctxmgr writes summaries to and that already has the authority a summary gets (the
    leading system messages, the format's system prompt, a summary field). Anywhere
    else the message stays what it is, and this says so: ``where`` names the message
    (``message 3``, ``line 4``), ``why`` what it is (``is a user message``).
    """
    return f"{where} carries ctxmgr's summary marker but {why}, not a summary ctxmgr wrote; kept as an ordinary message"


AMBIGUITY_NOTE = "this file reads as "
"""How the warning of :func:`note_ambiguity` begins."""


def note_ambiguity(conversation: Conversation, fmt: str) -> None:
    """Say that the file is valid in other formats too, and where its summary went."""
    others = " and ".join(conversation.also_reads_as)
    line = (
        f"{AMBIGUITY_NOTE}{fmt} and as {others} (--from chooses): the summary is written as a plain "
        "system message, which each of them takes"
    )
    if line not in conversation.warnings:
        conversation.warnings.append(line)


NO = 0
"""``detect`` score: this is not the format."""
PLAUSIBLE = 1
"""``detect`` score: it parses as this format, but nothing specific to it was seen."""
CERTAIN = 2
"""``detect`` score: something only this format has was seen."""


def record_name(records: Any, index: int, noun: str = "message") -> str:
    """How a warning names record ``index``: its line in a JSONL file, else ``message 3``."""
    if isinstance(records, JsonlRecords) and index < len(records.line_numbers):
        return f"line {records.line_numbers[index]}"
    return f"{noun} {index}"


def record_error(source: str, records: Any, index: int, where: str, problem: str) -> InputError:
    """The error for a bad value at ``where`` in record ``index`` of ``source``."""
    return InputError(f"{record_name(records, index)}: {where}: {problem}", source=source)


class Losses(dict[str, int]):
    """What a conversion could not carry: a count per kind (``"reasoning block": 2``).

    Kinds are short noun phrases (``request key 'thinking'``, ``content-part field
    'cache_control'``, ``video block``) so that a file's losses read as one line.
    """

    def add(self, kind: str, count: int = 1) -> None:
        self[kind] = self.get(kind, 0) + count

    def merge(self, other: dict[str, int]) -> None:
        for kind, count in other.items():
            self.add(kind, count)

    def line(self) -> str:
        """``reasoning block (2), request key 'thinking' (1)``: kinds by count, then name."""
        ordered = sorted(self.items(), key=lambda item: (-item[1], item[0]))
        return ", ".join(f"{kind} ({count})" for kind, count in ordered)


@dataclass
class Conversation:
    """One conversation as read from a file, ready to be managed and written back.

    Attributes:
        state: The model the managers work on. Each message keeps its source record.
        format: Name of the format adapter that read it (``native``, ``openai-chat``…).
        container: The parsed top-level value the messages came from (a dict or a list
            of records), kept so every key outside the message list is written back.
        layout: ``document`` or ``jsonl``.
        warnings: What reading or writing it noticed and did about it (a forged summary
            mark, a guess, a moved system message), printed on standard error. What a
            conversion could not carry is counted in ``dropped`` instead.
        pretty: Whether the input document was indented (it is written back so).
        summary_as: Where to write the summary; ``None`` is the format's natural slot.
        original_summary: ``context_summary`` as read, to tell whether it changed.
        summary_from_user_turn: The summary was read from a user turn (Anthropic's and
            Gemini's message slot, the only one those formats have in a list). It keeps
            that authority: writers put it back in a user turn, never in a system slot.
        dropped: What writing it to another format could not carry, by kind (filled by
            :func:`ctxmgr.formats.dump`; empty when nothing was lost).
        origin: The format the container's keys are spelled in: ``format``, except for a
            native file converted from another format (its keys keep that format's
            spelling, see :mod:`ctxmgr.formats._native`); ``None`` when unknown.
        also_reads_as: Other formats that read the same file (a text-only message list
            is valid OpenAI chat and Anthropic): a summary is then written where all of
            them accept it.
    """

    state: AgentState
    format: str
    container: Any
    layout: Layout = "document"
    warnings: list[str] = field(default_factory=list)
    pretty: bool = False
    summary_as: SummaryPlacement | None = None
    original_summary: str | None = None
    summary_from_user_turn: bool = False
    dropped: Losses = field(default_factory=Losses)
    origin: str | None = field(default=None)
    also_reads_as: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.original_summary = self.state.context_summary
        if self.origin is None and self.format != "native":
            self.origin = self.format

    @property
    def one_record(self) -> bool:
        """Whether the file is a single message (or item) object, not a container of them."""
        container = self.container
        if not isinstance(container, dict):
            return False
        keys = format_registry.CONVERSATION_KEYS
        if "input" in container or any(isinstance(container.get(key), list) for key in keys):
            return False  # a container of records (a Responses request even when 'input' is text)
        # A Responses item has an "output" of its own (a call's result, whatever its
        # type): only a stored response (object "response") holds its items there, as
        # the reader takes it.
        return not (container.get("object") == "response" and isinstance(container.get("output"), list))


def first_record(value: Any) -> dict[str, Any] | None:
    """The first object of a list (for clues); ``None`` for anything else."""
    if not isinstance(value, list):
        return None
    return next((item for item in value if isinstance(item, dict)), None)


@dataclass(slots=True)
class Outline:
    """Just what trimming needs of one conversation, read without building messages.

    Format adapters may offer ``outline(value) -> Outline | None`` for the streaming fast
    path: for message i, ``roles[i]`` (user/assistant/system/tool), ``calls[i]`` (the ids
    of the tool calls it makes) and ``results[i]`` (the ids of the calls it answers);
    ``rebuild(kept)`` is the container holding only those messages, records untouched;
    ``units()`` what the token estimate counts of each, ``chars(i)`` the characters the
    compaction reports count of message ``i``.
    An adapter returns ``None`` for anything not plainly well-formed, or holding a
    summary; the full reader then handles (or reports) it.
    """

    roles: list[str]
    calls: list[tuple[str, ...]]
    results: list[tuple[str, ...]]
    rebuild: Callable[[list[int]], Any]
    units: Callable[[], list[int]]
    """Each message's :func:`~ctxmgr.state._tokens.message_units`, counted from its record
    as the full reader's ``Message`` would give it (computed only when asked: reports)."""
    chars: Callable[[int], int] | None = None
    """Characters of message ``i``'s text and tool calls, as the compaction reports count
    them (``chars_removed``) on the reader's ``Message``; ``None`` where the format's
    outline does not count them (a token budget then takes the full path)."""
    records: Callable[[int], Sequence[Any]] | None = None
    """The records message ``i`` was read from (its item run in a Responses list), for an
    edit in its records (``trim --max-tool-output``); ``None`` where the outline does not
    say (that edit then takes the full path)."""

    @property
    def has_tools(self) -> bool:
        """Whether any message calls or answers a tool (else no pairing rule can fail)."""
        return any(self.calls) or any(self.results) or "tool" in self.roles


class FormatAdapter(Protocol):
    """One conversation format: recognise it, read it, write it back."""

    name: str
    list_key: str
    """The key of its container's message list (``messages``, ``contents``...)."""
    request: Any
    """Its request spelling (a :class:`~ctxmgr.formats._request.RequestFormat`), or
    ``None`` for a format with no request of its own, which keeps every key as it is."""
    user_turn_summary: bool
    """Whether the format keeps a summary in a user turn (its ``--summary-as message``
    slot); a summary read from a user turn is written to other formats as an ordinary
    user message, so a conversion never gives it a system slot."""

    def detect(self, value: Any) -> int:
        """How sure it is that ``value`` (a parsed document or JSONL records) is this format.

        :data:`NO`, :data:`PLAUSIBLE` or :data:`CERTAIN`. The highest score wins; a tie
        of PLAUSIBLE scores goes to the first format in ``FORMATS`` order; two CERTAIN
        scores are an ambiguity error.
        """
        ...

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        """Build a :class:`Conversation`; raise :class:`~ctxmgr.errors.InputError`."""
        ...

    def container_keys(self, container: Any) -> dict[str, Any]:
        """The keys of a container (read by this format) outside its messages and its
        system prompt: request settings and dataset columns (``{}`` for a list)."""
        ...

    def write(self, conversation: Conversation) -> Any:
        """The JSON value (or list of JSONL records) for ``conversation``.

        Messages whose ``source_in(self.name)`` is set are written as those records,
        untouched; others (a summary, messages converted from another format) are
        rendered from the model. ``conversation.container`` is reused when it is in this
        format, so keys outside the message list survive; otherwise a fresh container.
        """
        ...
