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
  ``20 pounds`` is a weight.
- ``quantity``: a number (digits, or a word from one to twenty) with a unit from a fixed
  list: weights, lengths, volumes, data sizes, durations, percentages and what a booking
  counts (``3 bags``, ``2 checked bags``, ``20 kg``, ``15%``, ``two passengers``). One
  word may stand between number and unit, unless it is a word like "the" or "of".
  "One" and "zero" in words are a manner of speaking ("one day") more often than a
  count: a summary may use them for ``1 bag``, but they make no fact.
- ``code``: one run of letters and digits holding both, at least three characters long:
  ``4OG6T3``, ``HAT268``, ``12A``. Ordinals (``15th``), decades (``1990s``) and factors
  (``10x``) are not codes.
- ``id``: words joined by ``_`` or ``-`` holding a letter and a digit: ``mia_li_3668``,
  ``credit_card_4421486``, a UUID.
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
their digits, wherever they stand. No fact is found inside a longer one: ``HAT268`` is
not in ``HAT2681``, nor ``$12`` in ``$120``, nor ``2024-05-15`` in ``2024-05-150``.

Two choices trade a little precision for fewer false alarms. A day written without a
year in the summary counts for that day in any year, since summaries leave out the year
the whole conversation shares (so "May 5" also covers a birthday on 1990-05-05). And a
code's letters and digits are compared without their separators, so an email such as
``mia.li3668@example.com`` also states ``mia_li_3668``.

Both functions take time in proportion to the length of their text, whatever it holds.
Every fact but a quantity in words holds a digit, an "@", a currency sign, ``://`` or
``www.``: only the stretches around those are read with the full expression (a quantity
in words has a pattern of its own), and every branch of the expression can start only
where a token starts.
"""

from __future__ import annotations

import bisect
import datetime
import heapq
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

__all__ = ["Fact", "find_facts", "missing_facts"]


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact of a span.

    Attributes:
        kind: What it is: ``code``, ``id``, ``email``, ``url``, ``phone``, ``date``,
            ``time``, ``amount``, ``quantity`` or ``number`` (see the module docstring).
        text: Its spelling at its first occurrence in the span.
    """

    kind: str
    text: str

    def __str__(self) -> str:
        return self.text


# -- the expression --------------------------------------------------------------------

_MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
    "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9,
    "september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}  # fmt: skip
_MONTH = "(?:{})\\.?(?![^\\W_])".format(
    "|".join(sorted({n.capitalize() for n in _MONTHS} | {n.upper() for n in _MONTHS}, key=len, reverse=True))
)

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
}  # fmt: skip

_CURRENCY_CODES = (
    "USD", "EUR", "GBP", "JPY", "CNY", "RMB", "INR", "CAD", "AUD", "NZD", "CHF", "SEK", "NOK", "DKK", "PLN", "CZK",
    "HUF", "MXN", "BRL", "ARS", "ZAR", "SGD", "HKD", "KRW", "TRY", "RUB", "AED", "SAR", "ILS", "THB", "IDR", "MYR",
)  # fmt: skip
_CURRENCY_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY"}
_DOLLAR_PREFIXES = {"US": "USD", "C": "CAD", "CA": "CAD", "A": "AUD", "AU": "AUD", "NZ": "NZD", "HK": "HKD",
                    "S": "SGD", "R": "BRL", "MX": "MXN"}  # fmt: skip
_CURRENCY_WORDS = {"dollar": "USD", "euro": "EUR", "yen": "JPY", "rupee": "INR", "yuan": "CNY", "cent": "USD"}
_MULTIPLIERS = {"k": 1000, "thousand": 1000, "m": 10**6, "mn": 10**6, "million": 10**6,
                "b": 10**9, "bn": 10**9, "billion": 10**9}  # fmt: skip

