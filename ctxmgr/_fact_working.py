"""Facts a summary states through other facts: a sum by its parts, a length in other units.

:func:`ctxmgr.facts.missing_facts` asks whether a summary holds each fact's value in some
spelling. A careful summary may instead keep what the value was worked out from, or the
same value in another unit, and a reader loses nothing:

- **a sum by its parts**: a message that works out an amount from amounts it also states
  ("Certificates: $1,000. Gift cards: $327. Total available: $1,327. Left for the card:
  $1,625 - $1,327 = $298") states ``$1,327`` through a summary that keeps ``$1,000`` and
  ``$327``: two or three amounts of the same message (not a tool's result), all kept by the
  summary, add up to it. A difference is not read so: "$825 - $533 = $292" does not state the
  $292 a user is asked to pay through the two totals, since that is the figure a reader
  needs;
- **a length in other units**: "5 hours 30 minutes" is said by "5.5 hours", "330 minutes",
  "5h30" or "5 hrs 30 mins"; both of its facts (``5 hours``, ``30 minutes``) are then
  stated.

:func:`stated_through` returns the facts of a missing list that the summary states in
one of these ways; :func:`lacking` is what the fact check reports missing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from functools import lru_cache
from itertools import combinations

from ctxmgr.facts import Fact, _fact_keys, find_facts, missing_facts

__all__ = ["lacking", "stated_through"]

_MESSAGE_START = re.compile(r"^(?:USER|ASSISTANT|TOOL RESULT [^\n]*?|SYSTEM|DEVELOPER)\s*:", re.MULTILINE)
_LENGTH = re.compile(
    r"(?<![\d.])(?P<hours>\d{1,3})\s*(?:hours?|hrs?|h)\.?,?\s*(?:and\s+)?(?P<minutes>\d{1,2})\s*(?:minutes?|mins?|m)\b",
    re.IGNORECASE,
)
_HOURS = re.compile(r"(?<![\d.])(?P<hours>\d{1,3}(?:\.\d+)?)\s*(?:hours?|hrs?|h)\b(?!\s*(?:and\s+)?\d)", re.IGNORECASE)
_MINUTES = re.compile(r"(?<![\d.:])(?P<minutes>\d{1,4})\s*(?:minutes?|mins?)\b", re.IGNORECASE)
_MOST_PARTS = 3
_MOST_AMOUNTS = 24  # a message listing more is a table, not a sum worked out


def lacking(facts: Sequence[Fact], span: str, summary: str) -> list[Fact]:
    """The facts of ``facts`` (found in ``span``) that ``summary`` states in no way: neither
    in some spelling (:func:`ctxmgr.facts.missing_facts`) nor through others."""
    missing = missing_facts(facts, summary)
    through = stated_through(missing, span, summary) if missing else set()
    return [fact for fact in missing if fact not in through]


def stated_through(missing: Sequence[Fact], span: str, summary: str) -> set[Fact]:
    """The facts of ``missing`` (found in the rendered ``span``) that ``summary`` states
    through others: a sum by its parts, a length in other units (see the module docstring).

    >>> span = "ASSISTANT: $1,000 from certificates and $327 from gift cards: $1,327 in all."
    >>> [str(f) for f in stated_through(find_facts(span), span, "They give $1,000 and $327.")]
    ['$1,327']
    """
    amounts = [fact for fact in missing if fact.kind == "amount" and _value(fact) is not None]
    lengths = [fact for fact in missing if fact.kind == "quantity"]
    if not amounts and not lengths:
        return set()
    messages = _messages(span)
    stated: set[Fact] = set()
    if amounts:
        kept = Counter(value for fact in _every_amount(summary) if (value := _value(fact)) is not None)
        if kept.total() >= 2:
            stated |= {fact for fact in amounts if _summed(fact, messages, kept)}
    if lengths:
        stated |= _lengths(lengths, messages, _minutes_said(summary))
    return stated


@lru_cache(maxsize=256)
def _every_amount(text: str) -> list[Fact]:
    """Each amount of ``text`` as often as it is written (find_facts lists each once)."""
    amounts = [fact for fact in find_facts(text) if fact.kind == "amount"]
    return [fact for fact in amounts for _ in range(max(1, _times_written(fact.text, text)))]


def _times_written(spelling: str, text: str) -> int:
    return len(re.findall(rf"(?<![\w$.,]){re.escape(spelling)}(?![\w]|[.,]\d)", text))


def _messages(span: str) -> list[str]:
    starts = [found.start() for found in _MESSAGE_START.finditer(span)] or [0]
    return [span[start:end] for start, end in zip(starts, [*starts[1:], len(span)], strict=True)]


def _value(fact: Fact) -> Decimal | None:
    keys = _fact_keys(fact.kind, fact.text)
    return keys[0][2] if keys and keys[0][0] == "amount" else None


def _summed(fact: Fact, messages: list[str], kept: Counter[Decimal]) -> bool:
    """Whether a message that states ``fact`` works it out from amounts it states that the
    summary keeps (as many times as the sum uses them): their sum. Not a difference: a price
    difference or a refund is what a reader needs, not the two sums it sets apart."""
    value = _value(fact)
    for message in messages:
        if fact.text not in message or message.startswith("TOOL RESULT"):
            continue
        amounts = [_value(other) for other in _every_amount(message)]
        parts = sorted(part for part in amounts if part is not None and part != value and part in kept)
        if len(parts) < 2 or len(amounts) > _MOST_AMOUNTS:
            continue
        for size in range(2, _MOST_PARTS + 1):
            for group in combinations(parts, size):
                if sum(group) == value and not Counter(group) - kept:
                    return True
    return False


def _lengths(facts: list[Fact], messages: list[str], said: set[Decimal]) -> set[Fact]:
    """The hour and minute facts of lengths written in both units ("5 hours 30 minutes")
    that the summary gives in other units."""
    if not said:
        return set()
    wanted = {fact.text for fact in facts}
    stated: set[Fact] = set()
    for message in messages:
        for found in _LENGTH.finditer(message):
            total = Decimal(found["hours"]) * 60 + Decimal(found["minutes"])
            if total not in said:
                continue
            for fact in facts:
                if fact.text in wanted and fact.text in found.group():
                    stated.add(fact)
    return stated


def _minutes_said(summary: str) -> set[Decimal]:
    """Every length the summary gives, in minutes ("5.5 hours", "5h30", "330 minutes")."""
    said = {Decimal(found["hours"]) * 60 + Decimal(found["minutes"]) for found in _LENGTH.finditer(summary)}
    said |= {Decimal(found["hours"]) * 60 for found in _HOURS.finditer(summary)}
    said |= {Decimal(found["minutes"]) for found in _MINUTES.finditer(summary)}
    return said
