"""Facts a word makes by where it stands: labels, categories, choices and places' codes.

Most facts of :mod:`ctxmgr.facts` hold a digit, a currency sign or an "@"; these are words
that become facts only in their context (see the module docstring of :mod:`ctxmgr.facts`):

- a **label**, a short lower-case value under a key naming a category a record is put in
  (``"membership": "gold"``, ``"cabin": "basic_economy"``, ``"flight_type": "round_trip"``);
- a **category**, a word before a noun naming a category in prose ("a Gold member",
  "business class");
- a **choice**, an option of a list in brackets ("the reason (change of plan, airline
  cancelled flight, or other reasons)");
- a **place's code**, three or four capitals spoken of as a place ("landing at EWR", "SEA
  to DFW", "JFK → MCO"), not an acronym ("the IATA code", "USD").

:func:`worded` gives each with where it starts and the value it is matched by: a label,
a category or a choice by its words with spaces for their joiners (matched in any case
and number), a place's code by its letters as a code is. :func:`said_label` tells
whether a text names a label, a category or a choice.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

__all__ = ["label_pattern", "said_label", "worded"]

_LABEL = re.compile(
    r'"(?:(?:[A-Za-z]+_)*(?:membership|tier|level|class|cabin|plan|reason|category|grade|priority|rank|subscription)'
    r'|[A-Za-z]+_type)"\s*:\s*"(?P<label>[a-z]{3,}(?:[_ ][a-z]+){0,3})"'
)
_NOT_LABELS = frozenset(["yes", "true", "false", "null", "none", "unknown", "other", "default", "standard", "normal"])

# A word naming the category a thing is in, in prose: "a Gold member", "business class"
# ("travel plans" are intentions: a plan names a category in the singular only).
# The noun is searched first (rare, and an expression starting with a letter is tried at
# every position otherwise), then the word before it read.
_CATEGORY_NOUN = re.compile(r"[ -](?:(?:class|cabin|membership|member|tier|level|subscription)(?:e?s)?|plan)\b")
_CATEGORY_WORD = re.compile(r"(?<![\w-])[A-Za-z][a-z]{3,}\Z")
# The words that stand there and name none: a verb acting on the category ("upgrade
# class", "change plan"), a word comparing or pointing ("same class", "current plan").
_NOT_CATEGORIES = frozenset(
    {"change", "changing", "changed", "upgrade", "upgrading", "upgraded", "downgrade", "downgrading", "like",
     "exact", "same", "current", "different", "higher", "lower", "cheapest", "cheaper", "cheap", "other",
     "this", "that", "your", "their", "which", "what", "each", "every", "family", "team", "staff", "crew",
     "cabin", "class", "member", "membership", "level", "tier", "plan", "with", "from", "into", "about",
     "first", "second", "then", "when", "whose", "whole", "entire", "such", "some", "more", "less",
     "most", "least", "better", "best", "worse", "desired", "requested", "preferred", "selected", "chosen",
     "available", "specific", "particular", "certain", "existing", "previous", "original", "booked", "paid"}
)  # fmt: skip

_OPTION = r"[a-z]{2,}(?:[ -][a-z]{2,}){0,3}"
_CHOICES = re.compile(rf"\((?P<options>{_OPTION}(?:,\ {_OPTION})*,?\ or\ {_OPTION})\)")
_OR_SPLIT = re.compile(r",\ or\ |,\ |\ or\ ")

# The capitals are found first (an expression that starts with a class is searched at C
# speed), then the words around them read.
# A record's field ("origin": "JFK", quoted on both sides) is read where it is spoken of,
# not where it is stored: the expression passes it over itself.
_CAPS = re.compile(r'[A-Z](?<![\w-][A-Z])(?:(?<!"[A-Z])[A-Z]{2,3}(?![\w-])|[A-Z]{2,3}(?![\w"-]))')
_PLACE_BEFORE = re.compile(
    r"(?:(?<![^\W_])(?:to|from|at|via|or|into|either|through|and)\s+|[A-Z]{3,4}\ ?(?:-|\u2013|\u2192|->)\ ?)\Z"
)
_PLACE_AFTER = re.compile(r"\ ?(?:-|\u2013|\u2192|->|\ to\ |\ or\ )\ ?[A-Z]{3,4}(?![\w-])")
_NOT_PLACES = frozenset(
    {"USA", "USD", "EUR", "GBP", "CAD", "AUD", "JPY", "CHF", "CEO", "FAQ", "ASAP", "API", "URL", "PDF",
     "EST", "PST", "UTC", "GMT", "CST", "MST", "EDT", "PDT", "CDT", "MDT", "ETA", "TBD", "FYI"}
)  # fmt: skip

Worded = tuple[int, str, str, tuple[str, str]]
"""Where a fact starts, its kind, its spelling and the value it is matched by."""


def worded(text: str) -> Iterator[Worded]:
    """The labels, then the categories, then the places' codes, then the choices of
    ``text``, each kind in order."""
    yield from _labels(text)
    yield from _categories(text)
    yield from _places(text)
    yield from _choices(text)


def _labels(text: str) -> Iterator[Worded]:
    if '":' not in text:
        return
    for match in _LABEL.finditer(text):
        label = match["label"]
        if label not in _NOT_LABELS:
            yield match.start("label"), "label", label, ("label", label.replace("_", " "))


def _categories(text: str) -> Iterator[Worded]:
    for noun in _CATEGORY_NOUN.finditer(text):
        at = noun.start()
        match = _CATEGORY_WORD.search(text, max(0, at - 24), at)
        if match is not None and (word := match.group().lower()) not in _NOT_CATEGORIES:
            yield match.start(), "category", match.group(), ("label", word)


def _places(text: str) -> Iterator[Worded]:
    for match in _CAPS.finditer(text):
        code, at, end = match.group(), match.start(), match.end()
        if code in _NOT_PLACES:
            continue
        if _PLACE_BEFORE.search(text, max(0, at - 10), at) or _PLACE_AFTER.match(text, end):
            yield at, "code", code, ("word", code.lower())


def _choices(text: str) -> Iterator[Worded]:
    if " or " not in text:
        return
    for match in _CHOICES.finditer(text):
        at = match.start("options")
        for option in _OR_SPLIT.split(match["options"]):
            yield at, "choice", option, ("label", option.replace("-", " "))
            at += len(option)


def said_label(label: str, text: str, lowered: str, *, choice: bool = False) -> bool:
    """Whether ``text`` (``lowered`` is its lower case) names ``label`` in any case, its
    words joined by spaces, hyphens or underscores, each also in the plural ("Change of
    plans" for ``change_of_plan``, "round-trip" for ``round_trip``). A ``choice`` of two
    words or more is also named by its words' stems in one sentence, in any order and
    form: "my plans have changed" takes the option "change of plan"."""
    # Most labels asked lack even their first word's stem: no expression is run for them.
    first = re.split(r"[_ -]", label, maxsplit=1)[0]
    stem = first[:-1] if len(first) > 3 and first.endswith("s") else first
    if text.isascii() and (stem[:5] if choice else stem).lower() not in lowered:
        return False
    if label_pattern(label).search(text) is not None:
        return True
    return choice and _stems_said(_stems(label), lowered)


@lru_cache(maxsize=256)
def label_pattern(label: str) -> re.Pattern[str]:
    """The expression :func:`said_label` finds ``label`` by, in its own words."""
    # Each word with its plural ending made optional: "reasons" is said by "reason" too.
    stems = (word[:-1] if len(word) > 3 and word.endswith("s") else word for word in re.split(r"[_ -]", label))
    words = (re.escape(stem) + "(?:e?s)?" for stem in stems)
    return re.compile(r"(?<![^\W_])" + r"[\s_-]+".join(words) + r"(?![^\W_])", re.IGNORECASE)


@lru_cache(maxsize=256)
def _stems(option: str) -> tuple[re.Pattern[str], ...]:
    # Five letters hold a word's stem in its usual forms ("cancel", "cancelled", "canceled").
    words = [word.lower() for word in re.split(r"[_\s-]+", option) if word.lower() not in _FILLERS]
    return tuple(re.compile(rf"(?<![^\W_]){re.escape(word[:5])}") for word in words) if len(words) > 1 else ()


_FILLERS = frozenset(["", "a", "an", "the", "of", "or", "and", "to", "for", "in", "on", "by", "with", "my", "your"])
_SENTENCE = re.compile(r"[^.!?;\n]+")


def _stems_said(stems: tuple[re.Pattern[str], ...], lowered: str) -> bool:
    if not stems or stems[0].search(lowered) is None:
        return False
    return any(all(stem.search(part) for stem in stems) for part in _SENTENCE.findall(lowered))