# Units by their canonical name. Single letters are left out ("5 g", "3 m" and "2 s" are
# as often a model name, a size or a typo as a unit), but for "h" glued to the number.
_UNITS: dict[str, tuple[str, ...]] = {
    "%": ("%", "percent", "per cent", "pct"),
    "kg": ("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms", "kilogramme", "kilogrammes"),
    "gram": ("gram", "grams", "gramme", "grammes"),
    "lb": ("lb", "lbs", "pound", "pounds"),
    "oz": ("oz", "ounce", "ounces"),
    "km": ("km", "kms", "kilometer", "kilometers", "kilometre", "kilometres"),
    "metre": ("meter", "meters", "metre", "metres"),
    "cm": ("cm", "centimeter", "centimeters", "centimetre", "centimetres"),
    "mm": ("mm", "millimeter", "millimeters", "millimetre", "millimetres"),
    "mile": ("mi", "mile", "miles"),
    "ft": ("ft", "foot", "feet"),
    "inch": ("inch", "inches"),
    "litre": ("liter", "liters", "litre", "litres"),
    "ml": ("ml", "milliliter", "milliliters", "millilitre", "millilitres"),
    "kb": ("kb", "kilobyte", "kilobytes"),
    "mb": ("mb", "megabyte", "megabytes"),
    "gb": ("gb", "gigabyte", "gigabytes"),
    "tb": ("tb", "terabyte", "terabytes"),
    "byte": ("byte", "bytes"),
    "second": ("sec", "secs", "second", "seconds"),
    "minute": ("min", "mins", "minute", "minutes"),
    "hour": ("hr", "hrs", "hour", "hours"),
    "day": ("day", "days"),
    "week": ("wk", "wks", "week", "weeks"),
    "month": ("month", "months"),
    "year": ("yr", "yrs", "year", "years"),
    "night": ("night", "nights"),
    "°C": ("°c", "° c", "degrees celsius"),
    "°F": ("°f", "° f", "degrees fahrenheit"),
    "bag": ("bag", "bags", "baggage", "baggages", "suitcase", "suitcases", "luggage"),
    "passenger": ("passenger", "passengers", "pax", "traveler", "travelers", "traveller", "travellers"),
    "person": ("person", "persons", "people"),
    "adult": ("adult", "adults"),
    "child": ("child", "children", "kid", "kids"),
    "infant": ("infant", "infants"),
    "guest": ("guest", "guests"),
    "seat": ("seat", "seats"),
    "ticket": ("ticket", "tickets"),
    "room": ("room", "rooms"),
    "item": ("item", "items"),
    "piece": ("piece", "pieces"),
    "unit": ("unit", "units"),
    "stop": ("stop", "stops", "layover", "layovers", "connection", "connections"),
    "segment": ("segment", "segments", "leg", "legs"),
    "flight": ("flight", "flights"),
    "point": ("point", "points"),
}
_UNIT_OF = {spelling: unit for unit, spellings in _UNITS.items() for spelling in spellings}
_UNIT_OF["h"] = "hour"

# Words that cannot sit between a number and its unit ("at 3 the passengers").
_NOT_ADJECTIVES = (
    "the", "a", "an", "of", "and", "or", "to", "for", "in", "on", "at", "by", "with", "from", "per", "than", "as",
    "all", "any", "no", "not", "his", "her", "their", "your", "my", "our", "its", "these", "those", "this", "that",
    "is", "are", "was", "were", "be", "been", "it", "which", "who",
)  # fmt: skip

_NUM = (
    r"(?:\d{1,3}(?:\.\d{3})++,\d{1,2}(?!\d)"  # 1.234,50 (decimal comma, dot groups)
    r"|\d{1,3}(?:,\d{3})++(?:\.\d++)?"  # 1,234.50
    r"|\d++(?:\.\d++|,\d{1,2}(?!\d))?)"  # 1234.50, 12,50
)
_MUL = r"(?:\s?(?:thousand|million|billion|mn|bn)|[kKmMbB])(?![^\W_])"
_CURRENCY_PREFIX = r"(?:(?:{})\s?|(?:US|CA|AU|NZ|HK|MX|[CASR])?\$|[€£¥₹₩₽₺])".format("|".join(_CURRENCY_CODES))
_CURRENCY_SUFFIX = r"(?:{}|(?i:(?:US\s)?dollars?|euros?|yen|rupees?|yuan|cents?)|[€£¥₹₩₽₺])".format(
    "|".join(_CURRENCY_CODES)
)


