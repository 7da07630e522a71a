"""The light half of Anthropic Messages: detection, the outline reader, what the reader carries.

Nothing here imports pydantic or the model: detection runs before every command, and
``trim`` reads plain Anthropic conversations through :func:`outline` alone. The full
reader and writer are in :mod:`ctxmgr.formats._anthropic`; :func:`outline` accepts only
what that reader reads plainly, a property ``tests/formats/test_anthropic_outline.py``
binds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxmgr import _nesting
from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE, Outline, call_text
from ctxmgr.formats._declaration import EACH, Declaration, of_type
from ctxmgr.state._tokens import texts_units

if TYPE_CHECKING:
    from ctxmgr.state.message import Role

__all__ = [
    "CARRIED",
    "clue",
    "CONTAINER_SIGNS",
    "DECLARATION",
    "FOREIGN_KEYS",
    "FOREIGN_TYPES",
    "ROLES",
    "SIGN_TYPES",
    "container_sign",
    "looks_like_record",
    "outline",
    "score",
]

# Block types only Anthropic messages have: seeing one makes detection certain.
SIGN_TYPES = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "document",
        "search_result",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
        "tool_reference",
    }
)


# Part types and message keys of OpenAI chat / Responses: never Anthropic.
FOREIGN_TYPES = frozenset(
    {
        "image_url",
        "input_audio",
        "file",
        "input_text",
        "output_text",
        "input_image",
        "input_file",
        "refusal",
        "tool_call",
    }
)


FOREIGN_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call", "name", "type", "parts"})


# Request keys only the Anthropic API has.
CONTAINER_SIGNS = frozenset({"system", "anthropic_version", "stop_sequences", "top_k", "anthropic_beta"})


ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "system": "system"}


# The keys of a Messages API response (``response.model_dump()``) stored as the assistant's
# message: its "type" is "message", and it holds a stop reason no request message has.
RESPONSE_SIGNS = frozenset({"stop_reason", "stop_sequence"})


def is_stored_response(record: dict[str, Any]) -> bool:
    """Whether ``record`` is an assistant message stored as the Messages API answered it."""
    answered = record.get("type") == "message" and record.get("role") == "assistant"
    return answered and bool(RESPONSE_SIGNS & record.keys())


def looks_like_record(record: Any) -> bool | None:
    """None: not an Anthropic message; True: has an Anthropic-only sign; False: plain."""
    role = record.get("role") if isinstance(record, dict) else None
    if not isinstance(role, str) or role not in ROLES:
        return None
    stored_response = is_stored_response(record)
    if FOREIGN_KEYS & record.keys() and not (stored_response and FOREIGN_KEYS & record.keys() == {"type"}):
        return None
    content = record.get("content")
    if isinstance(content, str):
        return False
    if not isinstance(content, list):
        return None
    sign = False
    for block in content[:16]:
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str) or kind in FOREIGN_TYPES:
            return None
        if kind in SIGN_TYPES or "cache_control" in block or (kind == "image" and "source" in block):
            sign = True
    return sign or stored_response


def score_messages(records: list[Any]) -> int:
    sign = False
    for record in records[:8]:
        seen = looks_like_record(record)
        if seen is None:
            return NO
        sign = sign or seen
    return CERTAIN if sign else PLAUSIBLE


CHAT_REQUEST_KEYS = frozenset(
    {
        "max_completion_tokens",
        "frequency_penalty",
        "presence_penalty",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "n",
        "response_format",
        "seed",
        "parallel_tool_calls",
        "reasoning_effort",
        "modalities",
        "stream_options",
    }
)
"""Request keys only Chat Completions has (of ``openai_chat.REQUEST_KEYS``), which the
Messages API refuses."""


def container_sign(value: dict[str, Any]) -> bool:
    if CONTAINER_SIGNS & value.keys():
        return True
    model = value.get("model")
    # A Claude model names Anthropic unless the body holds a key only a Chat Completions
    # request has (a Claude conversation converted to OpenAI chat keeps its model).
    if isinstance(model, str) and "claude" in model.lower() and CHAT_REQUEST_KEYS.isdisjoint(value.keys()):
        return True
    if isinstance(value.get("thinking"), dict):
        return True
    tools = value.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools[:8]):
        return True
    choice = value.get("tool_choice")
    return (
        isinstance(choice, dict) and choice.get("type") in ("auto", "any", "tool", "none") and "function" not in choice
    )


def score(value: Any) -> int:
    """How sure it is that ``value`` is this format: NO, PLAUSIBLE or CERTAIN."""
    try:
        if isinstance(value, dict):
            messages = value.get("messages")
            if not isinstance(messages, list):
                return NO
            found = score_messages(messages)
            if found == NO:
                return NO
            if container_sign(value):
                return CERTAIN
            return found if messages else NO
        if isinstance(value, list) and value:
            return score_messages(value)
    except Exception:  # detection must never raise, whatever the input
        return NO
    return NO


def clue(value: Any) -> int:
    """How strongly ``value`` points to Anthropic when no format recognises it: a
    ``messages`` list beside one of the container signs (stronger than chat's clue)."""
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return 5 if container_sign(value) else 0
    return 0


DECLARATION = Declaration(
    name="anthropic",
    roles=ROLES,
    call_ids=(("content", EACH, of_type("tool_use"), "id"),),
    result_ids=(("content", EACH, of_type("tool_result"), "tool_use_id"),),
    # Text (a string, or text blocks) and tool results' content (a string, or blocks);
    # the top-level system prompt, where a summary is lifted from.
    marker_texts=(
        ("content",),
        ("content", EACH, "text"),
        ("content", EACH, "content"),
        ("content", EACH, "content", EACH, "text"),
    ),
    container_texts=(("system",), ("system", EACH, "text")),
)
"""Roles, ids and the fields that may carry the summary marker, for both readers."""


CARRIED = Carried(
    record=frozenset({"role", "content"}),
    part=frozenset(
        {
            "type",
            "text",
            "id",
            "name",
            "input",
            "tool_use_id",
            "content",
            "is_error",
            "thinking",
            "signature",
            "data",
            "source",
            "citations",
            "title",
            "context",
        }
    ),
    modelled_parts=frozenset({"text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result"}),
    # Signatures and redacted thinking vouch for content: only LangChain keeps them.
    only_to={
        "signature": frozenset({"langchain"}),
        "data": frozenset({"langchain"}),
        "title": frozenset(),
        "context": frozenset(),
    },
)
"""The message and block fields the reader maps into the model."""


# -- the outline reader (the trim fast path) ----------------------------------------------

_MISSING: Any = object()

# Container keys another format's detection claims (a native AgentState or message,
# Gemini contents): a value holding one is left to detection and the full reader.
_OTHER_CONTAINERS = frozenset({"context", "contents", "role"})

# Blocks that make detection certain of Anthropic among the first eight records and
# that no Chat Completions or Responses message holds (an image counts only with a
# "source", see looks_like_record).
_SURE_SIGNS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking", "document"})


def _plain_system(system: Any) -> bool:
    """Whether the reader reads a top-level ``system`` as one plain system message: not
    a wrong type (which it rejects); a summary mark it lifts out is
    :data:`DECLARATION`'s to find."""
    if system.__class__ is str:
        return True
    if system.__class__ is not list:
        return False
    return all(block.__class__ is dict and block.get("text").__class__ is str for block in system)


def _plain_result_parts(parts: list[Any]) -> bool:
    """Whether a tool_result's list content is one the reader takes (typed blocks)."""
    return all(part.__class__ is dict and part.get("type").__class__ is str for part in parts)


def _detected_as_anthropic(value: Any, messages: list[Any]) -> bool:
    """Whether detection names Anthropic, for records :func:`outline` accepted.

    The full path detects every dataset line anew, so the outline must decline a line
    detection would give another format. Two signs settle it at once: an Anthropic-only
    container key (no other format reads a container holding one), or a sign block among
    the first eight records (Anthropic certain, OpenAI chat and Responses no). Anything
    else (a bare list of text, a request whose only sign is its model) asks detection.
    """
    if value.__class__ is dict and not CONTAINER_SIGNS.isdisjoint(value):
        return True
    for record in messages[:8]:
        content = record["content"]
        if content.__class__ is list:
            for block in content:
                kind = block["type"]
                if kind in _SURE_SIGNS or (kind == "image" and "source" in block):
                    return True
    from ctxmgr import formats
    from ctxmgr.errors import InputError

    try:
        return formats.detect_name(value, source="") == "anthropic"
    except InputError:
        return False


def _checked_system(value: dict[str, Any]) -> tuple[Any, list[Any]] | None:
    """``(system, messages)`` of a container, ``system`` :data:`_MISSING` when it has none
    (or ``None``); ``None`` when the outline declines the container."""
    messages = value.get("messages")
    if messages.__class__ is not list or not _OTHER_CONTAINERS.isdisjoint(value):
        return None
    system = value.get("system", _MISSING)
    if system is None:
        return _MISSING, messages
    if system is not _MISSING and (not _plain_system(system) or DECLARATION.container_marked(value)):
        return None
    return system, messages


# The per-message checks stay inline: a helper call per message would cost the trim fast path.
def outline(value: Any) -> Outline | None:  # noqa: C901
    """Roles and call ids of an Anthropic request or dataset line (``{"system",
    "messages", ...}``) or a bare message list, if it is plainly well-formed (see
    :class:`~ctxmgr.formats._base.Outline`).

    The top-level ``system`` is message 0, role ``system``, as the reader makes it; a
    user record holding a ``tool_result`` is a ``tool`` message. Declines (``None``)
    whatever the full reader would treat specially or reject, or detection would give
    another format: a record with keys beside ``role`` and ``content``, another format's
    part, a tool call outside an assistant or a result outside a user record, anything
    but text in a system record, an assistant record of thinking alone (the rule check
    words it), ctxmgr's summary mark, a malformed field. Blocks the reader keeps without
    text or pairing (images, documents, server tools, ones it passes through) count nothing.
    """
    system: Any = _MISSING
    if value.__class__ is dict:
        found = _checked_system(value)
        if found is None:
            return None
        system, messages = found
    elif value.__class__ is list:
        messages = value
    else:
        return None
    no_ids: tuple[str, ...] = ()
    offset = 0 if system is _MISSING else 1
    roles: list[str] = ["system"] * offset
    calls: list[tuple[str, ...]] = [no_ids] * offset
    results: list[tuple[str, ...]] = [no_ids] * offset
    add_role, add_calls, add_results = roles.append, calls.append, results.append
    mapped_role = DECLARATION.roles.get
    marked = DECLARATION.marked
    no_input: dict[str, Any] = {}  # what the reader takes for a tool_use without "input"
    foreign = FOREIGN_TYPES
    # The loop runs once per message of every line of a dataset: kept lean on purpose
    # (local names, one type test per field). An unhashable role raises TypeError.
    try:
        for message in messages:
            if message.__class__ is not dict or len(message) != 2 or marked(message):
                return None  # not a record, keys the reader ignores and detection weighs, a marker
            role = mapped_role(message.get("role"))
            content = message.get("content")
            if role is None or content is None:
                return None
            if content.__class__ is str:
                add_role(role)
                add_calls(no_ids)
                add_results(no_ids)
                continue
            if content.__class__ is not list:
                return None
            made: list[str] = []
            answered: list[str] = []
            thinking_only = bool(content)
            for block in content:
                if block.__class__ is not dict:
                    return None
                kind = block.get("type")
                if kind == "text":
                    if block.get("text").__class__ is not str:
                        return None
                    thinking_only = False
                elif kind == "tool_use":
                    call_id = block.get("id")
                    if (
                        role != "assistant"
                        or call_id.__class__ is not str
                        or not call_id
                        or block.get("name").__class__ is not str
                        or block.get("input", no_input).__class__ is not dict
                    ):
                        return None
                    made.append(call_id)
                elif kind == "tool_result":
                    # The reader rejects a missing id, a non-boolean is_error, content
                    # other than a string or a list of typed blocks.
                    result_id = block.get("tool_use_id")
                    output = block.get("content")
                    is_error = block.get("is_error")
                    if (
                        role != "user"
                        or result_id.__class__ is not str
                        or not result_id
                        or (is_error is not None and is_error.__class__ is not bool)
                    ):
                        return None
                    if (
                        output is not None
                        and output.__class__ is not str
                        and (output.__class__ is not list or not _plain_result_parts(output))
                    ):
                        return None
                    answered.append(result_id)
                    thinking_only = False
                elif kind == "thinking" or kind == "redacted_thinking":
                    if role != "assistant":
                        return None
                elif role == "system" or kind.__class__ is not str or kind in foreign:
                    return None  # refused by the reader, or another format's part
                else:
                    thinking_only = False  # media, or a block the reader passes through
            if thinking_only and not made:
                return None  # reasoning alone: the rule check words a warning for it
            add_role("tool" if answered else role)
            add_calls(tuple(made) if made else no_ids)
            add_results(tuple(answered) if answered else no_ids)
    except TypeError:
        return None
    if not _detected_as_anthropic(value, messages):
        return None

    def rebuild(kept: list[int]) -> Any:
        if messages is value:
            return [messages[i] for i in kept]
        if offset and (not kept or kept[0] != 0):
            # The writer leaves out the system prompt of a conversation that no longer holds it.
            out = {k: v for k, v in value.items() if k != "system"}
            out["messages"] = [messages[i - 1] for i in kept]
            return out
        return {**value, "messages": [messages[i - offset] for i in kept[offset:]]}

    counted_chars: list[int] = []

    def units() -> list[int]:
        # Counted once for both: the characters (a budget's report) of the same strings,
        # each message's joined in one (units and characters add up over a join), ASCII
        # text (most) measured by its length (text_units' own first case).
        texts = [_system_text(system)] if system is not _MISSING else []
        texts += [_record_text(message) for message in messages]
        counted_chars[:] = sizes = list(map(len, texts))
        return texts_units(texts, sizes)

    def chars(index: int) -> int:
        if not counted_chars:
            units()
        return counted_chars[index]

    return Outline(roles, calls, results, rebuild, units, chars)


def _system_text(system: Any) -> str:
    """What the token estimate counts of an accepted top-level ``system``: its text (its
    blocks' texts, joined)."""
    if isinstance(system, str):
        return system
    return "".join([block["text"] for block in system])


def _record_text(message: dict[str, Any]) -> str:
    """What the token estimate counts of an accepted record (its
    :func:`~ctxmgr.state._tokens.message_units`), as the reader's ``Message`` gives it,
    in one string: the text of its text blocks and tool results (a result's text blocks
    joined with newlines, other content as JSON), plus the repr of its tool_use blocks in
    the OpenAI shape the reader gives them."""
    content = message["content"]
    if content.__class__ is str:
        return content
    if len(content) == 1:  # the usual messages: one text, one call or one result (the loop's text, without its lists)
        block = content[0]
        kind = block["type"]
        if kind == "text":
            text: str = block["text"]
            return text
        if kind == "tool_result":
            return _result_text(block.get("content"))
        if kind == "tool_use":
            return f"[{call_text(block['id'], block['name'], _nesting.dumps_arguments(block.get('input', {})))}]"
    pieces: list[str] = []
    calls: list[str] = []
    for block in content:
        kind = block["type"]
        if kind == "text":
            pieces.append(block["text"])
        elif kind == "tool_result":
            pieces.append(_result_text(block.get("content")))
        elif kind == "tool_use":
            calls.append(call_text(block["id"], block["name"], _nesting.dumps_arguments(block.get("input", {}))))
    if calls:
        pieces.append(f"[{', '.join(calls)}]")
    return "".join(pieces)


def _result_text(content: Any) -> str:
    if content is None:
        return ""
    if content.__class__ is str:
        return content
    texts = [part.get("text") for part in content]
    if all(part["type"] == "text" and text.__class__ is str for part, text in zip(content, texts, strict=True)):
        return "\n".join(texts)
    return _nesting.dumps(content, default=str)
