"""ctxmgr.facts: which facts a span holds, and which a summary lacks, whatever the spelling."""

from __future__ import annotations

import copy
import datetime
import doctest
import itertools
import json
import pickle
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from _lines_run import lines_run
from hypothesis import HealthCheck, example, given, settings, strategies as st

import ctxmgr._fact_reading
import ctxmgr.facts
from ctxmgr.facts import Fact, find_facts, missing_facts
from ctxmgr.files import read_conversations
from ctxmgr.state import SummaryContextManager, ToolCallBlock, ToolResultBlock
from ctxmgr.state._transcript import render_transcript

SAMPLE = Path(__file__).parent / "data" / "tau-airline-sample.jsonl"


def texts(text: str, ignore: tuple[str, ...] = ()) -> list[str]:
    return [fact.text for fact in find_facts(text, ignore=ignore)]


def kinds(text: str) -> list[tuple[str, str]]:
    return [(fact.kind, fact.text) for fact in find_facts(text)]


def states(span: str, summary: str) -> bool:
    """Whether ``summary`` states every fact of ``span`` (which must hold at least one)."""
    facts = find_facts(span)
    assert facts, f"no fact in {span!r}"
    return not missing_facts(facts, summary)


def test_docstring_examples() -> None:
    assert doctest.testmod(ctxmgr.facts).failed == 0


def test_fact_is_its_text() -> None:
    fact = Fact("code", "4OG6T3")
    assert str(fact) == "4OG6T3"
    assert fact == Fact("code", "4OG6T3")
    with pytest.raises(AttributeError):
        fact.text = "other"  # type: ignore[misc]


# -- what is a fact ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("reservation 4OG6T3 on HAT268, ref ABC123, seat 12A", ["4OG6T3", "HAT268", "ABC123", "12A"]),
        ("my user id is mia_li_3668.", ["mia_li_3668"]),
        ("pay with credit_card_4421486 or gift-card-77", ["credit_card_4421486", "gift-card-77"]),
        ("trace 123e4567-e89b-12d3-a456-426614174000", ["123e4567-e89b-12d3-a456-426614174000"]),
    ],
)
def test_codes_and_ids(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "the 15th and the 2nd, the 1990s, 10x faster",  # ordinals, decades, factors
        "A1 B2",  # too short to be a code
        "get_reservation_details and flight_number",  # no digit
        "order 1234 of 42, then 1,234 in 2024",  # small numbers alone, a year alone
        "3.14159 and 12345.6",  # decimals without a unit
    ],
)
def test_not_facts(text: str) -> None:
    assert texts(text) == []


def test_emails_urls_and_phones() -> None:
    text = (
        "Mail Mia.Li@Example.COM, see https://example.com/a_(b). or www.Example.org/x?y=1; "
        "call +1 (555) 123-4567 or 555-123-4567."
    )
    assert kinds(text) == [
        ("email", "Mia.Li@Example.COM"),
        ("url", "https://example.com/a_(b)"),
        ("url", "www.Example.org/x?y=1"),
        ("phone", "+1 (555) 123-4567"),
        ("phone", "555-123-4567"),
    ]


def test_amounts() -> None:
    text = "USD 12, 12.50 EUR, €5, 5 dollars, 50 cents, $2.5 million, C$40, US$7, $1.2k, £3, $1,234.50"
    assert texts(text) == [
        "USD 12", "12.50 EUR", "€5", "5 dollars", "50 cents", "$2.5 million", "C$40", "US$7", "$1.2k", "£3",
        "$1,234.50",
    ]  # fmt: skip


def test_dates() -> None:
    assert texts("on 15 May 2024 and 2024-02-30") == ["15 May 2024"]  # no February 30th
    # The same day in seven spellings is one fact, spelled as it came first.
    same = "2024-05-15, May 15, 2024, May 15th, 15th of May, 05/15/2024, 15.05.2024, 2024/05/15"
    assert texts(same) == ["2024-05-15"]
    assert texts("May 20th, then 2024-05-20") == ["2024-05-20"]  # a day without a year, then with one
    assert texts("by March 3rd") == ["March 3rd"]
    assert texts("you may 15 times") == []  # "may" is a verb
    assert texts("05/06/2024") == ["05/06/2024"]  # either day, one fact


def test_times() -> None:
    text = "at 14:30, 06:00:00, 6:30 PM, 6pm, 11 AM, 2024-05-15T15:00:00Z, 25:00"
    assert kinds(text) == [
        ("time", "14:30"),
        ("time", "06:00:00"),
        ("time", "6:30 PM"),
        ("time", "6pm"),
        ("time", "11 AM"),
        ("date", "2024-05-15"),
        ("time", "15:00:00"),
    ]


def test_quantities() -> None:
    text = "3 bags, 2 checked bags, 20 kg, 15%, two passengers, 3h, 12 items, 2.5 hours"
    assert [f.kind for f in find_facts(text)] == ["quantity"] * 8
    # "one" is a manner of speaking; a word like "the" cannot stand before the unit.
    assert texts("one day, at 3 the passengers came, 5 of them") == []


def test_numbers() -> None:
    assert kinds("zip 78750, order #12, 1,250,000 miles? no: 1,250,000") == [
        ("number", "78750"),
        ("number", "#12"),
        ("quantity", "1,250,000 miles"),
        ("number", "1,250,000"),
    ]


def test_unique_by_value_in_order_of_first_appearance() -> None:
    text = "HAT268 then hat268, $12 then 12 dollars, 20kg then 20 kg, mia_li_3668 then MIA-LI-3668, 4OG6T3"
    assert texts(text) == ["HAT268", "$12", "20kg", "mia_li_3668", "4OG6T3"]


def test_tool_call_ids_binary_descriptions_and_json_keys_are_not_facts() -> None:
    transcript = (
        'ASSISTANT: [calls tool get_user_details({"user_id": "mia_li_3668"}) id=call_oIHazX6yQrB8hUwl4cRilFKj]\n'
        'TOOL RESULT get_user_details [call_oIHazX6yQrB8hUwl4cRilFKj]: {"address1": "975 Sunset Drive", '
        '"payment_methods": {"credit_card_4421486": {"id": "credit_card_4421486"}}}\n'
        "USER: see this\n  [image image/png, 1032 bytes, name=chart.png, at=https://x.example/c.png]\n"
        "USER: [document application/pdf, 204800 bytes] and [... 12345 more characters omitted from this rendering]"
    )
    facts = texts(transcript, ignore=("call_oIHazX6yQrB8hUwl4cRilFKj",))
    assert facts == ["mia_li_3668", "credit_card_4421486", "https://x.example/c.png"]


