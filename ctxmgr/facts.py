"""The facts of a span (identifiers, amounts, dates...) and which of them a summary lacks.

A summary that loses a reservation code or an amount loses what the next turns need, and
nothing else shows it. :func:`find_facts` lists the facts of a text; :func:`missing_facts`
says which of them a summary does not state, comparing values, not spellings.

What is a fact, by kind:

- ``email``: ``name@host.tld``.
- ``url``: an address starting ``http://``, ``https://`` or ``www.``; punctuation that
  ends the sentence is not part of it.
- ``phone``: ``+`` and a country code with 7 to 15 digits (``+1 (555) 123-4567``),
  ``(555) 123-4567`` or ``555-123-4567``. Digits grouped by spaces alone are not a phone
  number: lists of numbers look the same.
- ``date``: a calendar day: ``2024-05-15`` (also ``2024/05/15``), ``May 15, 2024``,
  ``May 15th``, ``15 May 2024``, ``15th of May``, ``05/15/2024`` and ``15.05.2024``. Month
  names must be capitalised (``may 15`` is more often a verb than a date). A numeric date
  that reads both ways (``05/06/2024``) is either day.
- ``time``: ``14:30``, ``06:00:00``, ``6:30 PM``, ``6pm``, ``6 a.m.``; the time of an ISO
  date-time (``2024-05-15T15:00:00``) too. Two-digit hours are read on the 24-hour clock
  (``11:00`` is before noon); ``6:00``, with one digit and no AM/PM, is 6:00 or 18:00.
- ``amount``: a number with a currency, before or after it: ``$1,234.50``, ``US$12``,
  ``USD 12``, ``12.50 EUR``, ``€5``, ``12,50 €``, ``5 dollars``, ``50 cents``, ``$2.5
  million``. ``$`` is the US dollar unless a prefix says otherwise (``C$``, ``A$``...);
  ``20 pounds`` is a weight. A number under a key whose last word names money
  (``"amount": 507``, ``total_price: 12.5``) is an amount in no stated currency; a minus
  sign before it is the money's direction, not part of the fact (``"refund": -54.2``: ``54.2``).
- ``quantity``: a number (digits, or a word from one to twenty) with a unit from a fixed
  list: weights, lengths, volumes, data sizes, durations, percentages and what a booking
  counts (``3 bags``, ``2 checked bags``, ``20 kg``, ``15%``, ``two passengers``). One
  word may stand between number and unit, unless it is a word like "the" or "of".
  "One" and "zero" in words are a manner of speaking ("one day") more often than a
  count: a summary may use them for ``1 bag``, but they make no fact. A number joined
  to its unit by a hyphen (``24-hour``) is a quantity, not an id.
- ``code``: one run of letters and digits holding both, at least three characters long:
  ``4OG6T3``, ``HAT268``, ``12A``. Ordinals (``15th``), decades (``1990s``) and factors
  (``10x``) are not codes. Five to ten capitals alone (``IFOYYZ``) are a code where the
  context marks them as an id: after "reservation", "booking", "order", "ticket",
  "confirmation" (with "id", "number" or "code" after it, or not), as the value of a key
  naming an id (``"booking_code": "IFOYYZ"``), or in a list under a key naming such
  things or ids (``"reservations": ["IFOYYZ"]``). Three or four capitals are a place's
  code where they are spoken of as a place: after "to", "from", "at", "via", "or",
  "into", "either", "through" or "and", or before a dash, an arrow, "to" or "or" and
  another such code ("landing at EWR", "SEA to DFW", "JFK → MCO"); not a currency, a
  time zone or a common acronym (USD, EST, FAQ...).
- ``id``: words joined by ``_`` or ``-`` holding a letter and a digit: ``mia_li_3668``,
  ``credit_card_4421486``, a UUID.
- ``label``: a short lower-case value (one to four words) under a key naming a category
  a record is put in: a membership tier, a class of travel or service, a plan, a reason,
  a kind of something (``"membership": "gold"``, ``"cabin": "basic_economy"``,
  ``"flight_type": "round_trip"``; keys ending in ``membership``, ``tier``, ``level``,
  ``class``, ``cabin``, ``plan``, ``reason``, ``category``, ``grade``, ``priority``,
  ``rank``, ``subscription`` or ``_type``), not yes, true, false, null, none, unknown,
  other, default, standard or normal. A summary states it in any case, its words
  joined by spaces, hyphens or underscores, each in the singular or the plural ("Gold
  member", "round-trips", "a change of plans" for ``change_of_plan``).
- ``choice``: an option of a list in brackets, one to four lower-case words each, two or
  more joined by commas and "or": "the reason for cancellation (change of plan, airline
  cancelled flight, or other reasons)" offers three. Stated as a label is, and one of
  several words also by their stems in one sentence, in any order ("my plans have
  changed" for "change of plan").
- ``category``: a word of four letters or more before a noun naming a category in prose
  ("a Gold member", "business class", "the Basic plan"; the nouns class, cabin,
  membership, member, tier, level, subscription and plan in the singular), not a word
  acting on or pointing at one ("upgrade class", "same cabin"). Stated as a label is.
- ``number``: a bare number of five digits or more (``78750``, ``1,250,000``), or one
  marked ``#12``. Shorter bare numbers are not facts: counts, prices in JSON and list
  numbers are everywhere, and asking a summary for each would bury the real losses.

What is never a fact: the strings in ``ignore`` (tool-call ids, which are the
renderer's plumbing, not the conversation's); the renderer's description of a binary
part (``[image image/png, 1032 bytes``: the media type and the byte count are ours; a
name or an address given after them is still read); a JSON field name (a word followed
by ``":``, such as ``address1``; a date or an email used as a key is still data).

Matching (:func:`missing_facts`) is by value, so a summary may use any usual spelling:
codes and ids case-insensitively and with or without separators (``hat-268``, ``HAT
268``, ``credit card 4421486``); amounts by currency and value (``$1,234.50`` =
``1234.5 USD`` = ``1,234.50 dollars``); dates by day (``2024-05-15`` = ``May 15th, 2024``
= ``15/05/2024``); times by the second they name (``06:00:00`` = ``6 AM``); quantities by
value and unit (``20 kg`` = ``20kg`` = ``20 kilograms``; ``2 checked bags`` = ``two
bags``); emails case-insensitively; URLs with the host in any case and without scheme or
``www.``; phone numbers by their digits, with or without the country code; numbers by
their digits, wherever they stand. Looser spellings a model uses count too: an amount's
number alone (``305`` for ``$305``; an amount in no stated currency by its value in any),
a day range (``May 27-28`` states May 28), a time range (``07:00-12:30`` states 12:30,
as a time to the minute states a time to the second), "no bags" for ``0 checked bags`` (none
of a thing counted), an amount given as a number under a money key by its value in any spelling
(``$4,418`` for ``"amount": 4418``),
an id's number of five digits or more apart from its words (``certificates 8544743 and
9932251``), and two to five things counted restated by listing them (``passengers Ana
Ruiz and Bo Li`` for ``2 passengers``) or as the factor of a price (``$40 x 3`` for ``three
tickets``, ``2 * €15`` for ``2 seats``; x, * or the multiplication sign). No fact is found
inside a longer one: ``HAT268`` is not in ``HAT2681``, nor ``$12`` in ``$120``, nor ``2024-05-15`` in ``2024-05-150``.

Two choices trade a little precision for fewer false alarms. A day written without a
year in the summary counts for that day in any year, since summaries leave out the year
the whole conversation shares (so "May 5" also covers a birthday on 1990-05-05). And a
code's letters and digits are compared without their separators, so an email such as
``mia.li3668@example.com`` also states ``mia_li_3668``.

Both functions take time in proportion to the length of their text, whatever it holds.
Every fact but a quantity in words, a label, a choice and a place's code holds a digit,
an "@", a currency sign, ``://`` or ``www.``: only the stretches around those are read
with the full expression (the whole text where digits are dense; the others have
patterns of their own), and every branch of the expression can start only where a token
starts.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property, lru_cache
from operator import attrgetter
from typing import NamedTuple

from ctxmgr._fact_reading import _CURRENCY_SUFFIX, _MONTH, _MONTHS, _MUL, _UNIT, _UNIT_OF, Key, clean_url, hits, url_key
from ctxmgr._fact_words import said_label

__all__ = ["Fact", "find_facts", "missing_facts"]


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact of a span.

    Attributes:
        kind: What it is: ``code``, ``id``, ``email``, ``url``, ``phone``, ``date``,
            ``time``, ``amount``, ``quantity``, ``label``, ``category``, ``choice`` or
            ``number`` (see the module docstring).
        text: Its spelling at its first occurrence in the span.
    """

    kind: str
    text: str

    def __str__(self) -> str:
        return self.text

    def __reduce__(self) -> tuple[type[Fact], tuple[str, str]]:
        # Pickled as its two strings (a worker process sends its summaries' facts back):
        # the state functions a frozen dataclass with slots is given cost about three
        # times as much to write and to read.
        return (Fact, (self.kind, self.text))


