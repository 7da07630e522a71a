"""Which facts of a span a summary must keep, and which it may leave out.

:func:`ctxmgr.facts.find_facts` lists every fact of a span; most are read-only detail a
careful summary rightly drops (a profile's postcode, a record's creation time to the
second, the rows of a search nobody chose). :func:`weigh_facts` makes the judgement a
careful reader makes, by where each fact is said in the rendered span (``USER:``,
``ASSISTANT:`` lines, ``[calls tool name(...)]``, ``TOOL RESULT name [...]:`` lines) and
what the kept messages say. A fact is **required**, from the most important:

1. an argument of a call that changes something: a tool whose name holds a verb such as
   book, cancel, update, refund, send, write, create, delete, add, remove, pay,
   transfer (``cancel_order(order_id="W12345")``: ``W12345`` is required), not one that
   reads or searches (``get_order``, ``search_products``, ``list_files``: a name that
   starts with a verb that reads is read-only whatever follows), and not one whose
   result is an error (it changed nothing: ``pay_invoice(card="card_1")`` answered
   "Error: card declined", then paid with ``card_2``: ``card_2`` is required, ``card_1``
   is not; but while no call of the same tool has succeeded since, the change is still
   to be made and what the failed call was given is open, required after the user's
   words: ``book_trip(flights=["HAT223", "HAT052"])`` answered "Error: no seats", then
   nothing booked keeps ``HAT223``); and the money such a call's result reports moved, first stated there: a
   number under a key naming a sum paid or given back (amount, refund, total, paid,
   charge, fee, balance; not a price, a cost or a fare, which describe what was bought)
   under no such key before it in the span (``return_order`` answering
   ``{"refund_amount": 54.2, "item_price": 60}``: ``54.2`` is required, ``60`` is not;
   a sign is the money's direction, ``"amount": -54.2`` is ``54.2``, and a sum given
   back is first stated where it is first given back, though it was paid before: a
   ``cancel_order`` answering ``{"payments": [{"amount": 54.2}, {"amount": -54.2}]}``
   after ``get_order`` showed the payment reports the refund of ``54.2``);
2. what the user stated ("my order is W12345, ship it to 10 Main St by June 3"; "move it
   from June 3", "originally from ATL": the record asked about), except what the user
   writes only as not wanted, a few words after "not", "instead of", "rather than" or "no
   longer" each time ("one-way, not round trip": round trip is optional);
3. what the assistant told the user, unless it only passed on what a read-only call
   returned:

   - what it says of its own (a policy, a date it worked out: "it renews on June 1st"),
     what a tool that works things out returned (``calculate``, ``think``: the
     assistant's own working, though a search's row holds the same number: "the new
     flights total $243" after ``calculate("122 + 121")``), except in a message that
     passes on a search's results (states what a search returned beyond what it was
     asked: the date searched is no option): the prices and the sums of the options it
     lists there are options too; and except a plan the user replaced:
     what a message proposes that the assistant's next message after the user's answer,
     restating the plan (it says again at least one of its facts), leaves out, and that
     nothing after the proposal states again ("a double room, June 2 to June 9, for
     $700?", "only the first night", "then June 2, one night, for $100?": June 9 and
     $700 are optional); a count it tells of a list a lookup returned is passed on from
     that lookup ("you have two items in your cart" after ``get_cart`` answered
     ``{"items": [..., ...]}``: a list of as many things, under a key that shares a word
     with the count); the operands of a sum it works out in its words are its working
     ("$282 (Business) - $177 (Economy) = $105" tells $105); and what it writes only as
     replaced (markers as in the next item: "10:00 instead of 09:00": 09:00 is optional);
   - what it confirms after a change that succeeded ("Done: $54.20 goes back to
     card_4421486": both, though the card came from a lookup of the profile; after
     "Error: not enough seats on HAT088", a message offering other flights confirms
     nothing), and any fact a change's
     arguments or result hold that it states, except what it writes only as what the
     change replaced: "previously", "formerly", "originally", "old", "prior", "instead
     of", "rather than", "no longer", "not", "down from", "up from", "replacing" or
     "changed (moved, switched) ... from" a word or two before each place it writes it
     ("now $40 a month (previously $90)": $90 is optional; "one-way, not round trip");
   - what it passed on from a lookup (``get_order``...) only when it says it twice (in
     two messages, or twice far apart in one: "1. T-1001 ... 4. T-3003 ...; the one
     waiting on you is T-3003") or when a change acts on the record looked up (it is
     given the record's id under a key named after its own object: ``order_id`` of
     ``update_order_delivery``, in the span or the kept messages; ``user_id`` of
     ``book_reservation`` is the owner, not the object): "W12345 is due on 2024-06-03",
     then ``update_order_delivery(order_id="W12345", date="2024-06-05")`` keeps
     ``2024-06-03``; not a field the change's result gives again as it was (the record's
     creation date an update echoes with the whole record), nor, for the confirmation
     above, what a change's result echoes of what a read before it stated;
   - what it passed on from a search (``search_products``: "1. LX-4410 at $849 2.
     ZB-1200 at $799") never by telling alone: the option chosen is what the user says
     ("the ZB-1200") or what a change is given, and the total the assistant gave for the
     option the user's answer takes, the sum the user agreed to ("1. ... Total Price: $295
     2. ... Total Price: $216", "Option 2, please": ``$216``; the item of a numbered list
     picked by its number, an ordinal or a code only it holds, or the one option offered
     when the answer agrees: "the total cost is $207. Proceed?", "Yes, please proceed");
   - the money of a record a request of the user still acts on: the user's words ask
     for a change (a word of :data:`CHANGE_VERBS` in any form, "cancelling", not one of
     the nouns records are named by, "my order") and name the record's id; a read was
     given that id (not its owner's: ``user_id``, ``customer_id`` say whose records,
     not which) and no later read by the same tool of a record the user did not name
     (the assistant went looking for another: "I think it's W12345", read, "that one
     is a trip to Boston", another read), and no change has succeeded since the user
     last asked for one: the sums the record says were paid (read as a change's reported money above) are what the
     open request turns on ("I want a refund for order W12345", ``get_order`` answering
     ``{"paid": 54.2, "item_price": 60}``, the refund not made yet: ``54.2`` is
     required);
   - the id of a record it read by that id and told the user, once or more ("You have
     two trips on May 17: D1EW9B and 9HBUV8": both, the handles the user may come back
     with), not the rest of what the record holds;
   - what it gives as the ground of what it does or offers, though a lookup returned it
     ("since", "because", "given that": "Since you are a gold member, I can offer you a
     certificate": ``gold``);
   - the id of the record the user's words point at without naming it: a code or an id
     the user stated (not an owner's id) is held by the result of exactly one record
     read by its id ("my flight HAT045 was delayed", two reservations read, only
     3JA7XV's flights hold HAT045: ``3JA7XV`` is required);
4. an id or a code the kept recent messages refer to without stating it: they say
   "that order", "the booking", "that delayed ticket" and state no value after that word
   themselves, and the span names none of its own of that kind again in them, so the
   last one the span names right after that word ("order W12345", ``"order_id":
   "W12345"``) is required;
   and what a change the kept messages make replaces in a record the span read: the
   record as it stands before the change, which the change is checked against
   (``get_trip(trip_id="T1")`` answered ``{"flights": [{"number": "HAT252", "date":
   "2024-05-21"}]}``, then the kept ``update_trip(trip_id="T1", flights=[{"number":
   "HAT052", "date": "2024-05-21"}])``: ``HAT252`` is required; the same keys at the
   same place, any item of a list; what a change in the span made is done, and what it
   replaced is history, optional as above); and what a pick the user asks for in the kept
   messages by the greatest or least of a field compares: "use the gift card with the
   smallest balance" makes each number of the span's gift card records under a key
   naming the field required (a field naming money, any key naming money: ``{"source":
   "gift_card", "amount": 6}``).

Every other fact is **optional**: facts found only in tool results (a record fetched,
a search's rows) and never used again, and the arguments of read-only calls. A fact
the kept recent messages state again is optional whatever its source: it survives in
them. A fact the kept system messages (the instructions) state is optional when only
the assistant told it (it quotes its instructions: "extra bags cost $50"), not when the
user said it, a change was given it or the assistant's last words in the span offer it
with a question no user message there answers ("you are eligible for a $50 certificate;
shall I issue it?"): the instructions' "up to 3 checked bags" does
not carry the user's "add 3 checked bags". A label (``gold``, ``basic_economy``: see
:mod:`ctxmgr.facts`) comes in every fare and rule the assistant quotes: told twice, it is
no more required, it marks no message as passing on options, and the instructions naming
it ("gold members get...") are no quoting. A place's code (``EWR``) is required when
the user says it, a change is given it or the kept messages point at it, never by the
assistant's words alone: it writes routes in every message ("Miami (MIA) to Denver"); so
is a choice, an option of a list the assistant offers ("the reason (change of plan,
airline cancelled flight, or other reasons)"): the one the user takes is required, in
its words or in others of the same stems ("my plans have changed"); and so is a
category the span names in prose ("business class", "a Gold member"): the user's "the
cheapest business round trip" makes ``business`` required, the assistant's "as a Silver
member" alone does not. A category is a label otherwise.

The rules read tool names and the words around ids, never a domain's vocabulary: a
lookup named ``get_user_details`` is read-only because of ``get``, whatever it fetches.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache

import orjson

from ctxmgr._fact_options import (
    LINE as _LINE,
    REFERABLE as _REFERABLE,
    chosen_option,
    denied,
    former,
    grounds,
    kept_parts,
    picked_by,
    replaced_values,
    stated as _stated,
    told_twice,
    totals,
    users_words,
    without_workings,
)
from ctxmgr.facts import Fact, _fact_keys, find_facts

__all__ = ["CHANGE_VERBS", "READ_VERBS", "SEARCH_VERBS", "WORKING_VERBS", "weigh_facts"]

CHANGE_VERBS = frozenset([
    "book", "cancel", "update", "refund", "send", "write", "create", "delete", "remove", "add",
    "insert", "modify", "edit", "change", "set", "put", "post", "patch", "pay", "purchase", "buy",
    "order", "reserve", "transfer", "submit", "upload", "move", "rename", "apply", "approve", "grant",
    "revoke", "confirm", "charge", "issue", "assign", "close", "open", "merge", "commit", "push",
    "deploy", "publish", "replace", "save", "store", "exchange", "return", "upgrade", "downgrade",
    "register", "enroll", "schedule", "reschedule"
])  # fmt: skip
"""Words of a tool's name that make it a call that changes something."""