def test_ignored_ids_of_any_shape() -> None:
    odd = "call:7/ABC123.x"  # not one word: removed from the text whole
    assert texts(f"id {odd} and HAT268", ignore=(odd, "toolu_01A09q90qw90lq917835")) == ["HAT268"]
    assert texts("toolu_01A09q90qw90lq917835 HAT268", ignore=frozenset({"toolu_01A09q90qw90lq917835"})) == ["HAT268"]


# -- what states a fact ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("span", "summary"),
    [
        ("HAT268", "flight hat268"),
        ("HAT268", "flight HAT-268"),
        ("HAT268", "flight HAT 268."),
        ("4OG6T3", "Booking (4og6t3)"),
        ("mia_li_3668", "user MIA-LI-3668"),
        ("credit_card_4421486", "the credit card 4421486"),
        ("HAT268", "HAT268-4OG6T3"),
        ("$1,234.50", "1234.5 USD"),
        ("$1,234.50", "$1234.50"),
        ("$1,234.50", "1,234.50 dollars"),
        ("$1,234.50", "USD 1,234.5"),
        ("USD 12", "$12.00"),
        ("12.50 EUR", "€12.5"),
        ("12,50 €", "EUR 12.50"),
        ("€5", "5 euros"),
        ("50 cents", "$0.50"),
        ("$2.5 million", "$2,500,000"),
        ("$1.2k", "$1,200"),
        ("2024-05-15", "May 15, 2024"),
        ("2024-05-15", "15 May 2024"),
        ("2024-05-15", "May 15th, 2024"),
        ("2024-05-15", "Wed, 15th of May"),
        ("2024-05-15", "05/15/2024"),
        ("2024-05-15", "15/05/2024"),
        ("2024-05-15", "15.05.2024"),
        ("2024-05-15", "on May 15"),  # no year in the summary: the day will do
        ("May 15", "2024-05-15"),
        ("05/06/2024", "May 6, 2024"),
        ("05/06/2024", "June 5, 2024"),
        ("06:00:00", "6 AM"),
        ("06:00:00", "6:00"),
        ("18:00:00", "6pm"),
        ("18:00:00", "6:00 p.m."),
        ("18:00:00", "6:00"),
        ("12:00 PM", "12:00"),
        ("12 AM", "00:00"),
        ("20 kg", "20kg"),
        ("20 kg", "20 kilograms"),
        ("2 checked bags", "two bags"),
        ("1 checked bag", "one bag"),
        ("15%", "15 percent"),
        ("3 hours", "3 hrs"),
        ("mia.li3818@example.com", "Mia.Li3818@EXAMPLE.COM"),
        ("https://www.Example.com/Path/", "example.com/Path"),
        ("https://example.com/a.", "http://EXAMPLE.com/a"),
        ("+1 (555) 123-4567", "555.123.4567"),
        ("555-123-4567", "+1 555 123 4567"),
        ("555-123-4567", "5551234567"),
        ("78750", "Austin, TX 78750"),
        ("1,250,000", "1250000"),
        ("#12", "order 12"),
    ],
)
def test_a_fact_in_another_spelling_is_stated(span: str, summary: str) -> None:
    assert states(span, summary)


@pytest.mark.parametrize(
    ("span", "summary"),
    [
        ("HAT268", "HAT2681"),
        ("HAT268", "XHAT268"),
        ("HAT268", "HAT269"),
        ("mia_li_3668", "mia_li_36689"),
        ("$12", "$120"),
        ("$12", "$1.2"),
        ("$12", "12 passengers"),  # a number without a currency is not an amount
        ("$12", "€12"),
        ("$12", "$12 million"),
        ("$12.50", "$12.51"),
        ("2024-05-15", "May 15, 2023"),
        ("2024-05-15", "2024-05-16"),
        ("2024-05-15", "2024-05-150"),
        ("2024-05-15", "05/16/2024"),
        ("May 15", "May 16"),
        ("06:00:00", "06:30"),
        ("06:00:00", "18:00"),
        ("06:00:00", "6 PM"),
        ("11:00:00", "11 PM"),
        ("20 kg", "20 lb"),
        ("20 kg", "200 kg"),
        ("2 checked bags", "2 passengers"),
        ("15%", "1.5%"),
        ("mia.li3818@example.com", "mia.li381@example.com"),
        ("https://example.com/a", "https://example.com/b"),
        ("555-123-4567", "555-123-4568"),
        ("78750", "787501"),
        ("78750", "78,751"),
    ],
)
def test_a_near_miss_does_not_state_a_fact(span: str, summary: str) -> None:
    assert not states(span, summary)


def test_missing_facts_keeps_the_order_and_accepts_any_iterable() -> None:
    facts = find_facts("HAT268, $12, 2024-05-15, mia_li_3668")
    assert missing_facts(iter(facts), "Mia (mia-li-3668) flies on May 15.") == [Fact("code", "HAT268"), facts[1]]
    assert missing_facts([], "anything") == []
    assert missing_facts(facts, "") == facts


def test_a_fact_made_by_hand_is_matched_by_its_words() -> None:
    fact = Fact("name", "Sunset Drive")
    assert missing_facts([fact], "lives on sunset drive, Austin") == []
    assert missing_facts([fact], "lives on Sunset Drives") == [fact]


def test_year_is_the_only_difference_a_summary_may_leave_out() -> None:
    # A summary that drops the year of a date of birth but says another day is caught.
    facts = find_facts("born 1990-04-05, flying 2024-05-20")
    assert missing_facts(facts, "born April 5th, flies May 21") == [facts[1]]


# -- properties --------------------------------------------------------------------------------

MONTHS = [datetime.date(2024, m, 1).strftime("%B") for m in range(1, 13)]

codes = st.from_regex(r"[A-Z]{2,3}[0-9]{2,4}", fullmatch=True)
days = st.dates(min_value=datetime.date(1950, 1, 1), max_value=datetime.date(2030, 12, 31))
cents = st.integers(min_value=1, max_value=10**8)
clock = st.tuples(st.integers(0, 23), st.integers(0, 59))


