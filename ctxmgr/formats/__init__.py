"""Conversation formats: detection, reading and writing, in one place.

Each format is a small adapter (see :class:`~ctxmgr.formats._base.FormatAdapter`);
:func:`load` turns bytes into a :class:`Conversation` and :func:`dump` turns it back into
bytes of the same shape (or of another format with ``to``: the container's request
settings and dataset columns follow, see :mod:`ctxmgr.formats._request`, and what the
target has no place for is counted in ``Conversation.dropped``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ctxmgr import _format_registry as format_registry, _io as io
from ctxmgr.errors import FormatDetectionError, InputError, UnknownFormatError, UsageError
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE, Conversation, FormatAdapter, Layout

__all__ = [
    "FORMATS",
    "Conversation",
    "FormatAdapter",
    "adapter",
    "closest_format",
    "detect",
    "detect_candidates",
    "detect_name",
    "dump",
    "load",
    "load_value",
]

# Every format is one entry of ctxmgr._format_registry. Adapters import pydantic and the
# model, so each is imported the first time it is asked for: detection and the trim fast
# path need none of them.


class _Adapters(Mapping[str, FormatAdapter]):
    """The adapters by name, each built on first lookup."""

    def __init__(self) -> None:
        self._built: dict[str, FormatAdapter] = {}

    def __getitem__(self, name: str) -> FormatAdapter:
        built = self._built.get(name)
        if built is None:
            built = self._built[name] = format_registry.entry(name).adapter_class()()
        return built

    def __iter__(self) -> Iterator[str]:
        return iter(format_registry.NAMES)

    def __len__(self) -> int:
        return len(format_registry.NAMES)


def __getattr__(name: str) -> Any:
    # The adapter classes (NativeFormat, OpenAIChatFormat...) stay importable from here,
    # each loaded on first use.
    for entry in format_registry.ENTRIES:
        if entry.adapter.rpartition(":")[2] == name:
            return entry.adapter_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


FORMATS: Mapping[str, FormatAdapter] = _Adapters()
"""Every known format by its command-line name, in detection order."""


def adapter(name: str) -> FormatAdapter:
    """The adapter called ``name``; a :class:`UsageError` lists the known names."""
    if name not in format_registry.NAMES:
        raise UsageError(f"unknown format {name!r}; choose from: {', '.join(format_registry.NAMES)}")
    return FORMATS[name]


def detect_name(value: Any, *, source: str) -> str:
    """The name of the one format that recognises ``value``; an input error names those tried.

    The highest score wins; a tie of PLAUSIBLE scores goes to the first format in
    ``FORMATS`` order (:func:`detect_candidates` lists the others); two CERTAIN scores are
    an ambiguity error.
    """
    return detect_candidates(value, source=source)[0]


def detect_candidates(value: Any, *, source: str) -> list[str]:
    """The formats that read ``value`` equally well, the one detection picks first.

    More than one only for a tie of PLAUSIBLE scores: a text-only message list is valid
    OpenAI chat and Anthropic alike, and nothing in it tells which was meant.
    """
    scores = [(entry.score(value), entry.name) for entry in format_registry.ENTRIES]
    best = max(score for score, _ in scores)
    matches = [name for score, name in scores if score == best]
    if best == PLAUSIBLE or (best == CERTAIN and len(matches) == 1):
        return matches
    tried = ", ".join(format_registry.NAMES)
    if best == NO:
        raise UnknownFormatError(
            f"not a conversation in any known format (tried: {tried}); use --from to name one",
            source=source,
        )
    raise FormatDetectionError(
        f"ambiguous format (could be: {', '.join(matches)}); use --from to choose", source=source
    )


def detect(value: Any, *, source: str) -> FormatAdapter:
    """The adapter of the one format that recognises ``value`` (see :func:`detect_name`)."""
    return FORMATS[detect_name(value, source=source)]


def load_value(
    value: Any,
    *,
    source: str,
    layout: Layout,
    fmt: str | None = None,
    whole_file: bool = False,
    prefer: str | None = None,
) -> Conversation:
    """A parsed JSON value (or JSONL records) as a :class:`Conversation`.

    ``whole_file``: ``value`` is a whole file (not a dataset line); read under a named
    ``fmt``, it must mean something in that format (see :mod:`ctxmgr.formats._meaning`),
    else an :class:`~ctxmgr.errors.InputError` names the file and what it looks like.
    ``prefer``: the format a tie of formats is read as (a dataset's lines share the format
    its other lines settled); detection still decides a value it does not read as.
    """
    # Detected once: the candidates give the reader and the other formats the value reads as.
    candidates = [fmt] if fmt else _detect_or_explain(value, source=source, layout=layout)
    if prefer is not None and len(candidates) > 1 and prefer in candidates:
        candidates = [prefer, *(c for c in candidates if c != prefer)]
    try:
        conversation = adapter(candidates[0]).read(value, source=source, layout=layout)
    except InputError as error:
        if fmt or isinstance(error, FormatDetectionError):
            raise
        # Detected, then broken: the error says what the file was taken for.
        raise type(error)(
            f"looks like {a_file(candidates[0])}: {error.message}",
            source=error.source,
            line=error.line,
            column=error.column,
        ) from None
    if fmt and whole_file:
        _require_meaning(conversation, value, source=source)
    if fmt is None:
        # Valid in several formats: a summary must then be written where all of them take it.
        conversation.also_reads_as = tuple(candidates[1:])
    _settle_defaults(conversation)
    return conversation


def _detect_or_explain(value: Any, *, source: str, layout: Layout) -> list[str]:
    """:func:`detect_candidates`; when nothing matches, the error of the closest format's reader.

    "Not a conversation in any known format" says nothing about what is wrong. When the
    shape names a format (a ``messages`` list, ``contents``, ``input``...), reading it as
    that format finds the broken field, which the error then names, with its path.
    """
    try:
        return detect_candidates(value, source=source)
    except UnknownFormatError as unknown:
        guess = closest_format(value)
        if guess is None:
            raise
        try:
            FORMATS[guess].read(value, source=source, layout=layout)
        except InputError as error:
            # A broken conversation of that format, not something else altogether: no
            # longer "unknown" (a folder walk skips only what no format comes close to).
            raise FormatDetectionError(
                f"looks like {a_file(guess)}: {error.message} (use --from to name another format)",
                source=error.source or source,
                line=error.line,
                column=error.column,
            ) from None
        raise unknown from None


def _require_meaning(conversation: Conversation, value: Any, *, source: str) -> None:
    """Raise when ``conversation``, read under a named format, means nothing in it."""
    from ctxmgr.formats._meaning import unread_records

    found = unread_records(conversation)
    if found is None:
        return
    unread, read = found
    fmt = conversation.format
    total = len(conversation.state.context)
    try:
        detected = detect_candidates(value, source=source)
    except FormatDetectionError:
        detected = []
    if unread == 0 and fmt in detected:
        return  # empty messages of the very format detection finds: an empty conversation, not a wrong --from
    # What the file is, if not what was named: detected, or the shape's closest format.
    guess = None if fmt in detected else detected[0] if detected else closest_format(value)
    if guess is not None and guess != fmt:
        hint = f"it looks like {a_file(guess)} (leave --from out, or use --from {guess})"
    else:
        hint = "name its format with --from, or leave --from out to detect it"
    messages = f"{total} message{'s' if total != 1 else ''}"
    what = (
        f"none of its {messages} holds text or tool calls"
        if read == 0
        else f"{unread} of its {messages} hold only what {fmt} has no reading for"
    )
    raise FormatDetectionError(f"reads as nothing meaningful as {fmt}: {what}; {hint}", source=source)


def a_file(name: str) -> str:
    """``"a gemini file"``, ``"an openai-chat file"``: a format named in a sentence."""
    return f"{'an' if name[:1] in 'aeio' else 'a'} {name} file"


def closest_format(value: Any) -> str | None:
    """The format ``value``'s shape points to, whatever its details (``None``: no clue).

    Each format's entry rates the shape (its ``clue``); the strongest wins, the first in
    registry order on a tie.
    """
    strengths = {entry.name: entry.clue_strength(value) for entry in format_registry.ENTRIES}
    best = max(strengths, key=strengths.__getitem__)  # max keeps the first of equals
    return best if strengths[best] > 0 else None


def _settle_defaults(conversation: Conversation) -> None:
    """Give messages the file did not identify or date a stable id and time.

    The model's defaults are a random uuid and "now"; converting the same file twice
    must give the same output, so such messages get ``<format>-<n>`` and timestamp 0.0
    (unknown) instead. Messages read from native files keep what they had.
    """
    for index, message in enumerate(conversation.state.context, start=1):
        fields = message.model_fields_set
        if "message_id" not in fields:
            message.message_id = f"{conversation.format}-{index:04d}"
        if "timestamp" not in fields:
            message.timestamp = 0.0


def load(data: bytes, *, source: str, fmt: str | None = None, whole_file: bool = False) -> Conversation:
    """Parse and read ``data``; raises :class:`~ctxmgr.errors.InputError` on bad input
    (``whole_file``: see :func:`load_value`)."""
    value, layout, pretty = io.parse(data, source)
    conversation = load_value(value, source=source, layout=layout, fmt=fmt, whole_file=whole_file)
    conversation.pretty = pretty
    return conversation


def dump(conversation: Conversation, *, to: str | None = None) -> bytes:
    """Bytes of ``conversation`` in its own format and layout (or in format ``to``).

    Converting, the container's other keys follow (request settings in the target's
    spelling, dataset columns as they are: see :mod:`ctxmgr.formats._request`), and what
    the target has no place for is counted in ``conversation.dropped``, by kind. A
    session log (a registry entry's ``session_log``) is never written from another
    format: a :class:`~ctxmgr.errors.UsageError` says so.
    """
    writer = adapter(to) if to else adapter(conversation.format)
    try:
        format_registry.refuse_conversion(conversation.format, writer.name)
    except ValueError as refused:
        raise UsageError(str(refused)) from None
    conversation.dropped.clear()  # what this write loses, not what an earlier one did
    if conversation.summary_from_user_turn and conversation.state.context_summary and not writer.user_turn_summary:
        value = writer.write(_summary_as_user_message(conversation, writer.name))
    else:
        value = writer.write(conversation)
    if writer.name != conversation.format:
        from ctxmgr.formats._request import carried_keys, merge_into
        from ctxmgr.formats._uncarried import count_uncarried

        value = merge_into(carried_keys(conversation, writer.name), value, list_key=writer.list_key)
        count_uncarried(conversation.state.context, writer.name, conversation.dropped)
    layout = conversation.layout
    if layout == "jsonl" and not isinstance(value, list):
        layout = "document"  # a container (ShareGPT's) is one record: a line of its own, not one per key
    return io.dumps(value, layout, pretty=conversation.pretty)


def _summary_as_user_message(conversation: Conversation, target: str) -> Conversation:
    """``conversation`` with its summary as an ordinary user message after the system ones.

    A summary read from a user turn (Anthropic's or Gemini's message slot) has a user
    turn's authority; ``target`` keeps summaries in system messages, so writing it there
    as a summary would promote text a file could forge. It is written as the user
    message it was, and a warning says so.
    """
    import dataclasses

    from ctxmgr.formats._interop import summary_text
    from ctxmgr.state.message import Message

    state = conversation.state
    context = list(state.context)
    at = next((i for i, m in enumerate(context) if m.role != "system"), len(context))
    message = Message.text_message(summary_text(state.context_summary or ""), role="user", message_id="ctxmgr-summary")
    message.timestamp = 0.0
    context.insert(at, message)
    conversation.warnings.append(
        f"{target}: the summary read from a user turn of the {conversation.format} file is written as an "
        f"ordinary user message ({target} keeps summaries in system messages)"
    )
    # The copy shares the warnings list, so what the writer notes reaches the caller.
    return dataclasses.replace(
        conversation, state=state.model_copy(update={"context": context, "context_summary": None})
    )