def _by_first_character(words: Iterable[str]) -> str:
    """``words`` as a case-insensitive alternation tried in their order, grouped by their
    first character (``k(?:gs|g|ilo)|p(?:ounds|ound)``) so the engine tests each first
    character once instead of entering every word. The same words match in the same
    order: words with different first characters never match at the same place (the
    first characters are ASCII letters and signs, whose case-insensitive classes are
    disjoint), and within a group the order is kept."""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0].lower(), []).append(word)
    return "|".join(
        re.escape(group[0][0]) + f"(?:{'|'.join(re.escape(word[1:]) for word in group)})" for group in groups.values()
    )


_UNIT = "(?:(?i:{})|h)".format(_by_first_character(u for u in sorted(_UNIT_OF, key=len, reverse=True) if u != "h"))
_NOT_ADJECTIVE = f"(?i:{_by_first_character(_NOT_ADJECTIVES)})"
_AMPM = r"(?:[AaPp]\.[Mm]\.?|[AaPp][Mm](?![^\W_]))"
_UNIT_AFTER = rf"\ ?(?:(?!{_NOT_ADJECTIVE}\ )(?P<q_adj>[A-Za-z]++)\ )?(?P<q_unit>{_UNIT})(?![^\W_])"

_BINARY_KINDS = "image|audio|video|document|data|base64|file"
_EMAIL = r"(?<![\w.%+-])[\w.%+-]++@[A-Za-z0-9-]++(?:\.[A-Za-z0-9-]++)++"

# One expression for every kind. A branch is tried only where a token starts (not after
# a letter or digit, nor inside a number or a joined word), and a token that starts with
# a letter only when it holds a digit, an "@" or "://", or a number follows it ("May 15",
# "USD 12"): where nothing can start, the engine moves on after one test. That look-ahead
# skips a word's non-digits (and the characters before an "@") possessively, one pass
# over the word where a lazy ``[\w-]*?\d`` tries the digit after each character; both
# ask whether the word's run of letters, digits, "_" and "-" holds a digit.
_PATTERN = rf"""
(?<![^\W_])(?:
  (?=\d)(?<![.,:/_-])(?:
    (?P<email_d>(?=[\w.%+-]++@){_EMAIL})
  | (?P<iso>(?P<iso_y>\d{{4}})(?P<iso_sep>[-/.])(?P<iso_m>\d{{1,2}})(?P=iso_sep)(?P<iso_d>\d{{1,2}})(?!\d)
        (?:[T\ ](?P<iso_t>\d{{2}}:\d{{2}}(?::\d{{2}})?)(?!\d)(?:\.\d++)?(?:Z|[+-]\d{{2}}:?\d{{2}})?)?)
  | (?P<numdate>(?P<nd_a>\d{{1,2}})(?P<nd_sep>[/.-])(?P<nd_b>\d{{1,2}})(?P=nd_sep)
        (?P<nd_y>\d{{4}}|\d{{2}})(?![\d/.-]\d))
  | (?P<dm>(?P<dm_d>\d{{1,2}})(?:st|nd|rd|th)?\ (?:of\ )?(?P<dm_m>{_MONTH})(?:,?\ (?P<dm_y>\d{{4}})(?!\d))?)
  | (?P<phone>\d{{3}}(?P<ph_sep>[.-])\d{{3}}(?P=ph_sep)\d{{4}}(?![\d]|[.-]\d))
  | (?P<time>(?P<t_h>\d{{1,2}}):(?P<t_m>[0-5]\d)(?::(?P<t_s>[0-5]\d))?(?![\d:])(?:\ ?(?P<t_ap>{_AMPM}))?
        |(?P<ta_h>\d{{1,2}})\ ?(?P<ta_ap>{_AMPM}))
  | (?P<suffixed>(?P<b_num>{_NUM})(?P<b_mul>{_MUL})?\ ?(?P<b_cur>{_CURRENCY_SUFFIX})(?![^\W_]))
  | (?P<quantity>(?P<q_num>{_NUM}){_UNIT_AFTER})
  | (?P<number>\d{{1,3}}(?:,\d{{3}})++(?![\d]|[.,]\d)|\d{{5,}}+(?![^\W_]|[.,]\d))
  | (?P<word_d>(?=[\w-]*[^\W\d_])(?>[^\W_]++(?:[_-][^\W_]++)*+)(?!":))
  )
| (?=[^\W\d_])(?<![._%+-])
    (?=[^\W\d]*+(?:-++[^\W\d]*+)*+\d|[\w.%+-]*+@|[^\W\d_]++(?:://|\.?,?\ [\d$€£¥₹]|\$)|[Ww][Ww][Ww]\.)(?:
    (?P<email>{_EMAIL})
  | (?P<url>(?:[Hh][Tt][Tt][Pp][Ss]?://|[Ww][Ww][Ww]\.)[^\s<>"'`\[\]{{}}|\\^]++)
  | (?P<prefixed>(?P<a_cur>{_CURRENCY_PREFIX})\ ?(?P<a_num>{_NUM})(?P<a_mul>{_MUL})?(?![^\W_]|[.,]\d))
  | (?P<md>(?P<md_m>{_MONTH})\ (?P<md_d>\d{{1,2}})(?!\d)(?:st|nd|rd|th)?(?![^\W_])(?:,?\ (?P<md_y>\d{{4}})(?!\d))?)
  | (?P<word>(?=[\w-]*\d)(?>[^\W_]++(?:[_-][^\W_]++)*+)(?!":))
  )
| (?=[\[$€£¥₹₩₽₺+(\#])(?:
    (?P<binary>\[(?:{_BINARY_KINDS})(?:\ [\w.+-]++/[\w.+-]++)?(?:,?\ \d++\ bytes)?)
  | (?P<omitted>\[\.\.\.\ \d++\ more\ characters\ omitted)
  | (?P<prefixed_s>(?P<s_cur>[$€£¥₹₩₽₺])\ ?(?P<s_num>{_NUM})(?P<s_mul>{_MUL})?(?![^\W_]|[.,]\d))
  | (?P<phone_s>\+\d{{1,3}}[\ .-]?(?:\(\d{{1,4}}\)[\ .-]?)?\d{{1,4}}(?:[\ .-]\d{{1,4}}){{1,4}}(?![\d])
        |\+\d{{7,15}}(?!\d)|\(\d{{3}}\)[\ .-]?\d{{3}}[\ .-]\d{{4}}(?!\d))
  | (?P<number_s>\#\d{{2,}}+(?![^\W_]))
  )
)
"""
_SCAN = re.compile(_PATTERN, re.VERBOSE)


