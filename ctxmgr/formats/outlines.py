"""Outlines: what the trim rule needs of a conversation, read straight from parsed JSON.

An outline (:class:`~ctxmgr.formats.base.Outline`) holds each message's role and the ids
of the tool calls it makes and answers. ``ctxmgr trim`` applies its rule and the
provider-rule check to the outline and writes the kept records as they were, so a
conversation in a format with an outline reader is trimmed without building a single
``Message`` (or importing pydantic). A reader declines, with ``None``, anything the full
reader would treat specially or reject; the full path then handles it, with its wording.

:data:`OUTLINES` maps format names to outline readers: OpenAI Chat Completions and the
native AgentState document (the other formats take the full reader).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxmgr import _nesting
from ctxmgr.formats.base import SUMMARY_HEADER, Outline, arguments_json
from ctxmgr.formats.detection.native import SUMMARY_MARKER
from ctxmgr.formats.detection.openai_chat import FOREIGN_WRAPPER_KEYS, ROLES, SUMMARY_NAME
from ctxmgr.state._tokens import text_units

__all__ = ["OUTLINES", "native", "openai_chat"]


def _plain_parts(parts: list[Any]) -> bool:
    """Parts the full reader accepts as they are: text/refusal with string text, an image
    URL. Anything else (other part types, odd shapes) goes to the full reader."""
    for part in parts:
        if type(part) is not dict:
            return False
        kind = part.get("type")
        if kind == "text" or kind == "refusal":
            text = part.get(kind)
            if type(text) is not str or SUMMARY_HEADER in text:
                return False
        elif kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if type(image) is dict else image
            if type(url) is not str:
                return False
        else:
            return False
    return True


def _plain_calls(calls: list[Any]) -> bool:
    for call in calls:
        if type(call) is not dict or type(call.get("id")) is not str or call.get("type", "function") != "function":
            return False
        body = call.get("function")
        if type(body) is not dict or type(body.get("name")) is not str:
            return False
    return True


def openai_chat(value: Any) -> Outline | None:
    """Roles and call ids of a ``{"messages": [...]}`` record or a bare message list, if
    it is plainly well-formed Chat Completions (see :class:`~ctxmgr.formats.base.Outline`).

    Declines (``None``) whatever the full reader would treat specially or reject: other
    formats' keys or parts, legacy function calls, a summary, a malformed field.
    """
    found: Any = None
    if type(value) is list:
        found = value
    elif type(value) is dict and FOREIGN_WRAPPER_KEYS.isdisjoint(value.keys()):
        found = value.get("messages")
    if type(found) is not list:
        return None
    messages: list[Any] = found
    if not messages:
        return None  # an empty conversation is also native's to claim: let detection decide
    roles: list[str] = []
    calls: list[tuple[str, ...]] = []
    results: list[tuple[str, ...]] = []
    add_role, add_calls, add_results = roles.append, calls.append, results.append
    no_ids: tuple[str, ...] = ()
    mapped_role = _FAST_ROLES.get
    foreign = _FOREIGN_MESSAGE_KEYS.isdisjoint
    # The loop runs once per message of every line of a dataset: kept lean on purpose
    # (local names, one type test per field). An unhashable role raises TypeError.
    try:
        for message in messages:
            if message.__class__ is not dict or not foreign(message):
                return None  # not a message, or a Responses item / a native message
            get = message.get
            role = get("role")
            mapped = mapped_role(role)
            if mapped is None:
                return None
            content = get("content")
            if content.__class__ is str:
                # The full reader lifts a summary, or warns about a forged one, in any role
                # (appended after other text only counts in a system message).
                if SUMMARY_HEADER in content if mapped == "system" else content.startswith(SUMMARY_HEADER):
                    return None
            elif content is not None and (content.__class__ is not list or not _plain_parts(content)):
                return None
            if mapped == "tool":
                answered = get("tool_call_id")
                if answered.__class__ is not str:
                    return None
                add_role("tool")
                add_calls(no_ids)
                add_results((answered,))
                continue
            if "function_call" in message or get("name") == SUMMARY_NAME:
                return None
            tool_calls = get("tool_calls")
            made = no_ids
            if tool_calls is not None:
                if tool_calls.__class__ is not list or not _plain_calls(tool_calls):
                    return None
                if tool_calls and role == "assistant":
                    made = tuple([call["id"] for call in tool_calls])
            add_role(mapped)
            add_calls(made)
            add_results(no_ids)
    except TypeError:
        return None

    def rebuild(kept: list[int]) -> Any:
        if messages is value:
            return [messages[i] for i in kept]
        return {**value, "messages": [messages[i] for i in kept]}

    return Outline(roles, calls, results, rebuild, lambda: [_chat_units(m) for m in messages])


def _chat_units(message: dict[str, Any]) -> int:
    """What the token estimate counts of an accepted chat record (its
    :func:`~ctxmgr.state._tokens.text_units`), as the reader's ``Message`` gives it: its
    text (text and refusal parts; a tool message's output; an assistant's ``refusal``
    when it has no text), plus the repr of its tool calls in the reader's shape."""
    content = message.get("content")
    if content.__class__ is str:
        text, has_text = content, True
    elif content is None:
        text, has_text = "", False
    else:
        pieces = [part[part["type"]] for part in content if part["type"] in ("text", "refusal")]
        # A tool's output keeps a newline between its parts (the reader's rule): "HAT268"
        # and "$129" must not become "HAT268$129".
        text, has_text = ("\n" if message["role"] == "tool" else "").join(pieces), bool(pieces)
    if message["role"] != "assistant":
        return text_units(text)
    refusal = message.get("refusal")
    if refusal.__class__ is str and refusal and not has_text:
        text += refusal
    tool_calls = message.get("tool_calls")
    if not tool_calls:
        return text_units(text)
    calls = [
        {
            "id": call["id"],
            "type": "function",
            "function": {
                "name": call["function"]["name"],
                "arguments": arguments_json(call["function"].get("arguments", "")),
            },
        }
        for call in tool_calls
    ]
    return text_units(text) + text_units(str(calls))


