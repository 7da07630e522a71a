"""The light half of LangChain serialized messages: detection, the outline reader, what the reader carries.

Nothing here imports pydantic or the model: detection runs before every command, and
``trim`` reads plain LangChain records through :func:`outline` alone. The full reader and
writer are in :mod:`ctxmgr.formats._langchain`; :func:`outline` accepts only what that
reader reads plainly, a property ``tests/formats/test_langchain_outline.py`` binds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxmgr import _nesting
from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO, Outline, call_text, first_record
from ctxmgr.formats._declaration import EACH, Declaration
from ctxmgr.state._tokens import texts_units

if TYPE_CHECKING:
    from ctxmgr.state.message import Role

__all__ = [
    "DECLARATION",
    "CALL_PARTS",
    "CARRIED",
    "CHAT_ROLES",
    "CLASSES",
    "ROLE_OF",
    "TYPES",
    "clue",
    "kind",
    "FLAT_TYPES",
    "is_flat",
    "messages_of",
    "outline",
    "thread_values",
    "score",
]

TYPES: dict[str, str] = {
    "human": "human",
    "ai": "ai",
    "system": "system",
    "tool": "tool",
    "chat": "chat",
    "function": "function",
    "developer": "system",
    "HumanMessageChunk": "human",
    "AIMessageChunk": "ai",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "ChatMessageChunk": "chat",
    "FunctionMessageChunk": "function",
}


CLASSES: dict[str, str] = {
    "HumanMessage": "human",
    "AIMessage": "ai",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "ChatMessage": "chat",
    "FunctionMessage": "function",
    "HumanMessageChunk": "human",
    "AIMessageChunk": "ai",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "ChatMessageChunk": "chat",
    "FunctionMessageChunk": "function",
}


ROLE_OF: dict[str, Role] = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}
"""The model role of each message type but ``chat``, whose record names its own role."""

CHAT_ROLES: dict[str, Role] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
}
"""The model role of a ``ChatMessage``'s ``role`` (any other is read as user, with a warning)."""

CALL_PARTS = frozenset({"tool_use", "tool_call", "function_call", "tool_call_chunk"})
"""Content parts that repeat what ``tool_calls`` already says: the reader makes no block of them."""


def kind(record: Any) -> tuple[str, dict[str, Any]] | None:
    """``(message type, data)`` of a LangChain record, or None if it is not one."""
    if not isinstance(record, dict):
        return None
    if record.get("lc") == 1 and record.get("type") == "constructor":
        ident, kwargs = record.get("id"), record.get("kwargs")
        cls = ident[-1] if isinstance(ident, list) and ident else None
        if isinstance(cls, str) and cls in CLASSES and isinstance(kwargs, dict):
            return CLASSES[cls], kwargs
        return None
    kind, data = record.get("type"), record.get("data")
    if isinstance(kind, str) and kind in TYPES and isinstance(data, dict) and "content" in data:
        return TYPES[kind], data
    if isinstance(kind, str) and kind in FLAT_TYPES and "data" not in record and "content" in record:
        return TYPES[kind], record  # a flat model_dump(): the record is its own data
    return None


FLAT_TYPES = frozenset({"human", "ai", "system", "tool", "chat", "function", *(t for t in TYPES if "Chunk" in t)})
"""The ``type`` of a flat ``model_dump()`` record (a ``developer`` type is the ``data``
form's alone: in a flat record it would be an OpenAI developer message's)."""


def is_flat(record: Any) -> bool:
    """Whether ``record`` is a flat ``model_dump()`` message (no ``data``, no ``lc``)."""
    return isinstance(record, dict) and "lc" not in record and "data" not in record and "content" in record


def thread_values(value: Any) -> dict[str, Any] | None:
    """The ``values`` of a LangGraph thread state (``{"values": {"messages": [...]}}``)."""
    if isinstance(value, dict) and "messages" not in value:
        values = value.get("values")
        if isinstance(values, dict) and isinstance(values.get("messages"), list):
            return values
    return None