# -- finding ---------------------------------------------------------------------------

_WORD_SHAPE = re.compile(r"[^\W_]+(?:[_-][^\W_]+)*")


@lru_cache(maxsize=16)
def _odd_ids(ignore: frozenset[str]) -> tuple[str, ...]:
    """The ids of ``ignore`` that the word pattern would split: removed from the text
    instead. Kept per set, so a caller that reads many texts with one frozenset of ids
    pays for them once (a frozenset keeps its hash)."""
    return tuple(sorted((s for s in ignore if s and not _WORD_SHAPE.fullmatch(s)), key=len, reverse=True))


def _yearless_day(keys: tuple[Key, ...]) -> tuple[int, int] | None:
    """The (month, day) of a day read without a year, else None."""
    if len(keys) == 1 and keys[0][1] is None:
        return keys[0][2], keys[0][3]
    return None


def find_facts(text: str, *, ignore: Collection[str] = ()) -> list[Fact]:
    """The facts of ``text``, unique (by normalised form), in order of first appearance.

    Strings in ``ignore`` (tool-call ids) are never facts; when reading many texts with
    the same ids, pass them as one ``frozenset``. A day written without a year is not
    listed apart when the same day appears with one.

    >>> [str(f) for f in find_facts("Change 4OG6T3 (mia_li_3668) to May 15, 2024: $1,234.50.")]
    ['4OG6T3', 'mia_li_3668', 'May 15, 2024', '$1,234.50']
    """
    return list(_span_facts(text, frozenset(ignore)))


