"""Which facts a summary must keep (ctxmgr._fact_weight) and the spellings a model uses
for them (ctxmgr.facts)."""

from __future__ import annotations

import doctest
import json
import re
from typing import Any

from hypothesis import given, settings, strategies as st

import ctxmgr._fact_weight
from ctxmgr._fact_weight import weigh_facts
from ctxmgr.facts import Fact, find_facts, missing_facts


def _span(*lines: str) -> str:
    return "\n".join(lines)


def _weighed(span: str, kept: str = "") -> dict[str, int]:
    facts = find_facts(span, ignore={"c1", "c2", "c3"})
    return {fact.text: rank for fact, rank in weigh_facts(facts, span, kept).items()}


SPAN = _span(
    "USER: I want to cancel reservation W7QX2P, my user id is ana_ruiz_1234.",
    'ASSISTANT: [calls tool get_user_details({"user_id": "ana_ruiz_1234"}) id=c1]',
    'TOOL RESULT get_user_details [c1]: {"zip": "78750", "email": "ana@example.com", '
    '"created_at": "2024-05-01T07:35:03", "payment_methods": ["credit_card_4421486", "gift_card_7504069"]}',
    'ASSISTANT: [calls tool cancel_reservation({"reservation_id": "W7QX2P"}) id=c2]',
    'TOOL RESULT cancel_reservation [c2]: {"status": "cancelled", "amount": 507}',
    "ASSISTANT: Done: W7QX2P is cancelled and $507 goes back to credit_card_4421486 within 5 days.",
)


def test_doctests() -> None:
    assert doctest.testmod(ctxmgr._fact_weight).failed == 0


def test_change_arguments_user_words_and_what_was_told_are_required_lookups_optional() -> None:
    weighed = _weighed(SPAN)
    assert weighed["W7QX2P"] == 0  # an argument of cancel_reservation
    assert weighed["ana_ruiz_1234"] == 1  # stated by the user (and only looked up besides)
    assert weighed["$507"] == 2  # told to the user
    assert weighed["credit_card_4421486"] == 2
    for optional in ("78750", "ana@example.com", "2024-05-01", "07:35:03", "gift_card_7504069"):
        assert optional not in weighed


def test_a_fact_the_kept_messages_restate_is_optional() -> None:
    assert "W7QX2P" not in _weighed(SPAN, kept="USER: is W7QX2P really cancelled?")
    assert "W7QX2P" in _weighed(SPAN, kept="USER: thanks!")


def test_an_id_the_kept_messages_point_at_is_required() -> None:
    span = _span(
        "USER: what do I have booked?",
        'ASSISTANT: [calls tool get_user_details({"user_id": "x"}) id=c1]',
        'TOOL RESULT get_user_details [c1]: {"reservation_id": "HKSJ2K", "zip": "78750"}',
    )
    assert "HKSJ2K" not in _weighed(span, kept="ASSISTANT: You have one trip.")
    assert _weighed(span, kept="USER: please cancel that reservation")["HKSJ2K"] == 3


def test_read_calls_are_not_changes_and_change_verbs_are_read_from_any_naming() -> None:
    assert ctxmgr._fact_weight._changes("cancel_reservation")
    assert ctxmgr._fact_weight._changes("sendEmail")
    assert ctxmgr._fact_weight._changes("update-record")
    for read in ("get_reservation_details", "search_direct_flight", "list_files", "calculate", "think"):
        assert not ctxmgr._fact_weight._changes(read)


@given(st.lists(st.sampled_from(["W7QX2P", "HAT268", "$12", "2024-05-15", "mia_li_3668"]), max_size=5))
def test_required_facts_are_facts_of_the_span_in_rank_order(said: list[str]) -> None:
    span = _span(f"USER: {' '.join(said)}", "TOOL RESULT get_x [c1]: 78750 ZZ9999")
    facts = find_facts(span, ignore={"c1"})
    ranks = weigh_facts(facts, span)
    assert set(ranks) <= set(facts)
    assert list(ranks.values()) == sorted(ranks.values())
    assert {f.text for f in ranks} == {f.text for f in facts} - {"78750", "ZZ9999"}


