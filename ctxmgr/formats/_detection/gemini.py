"""The light half of Gemini ``generateContent`` conversations: detection, the outline reader,
what the reader carries.

Nothing here imports pydantic or the model: ``trim`` reads plain Gemini conversations
through :func:`outline` alone. The full reader and writer are in
:mod:`ctxmgr.formats._gemini`; :func:`outline` accepts only what that reader reads
plainly, a property ``tests/formats/test_gemini_outline.py`` binds.
"""

from __future__ import annotations

from typing import Any

from ctxmgr import _nesting
from ctxmgr._format_registry import Carried
from ctxmgr._nesting import dumps_arguments
from ctxmgr.formats._base import CERTAIN, NO, Outline, call_text, first_record
from ctxmgr.formats._declaration import EACH, Declaration, Path
from ctxmgr.state._tokens import texts_units

__all__ = [
    "CARRIED",
    "DECLARATION",
    "ROLES",
    "ROLE_OF",
    "SYSTEM_PATHS",
    "clue",
    "is_content",
    "outline",
    "score",
    "system_path",
]

ROLE_OF = {"user": "user", "model": "assistant", "function": "tool", "tool": "tool"}
"""Each role a content may have, and the model role it reads as (a user content holding
function responses reads as ``tool``)."""

ROLES = tuple(ROLE_OF)

SYSTEM_PATHS = (
    ("systemInstruction",),
    ("system_instruction",),
    ("config", "system_instruction"),
    ("config", "systemInstruction"),
)
"""Where a request keeps its system instruction (REST, the Python SDK, the SDK's ``config``),
in the order the reader looks."""


def system_path(value: dict[str, Any]) -> tuple[str, ...] | None:
    """The first of :data:`SYSTEM_PATHS` that holds a value (not ``null``) in ``value``."""
    for path in SYSTEM_PATHS:
        node: Any = value
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            return path
    return None


def is_content(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and isinstance(record.get("parts"), list)
        and record.get("role", "user") in ROLES
        and "content" not in record
    )


def score(value: Any) -> int:
    """How sure it is that ``value`` is this format: NO, PLAUSIBLE or CERTAIN."""
    try:
        if isinstance(value, dict):
            contents = value.get("contents")
            if not isinstance(contents, list):
                return NO
            return CERTAIN if all(is_content(r) for r in contents[:8]) else NO
        if isinstance(value, list) and value:
            return CERTAIN if all(is_content(r) for r in value[:8]) else NO
    except Exception:  # detection must never raise, whatever the input
        return NO
    return NO


def clue(value: Any) -> int:
    """How strongly ``value`` points to Gemini when no format recognises it: a
    ``contents`` key, or a list whose first object has ``parts`` (the strongest list clue)."""
    if isinstance(value, dict):
        return 3 if "contents" in value else 0
    first = first_record(value)
    return 4 if first is not None and "parts" in first else 0


CARRIED = Carried(
    record=frozenset({"role", "parts"}),
    part=frozenset(
        {
            "text",
            "functionCall",
            "function_call",
            "functionResponse",
            "function_response",
            "thought",
            "thoughtSignature",
            "thought_signature",
            "inlineData",
            "inline_data",
            "fileData",
            "file_data",
        }
    ),
    modelled_parts=frozenset(
        {
            "text",
            "functionCall",
            "function_call",
            "functionResponse",
            "function_response",
            "inlineData",
            "inline_data",
            "fileData",
            "file_data",
        }
    ),
    parts_by_key=True,
    only_to={"thoughtSignature": frozenset({"langchain"}), "thought_signature": frozenset({"langchain"})},
)
"""The content and part fields the reader maps into the model."""


# -- the outline reader (the trim fast path) ----------------------------------------------
#
# Each content is one model message (roles: model -> assistant; a content carrying
# functionResponse parts, or of role function/tool -> tool; else user), and a system
# instruction one system message before them. Kept contents are written back as they were
# read, the system instruction in its place, so rebuilding is slicing ``contents``.


_RESPONSE: Path = ("parts", EACH, ("functionResponse", "function_response"), "response")