READ_VERBS = frozenset([
    "get", "read", "fetch", "show", "view", "check", "describe", "count", "calculate", "think",
    "search", "find", "list", "query", "browse", "filter", "lookup", "scan", "match", "suggest", "load",
    "retrieve"
])  # fmt: skip
"""First words of a tool's name that make it read-only whatever follows (``get_order``)."""

WORKING_VERBS = frozenset(["calculate", "compute", "calc", "evaluate", "eval", "think", "reason"])
"""First words of a read-only tool's name that make its result the assistant's own working."""

SEARCH_VERBS = frozenset(["search", "find", "list", "query", "browse", "filter", "lookup", "scan", "match", "suggest"])
"""Words of a read-only tool's name that make it a search: its results are options."""

_RANK_CHANGE, _RANK_USER, _RANK_TOLD, _RANK_REFERRED = 0, 1, 2, 3

_CALL = re.compile(r"\[calls tool (?P<name>[^\s(]+)\((?P<args>.*?)\) id=(?P<id>[^\]\s]*)\]", re.DOTALL)
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_VALUES = re.compile(r"[\w.@+-]{3,}")

_NOUNS = (
    "reservation|booking|order|ticket|confirmation|account|invoice|payment|certificate|card|flight|case|"
    "claim|issue|file|branch|commit|user|customer|item|product|shipment|package|transaction|subscription|"
    "policy|appointment|request|record"
)
# The look-ahead (each word's first letter, case-folded as the words are) only spares the
# engine trying every word at every position of the kept text: about half the time.
_REFERRING = re.compile(
    rf"(?i:\b(?=[tsi])(?:that|this|the|same|those|these|it'?s|its)\s+(?:[a-z]+\s+)??(?P<noun>{_NOUNS})s?\b)"
)  # one word may stand between: "that delayed reservation"
# The noun right before a value: "reservation W12345", '"order_id": "W12345"', "Booking
# number: W12345"; not a value of its own ("certificate_8301303", then another id).
_NOUN_BEFORE = re.compile(rf"(?i:\b(?P<noun>{_NOUNS})s?(?:[ _-]?(?:id|ids|number|code|no|ref))?)[\"']?\W{{0,6}}$")