def _spelled_numbers() -> str:
    """Spelled numbers ("two", "Three"...) as a pattern the engine can skip prose with: its first letter is
    a plain character class, and the rest is checked only after one."""
    rests: dict[str, list[str]] = {}
    for word in sorted(_NUMBER_WORDS, key=len, reverse=True):
        rests.setdefault(word[0], []).append(word[1:])
    firsts = "".join(sorted(rests))
    branches = "|".join(f"(?<=[{first}{first.upper()}])(?:{'|'.join(rest)})" for first, rest in sorted(rests.items()))
    return rf"[{firsts}{firsts.upper()}](?<![^\W_].)(?i:{branches})(?![^\W_])"


# A quantity counted in words ("two passengers"): the one fact with no digit, no "@" and
# no "://" in it, so it is looked for apart, over the whole text.
_SPELLED_QUANTITY = re.compile(rf"(?P<q_num>{_spelled_numbers()}){_UNIT_AFTER}", re.VERBOSE)

# Where a fact may be: every fact but a spelled quantity holds one of these. Only the
# stretch around them is read with the expression above.
_HOT_CHARS = r"\d@$€£¥₹₩₽₺"
_HOT = re.compile(rf"[{_HOT_CHARS}]|://|[Ww][Ww][Ww]\.")
_COLD_WORD = rf"[^\s{_HOT_CHARS}]++(?!\S)"
# From a hot character: the rest of its word, the words after it up to the last one with
# a hot character no more than three words on, then three more words.
_REACH = re.compile(rf"\S*+(?:(?:\s++{_COLD_WORD}){{0,2}}\s++\S*?[{_HOT_CHARS}]\S*+)*+(?:\s++{_COLD_WORD}){{0,3}}")
_GAP = 64  # stretches closer than this are read as one


