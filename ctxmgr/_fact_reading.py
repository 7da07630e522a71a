"""Reading a text for facts: the expression, a reader per kind of fact, and the values
(:data:`Key`) each occurrence may stand for.

:mod:`ctxmgr.facts` says what a fact is (its docstring gives every rule), lists a span's
facts and checks a summary against them; both read texts with :func:`hits`. Only the
stretches of a text around a digit, an "@", a currency sign, ``://`` or ``www.`` are read
with the full expression (:func:`_stretches`), or the whole text where digits are dense
(:func:`_read_stretches`); quantities in words have a pattern of their own (:func:`_spelled`).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Collection, Iterable, Iterator
from decimal import Decimal, InvalidOperation
from operator import itemgetter
from typing import Any, NamedTuple

from ctxmgr._fact_words import worded

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

# What the look-ahead of a token starting with a letter (below) needs of what follows
# the token's first run of letters and "_": a digit or "-" (a digit later in the
# word), ".", "%", "+" or "@" (an e-mail address), "://", "," or "." (", 5"), "$", or a
# space and a digit or currency sign. Most words of prose and JSON (its keys:
# "reservation_id", and the digest's ``reservation_id:``, a colon with no "//" after it)
# fail this after one pass over them, where each branch of the look-ahead passed over
# them again; it is tested first and never rejects what the look-ahead accepts, so the
# expression matches what it matched without it (tests/test_facts.py).
_FIRST_RUN = r"(?=[^\W\d]++(?:[\d@.%+,$-]|://|\ [\d$€£¥₹]))"

# Where a token of one to four digits ends in a comma with no digit after it, or in a
# closing bracket, a quote or a semicolon ("price": 1936, a count in a list), none of the
# digit branches below can match: each needs more digits, a separator of a date, time or
# phone number, a space, a letter, a sign or a digit after the comma. Most of a JSON
# text's numbers are such; tested first, it spares them the ten branches (a sixth of the
# expression's time over the tau transcripts). It never rejects what a branch accepts
# (tests/test_facts.py matches the expression without it).
_NO_DIGIT_FACT = r"""(?!\d{1,4}+(?:,(?!\d)|[}\])"';]))"""
# The first characters of the three branches below, tested once before them (a place
# where no token starts fails here, not in each branch's own test).
_TOKEN_START = r"(?=[\w\[$€£¥₹₩₽₺+(\#])"

