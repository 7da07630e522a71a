"""Facts a summary states through others (ctxmgr._fact_working): a sum by its parts, a
length in other units; and the fact check reporting only what is stated in no way."""

from __future__ import annotations

from hypothesis import given, strategies as st

from ctxmgr._fact_working import lacking, stated_through
from ctxmgr.facts import find_facts, missing_facts

WORKING = (
    "USER: pay with the certificates, then the gift cards, then the Mastercard\n"
    "ASSISTANT: Certificates: $500 + $250 + $250 = $1,000. Gift cards: $198 + $129 = $327. "
    "Total available: $1,327. New price: $1,625. Left for the Mastercard: $1,625 - $1,327 = $298.\n"
)


def _missing_texts(span: str, summary: str) -> list[str]:
    return [fact.text for fact in lacking(find_facts(span), span, summary)]


def test_a_sum_is_stated_by_the_parts_the_summary_keeps() -> None:
    summary = "The user pays $1,000 from certificates and $327 from gift cards, $298 on the Mastercard; price $1,625."
    assert "$1,327" in [f.text for f in missing_facts(find_facts(WORKING), summary)]
    assert "$1,327" not in _missing_texts(WORKING, summary)


def test_a_difference_is_not_stated_by_the_sums_it_sets_apart() -> None:
    # "$1,625 - $1,327 = $298": a price difference is the figure a reader needs.
    summary = "The new price is $1,625 and $1,327 comes from certificates and gift cards."
    assert "$298" in _missing_texts(WORKING, summary)


def test_three_parts_make_a_sum_too() -> None:
    summary = "Certificates of $500, $250 and $250."
    assert "$1,000" not in _missing_texts(WORKING, summary)


def test_one_part_alone_states_no_sum() -> None:
    summary = "The user pays $1,000 from certificates; $298 is charged to the Mastercard."
    missing = _missing_texts(WORKING, summary)
    assert "$1,327" in missing
    assert "$327" in missing


def test_parts_from_another_message_state_nothing() -> None:
    span = "USER: I have $40 on one card\nUSER: and $60 on the other\nASSISTANT: you have $100 in all.\n"
    assert "$100" in _missing_texts(span, "Cards of $40 and $60.")


def test_a_tool_result_is_no_working_of_the_assistant() -> None:
    span = 'TOOL RESULT get_order [c1]: {"a": "$40", "b": "$60", "total": "$100"}\n'
    assert "$100" in _missing_texts(span, "Items of $40 and $60.")


def test_a_length_in_hours_and_minutes_is_said_in_other_units() -> None:
    span = "ASSISTANT: Flight LAX to EWR (5 hours 30 minutes) is over 3 hours.\n"
    for said in ("the legs are 5.5 hours", "a 330 minute flight", "5h30m each", "5 hrs 30 mins"):
        missing = _missing_texts(span, f"S61CZX qualifies: {said}, over 3 hours.")
        assert "5 hours" not in missing, said
        assert "30 minutes" not in missing, said


def test_a_length_said_otherwise_is_still_missing() -> None:
    span = "ASSISTANT: Flight LAX to EWR (5 hours 30 minutes) is over 3 hours.\n"
    missing = _missing_texts(span, "S61CZX qualifies: the legs are 6 hours, over 3 hours.")
    assert {"5 hours", "30 minutes"} <= set(missing)
    # Hours alone are not the hours of a length written with minutes.
    assert "5 hours" in _missing_texts("ASSISTANT: it takes 5 hours.\n", "it takes 5.5 hours")


_AMOUNT = st.integers(min_value=1, max_value=2_000)


@given(parts=st.lists(_AMOUNT, min_size=2, max_size=4), kept=st.lists(st.booleans(), min_size=4, max_size=4))
def test_stated_through_others_is_missing_in_spelling_and_worked_out(parts: list[int], kept: list[bool]) -> None:
    # Stated through others only ever removes facts from what is missing, and only a sum
    # of amounts the message states and the summary keeps.
    total = sum(parts)
    span = "ASSISTANT: " + " + ".join(f"${p}" for p in parts) + f" = ${total}.\n"
    summary = "Kept: " + ", ".join(f"${p}" for p, keep in zip(parts, kept, strict=False) if keep) + "."
    facts = find_facts(span)
    missing = missing_facts(facts, summary)
    through = stated_through(missing, span, summary)
    assert through <= set(missing)
    assert lacking(facts, span, summary) == [fact for fact in missing if fact not in through]
    for fact in through:
        assert fact.text == f"${total}"
        assert sum(keep for keep in kept[: len(parts)]) >= 2