def messages_of(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return list(value["messages"])
    values = thread_values(value)
    return None if values is None else list(values["messages"])


def score(value: Any) -> int:
    """How sure it is that ``value`` is this format: NO, PLAUSIBLE or CERTAIN."""
    try:
        records = messages_of(value)
        if not records:
            return NO
        return CERTAIN if all(kind(r) is not None for r in records[:8]) else NO
    except Exception:  # detection must never raise, whatever the input
        return NO


def clue(value: Any) -> int:
    """How strongly ``value`` points to LangChain when no format recognises it: a list
    whose first object has ``lc`` or ``data``."""
    first = first_record(value)
    return 3 if first is not None and ("lc" in first or "data" in first) else 0


DECLARATION = Declaration(
    name="langchain",
    roles=ROLE_OF,
    call_ids=(
        (("data", "kwargs"), "tool_calls", EACH, "id"),
        (("data", "kwargs"), "invalid_tool_calls", EACH, "id"),
        ("tool_calls", EACH, "id"),
        ("invalid_tool_calls", EACH, "id"),
    ),
    result_ids=((("data", "kwargs"), "tool_call_id"), ("tool_call_id",)),
    # A message's content (its "data", or a constructor's "kwargs"): a string, or parts
    # (strings, or objects with their text; a tool's output joins them).
    marker_texts=(
        (("data", "kwargs"), "content"),
        (("data", "kwargs"), "content", EACH),
        (("data", "kwargs"), "content", EACH, "text"),
        # A flat model_dump() record holds its content itself.
        ("content",),
        ("content", EACH),
        ("content", EACH, "text"),
    ),
)
"""Roles, ids and the fields that may carry the summary marker, for both readers."""


CARRIED = Carried(
    record=frozenset(
        {
            "type",
            "data",
            "lc",
            "id",
            "kwargs",
            "content",
            "additional_kwargs",
            "tool_calls",
            "tool_call_id",
            "name",
            "invalid_tool_calls",
            "example",
            "status",
            "artifact",
            "role",
        }
    ),
    part=frozenset(
        {
            "type",
            "text",
            "id",
            "name",
            "input",
            "image_url",
            "source_type",
            "url",
            "data",
            "mime_type",
            "base64",
            "file_id",
            "annotations",
            "citations",
            "thinking",
            "signature",
            "reasoning",
            "summary",
            "encrypted_content",
        }
    ),
    modelled_parts=frozenset(
        {
            "text",
            "thinking",
            "reasoning",
            "redacted_thinking",
            "image_url",
            "image",
            "audio",
            "video",
            "file",
            "tool_use",
            "tool_call",
            "function_call",
            "tool_call_chunk",
        }
    ),
    # LangChain keeps every provider's signed reasoning; only their own format takes it back.
    only_to={"signature": frozenset({"anthropic"}), "encrypted_content": frozenset({"openai-responses"})},
)
"""The message and part fields the reader maps into the model."""


# -- the outline reader (the trim fast path) ----------------------------------------------

# The record types and classes read plainly, by the role the reader gives them ("chat"
# for a ChatMessage, whose data names its role). A legacy FunctionMessage pairs by name
# through the reader's state: not here.
_PLAIN_KINDS: dict[str, str] = {**ROLE_OF, "chat": "chat"}
_PLAIN_TYPES: dict[object, str] = {t: _PLAIN_KINDS[k] for t, k in TYPES.items() if k != "function"}
_PLAIN_CLASSES: dict[object, str] = {c: _PLAIN_KINDS[k] for c, k in CLASSES.items() if k != "function"}

# A ChatMessage's role, where the reader takes it as it is; a "tool" one carries no
# result (an empty tool message to the rule check).
_PLAIN_CHAT_ROLES: dict[object, str] = {r: m for r, m in CHAT_ROLES.items() if m != "tool"}

# Part types the reader models (besides text and CALL_PARTS): reasoning, which stays in
# the message as a block (an assistant message of reasoning alone is an orphan to the
# rule check), and media, a block with no text.
_REASONING_PARTS = frozenset({"thinking", "reasoning", "redacted_thinking"})
_MEDIA_PARTS = frozenset({"image_url", "image", "audio", "video", "file"})

# What _parts finds in a content list (bits).
_TEXT_ONLY = 1  # every part is text (a string or a text part): a tool's output is their texts joined
_OTHER = 2  # a block that is not reasoning (text, media)
_REASONING = 4  # a reasoning block


def _parts(parts: list[Any]) -> int:
    """What a content list holds (:data:`_TEXT_ONLY`, :data:`_OTHER`, :data:`_REASONING`),
    or -1 when the reader would treat a part specially: one it rejects (not a string or an
    object), one it carries whole (an unknown type, a text part without a string). A
    summary marker is :data:`DECLARATION`'s to find. An unhashable ``type`` raises
    TypeError (the caller declines)."""
    found = _TEXT_ONLY
    for part in parts:
        if part.__class__ is str:
            found |= _OTHER
            continue
        if part.__class__ is not dict:
            return -1
        text = part.get("text")
        kind = part.get("type")
        if kind == "text":
            if text.__class__ is not str:
                return -1
            found |= _OTHER
        elif kind in CALL_PARTS:
            found &= ~_TEXT_ONLY
        elif kind in _REASONING_PARTS:
            found = (found | _REASONING) & ~_TEXT_ONLY
        elif kind in _MEDIA_PARTS:
            found = (found | _OTHER) & ~_TEXT_ONLY
        else:
            return -1
    return found


def _legacy_ids(calls: list[Any]) -> tuple[str, ...] | None:
    """Ids of OpenAI-shaped ``additional_kwargs.tool_calls``, or None if one has no id of
    its own (the reader makes one up) or no function name."""
    ids: list[str] = []
    for call in calls:
        if call.__class__ is not dict:
            return None
        call_id, function = call.get("id"), call.get("function")
        if call_id.__class__ is not str or not call_id or function.__class__ is not dict:
            return None
        if function.get("name").__class__ is not str:
            return None
        ids.append(call_id)
    return tuple(ids)


def _invalid_ids(calls: list[Any]) -> tuple[str, ...] | None:
    """Ids of ``invalid_tool_calls`` (the reader skips what is not an object), or None if
    one has no id of its own."""
    ids: list[str] = []
    for call in calls:
        if call.__class__ is dict:
            call_id = call.get("id")
            if call_id.__class__ is not str or not call_id:
                return None
            ids.append(call_id)
    return tuple(ids)


# The per-message checks stay inline: a helper call per message would cost the trim fast path.
def outline(value: Any) -> Outline | None:  # noqa: C901
    """Roles and call ids of a LangChain message list or ``{"messages": [...]}`` object,
    if every record is plainly well-formed (see :class:`~ctxmgr.formats._base.Outline`).

    Declines (``None``) whatever the full reader would treat specially or reject: a
    record that is not a LangChain message (or has keys beside its form's), a
    FunctionMessage, a ChatMessage of an unknown or tool role, a summary marker, an
    unknown or malformed content part, a tool call without an id of its own (the reader
    makes one up) or a legacy ``function_call``, a reasoning-only assistant message, an
    empty list, a container another format also claims.
    """
    records: Any = None
    if value.__class__ is list:
        records = value
    elif value.__class__ is dict and "context" not in value and "contents" not in value:
        # (native claims a "context" list, Gemini a "contents" one: detection would differ)
        records = value.get("messages")
    if records.__class__ is not list or not records:
        return None  # an empty list is no format's for sure: let detection decide
    count = len(records)
    no_ids: tuple[str, ...] = ()
    roles: list[str] = [""] * count
    calls: list[tuple[str, ...]] = [no_ids] * count
    results: list[tuple[str, ...]] = [no_ids] * count
    plain_type, plain_class, chat_role = _PLAIN_TYPES.get, _PLAIN_CLASSES.get, _PLAIN_CHAT_ROLES.get
    text_only, other, reasoning = _TEXT_ONLY, _OTHER, _REASONING
    marked = DECLARATION.marked
    # The loop runs once per message of every line of a dataset: kept lean on purpose
    # (local names, one type test per field, no append). A missing key raises KeyError,
    # an unhashable one TypeError.
    try:
        for index, record in enumerate(records):
            if record.__class__ is not dict or marked(record):
                return None  # not a message, or a summary / a marker the reader warns about
            # Exactly the keys of one of the two forms, so no other format's detection
            # sees a sign of its own in the record.
            size = len(record)
            if size == 2:
                kind = plain_type(record["type"])
                data = record["data"]
                if kind is None or data.__class__ is not dict:
                    return None
            elif size == 4 and record.get("lc") == 1 and record["type"] == "constructor":
                ident, data = record["id"], record["kwargs"]
                if ident.__class__ is not list or not ident or data.__class__ is not dict:
                    return None
                kind = plain_class(ident[-1])
                if kind is None:
                    return None
            else:
                return None
            content = data.get("content")
            if content.__class__ is str:
                found = text_only | other if content else text_only
            elif content.__class__ is list:
                found = _parts(content)
                if found < 0:
                    return None
            else:
                return None  # no content, or not a string or a list: the reader rejects it
            if kind == "assistant":
                made = no_ids
                tool_calls = data.get("tool_calls")
                if tool_calls:
                    if tool_calls.__class__ is not list:
                        return None
                    ids: list[str] = []
                    for call in tool_calls:
                        if call.__class__ is not dict or call.get("name").__class__ is not str:
                            return None
                        args = call.get("args")
                        call_id = call.get("id")
                        if (args is not None and args.__class__ is not dict) or call_id.__class__ is not str:
                            return None
                        if not call_id:
                            return None
                        ids.append(call_id)
                    made = calls[index] = tuple(ids)
                elif tool_calls is not None and tool_calls.__class__ is not list:
                    return None
                extra = data.get("additional_kwargs")
                if extra and extra.__class__ is dict:
                    if not made:
                        legacy = extra.get("tool_calls")
                        if legacy.__class__ is list:
                            found_ids = _legacy_ids(legacy)
                            if found_ids is None:
                                return None
                            made = calls[index] = found_ids
                        elif extra.get("function_call").__class__ is dict:
                            return None  # no id: the reader makes one up
                    item = extra.get("reasoning")
                    if item.__class__ is dict and item.get("type") == "reasoning":
                        found |= reasoning  # the reader puts it first in the message
                invalid = data.get("invalid_tool_calls")
                if invalid and invalid.__class__ is list:
                    more = _invalid_ids(invalid)
                    if more is None:
                        return None
                    made = calls[index] = made + more
                if found & reasoning and not found & other and not made:
                    return None  # reasoning alone: the rule check's orphan reasoning item
            elif kind == "tool":
                answered = data.get("tool_call_id")
                if answered.__class__ is not str or not answered:
                    return None
                results[index] = (answered,)
            elif kind == "chat":
                kind = chat_role(data.get("role"))
                if kind is None:
                    return None  # read as user with a warning, or a tool message without a result
                if found & reasoning and not found & other and kind == "assistant":
                    return None  # (a ChatMessage makes no calls)
            roles[index] = kind
    except (KeyError, TypeError):
        return None

    def rebuild(kept: list[int]) -> Any:
        if records is value:
            return [records[i] for i in kept]
        return {**value, "messages": [records[i] for i in kept]}

    counted_chars: list[int] = []

    def units() -> list[int]:
        # Counted once for both: the characters (a budget's report) of the same strings,
        # one a message (its text, then its calls'; units and characters add up over a join).
        texts: list[str] = []
        add = texts.append
        for record, made in zip(records, calls, strict=True):
            data = record["kwargs"] if len(record) == 4 else record["data"]
            content = data["content"]
            if content.__class__ is not str:
                content = _list_text(content, roles[len(texts)] == "tool")
            add(content + _calls_text(data) if made else content)
        counted_chars[:] = sizes = list(map(len, texts))
        return texts_units(texts, sizes)

    def chars(index: int) -> int:
        if not counted_chars:
            units()
        return counted_chars[index]

    return Outline(roles, calls, results, rebuild, units, chars)


def _list_text(content: list[Any], tool: bool) -> str:
    """What the token estimate counts of an accepted record's content list (its
    :func:`~ctxmgr.state._tokens.message_units`), as the reader's ``Message`` gives it:
    the text of its text blocks, or a tool message's output (its text parts joined by
    newlines, or the JSON of its parts). Its tool calls are :func:`_calls_text`'s."""
    if tool and _parts(content) & _TEXT_ONLY:
        return "\n".join([part if part.__class__ is str else part["text"] for part in content])
    if tool:
        return _nesting.dumps(content, default=str)
    return "".join([part if part.__class__ is str else part["text"] for part in content if _is_text(part)])


def _is_text(part: Any) -> bool:
    return part.__class__ is str or part.get("type") == "text"


def _calls_text(data: dict[str, Any]) -> str:
    """``str()`` of an accepted AI message's calls as the reader's ``tools_calls`` (what
    the token estimate counts of them): ``tool_calls`` (or, when there are none, the
    legacy ``additional_kwargs.tool_calls``), then ``invalid_tool_calls``, each
    ``{"id", "type": "function", "function": {"name", "arguments"}}``."""
    shaped: list[str] = []
    for call in data.get("tool_calls") or ():
        args = call.get("args")
        shaped.append(call_text(call["id"], call["name"], _nesting.dumps_arguments(args if args is not None else {})))
    extra = data.get("additional_kwargs")
    if not shaped and extra.__class__ is dict and extra.get("tool_calls").__class__ is list:
        for call in extra["tool_calls"]:
            function = call["function"]
            arguments = function.get("arguments")
            shaped.append(call_text(call["id"], function["name"], arguments if arguments.__class__ is str else "{}"))
    invalid = data.get("invalid_tool_calls")
    for call in invalid if invalid.__class__ is list else ():
        if call.__class__ is dict:
            name, raw = call.get("name"), call.get("args")
            name, raw = name if name.__class__ is str else "", raw if raw.__class__ is str else ""
            shaped.append(call_text(call["id"], name, raw))
    return f"[{', '.join(shaped)}]"