def iso(day: datetime.date) -> str:
    return day.isoformat()


def date_forms(day: datetime.date) -> list[str]:
    month = MONTHS[day.month - 1]
    suffix = "th" if 10 <= day.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day.day % 10, "th")
    return [
        iso(day),
        f"{month} {day.day}, {day.year}",
        f"{day.day} {month} {day.year}",
        f"{month[:3]} {day.day}{suffix}, {day.year}",
        f"{day.day}{suffix} of {month} {day.year}",
        f"{day.month}/{day.day}/{day.year}",
        f"{day.day:02}.{day.month:02}.{day.year}",
        f"{day.year}/{day.month:02}/{day.day:02}",
        f"{month} {day.day}",
    ]


def amount_forms(value: int) -> list[str]:
    dollars, rest = divmod(value, 100)
    exact = Decimal(value) / 100
    return [
        f"${dollars:,}.{rest:02}",
        f"${dollars}.{rest:02}",
        f"{exact.normalize():f} USD",
        f"USD {dollars:,}.{rest:02}",
        f"{dollars:,}.{rest:02} dollars",
    ]


def time_forms(hour: int, minute: int) -> list[str]:
    twelve, half = (hour % 12 or 12), ("PM" if hour >= 12 else "AM")
    return [f"{hour:02}:{minute:02}", f"{hour:02}:{minute:02}:00", f"{twelve}:{minute:02} {half}"]


@settings(max_examples=60, deadline=None)
@given(st.data(), days)
def test_any_spelling_of_a_day_states_it(data: st.DataObject, day: datetime.date) -> None:
    span, summary = data.draw(st.permutations(date_forms(day)))[:2]
    assert states(f"on {span}.", f"Then, on {summary}, nothing.")


@settings(max_examples=60, deadline=None)
@given(st.data(), cents)
def test_any_spelling_of_an_amount_states_it(data: st.DataObject, value: int) -> None:
    span, summary = data.draw(st.permutations(amount_forms(value)))[:2]
    assert states(f"costs {span}.", f"It costs {summary} in all.")
    assert not states(f"costs {span}.", f"It costs {amount_forms(value + 1)[0]} in all.")
    assert not states(f"costs {span}.", f"It costs {amount_forms(value)[1]}1 in all.")


@settings(max_examples=40, deadline=None)
@given(st.data(), clock)
def test_any_spelling_of_a_time_states_it(data: st.DataObject, time: tuple[int, int]) -> None:
    span, summary = data.draw(st.permutations(time_forms(*time)))[:2]
    assert states(f"at {span}.", f"at {summary}, then")


@st.composite
def distinct_facts(draw: st.DrawFn) -> list[str]:
    """Facts of different values, each written once as a span would."""
    written: dict[object, str] = {}
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["code", "date", "amount", "time", "id", "quantity"]))
        if kind == "code":
            code = draw(codes)
            written[("word", code.lower())] = code
        elif kind == "date":
            day = draw(days)
            written[day] = iso(day)
        elif kind == "amount":
            value = draw(cents)
            written[("amount", value)] = amount_forms(value)[0]
        elif kind == "time":
            hour, minute = draw(clock)
            written[("time", hour, minute)] = f"{hour:02}:{minute:02}"
        elif kind == "id":
            name = draw(st.from_regex(r"[a-z]{3,6}_[a-z]{2,5}_[0-9]{4}", fullmatch=True))
            written[("word", name.replace("_", ""))] = name
        else:
            count = draw(st.integers(2, 99))
            written[("kg", count)] = f"{count} kg"
    return list(written.values())