def _words(tool: str) -> list[str]:
    return [word.lower() for word in _NAME_WORDS.findall(tool)]


def _changes(tool: str) -> bool:
    """Whether a tool's name names a change (``cancel_reservation``, ``sendEmail``); one
    that starts with a verb that reads (``get_order``, ``list_bookings``) never does."""
    words = _words(tool)
    return bool(words) and words[0] not in READ_VERBS and any(word in CHANGE_VERBS for word in words)


def _searches(tool: str) -> bool:
    """Whether a read-only tool's name names a search (``search_flights``, ``listFiles``)."""
    return any(word in SEARCH_VERBS for word in _words(tool))


def _works_out(tool: str) -> bool:
    """Whether a tool's name names working something out from what it is given
    (``calculate``, ``think``): its result is the assistant's own working, not a record
    read, so what the assistant tells from it is its own."""
    words = _words(tool)
    return bool(words) and words[0] in WORKING_VERBS


@dataclass
class _Span:
    """The span's text by who says it (see the module docstring)."""

    arguments: dict[str, str] = field(default_factory=dict)  # arguments of change calls that did not fail
    changes: list[str] = field(default_factory=list)  # arguments and results of change calls, in order
    failed: set[int] = field(default_factory=set)  # those of changes that failed
    retry: dict[str, str] = field(default_factory=dict)  # tool: arguments of its last failure, none since
    echoes: dict[int, int] = field(default_factory=dict)  # results among changes: how many reads before
    users: list[str] = field(default_factory=list)
    told: list[tuple[str, int]] = field(default_factory=list)  # the assistant's words, changes before them
    heard: list[int] = field(default_factory=list)  # for each of told, the user's messages before it
    done: list[int] = field(default_factory=list)  # for each of users, the changes' results before it
    found: list[str] = field(default_factory=list)  # results of searches
    queries: list[str] = field(default_factory=list)  # arguments of searches
    looked_up: list[tuple[str, str]] = field(default_factory=list)  # (arguments, result) of other reads
    readers: list[str] = field(default_factory=list)  # for each of looked_up, the tool's name
    records: list[set[str]] = field(default_factory=list)  # for each of looked_up, the record ids it was given
    owners: set[str] = field(default_factory=set)  # the owners' ids the reads were given (user_id)
    worked: list[str] = field(default_factory=list)  # results of the assistant's own working (calculate)
    targets: set[str] = field(default_factory=set)  # the ids change calls act on
    results: list[tuple[str, int]] = field(default_factory=list)  # results of changes that did not fail, and where


