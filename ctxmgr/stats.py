"""Statistics of conversations: what ``ctxmgr stats`` reports, computed in the library."""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ctxmgr.formats.base import Conversation
from ctxmgr.state import estimate_tokens, message_chars
from ctxmgr.state.tools import call_ids

__all__ = ["FileStats", "Triggers"]


@dataclass(frozen=True)
class Triggers:
    """The thresholds whose firing ``stats`` reports (as ``trim``/``summarize`` use them)."""

    trim_max_messages: int | None = 10
    summary_max_messages: int | None = 30
    token_budget: int | None = None


@dataclass
class FileStats:
    """Counts over every conversation of one file."""

    path: str
    top: int = 3
    format: str | None = None
    conversations: int = 0
    messages: int = 0
    roles: Counter[str] = field(default_factory=Counter)
    tool_calls: int = 0
    tokens: int = 0
    with_summary: int = 0
    trim_would_fire: int = 0
    summary_would_fire: int = 0
    largest: list[tuple[int, int, int | None, str]] = field(default_factory=list)
    """(tokens, message index, dataset line, role), largest first."""

    def add(self, conversation: Conversation, triggers: Triggers, line: int | None = None) -> None:
        """Count one conversation."""
        self.format = self.format or conversation.format
        context = conversation.state.context
        self.conversations += 1
        self.messages += len(context)
        self.roles.update(m.role for m in context)
        self.tool_calls += sum(len(call_ids(m)) or len(m.tools_calls or ()) for m in context)
        tokens = estimate_tokens(context) if context else 0
        self.tokens += tokens
        if conversation.state.context_summary:
            self.with_summary += 1
        users = sum(1 for m in context if m.role == "user")
        if triggers.trim_max_messages is not None and users > triggers.trim_max_messages:
            self.trim_would_fire += 1
        if (triggers.summary_max_messages is not None and len(context) > triggers.summary_max_messages) or (
            triggers.token_budget is not None and tokens > triggers.token_budget
        ):
            self.summary_would_fire += 1
        sizes = ((message_chars(m) // 4, index, line, m.role) for index, m in enumerate(context))
        self.largest = heapq.nlargest(
            self.top, [*self.largest, *heapq.nlargest(self.top, sizes)], key=lambda item: item[0]
        )

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``stats --json``)."""
        return {
            "path": self.path,
            "format": self.format,
            "conversations": self.conversations,
            "messages": self.messages,
            "messages_by_role": dict(sorted(self.roles.items())),
            "tool_calls": self.tool_calls,
            "estimated_tokens": self.tokens,
            "conversations_with_summary": self.with_summary,
            "trim_would_fire": self.trim_would_fire,
            "summary_would_fire": self.summary_would_fire,
            "largest_messages": [
                {"estimated_tokens": tokens, "index": index, "line": line, "role": role}
                for tokens, index, line, role in self.largest
            ],
        }