filler = st.sampled_from(["The user asked about", "then", "and later", "- ok.", "Noted:", "(see", "USER:"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(distinct_facts(), st.lists(filler, min_size=1, max_size=4), st.data())
def test_the_span_states_its_facts_and_a_removed_one_is_reported(
    facts: list[str], words: list[str], data: st.DataObject
) -> None:
    span = " ".join(f"{words[i % len(words)]} {fact}," for i, fact in enumerate(facts))
    found = find_facts(span)
    assert [f.text for f in found] == facts
    assert missing_facts(found, span) == []
    gone = data.draw(st.integers(0, len(facts) - 1))
    summary = " ".join(f"{fact}." for i, fact in enumerate(facts) if i != gone)
    assert missing_facts(found, summary) == [found[gone]]


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_any_text_states_its_own_facts(text: str) -> None:
    facts = find_facts(text)
    assert missing_facts(facts, text) == []
    assert len({(f.kind, f.text) for f in facts}) == len(facts)


# -- real conversations ----------------------------------------------------------------------


def spans() -> list[tuple[str, set[str]]]:
    """The spans ``summarize`` sends for the sample, at keep_recent 1 to 8, whole."""
    found = []
    for _line, conversation in read_conversations(str(SAMPLE)):
        for keep in range(1, 9):
            _system, old, _recent = SummaryContextManager("offline", keep_recent=keep).split(conversation.state.context)
            ids = {block.id for m in old for block in m.content if isinstance(block, ToolCallBlock)}
            ids |= {str(call["id"]) for m in old for call in m.tools_calls or () if isinstance(call, dict)}
            ids |= {block.call_id for m in old for block in m.content if isinstance(block, ToolResultBlock)}
            found.append((render_transcript(old).text, ids))
    return found


def test_real_spans_hold_their_identifiers_and_no_plumbing() -> None:
    every = [(span, ids, find_facts(span, ignore=ids)) for span, ids in spans()]
    for span, ids, facts in every:
        assert ids
        assert not {f.text for f in facts} & ids
        assert not any(f.text.startswith("call_") for f in facts)
        assert missing_facts(facts, span) == []
    last_span, _ids, facts = every[7]  # the first conversation, all but its last message
    by_kind: dict[str, set[str]] = {}
    for fact in facts:
        by_kind.setdefault(fact.kind, set()).add(fact.text)
    assert {"mia_li_3668", "credit_card_4421486", "certificate_7504069"} <= by_kind["id"]
    assert {"HAT069", "HAT083", "HAT268"} <= by_kind["code"]
    assert "mia.li3818@example.com" in by_kind["email"]
    assert {"2024-05-20", "1990-04-05"} <= by_kind["date"]
    assert {"$121", "$100", "$30"} <= by_kind["amount"]
    assert {"06:00:00", "11 AM"} <= by_kind["time"]
    assert "78750" in by_kind["number"]
    assert "May 20th" not in {f.text for f in facts}  # the same day as 2024-05-20
    assert "reservation_id" not in last_span or "reservation_id" not in {f.text for f in facts}


def test_a_real_summary_that_drops_identifiers_is_caught() -> None:
    span, ids = spans()[7]
    facts = find_facts(span, ignore=ids)
    summary = (
        "Mia Li (MIA_LI_3668, mia.li3818@EXAMPLE.com, born April 5th, 1990) booked a one-way JFK to SEA trip on "
        "May 20 with flights hat 069 / HAT083 considered; she pays $121.00 with a certificate, number 7504069."
    )
    missing = {f.text for f in missing_facts(facts, summary)}
    for stated in ("mia_li_3668", "mia.li3818@example.com", "1990-04-05", "2024-05-20", "HAT069", "HAT083", "$121"):
        assert stated not in missing
    # An id's long number stated apart names it ("certificates 8544743 and 9932251").
    assert "certificate_7504069" not in missing
    assert {"HAT268", "credit_card_4421486", "$100"} <= missing


# -- work grows in proportion to the text -------------------------------------------------------

FACTS_FILES = {str(Path(module.__file__).resolve()) for module in (ctxmgr.facts, ctxmgr._fact_reading)}


ADVERSARIAL = (
    "1,1,1,1,1,1,1 a_a_a_a_a_a_b1 x.x.x.x.x.x@ 1-1-1-1-1-1 $$$$1,1,1, ++++1 a+a+a+a@b "
    "http://x.example/a.b.c.d.e....... May May 15 15 May Mar. 3rd 3 3 3 kg kg 12:12:12:12 "
)


def test_find_and_check_grow_linearly_with_the_text() -> None:
    """Lines executed in ctxmgr/facts.py and ctxmgr/_fact_reading.py for n, 2n and 4n copies of a real span with
    adversarial text between them: linear work grows 2x from 2n to 4n, quadratic 4x. The
    regular expressions themselves are built so that every branch starts only where a
    token starts; a quadratic one would not finish on these inputs."""
    unit, ids = spans()[7]
    unit = unit + "\n" + ADVERSARIAL * 20
    counts = []
    for copies in (4, 8, 16):
        text = "\n".join(f"{unit} ZZ{i:05}" for i in range(copies))
        counts.append(lines_run(lambda t=text: missing_facts(find_facts(t, ignore=ids), t), FACTS_FILES))
    c1, c2, c4 = counts
    assert c2 > c1
    assert c4 - c2 <= 2.2 * (c2 - c1), counts
    # And once on a large input, built to trip a regular expression that backtracks.
    big = ("a_" * 200_000) + " " + ("1," * 200_000) + " " + ("x." * 200_000) + "@" + (" 1" * 100_000)
    assert find_facts(big) == []


def test_a_fact_pickles_and_copies_as_itself() -> None:
    """A worker process sends its summaries' facts back pickled, as their two strings."""
    facts = [Fact("code", "4OG6T3"), Fact("amount", "$1,234.50"), Fact("date", "May 15")]
    for fact in facts:
        for copied in (pickle.loads(pickle.dumps(fact)), copy.copy(fact), copy.deepcopy(fact)):
            assert copied == fact
            assert type(copied) is Fact
            assert hash(copied) == hash(fact)
    assert pickle.loads(pickle.dumps(facts)) == facts
    with pytest.raises(AttributeError):
        pickle.loads(pickle.dumps(facts[0])).text = "x"  # type: ignore[misc]


def test_sample_is_what_the_tests_expect() -> None:
    first = json.loads(SAMPLE.read_text().splitlines()[0])
    assert first["messages"][3]["content"] == "Sure, my user ID is mia_li_3668."


# -- the fast path: reading only around hot characters ----------------------------------------

TOKENS = [
    "May", "15", "15th", "of", "2024", "$12", "USD", "12", "kg", "bags", "checked", "two", "2", "HAT268",
    "mia_li_3668", "a.b@c.com", "https://x.example/z", "www.y.org", "[image", "image/png,", "1032", "bytes", "6:30",
    "PM", "+1", "(555)", "123-4567", "the", "and", "x", "—", "12,50", "€", "#12", "78750", "1,250,000", "05/06/2024",
    "2024-05-15T10:00:00Z", "[...", "more", "characters", "omitted", "é", "٣", "call_x1", "\"id\":", "{\"a1\":",
]  # fmt: skip
SEPARATORS = [" ", " ", " ", "  ", "\n", ", ", ". ", "-", "_", "/", "", ":", "\t"]


def read_all(text: str, stretches: Any) -> list[tuple[int, str, str]]:
    return [(start, hit.kind, hit.text) for start, hit in ctxmgr._fact_reading._read(text, (), stretches)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), max_size=40))
def test_reading_around_hot_characters_finds_what_reading_everything_finds(parts: list[tuple[str, str]]) -> None:
    text = "".join(token + separator for token, separator in parts)
    stretches = list(ctxmgr._fact_reading._stretches(text))
    assert read_all(text, stretches) == read_all(text, [(0, len(text))])
    assert all(a < b <= c < d for (a, b), (c, d) in itertools.pairwise(stretches))


def test_real_spans_give_the_same_facts_read_whole() -> None:
    for span, _ids in spans()[::4]:
        assert read_all(span, ctxmgr._fact_reading._stretches(span)) == read_all(span, [(0, len(span))])


def money_all(text: str, stretches: Any) -> list[tuple[int, str]]:
    return [(start, hit.text) for start, hit in ctxmgr._fact_reading._money_numbers(text, stretches)]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([*TOKENS, '"amount":', "price:", "'fee':", "total", ":", "-"]), st.sampled_from(SEPARATORS)
        ),
        max_size=40,
    )
)
def test_numbers_under_money_keys_read_around_hot_characters_are_those_read_whole(parts: list[tuple[str, str]]) -> None:
    """hits reads a text where digits are dense whole, any other around its hot characters."""
    text = "".join(token + separator for token, separator in parts)
    assert money_all(text, list(ctxmgr._fact_reading._stretches(text))) == money_all(text, [(0, len(text))])


