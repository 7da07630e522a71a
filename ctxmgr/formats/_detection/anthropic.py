"""The light half of Anthropic Messages: detection and what the reader carries.

Nothing here imports pydantic or the model; the full reader and writer are in
:mod:`ctxmgr.formats._anthropic`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxmgr._format_registry import Carried
from ctxmgr.formats._base import CERTAIN, NO, PLAUSIBLE

if TYPE_CHECKING:
    from ctxmgr.state.message import Role

__all__ = [
    "CARRIED",
    "clue",
    "CONTAINER_SIGNS",
    "FOREIGN_KEYS",
    "FOREIGN_TYPES",
    "ROLES",
    "SIGN_TYPES",
    "container_sign",
    "looks_like_record",
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


def looks_like_record(record: Any) -> bool | None:
    """None: not an Anthropic message; True: has an Anthropic-only sign; False: plain."""
    role = record.get("role") if isinstance(record, dict) else None
    if not isinstance(role, str) or role not in ROLES or FOREIGN_KEYS & record.keys():
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
    return sign


def score_messages(records: list[Any]) -> int:
    sign = False
    for record in records[:8]:
        seen = looks_like_record(record)
        if seen is None:
            return NO
        sign = sign or seen
    return CERTAIN if sign else PLAUSIBLE


def container_sign(value: dict[str, Any]) -> bool:
    if CONTAINER_SIGNS & value.keys():
        return True
    model = value.get("model")
    if isinstance(model, str) and "claude" in model.lower():
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
