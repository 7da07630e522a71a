"""The light half of the reference's AgentState JSON (native): detection and the outline reader.

Nothing here imports pydantic or the model. The full reader and writer are in
:mod:`ctxmgr.formats._native`; :func:`outline` accepts a subset of what that reader
validates, a property ``tests/formats/test_native_outline.py`` binds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxmgr import _nesting
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE, Outline
from ctxmgr.formats._declaration import EACH, Declaration, of_type
from ctxmgr.state._tokens import text_units

__all__ = [
    "DECLARATION",
    "FOREIGN_PART_TYPES",
    "MESSAGE_KEYS",
    "NATIVE_SIGNS",
    "SUMMARY_MARKER",
    "clue",
    "known_block",
    "lacks_only_role",
    "looks_like_native_message",
    "outline",
    "score",
]

SUMMARY_MARKER = "ctxmgr_summary"
"""``metadata`` key marking the system message that carries a summary in list containers."""

MESSAGE_KEYS = frozenset({"role", "content"})

DECLARATION = Declaration(
    name="native",
    roles={"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"},
    call_ids=(("tools_calls", EACH, "id"),),
    result_ids=(("content", EACH, of_type("tool_result"), "call_id"),),
    # A summary is a system message flagged in its metadata, or (in a list that other
    # formats read too) one holding a single text block that starts with the header.
    marker_texts=(("content", EACH, "text"),),
    marker_names=((("metadata", SUMMARY_MARKER), True),),
)
"""Roles, ids and the fields that may carry the summary marker, for both readers."""


# Keys only the reference's messages have: they make a list of messages certainly native.
NATIVE_SIGNS = frozenset({"message_id", "tools_calls", "delta", "parsed_content", "usages"})


def looks_like_native_message(record: Any) -> bool:
    """A dict with a ``role`` and a list ``content`` (the reference rejects strings).

    Other formats share this outline (OpenAI content parts are lists too); detection in
    ``ctxmgr.formats`` weighs the finer signs (``message_id``, ``tools_calls``, block types).
    """
    return (
        isinstance(record, dict)
        and record.keys() >= MESSAGE_KEYS
        and isinstance(record["content"], list)
        and all(known_block(block) for block in record["content"])
    )


# Content part types of other formats' messages. Seeing one means the file is not the
# reference's: leave it to that format's adapter. (A type nobody knows stays native, so
# the user hears "unknown content block type".)
FOREIGN_PART_TYPES = frozenset(
    {
        "image_url",
        "input_audio",
        "file",
        "refusal",  # OpenAI chat
        "input_text",
        "output_text",
        "input_image",
        "input_file",  # OpenAI Responses
        "tool_use",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",  # Anthropic
    }
)


def known_block(block: Any) -> bool:
    return not isinstance(block, dict) or block.get("type") not in FOREIGN_PART_TYPES


def lacks_only_role(record: dict[str, Any]) -> bool:
    # A message with block-list content but no role is no other format's either: read it
    # as native so the error says that the role is missing.
    return "role" not in record and isinstance(record.get("content"), list)


def score(value: Any) -> int:
    """How sure it is that ``value`` is this format: NO, PLAUSIBLE or CERTAIN."""
    if isinstance(value, dict):
        if isinstance(value.get("context"), list):
            return CERTAIN
        if "context" in value and "$schemaVersion" not in value:
            # A broken AgentState: reading it says what is wrong. An Agents SDK RunState
            # has a 'context' object too; its '$schemaVersion' says it is not native.
            return PLAUSIBLE
        return PLAUSIBLE if looks_like_native_message(value) else NO
    if isinstance(value, list):
        if not value:
            return PLAUSIBLE  # an empty conversation; any other format's claim wins
        head = value[:8]
        if not all(isinstance(r, dict) for r in head):
            return NO
        if any(NATIVE_SIGNS & r.keys() for r in head):
            # Keys only the reference writes: claim the file even when a message is
            # broken, so the user gets that message's validation error, not "unknown
            # format".
            return CERTAIN
        if all(looks_like_native_message(r) or lacks_only_role(r) for r in head):
            return PLAUSIBLE
    return NO


def clue(value: Any) -> int:
    """How strongly ``value`` points to native when no format recognises it: a
    ``context`` key (the weakest of the container clues)."""
    return 1 if isinstance(value, dict) and "context" in value else 0


# -- native (the reference's AgentState JSON) ---------------------------------------------
#
# The full reader validates in pydantic's strict mode; what is accepted here is a subset
# of what that accepts (exact JSON types, text and tool-result blocks only), so a record
# taken here would be read the same. Extra keys are allowed, as the model allows them.

_STATUSES = frozenset({"running", "interrupted_before", "interrupted_after", "completed", "error"})
_STOPS = frozenset({"none", "stop_requested", "stopped"})
_RESULT_STATUSES = frozenset({None, "completed", "failed"})
_USAGE_COUNTS = ("completion_tokens", "prompt_tokens", "total_tokens")
_USAGE_OPTIONAL = ("reasoning_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
_USAGE_NULLABLE = ("image_tokens", "audio_tokens")
_ABSENT: Any = object()


def _is_int(value: Any) -> bool:
    return value.__class__ is int


def _plain_usages(usages: Any) -> bool:
    if usages is None:
        return True
    if usages.__class__ is not dict:
        return False
    get = usages.get
    return (
        all(_is_int(get(key)) for key in _USAGE_COUNTS)
        and all(_is_int(get(key, 0)) for key in _USAGE_OPTIONAL)
        and all(get(key) is None or _is_int(get(key)) for key in _USAGE_NULLABLE)
    )


def _str_list(value: Any) -> bool:
    return value.__class__ is list and all(item.__class__ is str for item in value)


def _plain_execution_meta(meta: Any) -> bool:
    if meta is _ABSENT:
        return True
    if meta.__class__ is not dict:
        return False
    get = meta.get
    node = get("interrupted_node")
    return (
        get("current_node", "").__class__ is str
        and _is_int(get("step", 0))
        and get("status", "running") in _STATUSES
        and (node is None or node.__class__ is str or _str_list(node))
        and all(get(key) is None or get(key).__class__ is str for key in ("interrupt_reason", "thread_id"))
        and (get("interrupt_data") is None or get("interrupt_data").__class__ is dict)
        and get("stop_current_execution", "none") in _STOPS
        and get("internal_data", {}).__class__ is dict
    )


def _native_message(message: Any) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """``(role, call ids, result ids)`` of a plainly valid native message, else ``None``."""
    if message.__class__ is not dict:
        return None
    get = message.get
    role = DECLARATION.roles.get(get("role"))
    content = get("content")
    if role is None or content.__class__ is not list or DECLARATION.marked(message):
        return None
    blocks = _plain_blocks(content)
    if blocks is None or (role == "tool" and not blocks[0]):
        return None  # an empty tool message: the rule check words it
    if not (_plain_stamps(get) and _plain_extras(get)):
        return None
    calls = _call_ids(get("tools_calls"))
    return None if calls is None else (role, calls, blocks[1])


def _plain_blocks(content: list[Any]) -> tuple[bool, tuple[str, ...]] | None:
    """``(has a tool result, the ids it answers)`` if every block is a plain text or tool
    result, else ``None``."""
    results: list[str] = []
    has_result = False
    for block in content:
        if block.__class__ is not dict:
            return None
        kind = block.get("type")
        if kind == "text":
            if block.get("text").__class__ is not str or block.get("annotations", []).__class__ is not list:
                return None
        elif kind == "tool_result":
            call_id = block.get("call_id")
            if (
                call_id.__class__ is not str
                or block.get("is_error", False).__class__ is not bool
                or block.get("status") not in _RESULT_STATUSES
            ):
                return None
            has_result = True
            if call_id:
                results.append(call_id)
        else:
            return None  # other blocks (media, tool calls, reasoning...): the full reader
    return has_result, tuple(results)


def _plain_stamps(get: Any) -> bool:
    """The id, delta flag and time, of exact JSON types."""
    identifier = get("message_id", "")
    timestamp = get("timestamp", 0)
    return (
        (identifier.__class__ is str or _is_int(identifier))
        and get("delta", False).__class__ is bool
        and (timestamp.__class__ is float or _is_int(timestamp))
    )


def _plain_extras(get: Any) -> bool:
    """Metadata, reasoning, raw and parsed records, usages: each absent or of its exact
    JSON type."""
    metadata = get("metadata", {})
    reasoning = get("reasoning")
    return (
        metadata.__class__ is dict
        and (reasoning is None or reasoning.__class__ is str)
        and all(get(key) is None or get(key).__class__ is dict for key in ("raw", "parsed_content"))
        and _plain_usages(get("usages"))
    )


def _call_ids(tools_calls: Any) -> tuple[str, ...] | None:
    """The ids of ``tools_calls`` (none: ``()``), if each call has a non-empty string id."""
    if tools_calls is None:
        return ()
    if tools_calls.__class__ is not list:
        return None
    ids = []
    for call in tools_calls:
        call_id = call.get("id") if call.__class__ is dict else None
        if call_id.__class__ is not str or not call_id:
            return None  # the trim rule looks at the list, the pairing check at ids: keep them one
        ids.append(call_id)
    return tuple(ids)


def outline(value: Any) -> Outline | None:
    """Roles and call ids of an ``AgentState`` document (``{"context": [...], ...}``) whose
    every message is plainly valid (see the section comment); ``None`` otherwise."""
    if value.__class__ is not dict:
        return None
    context = value.get("context")
    summary = value.get("context_summary")
    if context.__class__ is not list or not (summary is None or summary.__class__ is str):
        return None
    roles: list[str] = []
    calls: list[tuple[str, ...]] = []
    results: list[tuple[str, ...]] = []
    try:  # an unhashable value where a name belongs raises TypeError: not plain
        if not _plain_execution_meta(value.get("execution_meta", _ABSENT)):
            return None
        for message in context:
            found = _native_message(message)
            if found is None:
                return None
            roles.append(found[0])
            calls.append(found[1])
            results.append(found[2])
    except TypeError:
        return None
    messages: list[Any] = context

    def rebuild(kept: list[int]) -> Any:
        return {**value, "context": [messages[i] for i in kept]}

    def units() -> list[int]:
        return [_native_units(m) for m in messages]

    def chars(index: int) -> int:
        return _native_units(messages[index], len)

    return Outline(roles, calls, results, rebuild, units, chars)


def _native_units(message: dict[str, Any], measure: Callable[[str], int] = text_units) -> int:
    """What the token estimate counts of an accepted native record (see ``Message.text``
    and :func:`~ctxmgr.state._tokens.message_units`); ``measure=len`` counts characters."""
    count = 0
    for block in message["content"]:
        if block["type"] == "text":
            count += measure(block["text"])
        else:  # a tool result: its output as is when a string, else as JSON
            output = block.get("output")
            count += measure(output if output.__class__ is str else _nesting.dumps(output))
    tools_calls = message.get("tools_calls")
    return count + measure(_nesting.text(tools_calls)) if tools_calls else count
