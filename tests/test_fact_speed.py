"""The fact finder's faster forms say what the plain ones say.

Several expressions of ``ctxmgr._fact_reading`` and ``ctxmgr.facts`` are written to start
with one character class, so the regular-expression engine skips at C speed to where a
match may start; the plain forms they replace are written out here, and both must find
the same matches, with the same groups, on any text. The same holds for the string
search that replaced a compiled expression per fact, and for the words kept read.
"""

from __future__ import annotations

import re
import sys

from hypothesis import given, strategies as st

import ctxmgr._fact_reading as reading
import ctxmgr._fact_words
import ctxmgr.facts as facts
from ctxmgr._fact_reading import _CURRENCY_SUFFIX, _HOT_CHARS, _MUL, _UNIT, _UNIT_OF

PLAIN = {
    "_HOT": re.compile(rf"[{_HOT_CHARS}]|://|[Ww][Ww][Ww]\."),
    "_CAPITALS": re.compile(r"(?<![\w-])[A-Z]{5,10}(?![\w-])"),
    "_CAPS": re.compile(r'(?<![\w-])(?:(?<!")[A-Z]{3,4}(?![\w-])|[A-Z]{3,4}(?![\w"-]))'),
    "_NUMBER_AFTER_KEY": re.compile(r"[\"']?:\s*+(?P<num>\d++(?:\.\d++)?)(?!\.?\d|\w)"),
    "_DIGIT_RUN": re.compile(r"\d{1,3}(?:,\d{3})++(?!\d)|\d++"),
    "_BARE_NUMBER": re.compile(
        rf"(?<![^\W_])(?<![.,$€£¥₹₩₽₺])(?<![A-Z]{{3}}\ )(?:\d{{1,3}}(?:,\d{{3}})++|\d++)(?:\.\d++)?(?![\d.,]?\d)"
        rf"(?!\ ?(?:{_CURRENCY_SUFFIX}|{_MUL}|{_UNIT})(?![^\W_])|[^\s.,;:!?)\]}}])"
    ),
    "_LISTING": re.compile(
        r"(?<![^\W_])(?P<unit>(?i:{}))(?![^\W_]):?\ (?P<items>[^.;:()\n]{{1,160}})".format(
            "|".join(sorted((w for w, u in _UNIT_OF.items() if u in facts._COUNTED), key=len, reverse=True))
        )
    ),
    "_NONE": re.compile(rf"(?<![^\W_])[Nn]o\ (?:[a-z]++\ )?(?P<unit>(?i:{'|'.join(facts._COUNTING)}))(?![^\W_])"),
    "_TIMES": re.compile(
        r"\d\ ?[x\u00d7*]\ ?(?P<a>[2-5])(?![\w.,]?\d)|(?<![\w.,])(?P<b>[2-5])\ ?[x\u00d7*]\ ?[$€£]?\d"
    ),
}
FAST = {
    "_HOT": reading._HOT,
    "_CAPITALS": reading._CAPITALS,
    "_CAPS": ctxmgr._fact_words._CAPS,
    "_NUMBER_AFTER_KEY": reading._NUMBER_AFTER_KEY,
    "_DIGIT_RUN": facts._DIGIT_RUN,
    "_BARE_NUMBER": facts._BARE_NUMBER,
    "_LISTING": facts._LISTING,
    "_NONE": facts._NONE,
    "_TIMES": facts._TIMES,
}

