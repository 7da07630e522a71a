"""The trim rules on plain role lists, so they run without building any message.

:class:`~ctxmgr.state._managers.MessageContextManager` applies them to messages and the
streaming fast path to outlines (roles and tool-call flags read straight from JSON).
This module imports nothing else from ctxmgr: a ``trim`` that never builds a model
never pays for importing pydantic.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["completed_sequence_survivors", "trim_selection"]


def trim_selection(roles: Sequence[str], max_messages: int) -> list[int] | None:
    """Indices the trim rule keeps, or ``None`` when no trimming is needed.

    Trimming is needed when more than ``max_messages`` messages have role ``"user"``;
    the result is every system message (order kept, placed first) followed by the
    non-system messages from the ``max_messages``-th user message from the end onward.
    ``max_messages=0`` keeps only the system messages.
    """
    if roles.count("user") <= max_messages:
        return None
    count = len(roles)
    cut = count  # index of the max_messages-th user message from the end
    seen = 0
    if max_messages:
        for index in range(count - 1, -1, -1):
            if roles[index] == "user":
                seen += 1
                if seen == max_messages:
                    cut = index
                    break
    system = [i for i, role in enumerate(roles) if role == "system"]
    return system + [i for i in range(cut, count) if roles[i] != "system"]


def completed_sequence_survivors(roles: Sequence[str], calls: Sequence[bool]) -> list[int]:
    """Indices kept once completed tool sequences are removed (the rule, on outlines).

    ``roles[i]`` is message i's role and ``calls[i]`` whether it has tool calls; see
    :func:`ctxmgr.state._tools.remove_completed_tool_sequences` for the rule. Working on plain lists lets the
    streaming fast path apply the very same rule without building messages.
    """
    kept: list[int] = []
    i, n = 0, len(roles)
    while i < n:
        if roles[i] == "assistant" and calls[i]:
            j = i + 1
            while j < n and roles[j] == "tool":
                j += 1
            if j < n and roles[j] == "assistant" and not calls[j]:
                kept.append(j)
                i = j + 1
                continue
        kept.append(i)
        i += 1
    return kept