def test_a_text_dense_with_digits_is_read_whole_and_prose_around_its_hot_characters() -> None:
    reading = ctxmgr._fact_reading
    dense = '{"flight_number": "HAT268", "date": "2024-05-15", "price": 142} ' * 3
    prose = "The passenger asked about the baggage allowance for the trip next week, twice. " * 3 + "Flight 12."
    assert reading._read_stretches(dense) == [(0, len(dense))]
    assert reading._read_stretches(prose) == list(reading._stretches(prose)) != [(0, len(prose))]
    assert reading._read_stretches("") == [(0, 0)]
    for span, _ids in spans()[::4]:
        assert money_all(span, list(reading._stretches(span))) == money_all(span, [(0, len(span))])


def test_real_spans_give_the_numbers_under_money_keys_that_every_number_after_a_key_gives() -> None:
    reading = ctxmgr._fact_reading
    for span, _ids in spans():
        stretches = list(reading._stretches(span))
        plain = [
            (match.start("num"), match["num"])
            for start, end in stretches
            for match in reading._NUMBER_AFTER_KEY.finditer(span, start, end)
            if reading._MONEY_KEY.search(span, max(0, match.start() - 8), match.start()) is not None
        ]
        assert [(at, hit.text) for at, hit in reading._money_numbers(span, stretches)] == plain


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab 4OG6T3$1,.05-/:May@x_", max_size=80), st.frozensets(st.sampled_from(["4OG6T3", "a_b"])))
def test_kept_results_are_the_results_and_cannot_be_changed_through_a_copy(text: str, ignore: frozenset[str]) -> None:
    """find_facts and missing_facts keep their last answers (the digest and the fact check
    read the same span): a kept answer equals a fresh one, and changing a returned list
    changes nothing kept."""
    fresh = ctxmgr.facts.find_facts_uncached(text, ignore)
    first = find_facts(text, ignore=ignore)
    assert first == fresh
    first.clear()
    assert find_facts(text, ignore=set(ignore)) == fresh
    lacking = missing_facts(fresh, "4og6t3")
    assert lacking == [f for f in fresh if f != Fact("code", "4OG6T3")]  # stated in another case
    lacking.append(Fact("code", "ZZZ999"))
    assert missing_facts(iter(fresh), "4og6t3") == lacking[:-1]


# -- the engine's shortcuts: the expression and the word runs as first written ---------------

# The digit look-ahead of a token starting with a letter, as first written (lazy: it tries
# the digit after each character) and as it is (possessive: one pass over the word).
LAZY_LOOKAHEAD = r"(?=[\w-]*?\d|[\w.%+-]*?@|"
POSSESSIVE_LOOKAHEAD = r"(?=[^\W\d]*+(?:-++[^\W\d]*+)*+\d|[\w.%+-]*+@|"


def first_pattern() -> re.Pattern[str]:
    """The expression before the word lists were grouped by first character, the
    look-ahead made possessive, a word's first run of letters tested first and the
    tests before the branches (a token's first character, digits no branch reads) added:
    what the faster one must match, match for match."""
    facts = ctxmgr._fact_reading
    units = "(?:(?i:{})|h)".format(
        "|".join(re.escape(u) for u in sorted(facts._UNIT_OF, key=len, reverse=True) if u != "h")
    )
    not_adjective = "(?i:{})".format("|".join(facts._NOT_ADJECTIVES))
    pattern = facts._PATTERN
    for new, old in ((facts._UNIT, units), (facts._NOT_ADJECTIVE, not_adjective),
                     (POSSESSIVE_LOOKAHEAD, LAZY_LOOKAHEAD), (facts._FIRST_RUN, ""), (facts._NO_DIGIT_FACT, ""),
                     (facts._TOKEN_START, "")):  # fmt: skip
        assert pattern.count(new) == 1
        pattern = pattern.replace(new, old)
    return re.compile(pattern, re.VERBOSE)


FIRST_PATTERN = first_pattern()


def matches(pattern: re.Pattern[str], text: str) -> list[tuple[int, int, str | None, dict[str, str | None]]]:
    return [(m.start(), m.end(), m.lastgroup, m.groupdict()) for m in pattern.finditer(text)]


# Units and words that may not stand before one, in any case, beside numbers, words with
# digits, and the letters whose case-insensitive class is more than two characters
# (Kelvin sign, long s, dotted and dotless i).
UNIT_TOKENS = sorted(ctxmgr._fact_reading._UNIT_OF) + list(ctxmgr._fact_reading._NOT_ADJECTIVES)
ODD_CASE = [
    "\u212a", "\u212ag", "\u017f", "\u017fec", "\u0130", "\u0131", "\u0130nch", "m\u0131le", "°C", "° F", "PER CENT",
]  # fmt: skip


@st.composite
def unit_texts(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.one_of(
        st.sampled_from(UNIT_TOKENS).map(lambda u: u.upper() if len(u) % 2 else u.capitalize()),
        st.sampled_from(UNIT_TOKENS), st.sampled_from(ODD_CASE), st.sampled_from(TOKENS),
        st.from_regex(r"[0-9]{1,4}(?:[.,][0-9]{1,3})?", fullmatch=True),
        st.from_regex(r"[a-zA-Z_-]{0,6}[0-9]?[a-zA-Z_-]{0,6}", fullmatch=True),
    ), max_size=30))  # fmt: skip
    separators = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(pieces), max_size=len(pieces)))
    return "".join(piece + separator for piece, separator in zip(pieces, separators, strict=True))


@settings(max_examples=150, deadline=None)
@given(unit_texts())
def test_the_expression_matches_what_it_matched_as_first_written(text: str) -> None:
    assert matches(ctxmgr._fact_reading._SCAN, text) == matches(FIRST_PATTERN, text)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_the_expression_matches_what_it_matched_as_first_written_on_any_text(text: str) -> None:
    assert matches(ctxmgr._fact_reading._SCAN, text) == matches(FIRST_PATTERN, text)


# Digit runs ended by what may or may not lead a digit branch on (see _NO_DIGIT_FACT).
DIGIT_ENDS = [
    "1", "12", "305", "1936", "12345", ",", ", ", ",5", ",50", ",000", "}", "]", ")", '"', "'", ";", " ", "$", "€",
    " USD", "k", " bags", ":30", "-05-23", "/5/2024", " May", "th", "@x.com", ".5", ".", "%", "\n", "pm", "_a", "-b",
    "(", "[", "#", "x", "é", "٣",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(DIGIT_ENDS), max_size=30).map("".join))