@lru_cache(maxsize=2)
def _span_facts(text: str, ignore: frozenset[str]) -> tuple[Fact, ...]:
    """:func:`find_facts`, kept for the last two texts: a summary's span is read by the
    summarizer that writes it (the offline digest) and again by the fact check, the
    same text with the same ids. The copies are shared (a Fact is frozen)."""
    return tuple(find_facts_uncached(text, ignore))


def find_facts_uncached(text: str, ignore: frozenset[str]) -> list[Fact]:
    """:func:`find_facts` without keeping the result: for the many short texts of one
    span (the offline digest's events), which would push the span out of the cache."""
    return _facts(_without_odd_ids(text, ignore), ignore)


def find_facts_among(text: str, ignore: frozenset[str], among: Collection[Fact]) -> list[Fact]:
    """The facts of ``text`` that are in ``among``, in order: what
    ``[f for f in find_facts_uncached(text, ignore) if f in among]`` gives, without
    reading a text that holds the spelling of none of them.

    A fact's spelling is a piece of the text it is read from, so a text holding none of
    ``among``'s spellings holds none of those facts; the offline digest asks this of
    each event, for the facts no event before it said, which most events hold none of.
    """
    text = _without_odd_ids(text, ignore)
    if not any(map(text.__contains__, map(_TEXT, among))):  # any(f.text in text ...), at C speed
        return []
    return [fact for fact in _facts(text, ignore) if fact in among]


_TEXT = attrgetter("text")


def _without_odd_ids(text: str, ignore: frozenset[str]) -> str:
    for odd in _odd_ids(ignore):
        text = text.replace(odd, " ")
    return text


def _facts(text: str, ignore: frozenset[str]) -> list[Fact]:
    """The facts of ``text``, the ids of ``ignore`` that the word pattern would split
    taken out of it already (see :func:`_odd_ids`)."""
    seen: dict[tuple[Key, ...], Fact] = {}
    dated: set[tuple[int, int]] = set()
    priced: set[Decimal] = set()
    for hit in hits(text, ignore):
        if hit.weak:
            continue
        if hit.keys not in seen:
            seen[hit.keys] = Fact(hit.kind, hit.text)
        if hit.kind == "date":
            dated.update((m, d) for _, y, m, d in hit.keys if y is not None)
        elif hit.kind == "amount" and hit.keys[0][1] is not None:
            priced.add(hit.keys[0][2])
    facts = []
    for identity, fact in seen.items():
        if fact.kind == "date" and _yearless_day(identity) in dated:
            continue  # "May 15" where "2024-05-15" is also said: the same day
        if fact.kind == "amount" and identity[0][1] is None and identity[0][2] in priced:
            continue  # "amount": 507 where "$507" is also said: the same amount
        facts.append(fact)
    return facts


# -- checking --------------------------------------------------------------------------

# The summary's words for codes and ids: runs of letters and digits, and what is between them.
_WORD_SPLIT = re.compile(r"([^\W_]++)")  # split: what is between words, and the words
_JOINERS = frozenset(" -_./:")
_MAX_JOINED = 8
# ``\d{1,3}(?:,\d{3})++(?!\d)|\d++`` with its first digit taken out in front: an
# expression that starts with one character class is searched at C speed (see _HOT in
# ctxmgr._fact_reading); tests/test_fact_speed.py checks both find the same.
_DIGIT_RUN = re.compile(r"\d(?:\d{0,2}(?:,\d{3})++(?!\d)|\d*+)")
# A number standing alone: no currency, unit or multiplier before or after it.
# The look-behinds are read after its first digit, as for _DIGIT_RUN.
_BARE_NUMBER = re.compile(
    rf"\d(?<![^\W_]\d)(?<![.,$€£¥₹₩₽₺]\d)(?<![A-Z]{{3}}\ \d)(?:\d{{0,2}}(?:,\d{{3}})++|\d*+)(?:\.\d++)?(?![\d.,]?\d)"
    rf"(?!\ ?(?:{_CURRENCY_SUFFIX}|{_MUL}|{_UNIT})(?![^\W_])|[^\s.,;:!?)\]}}])"
)
_DAY_RANGE = re.compile(rf"(?P<m>{_MONTH})\ \d{{1,2}}\ ?[\u2013-]\ ?(?P<d>\d{{1,2}})(?!\d)")
# "07:00-12:30": a time range; the time after the dash is not read alone (see _time_range).
_TIME_RANGE = re.compile(r"\d(?<![\d:]\d)\d?:[0-5]\d\ ?[\u2013-]\ ?(?P<h>\d{1,2}):(?P<m>[0-5]\d)(?![\d:])")
_COUNTED = ("passenger", "person", "adult", "child", "infant", "guest", "seat", "ticket", "bag", "item", "flight")
_COUNTING = sorted((w for w, u in _UNIT_OF.items() if u in _COUNTED), key=len, reverse=True)
_CASE_ODDITIES = "\u0130\u0131\u017f\u212a"
"""The characters other than a letter's two cases that ignoring case matches to an ASCII
letter (dotted and dotless i, long s, the kelvin sign); tests/test_fact_speed.py checks
this over every character."""


