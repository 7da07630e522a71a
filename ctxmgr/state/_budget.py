"""A token budget: keep the newest messages that fit in ``max_tokens``.

Like LangChain's ``trim_messages(strategy="last", include_system=True)``, on ctxmgr's
model and with ctxmgr's rules: the estimate is the one ``stats`` reports (tool outputs
and call arguments included), the kept tail never starts inside a tool call's results,
and some messages are never cut (see :class:`TokenBudgetContextManager`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from ctxmgr.errors import UsageError
from ctxmgr.state._compaction import CompactionManager, CompactionReport
from ctxmgr.state._managers import check_count
from ctxmgr.state._rules import trim_selection
from ctxmgr.state._tokens import UNITS_PER_TOKEN, message_units
from ctxmgr.state._tools import call_ids, result_ids, unsafe_cuts

if TYPE_CHECKING:
    from ctxmgr.state.message import Message

__all__ = ["TokenBudgetContextManager", "check_budget"]


def check_budget(name: str, value: int | None) -> None:
    """A token budget is a whole number above 0 (``None``: no budget)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise UsageError(f"{name} must be a whole number above 0, got {value!r}")


def _fits(units: int, max_tokens: int) -> bool:
    return max(1, units // UNITS_PER_TOKEN) <= max_tokens


class TokenBudgetContextManager(CompactionManager):
    """Keep the newest messages that fit in ``max_tokens`` estimated tokens.

    Never cut, and counted in the budget: the system messages (the rules; a format's
    developer messages are read as system messages), the last user request, and the
    pinned messages, each with the tool calls or results it pairs with. A pinned message
    keeps its place; the kept tail follows. The tail holds whole tool-call/result pairs
    only and never starts on a tool result. When the messages never cut alone exceed the
    budget they are kept, everything else is dropped, and the report warns with the
    tokens they take.

    Args:
        max_tokens: The budget, above 0.
        start_on: ``"user"``: the kept tail begins on a user message when one fits
            (else where it would without it); ``None``: on any message but a tool result.
        max_messages: Also keep at most this many user turns, as
            :class:`~ctxmgr.state.MessageContextManager` counts them (both limits hold).
        pin_index: Positions (0-based, in the messages given) never cut.
        pin_match: Regular expressions; a message whose text matches one is never cut.
            A pin that matches nothing is a warning.
    """

    def __init__(
        self,
        max_tokens: int,
        *,
        start_on: Literal["user"] | None = None,
        max_messages: int | None = None,
        pin_index: Iterable[int] = (),
        pin_match: Iterable[str] = (),
    ) -> None:
        check_budget("max_tokens", max_tokens)
        check_count("max_messages", max_messages)
        if start_on not in (None, "user"):
            raise UsageError(f"start_on must be 'user' or None, got {start_on!r}")
        self.max_tokens = max_tokens
        self.start_on = start_on
        self.max_messages = max_messages
        self.pin_index = sorted(set(pin_index))
        for index in self.pin_index:
            check_count("pin_index", index)
        self.pin_match: list[re.Pattern[str]] = []
        for pattern in pin_match:
            try:
                self.pin_match.append(re.compile(pattern))
            except re.error as exc:
                raise UsageError(f"pin_match {pattern!r} is not a regular expression: {exc}") from None

    def compact(self, messages: Sequence[Message]) -> tuple[list[Message], CompactionReport]:
        n = len(messages)
        warnings: list[str] = []
        pinned = self._pinned(messages, warnings)
        roles = [m.role for m in messages]
        keep = {i for i, role in enumerate(roles) if role == "system"} | pinned
        users = [i for i, role in enumerate(roles) if role == "user"]
        if users:
            keep.add(users[-1])
        units = [message_units(m) for m in messages]
        base = sum(units[i] for i in keep)
        start = n
        if not _fits(base, self.max_tokens):
            tokens = base // UNITS_PER_TOKEN
            warnings.append(
                f"the messages never cut (rules, last user request, pins) take {tokens:,} tokens, over the budget "
                f"of {self.max_tokens:,}: kept, everything else dropped"
            )
        else:
            start = self._tail_start(messages, roles, units, keep, base)
        kept = sorted(keep.union(range(start, n)))
        after = [messages[i] for i in kept]
        report = self._report(messages, after, messages_dropped=n - len(kept), warnings=warnings)
        return after, report

    def _tail_start(
        self, messages: Sequence[Message], roles: Sequence[str], units: list[int], keep: set[int], base: int
    ) -> int:
        """Where the kept tail starts: the earliest safe point whose tail fits."""
        n = len(messages)
        floor = 0
        if self.max_messages is not None:
            chosen = trim_selection(roles, self.max_messages)
            if chosen is not None:
                floor = min((i for i in chosen if roles[i] != "system"), default=n)
        unsafe = unsafe_cuts(messages)
        total, any_start, user_start = base, n, n
        for start in range(n - 1, floor - 1, -1):
            if start not in keep:
                total += units[start]
            if not _fits(total, self.max_tokens):
                break
            if not unsafe[start]:
                any_start = start
                if roles[start] == "user":
                    user_start = start
        return user_start if self.start_on == "user" and user_start < n else any_start

    def _pinned(self, messages: Sequence[Message], warnings: list[str]) -> set[int]:
        """The pinned positions, with the calls and results they pair with."""
        n = len(messages)
        pinned = set()
        for index in self.pin_index:
            if index < n:
                pinned.add(index)
            else:
                warnings.append(f"pin_index {index} is past the last message ({n} messages)")
        for pattern in self.pin_match:
            found = {i for i, m in enumerate(messages) if pattern.search(m.text())}
            if not found:
                warnings.append(f"pin_match {pattern.pattern!r} matched no message")
            pinned |= found
        return _with_partners(messages, pinned) if pinned else pinned

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(max_tokens={self.max_tokens}, start_on={self.start_on!r}, "
            f"max_messages={self.max_messages})"
        )


def _with_partners(messages: Sequence[Message], chosen: set[int]) -> set[int]:
    """``chosen`` and every message pairing with one of them (calls with their results).

    A result pairs with the nearest call of its id before it, as ``validate`` pairs them:
    a reused call id (3% of the real tau-bench conversations reuse one) must not pull in
    another turn's call and leave the pinned result without its own."""
    latest_call: dict[str, int] = {}
    partners: dict[int, set[int]] = {}
    for index, message in enumerate(messages):
        for result_id in result_ids(message):
            call = latest_call.get(result_id)
            if call is not None:
                partners.setdefault(index, set()).add(call)
                partners.setdefault(call, set()).add(index)
        for call_id in call_ids(message):
            latest_call[call_id] = index
    closed = set(chosen)
    todo = list(chosen)
    while todo:
        for j in partners.get(todo.pop(), ()):
            if j not in closed:
                closed.add(j)
                todo.append(j)
    return closed