# Pieces that make the expressions' edge cases likely: numbers in every grouping, signs,
# keys, capitals, units and counted things in any case (with the characters that ignoring
# case matches to an ASCII letter), joiners and letters touching numbers.
PIECES = [
    "0", "7", "12", "305", "1,234", "1,234,567", "12.50", "4421486", "2024", ".", ",", ":", ";", "!", "?", ")",
    "(", " ", " ", " ", "\n", "-", "_", "/", "'", '"', "$", "€", "USD", "US", "C", "dollars", "k", "m", "million",
    "kg", "%", "h", "amount", "price", "IFOYYZ", "HAT", "EWR", "ABCD", "ABCDEFGHIJKL", "CONFIRMED", "reservation",
    "passengers",
    "Passengers", "PASSENGERS", "seat", "Seats", "bags", "kids", "\u0131tems", "\u0130tems", "\u017feats",
    "\u212aids", "Ana", "and", "Bo", "x", "é", "٣", "www.", "WWW.", "://", "@", "http", "example.com",
    "no", "No", "*", "\u00d7", "3", "5", "€15",
]  # fmt: skip
text = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def matches(pattern: re.Pattern[str], string: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(match.span(), match.groupdict()) for match in pattern.finditer(string)]


@given(text)
def test_each_faster_expression_finds_what_its_plain_form_finds(string: str) -> None:
    for name, plain in PLAIN.items():
        assert matches(FAST[name], string) == matches(plain, string), name


def test_the_faster_expressions_agree_on_every_piece_after_every_piece() -> None:
    for first in PIECES:
        for second in PIECES:
            for string in (first + second, first + " " + second + " 3", second + ": " + first + ", " + second):
                for name, plain in PLAIN.items():
                    assert matches(FAST[name], string) == matches(plain, string), (name, string)


def test_the_case_oddities_are_every_character_ignoring_case_matches_to_a_first_letter() -> None:
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    for letter in {word[0] for word in facts._COUNTING}:
        matched = set(re.findall(f"(?i:{letter})", every))
        assert matched <= {letter, letter.upper(), *facts._CASE_ODDITIES}, letter


SAID = ["507", "ab", "AB", "Ab", "x", "_", " ", "-", "é", "\u0130", "\u0131", "\u017f", "\u212a", "k", "s", "1", "$",
        ".", "12.5", "IFOYYZ", "ifoyyz"]  # fmt: skip
said = st.lists(st.sampled_from(SAID), max_size=12).map("".join)


@given(said, said)
def test_a_fact_said_alone_is_found_as_the_expression_finds_it(fact: str, summary: str) -> None:
    for string in (summary, summary + fact, fact + summary, f"{summary} {fact}.", f"{summary}{fact.upper()} "):
        assert facts._said_alone(fact, string) == facts._said_alone_slowly(fact, string), (fact, string)


def test_words_read_once_are_read_alike_and_the_kept_ones_stay_few() -> None:
    text = " ".join(f"id_{i}_x HAT{i:03d} 24-hour 4OG6T3" for i in range(3000))
    reading._WORD_HITS.clear()
    cold = list(reading.hits(text))
    assert len(reading._WORD_HITS) <= reading._WORD_HITS_KEPT
    warm = list(reading.hits(text))
    assert warm == cold
    assert next(hit for hit in cold if hit.text == "24-hour").kind == "quantity"
    # A tool-call id is never a fact, though the same word was read as one before.
    assert not [hit for hit in reading.hits("4OG6T3 and more", frozenset({"4OG6T3"})) if hit.text == "4OG6T3"]


def plain_money_numbers(text: str, stretches: list[tuple[int, int]]) -> list[tuple[int, str]]:
    found = []
    for start, end in stretches:
        for match in reading._NUMBER_AFTER_KEY.finditer(text, start, end):
            if reading._MONEY_KEY.search(text, max(0, match.start() - 8), match.start()) is not None:
                found.append((match.start("num"), match["num"]))
    return found


MONEY = ["amount", "AMOUNTS", "co\u017ft", "price", "total", "refund", "fees", "Balance", "paid", "fare", "charge",
         "flight_number", "x", '"', "'", ":", " ", "507", "12.5", "_", "\n", "{", ",", "-"]  # fmt: skip


@given(st.lists(st.sampled_from(MONEY), max_size=30).map("".join))
def test_numbers_under_money_keys_are_found_as_the_plain_search_finds_them(text: str) -> None:
    stretches = list(reading._stretches(text))
    fast = [(at, hit.text) for at, hit in reading._money_numbers(text, stretches)]
    assert fast == plain_money_numbers(text, stretches)
    # A stretch may start anywhere (between a key's quote and its colon too), or be the whole text.
    for start in range(len(text) + 1):
        fast = [(at, hit.text) for at, hit in reading._money_numbers(text, [(start, len(text))])]
        assert fast == plain_money_numbers(text, [(start, len(text))])


