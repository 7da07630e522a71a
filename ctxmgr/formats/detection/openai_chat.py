"""Detection of OpenAI Chat Completions messages and requests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxmgr.formats.base import CERTAIN, NO, PLAUSIBLE

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
    "is_openai_request",
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