# The summary's words for codes and ids: runs of letters and digits, and what is between them.
_WORD_RUN = re.compile(r"[^\W_]++")
_WORD_SPLIT = re.compile(r"([^\W_]++)")  # split: what is between words, and the words
_JOINERS = frozenset(" -_./:")
_MAX_JOINED = 8
_DIGIT_RUN = re.compile(r"\d{1,3}(?:,\d{3})++(?!\d)|\d++")
_DOMAIN = re.compile(r"(?<![\w@.-])(?:[A-Za-z0-9-]++\.)++[A-Za-z]{2,}+(?:/[^\s<>\"'`\[\]{}|\\^]*+)?")
_TRAILING = ".,;:!?'\"*_)]}>"
_LETTER = re.compile(r"[^\W\d_]")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+")
_SCHEME = re.compile(r"^(?i:https?://)")
_TLD = re.compile(r"[A-Za-z]{2,}")
_ORDINAL_OR_FACTOR = re.compile(r"\d+(?:st|nd|rd|th|s|x|X)")

Key = tuple[Any, ...]
"""A fact's value, tagged by kind (``("date", 2024, 5, 15)``): equal keys, the same fact."""


class _Hit(NamedTuple):
    """One occurrence of a fact: its kind, its spelling and every value it may stand for
    (an ambiguous date or time has two). Equal ``keys``, the same fact. A named tuple:
    one is made per occurrence, and a tuple is the cheapest to make."""

    kind: str
    text: str
    keys: tuple[Key, ...]
    weak: bool = False  # read to match a fact, but not a fact itself ("one day")


# -- values ----------------------------------------------------------------------------


def _decimal(number: str) -> Decimal | None:
    if "," in number and "." in number:
        decimal_mark = "," if number.rfind(",") > number.rfind(".") else "."
    elif "," in number:
        # 1,234 groups thousands; 12,50 is a decimal comma (two digits at most after it).
        decimal_mark = "." if _GROUPED.fullmatch(number) else ","
    else:
        decimal_mark = "."
    grouping = "." if decimal_mark == "," else ","
    cleaned = number.replace(grouping, "").replace(decimal_mark, ".")
    try:
        return Decimal(cleaned)
    except InvalidOperation:
        return None


def _scaled(number: str, multiplier: str | None) -> Decimal | None:
    value = _decimal(number)
    if value is None or not multiplier:
        return value
    return value * _MULTIPLIERS[multiplier.strip().lower()]


def _currency_of(spelling: str) -> str:
    spelling = spelling.strip()
    if spelling in _CURRENCY_SIGNS:
        return _CURRENCY_SIGNS[spelling]
    if spelling.endswith("$"):
        return _DOLLAR_PREFIXES.get(spelling[:-1], "USD")
    if spelling.upper() in _CURRENCY_CODES:
        return "CNY" if spelling.upper() == "RMB" else spelling.upper()
    word = spelling.lower().removeprefix("us").strip().removesuffix("s")
    return _CURRENCY_WORDS.get(word, spelling.upper())


def _day(year: int | None, month: int, day: int) -> tuple[int | None, int, int] | None:
    try:
        datetime.date(2000 if year is None else year, month, day)  # 2000: Feb 29 is a day
    except ValueError:
        return None
    return year, month, day


def _year(digits: str) -> int:
    year = int(digits)
    if len(digits) == 2:
        year += 2000 if year < 70 else 1900
    return year


def _times(hour: int, minute: int, second: int, ampm: str | None, zero_padded: bool) -> tuple[Key, ...]:
    if ampm:
        if not 1 <= hour <= 12:
            return ()
        hour = hour % 12 + (12 if ampm[0] in "Pp" else 0)
        return (("time", hour, minute, second),)
    if hour > 24:
        return ()
    if zero_padded or hour == 0 or hour > 12:
        return (("time", hour % 24, minute, second),)
    return (("time", hour, minute, second), ("time", (hour + 12) % 24, minute, second))


def _clean_url(url: str) -> str:
    """``url`` without the punctuation that ends the sentence around it."""
    opened, closed = url.count("("), url.count(")")
    end = len(url)
    while end and url[end - 1] in _TRAILING:
        if url[end - 1] == ")":
            if opened >= closed:
                break  # a bracket the address opened is part of it (wiki addresses)
            closed -= 1
        end -= 1
    return url[:end]


def _url_key(url: str) -> Key:
    rest = _SCHEME.sub("", url, count=1)
    host, slash, path = rest.partition("/")
    host = host.lower().removeprefix("www.")
    return ("url", host, (slash + path).rstrip("/"))