def test_digits_no_branch_reads_are_passed_over_as_first_written(text: str) -> None:
    assert matches(ctxmgr._fact_reading._SCAN, text) == matches(FIRST_PATTERN, text)


def test_digits_no_branch_reads_are_passed_over_after_every_end() -> None:
    for first in DIGIT_ENDS:
        for second in DIGIT_ENDS:
            for text in (first + second, "7" + first + second + "9", second + "1936" + first + " 3"):
                assert matches(ctxmgr._fact_reading._SCAN, text) == matches(FIRST_PATTERN, text), text


def test_the_expression_matches_what_it_matched_as_first_written_on_real_spans() -> None:
    for span, _ids in spans()[::3]:
        assert matches(ctxmgr._fact_reading._SCAN, span) == matches(FIRST_PATTERN, span)


def first_joined_words(summary: str, wanted: Any) -> set[str]:
    """``ctxmgr.facts._joined_words`` as first written: every word lowered on its own."""
    starts = {word[:i] for word in wanted for i in range(1, len(word) + 1)}
    runs = [(m.start(), m.end(), m.group().lower()) for m in re.finditer(r"[^\W_]++", summary)]
    found: set[str] = set()
    for i, (_start, end, joined) in enumerate(runs):
        for later_start, later_end, later in runs[i + 1 : i + 8]:
            if joined not in starts:
                break
            if joined in wanted:
                found.add(joined)
            if later_start - end != 1 or summary[end] not in " -_./:":
                break
            joined += later
            end = later_end
        else:
            if joined in wanted:
                found.add(joined)
    return found


# Words whose lowering is not one character at a time: Greek capitals ending in a
# capital sigma (final only at a word's end), and a capital I with a dot above (two
# characters once lowered). Written as escapes: the letters look like Latin ones.
SIGMAS = "\u03a3\u039f\u03a31"  # capital sigma, omicron, sigma, then 1
ODOS = "\u039f\u0394\u039f\u03a3"  # capital omicron, delta, omicron, sigma
ODOS_FINAL, ODOS_MEDIAL = ODOS[:-1].lower() + "\u03c2", ODOS.lower()[:-1] + "\u03c3"
DOTTED = "\u0130X2"  # capital I with a dot above, X, 2
CODES = ["hat268", "mia_li_3668", "4og6t3", "a1b2c3d4e5f6g7h8", SIGMAS.lower(), ODOS_FINAL + "a1", ODOS_MEDIAL + "a1",
         DOTTED.lower(), "ab"]  # fmt: skip
WORDS = ["HAT", "268", "hat", "Mia", "LI", "li", "3668", "4OG6T3", "4og", "6T3", "A1", "b2", "C3D4", "E5F6", "G7", "h8",
         SIGMAS, SIGMAS.lower(), ODOS, ODOS.lower(), DOTTED, "ix2", "AB", "ab", "x", "\u03c2"]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(WORDS), st.text(alphabet="aAbB1" + SIGMAS[0] + DOTTED[0], max_size=3)),
             max_size=25),
    st.lists(st.sampled_from([" ", "-", "_", ".", "/", ":", "", "  ", ", ", "\n", "+", "…", "'"]), max_size=25),
    st.sets(st.sampled_from(CODES)),
)  # fmt: skip
@example([ODOS, "A1"], ["."], {ODOS_FINAL + "a1", ODOS_MEDIAL + "a1"})  # a final sigma only as a word of its own
@example([DOTTED], [" "], {DOTTED.lower()})  # a capital that lowers to two characters
def test_joined_words_are_those_found_lowering_each_word(words: list[str], gaps: list[str], wanted: set[str]) -> None:
    summary = "".join(word + gap for word, gap in zip(words, gaps + [" "] * len(words), strict=False))
    assert ctxmgr.facts._joined_words(summary, wanted) == first_joined_words(summary, wanted)


# -- the offline digest's question: which of these facts does a text say? -----------------------

# Ids the word pattern would split, so they are taken out of the text before it is read:
# the text read is not the text given, and a fact may stand where an id stood.
ODD_IDS = ["call x1", "id.7", "12 kg", "a|b", "$5"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(TOKENS + ODD_IDS), st.sampled_from(SEPARATORS)), max_size=30),
    st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), max_size=30),
    st.frozensets(st.sampled_from([*ODD_IDS, "HAT268", "call_x1"])),
    st.lists(st.booleans(), min_size=1),
)
# "12a|bkg" read without the id "a|b" is "12 kg": a fact the given text does not spell.
@example([("12", ""), ("a|b", ""), ("kg", " ")], [("12", " "), ("kg", " ")], frozenset({"a|b"}), [False, True])
def test_facts_among_are_the_facts_read_then_filtered(
    parts: list[tuple[str, str]], other: list[tuple[str, str]], ignore: frozenset[str], keep: list[bool]
) -> None:
    text = "".join(token + separator for token, separator in parts)
    candidates = ctxmgr.facts.find_facts_uncached(text, frozenset()) + find_facts("".join(t + s for t, s in other))
    among = dict.fromkeys(fact for fact, kept in zip(candidates, itertools.cycle(keep)) if kept)
    expected = [fact for fact in ctxmgr.facts.find_facts_uncached(text, ignore) if fact in among]
    assert ctxmgr.facts.find_facts_among(text, ignore, among) == expected


# -- a summary checked again with a line added: only the line is read --------------------------

LINE_STARTS = ["[digest shortened: left out 3 of 12 events and 0 of 40 facts]", "[", "(", "-", "#", "$", "€", "+",
               "…", "\"", " ", "\t", "12", "million", "dollars", "x", "_", "\n", "@", "."]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), min_size=1, max_size=30),
    st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), max_size=20),
    st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), max_size=8),
    st.sampled_from(LINE_STARTS),
)
def test_a_summary_checked_again_with_a_line_added_lacks_what_a_fresh_check_finds(
    span: list[tuple[str, str]], summary: list[tuple[str, str]], line: list[tuple[str, str]], start: str
) -> None:
    facts = tuple(find_facts("".join(t + s for t, s in span)))
    head = "".join(t + s for t, s in summary)
    whole = f"{head}\n{start}" + "".join(t + s for t, s in line)
    ctxmgr.facts._last_read.clear()
    ctxmgr.facts._last_lacked.clear()
    fresh = ctxmgr.facts._lacking.__wrapped__(facts, whole)
    assert fresh == plain_lacking(facts, whole)
    ctxmgr.facts._lacking.__wrapped__(facts, head)  # the summary read first, as the digest does
    # Only the facts the summary lacked are checked again, in the line's reading and the summary's.
    assert ctxmgr.facts._lacking.__wrapped__(facts, whole) == fresh
    assert missing_facts(facts, head) == list(ctxmgr.facts._lacking.__wrapped__(facts, head))
    assert missing_facts(facts, whole) == list(fresh)


