"""Which option of a list the user's answer takes, the totals it gives, the values a
pending change replaces, the grounds the assistant gives and the values a pick by the
greatest or least of them needs: parts of the fact rules (:mod:`ctxmgr._fact_weight`)
kept apart for its size."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Sequence
from decimal import Decimal

import orjson

from ctxmgr._fact_words import label_pattern
from ctxmgr.facts import Fact, find_facts, missing_facts

__all__ = [
    "LINE",
    "REFERABLE",
    "chosen_option",
    "denied",
    "former",
    "grounds",
    "kept_parts",
    "picked_by",
    "replaced_values",
    "stated",
    "told_twice",
    "totals",
    "users_words",
    "without_workings",
]

REFERABLE = ("code", "id", "number")
"""The kinds of fact that name a thing: an id, a code, a number."""

LINE = re.compile(r"^(?:TOOL RESULT (?P<tool>\S+) \[(?P<id>[^\]\n]*)\][^:\n]*|(?P<role>[A-Z][A-Z_]*)): ", re.MULTILINE)
"""Where a message of a rendered transcript starts: its role, or the tool whose result it is."""

_ITEM = re.compile(r"(?<!\S)(\d{1,2})\.\s+(?=\S)")
_PICKED = re.compile(
    r"(?i:\b(?:option|choice|number|no\.|\#)\s*(?P<number>\d{1,2}|one|two|three|four|five)\b"
    r"|\b(?P<ordinal>first|second|third|fourth|fifth|last)\b)"
)
_CLOSING = re.compile(r",\s*(?:so|which|that)\b|[.!?](?=\s|$)")
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "first": 1, "second": 2, "third": 3,
            "fourth": 4, "fifth": 5}  # fmt: skip
_AGREES = re.compile(r"(?i:^\W*(?:yes|yeah|yep|sure|ok|okay|sounds good|that works|please proceed|go ahead))\b")


def stated(facts: Collection[Fact], texts: Sequence[str]) -> set[Fact]:
    """The facts of ``facts`` that ``texts`` state, together."""
    if not texts or not facts:
        return set()
    return set(facts) - set(missing_facts(facts, "\n\n".join(texts)))


def without_workings(message: str) -> str:
    """``message`` with the operands of the sums it works out in its words blanked:
    "$282 (Business) - $177 (Economy) = $105" tells $105; the $282 and $177 are its
    working, told where the message gives them otherwise."""
    if "=" not in message:
        return message
    return _WORKING.sub(lambda m: " " * len(m.group()), message)


# Two or more numbers, each with an optional note in brackets, joined by operators and
# followed by "=": what comes after it is the sum told.
_OPERAND = r"[$\u20ac\u00a3]?\d[\d,]*(?:\.\d+)?(?:\s*\([^()]{0,30}\))?"
_WORKING = re.compile(rf"(?<![\w.]){_OPERAND}(?:\s*[-+\u00d7x*/]\s*{_OPERAND})+(?=\s*=)")


def totals(facts: Collection[Fact], text: str) -> set[Fact]:
    """The amounts of ``facts`` that ``text`` gives as a total ("Total Price: $216", "the
    total cost for this option is $207"): the sum an option costs, not its parts."""
    amounts = [fact for fact in facts if fact.kind == "amount"]
    totals = [text[m.end() : m.end() + 40] for m in _TOTAL.finditer(text)] if amounts else []
    return stated(amounts, totals)


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


# A clause giving the ground of what the assistant does or offers, to its end.
_GROUND = re.compile(r"(?i:\b(?:since|because|given that|as you are|as you're)\b)[^.;:!?\n]{1,80}")


def grounds(facts: Collection[Fact], message: str) -> set[Fact]:
    """The facts of ``facts`` that ``message`` gives as the ground of what it does or
    offers ("Since you are a gold member, I can offer you a certificate": ``gold``): its
    own use of what a lookup returned, not a passing on.

    >>> facts = find_facts('{"membership": "gold", "since": "2024-05-01"}')
    >>> sorted(map(str, grounds(facts, "Since you are a gold member, I can offer $50.")))
    ['gold']
    """
    clauses = [match.group() for match in _GROUND.finditer(message)] if facts else []
    return stated(facts, clauses)


# A pick among records by the greatest or least of a field: "the gift card with the
# smallest balance", "the flight that has the earliest departure".
_SUPERLATIVE = re.compile(
    r"(?i:\b(?P<thing>[a-z]{3,}(?:[ _-][a-z]{3,})?)\s+(?:with|that\s+has|having)\s+the\s+"
    r"(?:smallest|largest|lowest|highest|biggest|least|most|earliest|latest|cheapest|longest|shortest)"
    r"\s+(?:remaining\s+|available\s+|current\s+)?(?P<field>[a-z]{3,})\b)"
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_RECORD = re.compile(r"\{[^{}]*\}")
_VALUED = ("amount", "number", "quantity")
_MONEY_FIELDS = frozenset(["balance", "amount", "price", "cost", "fare", "fee", "total", "value", "credit"])
_MONEY_WORDS = "|".join(sorted(_MONEY_FIELDS))


def picked_by(facts: Collection[Fact], span: str, asked: Sequence[str]) -> set[Fact]:
    """The values a pick the user's kept messages (``asked``) make by the greatest or least
    of a field needs ("use the gift card with the smallest balance"): the numbers the ``span``'s
    records of that thing (an object holding its name as a whole string: ``"gift_card"``) hold under a key
    naming that field (``"balance": 6``; a field naming money, under any key naming money:
    ``"amount": 113``), which the pick compares: the user asks for it in the kept messages
    (an assistant saying it paid "with the card with the smallest balance" made the pick
    already), on the span's records, and the kept messages state none of them.

    >>> span = ('TOOL RESULT get_user [c1]: {"gift_card_1": {"source": "gift_card", "amount": 6}, '
    ...         '"gift_card_2": {"source": "gift_card", "amount": 113}, "card_3": {"source": "card", "amount": 50}}')
    >>> facts = find_facts(span)
    >>> sorted(map(str, picked_by(facts, span, ["use the gift card with the smallest balance"])))
    ['113', '6']
    """
    picks = list(_SUPERLATIVE.finditer("\n".join(asked))) if asked and facts else []
    values: set[Decimal] = set()
    for pick in picks:
        thing, name = re.sub(r"[ _-]", "_", pick["thing"].lower()), pick["field"].lower()
        # A field naming money is compared by any key that names money ("balance" by "amount").
        word = _MONEY_WORDS if name in _MONEY_FIELDS else re.escape(name.rstrip("s"))
        under = re.compile(rf'"[A-Za-z_]*(?:{word})[A-Za-z_]*"\s*:\s*(-?\d+(?:\.\d+)?)')
        for record in _RECORD.finditer(span):
            if f'"{thing}"' in record.group().lower().replace(" ", "_"):  # a value or key, not part of an id
                values.update(abs(Decimal(match[1])) for match in under.finditer(record.group()))
    if not values:
        return set()
    return {fact for fact in facts if fact.kind in _VALUED and _value(fact) in values}


def _value(fact: Fact) -> Decimal | None:
    number = _NUMBER.search(fact.text.replace(",", ""))
    return abs(Decimal(number.group())) if number is not None else None


def users_words(rendered: str) -> list[str]:
    """The user's messages in a rendered transcript."""
    starts = list(LINE.finditer(rendered))
    if not starts:
        return []
    ends = [m.start() for m in starts[1:]] + [len(rendered)]
    return [rendered[m.end() : end] for m, end in zip(starts, ends, strict=True) if m["role"] in ("USER", "HUMAN")]


def told_twice(fact: Fact, said: list[set[Fact]], messages: list[str]) -> bool:
    """Whether the assistant says ``fact`` twice or more: in two messages, or twice in one
    message far enough apart not to be one item of a list ("1. W12345 ... 2. ..., so
    W12345 is the one")."""
    if sum(fact in stated for stated in said) >= 2:
        return True
    for message in messages:
        first = message.find(fact.text)
        if first >= 0 and message.find(fact.text, first + len(fact.text) + _APART) >= 0:
            return True
    return False


_APART = 100


def kept_parts(kept: str) -> tuple[str, str]:
    """``(system, recent)``: the kept system messages' text and the other kept messages'."""
    system: list[str] = []
    recent: list[str] = []
    starts = list(LINE.finditer(kept))
    if starts and starts[0].start() > 0:
        recent.append(kept[: starts[0].start()])
    for i, line in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(kept)
        (system if line["role"] in ("SYSTEM", "DEVELOPER") else recent).append(kept[line.start() : end])
    return "".join(system), "".join(recent)


_FORMER = re.compile(
    r"(?i:\b(?:previously|formerly|originally|original|old|prior|instead\ of|rather\ than|no\ longer|not|down\ from"
    r"|up\ from|replacing|(?:chang|mov|switch)(?:e|es|ed|ing)?\ (?:\w+\ ){0,4}from)\b)"
    r"\W{0,3}(?:\w+\W{1,3}){0,2}$"
)
"""Words before a value that mark it as what a change replaced ("previously $90", "move it
from June 3 to June 5")."""


def former(facts: Collection[Fact], *messages: str) -> set[Fact]:
    """The facts ``messages`` state only as what a change replaced: they write them, and
    each place comes a few words after "previously", "originally", "old", "instead of",
    "rather than", "no longer", "not", "down from", "changed from"... ("New price: $40
    (previously $90)": ``$90``; "move it from June 3 to June 5": ``June 3``)."""
    return _marked(facts, messages, _FORMER)


_DENIED = re.compile(r"(?i:\b(?:instead\ of|rather\ than|no\ longer|not)\b)\W{0,3}(?:\w+\W{1,3}){0,2}$")


def denied(facts: Collection[Fact], *messages: str) -> set[Fact]:
    """The facts ``messages`` state only as what is not wanted: each place comes a few
    words after "not", "instead of", "rather than" or "no longer" ("one-way, not round
    trip"). The user's "originally from ATL" or "move it from June 3" names the record
    the request is about, which :func:`former` would set aside."""
    return _marked(facts, messages, _DENIED)


def _marked(facts: Collection[Fact], messages: Sequence[str], marker: re.Pattern[str]) -> set[Fact]:
    marked = set()
    for fact in facts:
        places = [(message, at) for message in messages for at in _places(fact, message)]
        if places and all(marker.search(message, max(0, at - 80), at) for message, at in places):
            marked.add(fact)
    return marked


def _places(fact: Fact, message: str) -> list[int]:
    """Where ``message`` writes ``fact``: its text, or a label in any of its spellings."""
    if fact.kind in ("label", "choice", "category"):
        return [match.start() for match in label_pattern(fact.text).finditer(message)]
    places = []
    at = message.find(fact.text)
    while at >= 0:
        places.append(at)
        at = message.find(fact.text, at + len(fact.text))
    return places