# ``(?<![^\W_])[Nn]o\ ...`` with its first letter taken out in front (see _DIGIT_RUN);
# tests/test_fact_speed.py checks both find the same.
_NONE = re.compile(rf"[Nn](?<![^\W_].)o\ (?:[a-z]++\ )?(?P<unit>(?i:{'|'.join(_COUNTING)}))(?![^\W_])")


def _time_range(hour: int, minute: int, zero_padded: bool) -> list[Key]:
    """The times the end of a range ``HH:MM-HH:MM`` may name: a one-digit hour with no
    AM or PM is either half of the day, as a time alone is."""
    if hour > 23:
        return []
    return [("time", hour, minute, 0)] + ([("time", hour + 12, minute, 0)] if not zero_padded and hour < 12 else [])


def _led_by_first_letter(words: list[str]) -> str:
    """``(?i:word|word...)``, a word of ``words`` matched ignoring case where no letter or
    digit stands before it, written to start with one plain character class (the
    characters its first letters match ignoring case), so the engine skips at C speed to
    where a word may start (see _HOT in ctxmgr._fact_reading). Within the class, a branch
    per first letter checks that letter again (``(?<=p)(?:assengers|...)``): the same
    words match in the same order, since a character matches at most one first letter."""
    rests: dict[str, list[str]] = {}
    for word in words:
        rests.setdefault(word[0].lower(), []).append(word[1:])
    firsts = "".join(
        ch
        for letter in rests
        for ch in dict.fromkeys([letter, letter.upper(), *_CASE_ODDITIES])
        if re.fullmatch(f"(?i:{letter})", ch)
    )
    branches = "|".join(
        f"(?<={re.escape(letter)})(?:{'|'.join(map(re.escape, rest))})" for letter, rest in rests.items()
    )
    return rf"[{firsts}](?<![^\W_].)(?i:{branches})"


# (?<![^\W_])(?P<unit>(?i:passengers|...)), as _led_by_first_letter writes it.
_LISTING = re.compile(rf"(?P<unit>{_led_by_first_letter(_COUNTING)})(?![^\W_]):?\ (?P<items>[^.;:()\n]{{1,160}})")
_LIST_SEPARATOR = re.compile(r",\s*(?:and\s+)?|\s+and\s+")
_LIST_ITEM = re.compile(r"\s*(?:[\dA-Z$\u20ac\u00a3#]|an?\ )")
# "$174 x 2", "2 * $174" (or the multiplication sign): a price times a small count states that count of a thing counted.
# Both branches start with a digit, taken out in front so the engine skips to digits at C
# speed; the second reads it back in a look-behind (tests/test_fact_speed.py: the same
# matches and groups as the plain alternation).
_TIMES = re.compile(
    r"\d(?:\ ?[x\u00d7*]\ ?(?P<a>[2-5])(?![\w.,]?\d)|(?<=(?<![\w.,])(?P<b>[2-5]))\ ?[x\u00d7*]\ ?[$€£]?\d)"
)
_TRAILING_DIGITS = re.compile(r"[^\W\d_]\D*?(\d{5,})$")
# Every phone number the fact reader reads holds one of these ("555-123-4567", "+1 555...",
# "(555) 123-4567"): a text without any has no phone number to read.
_PHONE_LIKE = re.compile(r"\d{3}[.-]\d{3}|\+\d|\(\d{3}\)")
_DOMAIN = re.compile(r"(?<![\w@.-])(?:[A-Za-z0-9-]++\.)++[A-Za-z]{2,}+(?:/[^\s<>\"'`\[\]{}|\\^]*+)?")