def test_the_money_keys_end_with_the_letters_tested_first() -> None:
    words = re.search(r"\(\?i:([a-z|]+)\)", reading._MONEY_KEY.pattern)
    assert words is not None
    last = {word[-1] for word in words[1].split("|")} | {"s"}
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    assert set(re.findall(f"(?i:[{''.join(last)}])", every)) == set(reading._MONEY_KEY_ENDS)


def test_matches_read_once_are_read_alike_and_the_kept_ones_stay_few() -> None:
    day = "2024-05-{:02d}T10:{:02d}:00 ${}.50 {}:30 PM May {}"
    text = " ".join(day.format(i % 28 + 1, i % 60, i, i % 12 + 1, i % 28 + 1) for i in range(3000))
    reading._READ_HITS.clear()
    cold = list(reading.hits(text))
    assert len(reading._READ_HITS) <= reading._READ_KEPT
    warm = list(reading.hits(text))
    assert warm == cold
    reading._READ_HITS.clear()
    assert [hit for hit in reading.hits("On 2024-05-15T10:00:00 and 6 PM") if hit.kind == "time"] == [
        reading._Hit("time", "10:00:00", (("time", 10, 0, 0),)),
        reading._Hit("time", "6 PM", (("time", 18, 0, 0),)),
    ]


@given(
    st.lists(
        st.sampled_from(["7", "12", "2024-05-23", "a", "word", " ", "\n", "$5", "x" * 40, "0" * 9]), max_size=60
    ).map("".join)
)
def test_dense_texts_are_told_apart_as_counting_every_digit_tells_them(string: str) -> None:
    dense = sum(map(string.count, "0123456789")) * reading._DENSE >= len(string)
    plain = [(0, len(string))] if dense else list(reading._stretches(string))
    assert reading._read_stretches(string) == plain
    assert sorted(reading._DIGITS) == list("0123456789")


def test_ignoring_case_matches_no_other_character_to_a_number_word_letter() -> None:
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    assert reading._CASE_ODDITIES == facts._CASE_ODDITIES
    for letter in set("".join(reading._NUMBER_WORDS)):
        matched = set(re.findall(f"(?i:{letter})", every))
        assert matched <= {letter, letter.upper(), *reading._CASE_ODDITIES}, letter


NUMBER_PIECES = [
    *reading._NUMBER_WORDS, "One", "TWO", "fOuR", "fourteen", "Seventeen", "\u017fix", "\u0130", "\u0131",
    "\u212a", "phone", "often", "_", " ", " ", "-", "'", ".", "\n", "bags", "passengers", "%", "h", "kg",
    "big", "the", "é", "x", "3", "1,5", "°C", "\u03a3",
]  # fmt: skip


@given(st.lists(st.sampled_from(NUMBER_PIECES), max_size=30).map("".join))
def test_spelled_quantities_are_found_where_the_expression_finds_them(string: str) -> None:
    def spans(found: object) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
        return [(m.span(), m.groupdict()) for m in found]  # type: ignore[attr-defined]

    expected = spans(reading._SPELLED_QUANTITY.finditer(string))
    assert spans(reading._spelled_matches(string)) == expected
    assert spans(reading._spelled_matches(string + "\u017f")) == spans(
        reading._SPELLED_QUANTITY.finditer(string + "\u017f")
    )


def test_spelled_quantities_are_found_after_every_piece() -> None:
    for first in NUMBER_PIECES:
        for second in NUMBER_PIECES:
            for string in (first + " " + second + " bags", first + second + " passengers", second + first):
                found = [(m.span(), m.groupdict()) for m in reading._spelled_matches(string)]
                assert found == [(m.span(), m.groupdict()) for m in reading._SPELLED_QUANTITY.finditer(string)], string
