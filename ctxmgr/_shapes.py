"""The provider rules on message shapes: what APIs reject in tool calls and structure.

Pure data in, problems out: a :class:`Shape` per message, built from a model message
(:func:`ctxmgr._validate.shape_of`) or straight from an outline by the trim fast path,
which must not import the model. :mod:`ctxmgr._validate` applies the same rules to messages.

The rules come in twins, kept side by side here: :func:`check_shapes` words every problem,
:func:`outline_clear` answers yes or no fast; ``tests/test_shapes.py`` holds them to the
same answer. Which targets there are, and each one's rule on where tool results go, is
the target format's registry entry (``rules``, :mod:`ctxmgr._format_registry`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ctxmgr import _format_registry as format_registry
from ctxmgr._format_registry import TARGETS

__all__ = [
    "REJECTED_BY",
    "TARGETS",
    "Problem",
    "Shape",
    "check_shapes",
    "fails_for",
    "outline_clear",
    "providers_rejecting",
    "reuse_accepted",
]


@dataclass(frozen=True, order=True)
class Problem:
    """One thing a provider API would reject, at message ``index``.

    ``providers`` names the formats whose provider rejects it (see :data:`REJECTED_BY`):
    a duplicate call id is refused by Anthropic's Messages API while Chat Completions
    takes it, so a file's own provider may accept what another refuses.
    """

    index: int
    code: str
    message: str
    providers: tuple[str, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return f"message {self.index}: {self.message}"

    @property
    def rejected_by(self) -> str:
        """Who rejects it, in words: ``every provider`` or ``anthropic``."""
        if set(self.providers) >= set(format_registry.TARGETS):
            return "every provider"
        return ", ".join(self.providers) or "no provider"


REJECTED_BY: dict[str, tuple[str, ...] | None] = {
    "tool-first": None,
    "orphan-result": None,
    "missing-result": None,
    "empty-tool-message": None,
    # Chat Completions takes a reused call id and a second result for it (GPT-4o writes
    # them); the Messages API requires each tool_use id to be unique.
    "duplicate-call-id": ("anthropic",),
    "duplicate-result": ("anthropic",),
    "orphan-reasoning": ("openai-responses",),
}
"""Per problem code, the formats whose provider rejects it (``None``: every provider's).
``results-not-adjacent`` is the checked target's own rule."""


def providers_rejecting(code: str, target: str | None = None) -> tuple[str, ...]:
    """The formats whose provider rejects a problem of ``code`` (see :data:`REJECTED_BY`)."""
    if code == "results-not-adjacent" and target is not None:
        return (target,)
    found = REJECTED_BY.get(code)
    return tuple(format_registry.TARGETS) if found is None else found


def fails_for(problem: Problem, fmt: str | None, target: str | None) -> bool:
    """Whether ``problem`` is a failure: for ``target`` (``--for``) when its provider
    rejects it; else for the file's own format ``fmt`` when that format's provider does;
    a format without a provider of its own (native, LangChain) fails on what every
    provider rejects."""
    chosen = target or (fmt if fmt in format_registry.TARGETS else None)
    if chosen is not None:
        return chosen in problem.providers
    return set(problem.providers) >= set(format_registry.TARGETS)


@dataclass(frozen=True, slots=True)
class Shape:
    """What the rules look at in one message (built from a ``Message`` or an outline)."""

    role: str
    calls: tuple[str, ...] = ()
    results: tuple[str, ...] = ()
    empty_tool: bool = False
    orphan_reasoning: bool = False


def check_shapes(
    messages: Sequence[Shape], *, target: str | None = None, name: Callable[[int], str] | None = None
) -> list[Problem]:
    """Every problem found, in message order.

    ``name(i)`` is how a problem's text names message ``i`` when it points at another
    message (default ``"message i"``): a trimmed output's messages are named by their
    number in the input, so both numbers in a warning point into the same file.

    Rules: a tool result must answer a call made earlier; every call must get a result
    (a call in the last assistant message may still be pending); call ids are unique; the
    conversation (after system messages) must not start with a tool message; a reasoning
    item must belong to a message. With a ``target`` format, the results of an
    assistant's calls must come right after it, before any other message: all in the next
    message where the format's registry entry says ``"next-message"`` (Anthropic, Gemini),
    else in the run of tool messages that follows it (``"tool-run"``: the OpenAI formats,
    and LangChain, which hands its messages on to any of them).
    """
    problems: list[Problem] = []
    first_non_system = next((i for i, m in enumerate(messages) if m.role != "system"), None)
    if first_non_system is not None and messages[first_non_system].role == "tool":
        problems.append(Problem(first_non_system, "tool-first", "the conversation starts with a tool result"))
    problems.extend(_pairing_problems(messages, name or _plain_name))
    for index, message in enumerate(messages):
        if message.empty_tool:
            problems.append(Problem(index, "empty-tool-message", "tool message without a tool result"))
        if message.orphan_reasoning:
            problems.append(
                Problem(index, "orphan-reasoning", "reasoning item not followed by the message it belongs to")
            )
    if target is not None:
        problems.extend(_adjacency_problems(messages, target))
    return [replace(p, providers=providers_rejecting(p.code, target)) for p in sorted(set(problems))]


def _plain_name(index: int) -> str:
    return f"message {index}"


def _pairing_problems(messages: Sequence[Shape], name: Callable[[int], str]) -> list[Problem]:
    """Calls and results that do not pair: reused ids, orphan or repeated results, calls
    never answered (but those of the last calling message, which may be pending)."""
    problems: list[Problem] = []
    seen_calls: dict[str, int] = {}
    answered: set[str] = set()
    last_caller = max((i for i, m in enumerate(messages) if m.calls), default=-1)
    for index, message in enumerate(messages):
        for call_id in message.calls:
            if call_id in seen_calls:
                problems.append(
                    Problem(
                        index,
                        "duplicate-call-id",
                        f"tool call id {call_id!r} already used by {name(seen_calls[call_id])}",
                    )
                )
            else:
                seen_calls[call_id] = index
        for result_id in message.results:
            if result_id not in seen_calls:
                problems.append(
                    Problem(index, "orphan-result", f"tool result for call {result_id!r} has no earlier matching call")
                )
            elif result_id in answered:
                problems.append(Problem(index, "duplicate-result", f"call {result_id!r} already has a result"))
            answered.add(result_id)
    for call_id, index in seen_calls.items():
        if call_id not in answered and index != last_caller:
            problems.append(Problem(index, "missing-result", f"tool call {call_id!r} never gets a result"))
    return problems


def _adjacency_problems(messages: Sequence[Shape], target: str) -> list[Problem]:
    """Results must directly follow their call (one message for Anthropic/Gemini)."""
    problems: list[Problem] = []
    for index, message in enumerate(messages):
        ids = message.calls
        if not ids:
            continue
        pending = set(ids)
        cursor = index + 1
        if format_registry.rules(target) == "next-message":
            # All results sit in the single next (user) message.
            if cursor < len(messages):
                pending -= set(messages[cursor].results)
                if pending and any(r in pending for m in messages[cursor + 1 :] for r in m.results):
                    problems.append(
                        Problem(
                            index,
                            "results-not-adjacent",
                            f"{target}: results of this message's tool calls must all be in the next message",
                        )
                    )
            continue
        while cursor < len(messages) and messages[cursor].role == "tool":
            pending -= set(messages[cursor].results)
            cursor += 1
        if pending and cursor < len(messages):
            later = {r for m in messages[cursor:] for r in m.results}
            if pending & later:
                problems.append(
                    Problem(
                        index,
                        "results-not-adjacent",
                        f"{target}: tool results must come right after the calling assistant message",
                    )
                )
    return problems


def outline_clear(
    roles: Sequence[str],
    calls: Sequence[tuple[str, ...]],
    results: Sequence[tuple[str, ...]],
    indices: Sequence[int],
    *,
    target: str | None = None,
    reuse: bool = False,
) -> bool:
    """Whether :func:`check_shapes` finds nothing in the messages ``indices`` of an outline.

    The same rules, answered yes or no in one pass with early exits and no ``Shape``
    objects: the trim fast path asks this of every line of a dataset, and only needs
    the wording (from :func:`check_shapes`, via the full path) when the answer is no.
    Outline messages carry no empty tool messages or lone reasoning items.

    ``reuse``: whether it finds nothing but reused call ids and second results
    (``duplicate-call-id``, ``duplicate-result``), which only Anthropic's provider
    rejects: a file whose own provider takes them needs no wording for them.
    """
    next_message = format_registry.rules(target) == "next-message"
    seen = _pairs_clear(roles, calls, results, indices, next_message=next_message and not reuse, reuse=reuse)
    if seen is None:
        return False
    if target is None or not seen:
        return True
    if next_message:
        return not reuse or _next_message_clear(calls, results, indices)
    return _tool_runs_clear(roles, calls, results, indices)


def reuse_accepted(fmt: str) -> bool:
    """Whether a file of ``fmt`` has no failure (:func:`fails_for`) in a reused call id or
    a second result for it (the ``reuse`` of :func:`outline_clear`)."""
    target = fmt if fmt in format_registry.TARGETS else None
    return not any(
        fails_for(Problem(0, code, "", providers_rejecting(code, target)), fmt, None)
        for code in ("duplicate-call-id", "duplicate-result")
    )


def _starts_with_tool(roles: Sequence[str], indices: Sequence[int]) -> bool:
    """Whether the first message after the system ones is a tool message."""
    for index in indices:
        role = roles[index]
        if role != "system":
            return role == "tool"
    return False


def _pairs_clear(
    roles: Sequence[str],
    calls: Sequence[tuple[str, ...]],
    results: Sequence[tuple[str, ...]],
    indices: Sequence[int],
    *,
    next_message: bool = False,
    reuse: bool = False,
) -> dict[str, int] | None:
    """The calls made (id: first position), if no pairing rule fails (see
    :func:`_pairing_problems`; ``reuse``: but a reused id or a second result).

    ``next_message``: the adjacency rule of the "next-message" targets too (see
    :func:`_adjacency_problems`): once the pairing holds with unique ids, a result more
    than one message after its call is the only way to break it.
    """
    if _starts_with_tool(roles, indices):
        return None
    seen: dict[str, int] = {}
    answered: set[str] = set()
    last_caller = -1
    for position, index in enumerate(indices):
        made = calls[index]
        if made:
            last_caller = position
            for call_id in made:
                if call_id not in seen:
                    seen[call_id] = position  # the rules pair by the first call of an id
                elif not reuse:
                    return None
        for result_id in results[index]:
            first = result_id not in answered
            if result_id not in seen or not (first or reuse):
                return None
            if first and next_message and position - seen[result_id] > 1:
                return None
            answered.add(result_id)
    # Only the last calling message may wait for its results.
    waiting = (position for call_id, position in seen.items() if call_id not in answered)
    if len(answered) != len(seen) and any(position != last_caller for position in waiting):
        return None
    return seen


def _next_message_clear(
    calls: Sequence[tuple[str, ...]], results: Sequence[tuple[str, ...]], indices: Sequence[int]
) -> bool:
    """Adjacency of the "next-message" targets, message by message (ids may repeat): a
    call's result not in the next message must not come later."""
    count = len(indices)
    for position in range(count - 1):
        made = calls[indices[position]]
        if not made:
            continue
        pending = set(made).difference(results[indices[position + 1]])
        if pending and any(not pending.isdisjoint(results[indices[later]]) for later in range(position + 2, count)):
            return False
    return True


def _tool_runs_clear(
    roles: Sequence[str], calls: Sequence[tuple[str, ...]], results: Sequence[tuple[str, ...]], indices: Sequence[int]
) -> bool:
    """Adjacency: an assistant's results come in the run of tool messages right after it."""
    count = len(indices)
    for position, index in enumerate(indices):
        made = calls[index]
        if not made:
            continue
        pending = set(made)
        cursor = position + 1
        while cursor < count and roles[indices[cursor]] == "tool":
            pending.difference_update(results[indices[cursor]])
            cursor += 1
        if pending and cursor < count:
            for later in range(cursor, count):
                if not pending.isdisjoint(results[indices[later]]):
                    return False
    return True