class _Index:
    """What a text states, by value; each part is read from the text when a check first
    asks for it, so checking facts of a few kinds reads only what those kinds need (a
    code asks for the words and digit runs, an amount for the values and bare numbers).

    ``parts``: the index of texts read apart (a summary and a line added to it): each
    part of this index is the union of theirs."""

    def __init__(self, text: str, words: Collection[str], parts: tuple[_Index, ...] = ()) -> None:
        self._text, self._wanted, self._parts = text, words, parts

    @cached_property
    def _hits(self) -> tuple[set[Key], set[tuple[int, int]], set[str]]:
        """The values the fact reader finds: their keys, the days of the dates, the digits of
        the phone numbers (up to three leading digits left out, keeping at least seven)."""
        keys: set[Key] = set()
        days: set[tuple[int, int]] = set()
        digits: set[str] = set()
        for hit in hits(self._text):
            keys.update(hit.keys)
            if hit.kind == "date":
                days.update((k[2], k[3]) for k in hit.keys)
            elif hit.kind == "phone":
                number = hit.keys[0][1]
                digits.update(number[i:] for i in range(4) if len(number) - i >= 7)
        return keys, days, digits

    @cached_property
    def _day_ranges(self) -> set[tuple[int, int]]:
        """The last days of day ranges ("May 27-28", either dash): stated too."""
        days: set[tuple[int, int]] = set()
        for match in _DAY_RANGE.finditer(self._text):
            month, day = _MONTHS[match["m"].rstrip(".").lower()], int(match["d"])
            if 1 <= day <= 31:
                days.add((month, day))
        return days

    @cached_property
    def keys(self) -> set[Key]:
        if self._parts:
            return set().union(*(part.keys for part in self._parts))
        keys = set(self._hits[0])
        keys.update(url_key(clean_url(match.group())) for match in _DOMAIN.finditer(self._text))
        keys.update(("date", None, month, day) for month, day in self._day_ranges)
        for match in _TIME_RANGE.finditer(self._text):
            keys.update(_time_range(int(match["h"]), int(match["m"]), len(match["h"]) == 2))
        for match in _NONE.finditer(self._text):
            # "no bags", "no checked bags": none of a thing counted.
            keys.add(("quantity", _UNIT_OF[match["unit"].lower()], Decimal(0)))
        return keys

    @cached_property
    def days(self) -> set[tuple[int, int]]:
        if self._parts:
            return set().union(*(part.days for part in self._parts))
        return self._hits[1] | self._day_ranges

    @cached_property
    def digits(self) -> set[str]:
        if self._parts:
            return set().union(*(part.digits for part in self._parts))
        runs = {run.replace(",", "") for run in _DIGIT_RUN.findall(self._text)}
        if "_hits" not in self.__dict__ and _PHONE_LIKE.search(self._text) is None:
            return runs  # no phone number can be read here: the digits are the digit runs
        return self._hits[2] | runs

    @cached_property
    def numbers(self) -> set[Decimal]:
        if self._parts:
            return set().union(*(part.numbers for part in self._parts))
        return {Decimal(number.replace(",", "")) for number in _BARE_NUMBER.findall(self._text)}

    @cached_property
    def listed(self) -> set[tuple[str, int]]:
        if self._parts:
            return set().union(*(part.listed for part in self._parts))
        listed: set[tuple[str, int]] = set()
        for match in _LISTING.finditer(self._text):
            # "passengers Ana Ruiz and Bo Li": a small count restated by listing what it counts.
            items = [item for item in _LIST_SEPARATOR.split(match["items"]) if item.strip()]
            # Each item names a thing (a name, a code, "a duffel"): "bags still to be
            # added, and the plan" lists nothing.
            if all(_LIST_ITEM.match(item) for item in items):
                listed.add((_UNIT_OF[match["unit"].lower()], len(items)))
        return listed

    @cached_property
    def times(self) -> set[int]:
        """The small counts a price is multiplied by ("$174 x 2")."""
        if self._parts:
            return set().union(*(part.times for part in self._parts))
        return {int(match["a"] or match["b"]) for match in _TIMES.finditer(self._text)}

    @cached_property
    def words(self) -> set[str]:
        """The codes and ids among the wanted words that the text spells."""
        if self._parts:
            return set().union(*(part.words for part in self._parts))
        return _joined_words(self._text, self._wanted) if self._wanted else set()


def _index(summary: str, words: Collection[str]) -> _Index:
    """What ``summary`` states; of codes and ids, only those among ``words`` are looked for."""
    return _Index(summary, words)


# The last summary read: its wanted words, its text and what it states. The offline
# digest checks its digest, and the fact check then checks that digest with a closing
# line added ("[digest shortened: ...]"): only that line is read then (see _index_of).
_last_read: list[tuple[set[str], str, _Index]] = []


