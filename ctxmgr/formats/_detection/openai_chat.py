"""The light half of OpenAI Chat Completions: detection, the outline reader, what the reader carries.

Nothing here imports pydantic or the model: detection runs before every command, and
``trim`` reads plain chat through :func:`outline` alone. The full reader and writer are
in :mod:`ctxmgr.formats._openai_chat`; :func:`outline` accepts only what that reader reads
plainly, a property ``tests/files/test_fast_path.py`` binds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE, Outline, arguments_json, call_text, first_record
from ctxmgr.formats._declaration import EACH, TYPED, Declaration
from ctxmgr.state._tokens import text_units

if TYPE_CHECKING:
    from ctxmgr.state.message import Role

__all__ = [
    "SUMMARY_NAME",
    "CERTAIN_KEYS",
    "CERTAIN_PARTS",
    "CERTAIN_ROLES",
    "DETECT_LIMIT",
    "FOREIGN_PARTS",
    "FOREIGN_WRAPPER_KEYS",
    "REQUEST_KEYS",
    "ROLES",
    "SYSTEM_ROLES",
    "CARRIED",
    "DECLARATION",
    "clue",
    "is_openai_request",
    "outline",
    "score",
    "score_messages",
    "score_record",
    "str_in",
]

SUMMARY_NAME = "ctxmgr_summary"
"""``name`` of the system message that carries the summary."""

ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}


SYSTEM_ROLES = frozenset({"system", "developer"})


# Seen only in Chat Completions: make a list of role/content records certainly this format.
CERTAIN_ROLES = frozenset({"tool", "developer", "function"})


CERTAIN_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call", "refusal", "audio"})


CERTAIN_PARTS = frozenset({"image_url", "input_audio", "file", "refusal"})


# Part types of other formats (native blocks, Anthropic, Responses): not Chat Completions.
FOREIGN_PARTS = frozenset(
    {
        "image",
        "audio",
        "video",
        "document",
        "data",
        "tool_call",
        "tool-call",  # the Vercel AI SDK's parts (vercel-ai)
        "tool-result",
        "remote_tool_call",
        "tool_result",
        "reasoning",
        "annotation",
        "error",
        "tool_use",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "search_result",
        "input_text",
        "output_text",
        "input_image",
        "input_file",
    }
)


# Keys of other formats' request objects: a "messages" list beside them is not ours.
FOREIGN_WRAPPER_KEYS = frozenset(
    {
        "system",
        "input",
        "contents",
        "context",
        "instructions",
        "stop_sequences",
        "top_k",
        "thinking",
        "anthropic_version",
        "anthropic_beta",
    }
)


REQUEST_KEYS = frozenset(
    {
        "frequency_penalty",
        "presence_penalty",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "n",
        "response_format",
        "seed",
        "max_completion_tokens",
        "parallel_tool_calls",
        "functions",
        "function_call",
        "reasoning_effort",
        "modalities",
        "prediction",
        "stream_options",
        "web_search_options",
        "verbosity",
        "prompt_cache_key",
        "safety_identifier",
    }
)


DETECT_LIMIT = 32


def str_in(value: Any, options: frozenset[str] | dict[str, Any]) -> bool:
    """``value in options`` for a JSON value (a list or dict would not even be hashable)."""
    return isinstance(value, str) and value in options


def score_record(record: Any) -> int:
    if not isinstance(record, dict) or "type" in record:
        return NO  # typed records are Responses items, LangChain dicts, ...
    role = record.get("role")
    if not isinstance(role, str) or role not in ROLES:
        return NO
    certain = role in CERTAIN_ROLES or not CERTAIN_KEYS.isdisjoint(record.keys())
    if "content" not in record:
        return CERTAIN if certain else NO
    content = record["content"]
    if isinstance(content, list):
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if not isinstance(kind, str) or kind in FOREIGN_PARTS:
                return NO
            certain = certain or kind in CERTAIN_PARTS
    elif content is not None and not isinstance(content, str):
        return NO
    return CERTAIN if certain else PLAUSIBLE


def score_messages(records: list[Any]) -> int:
    best = PLAUSIBLE
    for record in records[:DETECT_LIMIT]:
        score = score_record(record)
        if score == NO:
            return NO
        best = max(best, score)
    return best


def is_openai_request(value: dict[str, Any]) -> bool:
    tools = value.get("tools")
    if isinstance(tools, list) and any(
        isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("function"), dict)
        for t in tools[:DETECT_LIMIT]
    ):
        return True
    return not REQUEST_KEYS.isdisjoint(value.keys())


def score(value: Any) -> int:
    """How sure it is that ``value`` is this format: NO, PLAUSIBLE or CERTAIN."""
    if isinstance(value, dict):
        if "messages" in value:
            messages = value["messages"]
            if not isinstance(messages, list) or not FOREIGN_WRAPPER_KEYS.isdisjoint(value.keys()):
                return NO
            score = score_messages(messages)
            return CERTAIN if score == PLAUSIBLE and is_openai_request(value) else score
        return score_record(value) if "role" in value else NO
    if isinstance(value, list) and value:
        return score_messages(value)
    return NO


def clue(value: Any) -> int:
    """How strongly ``value`` points to chat when no format recognises it: a ``messages``
    list (Anthropic's stronger clue wins when its container signs are there), or a list
    whose first object has a ``role`` (weakest: other formats' records have one too)."""
    if isinstance(value, dict):
        return 4 if isinstance(value.get("messages"), list) else 0
    first = first_record(value)
    return 1 if first is not None and "role" in first else 0


CARRIED = Carried(
    record=frozenset(
        {"role", "content", "tool_calls", "tool_call_id", "function_call", "refusal", "audio", "reasoning_content"}
    ),
    part=frozenset({"type", "text", "refusal", "image_url", "input_audio", "file"}),
    modelled_parts=frozenset({"text", "refusal", "image_url", "input_audio", "file"}),
)
"""The message and part fields the reader maps into the model."""


DECLARATION = Declaration(
    name="openai-chat",
    roles=ROLES,
    call_ids=(("tool_calls", EACH, "id"),),
    result_ids=(("tool_call_id",),),
    # The reader reads a text part's "text" and a refusal part's "refusal" as text, looks
    # for a forged marker in every part's "text" key, and takes an assistant's refusal as its text when it has none.
    marker_texts=(("content",), ("content", EACH, TYPED), ("content", EACH, "text"), ("refusal",)),
    marker_names=((("name",), SUMMARY_NAME),),
)
"""Roles, ids and the fields that may carry the summary marker, for both readers."""


# -- the outline reader (the trim fast path) ----------------------------------------------


def _plain_parts(parts: list[Any]) -> bool:
    """Parts the full reader accepts as they are: text/refusal with string text, an image
    URL (the summary marker is :data:`DECLARATION`'s to find). Anything else (other part
    types, odd shapes) goes to the full reader."""
    for part in parts:
        if type(part) is not dict:
            return False
        kind = part.get("type")
        if kind == "text" or kind == "refusal":
            if type(part.get(kind)) is not str:
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
        # An empty id pairs with nothing in the model (its rules skip it): not an outline id.
        if type(call) is not dict or call.get("type", "function") != "function":
            return False
        call_id = call.get("id")
        if type(call_id) is not str or not call_id:
            return False
        body = call.get("function")
        if type(body) is not dict or type(body.get("name")) is not str:
            return False
    return True


# The per-message checks stay inline: a helper call per message would cost the trim fast path.
def outline(value: Any) -> Outline | None:  # noqa: C901
    """Roles and call ids of a ``{"messages": [...]}`` record or a bare message list, if
    it is plainly well-formed Chat Completions (see :class:`~ctxmgr.formats._base.Outline`).

    Declines (``None``) whatever the full reader would treat specially or reject: other
    formats' keys or parts, legacy function calls, a record :data:`DECLARATION` finds
    marked (a summary, or a forged one), a malformed field.
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
    marked = DECLARATION.marked
    # The loop runs once per message of every line of a dataset: kept lean on purpose
    # (local names, one type test per field). An unhashable role raises TypeError.
    try:
        for message in messages:
            if message.__class__ is not dict or not foreign(message) or marked(message):
                return None  # not a message, a Responses item / a native message, a marker
            get = message.get
            role = get("role")
            mapped = mapped_role(role)
            if mapped is None:
                return None
            content = get("content")
            if (
                content.__class__ is not str
                and content is not None
                and (content.__class__ is not list or not _plain_parts(content))
            ):
                return None
            if mapped == "tool":
                answered = get("tool_call_id")
                if answered.__class__ is not str or not answered:
                    return None
                add_role("tool")
                add_calls(no_ids)
                add_results((answered,))
                continue
            if "function_call" in message:
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
    if _anthropic_may_claim(value, roles, calls) or (messages is value and _native_may_claim(messages)):
        return None

    def rebuild(kept: list[int]) -> Any:
        if messages is value:
            return [messages[i] for i in kept]
        return {**value, "messages": [messages[i] for i in kept]}

    counted_chars: list[int] = []

    def units() -> list[int]:
        # Counted once for both: the characters (a budget's report) of the same strings.
        found: list[int] = []
        counted_chars.clear()
        add_units, add_chars = found.append, counted_chars.append
        for message in messages:
            content = message.get("content")
            if content.__class__ is str and (message["role"] != "assistant" or not message.get("tool_calls")):
                # The usual message: its text is its content, nothing else counts.
                add_units(len(content) if content.isascii() else text_units(content))
                add_chars(len(content))
                continue
            text, calls = _chat_counted(message)
            add_units(text_units(text) + (text_units(calls) if calls else 0))
            add_chars(len(text) + len(calls))
        return found

    def chars(index: int) -> int:
        if not counted_chars:
            units()
        return counted_chars[index]

    return Outline(roles, calls, results, rebuild, units, chars, lambda index: messages[index : index + 1])


def _anthropic_may_claim(value: Any, roles: list[str], calls: list[tuple[str, ...]]) -> bool:
    """Whether detection would give this accepted chat value to Anthropic (a
    ``cache_control`` on a text part, a Claude model, Anthropic tools): the full path
    detects every dataset line anew, so the fast path must not take such a line.

    Anthropic's detection reads the first 8 records and refuses a tool message or a
    record with tool calls, so a chat line that has one there is settled without asking.
    """
    head = roles[:8]
    if "tool" in head or any(calls[: len(head)]):
        return False
    from ctxmgr.formats._detection import anthropic

    return anthropic.score(value) == CERTAIN


def _native_may_claim(messages: list[Any]) -> bool:
    """Whether detection would give this accepted bare list to native (it comes first in
    detection order: a list of text parts, or of empty contents, reads as both): the full
    path detects every dataset line anew, so the fast path must not take such a line."""
    from ctxmgr.formats._detection import native

    found = native.score(messages)
    return found != NO and (found == CERTAIN or score(messages) != CERTAIN)


def _chat_units(message: dict[str, Any]) -> int:
    """What the token estimate counts of an accepted chat record (its
    :func:`~ctxmgr.state._tokens.text_units`), as the reader's ``Message`` gives it: its
    text (text and refusal parts; a tool message's output; an assistant's ``refusal``
    when it has no text), plus the repr of its tool calls in the reader's shape."""
    text, calls = _chat_counted(message)
    return text_units(text) + (text_units(calls) if calls else 0)


def _chat_counted(message: dict[str, Any]) -> tuple[str, str]:
    """The text :func:`_chat_units` counts, and the repr of the tool calls (or ``""``)."""
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
        return text, ""
    refusal = message.get("refusal")
    if refusal.__class__ is str and refusal and not has_text:
        text += refusal
    tool_calls = message.get("tool_calls")
    if not tool_calls:
        return text, ""
    # str() of the calls in the reader's shape, written without building the dicts.
    calls = [
        call_text(call["id"], call["function"]["name"], arguments_json(call["function"].get("arguments", "")))
        for call in tool_calls
    ]
    return text, f"[{', '.join(calls)}]"


# Keys of other formats' messages (native Message fields, Responses items, Gemini
# contents): a record holding one is left to detection and the full reader.
_FOREIGN_MESSAGE_KEYS = frozenset({"type", "parts", "message_id", "tools_calls", "delta", "parsed_content", "usages"})

# Legacy "function" messages pair by name through the reader's state: not fast-pathed.
_FAST_ROLES: dict[object, str] = {role: mapped for role, mapped in ROLES.items() if role != "function"}