def _compact(word: str) -> str:
    return "".join(_WORD_RUN.findall(word)).lower()


# -- reading ---------------------------------------------------------------------------


def _word_hit(text: str, ignore: Collection[str]) -> _Hit | None:
    if text in ignore:
        return None
    if _LETTER.search(text) is None:
        return None
    if "_" in text or "-" in text:
        return _Hit("id", text, (("word", _compact(text)),))
    if len(text) < 3 or _ORDINAL_OR_FACTOR.fullmatch(text):
        return None
    return _Hit("code", text, (("word", text.lower()),))


def _hits(text: str, ignore: Collection[str] = ()) -> Iterator[_Hit]:
    """Every fact occurrence of ``text``, in order (the same fact may come many times)."""
    spelled = list(_spelled(text))
    read = _read(text, ignore, _stretches(text))
    if not spelled:  # the usual case: no quantity in words, nothing to merge
        return (hit for _start, hit in read)
    return (hit for _start, hit in heapq.merge(read, spelled, key=itemgetter(0)))


def _read(text: str, ignore: Collection[str], stretches: Iterable[tuple[int, int]]) -> Iterator[tuple[int, _Hit]]:
    """The facts in ``stretches`` of ``text`` with where they start. Reading the whole text
    as one stretch gives the same facts, more slowly: tests/test_facts.py checks it."""
    for start, end in stretches:
        for match in _SCAN.finditer(text, start, end):
            kind = match.lastgroup
            if kind in ("word", "word_d"):
                hit = _word_hit(match.group(), ignore)
                if hit is not None:
                    yield match.start(), hit
            elif kind is not None and kind not in ("binary", "omitted"):
                for hit in _READERS[kind](match):
                    yield match.start(), hit


def _spelled(text: str) -> Iterator[tuple[int, _Hit]]:
    for match in _SPELLED_QUANTITY.finditer(text):
        for hit in _quantity(match):
            yield match.start(), hit


def _stretches(text: str) -> Iterator[tuple[int, int]]:
    """The stretches of ``text`` that may hold a fact: from two words before a hot
    character to three words after the last one close to it, ending between words."""
    done = 0
    hot = _HOT.search(text)
    while hot is not None:
        start = _words_back(text, hot.start(), done)
        end = _end_of(_REACH.match(text, hot.end()))
        hot = _HOT.search(text, end)
        while hot is not None and hot.start() - end <= _GAP:
            end = _end_of(_REACH.match(text, hot.end()))
            hot = _HOT.search(text, end)
        yield start, end
        done = end


def _end_of(match: re.Match[str] | None) -> int:
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _words_back(text: str, at: int, floor: int) -> int:
    """The start of the word before the word before the one at ``at`` (not before
    ``floor``): "[image image/png, 1032 bytes" is described from its "[image"."""
    start = _word_start(text, at, floor)
    for _ in range(2):
        before = start
        while before > floor and text[before - 1].isspace():
            before -= 1
        if before == start:
            break
        start = _word_start(text, before, floor)
    return start


def _word_start(text: str, at: int, floor: int) -> int:
    # After the last space, line feed, tab or carriage return before ``at`` (a call for
    # each, without a generator: this runs for every stretch of every text).
    return max(
        floor,
        text.rfind(" ", floor, at) + 1,
        text.rfind("\n", floor, at) + 1,
        text.rfind("\t", floor, at) + 1,
        text.rfind("\r", floor, at) + 1,
    )


def _email(match: re.Match[str]) -> Iterator[_Hit]:
    text = match.group().rstrip(".-")
    host = text.rpartition("@")[2]
    if "." in host and _TLD.fullmatch(host.rpartition(".")[2]):
        yield _Hit("email", text, (("email", text.lower()),))


def _url(match: re.Match[str]) -> Iterator[_Hit]:
    text = _clean_url(match.group())
    if len(text) > 7:
        yield _Hit("url", text, (_url_key(text),))