def _index_of(summary: str, words: set[str], said: _Said | None = None) -> _Index:
    """``_index(summary, words)``, reading only the added line when ``summary`` is the
    last summary read, a line break and a line nothing reads across the break into; else,
    given ``said`` (see :func:`_said_first`), the index of its pieces and of the others."""
    last = _last_read[0] if _last_read else None
    if last is not None and last[0] == words and _adds_a_line(summary, last[1]):
        # The parts of the last summary's index, flattened: a summary grown line by line
        # keeps one index a line, not a chain of indexes each holding the text before.
        head = last[2]._parts or (last[2],)
        index = _Index(summary, words, (*head, _index(summary[len(last[1]) + 1 :], words)))
    elif said is not None:
        index = _Index(summary, words, (said.stated, _index(said.rest, words)))
    else:
        index = _index(summary, words)
    _last_read[:] = [(words, summary, index)]
    return index


class _Said(NamedTuple):
    """The pieces of a summary that hold the first spelling of some fact (``text``, joined
    by line breaks), what they state (``stated``), and the other pieces joined (``rest``)."""

    text: str
    stated: _Index
    rest: str


# The last pieces read (see _said_first): the digest with its closing line added has the
# same pieces, the line holding no fact's first spelling.
_last_said: list[_Said] = []
_SAID_FIRST_BUDGET = 1 << 25
"""Characters that finding facts' first spellings may pass over (see :func:`_said_first`):
a few milliseconds; a digest and its facts take far fewer."""


def _said_first(summary: str, facts: tuple[Fact, ...], words: set[str]) -> _Said | None:
    """The pieces of ``summary`` where some fact is first spelled, read apart from the
    others; None when that is every piece.

    A summary's pieces are its lines, split where a line break is followed by neither a
    letter, a digit nor a space: nothing reads across such a break (see
    :func:`_adds_a_line`), so what pieces joined by line breaks state, the summary states.
    A fact is stated most often where its spelling first stands (the offline digest writes
    each fact's spelling into its lines), so the other pieces are read only for a fact
    these do not state. Finding each fact's first spelling takes up to the summary's length
    for each fact: past ``_SAID_FIRST_BUDGET`` characters in all, the summary is read whole."""
    if len(summary) * len(facts) > _SAID_FIRST_BUDGET:
        return None
    starts = [0]
    at = summary.find("\n")
    while at >= 0:
        if at + 1 < len(summary) and not summary[at + 1].isalnum() and not summary[at + 1].isspace():
            starts.append(at + 1)
        at = summary.find("\n", at + 1)
    if len(starts) == 1:
        return None
    chosen: set[int] = set()
    for fact in facts:
        found = summary.find(fact.text) if fact.text else -1
        if found >= 0:
            chosen.add(bisect.bisect_right(starts, found) - 1)
    if len(chosen) == len(starts):
        return None
    ends = [start - 1 for start in starts[1:]] + [len(summary)]
    text = "\n".join([summary[starts[i] : ends[i]] for i in sorted(chosen)])
    rest = "\n".join([summary[starts[i] : ends[i]] for i in range(len(starts)) if i not in chosen])
    last = _last_said[0] if _last_said else None
    if last is not None and last.text == text and last.stated._wanted == words:
        said = _Said(text, last.stated, rest)  # what was read of the same pieces before
    else:
        said = _Said(text, _index(text, words), rest)
    _last_said[:] = [said]
    return said


def _adds_a_line(summary: str, before: str) -> bool:
    """Whether ``summary`` is ``before``, a line break and a line that starts with neither
    a letter, a digit nor a space. Then nothing reads across the break: the expression
    crosses a line break only by a space before a number, a multiplier or "dollars"; word
    runs, addresses and digit runs never do; and a line break stands, for every look-around,
    where the ends of the two texts read apart stand. So what the two state read apart is
    what they state read together."""
    at = len(before)
    return (
        len(summary) > at + 1
        and summary[at] == "\n"
        and not summary[at + 1].isalnum()
        and not summary[at + 1].isspace()
        and summary.startswith(before)
    )


def _joined_words(summary: str, wanted: Collection[str]) -> set[str]:
    """The codes and ids of ``wanted`` that ``summary`` spells in any case and with any
    separators: runs of up to eight words touching through one joining character, as one
    lower-case string. A run grows only while it is the start of a wanted code, so prose
    costs one set look-up a word."""
    starts = _Prefixes(wanted)
    # The words are read from the text lowered once where that lowers each character on
    # its own, as lowering each word would: no character became two ("İ"), and no capital
    # sigma, the one letter lowered by what follows it. Otherwise a word at a time.
    lowered = summary.lower()
    lower_each = len(lowered) != len(summary) or "Σ" in summary
    # Split at C speed: the words, and what stands between each word and the next.
    parts = _WORD_SPLIT.split(summary if lower_each else lowered)
    words, gaps = parts[1::2], parts[2::2]
    found: set[str] = set()
    short = starts.short  # the set look-up of _Prefixes.__contains__, without a call a word
    for i, word in enumerate(words):
        if i and gaps[i - 1] == "_":
            continue  # inside an id ("aa0000" is not in "aaa_aa_0000")
        if lower_each:
            word = word.lower()
        if word in short if len(word) <= _SHORT_PREFIX else word in starts:  # else no wanted code starts here
            _grow(words, gaps, i, lower_each, starts, wanted, found)
    return found