# -- recall: spellings a model uses ---------------------------------------------------------------


def _lacks(span: str, summary: str) -> list[str]:
    return [fact.text for fact in missing_facts(find_facts(span), summary)]


def test_letters_only_codes_are_facts_where_the_context_marks_them_as_ids() -> None:
    texts = {
        f.text
        for f in find_facts(
            'reservation IFOYYZ; {"booking_code": "QWERTY", "reservations": ["NO6JO3", "ABCDEF"]}; '
            "order CANCELLED; the ENTIRE trip"
        )
    }
    assert {"IFOYYZ", "QWERTY", "NO6JO3", "ABCDEF"} <= texts
    assert not {"CANCELLED", "ENTIRE"} & texts
    assert _lacks("reservation IFOYYZ", "Booking ifoyyz was changed.") == []
    assert _lacks("reservation IFOYYZ", "Booking IFOYYX was changed.") == ["IFOYYZ"]


def test_amounts_given_as_numbers_under_money_keys() -> None:
    span = json.dumps({"payment_id": "x", "amount": 507, "count": 3})
    assert [(f.kind, f.text) for f in find_facts(span)] == [("amount", "507")]
    assert _lacks(span, "A refund of $507 was issued.") == []
    assert _lacks(span, "A refund of $508 was issued.") == ["507"]


def test_spellings_a_model_uses() -> None:
    assert _lacks("flights on 2024-05-27 and 2024-05-28", "flights on May 27\u201328") == []
    assert _lacks("leaves at 07:35:03", "leaves at 07:35") == []
    assert _lacks("leaves at 07:35:03", "leaves at 07:36") == ["07:35:03"]
    assert _lacks("certificate_8544743, certificate_9932251", "certificates 8544743 and 9932251") == []
    assert _lacks("a refund of $305", "a refund of 305") == []
    assert _lacks("a refund of $305", "a refund of 305 EUR") == ["$305"]
    assert _lacks("within 24 hours", "a 24-hour window") == []
    assert [f.kind for f in find_facts("a 24-hour window")] == ["quantity"]


def test_a_small_count_restated_by_listing_what_it_counts() -> None:
    span = "a booking for 2 passengers and 3 bags"
    assert _lacks(span, "Passengers: Ana Ruiz and Bo Li; bags: a carry-on, a duffel and a suitcase.") == []
    assert _lacks(span, "Passengers Ana Ruiz, Bo Li and Cy Wu; 3 bags.") == ["2 passengers"]


# -- the weighing asks each text only about the facts its answer changes ------------------------

_WORDS = ["W7QX2P", "HAT268", "$507", "2024-05-15", "May 15", "mia_li_3668", "78750", "2 passengers",
          "passengers Ana and Bo", "07:35", "reservation", "that order", "the booking", "order", "#", "thanks",
          "credit_card_4421486", "4421486", "ana@example.com", "12", "USD", "cancel"]  # fmt: skip
_LINES = ["USER: ", "ASSISTANT: ", 'ASSISTANT: [calls tool cancel_order({"id": "',
          'ASSISTANT: [calls tool get_x({"id": "', "TOOL RESULT get_x [c1]: ", "SYSTEM: "]  # fmt: skip


def _rendered(lines: list[tuple[str, list[str]]]) -> str:
    closing = '"}) id=c2]'
    return "\n".join(start + " ".join(words) + (closing if "calls tool" in start else "") for start, words in lines)


_rendered_lines = st.lists(
    st.tuples(st.sampled_from(_LINES), st.lists(st.sampled_from(_WORDS), max_size=6)), max_size=8
)