# One expression for every kind. A branch is tried only where a token starts (not after
# a letter or digit, nor inside a number or a joined word), and a token that starts with
# a letter only when it holds a digit, an "@" or "://", or a number follows it ("May 15",
# "USD 12"): where nothing can start, the engine moves on after one test. That look-ahead
# skips a word's non-digits (and the characters before an "@") possessively, one pass
# over the word where a lazy ``[\w-]*?\d`` tries the digit after each character; both
# ask whether the word's run of letters, digits, "_" and "-" holds a digit.
_PATTERN = rf"""
(?<![^\W_]){_TOKEN_START}(?:
  (?=\d)(?<![.,:/_-]){_NO_DIGIT_FACT}(?:
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
| (?=[^\W\d_])(?<![._%+-]){_FIRST_RUN}
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
# ``[hot]|://|[Ww][Ww][Ww]\.``, written to start with one character class: the engine
# then skips to the next character of that class at C speed instead of trying each
# branch at every character (tests/test_fact_speed.py checks both find the same). The
# same device is used by the expressions below that begin with a class and a look-behind.
_HOT = re.compile(rf"[{_HOT_CHARS}:Ww](?:(?<=[{_HOT_CHARS}])|(?<=:)//|(?<=[Ww])[Ww][Ww]\.)")
_COLD_WORD = rf"[^\s{_HOT_CHARS}]++(?!\S)"
# From a hot character: the rest of its word, the words after it up to the last one with
# a hot character no more than three words on, then three more words.
_REACH = re.compile(rf"\S*+(?:(?:\s++{_COLD_WORD}){{0,2}}\s++\S*?[{_HOT_CHARS}]\S*+)*+(?:\s++{_COLD_WORD}){{0,3}}")
_GAP = 64  # stretches closer than this are read as one


# Runs of letters and digits: a code's or an id's words.
_WORD_RUN = re.compile(r"[^\W_]++")
_TRAILING = ".,;:!?'\"*_)]}>"
_LETTER = re.compile(r"[^\W\d_]")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+")
_SCHEME = re.compile(r"^(?i:https?://)")
_TLD = re.compile(r"[A-Za-z]{2,}")
_ORDINAL_OR_FACTOR = re.compile(r"\d+(?:st|nd|rd|th|s|x|X)")
_HYPHENATED = re.compile(r"(\d+)-([A-Za-z]+)")

# Codes of letters only ("IFOYYZ") are facts only where the context marks them as ids:
# after a word such as "reservation" or "order" (with "id", "number" or "code" after it),
# or as the value of a key naming an id ("booking_code": "IFOYYZ"), or in a list under a
# key naming ids or such things ("reservations": ["IFOYYZ", "NO6JO3"]).
_ID_WORDS = r"(?i:reservation|booking|order|ticket|confirmation|locator|pnr)"
# Read from each run of five to ten capitals standing alone (rare in text), backwards:
# the words just before it, or, inside a list, the key before the list's "[".
_CAPITALS = re.compile(r"[A-Z](?<![\w-][A-Z])[A-Z]{4,9}(?![\w-])")  # (?<![\w-])[A-Z]{5,10}(?![\w-])
_MARKED_BEFORE = re.compile(
    rf"""(?<![^\W_])(?:{_ID_WORDS}s?(?:[\ _-]?(?i:ids?|numbers?|codes?|no\.?|\#))?
        |[A-Za-z]++_(?i:ids?|codes?|numbers?|locator))["']?\s*+(?:[:=\#]\s*+|(?i:is)\s++)?["']?\Z""",
    re.VERBOSE,
)
_LIST_BEFORE = re.compile(rf"""(?<![^\W_])(?:{_ID_WORDS}s|[A-Za-z]++_ids)["']?\s*+[:=]\s*+\[[^\[\]]*+\Z""")
_LOOK_BACK = 40
_LIST_BACK = 4000
_NOT_CODES = frozenset(
    {"CONFIRMED", "CANCELLED", "CANCELED", "PENDING", "ACTIVE", "CLOSED", "OPEN", "PAID", "REFUNDED",
     "BOOKED", "ISSUED", "NUMBER", "STATUS", "TOTAL", "NULL", "NONE", "TRUE", "FALSE", "EMPTY"}
)  # fmt: skip

# An amount given as a number under a key whose last word names money ("amount": 507, also
# ``price: 142`` as the offline digest shows a record): its
# currency is not said, so it is matched by value (see ctxmgr.facts).
# ["']?: and a number; the quote or the colon first, so the engine can skip to them.
# A minus sign is the direction of the money ("refund": -54.2 is $54.20 going back), not part of the fact.
_NUMBER_AFTER_KEY = re.compile(r"(?:[\"']:|:)\s*+-?(?P<num>\d++(?:\.\d++)?)(?!\.?\d|\w)")
_MONEY_KEY = re.compile(r"(?i:amount|price|cost|total|refund|fee|balance|paid|fare|charge)s?\Z")
_MONEY_KEY_ENDS = frozenset("tTeElLdDsS\u017f")  # the last letters above and "s" ignoring case (with the long s)
# _NUMBER_AFTER_KEY where the key's last letter may end a money key: the numbers
# _money_numbers keeps, without a step of Python for each number under any key (most of
# a JSON text's numbers). A number it passes over is one the search above finds and
# _money_numbers drops, and none of those holds a place this one could match at: a
# number after a key starts at the key's only quote or colon. It starts at the colon
# (the engine then skips to each colon at C speed, where a quote-or-colon start is tried
# at every character: five times as long over the tau transcripts); _money_numbers steps
# back over a quote before it, where _NUMBER_AFTER_KEY's match starts.
_MONEY_AFTER_KEY = re.compile(
    r":(?:(?<=[{ends}][\"']:)|(?<=[{ends}]:))\s*+-?(?P<num>\d++(?:\.\d++)?)(?!\.?\d|\w)".format(
        ends="".join(sorted(_MONEY_KEY_ENDS))
    )
)

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


def clean_url(url: str) -> str:
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


def url_key(url: str) -> Key:
    rest = _SCHEME.sub("", url, count=1)
    host, slash, path = rest.partition("/")
    host = host.lower().removeprefix("www.")
    return ("url", host, (slash + path).rstrip("/"))


def _compact(word: str) -> str:
    return "".join(_WORD_RUN.findall(word)).lower()


# -- reading ---------------------------------------------------------------------------


def _word_hit(text: str) -> _Hit | None:
    """What a run of letters, digits, "_" and "-" holding a digit is, if a fact (the
    caller has set tool-call ids apart)."""
    if _LETTER.search(text) is None:
        return None
    hyphenated = _HYPHENATED.fullmatch(text)
    if hyphenated is not None and hyphenated[2].lower() in _UNIT_OF:
        # "24-hour": a quantity written as an adjective, not an id.
        return _Hit("quantity", text, (("quantity", _UNIT_OF[hyphenated[2].lower()], Decimal(hyphenated[1])),))
    if "_" in text or "-" in text:
        return _Hit("id", text, (("word", _compact(text)),))
    if len(text) < 3 or _ORDINAL_OR_FACTOR.fullmatch(text):
        return None
    return _Hit("code", text, (("word", text.lower()),))


def hits(text: str, ignore: Collection[str] = ()) -> list[_Hit]:
    """Every fact occurrence of ``text``, in order (the same fact may come many times)."""
    stretches = _read_stretches(text)
    spelled = [
        *_spelled(text),
        *_lettered(text, ignore),
        *_money_numbers(text, stretches),
        *_worded(text),
    ]
    read = _read(text, ignore, stretches)
    if spelled:  # a quantity in words, a code of letters, a number under a money key, a label
        # A stable sort of the two runs, each in order already, merges them as
        # heapq.merge would (the read ones first where both start at one place), in one
        # pass of C instead of a step of Python a hit.
        read += spelled
        read.sort(key=itemgetter(0))
    return [hit for _start, hit in read]


def _read(text: str, ignore: Collection[str], stretches: Iterable[tuple[int, int]]) -> list[tuple[int, _Hit]]:
    """The facts in ``stretches`` of ``text`` with where they start. Reading the whole text
    as one stretch gives the same facts, more slowly: tests/test_facts.py checks it."""
    found: list[tuple[int, _Hit]] = []
    add = found.append
    words = _WORD_HITS
    read = _READ_HITS
    for start, end in stretches:
        for match in _SCAN.finditer(text, start, end):
            kind = match.lastgroup
            if kind == "word" or kind == "word_d":
                word = match.group()
                if word in ignore:
                    continue
                hit = words.get(word, _UNREAD)
                if hit is _UNREAD:
                    if len(words) >= _WORD_HITS_KEPT:
                        words.clear()
                    hit = words[word] = _word_hit(word)
                if hit is not None:
                    add((match.start(), hit))
            elif kind is not None and kind != "binary" and kind != "omitted":
                # A reader's hits are a function of what it reads of the match: its
                # branch, its text and its groups (and where they stand, which the
                # text and the groups fix), so the same match read again gives the
                # same hits (a date or a time comes again and again in a span).
                key = (kind, match.group(), match.groups())
                made = read.get(key)
                if made is None:
                    if len(read) >= _READ_KEPT:
                        read.clear()
                    made = read[key] = tuple(_READERS[kind](match))
                at = match.start()
                for hit in made:
                    add((at, hit))
    return found


_WORD_HITS: dict[str, _Hit | None] = {}
"""What each word read lately is (:func:`_word_hit`, a function of the word alone): ids
and codes come again and again in a span (a user id in every call), and reading one
costs a few expressions. Emptied when it holds ``_WORD_HITS_KEPT`` words, so its memory
is bounded whatever is read."""
_WORD_HITS_KEPT = 4096
_UNREAD = _Hit("", "", ())
_READ_HITS: dict[tuple[str, str, tuple[str | Any, ...]], tuple[_Hit, ...]] = {}
"""What each other match read lately gave (dates, times, amounts...), by its branch,
text and groups; bounded as ``_WORD_HITS`` is."""
_READ_KEPT = 4096


def _spelled(text: str) -> Iterator[tuple[int, _Hit]]:
    for match in _spelled_matches(text):
        for hit in _quantity(match):
            yield match.start(), hit


def _spelled_matches(text: str) -> Iterator[re.Match[str]]:
    """``_SPELLED_QUANTITY.finditer(text)``, the expression tried only where a number word
    starts, with no letter or digit before it.

    The expression's first letters are among the commonest (e, n, o, s, t): entered at each,
    the engine spent most of its time failing inside words. A match starts where the text,
    lowered, holds a number word, which the searches below find at C speed (a word such as
    "fourteen" is found by "four"). Lowering is exact where it keeps each character in its
    place and no character but a letter's own two cases matches an ASCII letter ignoring
    case: where the text holds one of those (dotted and dotless i, long s, the Kelvin sign)
    or lowering moves a character, the expression is tried everywhere as before.
    """
    lowered = text.lower()
    if not text.isascii() and (len(lowered) != len(text) or any(map(text.__contains__, _CASE_ODDITIES))):
        yield from _SPELLED_QUANTITY.finditer(text)
        return
    starts: set[int] = set()
    for word in _NUMBER_WORD_STARTS:
        at = lowered.find(word)
        while at >= 0:
            starts.add(at)
            at = lowered.find(word, at + 1)
    end = 0
    for at in sorted(starts):
        # A match starts after its last one ends (as finditer's do), where no letter or
        # digit stands before it (the expression's look-behind; str.isalnum is the
        # engine's letter or digit).
        if at < end or (at and text[at - 1].isalnum()):
            continue
        match = _SPELLED_QUANTITY.match(text, at)
        if match is not None:
            yield match
            end = match.end()


_NUMBER_WORD_STARTS = tuple(
    w for w in sorted(_NUMBER_WORDS) if not any(w != o and w.startswith(o) for o in _NUMBER_WORDS)
)
"""The number words no other number word starts ("four" finds "fourteen" too)."""
_CASE_ODDITIES = "\u0130\u0131\u017f\u212a"
"""The characters other than a letter's two cases that ignoring case matches to an ASCII
letter (as ``ctxmgr.facts._CASE_ODDITIES``; tests/test_fact_speed.py checks both)."""


def _lettered(text: str, ignore: Collection[str]) -> Iterator[tuple[int, _Hit]]:
    """Codes of letters only where the context marks them as ids (see ``_CAPITALS``)."""
    for match in _CAPITALS.finditer(text):
        code, at = match.group(), match.start()
        if code in _NOT_CODES or code in ignore:
            continue
        marked = _MARKED_BEFORE.search(text, max(0, at - _LOOK_BACK), at) is not None
        if not marked and at and text[at - 1] in "\"'":
            opened = text.rfind("[", max(0, at - _LIST_BACK), at)
            marked = opened >= 0 and _LIST_BEFORE.search(text, max(0, opened - _LOOK_BACK), at - 1) is not None
        if marked:
            yield at, _Hit("code", code, (("word", code.lower()),))


def _worded(text: str) -> Iterator[tuple[int, _Hit]]:
    """Labels, choices and places' codes (:mod:`ctxmgr._fact_words`), not a word that is
    never a code (``OPEN``, ``PAID``)."""
    for at, kind, spelled, key in worded(text):
        if kind != "code" or spelled not in _NOT_CODES:
            yield at, _Hit(kind, spelled, (key,))


def _money_numbers(text: str, stretches: Iterable[tuple[int, int]]) -> Iterator[tuple[int, _Hit]]:
    """Amounts given as numbers under keys that name money, in no stated currency (their
    digits are hot: the key is among the words before them, in the same stretch)."""
    for start, end in stretches:
        for match in _MONEY_AFTER_KEY.finditer(text, start, end):
            at = match.start()  # the key's colon; its closing quote before it, if in the stretch
            if at > start and text[at - 1] in "\"'":
                at -= 1
            # Most keys are not money ("flight_number": 12): a key naming money ends with a
            # letter ignoring case makes one of t, e, l, d or s, which the search tests first.
            if _MONEY_KEY.search(text, max(0, at - 8), at) is not None:
                yield match.start("num"), _Hit("amount", match["num"], (("amount", None, Decimal(match["num"])),))


_DENSE = 32
"""A text with at least one digit in this many characters is read whole (see
:func:`_read_stretches`)."""


def _read_stretches(text: str) -> list[tuple[int, int]]:
    """The stretches of ``text`` to read: those of :func:`_stretches`, or the whole text
    where digits are dense. Both give the same facts (tests/test_facts.py); where a text
    is mostly hot, as JSON records are (the stretches of the tau transcripts hold three
    quarters of their text), finding the stretches costs more than reading what lies
    between them, and up to ten counts at C speed tell which text is which."""
    # The digits are counted one after the other until they are dense enough: the sum of
    # the counts only grows, so stopping there gives the answer of counting them all.
    counted = 0
    for digit in _DIGITS:
        counted += text.count(digit)
        if counted * _DENSE >= len(text):
            return [(0, len(text))]
    return list(_stretches(text))


_DIGITS = "0214536789"
"""The ten digits, the commonest first in dates, times, amounts and ids (so a dense text
is known dense after fewer counts)."""


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
    text = clean_url(match.group())
    if len(text) > 7:
        yield _Hit("url", text, (url_key(text),))


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
