"""A token budget: keep the newest messages that fit in ``max_tokens``.

Like LangChain's ``trim_messages(strategy="last", include_system=True)``, on ctxmgr's
model and with ctxmgr's rules: the estimate is the one ``stats`` reports (tool outputs
and call arguments included), the kept tail never starts inside a tool call's results,
and some messages are never cut (see :class:`TokenBudgetContextManager`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from ctxmgr.errors import UsageError
from ctxmgr.state._compaction import CompactionManager, CompactionReport
from ctxmgr.state._managers import check_count
from ctxmgr.state._rules import trim_selection
from ctxmgr.state._tokens import UNITS_PER_TOKEN, message_units

if TYPE_CHECKING:
    from ctxmgr.state.message import Message

__all__ = ["TokenBudgetContextManager", "check_budget", "with_partners"]


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
        # The model's rules, imported here: the outline fast path runs select() without them.
        from ctxmgr.state._tools import unsafe_cuts

        warnings: list[str] = []
        pinned = self._pinned(messages, warnings)
        kept, warning = self.select(
            [m.role for m in messages],
            [message_units(m) for m in messages],
            lambda lo: unsafe_cuts(messages),
            pinned,
        )
        warnings.extend(warning)
        after = [messages[i] for i in kept]
        report = self._report(messages, after, messages_dropped=len(messages) - len(kept), warnings=warnings)
        return after, report

    def select(
        self, roles: Sequence[str], units: Sequence[int], unsafe: Callable[[int], list[bool]], pinned: set[int]
    ) -> tuple[list[int], list[str]]:
        """The budget's rule on each message's role and units (the model's, or an
        outline's): the positions kept, and the warning when the messages never cut
        (``pinned`` with their partners, the rules, the last user request) exceed the
        budget. ``unsafe(lo)`` gives :func:`~ctxmgr.state._tools.unsafe_cuts` at the
        split points from ``lo`` on (asked only when the tail is searched, with the
        earliest start whose tail fits)."""
        n = len(roles)
        keep = set(pinned)
        index = -1
        for _ in range(roles.count("system")):  # the rules (one, mostly), found at C speed
            index = roles.index("system", index + 1)
            keep.add(index)
        for index in range(n - 1, -1, -1):  # the last user request (near the end, mostly)
            if roles[index] == "user":
                keep.add(index)
                break
        base = sum([units[i] for i in keep])
        if not _fits(base, self.max_tokens):
            tokens = base // UNITS_PER_TOKEN
            warning = (
                f"the messages never cut (rules, last user request, pins) take {tokens:,} tokens, over the budget "
                f"of {self.max_tokens:,}: kept, everything else dropped"
            )
            return sorted(keep), [warning]
        start = self._tail_start(roles, units, unsafe, keep, base)
        return sorted([i for i in keep if i < start]) + list(range(start, n)), []

    def _tail_start(
        self,
        roles: Sequence[str],
        units: Sequence[int],
        unsafe_of: Callable[[int], list[bool]],
        keep: set[int],
        base: int,
    ) -> int:
        """Where the kept tail starts: the earliest safe point whose tail fits."""
        n = len(roles)
        floor = 0
        if self.max_messages is not None:
            chosen = trim_selection(roles, self.max_messages)
            if chosen is not None:
                floor = min((i for i in chosen if roles[i] != "system"), default=n)
        # The earliest start whose tail fits (_fits: under (max_tokens + 1) tokens' units),
        # then the earliest safe one from there.
        limit = (self.max_tokens + 1) * UNITS_PER_TOKEN
        total, lowest = base, n
        for start in range(n - 1, floor - 1, -1):
            if start not in keep:
                total += units[start]
                if total >= limit:
                    break
            lowest = start
        unsafe = unsafe_of(lowest)
        any_start = n
        for start in range(lowest, n):
            if not unsafe[start]:
                if any_start == n:
                    any_start = start
                    if self.start_on != "user":
                        break
                if roles[start] == "user":
                    return start
        return any_start

    def pinned_positions(
        self, n: int, calls: Sequence[Sequence[str]], results: Sequence[Sequence[str]], warnings: list[str]
    ) -> set[int]:
        """The positions ``pin_index`` pins in ``n`` messages, with the calls and results
        they pair with (``calls``, ``results``: each message's ids); a pin past the last
        message is a warning. ``pin_match`` is not applied (it needs the messages' text)."""
        pinned = set()
        for index in self.pin_index:
            if index < n:
                pinned.add(index)
            else:
                warnings.append(f"pin_index {index} is past the last message ({n} messages)")
        return with_partners(calls, results, pinned) if pinned else pinned

    def _pinned(self, messages: Sequence[Message], warnings: list[str]) -> set[int]:
        """The pinned positions, with the calls and results they pair with."""
        from ctxmgr.state._tools import call_ids, result_ids

        calls = [call_ids(m) for m in messages] if self.pin_index or self.pin_match else []
        results = [result_ids(m) for m in messages] if calls or self.pin_match else []
        pinned = self.pinned_positions(len(messages), calls, results, warnings)
        found_any: set[int] = set()
        for pattern in self.pin_match:
            found = {i for i, m in enumerate(messages) if pattern.search(m.text())}
            if not found:
                warnings.append(f"pin_match {pattern.pattern!r} matched no message")
            found_any |= found
        return pinned | with_partners(calls, results, found_any) if found_any else pinned

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(max_tokens={self.max_tokens}, start_on={self.start_on!r}, "
            f"max_messages={self.max_messages})"
        )


def with_partners(calls: Sequence[Sequence[str]], results: Sequence[Sequence[str]], chosen: set[int]) -> set[int]:
    """``chosen`` and every message pairing with one of them (calls with their results),
    from each message's call ids and result ids.

    A result pairs with the nearest call of its id before it, as ``validate`` pairs them:
    a reused call id (3% of the real tau-bench conversations reuse one) must not pull in
    another turn's call and leave the pinned result without its own."""
    latest_call: dict[str, int] = {}
    partners: dict[int, set[int]] = {}
    for index, (made, answered) in enumerate(zip(calls, results, strict=True)):
        for result_id in answered:
            call = latest_call.get(result_id)
            if call is not None:
                partners.setdefault(index, set()).add(call)
                partners.setdefault(call, set()).add(index)
        for call_id in made:
            latest_call[call_id] = index
    closed = set(chosen)
    todo = list(chosen)
    while todo:
        for j in partners.get(todo.pop(), ()):
            if j not in closed:
                closed.add(j)
                todo.append(j)
    return closed