def _iso(match: re.Match[str]) -> Iterator[_Hit]:
    day = _day(int(match["iso_y"]), int(match["iso_m"]), int(match["iso_d"]))
    if day is None:
        return
    end = match.start("iso_t") if match["iso_t"] else match.end()
    yield _Hit("date", match.string[match.start() : end].rstrip("T "), (("date", *day),))
    if match["iso_t"]:
        parts = [int(p) for p in match["iso_t"].split(":")] + [0]
        keys = _times(parts[0], parts[1], parts[2], None, True)
        if keys and parts[1] < 60 and parts[2] < 60:
            yield _Hit("time", match["iso_t"], keys)


def _numdate(match: re.Match[str]) -> Iterator[_Hit]:
    a, b, year = int(match["nd_a"]), int(match["nd_b"]), match["nd_y"]
    if match["nd_sep"] == "." and len(year) != 4:
        return  # 1.5.24 is a version number more often than a day
    readings = [(b, a)] if match["nd_sep"] == "." else [(a, b), (b, a)]  # (month, day)
    days = dict.fromkeys(v for m, d in readings if (v := _day(_year(year), m, d)) is not None)
    if days:
        yield _Hit("date", match.group(), tuple(("date", *d) for d in days))


def _named_date(day: str, month: str, year: str | None, text: str) -> Iterator[_Hit]:
    value = _day(int(year) if year else None, _MONTHS[month.rstrip(".").lower()], int(day))
    if value is not None:
        yield _Hit("date", text, (("date", *value),))


def _dm(match: re.Match[str]) -> Iterator[_Hit]:
    yield from _named_date(match["dm_d"], match["dm_m"], match["dm_y"], match.group())


def _md(match: re.Match[str]) -> Iterator[_Hit]:
    yield from _named_date(match["md_d"], match["md_m"], match["md_y"], match.group())


def _phone(match: re.Match[str]) -> Iterator[_Hit]:
    digits = "".join(c for c in match.group() if c.isdigit())
    if 7 <= len(digits) <= 15:
        yield _Hit("phone", match.group(), (("phone", digits),))


def _time(match: re.Match[str]) -> Iterator[_Hit]:
    if match["t_h"] is not None:
        hour, minute = int(match["t_h"]), int(match["t_m"])
        second = int(match["t_s"] or 0)
        keys = _times(hour, minute, second, match["t_ap"], len(match["t_h"]) == 2)
    else:
        keys = _times(int(match["ta_h"]), 0, 0, match["ta_ap"], False)
    if keys:
        yield _Hit("time", match.group(), keys)


def _amount(currency: str, number: str, multiplier: str | None, text: str) -> Iterator[_Hit]:
    value = _scaled(number, multiplier)
    if value is None:
        return
    code = _currency_of(currency)
    if currency.strip().lower().startswith("cent"):
        value /= 100
    yield _Hit("amount", text, (("amount", code, value),))


def _prefixed(match: re.Match[str]) -> Iterator[_Hit]:
    if match["a_cur"] is not None:
        yield from _amount(match["a_cur"], match["a_num"], match["a_mul"], match.group())
    else:
        yield from _amount(match["s_cur"], match["s_num"], match["s_mul"], match.group())


def _suffixed(match: re.Match[str]) -> Iterator[_Hit]:
    yield from _amount(match["b_cur"], match["b_num"], match["b_mul"], match.group())


def _quantity(match: re.Match[str]) -> Iterator[_Hit]:
    number = match["q_num"]
    word = _NUMBER_WORDS.get(number.lower())
    value = Decimal(word) if word is not None else _decimal(number)
    unit = _UNIT_OF.get(match["q_unit"].lower(), _UNIT_OF.get(match["q_unit"]))
    if value is not None and unit is not None:
        # "one" and "zero" are mostly a manner of speaking ("one day", "one of"): a
        # summary may say "one bag" for "1 bag", but "one day" alone is no fact.
        weak = word is not None and word < 2
        yield _Hit("quantity", match.group(), (("quantity", unit, value),), weak)


def _number(match: re.Match[str]) -> Iterator[_Hit]:
    digits = "".join(c for c in match.group() if c.isdigit())
    if match.group().startswith("#") or len(digits) >= 5:
        yield _Hit("number", match.group(), (("digits", digits),))


