"""Which facts of a span a summary must keep, and which it may leave out.

:func:`ctxmgr.facts.find_facts` lists every fact of a span; most are read-only detail a
careful summary rightly drops (a profile's postcode, a record's creation time to the
second, the rows of a search nobody chose). :func:`weigh_facts` makes the judgement a
careful reader makes, by where each fact is said in the rendered span (``USER:``,
``ASSISTANT:`` lines, ``[calls tool name(...)]``, ``TOOL RESULT name [...]:`` lines) and
what the kept recent messages say. A fact is **required**, from the most important:

1. an argument of a call that changes something: a tool whose name holds a verb such as
   book, cancel, update, refund, send, write, create, delete, add, remove, pay,
   transfer (``cancel_order(order_id="W12345")``: ``W12345`` is required), not one that
   reads or searches (``get_order``, ``search_products``, ``list_files``);
2. what the user stated ("my order is W12345, ship it to 10 Main St by June 3");
3. what the assistant told the user or confirmed ("the refund of $54.20 goes back to
   your card ending 4421");
4. an id or a code the kept recent messages refer to without stating it: they say
   "that order", "the booking", "this ticket" and state none of the span's facts of that
   kind, so the last one the span names with that word is required.

Every other fact is **optional**: facts found only in tool results (a record fetched,
a search's rows) and never used again, and the arguments of read-only calls. A fact
the kept messages state again is optional whatever its source: it survives in them.

The rules read tool names and the words around ids, never a domain's vocabulary: a
lookup named ``get_user_details`` is read-only because of ``get``, whatever it fetches.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import lru_cache

from ctxmgr.facts import Fact, missing_facts

__all__ = ["CHANGE_VERBS", "weigh_facts"]

CHANGE_VERBS = frozenset(
    [
        "book",
        "cancel",
        "update",
        "refund",
        "send",
        "write",
        "create",
        "delete",
        "remove",
        "add",
        "insert",
        "modify",
        "edit",
        "change",
        "set",
        "put",
        "post",
        "patch",
        "pay",
        "purchase",
        "buy",
        "order",
        "reserve",
        "transfer",
        "submit",
        "upload",
        "move",
        "rename",
        "apply",
        "approve",
        "grant",
        "revoke",
        "confirm",
        "charge",
        "issue",
        "assign",
        "close",
        "open",
        "merge",
        "commit",
        "push",
        "deploy",
        "publish",
        "replace",
        "save",
        "store",
        "exchange",
        "return",
        "upgrade",
        "downgrade",
        "register",
        "enroll",
        "schedule",
        "reschedule",
    ]
)
"""Words of a tool's name that make it a call that changes something."""

_RANK_CHANGE, _RANK_USER, _RANK_TOLD, _RANK_REFERRED = 0, 1, 2, 3

_LINE = re.compile(r"^(?:TOOL RESULT (?P<tool>\S+) \[[^\]\n]*\][^:\n]*|(?P<role>[A-Z][A-Z_]*)): ", re.MULTILINE)
_CALL = re.compile(r"\[calls tool (?P<name>[^\s(]+)\((?P<args>.*?)\) id=[^\]\s]*\]", re.DOTALL)
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")

_NOUNS = (
    "reservation|booking|order|ticket|confirmation|account|invoice|payment|certificate|card|flight|case|"
    "claim|issue|file|branch|commit|user|customer|item|product|shipment|package|transaction|subscription|"
    "policy|appointment|request|record"
)
# The look-ahead (each word's first letter, case-folded as the words are) only spares the
# engine trying every word at every position of the kept text: about half the time.
_REFERRING = re.compile(rf"(?i:\b(?=[tsi])(?:that|this|the|same|those|these|it'?s|its)\s+(?P<noun>{_NOUNS})s?\b)")
_NOUN_BEFORE = re.compile(rf"(?i:(?P<noun>{_NOUNS})s?)[\w\"']*\W{{0,6}}$")


def _changes(tool: str) -> bool:
    """Whether a tool's name names a change (``cancel_reservation``, ``sendEmail``)."""
    return any(word.lower() in CHANGE_VERBS for word in _NAME_WORDS.findall(tool))


def _segments(span: str) -> dict[int, list[str]]:
    """The span's text by rank of what says it: change calls' arguments, the user's
    words and the assistant's words (read calls' arguments and tool results are left)."""
    by_rank: dict[int, list[str]] = {_RANK_CHANGE: [], _RANK_USER: [], _RANK_TOLD: []}
    starts = list(_LINE.finditer(span))
    for i, line in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(span)
        body = span[line.end() : end]
        role = line["role"]
        if role == "USER" or role == "HUMAN":
            by_rank[_RANK_USER].append(body)
        elif role == "ASSISTANT" or role == "MODEL":
            told = body
            for call in _CALL.finditer(body):
                if _changes(call["name"]):
                    by_rank[_RANK_CHANGE].append(call["args"])
                told = told.replace(call.group(), " ")
            by_rank[_RANK_TOLD].append(told)
    return by_rank