def _read_span(span: str) -> _Span:
    parts = _Span()
    calls: dict[str, tuple[str, str]] = {}
    placed: dict[str, int] = {}  # where each change call's arguments are in parts.changes
    starts = list(_LINE.finditer(span))
    for i, line in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(span)
        body = span[line.end() : end]
        role = line["role"]
        if role in ("USER", "HUMAN"):
            parts.users.append(body)
            parts.done.append(len(parts.results))
        elif role in ("ASSISTANT", "MODEL"):
            told = body
            for call in _CALL.finditer(body):
                calls[call["id"]] = (call["name"], call["args"])
                if _changes(call["name"]):
                    parts.arguments[call["id"]] = call["args"]
                    placed[call["id"]] = len(parts.changes)
                    parts.changes.append(call["args"])
                    parts.targets |= _targets(call["name"], call["args"])
                told = told.replace(call.group(), " ")
            if told.strip():
                parts.told.append((told, len(parts.changes)))
                parts.heard.append(len(parts.users))
        elif line["tool"] is not None:
            name, args = calls.get(line["id"], (line["tool"], ""))
            _read_result(parts, name, args, body, line["id"], line.start(), placed.get(line["id"]))
    return parts


def _read_result(parts: _Span, name: str, args: str, body: str, call: str, at: int, placed: int | None) -> None:
    """File a tool's result ``body`` (the call ``call`` to ``name`` given ``args``, at
    ``at`` in the span; ``placed``: where a change call's arguments are in
    ``parts.changes``) by what the tool does."""
    if _changes(name):
        if _FAILED.match(body):  # it changed nothing: what it said is told, nothing confirms it
            parts.retry[name] = parts.arguments.pop(call, "")  # open until the same tool succeeds
            parts.failed.update(([] if placed is None else [placed]) + [len(parts.changes)])
        else:
            parts.results.append((body, at))
            parts.retry.pop(name, None)
        parts.echoes[len(parts.changes)] = len(parts.looked_up)
        parts.changes.append(body)
    elif _searches(name):
        parts.found.append(body)
        parts.queries.append(args)
    elif _works_out(name):
        parts.worked.append(body)
    else:
        parts.looked_up.append((args, body))
        parts.readers.append(name)
        records, owners = _read_ids(args)
        parts.records.append(records)
        parts.owners |= owners


def _targets(tool: str, args: str) -> set[str]:
    """The ids a change call acts on: those given under a key named after the object of
    the call's name (``order_id`` of ``cancel_order``, ``reservationId`` of
    ``updateReservationFlights``; not ``user_id`` of ``book_reservation``)."""
    words = _words(tool)
    verb = next((word for word in words if word in CHANGE_VERBS), None)
    objects = {word for word in words if word != verb}
    return {value for key, value in _ID_ARGUMENT.findall(args) if set(_words(key)) & objects}


_FAILED = re.compile(r"\s*(?:\{\s*\"error\"|error\b|failed\b|exception\b)", re.IGNORECASE)
_ID_ARGUMENT = re.compile(r"\"(\w+?)_?(?:id|Id|ID)\"\s*:\s*\"([^\"]+)\"")


def _relayed(facts: Collection[Fact], results: list[str]) -> set[Fact]:
    """The facts ``results`` state, an amount also by its bare number (``"price": 830``
    holds ``$830``, ``"refund": 54.2`` holds ``$54.20``)."""
    stated = _stated(facts, results)
    amounts = [fact for fact in facts if fact.kind == "amount" and fact not in stated]
    if amounts:
        numbers = {_decimal(number) for number in _NUMBER.findall("\n".join(results))}
        stated.update(fact for fact in amounts if (n := _NUMBER.search(fact.text)) and _decimal(n.group()) in numbers)
    return stated


def _replaced(i: int, said: list[set[Fact]], parts: _Span) -> set[Fact]:
    """The facts of the assistant's ``i``-th message that a plan restated after the user's
    answer leaves out: the assistant's next message after a user's says again some of
    the facts of message ``i``, and nothing after message ``i`` (the assistant's words,
    the user's, a change's arguments or result) states these ("a round trip, back on
    June 9?", "one-way only", "one-way on June 2": June 9 was a plan the user replaced)."""
    heard = parts.heard[i]
    following = next((j for j in range(i + 1, len(said)) if parts.heard[j] > heard), None)
    if following is None or not said[i] & said[following]:
        return set()
    later = set().union(*said[i + 1 :])
    left = said[i] - later
    if not left:
        return left
    before = parts.told[i][1]
    return left - _stated(left, parts.users[heard:] + parts.changes[before:])


