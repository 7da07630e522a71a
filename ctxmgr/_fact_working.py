"""Facts a summary states through other facts: a length in other units.

:func:`ctxmgr.facts.missing_facts` asks whether a summary holds each fact's value in some
spelling. A length written in two units is two facts there ("5 hours 30 minutes":
``5 hours`` and ``30 minutes``), which a careful summary gives as one ("5.5 hours", "330
minutes", "5h30", "5 hrs 30 mins"): both are then stated, and a reader loses nothing.

A sum is not read so: a summary that keeps "$1,000 from certificates and $327 from gift
cards" may leave out the "$1,327 in all" the assistant worked out, but a total a user
agreed to is as often the sum of the prices a summary lists ("HAT110 at $105, HAT172 at
$102": the $207 the user accepted), and that total is what a reader needs.

:func:`stated_through` returns the facts of a missing list that the summary states in
such a way; :func:`lacking` is what the fact check reports missing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal

from ctxmgr.facts import Fact, missing_facts

__all__ = ["lacking", "stated_through"]

_LENGTH = re.compile(
    r"(?<![\d.])(?P<hours>\d{1,3})\s*(?:hours?|hrs?|h)\.?,?\s*(?:and\s+)?(?P<minutes>\d{1,2})\s*(?:minutes?|mins?|m)\b",
    re.IGNORECASE,
)
_HOURS = re.compile(r"(?<![\d.])(?P<hours>\d{1,3}(?:\.\d+)?)\s*(?:hours?|hrs?|h)\b(?!\s*(?:and\s+)?\d)", re.IGNORECASE)
_MINUTES = re.compile(r"(?<![\d.:])(?P<minutes>\d{1,4})\s*(?:minutes?|mins?)\b", re.IGNORECASE)
# "5h30": hours and minutes run together, the minutes' unit left out.
_RUN_TOGETHER = re.compile(r"(?<![\w.])(?P<hours>\d{1,3})h(?P<minutes>[0-5]\d)(?!\w|\.\d)", re.IGNORECASE)


def lacking(facts: Sequence[Fact], span: str, summary: str) -> list[Fact]:
    """The facts of ``facts`` (found in ``span``) that ``summary`` states in no way: neither
    in some spelling (:func:`ctxmgr.facts.missing_facts`) nor through others."""
    missing = missing_facts(facts, summary)
    through = stated_through(missing, span, summary) if missing else set()
    return [fact for fact in missing if fact not in through]


def stated_through(missing: Sequence[Fact], span: str, summary: str) -> set[Fact]:
    """The facts of ``missing`` (found in the rendered ``span``) that ``summary`` states
    through others: a length in other units (see the module docstring).

    >>> from ctxmgr.facts import find_facts
    >>> span = "ASSISTANT: Flight LAX to EWR (5 hours 30 minutes) is over 3 hours."
    >>> sorted(str(f) for f in stated_through(find_facts(span), span, "LAX-EWR is 5.5 hours."))
    ['30 minutes', '5 hours']
    """
    lengths = [fact for fact in missing if fact.kind == "quantity"]
    if not lengths:
        return set()
    return _lengths(lengths, span, _minutes_said(summary))


def _lengths(facts: list[Fact], span: str, said: set[Decimal]) -> set[Fact]:
    """The hour and minute facts of lengths written in both units ("5 hours 30 minutes")
    that the summary gives in other units."""
    if not said:
        return set()
    stated: set[Fact] = set()
    for found in _LENGTH.finditer(span):
        if Decimal(found["hours"]) * 60 + Decimal(found["minutes"]) in said:
            stated |= {fact for fact in facts if fact.text in found.group()}
    return stated


def _minutes_said(summary: str) -> set[Decimal]:
    """Every length the summary gives, in minutes ("5.5 hours", "5h30", "330 minutes")."""
    said = {Decimal(found["hours"]) * 60 + Decimal(found["minutes"]) for found in _LENGTH.finditer(summary)}
    said |= {Decimal(found["hours"]) * 60 for found in _HOURS.finditer(summary)}
    said |= {Decimal(found["minutes"]) for found in _MINUTES.finditer(summary)}
    said |= {Decimal(found["hours"]) * 60 + Decimal(found["minutes"]) for found in _RUN_TOGETHER.finditer(summary)}
    return said