_SHORT_PREFIX = 64
"""Prefixes of a wanted code up to this length are kept in a set (one look-up a word of
prose); longer ones are found by bisection, so memory stays linear in a code's length."""


class _Prefixes:
    """Whether a text starts some of ``words``: ``text in prefixes``.

    Keeping every prefix of every word in a set would take memory in the square of a
    word's length (a 200 KB token, gigabytes); the set keeps the short prefixes, where
    prose is answered, and a sorted list answers the rest.
    """

    def __init__(self, words: Collection[str]) -> None:
        self.short = {word[:i] for word in words for i in range(1, min(len(word), _SHORT_PREFIX) + 1)}
        self.sorted = sorted(words)

    def __contains__(self, text: object) -> bool:
        if not isinstance(text, str):
            return False
        if len(text) <= _SHORT_PREFIX:
            return text in self.short
        # The first word not below ``text`` starts with it when any word does: every
        # string between ``text`` and a word starting with it starts with it too.
        at = bisect.bisect_left(self.sorted, text)
        return at < len(self.sorted) and self.sorted[at].startswith(text)


def _grow(
    words: list[str], gaps: list[str], i: int, lower: bool, starts: _Prefixes, wanted: Collection[str], found: set[str]
) -> None:
    """Add to ``found`` each wanted code that ``words[i]`` and the words after it spell,
    each touching the one before through one joining character, up to ``_MAX_JOINED``."""
    joined = words[i].lower() if lower else words[i]
    for _ in range(_MAX_JOINED - 1):
        if joined in wanted:
            found.add(joined)
        if i + 1 == len(words) or len(gaps[i]) != 1 or gaps[i] not in _JOINERS:
            return
        i += 1
        joined += words[i].lower() if lower else words[i]
        if joined not in starts:
            return
    if joined in wanted:
        found.add(joined)


@lru_cache(maxsize=4096)
def _fact_keys(kind: str, text: str) -> tuple[Key, ...]:
    """The values of a fact, read again from its text (a :class:`Fact` carries only text)."""
    keys: list[Key] = []
    for hit in hits(text):
        if hit.kind == kind or {hit.kind, kind} <= {"code", "id"}:
            keys.extend(hit.keys)
    return tuple(keys)


def _word_stated(index: _Index, key: Key) -> bool:
    if key[1] in index.words:
        return True
    # "certificates 8544743 and 9932251" for certificate_8544743: a long number names it.
    trailing = _TRAILING_DIGITS.search(key[1])
    return trailing is not None and trailing[1] in index.digits


def _amount_stated(index: _Index, key: Key) -> bool:
    # The same amount in its currency, or its number alone ("305" for $305; a JSON number).
    return (
        key in index.keys
        or key[2] in index.numbers
        or (key[1] is None and any(k[0] == "amount" and k[2] == key[2] for k in index.keys))
    )


def _time_stated(index: _Index, key: Key) -> bool:
    # A time to the minute states a time to the second ("07:35" for 07:35:03).
    return key in index.keys or ("time", key[1], key[2], 0) in index.keys


def _digits_stated(index: _Index, key: Key) -> bool:
    return key[1] in index.digits


def _phone_stated(index: _Index, key: Key) -> bool:
    # The summary may leave out up to three leading digits (a country code), keeping at least seven.
    digits: str = key[1]
    return any(digits[i:] in index.digits for i in range(4) if len(digits) - i >= 7)


def _date_stated(index: _Index, key: Key) -> bool:
    _, year, month, day = key
    if year is None:
        return (month, day) in index.days
    return key in index.keys or ("date", None, month, day) in index.keys


def _value_stated(index: _Index, key: Key) -> bool:
    return key in index.keys


def _quantity_stated(index: _Index, key: Key) -> bool:
    # Two to five things counted may be restated by listing them, or as what a price is
    # multiplied by ("$174 x 2" for "two tickets").
    _, unit, value = key
    if key in index.keys:
        return True
    if not (2 <= value <= 5 and value == int(value)):
        return False
    return (unit, int(value)) in index.listed or (unit in _COUNTED and int(value) in index.times)


_STATED_BY_KIND: dict[str, Callable[[_Index, Key], bool]] = {
    "word": _word_stated,
    "digits": _digits_stated,
    "phone": _phone_stated,
    "date": _date_stated,
    "amount": _amount_stated,
    "time": _time_stated,
    "quantity": _quantity_stated,
}
"""How the summary's index answers for a key of each kind; any other kind by its whole value."""