_READERS = {
    "email": _email,
    "email_d": _email,
    "prefixed_s": _prefixed,
    "phone_s": _phone,
    "number_s": _number,
    "url": _url,
    "iso": _iso,
    "numdate": _numdate,
    "dm": _dm,
    "md": _md,
    "phone": _phone,
    "time": _time,
    "prefixed": _prefixed,
    "suffixed": _suffixed,
    "quantity": _quantity,
    "number": _number,
}


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
    for hit in _hits(text, ignore):
        if hit.weak:
            continue
        if hit.keys not in seen:
            seen[hit.keys] = Fact(hit.kind, hit.text)
        if hit.kind == "date":
            dated.update((m, d) for _, y, m, d in hit.keys if y is not None)
    facts = []
    for identity, fact in seen.items():
        if fact.kind == "date" and _yearless_day(identity) in dated:
            continue  # "May 15" where "2024-05-15" is also said: the same day
        facts.append(fact)
    return facts


# -- checking --------------------------------------------------------------------------


@dataclass
class _Index:
    """What a summary states, by value."""

    keys: set[Key] = field(default_factory=set)
    words: set[str] = field(default_factory=set)
    digits: set[str] = field(default_factory=set)
    days: set[tuple[int, int]] = field(default_factory=set)


def _index(summary: str, words: Collection[str]) -> _Index:
    """What ``summary`` states; of codes and ids, only those among ``words`` are looked for."""
    index = _Index()
    for hit in _hits(summary):
        index.keys.update(hit.keys)
        if hit.kind == "date":
            index.days.update((k[2], k[3]) for k in hit.keys)
        elif hit.kind == "phone":
            digits = hit.keys[0][1]
            index.digits.update(digits[i:] for i in range(4) if len(digits) - i >= 7)
    for match in _DOMAIN.finditer(summary):
        index.keys.add(_url_key(_clean_url(match.group())))
    index.digits.update(m.group().replace(",", "") for m in _DIGIT_RUN.finditer(summary))
    if words:
        index.words = _joined_words(summary, words)
    return index


# The last summary read: its wanted words, its text and what it states. The offline
# digest checks its digest, and the fact check then checks that digest with a closing
# line added ("[digest shortened: ...]"): only that line is read then (see _index_of).
_last_read: list[tuple[set[str], str, _Index]] = []


def _index_of(summary: str, words: set[str]) -> _Index:
    """``_index(summary, words)``, reading only the added line when ``summary`` is the
    last summary read, a line break and a line nothing reads across the break into."""
    last = _last_read[0] if _last_read else None
    if last is not None and last[0] == words and _adds_a_line(summary, last[1]):
        head, tail = last[2], _index(summary[len(last[1]) + 1 :], words)
        index = _Index(head.keys | tail.keys, head.words | tail.words, head.digits | tail.digits, head.days | tail.days)
    else:
        index = _index(summary, words)
    _last_read[:] = [(words, summary, index)]
    return index


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
    for i, word in enumerate(words):
        if (word.lower() if lower_each else word) in starts:  # else no wanted code starts here
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
    for hit in _hits(text):
        if hit.kind == kind or {hit.kind, kind} <= {"code", "id"}:
            keys.extend(hit.keys)
    return tuple(keys)


def _word_stated(index: _Index, key: Key) -> bool:
    return key[1] in index.words


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


_STATED_BY_KIND: dict[str, Callable[[_Index, Key], bool]] = {
    "word": _word_stated,
    "digits": _digits_stated,
    "phone": _phone_stated,
    "date": _date_stated,
}
"""How the summary's index answers for a key of each kind; any other kind by its whole value."""


def _states(index: _Index, fact: Fact, keys: tuple[Key, ...], summary: str) -> bool:
    if not keys:
        # A fact built by hand that reads as nothing here: its exact words will do.
        bounded = rf"(?<![^\W_]){re.escape(fact.text)}(?![^\W_])"
        return re.search(bounded, summary, re.IGNORECASE) is not None
    return any(_STATED_BY_KIND.get(key[0], _value_stated)(index, key) for key in keys)


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
    the same with a closing line, of which only the line is read: see :func:`_index_of`)."""
    keys = [_fact_keys(fact.kind, fact.text) for fact in facts]
    words = {k[1] for fact_keys in keys for k in fact_keys if k[0] == "word"}
    index = _index_of(summary, words)
    return tuple(
        fact for fact, fact_keys in zip(facts, keys, strict=True) if not _states(index, fact, fact_keys, summary)
    )
