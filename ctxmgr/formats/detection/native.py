"""Detection of the reference's AgentState JSON (native format)."""

from __future__ import annotations

from typing import Any

from ctxmgr.formats.base import CERTAIN, NO, PLAUSIBLE

__all__ = [
    "FOREIGN_PART_TYPES",
    "MESSAGE_KEYS",
    "NATIVE_SIGNS",
    "SUMMARY_MARKER",
    "known_block",
    "lacks_only_role",
    "looks_like_native_message",
    "score",
]

SUMMARY_MARKER = "ctxmgr_summary"
"""``metadata`` key marking the system message that carries a summary in list containers."""

MESSAGE_KEYS = frozenset({"role", "content"})


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
        if "context" in value:
            return PLAUSIBLE  # a broken AgentState: reading it says what is wrong
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