def _weighed_plainly(facts: list[Fact], span: str, kept: str) -> dict[Fact, int]:
    """weigh_facts as the module docstring states it: every text asked about every fact."""

    def stated(texts: list[str]) -> set[Fact]:
        return set(facts) - set(missing_facts(facts, "\n\n".join(texts))) if texts else set()

    restated = stated([kept]) if kept else set()
    ranks: dict[Fact, int] = {}
    for rank, texts in ctxmgr._fact_weight._segments(span).items():
        for fact in stated(texts):
            if fact not in restated and fact not in ranks:
                ranks[fact] = rank
    nouns = {m["noun"].lower() for m in ctxmgr._fact_weight._REFERRING.finditer(kept)} if kept else set()
    latest: dict[str, tuple[int, Fact]] = {}
    stated_nouns: set[str] = set()
    for fact in facts if nouns else ():
        if fact.kind not in ("code", "id", "number"):
            continue
        at = span.rfind(fact.text)
        while at >= 0:
            before = ctxmgr._fact_weight._NOUN_BEFORE.search(span, max(0, at - 40), at)
            if before is not None:
                if fact in restated:
                    stated_nouns.add(before["noun"].lower())
                elif before["noun"].lower() not in latest or latest[before["noun"].lower()][0] < at:
                    latest[before["noun"].lower()] = (at, fact)
                break
            at = span.rfind(fact.text, 0, at)
    for noun, (_at, fact) in latest.items():
        if noun in nouns and noun not in stated_nouns:
            ranks.setdefault(fact, 3)
    order = {fact: i for i, fact in enumerate(facts)}
    return dict(sorted(ranks.items(), key=lambda item: (item[1], order[item[0]])))


@settings(max_examples=150, deadline=None)
@given(_rendered_lines, _rendered_lines)
def test_weighing_equals_asking_every_text_about_every_fact(span_lines: Any, kept_lines: Any) -> None:
    span, kept = _rendered(span_lines), _rendered(kept_lines)
    facts = find_facts(span, ignore={"c1", "c2"})
    assert list(weigh_facts(facts, span, kept).items()) == list(_weighed_plainly(facts, span, kept).items())


@settings(max_examples=150, deadline=None)
@given(_rendered_lines, _rendered_lines, st.data())
def test_whether_a_text_states_a_fact_does_not_depend_on_the_other_facts_asked(
    span_lines: Any, text_lines: Any, data: st.DataObject
) -> None:
    facts = find_facts(_rendered(span_lines))
    text = _rendered(text_lines)
    chosen = data.draw(st.sets(st.sampled_from(facts))) if facts else set()
    some = [fact for fact in facts if fact in chosen]
    lacking = missing_facts(facts, text)
    assert missing_facts(some, text) == [fact for fact in lacking if fact in some]


_PLAIN_REFERRING = re.compile(
    rf"(?i:\b(?:that|this|the|same|those|these|it'?s|its)\s+(?P<noun>{ctxmgr._fact_weight._NOUNS})s?\b)"
)
# Letters that case-fold to the words' first letters: long s, dotless and dotted capital i.
_FOLDING = ["\u017fame", "\u0131ts", "\u0130ts", "\u017fhipment"]
_REFERRING_WORDS = ["that", "This", "THE", "same", "those", "these", "it's", "its", "It'S", *_FOLDING, "the", "tHe",
                    "order", "Orders", "booking", "ticket", "reservations", "x", "the_", "9"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_REFERRING_WORDS), st.sampled_from([" ", "  ", "\n", "", "-", ".", "\t"]))))
def test_the_referring_pattern_finds_what_its_plain_form_finds(words: list[tuple[str, str]]) -> None:
    text = "".join(word + gap for word, gap in words)
    found = [(m.span(), m["noun"]) for m in ctxmgr._fact_weight._REFERRING.finditer(text)]
    assert found == [(m.span(), m["noun"]) for m in _PLAIN_REFERRING.finditer(text)]