def _counted(facts: Collection[Fact], results: list[str]) -> set[Fact]:
    """The counts of ``facts`` that are the length of a list in a JSON result, under a key
    that shares a word with the count ("two open tickets" of ``{"tickets": [{...}, {...}]}``):
    passed on from that result."""
    counts = {fact: value for fact in facts if fact.kind == "quantity" and (value := _count(fact.text)) is not None}
    if not counts:
        return set()
    lists: set[tuple[str, int]] = set()
    for result in results:
        try:
            _lists(orjson.loads(result), lists)
        except orjson.JSONDecodeError:
            continue
    return {
        fact
        for fact, value in counts.items()
        if any(length == value and word in _singular_words(fact.text) for word, length in lists)
    }


def _count(text: str) -> int | None:
    keys = _fact_keys("quantity", text)
    value = keys[0][2] if keys else None
    return int(value) if isinstance(value, Decimal) and value == int(value) and value > 1 else None


def _singular_words(text: str) -> set[str]:
    return {word.lower().removesuffix("s") for word in _NAME_WORDS.findall(text)}


def _lists(value: object, lists: set[tuple[str, int]]) -> None:
    """Add each key of ``value`` (at any depth) that holds a list, by each of its words
    in the singular, with the list's length."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, list):
                lists.update((word, len(item)) for word in _singular_words(str(key)))
            _lists(item, lists)
    elif isinstance(value, list):
        for item in value:
            _lists(item, lists)


def _decimal(number: str) -> Decimal | None:
    try:
        return Decimal(number.replace(",", ""))
    except ArithmeticError:
        return None


_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")


def _changed_records(parts: _Span, kept: str) -> list[str]:
    """The results of lookups of a record a change acts on (its id is one of the
    change's targets, in the span or in the kept messages)."""
    targets = set(parts.targets).union(*(acted_on for _, acted_on in _kept_changes(kept)))
    return [result for args, result in parts.looked_up if targets & set(_VALUES.findall(args))]


@lru_cache(maxsize=2)
def _kept_changes(kept: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The change calls of the kept messages: each one's arguments and the ids it acts on."""
    return tuple(
        (call["args"], frozenset(_targets(call["name"], call["args"])))
        for call in _CALL.finditer(kept)
        if _changes(call["name"])
    )


def _changed(told: set[Fact], parts: _Span, i: int) -> set[Fact]:
    """The facts of ``told`` the ``i``-th of ``parts.changes`` states as the change's own:
    its arguments, and what its result says that no read before it stated (an update
    answering with the whole record echoes its unchanged fields: the booking date a
    lookup gave is not what the update did)."""
    found = _relayed(told, [parts.changes[i]])
    reads = parts.echoes.get(i, 0)
    if found and reads:
        found -= _relayed(found, [result for _, result in parts.looked_up[:reads]])
    return found


def _echoed(facts: set[Fact], parts: _Span) -> set[Fact]:
    """The facts of a record read (``facts``) that a change's result gives again: fields the
    change left as they were (an update answering with the whole record), not what it
    changed."""
    return _relayed(facts, [result for result, _ in parts.results]) if facts and parts.results else set()


def _short_code(fact: Fact) -> bool:
    return fact.kind == "code" and len(fact.text) <= 4 and fact.text.isalpha()


def _told(facts: Collection[Fact], parts: _Span) -> tuple[set[Fact], set[Fact]]:
    """What the assistant told the user that must survive (rule 3 of the module
    docstring), and what it passed on from lookups otherwise (which a change acting on
    the record looked up makes required: see :func:`weigh_facts`)."""
    # A place's code ("MIA") the assistant writes is mostly a city it names too ("Miami
    # (MIA)"); the options it lists ("(economy or business)") are the user's to choose.
    facts = [fact for fact in facts if not _short_code(fact) and fact.kind not in ("choice", "category")]
    said = [_stated(facts, [without_workings(message)]) for message, _ in parts.told]  # one reading a message
    told: set[Fact] = set().union(*said)
    if not told:
        return told, set()
    changed = [_changed(told, parts, i) for i in range(len(parts.changes))]
    # What its own working states is its own, whatever a search or a read also holds.
    worked = _relayed(told, parts.worked) if parts.worked else set()
    from_search = _relayed(told - worked, parts.found)
    from_lookup = _relayed(told - from_search - worked, [result for _, result in parts.looked_up])
    from_lookup |= _counted(told - from_search - from_lookup - worked, [result for _, result in parts.looked_up])
    own = told - from_search - from_lookup
    # A label ("economy") comes in every fare and plan the assistant quotes: it marks no
    # message as passing on options or restating a plan, and saying it twice is no weight.
    labels = {fact for fact in told if fact.kind in ("label", "category")}
    plain = [stated - labels for stated in said] if labels else said
    # A search's rows repeat what it was asked (the date searched): that is no option.
    options = from_search - labels - _stated(from_search, parts.queries)
    required: set[Fact] = set().union(*changed)
    for i, (stated, (message, before)) in enumerate(zip(said, parts.told, strict=True)):
        if stated & set().union(*(found for j, found in enumerate(changed[:before]) if j not in parts.failed)):
            required |= stated - former(stated, message)  # a confirmation of a change made
        elif not stated & options:
            # not a message passing on a search's options
            required |= (stated & own) - _replaced(i, plain, parts) - former(stated, message)
        elif parts.heard[i] < len(parts.users) and (chosen := chosen_option(message, parts.users[parts.heard[i]])):
            # the option the user's answer takes: the money it costs is what the user agreed to
            required |= totals(stated, chosen) - _replaced(i, plain, parts) - former(stated, message)
        if stated & from_lookup:
            required |= grounds(stated & from_lookup - required, message)
    messages = [message for message, _ in parts.told]
    required |= {fact for fact in from_lookup - required - labels if told_twice(fact, said, messages)}
    records = set().union(*parts.records)
    required |= {fact for fact in from_lookup - required if fact.text in records}  # a record's handle
    return required, from_lookup - required


@dataclass(frozen=True)
class _Said:
    """What the span alone says of its facts (the kept messages aside)."""

    ranks: dict[Fact, int]
    relayed: set[Fact]  # told, passed on from lookups, not required by the span alone
    parts: _Span


@lru_cache(maxsize=2)
def _said_by(facts: tuple[Fact, ...], span: str) -> _Said:
    """Kept for the last two spans: the offline digest weighs a span it must shorten,
    and the fact check then weighs the same span again with the kept messages."""
    parts = _read_span(span)
    told, relayed = _told(facts, parts)
    ranks = dict.fromkeys(_stated(facts, list(parts.arguments.values())), _RANK_CHANGE)
    # Whether a text states a fact does not depend on the others asked: the user's words
    # are asked only about the facts still open.
    users = _stated([f for f in facts if f not in ranks], parts.users)
    ranks.update(dict.fromkeys(users - denied(users, *parts.users), _RANK_USER))
    ranks.update((fact, _RANK_TOLD) for fact in told if fact not in ranks)
    ranks.update((fact, _RANK_CHANGE) for fact in _reported(facts, parts, span) if fact not in ranks)
    # A change that failed and was not made since is still to be made: what it was given is open.
    ranks.update((fact, _RANK_TOLD) for fact in _stated(facts, list(parts.retry.values())) if fact not in ranks)
    ranks.update((fact, _RANK_TOLD) for fact in _asked_of(facts, parts, ranks) if fact not in ranks)
    ranks.update((fact, _RANK_TOLD) for fact in _held_by(facts, parts, ranks) if fact not in ranks)
    return _Said(ranks, relayed - set(ranks), parts)


def _asked_of(facts: Collection[Fact], parts: _Span, ranks: dict[Fact, int]) -> set[Fact]:
    """The money of a record a change the user asks for still acts on: the user's words
    ask for a change (a word of :data:`CHANGE_VERBS`: "please cancel", "refund me") and
    name the record's id, a read looked it up, and no change has succeeded since the user
    last asked for one (the request is open); the sums that record says were paid (a number under a key of a
    sum that moved, as :func:`_reported` reads them) are what the request turns on: "refund
    order W12345", ``get_order`` answering ``{"paid": 54.2}``, no ``refund_order`` yet:
    $54.20 is required."""
    asking = [i for i, text in enumerate(parts.users) if _asks_change(text)]
    if not parts.looked_up or not asking or parts.done[asking[-1]] < len(parts.results):
        return set()  # no request, or a change made since the last
    users = {fact.text for fact, rank in ranks.items() if rank == _RANK_USER and fact.kind in _REFERABLE}
    records = [parts.looked_up[i][1] for i in _current_reads(parts, users) if parts.records[i] & users]
    amounts = [fact for fact in facts if fact.kind == "amount" and _PLAIN_NUMBER.fullmatch(fact.text)]
    return {fact for fact in amounts if any(_moved(fact.text, result) for result in records)} if records else set()


def _held_by(facts: Collection[Fact], parts: _Span, ranks: dict[Fact, int]) -> set[Fact]:
    """The id of the record the user's words point at without naming it: a code or id
    the user stated (not an owner's: ``user_id``) is held by the result of exactly one
    record read (by its id, not its owner's), so that record is the one the user means
    ("my flight HAT045 was delayed", four reservations read, only 3JA7XV's flights hold
    HAT045: ``3JA7XV`` is required)."""
    reads = [(ids, result) for ids, (_, result) in zip(parts.records, parts.looked_up, strict=True) if ids]
    if not reads:
        return set()
    users = {fact.text for fact, rank in ranks.items() if rank == _RANK_USER and fact.kind in _REFERABLE}
    users -= parts.owners
    held: set[str] = set()
    for text in users:
        place = re.compile(rf"(?<![\w-]){re.escape(text)}(?![\w-])")
        holders = {frozenset(ids) for ids, result in reads if text not in ids and place.search(result)}
        if len(holders) == 1:
            held |= next(iter(holders))
    return {fact for fact in facts if fact.text in held and fact.kind in _REFERABLE} - set(ranks)


def _current_reads(parts: _Span, named: set[str]) -> list[int]:
    """Where in ``parts.looked_up`` the reads are, less those of a record the user named
    that a later read by the same tool of a record the user did not name replaced: the
    assistant went looking for another, so the one named was not it ("I think it's
    KHIK97", read, "that one is ORD to MSP", then 4NQLHD read)."""
    records, readers = parts.records, parts.readers
    return [
        i
        for i, ids in enumerate(records)
        if not (
            ids & named
            and any(
                readers[j] == readers[i] and records[j] and not records[j] & named for j in range(i + 1, len(records))
            )
        )
    ]


def _read_ids(args: str) -> tuple[set[str], set[str]]:
    """``(records, owners)``: the ids a read is given, its owner's apart (``user_id``,
    ``customer_id``: whose records, not which record)."""
    records: set[str] = set()
    owners: set[str] = set()
    for key, value in _ID_ARGUMENT.findall(args):
        (owners if set(_words(key)) & _OWNERS else records).add(value)
    return records, owners


_OWNERS = frozenset(["user", "customer", "client", "member", "owner", "person", "profile"])


def _asks_change(text: str) -> bool:
    """Whether ``text`` holds a word of :data:`CHANGE_VERBS` in any of its forms
    ("cancelling", "refunded", "books"), not one of the nouns records are named by ("my
    order", "the booking": a noun, not a request)."""
    return any(word not in _RECORD_NOUNS and _stem(word) in CHANGE_VERBS for word in _WORD.findall(text.lower()))


_WORD = re.compile(r"[a-z]{3,}")
_RECORD_NOUNS = frozenset(noun + end for noun in _NOUNS.split("|") for end in ("", "s"))


def _stem(word: str) -> str:
    for end in ("ing", "ed", "es", "s"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            stem = word[: -len(end)]
            if stem in CHANGE_VERBS:
                return stem
            if len(stem) > 3 and stem[-1] == stem[-2]:
                return stem[:-1]  # "cancelling"
            if stem + "e" in CHANGE_VERBS:
                return stem + "e"  # "updating"
            return stem
    return word


def _reported(facts: Collection[Fact], parts: _Span, span: str) -> set[Fact]:
    """The money the result of a change that did not fail reports moved first: a number
    under a key naming a sum paid or given back (amount, refund, total, paid, charge,
    fee, balance; not a price, a cost or a fare, which describe what was bought), under
    no such key before it in the span (``refund_order`` answering ``{"refund_amount":
    54.2, "item_price": 60}`` reports $54.20, not $60; a flight's price of 163 read before
    does not make the 163 an upgrade charged old)."""
    amounts = [fact for fact in facts if fact.kind == "amount" and _PLAIN_NUMBER.fullmatch(fact.text)]
    reported: set[Fact] = set()
    for result, start in parts.results if amounts else ():
        new = {fact for fact in amounts if fact not in reported and _moved(fact.text, result)}
        if new:
            before = span[:start]
            # A sum given back is new unless given back before, though it was paid before.
            back = {
                fact
                for fact in new
                if _moved(fact.text, result, back=True) and not _moved(fact.text, before, back=True)
            }
            reported |= new - ({fact for fact in new if _moved(fact.text, before)} - back)
    return reported


_PLAIN_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_MOVED = re.compile(r"(?i:amount|refund|total|paid|charge|fee|balance)(?:ed)?s?[\"']?\s*:\s*-?$")


def _moved(number: str, result: str, back: bool = False) -> bool:
    """Whether ``result`` gives ``number`` under a key naming a sum that moved (``back``:
    with a minus sign, given back)."""
    at = result.find(number)
    while at >= 0:
        if back and result[at - 1 : at] != "-":
            at = result.find(number, at + 1)
            continue
        after, before = result[at + len(number) : at + len(number) + 2], result[max(0, at - 2) : at]
        alone = not (after[:1].isdigit() or (after[:1] in ".," and after[1:].isdigit())) and not (
            before[-1:].isdigit() or (before[-1:] in ".," and before[:1].isdigit())
        )
        if alone and _MOVED.search(result, max(0, at - 24), at) is not None:
            return True
        at = result.find(number, at + 1)
    return False


"""Characters between two mentions of a fact in one message that make them two."""


def _named(facts: Sequence[Fact], span: str) -> list[tuple[Fact, int, str]]:
    """Each id, code and number of ``facts`` with the last place in ``span`` where a noun
    of :data:`_NOUNS` stands before it ("order #W12345"), and that noun, in ``facts``'s order."""
    named: list[tuple[Fact, int, str]] = []
    for fact in facts:
        if fact.kind not in _REFERABLE:
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


def _pending(facts: Sequence[Fact], parts: _Span, kept: str) -> set[Fact]:
    """The values a change the kept messages make replaces in a record the span read:
    the record as it stands before that change (see :func:`replaced_values`)."""
    values: set[str] = set()
    for arguments, targets in _kept_changes(kept) if parts.looked_up else ():
        for ids, (_, result) in zip(parts.records, parts.looked_up, strict=True):
            if ids & targets:
                values |= replaced_values(arguments, result)
    return {fact for fact in facts if fact.text in values} if values else set()


def _pointing(kept: str) -> set[str]:
    """The nouns the kept messages point with ("that order") and name no value after
    themselves ("reservation HATHAT": that one is theirs, not one of the span's)."""
    nouns = {match["noun"].lower() for match in _REFERRING.finditer(kept)}
    if nouns:
        nouns -= _nouns_of_values(kept, (fact.text for fact in find_facts(kept) if fact.kind in _REFERABLE))
    return nouns


def _nouns_of_values(text: str, values: Iterable[str]) -> set[str]:
    """The nouns ``text`` names a value of itself ("reservation HATHAT")."""
    nouns = set()
    for value in values:
        at = text.find(value)
        before = _NOUN_BEFORE.search(text, max(0, at - 40), at) if at >= 0 else None
        if before is not None:
            nouns.add(before["noun"].lower())
    return nouns


def _offer(parts: _Span) -> list[str]:
    """The assistant's last words in the span when they ask the user something no user
    message of the span answers: an offer or a question still open ("You are eligible
    for a $50 certificate. Shall I issue it?")."""
    if parts.told and parts.heard[-1] == len(parts.users) and "?" in parts.told[-1][0]:
        return [parts.told[-1][0]]
    return []


def _taken(facts: Sequence[Fact], parts: _Span, answers: list[str]) -> set[Fact]:
    """The total of the option the user's first kept words take from the assistant's last
    words in the span, which no user message there answers ("2. ... Total Price: $216",
    then the kept "I'll go with Option 2"): as for an answer in the span (rule 3)."""
    if not parts.told or parts.heard[-1] != len(parts.users):
        return set()
    message = parts.told[-1][0]
    chosen = chosen_option(message, answers[0]) if answers else ""
    return totals(_stated(facts, [message]), chosen) if chosen else set()


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
    # again: the kept text is asked only about the facts its answer changes (the ranked
    # ones, those a change may make required, those a reference may point at).
    instructions, recent = kept_parts(kept)
    said = _said_by(tuple(facts), span)
    nouns = _pointing(recent) if recent else set()
    named = _named(facts, span) if nouns else []
    kept_users = users_words(recent) if recent else []
    picked = picked_by(facts, span, kept_users) if kept_users else set()
    taken = _taken(facts, said.parts, kept_users) if kept_users else set()
    asked = set(said.ranks) | said.relayed | {fact for fact, _at, _noun in named} | picked | taken
    restated = _stated([fact for fact in facts if fact in asked], [recent]) if recent and asked else set()
    ranks = {fact: rank for fact, rank in said.ranks.items() if fact not in restated}
    record = _stated(said.relayed - restated, _changed_records(said.parts, recent))
    record -= _echoed(record, said.parts)
    ranks.update((fact, _RANK_TOLD) for fact in record if fact not in ranks)
    # A label the instructions name ("gold members may...") is a category there; the
    # span's record says which applies, which is no quoting.
    told = {fact for fact, rank in ranks.items() if rank == _RANK_TOLD and fact.kind not in ("label", "category")}
    for fact in _stated(told, [instructions]) - _stated(told, _offer(said.parts)) if instructions else ():
        del ranks[fact]  # the assistant quoting its kept instructions, not making an offer still open
    ranks.update((fact, _RANK_TOLD) for fact in taken - restated if fact not in ranks)
    pointed = _referred(named, nouns, restated) | (_pending(facts, said.parts, recent) - restated)
    for fact in pointed | (picked - restated):
        ranks.setdefault(fact, _RANK_REFERRED)
    order = {fact: i for i, fact in enumerate(facts)}
    return dict(sorted(ranks.items(), key=lambda item: (item[1], order[item[0]])))


def required_first(missing: Collection[Fact], ranks: dict[Fact, int]) -> tuple[list[Fact], list[Fact]]:
    """``(required, optional)`` of ``missing``: the required ones by rank, then span order."""
    place = {fact: i for i, fact in enumerate(ranks)}
    required = sorted((f for f in missing if f in ranks), key=place.__getitem__)
    return required, [f for f in missing if f not in ranks]