# Keys of other formats' messages (native Message fields, Responses items, Gemini
# contents): a record holding one is left to detection and the full reader.
_FOREIGN_MESSAGE_KEYS = frozenset({"type", "parts", "message_id", "tools_calls", "delta", "parsed_content", "usages"})

# Legacy "function" messages pair by name through the reader's state: not fast-pathed.
_FAST_ROLES: dict[object, str] = {role: mapped for role, mapped in ROLES.items() if role != "function"}


# -- native (the reference's AgentState JSON) ---------------------------------------------
#
# The full reader validates in pydantic's strict mode; what is accepted here is a subset
# of what that accepts (exact JSON types, text and tool-result blocks only), so a record
# taken here would be read the same. Extra keys are allowed, as the model allows them.

_NATIVE_ROLES = frozenset({"user", "assistant", "system", "tool"})
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
    role = get("role")
    content = get("content")
    if role not in _NATIVE_ROLES or content.__class__ is not list:
        return None
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
    if role == "tool" and not has_result:
        return None  # an empty tool message: the rule check words it
    identifier = get("message_id", "")
    timestamp = get("timestamp", 0)
    metadata = get("metadata", {})
    if (
        not (identifier.__class__ is str or _is_int(identifier))
        or get("delta", False).__class__ is not bool
        or not (timestamp.__class__ is float or _is_int(timestamp))
        or metadata.__class__ is not dict
        or SUMMARY_MARKER in metadata  # a summary record: the full reader lifts it
        or not (get("reasoning") is None or get("reasoning").__class__ is str)
        or not all(get(key) is None or get(key).__class__ is dict for key in ("raw", "parsed_content"))
        or not _plain_usages(get("usages"))
    ):
        return None
    calls: tuple[str, ...] = ()
    tools_calls = get("tools_calls")
    if tools_calls is not None:
        if tools_calls.__class__ is not list:
            return None
        ids = []
        for call in tools_calls:
            call_id = call.get("id") if call.__class__ is dict else None
            if call.__class__ is not dict or call_id.__class__ is not str or not call_id:
                return None  # the trim rule looks at the list, the pairing check at ids: keep them one
            ids.append(call_id)
        calls = tuple(ids)
    return role, calls, tuple(results)


def native(value: Any) -> Outline | None:
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

    return Outline(roles, calls, results, rebuild, lambda: [_native_units(m) for m in messages])


def _native_units(message: dict[str, Any]) -> int:
    """What the token estimate counts of an accepted native record (see ``Message.text``
    and :func:`~ctxmgr.state._tokens.message_units`)."""
    count = 0
    for block in message["content"]:
        if block["type"] == "text":
            count += text_units(block["text"])
        else:  # a tool result: its output as is when a string, else as JSON
            output = block.get("output")
            count += text_units(output if output.__class__ is str else _nesting.dumps(output))
    tools_calls = message.get("tools_calls")
    return count + text_units(_nesting.text(tools_calls)) if tools_calls else count


OUTLINES: dict[str, Callable[[Any], Outline | None]] = {"openai-chat": openai_chat, "native": native}
"""Outline readers by format name."""
