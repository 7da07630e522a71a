"""The trim rules on plain role lists, so they run without building any message.

:class:`~ctxmgr.state._managers.MessageContextManager` applies them to messages and the
streaming fast path to outlines (roles and tool-call flags read straight from JSON).
This module imports nothing else from ctxmgr: a ``trim`` that never builds a model
never pays for importing pydantic.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["completed_sequence_survivors", "trim_selection", "unsafe_cuts_from", "unsafe_cuts_of"]


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


def unsafe_cuts_of(
    roles: Sequence[str], calls: Sequence[Sequence[str]], results: Sequence[Sequence[str]]
) -> list[bool]:
    """:func:`~ctxmgr.state._tools.unsafe_cuts` from each message's role, call ids and result ids (an
    outline's, or the model's)."""
    n = len(roles)
    # unsafe[k] > 0  <=>  some call at index i < k has its result at index j >= k,
    # i.e. every split point k in (i, j] is unsafe: a difference array keeps it O(n).
    unsafe = [0] * (n + 2)
    opened_at: dict[str, int] = {}
    for index in range(n):
        for result_id in results[index]:
            call_index = opened_at.get(result_id)
            if call_index is not None and call_index < index:
                unsafe[call_index + 1] += 1
                unsafe[index + 1] -= 1
        for call_id in calls[index]:
            opened_at[call_id] = index
    open_count = 0
    unsafe_at = [False] * (n + 1)
    for k in range(n + 1):
        open_count += unsafe[k]
        unsafe_at[k] = open_count > 0 or (k < n and roles[k] == "tool")
    return unsafe_at


def unsafe_cuts_from(
    roles: Sequence[str], calls: Sequence[Sequence[str]], results: Sequence[Sequence[str]], lo: int
) -> list[bool]:
    """:func:`unsafe_cuts_of` at the split points ``lo..len(roles)`` (those below ``lo``
    are ``False``, unasked): a token budget's tail search asks only where its kept tail
    may start. The messages are read from the end, back to where every result at or
    after ``lo`` has met its call (the nearest one before it, as :func:`unsafe_cuts_of`
    pairs them), so a short tail costs little whatever the conversation's length."""
    n = len(roles)
    lo = max(0, min(lo, n))
    marks = [0] * (n + 2)
    pending: dict[str, list[int]] = {}  # result id: the positions still looking for their call
    index = n - 1
    while index >= 0 and (index >= lo or pending):
        if pending:
            for call_id in calls[index]:
                answers = pending.pop(call_id, None)
                if answers is not None:
                    marks[max(index + 1, lo)] += len(answers)
                    for answer in answers:
                        marks[answer + 1] -= 1
        if index >= lo:
            for result_id in results[index]:
                pending.setdefault(result_id, []).append(index)
        index -= 1
    unsafe_at = [False] * (n + 1)
    open_count = 0
    for k in range(lo, n + 1):
        open_count += marks[k]
        unsafe_at[k] = open_count > 0 or (k < n and roles[k] == "tool")
    return unsafe_at
