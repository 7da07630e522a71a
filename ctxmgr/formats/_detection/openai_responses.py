"""The light half of OpenAI Responses: detection and what the reader carries.

Nothing here imports pydantic or the model; the full reader and writer are in
:mod:`ctxmgr.formats._openai_responses`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE, first_record
from ctxmgr.formats._detection.openai_chat import str_in

if TYPE_CHECKING:
    from ctxmgr.state.message import Role

__all__ = [
    "CARRIED",
    "clue",
    "CALLS",
    "CHAT_KEYS",
    "DETECT_LIMIT",
    "FOREIGN_WRAPPER_KEYS",
    "ITEM_TYPES",
    "MODEL_SIDE",
    "PART_TYPES",
    "REQUEST_KEYS",
    "RESULTS",
    "ROLES",
    "SYSTEM_ROLES",
    "UNKNOWN",
    "is_request",
    "score",
    "score_item",
    "score_items",
    "score_parts",
]

ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


SYSTEM_ROLES = frozenset({"system", "developer"})


# Client-side tool calls and their outputs, with the key that holds the pairing id.
CALLS = {
    "function_call": "call_id",
    "custom_tool_call": "call_id",
    "computer_call": "call_id",
    "local_shell_call": "call_id",
    "shell_call": "call_id",
    "apply_patch_call": "call_id",
    "mcp_approval_request": "id",
    "tool_search_call": "call_id",
}


RESULTS = {
    "function_call_output": "call_id",
    "custom_tool_call_output": "call_id",
    "computer_call_output": "call_id",
    "local_shell_call_output": "id",
    "shell_call_output": "call_id",
    "apply_patch_call_output": "call_id",
    "mcp_approval_response": "approval_request_id",
    "tool_search_output": "call_id",
}


# Model output that is neither a message nor a client call: part of the assistant turn.
MODEL_SIDE = frozenset(
    {
        "reasoning",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "compaction",
        "program",
        "program_output",
    }
)


ITEM_TYPES = frozenset(
    {
        "message",
        "item_reference",
        "additional_tools",
        "compaction_trigger",
        *CALLS,
        *RESULTS,
        *MODEL_SIDE,
    }
)


PART_TYPES = frozenset({"input_text", "output_text", "refusal", "input_image", "input_file", "input_audio"})


# Keys of Chat Completions messages: such a record is not an easy input message.
CHAT_KEYS = frozenset({"tool_calls", "tool_call_id", "function_call", "name", "refusal", "audio"})


FOREIGN_WRAPPER_KEYS = frozenset({"messages", "contents", "context", "system"})


REQUEST_KEYS = frozenset(
    {
        "model",
        "instructions",
        "previous_response_id",
        "reasoning",
        "text",
        "include",
        "max_output_tokens",
        "store",
        "truncation",
        "conversation",
        "prompt",
        "background",
        "max_tool_calls",
        "prompt_cache_key",
        "safety_identifier",
        "service_tier",
    }
)


DETECT_LIMIT = 32


UNKNOWN = -1  # detection: an item of a type we do not know (neither for nor against)


def score_parts(parts: list[Any]) -> int:
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if not str_in(kind, PART_TYPES):
            return NO
    return CERTAIN if parts else PLAUSIBLE


def score_item(item: Any) -> int:
    if not isinstance(item, dict):
        return NO
    kind = item.get("type")
    if kind is None:
        if not str_in(item.get("role"), ROLES) or not CHAT_KEYS.isdisjoint(item.keys()):
            return NO
        content = item.get("content")
        if isinstance(content, str):
            return PLAUSIBLE
        return score_parts(content) if isinstance(content, list) else NO
    if not isinstance(kind, str):
        return NO
    if kind == "message":
        content = item.get("content")
        if not str_in(item.get("role"), ROLES) or not isinstance(content, str | list):
            return NO
        if isinstance(content, str) or score_parts(content) != NO:
            return CERTAIN
        # A typed message whose parts all have a type, one of them new to us: the reader
        # passes such parts through, so it says neither yes nor no.
        typed = all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in content)
        return UNKNOWN if typed else NO
    return CERTAIN if kind in ITEM_TYPES else UNKNOWN


def score_items(items: list[Any]) -> int:
    scores = [score_item(item) for item in items[:DETECT_LIMIT]]
    if NO in scores or all(s == UNKNOWN for s in scores):
        return NO
    return max(scores)


def is_request(value: dict[str, Any]) -> bool:
    if not REQUEST_KEYS.isdisjoint(value.keys() - {"model"}):
        return True
    tools = value.get("tools")
    # Responses function tools are flat ({"type": "function", "name": ...}).
    return isinstance(tools, list) and any(
        isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("name"), str)
        for t in tools[:DETECT_LIMIT]
    )


def score(value: Any) -> int:
    """How sure it is that ``value`` is this format: NO, PLAUSIBLE or CERTAIN."""
    if isinstance(value, list):
        return score_items(value) if value else NO
    if not isinstance(value, dict) or not FOREIGN_WRAPPER_KEYS.isdisjoint(value.keys()):
        return NO
    if value.get("object") == "response" and isinstance(value.get("output"), list):
        return CERTAIN
    if "input" in value:
        items = value["input"]
        if isinstance(items, str):
            return CERTAIN if not REQUEST_KEYS.isdisjoint(value.keys()) else NO
        if not isinstance(items, list):
            return NO
        score = score_items(items) if items else PLAUSIBLE
        return CERTAIN if score == PLAUSIBLE and is_request(value) else score
    if "type" in value or "role" in value:
        score = score_item(value)
        return NO if score == UNKNOWN else score
    return NO


def clue(value: Any) -> int:
    """How strongly ``value`` points to Responses when no format recognises it: an
    ``input`` key, or a list whose first object has a ``type`` and no ``role``."""
    if isinstance(value, dict):
        return 2 if "input" in value else 0
    first = first_record(value)
    return 2 if first is not None and "type" in first and "role" not in first else 0


CARRIED = Carried(
    record=frozenset(
        {
            "type",
            "role",
            "content",
            "call_id",
            "name",
            "arguments",
            "output",
            "id",
            "status",
            "summary",
            "encrypted_content",
            "input",
            "action",
            "operation",
            "approve",
            "reason",
            "approval_request_id",
            "tools",
        }
    ),
    part=frozenset({"type", "text", "image_url", "file_id", "file_data", "filename", "detail", "annotations"}),
    modelled_parts=frozenset(
        {"input_text", "output_text", "refusal", "text", "input_image", "input_file", "input_audio"}
    ),
    # Any other item is carried whole (a passthrough block): counted as one dropped block.
    modelled_records=frozenset({None, "message", "reasoning"}) | CALLS.keys() | RESULTS.keys(),
    only_to={"encrypted_content": frozenset({"langchain"})},
)
"""The item and part fields the reader maps into the model."""