DECLARATION = Declaration(
    name="gemini",
    roles=ROLE_OF,
    call_ids=(("parts", EACH, ("functionCall", "function_call"), "id"),),
    result_ids=(("parts", EACH, ("functionResponse", "function_response"), "id"),),
    # Text parts, and a function response's output: its lone "output" or "error" value
    # (a string, or an object's values), else the response object's values; the text
    # parts a function response carries beside it.
    marker_texts=(
        ("parts", EACH, "text"),
        (*_RESPONSE, EACH),
        (*_RESPONSE, EACH, EACH),
        ("parts", EACH, ("functionResponse", "function_response"), "parts", EACH, "text"),
    ),
    # The system instruction: a string, or parts (strings or objects) alone or in an object.
    container_texts=tuple(
        (*path, *tail) for path in SYSTEM_PATHS for tail in ((), (EACH,), (EACH, "text"), ("parts", EACH, "text"))
    ),
)
"""Roles, ids and the fields that may carry the summary marker, for both readers."""

# Keys that make another format claim a container (an Anthropic or LangChain "messages"
# list, a native "context", the "role" of a bare chat message): the fast path does not
# detect a dataset's later lines, so what it takes must be Gemini's alone.
_FOREIGN_CONTAINER_KEYS = frozenset({"messages", "context", "role"})

_ABSENT: Any = object()