def test_a_digest_checked_again_with_its_closing_line_reads_only_the_line() -> None:
    span, ids = spans()[7]
    facts = find_facts(span, ignore=ids)
    body = "\n".join(span.splitlines()[::2])
    marker = "[digest shortened: left out 3 of 12 events and 1 of 40 facts]"

    def check(text: str) -> list[Fact]:
        ctxmgr.facts._lacking.cache_clear()
        return missing_facts(facts, text)

    ctxmgr.facts._last_read.clear()
    ctxmgr.facts._last_lacked.clear()
    fresh = lines_run(lambda: check(f"{body}\n{marker}"), FACTS_FILES)
    expected = check(f"{body}\n{marker}")
    check(body)
    again = lines_run(lambda: check(f"{body}\n{marker}"), FACTS_FILES)
    check(body)
    assert check(f"{body}\n{marker}") == expected  # read from the body's reading and the line's
    assert again < fresh / 3, (again, fresh)


PHONE_TOKENS = [*TOKENS, "555-123-4567", "555.123.4567", "(555)123-4567", "+15551234567", "+44", "20", "7946", "0958",
                "555", "123", "4567", "(555", ")", "+", "-", "."]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PHONE_TOKENS), st.sampled_from(SEPARATORS)), max_size=30))
def test_a_text_the_phone_pattern_misses_holds_no_phone_number(parts: list[tuple[str, str]]) -> None:
    # The summary index reads a text's digits without the fact reader where no phone can be.
    text = "".join(token + separator for token, separator in parts)
    phones = [hit for hit in ctxmgr._fact_reading.hits(text) if hit.kind == "phone"]
    if ctxmgr.facts._PHONE_LIKE.search(text) is None:
        assert phones == []
    index = ctxmgr.facts._Index(text, ())
    assert index.digits == ctxmgr.facts._Index(text, ())._hits[2] | {
        m.group().replace(",", "") for m in ctxmgr.facts._DIGIT_RUN.finditer(text)
    }


def test_a_summary_grown_line_by_line_is_read_a_line_at_a_time_and_lacks_what_a_fresh_check_finds() -> None:
    facts = tuple(find_facts("order W12345 costs $54.20 on 2024-05-15; call 555-123-4567; 2 bags"))
    ctxmgr.facts._last_read.clear()
    summary = "Order W12345."
    lines = ["[costs $54.20]", "(on May 15)", "#call 555-123-4567", "-bags: a duffel and a case"]
    for line in lines:
        ctxmgr.facts._lacking.__wrapped__(facts, summary)
        summary = f"{summary}\n{line}"
    grown = ctxmgr.facts._lacking.__wrapped__(facts, summary)
    index = ctxmgr.facts._last_read[0][2]
    assert len(index._parts) == len(lines) + 1  # the first summary and one a line, not a chain
    assert not any(part._parts for part in index._parts)
    ctxmgr.facts._last_read.clear()
    assert grown == ctxmgr.facts._lacking.__wrapped__(facts, summary) == ()


_PLAIN_CAPITALS = re.compile(r"(?<![\w-])[A-Z]{5,10}(?![\w-])")
_CAPITAL_TOKENS = ["ABCDE", "ABCDEFGHIJ", "ABCDEFGHIJK", "ABCD", "IFOYYZ", "aIFOYYZ", "É", "éABCDE", "_", "-", "x",
                   "9", "ABCDE9", "ÀBCDEF", "reservation", "QWERTY", "\u0130", "ǅ"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_CAPITAL_TOKENS), st.sampled_from(SEPARATORS)), max_size=20))
def test_the_capitals_pattern_finds_what_its_plain_form_finds(parts: list[tuple[str, str]]) -> None:
    text = "".join(token + separator for token, separator in parts)
    found = [m.span() for m in ctxmgr._fact_reading._CAPITALS.finditer(text)]
    assert found == [m.span() for m in _PLAIN_CAPITALS.finditer(text)]


# -- a summary's pieces that first spell facts are read first --------------------------------


def plain_lacking(facts: tuple[Fact, ...], summary: str) -> tuple[Fact, ...]:
    """What the check says reading the whole summary at once."""
    keys = [ctxmgr.facts._fact_keys(fact.kind, fact.text) for fact in facts]
    words = {k[1] for fact_keys in keys for k in fact_keys if k[0] == "word"}
    index = ctxmgr.facts._Index(summary, words)
    return tuple(fact for fact, k in zip(facts, keys, strict=True) if not ctxmgr.facts._states(index, fact, k, summary))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), min_size=1, max_size=30),
    st.lists(
        st.tuples(
            st.sampled_from(LINE_STARTS),
            st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(SEPARATORS)), max_size=8),
        ),
        max_size=8,
    ),
    st.booleans(),
)
def test_a_summary_read_from_the_pieces_that_first_spell_facts_lacks_what_reading_it_whole_finds(
    span: list[tuple[str, str]], lines: list[tuple[str, list[tuple[str, str]]]], fresh: bool
) -> None:
    facts = tuple(find_facts("".join(t + s for t, s in span)))
    summary = "\n".join(start + "".join(t + s for t, s in line) for start, line in lines)
    if fresh:
        ctxmgr.facts._last_read.clear()
        ctxmgr.facts._last_said.clear()
        ctxmgr.facts._last_lacked.clear()
    assert ctxmgr.facts._lacking.__wrapped__(facts, summary) == plain_lacking(facts, summary)
    marked = f"{summary}\n[digest shortened: left out 3 of 12 events and 0 of 40 facts]"
    assert ctxmgr.facts._lacking.__wrapped__(facts, marked) == plain_lacking(facts, marked)


