"""Which option of a list the user's answer takes, the totals it gives, and the values a
pending change replaces: parts of the fact rules (:mod:`ctxmgr._fact_weight`) kept apart
for its size."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator

import orjson

from ctxmgr.facts import Fact, find_facts, missing_facts

__all__ = ["REFERABLE", "chosen_option", "replaced_values", "totals"]

REFERABLE = ("code", "id", "number")
"""The kinds of fact that name a thing: an id, a code, a number."""

_ITEM = re.compile(r"(?<!\S)(\d{1,2})\.\s+(?=\S)")
_PICKED = re.compile(
    r"(?i:\b(?:option|choice|number|no\.|\#)\s*(?P<number>\d{1,2}|one|two|three|four|five)\b"
    r"|\b(?P<ordinal>first|second|third|fourth|fifth|last)\b)"
)
_CLOSING = re.compile(r",\s*(?:so|which|that)\b|[.!?](?=\s|$)")
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "first": 1, "second": 2, "third": 3,
            "fourth": 4, "fifth": 5}  # fmt: skip
_AGREES = re.compile(r"(?i:^\W*(?:yes|yeah|yep|sure|ok|okay|sounds good|that works|please proceed|go ahead))\b")


def totals(facts: Collection[Fact], text: str) -> set[Fact]:
    """The amounts of ``facts`` that ``text`` gives as a total ("Total Price: $216", "the
    total cost for this option is $207"): the sum an option costs, not its parts."""
    amounts = [fact for fact in facts if fact.kind == "amount"]
    totals = [text[m.end() : m.end() + 40] for m in _TOTAL.finditer(text)] if amounts else []
    return set(amounts) - set(missing_facts(amounts, "\n".join(totals))) if totals else set()


_TOTAL = re.compile(r"(?i:\btotal\b)")


def chosen_option(message: str, answer: str) -> str:
    """The part of ``message`` (the assistant passing on a search's options) that the
    user's ``answer`` takes: the item of its numbered list the answer picks ("option 2",
    "the first one", or a code only that item holds), or the whole message when it offers
    one option and the answer agrees ("Yes, please proceed"); "" when it takes none."""
    starts = list(_ITEM.finditer(message))
    ends = [m.start() for m in starts[1:]]
    if starts:  # the last item ends with its sentence: what follows speaks of them all ("so $1,648 for both")
        closing = _CLOSING.search(message, starts[-1].end())
        ends.append(closing.start() if closing is not None else len(message))
    items = [message[m.start() : end] for m, end in zip(starts, ends, strict=True)]
    if len(items) < 2:
        return message if _AGREES.search(answer) else ""
    picked = _PICKED.search(answer)
    if picked is not None:
        word = (picked["number"] or picked["ordinal"]).lower()
        index = len(items) if word == "last" else (int(word) if word.isdigit() else _NUMBERS[word])
        return items[index - 1] if 1 <= index <= len(items) else ""
    codes = [fact.text for fact in find_facts(answer) if fact.kind in REFERABLE]
    holding = {k for k, item in enumerate(items) for code in codes if code in item}
    return items[holding.pop()] if len(holding) == 1 else ""


def replaced_values(arguments: str, record: str) -> set[str]:
    """The values a change given ``arguments`` (JSON) replaces in a ``record`` a read
    returned (JSON): those the record holds where the arguments give another value, at
    the same place (the same keys, any item of a list). ``update_trip({"flights":
    [{"number": "HAT052"}]})`` on a record with ``{"flights": [{"number": "HAT252"},
    {"number": "HAT030"}]}`` replaces ``HAT252`` and ``HAT030``; a key the record holds
    elsewhere (``payment_id`` inside its ``payments`` list) is another place."""
    try:
        given, held = orjson.loads(arguments), orjson.loads(record)
    except orjson.JSONDecodeError:
        return set()
    new: dict[tuple[str, ...], set[str]] = {}
    for place, value in _leaves(given, ()):
        new.setdefault(place, set()).add(value)
    return {value for place, value in _leaves(held, ()) if place in new and value not in new[place]}


def _leaves(value: object, place: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    """Each string or number of ``value`` with its place: the keys down to it, a list's
    items all at one place."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*place, str(key)))
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, (*place, "*"))
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        yield place, str(value)