# The per-part checks stay inline: a helper call per part would cost the trim fast path.
def outline(value: Any) -> Outline | None:  # noqa: C901
    """Roles and call ids of a ``{"contents": [...]}`` request (its system instruction the
    first message) or a bare list of contents, if it is plainly well-formed Gemini (see
    :class:`~ctxmgr.formats._base.Outline`).

    Declines (``None``) whatever the full reader would treat specially or reject: a
    malformed field, a summary (or text that looks like one), a function call outside a
    model content or a response inside one, a tool content without a response, a model
    content of thoughts alone, media inside a function response, keys other than
    ``role`` and ``parts`` on a content, an id-less call or response whose id the full
    reader could not mint plainly (see :func:`_paired`).
    """
    system: Any = _ABSENT
    if value.__class__ is dict:
        found = value.get("contents")
        if found.__class__ is not list or not _FOREIGN_CONTAINER_KEYS.isdisjoint(value):
            return None
        path = system_path(value)
        if path is not None:
            system = value[path[0]] if len(path) == 1 else value[path[0]][path[1]]
            if not _plain_system(system) or DECLARATION.container_marked(value):
                return None
    elif value.__class__ is list and value:
        found = value
    else:
        return None
    contents: list[Any] = found
    bare = contents is value
    roles: list[str] = []
    calls: list[tuple[str, ...]] = []
    results: list[tuple[str, ...]] = []
    if system is not _ABSENT:
        roles.append("system")
        calls.append(())
        results.append(())
    add_role, add_calls, add_results = roles.append, calls.append, results.append
    no_ids: tuple[str, ...] = ()
    role_of = DECLARATION.roles.get
    marked = DECLARATION.marked
    paired = True  # every call and response names its id (else _paired mints them)
    # The loop runs once per content of every line of a dataset: kept lean on purpose
    # (local names, one type test per field). An unhashable role raises TypeError.
    try:
        for record in contents:
            if record.__class__ is not dict or marked(record):
                return None  # not a content, or a summary to lift or a forged one to warn about
            parts = record.get("parts")
            if parts.__class__ is not list:
                return None
            size = len(record)
            mapped = role_of(record.get("role") if size == 2 else "user" if size == 1 else None)
            if mapped is None or (bare and mapped == "tool"):
                return None  # (a list with a function/tool role is chat's too: detection's call)
            made: list[Any] | None = None
            answered: list[Any] | None = None
            thoughts = 0
            for part in parts:
                if part.__class__ is not dict:
                    return None
                text = part.get("text")
                if text.__class__ is str and len(part) == 1:
                    continue  # plain text: the common part
                # The reader's order: a call, a response, then text, media, anything else.
                call = part["functionCall"] if "functionCall" in part else part.get("function_call")
                if call is not None:
                    if mapped != "assistant" or call.__class__ is not dict or call.get("name").__class__ is not str:
                        return None
                    args = call.get("args")
                    call_id = call.get("id")
                    if (args is not None and args.__class__ is not dict) or (
                        call_id is not None and call_id.__class__ is not str
                    ):
                        return None
                    paired = paired and bool(call_id)
                    if made is None:
                        made = [call_id]
                    else:
                        made.append(call_id)
                    continue
                response = part["functionResponse"] if "functionResponse" in part else part.get("function_response")
                if response is not None:
                    if mapped == "assistant" or _odd_response(response):
                        return None
                    call_id = response.get("id")
                    paired = paired and bool(call_id)
                    if answered is None:
                        answered = [call_id]
                    else:
                        answered.append(call_id)
                elif "text" in part:
                    if text.__class__ is not str:
                        return None
                    if part.get("thought") is True:
                        thoughts += 1
                # else media, or a part the model passes through: neither counts as text
            if answered is not None:
                mapped = "tool"
            elif mapped == "tool":
                return None  # a tool message without a result: the rule check words it
            elif thoughts and thoughts == len(parts) and made is None and mapped == "assistant":
                return None  # thoughts alone: the rule check reports orphan reasoning
            add_role(mapped)
            add_calls(tuple(made) if made is not None else no_ids)
            add_results(tuple(answered) if answered is not None else no_ids)
    except TypeError:
        return None
    offset = len(roles) - len(contents)  # 1 with a system instruction
    if not paired:
        minted = _paired(contents)
        if minted is None:
            return None
        calls[offset:], results[offset:] = minted

    def rebuild(kept: list[int]) -> Any:
        # A trim keeps every system message, so the system instruction stays in its place.
        records = [contents[i - offset] for i in kept if i >= offset]
        return records if bare else {**value, "contents": records}

    counted_chars: list[int] = []

    def units() -> list[int]:
        # Counted once for both: the characters (a budget's report) of the same strings,
        # one a message (units and characters add up over a join). One loop, the usual
        # one-part contents (a text, a call, a response) read inline.
        texts: list[str] = [_system_text(system)] if offset else []
        add = texts.append
        for record, made in zip(contents, calls[offset:] if offset else calls, strict=True):
            parts = record["parts"]
            part = parts[0] if len(parts) == 1 else None
            if part is not None and len(part) == 1:
                text = part.get("text")
                if text.__class__ is not str:
                    call = part.get("functionCall")
                    if call is not None:
                        args = call.get("args")
                        text = f"[{call_text(made[0], call['name'], dumps_arguments({} if args is None else args))}]"
                    else:
                        body = part.get("functionResponse")
                        if body is None:
                            text = _content_text(record, made)
                        else:
                            text = _output(body.get("response"))
                            if text.__class__ is not str:
                                text = _nesting.dumps(text, default=str)
            else:
                text = _content_text(record, made)
            add(text)
        counted_chars[:] = sizes = list(map(len, texts))
        return texts_units(texts, sizes)

    def chars(index: int) -> int:
        if not counted_chars:
            units()
        return counted_chars[index]

    return Outline(roles, calls, results, rebuild, units, chars)


def _plain_system(system: Any) -> bool:
    """A system instruction the reader takes as one system message: a string, a list of
    parts or an object with one (a summary it lifts out is :data:`DECLARATION`'s to find)."""
    if system.__class__ is str:
        return True
    parts = system.get("parts") if system.__class__ is dict else system
    if parts.__class__ is not list:
        return False
    return all(part.__class__ is str or part.__class__ is dict for part in parts)


def _odd_response(response: Any) -> bool:
    """Whether a ``functionResponse`` is malformed or carries parts of its own (media the
    reader reads as blocks inside the result)."""
    if response.__class__ is not dict or response.get("name").__class__ is not str:
        return True
    call_id = response.get("id")
    if call_id is not None and call_id.__class__ is not str:
        return True
    nested = response.get("parts")
    return nested.__class__ is list and bool(nested)


def _output(body: Any) -> Any:
    """The tool output the reader takes from a function response's ``response``: ``""`` for
    none, the value of a lone ``output`` or ``error`` key, else the whole object."""
    if body is None:
        return ""
    if body.__class__ is dict and len(body) == 1 and ("output" in body or "error" in body):
        return body["error"] if "error" in body else body["output"]
    return body