def _stated(facts: Sequence[Fact], texts: list[str]) -> set[Fact]:
    if not texts:
        return set()
    return set(facts) - set(missing_facts(facts, "\n\n".join(texts)))


@lru_cache(maxsize=2)
def _said_by(facts: tuple[Fact, ...], span: str) -> dict[Fact, int]:
    """The facts of ``facts`` each with the most important rank of the span's text that
    states it (the kept messages aside). Whether a text states a fact does not depend on
    the other facts looked for, so each text is asked only about the facts still open.
    Kept for the last two spans: the offline digest weighs a span it must shorten, and
    the fact check then weighs the same span again with the kept messages."""
    first: dict[Fact, int] = {}
    for rank, texts in _segments(span).items():
        left = [fact for fact in facts if fact not in first]
        if not left:
            break
        for fact in _stated(left, texts):
            first[fact] = rank
    return first


def _named(facts: Sequence[Fact], span: str) -> list[tuple[Fact, int, str]]:
    """Each id, code and number of ``facts`` with the last place in ``span`` where a noun
    of :data:`_NOUNS` stands before it ("order #W12345"), and that noun, in ``facts``'s order."""
    named: list[tuple[Fact, int, str]] = []
    for fact in facts:
        if fact.kind not in ("code", "id", "number"):
            continue
        at = span.rfind(fact.text)
        while at >= 0:
            before = _NOUN_BEFORE.search(span, max(0, at - 40), at)
            if before is not None:
                named.append((fact, at, before["noun"].lower()))
                break
            at = span.rfind(fact.text, 0, at)
    return named


def _referred(named: list[tuple[Fact, int, str]], nouns: set[str], restated: set[Fact]) -> set[Fact]:
    """The ids the kept messages point at ("that order", one of ``nouns``) without stating
    any of its kind: of :func:`_named`'s, the last one named with each such noun."""
    latest: dict[str, tuple[int, Fact]] = {}
    stated_nouns: set[str] = set()
    for fact, at, noun in named:
        if fact in restated:
            stated_nouns.add(noun)
        elif noun not in latest or latest[noun][0] < at:
            latest[noun] = (at, fact)
    return {fact for noun, (_at, fact) in latest.items() if noun in nouns and noun not in stated_nouns}


def weigh_facts(facts: Sequence[Fact], span: str, kept: str = "") -> dict[Fact, int]:
    """The required facts of ``facts`` (found in the rendered ``span``), each with its
    rank (0 the most important; see the module docstring); the others are optional.

    ``kept`` is the rendered text of the messages kept after the summary.

    >>> from ctxmgr.facts import find_facts
    >>> span = ('USER: cancel order W12345 please\\n'
    ...         'ASSISTANT: [calls tool get_order({"order_id": "W12345"}) id=c1]\\n'
    ...         'TOOL RESULT get_order [c1]: {"zip": "78750", "total": "$54.20"}\\n'
    ...         'ASSISTANT: [calls tool cancel_order({"order_id": "W12345"}) id=c2]')
    >>> facts = find_facts(span, ignore={"c1", "c2"})
    >>> {str(f): rank for f, rank in weigh_facts(facts, span).items()}
    {'W12345': 0}
    """
    # A fact takes the first rank whose text states it, unless the kept messages state it
    # again: the kept text is asked only about the facts its answer changes, the ranked
    # ones and those a reference may point at.
    first = _said_by(tuple(facts), span)
    nouns = {match["noun"].lower() for match in _REFERRING.finditer(kept)} if kept else set()
    named = _named(facts, span) if nouns else []
    asked = set(first).union(fact for fact, _at, _noun in named)
    restated = _stated([fact for fact in facts if fact in asked], [kept]) if kept and asked else set()
    ranks = {fact: rank for fact, rank in first.items() if fact not in restated}
    for fact in _referred(named, nouns, restated):
        ranks.setdefault(fact, _RANK_REFERRED)
    order = {fact: i for i, fact in enumerate(facts)}
    return dict(sorted(ranks.items(), key=lambda item: (item[1], order[item[0]])))


def required_first(missing: Collection[Fact], ranks: dict[Fact, int]) -> tuple[list[Fact], list[Fact]]:
    """``(required, optional)`` of ``missing``: the required ones by rank, then span order."""
    place = {fact: i for i, fact in enumerate(ranks)}
    required = sorted((f for f in missing if f in ranks), key=place.__getitem__)
    return required, [f for f in missing if f not in ranks]
