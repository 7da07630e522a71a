"""Facts a summary states through others (ctxmgr._fact_working): a length written in two
units, given by the summary in one; the fact check reports only what is stated in no way."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, strategies as st

from ctxmgr._fact_working import lacking, stated_through
from ctxmgr.facts import find_facts, missing_facts

SPAN = "ASSISTANT: Flight LAX to EWR (5 hours 30 minutes) is over your 3 hours.\n"


def _missing_texts(span: str, summary: str) -> list[str]:
    return [fact.text for fact in lacking(find_facts(span), span, summary)]


def test_a_length_in_hours_and_minutes_is_said_in_other_units() -> None:
    for said in (
        *("the legs are 5.5 hours", "a 330 minute flight", "5h30m each", "5 hrs 30 mins", "5 hours and 30 min"),
        *("each 5h30", "(5H30)", "each leg 5h30."),
    ):
        summary = f"S61CZX qualifies: {said}, over 3 hours."
        missing = _missing_texts(SPAN, summary)
        assert "5 hours" not in missing, said
        assert "30 minutes" not in missing, said


def test_a_length_said_otherwise_is_still_missing() -> None:
    missing = _missing_texts(SPAN, "S61CZX qualifies: the legs are 6 hours, over 3 hours.")
    assert {"5 hours", "30 minutes"} <= set(missing)
    for other in ("5h35", "5h30.5", "HAT5h30", "5h300"):
        assert {"5 hours", "30 minutes"} <= set(_missing_texts(SPAN, f"S61CZX: {other}, over 3 hours.")), other


def test_hours_alone_are_not_the_hours_of_a_length_with_minutes() -> None:
    assert "5 hours" in _missing_texts("ASSISTANT: it takes 5 hours.\n", "it takes 5.5 hours")
    assert "30 minutes" in _missing_texts("ASSISTANT: a 30 minutes wait.\n", "a 0.5 hours wait")


def test_a_sum_is_not_stated_by_its_parts() -> None:
    # The total a user agreed to is what a reader needs, even beside the prices it adds.
    span = "ASSISTANT: HAT110 at $105 and HAT172 at $102: $207 in all. Proceed?\nUSER: yes\n"
    assert "$207" in _missing_texts(span, "The user took HAT110 ($105) and HAT172 ($102).")


@given(hours=st.integers(min_value=1, max_value=30), minutes=st.integers(min_value=1, max_value=59))
def test_a_length_is_stated_exactly_when_the_summary_gives_its_minutes(hours: int, minutes: int) -> None:
    span = f"ASSISTANT: the flight takes {hours} hours {minutes} minutes.\n"
    facts = find_facts(span)
    total = hours * 60 + minutes
    lengths = {f"{hours} hours", f"{minutes} minutes"}
    for summary, stated in (
        (f"a {total} minutes flight", True),
        (f"a {hours}h{minutes}m flight", True),
        (f"a {total + 1} minutes flight", False),
    ):
        missing = missing_facts(facts, summary)
        through = stated_through(missing, span, summary)
        assert through <= set(missing)
        left = {fact.text for fact in lacking(facts, span, summary)} & lengths
        assert left == (set() if stated else lengths - {f.text for f in facts if f not in missing}), summary
    if total % 6 == 0:  # a whole tenth of an hour: "5.5 hours"
        summary = f"a {Decimal(total) / 60} hours flight"
        assert not {fact.text for fact in lacking(facts, span, summary)} & lengths, summary