def _part_of(part: dict[str, Any], camel: str, snake: str) -> Any:
    """``part[camel]``, or its snake_case spelling when the camelCase key is absent (the reader's rule)."""
    return part[camel] if camel in part else part.get(snake)


def _paired(contents: list[Any]) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]] | None:
    """The call ids of accepted ``contents`` where some call or response has none, as the
    full reader's pairer gives them: a call without an id gets ``gemini_<name>_<n>`` (its
    n-th of that name), a response without one the id of the call of its name in the same
    position; ``None`` (decline) for a name the pairer would rewrite with a hash (not
    ``[A-Za-z0-9_-]``), or a response with no call left (an orphan: the check reports it)."""
    calls: list[tuple[str, ...]] = []
    results: list[tuple[str, ...]] = []
    by_name: dict[str, list[str]] = {}
    answered: dict[str, int] = {}
    minted: dict[str, int] = {}
    for record in contents:
        made: list[str] = []
        found: list[str] = []
        for part in record["parts"]:
            call = _part_of(part, "functionCall", "function_call")
            if call is not None:
                name, call_id = call["name"], call.get("id")
                if not call_id:
                    if not _safe(name):
                        return None
                    number = minted.get(name, 0)
                    minted[name] = number + 1
                    call_id = f"gemini_{name}_{number}" if name else f"gemini_{number}"
                by_name.setdefault(name, []).append(call_id)
                made.append(call_id)
                continue
            response = _part_of(part, "functionResponse", "function_response")
            if response is not None:
                name, call_id = response["name"], response.get("id")
                index = answered.get(name, 0)
                answered[name] = index + 1
                if not call_id:
                    known = by_name.get(name, [])
                    if index >= len(known):
                        return None
                    call_id = known[index]
                found.append(call_id)
        calls.append(tuple(made))
        results.append(tuple(found))
    return calls, results


def _safe(name: str) -> bool:
    """Whether ``name`` is all ``[A-Za-z0-9_-]`` (then the pairer's minted id is used as it is)."""
    rest = name.replace("_", "").replace("-", "")
    return not rest or (rest.isascii() and rest.isalnum())


def _system_text(system: Any) -> str:
    """What the token estimate counts of an accepted system instruction: its text."""
    if system.__class__ is str:
        return system
    parts = system["parts"] if system.__class__ is dict else system
    texts = [part if part.__class__ is str else part.get("text") for part in parts]
    return "".join([text for text in texts if text.__class__ is str])


def _content_text(record: dict[str, Any], made: tuple[str, ...]) -> str:
    """What the token estimate counts of an accepted content (see ``Message.text`` and
    :func:`~ctxmgr.state._tokens.message_units`), in one string: its text parts (not
    thoughts), its responses' outputs (a string as is, else as JSON), and the repr of its
    calls in the reader's OpenAI shape, with ``made`` their ids."""
    parts = record["parts"]
    if len(parts) == 1 and len(parts[0]) == 1:  # the usual messages: one text, one call or one response
        part = parts[0]
        text: Any = part.get("text")
        if text.__class__ is str:
            return str(text)
        call = part.get("functionCall")
        if call is not None:  # (the loop's text, without its lists)
            args = call.get("args")
            return f"[{call_text(made[0], call['name'], _nesting.dumps_arguments({} if args is None else args))}]"
    pieces: list[str] = []
    calls: list[str] = []
    for part in parts:
        # _part_of, inline: it runs for every part of every message
        call = part["functionCall"] if "functionCall" in part else part.get("function_call")
        if call is not None:
            args = call.get("args")
            calls.append(
                call_text(made[len(calls)], call["name"], _nesting.dumps_arguments({} if args is None else args))
            )
            continue
        response = part["functionResponse"] if "functionResponse" in part else part.get("function_response")
        if response is not None:
            output = _output(response.get("response"))
            pieces.append(output if output.__class__ is str else _nesting.dumps(output, default=str))
            continue
        text = part.get("text")
        if text.__class__ is str and part.get("thought") is not True:
            pieces.append(text)
    if calls:
        pieces.append(f"[{', '.join(calls)}]")
    return "".join(pieces)
