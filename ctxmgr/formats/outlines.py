"""Outlines: what the trim rule needs of a conversation, read straight from parsed JSON.

An outline (:class:`~ctxmgr.formats.base.Outline`) holds each message's role and the ids
of the tool calls it makes and answers. ``ctxmgr trim`` applies its rule and the
provider-rule check to the outline and writes the kept records as they were, so a
conversation in a format with an outline reader is trimmed without building a single
``Message`` (or importing pydantic). A reader declines, with ``None``, anything the full
reader would treat specially or reject; the full path then handles it, with its wording.

:data:`OUTLINES` maps format names to outline readers (OpenAI Chat Completions so far).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxmgr.formats.base import SUMMARY_HEADER, Outline
from ctxmgr.formats.detection.openai_chat import FOREIGN_WRAPPER_KEYS, ROLES, SUMMARY_NAME

__all__ = ["OUTLINES", "openai_chat"]


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
                if mapped == "system" and SUMMARY_HEADER in content:
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
            if "function_call" in message or (mapped == "system" and get("name") == SUMMARY_NAME):
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

    return Outline(roles, calls, results, rebuild)


# Keys of other formats' messages (native Message fields, Responses items, Gemini
# contents): a record holding one is left to detection and the full reader.
_FOREIGN_MESSAGE_KEYS = frozenset({"type", "parts", "message_id", "tools_calls", "delta", "parsed_content", "usages"})

# Legacy "function" messages pair by name through the reader's state: not fast-pathed.
_FAST_ROLES: dict[object, str] = {role: mapped for role, mapped in ROLES.items() if role != "function"}


OUTLINES: dict[str, Callable[[Any], Outline | None]] = {"openai-chat": openai_chat}
"""Outline readers by format name."""