def _states(index: _Index, fact: Fact, keys: tuple[Key, ...], summary: str) -> bool:
    if not keys:
        # A fact that reads as nothing alone (a number under a money key, a code of
        # letters marked by its context, a fact built by hand): its exact words will do,
        # and a number under a money key is also stated by its value ("$4,418" for 4418).
        if fact.kind == "amount" and _PLAIN_NUMBER.fullmatch(fact.text):
            value = Decimal(fact.text.replace(",", ""))
            if _amount_stated(index, ("amount", None, value)):
                return True
        if fact.kind in ("label", "choice", "category"):
            return said_label(fact.text, summary, _lowered(summary), choice=fact.kind == "choice")
        return _said_alone(fact.text, summary)
    return any(_STATED_BY_KIND.get(key[0], _value_stated)(index, key) for key in keys)


_PLAIN_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _said_alone(text: str, summary: str) -> bool:
    """Whether ``summary`` holds ``text`` in any case, with no letter or digit touching
    it, as :func:`_said_alone_slowly` finds it with an expression; without compiling that
    expression where plain string search gives the same answer (an ASCII text with no
    letter, whose case no character shares, or an ASCII text in an ASCII summary, where
    lowering is the whole of ignoring case): a span may hold hundreds such facts, and
    compiling an expression for each cost more than the rest of the check."""
    if not text.isascii():
        return _said_alone_slowly(text, summary)
    if any(c.isalpha() for c in text):
        if not summary.isascii():
            return _said_alone_slowly(text, summary)
        text, summary = text.lower(), _lowered(summary)
    at = summary.find(text)
    while at >= 0:
        # A regular expression's word character is one str.isalnum() accepts, or "_".
        if not (at and summary[at - 1].isalnum()) and not (
            at + len(text) < len(summary) and summary[at + len(text)].isalnum()
        ):
            return True
        at = summary.find(text, at + 1)
    return False


@lru_cache(maxsize=1)
def _lowered(summary: str) -> str:
    return summary.lower()


def _said_alone_slowly(text: str, summary: str) -> bool:
    bounded = rf"(?<![^\W_]){re.escape(text)}(?![^\W_])"
    return re.search(bounded, summary, re.IGNORECASE) is not None


def missing_facts(facts: Iterable[Fact], summary: str) -> list[Fact]:
    """The facts of ``facts`` that ``summary`` does not state, in order.

    A fact is stated when the summary holds the same value in any usual spelling (see
    the module docstring).

    >>> facts = find_facts("Reservation 4OG6T3 costs $1,234.50, flight HAT268 on 2024-05-15.")
    >>> [str(f) for f in missing_facts(facts, "Booking 4og6t3: 1234.5 USD on May 15 (HAT2681).")]
    ['HAT268']
    """
    return list(_lacking(tuple(facts), summary))


@lru_cache(maxsize=2)
def _lacking(facts: tuple[Fact, ...], summary: str) -> tuple[Fact, ...]:
    """:func:`missing_facts`, kept for the last two summaries: the offline digest checks
    what it wrote, and the fact check then checks the same summary for the same facts (or
    the same with a closing line, of which only the line is read, for the facts the summary
    lacked: see :func:`_index_of`)."""
    keys = [_fact_keys(fact.kind, fact.text) for fact in facts]
    words = {k[1] for fact_keys in keys for k in fact_keys if k[0] == "word"}
    last = _last_lacked[0] if _last_lacked else None
    if last is not None and last[0] == facts and _adds_a_line(summary, last[1]):
        # The last summary checked with a line added (the digest's closing line): a fact it
        # stated, this one states (each reading finds in a longer text all it found in the
        # shorter, the line read apart: see _adds_a_line), so only the facts it lacked are
        # checked again.
        index = _index_of(summary, words)
        lacked = tuple(fact for fact in last[2] if not _states(index, fact, _fact_keys(fact.kind, fact.text), summary))
    else:
        lacked = _lacking_read(facts, keys, words, summary)
    _last_lacked[:] = [(facts, summary, lacked)]
    return lacked


_last_lacked: list[tuple[tuple[Fact, ...], str, tuple[Fact, ...]]] = []
"""The facts, summary and answer :func:`_lacking` gave last."""


def _lacking_read(
    facts: tuple[Fact, ...], keys: list[tuple[Key, ...]], words: set[str], summary: str
) -> tuple[Fact, ...]:
    """:func:`_lacking`, reading the summary (only its pieces that first spell facts, when
    they state every fact)."""
    said = _said_first(summary, facts, words)
    # Nothing is read until a check asks: a fact the pieces that first spell facts state is
    # stated by the summary, and the rest of it is read only for the others.
    index = _index_of(summary, words, said)
    if said is None:
        return tuple(
            fact for fact, fact_keys in zip(facts, keys, strict=True) if not _states(index, fact, fact_keys, summary)
        )
    # A fact spelled across a line break (one built by hand: find_facts reads none such
    # without values) could meet in the joined pieces where the summary holds another line.
    return tuple(
        fact
        for fact, fact_keys in zip(facts, keys, strict=True)
        if ("\n" in fact.text or not _states(said.stated, fact, fact_keys, said.text))
        and not _states(index, fact, fact_keys, summary)
    )
