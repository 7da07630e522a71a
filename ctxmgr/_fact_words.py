"""Facts a word makes by where it stands: labels, choices and places' codes.

Most facts of :mod:`ctxmgr.facts` hold a digit, a currency sign or an "@"; these are words
that become facts only in their context (see the module docstring of :mod:`ctxmgr.facts`):

- a **label**, a short lower-case value under a key naming a category a record is put in
  (``"membership": "gold"``, ``"cabin": "basic_economy"``, ``"flight_type": "round_trip"``);
- a **choice**, an option of a list in brackets ("the reason (change of plan, airline
  cancelled flight, or other reasons)");
- a **place's code**, three or four capitals spoken of as a place ("landing at EWR", "SEA
  to DFW", "JFK → MCO"), not an acronym ("the IATA code", "USD").

:func:`worded` gives each with where it starts and the value it is matched by: a label or
a choice by its words with spaces for their joiners (matched in any case and number), a
place's code by its letters as a code is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["worded"]

_LABEL = re.compile(
    r'"(?:(?:[A-Za-z]+_)*(?:membership|tier|level|class|cabin|plan|reason|category|grade|priority|rank|subscription)'
    r'|[A-Za-z]+_type)"\s*:\s*"(?P<label>[a-z]{3,}(?:[_ ][a-z]+){0,3})"'
)
_NOT_LABELS = frozenset(["yes", "true", "false", "null", "none", "unknown", "other", "default", "standard", "normal"])

_OPTION = r"[a-z]{2,}(?:[ -][a-z]{2,}){0,3}"
_CHOICES = re.compile(rf"\((?P<options>{_OPTION}(?:,\ {_OPTION})*,?\ or\ {_OPTION})\)")
_OR_SPLIT = re.compile(r",\ or\ |,\ |\ or\ ")

# The capitals are found first (an expression that starts with a class is searched at C
# speed), then the words around them read.
_CAPS = re.compile(r"[A-Z](?<![\w-][A-Z])[A-Z]{2,3}(?![\w-])")  # (?<![\w-])[A-Z]{3,4}(?![\w-])
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
    """The labels, then the places' codes, then the choices of ``text``, each kind in order."""
    yield from _labels(text)
    yield from _places(text)
    yield from _choices(text)


def _labels(text: str) -> Iterator[Worded]:
    if '":' not in text:
        return
    for match in _LABEL.finditer(text):
        label = match["label"]
        if label not in _NOT_LABELS:
            yield match.start("label"), "label", label, ("label", label.replace("_", " "))


def _places(text: str) -> Iterator[Worded]:
    for match in _CAPS.finditer(text):
        code, at, end = match.group(), match.start(), match.end()
        if code in _NOT_PLACES or (at and text[at - 1] == '"' and text[end : end + 1] == '"'):
            continue  # a record's field ("origin": "JFK") is read where it is spoken of
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