def test_a_fact_built_by_hand_across_a_line_break_is_not_met_in_the_joined_pieces() -> None:
    facts = (Fact("code", "QQQ\n- RRR"), Fact("code", "4OG6T3"), Fact("code", "HAT268"))
    summary = "- HAT268 QQQ\n- middle\n- RRR 4OG6T3"
    ctxmgr.facts._last_said.clear()
    said = ctxmgr.facts._said_first(summary, facts, {"4og6t3", "hat268"})
    assert said is not None
    assert said.text == "- HAT268 QQQ\n- RRR 4OG6T3"
    assert ctxmgr.facts._lacking.__wrapped__(facts, summary) == plain_lacking(facts, summary) == (facts[0],)


def test_a_summary_too_long_for_its_facts_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    span, ids = spans()[7]
    facts = tuple(find_facts(span, ignore=ids))
    summary = "\n".join("- " + line for line in span.splitlines()[::2])
    ctxmgr.facts._last_said.clear()
    assert ctxmgr.facts._said_first(summary, facts, set()) is not None
    monkeypatch.setattr(ctxmgr.facts, "_SAID_FIRST_BUDGET", len(summary) * len(facts) - 1)
    assert ctxmgr.facts._said_first(summary, facts, set()) is None
    assert ctxmgr.facts._lacking.__wrapped__(facts, summary) == plain_lacking(facts, summary)


def test_real_digests_read_from_the_pieces_that_first_spell_facts_lack_what_reading_them_whole_finds() -> None:
    from ctxmgr.providers._offline import _digest

    checked = 0
    for span, ids in spans()[::2]:
        facts = tuple(find_facts(span, ignore=ids))
        for budget in (600, 150, 60):
            digest = str(_digest(span, budget))
            body = digest.rpartition("\n[digest shortened")[0] or digest
            for summary in (body, digest, "\n".join(span.splitlines()[1::2])):
                assert ctxmgr.facts._lacking.__wrapped__(facts, summary) == plain_lacking(facts, summary)
                checked += 1
    assert checked > 100


def test_labels_are_short_lower_case_values_under_keys_naming_a_category() -> None:
    text = (
        '{"membership": "gold", "cabin": "basic_economy", "flight_type": "round_trip", "insurance": "yes", '
        '"reason": "other", "status": "cancelled", "first_name": "mia", "class": "Business", "tier": "x"}'
    )
    labels = [fact.text for fact in find_facts(text) if fact.kind == "label"]
    assert labels == ["gold", "basic_economy", "round_trip"]


@pytest.mark.parametrize(
    ("summary", "said"),
    [
        ("A Gold member.", {"gold"}),
        ("flying basic-economy", {"basic_economy"}),
        ("a Basic Economy fare, round trip", {"basic_economy", "round_trip"}),
        ("round-trips only", {"round_trip"}),
        ("goldfish", set()),
        ("economy only", set()),
        ("basic economyplus", set()),
    ],
)
def test_a_label_is_stated_in_any_case_with_any_joiner_and_in_the_plural(summary: str, said: set[str]) -> None:
    facts = find_facts('{"membership": "gold", "cabin": "basic_economy", "flight_type": "round_trip"}')
    assert {fact.text for fact in facts} - {fact.text for fact in missing_facts(facts, summary)} == said


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("I'd land at either PHL or EWR.", ["PHL", "EWR"]),
        ("SEA to DFW, then JFK \u2192 MCO", ["SEA", "DFW", "JFK", "MCO"]),
        ("Please give me the IATA code.", []),
        ("costs 40 USD or EUR; departs 10:00 EST", []),
        ("from ABCDE to X", []),
        ('{"origin": "BOS"}', []),  # a record's field: the route is read where it is spoken of
    ],
)
def test_a_place_code_is_three_or_four_capitals_spoken_of_as_a_place(text: str, codes: list[str]) -> None:
    assert [fact.text for fact in find_facts(text) if fact.kind == "code"] == codes


def test_a_json_number_before_a_closing_brace_states_an_amount() -> None:
    facts = find_facts("I have issued a $50 certificate.")
    assert missing_facts(facts, '{"user_id": "u1", "amount":50}') == []
    assert missing_facts(facts, '{"amounts": [50]}') == []
    assert missing_facts(facts, '{"amount":505}') == facts


def test_the_options_of_a_list_in_brackets_are_choices_stated_in_any_number() -> None:
    text = "Your reason (change of plan, airline cancelled flight, or other reasons)? Cabin (economy or business)."
    facts = find_facts(text)
    assert [(f.kind, f.text) for f in facts] == [
        ("choice", "change of plan"),
        ("choice", "airline cancelled flight"),
        ("choice", "other reasons"),
        ("choice", "economy"),
        ("choice", "business"),
    ]
    said = {f.text for f in facts} - {f.text for f in missing_facts(facts, "A change of plans, for other reason.")}
    assert said == {"change of plan", "other reasons"}
    assert find_facts("(see above)") == []
    assert find_facts("Call (Mia or Bo)") == []  # capitalised: names, not options


@pytest.mark.parametrize(
    ("summary", "said"),
    [
        ("My plans have changed.", True),
        ("He changed his plans", True),
        ("a changing plan", True),
        ("I changed my mind. The plan stays.", False),  # two sentences: no option taken
        ("plans only", False),
        ("an exchange of plans", False),  # a stem is read from the start of a word
    ],
)
def test_a_choice_of_several_words_is_stated_by_their_stems_in_one_sentence(summary: str, said: bool) -> None:
    facts = find_facts("Your reason (change of plan, or other reasons)?")
    assert (facts[0] not in missing_facts(facts, summary)) is said
    # A choice of one word has no other words to stand for it.
    one = find_facts("Cabin (economy or business)?")
    assert missing_facts(one, "economical business") == [one[0]]


@pytest.mark.parametrize(
    ("text", "categories"),
    [
        ("I'll be using my Gold membership.", ["Gold"]),
        ("Move us to business class; two Silver members", ["business", "Silver"]),
        ("a premium-tier plan and the Basic plan", ["premium", "Basic"]),
        ("Can I upgrade class? The same cabin, my current plan, your class", []),
        ("I need help with my travel plans.", []),  # plans are intentions
        ("a VIP member", []),  # capitals: an acronym, not a category word
    ],
)
def test_a_word_before_a_noun_of_category_is_a_category(text: str, categories: list[str]) -> None:
    facts = find_facts(text)
    assert [fact.text for fact in facts if fact.kind == "category"] == categories
    assert all(fact.kind == "category" for fact in facts)
    assert missing_facts(facts, " ".join(f"{c.upper()}-members" for c in categories)) == []
