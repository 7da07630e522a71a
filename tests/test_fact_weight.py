"""Which facts a summary must keep (ctxmgr._fact_weight) and the spellings a model uses
for them (ctxmgr.facts)."""

from __future__ import annotations

import doctest
import json
import re
from collections.abc import Collection
from typing import Any

from hypothesis import given, settings, strategies as st

import ctxmgr._fact_weight
from ctxmgr._fact_options import (
    chosen_option,
    denied,
    kept_parts,
    picked_by,
    replaced_values,
    totals,
    users_words,
    without_workings,
)
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
    # Words after the noun that name no things list nothing.
    assert _lacks("add 2 checked bags", "the checked bags still need to be added, and the plan confirmed") == [
        "2 checked bags"
    ]


# -- what the assistant told: relayed lookups, offered options, confirmations ---------------------


def test_options_a_search_offered_are_optional_the_chosen_one_required() -> None:
    span = _span(
        "USER: find me a laptop under $900",
        'ASSISTANT: [calls tool search_products({"query": "laptop", "max_price": 900}) id=c1]',
        'TOOL RESULT search_products [c1]: [{"sku": "LX-4410", "price": 849}, {"sku": "ZB-1200", "price": 799}]',
        "ASSISTANT: Two match: 1. LX-4410 at $849 2. ZB-1200 at $799, so $1,648 for both. Which one?",
        "USER: the ZB-1200 please",
    )
    weighed = _weighed(span)
    assert weighed["ZB-1200"] == 1  # the user chose it
    for offered in ("LX-4410", "$849", "$1,648"):  # listed, and the assistant's sum of them, never chosen
        assert offered not in weighed


def test_the_total_of_the_option_the_user_takes_is_required() -> None:
    listed = _span(
        'ASSISTANT: [calls tool search_flights({"date": "2024-05-24"}) id=c1]',
        'TOOL RESULT search_flights [c1]: [{"flight": "HAT110", "price": 105}, {"flight": "HAT132", "price": 190},'
        ' {"flight": "HAT227", "price": 112}, {"flight": "HAT139", "price": 104}]',
        "ASSISTANT: 1. HAT110 ($105) and HAT132 ($190), Total Price: $295 2. HAT227 ($112) and HAT139 ($104),"
        " Total Price: $216. Which one?",
    )
    weighed = _weighed(_span(listed, "USER: I'll go with Option 2, please."))
    assert weighed["$216"] == 2  # the total of the option taken
    for other in ("$295", "$112", "$104"):  # the other option's total, and the parts
        assert other not in weighed
    assert "$295" in _weighed(_span(listed, "USER: the first one"))
    assert "$216" in _weighed(_span(listed, "USER: HAT227 and HAT139 then"))  # named by codes only it holds
    assert "$216" not in _weighed(_span(listed, "USER: neither, thanks"))
    single = _span(
        'ASSISTANT: [calls tool search_flights({"date": "2024-05-24"}) id=c1]',
        'TOOL RESULT search_flights [c1]: [{"flight": "HAT110", "price": 105}, {"flight": "HAT172", "price": 102}]',
        "ASSISTANT: The cheapest is HAT110 ($105) then HAT172 ($102); the total cost is $207. Proceed?",
    )
    assert _weighed(_span(single, "USER: Yes, please proceed."))["$207"] == 2  # one option, agreed to
    assert "$207" not in _weighed(_span(single, "USER: Too late in the day for me."))
    replaced = _span(
        single, "USER: Yes, please proceed.", "ASSISTANT: HAT172 is full: HAT110 ($105) then HAT132 instead?"
    )
    assert "$207" not in _weighed(replaced)  # a plan the next proposal replaced


def test_a_lookup_the_assistant_merely_relays_is_optional_unless_said_again() -> None:
    span = _span(
        "USER: what is in order W12345?",
        'ASSISTANT: [calls tool get_order({"order_id": "W12345"}) id=c1]',
        'TOOL RESULT get_order [c1]: {"items": ["KB-9921", "MS-0042"], "total": 131.5, "placed": "2024-03-02"}',
        "ASSISTANT: W12345 holds KB-9921 and MS-0042, $131.50 in all, placed on 2024-03-02.",
        "USER: and when does my subscription renew?",
        "ASSISTANT: On June 1st. By the way, KB-9921 is the keyboard you asked about earlier.",
    )
    weighed = _weighed(span)
    assert weighed["W12345"] == 1
    assert weighed["KB-9921"] == 2  # said again in a later message
    assert weighed["June 1st"] == 2  # the assistant's own statement, from no lookup
    for relayed in ("MS-0042", "$131.50", "2024-03-02"):
        assert relayed not in weighed


def test_a_fact_said_twice_in_one_message_apart_counts_twice() -> None:
    rows = " ".join(f"{n}. Ticket T-{n}00{n} - opened 2024-02-0{n}" for n in range(1, 5))
    span = _span(
        "USER: which of my tickets are open?",
        'ASSISTANT: [calls tool get_tickets({"user": "u1"}) id=c1]',
        f"TOOL RESULT get_tickets [c1]: {rows}",
        f"ASSISTANT: {rows}. Of these, the one still waiting on you is T-3003; the others are with support.",
    )
    weighed = _weighed(span)
    assert weighed["T-3003"] == 2
    assert "T-1001" not in weighed


def test_the_record_a_change_acts_on_keeps_what_the_assistant_told_of_it() -> None:
    span = _span(
        "USER: I want to change the delivery of order W12345",
        'ASSISTANT: [calls tool get_order_details({"order_id": "W12345"}) id=c1]',
        'TOOL RESULT get_order_details [c1]: {"address": "10 Main St", "deliver_on": "2024-06-03", "zip": "02139"}',
        "ASSISTANT: W12345 is due on 2024-06-03. Which day would suit you?",
        "USER: the 5th",
    )
    change = 'ASSISTANT: [calls tool update_order_delivery({"order_id": "W12345", "date": "2024-06-05"}) id=c9]'
    assert _weighed(span, kept=change)["2024-06-03"] == 2  # what the change replaces
    assert "2024-06-03" not in _weighed(span, kept="ASSISTANT: Anything else?")
    assert "02139" not in _weighed(span, kept=change)  # never told


def test_a_change_call_names_its_target_by_its_own_object() -> None:
    assert ctxmgr._fact_weight._targets("cancel_order", '{"order_id": "W1", "user_id": "u1"}') == {"W1"}
    assert ctxmgr._fact_weight._targets("updateReservationFlights", '{"reservationId": "R9"}') == {"R9"}
    assert ctxmgr._fact_weight._targets("book_reservation", '{"user_id": "u1"}') == set()


def test_what_the_assistant_confirms_after_a_change_is_required() -> None:
    span = _span(
        "USER: cancel order W12345",
        'ASSISTANT: [calls tool get_user({"user_id": "u1"}) id=c1]',
        'TOOL RESULT get_user [c1]: {"cards": ["card_4421486", "card_9900112"]}',
        'ASSISTANT: [calls tool cancel_order({"order_id": "W12345"}) id=c2]',
        'TOOL RESULT cancel_order [c2]: {"status": "cancelled", "refund": 54.2}',
        "ASSISTANT: Done: $54.20 goes back to card_4421486 within 5 days.",
    )
    weighed = _weighed(span)
    assert weighed["$54.20"] == 2
    assert weighed["card_4421486"] == 2  # relayed from a lookup, but in the confirmation
    assert "card_9900112" not in weighed


def test_a_failed_change_changed_nothing_its_arguments_are_not_required() -> None:
    span = _span(
        "USER: pay my invoice",
        'ASSISTANT: [calls tool pay_invoice({"invoice_id": "INV-7781", "amount": 120, "card": "card_1"}) id=c1]',
        "TOOL RESULT pay_invoice [c1]: Error: card card_1 declined",
        'ASSISTANT: [calls tool pay_invoice({"invoice_id": "INV-7781", "amount": 120, "card": "card_2"}) id=c2]',
        'TOOL RESULT pay_invoice [c2]: {"status": "paid"}',
    )
    weighed = _weighed(span)
    assert weighed["card_2"] == 0
    assert weighed["INV-7781"] == 0
    assert "card_1" not in weighed


def test_a_message_after_a_failed_change_confirms_nothing() -> None:
    span = _span(
        'ASSISTANT: [calls tool search_flights({"date": "2024-05-20"}) id=c1]',
        'TOOL RESULT search_flights [c1]: [{"flight": "HAT033", "price": 140}, {"flight": "HAT088", "price": 179}]',
        "USER: HAT088 please.",
        'ASSISTANT: [calls tool update_flights({"flight": "HAT088"}) id=c2]',
        "TOOL RESULT update_flights [c2]: Error: not enough seats on flight HAT088",
        "ASSISTANT: HAT088 is full. Other options: 1. HAT033 at $140.",
    )
    weighed = _weighed(span)
    assert "HAT033" not in weighed
    assert "$140" not in weighed
    done = span.replace("Error: not enough seats on flight HAT088", '{"flight": "HAT088", "status": "ok"}')
    assert _weighed(done)["HAT033"] == 2  # told after a change that succeeded: confirmed


def test_what_a_change_echoes_of_the_record_unchanged_is_not_the_change() -> None:
    span = _span(
        "USER: upgrade reservation XEHM4B please",
        'ASSISTANT: [calls tool get_reservation({"reservation_id": "XEHM4B"}) id=c1]',
        'TOOL RESULT get_reservation [c1]: {"cabin": "basic", "created_at": "2024-05-01T05:17:41"}',
        "ASSISTANT: XEHM4B was booked on 2024-05-01 in basic economy.",
        'ASSISTANT: [calls tool update_reservation({"reservation_id": "XEHM4B", "cabin": "economy"}) id=c2]',
        'TOOL RESULT update_reservation [c2]: {"cabin": "economy", "created_at": "2024-05-01T05:17:41", "paid": 288}',
    )
    weighed = _weighed(span)
    assert "2024-05-01" not in weighed  # told once of the record, echoed unchanged by the update
    assert weighed["288"] == 0  # what the update reported paid
    terse = span.replace('"created_at": "2024-05-01T05:17:41", "paid": 288', '"paid": 288')
    assert _weighed(terse)["2024-05-01"] == 2  # the update does not say it is unchanged: told of the record


def test_a_sum_given_back_is_reported_though_it_was_paid_before() -> None:
    span = _span(
        "USER: cancel order W12345",
        'ASSISTANT: [calls tool get_order({"order_id": "W12345"}) id=c1]',
        'TOOL RESULT get_order [c1]: {"payments": [{"amount": 624}]}',
        'ASSISTANT: [calls tool cancel_order({"order_id": "W12345"}) id=c2]',
        'TOOL RESULT cancel_order [c2]: {"payments": [{"amount": 624}, {"amount": -624}]}',
    )
    assert _weighed(span)["624"] == 0
    echoed = span.replace(', {"amount": -624}', "")
    assert "624" not in _weighed(echoed)  # the payment echoed, nothing given back


def test_a_failed_change_not_made_since_is_open() -> None:
    span = _span(
        "USER: book it",
        'ASSISTANT: [calls tool book_trip({"flights": ["HAT223", "HAT052"], "card": "card_1"}) id=c1]',
        "TOOL RESULT book_trip [c1]: Error: not enough seats",
    )
    weighed = _weighed(span)
    assert weighed["HAT223"] == 2  # still to be made
    assert weighed["card_1"] == 2
    made = _span(
        span,
        'ASSISTANT: [calls tool book_trip({"flights": ["HAT052"], "card": "card_2"}) id=c2]',
        'TOOL RESULT book_trip [c2]: {"status": "booked"}',
    )
    assert "HAT223" not in _weighed(made)  # the same tool succeeded since: the failure is closed
    assert _weighed(made)["card_2"] == 0


def test_a_record_id_the_assistant_told_is_required_the_rest_of_the_record_not() -> None:
    span = _span(
        "USER: which trips do I have on May 17?",
        'ASSISTANT: [calls tool get_reservation({"reservation_id": "D1EW9B"}) id=c1]',
        'TOOL RESULT get_reservation [c1]: {"reservation_id": "D1EW9B", "flights": ["HAT113"]}',
        "ASSISTANT: You have D1EW9B, on flight HAT113.",
    )
    weighed = _weighed(span)
    assert weighed["D1EW9B"] == 2  # the record's handle, told once
    assert "HAT113" not in weighed  # what the record holds, passed on once


def test_what_the_kept_instructions_state_survives_but_not_for_the_users_words() -> None:
    span = _span(
        "USER: add 3 checked bags to my booking",
        "ASSISTANT: Extra bags cost $50 each; refunds take 7 business days.",
    )
    kept = "SYSTEM: Policy: each extra bag costs $50; up to 3 checked bags; refunds take 7 business days.\nUSER: ok"
    weighed = _weighed(span, kept)
    assert weighed["3 checked bags"] == 1  # the user's request: the policy's number does not carry it
    assert "$50" not in weighed  # quoted from the instructions, which stay
    assert "7 business days" not in weighed
    assert "$50" in _weighed(span, kept="USER: ok")


def test_kept_messages_that_name_their_own_record_point_at_none_of_the_span() -> None:
    span = _span(
        "USER: what do I have booked?",
        'ASSISTANT: [calls tool get_user_details({"user_id": "x"}) id=c1]',
        'TOOL RESULT get_user_details [c1]: {"reservations": ["HKSJ2K"], "certificate_8301303": {"amount": 100}, '
        '"card_3983998": {}}',
    )
    kept = 'TOOL RESULT book [c5]: {"reservation_id": "NEW123"}\nASSISTANT: the reservation is booked.'
    assert "HKSJ2K" not in _weighed(span, kept)
    assert "card_3983998" not in _weighed(span, kept="USER: please issue the certificate")  # not after its noun


def test_time_ranges_no_things_and_money_numbers_with_separators() -> None:
    assert _lacks("arrives 12:30:00, leaves 17:30:00", "flights 07:00-12:30 and 12:00\u201317:30") == []
    assert _lacks("arrives 12:30:00", "the flight 07:00-12:31") == ["12:30:00"]
    assert _lacks("leaves at 18:30:00", "open 5:00-6:30") == []  # a one-digit hour is either half of the day
    assert _lacks("Items: 0 checked bags", "with no bags") == []
    assert _lacks("Items: 0 checked bags", "with no checked bags") == []
    assert _lacks("Items: 0 checked bags", "with two bags") == ["0 checked bags"]
    assert _lacks("Items: 0 checked bags", "the casino bags") == ["0 checked bags"]
    span = json.dumps({"payment_id": "x", "total": 4418})
    assert _lacks(span, "paid $4,418") == []
    assert _lacks(span, "paid 4,418.00 EUR") == []  # an amount in no stated currency, in any
    assert _lacks(span, "paid $4,481") == ["4418"]


def test_a_small_count_is_stated_by_the_factor_of_a_price() -> None:
    assert _lacks("Total for two tickets: $80", "2 people, $40 x 2 = $80") == []
    assert _lacks("Total for two tickets: $80", "2 * $40 = $80") == []
    assert _lacks("Total for two tickets: $80", "$40 \u00d7 2 = $80") == []
    assert _lacks("Total for two tickets: $80", "$40 x 3 = $120") == ["two tickets", "$80"]
    assert _lacks("two tickets", "a 1920x2 screen") == []  # a factor anywhere: a little looser
    assert _lacks("two tickets", "printed 1920x1080") == ["two tickets"]
    assert _lacks("20 kg", "$4 x 20") == ["20 kg"]  # weights are not counted things


def test_a_count_passed_on_from_a_list_a_lookup_returned_is_optional() -> None:
    def span(told: str) -> str:
        return _span(
            'ASSISTANT: [calls tool get_cart({"cart_id": "cart_1"}) id=c1]',
            'TOOL RESULT get_cart [c1]: {"items": [{"sku": "A"}, {"sku": "B"}]}',
            f"ASSISTANT: {told}",
        )

    assert "two items" not in _weighed(span("You have two items in your cart."))
    assert _weighed(span("You have 3 items in your cart."))["3 items"] == 2  # not the list's length
    assert _weighed(span("You have 2 seats reserved."))["2 seats"] == 2  # a list of other things


def test_a_value_a_confirmation_marks_as_replaced_is_optional() -> None:
    weighed = _weighed(
        _span(
            'ASSISTANT: [calls tool update_plan({"plan_id": "plan_77", "tier": "basic"}) id=c1]',
            'TOOL RESULT update_plan [c1]: {"plan_id": "plan_77", "tier": "basic"}',
            "ASSISTANT: Done: plan_77 now costs $40 a month (previously $90), renewing on June 1st.",
        )
    )
    assert weighed["$40"] == 2
    assert weighed["June 1st"] == 2
    assert "$90" not in weighed
    told_twice = _weighed(
        _span(
            'ASSISTANT: [calls tool update_plan({"plan_id": "plan_77"}) id=c1]',
            "ASSISTANT: Done: $40 from now on, originally $90; you still owe $90 for May.",
        )
    )
    assert "$90" in told_twice  # also written where nothing marks it as replaced


def test_a_value_the_assistant_marks_as_replaced_is_optional_the_users_from_names_the_record() -> None:
    weighed = _weighed(
        _span(
            "USER: please move my dentist appointment apt_5521 from June 3 to June 5.",
            "ASSISTANT: Sure: June 5 at 10:00 instead of 09:00, as the 09:00 slot is gone. Shall I?",
        )
    )
    assert weighed["June 5"] == 1
    assert weighed["10:00"] == 2
    assert weighed["June 3"] == 1  # the appointment the request is about
    assert "09:00" in weighed  # written once without a marker: still told
    confirmed = _weighed(_span("ASSISTANT: Done: your appointment is now on June 5 (previously June 3)."))
    assert "June 3" not in confirmed
    assert "June 5" in confirmed


def test_a_plan_the_user_replaced_is_optional() -> None:
    def span(answer: str) -> str:
        return _span(
            "USER: I need a room in Lisbon.",
            "ASSISTANT: A double room, arriving June 2 and leaving June 9, for $700?",
            "USER: Actually I only need it for the first night.",
            f"ASSISTANT: {answer}",
        )

    weighed = _weighed(span("Then a double room arriving June 2, one night, for $100?"))
    assert "June 9" not in weighed
    assert "$700" not in weighed
    assert weighed["June 2"] == 2
    assert weighed["$100"] == 2
    # The next message restates nothing of the plan: not a restatement, nothing is replaced.
    assert "June 9" in _weighed(span("Sorry, which city was it?"))
    # Said again later: still part of the plan.
    later = span("Then a double room arriving June 2 for $100? The June 9 rate stays open.")
    assert "June 9" in _weighed(later)


def test_a_sum_a_change_charged_is_reported_though_the_number_was_a_price_before() -> None:
    span = _span(
        "USER: upgrade reservation H8Q05L to business",
        'ASSISTANT: [calls tool get_reservation({"reservation_id": "S61CZX"}) id=c1]',
        'TOOL RESULT get_reservation [c1]: {"flights": [{"flight_number": "HAT043", "price": 163}]}',
        'ASSISTANT: [calls tool update_reservation({"reservation_id": "H8Q05L", "cabin": "business"}) id=c2]',
        'TOOL RESULT update_reservation [c2]: {"payment_history": [{"amount": 104}, {"amount": 163}]}',
    )
    assert _weighed(span)["163"] == 0  # a price of another record before: not a sum that moved
    paid = span.replace('"price": 163}]}', '"price": 163}], "payment_history": [{"amount": 163}]}')
    assert "163" not in _weighed(paid)  # paid before, echoed by the update


def test_the_money_a_change_reports_moved_is_required() -> None:
    span = _span(
        "USER: please return order W12345",
        'ASSISTANT: [calls tool return_order({"order_id": "W12345"}) id=c1]',
        'TOOL RESULT return_order [c1]: {"order_id": "W12345", "refund_amount": 54.2, "item_price": 60, '
        '"payments": [{"amount": 80}, {"amount": -54.2}]}',
    )
    weighed = _weighed(span)
    assert weighed["54.2"] == 0
    assert "60" not in weighed  # a price describes what was bought
    assert "80" in weighed  # first stated here
    earlier = _span("USER: I paid $80 for it, please return order W12345", *span.split("\n")[1:])
    assert _weighed(earlier)["$80"] == 1
    assert "80" not in _weighed(earlier)
    failed = span.replace('{"order_id": "W12345", "refund_amount"', '{"error": "late", "refund_amount"')
    assert "54.2" not in _weighed(failed)
    assert [f.text for f in find_facts('{"refund": -54.2}')] == ["54.2"]  # the sign is the direction
    assert ctxmgr._fact_weight._moved("54.2", '{"amount": -54.2}')
    assert not ctxmgr._fact_weight._moved("54", '{"amount": 54.2}')  # a part of another number
    assert not ctxmgr._fact_weight._moved("2", '{"amount": 54.2}')
    assert not ctxmgr._fact_weight._moved("60", '{"item_price": 60}')


def test_the_money_of_a_record_an_open_request_acts_on_is_required() -> None:
    span = _span(
        "USER: I want a refund for order W12345, it arrived broken. My customer id is cus_5521.",
        'ASSISTANT: [calls tool get_customer({"customer_id": "cus_5521"}) id=c1]',
        'TOOL RESULT get_customer [c1]: {"customer_id": "cus_5521", "store_credit_balance": 31}',
        'ASSISTANT: [calls tool get_order({"order_id": "W12345"}) id=c2]',
        'TOOL RESULT get_order [c2]: {"order_id": "W12345", "paid": 54.2, "item_price": 60}',
        "ASSISTANT: I am sorry, a refund needs a photo of the damage.",
    )
    weighed = _weighed(span)
    assert weighed["54.2"] == 2
    assert "60" not in weighed
    assert "31" not in weighed
    asks_nothing = span.replace("I want a refund for", "what is the status of")
    assert "54.2" not in _weighed(asks_nothing)
    done = _span(
        span,
        'ASSISTANT: [calls tool refund_order({"order_id": "W12345"}) id=c3]',
        'TOOL RESULT refund_order [c3]: {"status": "refunded"}',
    )
    assert "54.2" not in _weighed(done)  # the request was answered by a change


def test_a_record_the_user_named_that_was_not_it_has_no_open_request() -> None:
    span = _span(
        "USER: please move my trip to May 24. I think it is order W12345.",
        'ASSISTANT: [calls tool get_order({"order_id": "W12345"}) id=c1]',
        'TOOL RESULT get_order [c1]: {"order_id": "W12345", "paid": 54.2}',
        "ASSISTANT: W12345 is a trip to Boston, not yours; let me look at your others.",
    )
    assert _weighed(span)["54.2"] == 2  # the user's record, read last
    other = _span(
        span,
        'ASSISTANT: [calls tool get_order({"order_id": "Q77AB1"}) id=c2]',
        'TOOL RESULT get_order [c2]: {"order_id": "Q77AB1", "paid": 12.5}',
    )
    assert "54.2" not in _weighed(other)  # the assistant went looking for another: not it
    both = other.replace("I think it is order W12345", "orders W12345 and Q77AB1")
    assert _weighed(both)["54.2"] == 2  # both named by the user: both still asked of


def test_the_record_the_users_words_point_at_is_required() -> None:
    span = _span(
        "USER: my flight HAT045 was delayed. My user id is mei_brown_7075.",
        'ASSISTANT: [calls tool get_user_details({"user_id": "mei_brown_7075"}) id=c1]',
        'TOOL RESULT get_user_details [c1]: {"reservations": ["DB1Y70", "3JA7XV"]}',
        'ASSISTANT: [calls tool get_reservation_details({"reservation_id": "DB1Y70"}) id=c2]',
        'TOOL RESULT get_reservation_details [c2]: {"user_id": "mei_brown_7075", "flights": ["HAT194"]}',
        'ASSISTANT: [calls tool get_reservation_details({"reservation_id": "3JA7XV"}) id=c3]',
        'TOOL RESULT get_reservation_details [c3]: {"user_id": "mei_brown_7075", "flights": ["HAT045"]}',
    )
    weighed = _weighed(span)
    assert weighed["3JA7XV"] == 2  # the only record read that holds the user's flight
    assert "DB1Y70" not in weighed  # the owner's id is in both: it points at neither
    assert "HAT194" not in weighed
    both = span.replace('["HAT194"]', '["HAT045"]')
    assert "3JA7XV" not in _weighed(both)
    assert "DB1Y70" not in _weighed(both)


def test_what_the_assistant_works_out_and_tells_is_its_own() -> None:
    span = _span(
        "USER: I'd like option two on 2024-05-24, please.",
        'ASSISTANT: [calls tool search_flights({"date": "2024-05-24"}) id=c1]',
        'TOOL RESULT search_flights [c1]: [{"flight": "HAT059", "date": "2024-05-24", "price": 243}]',
        'ASSISTANT: [calls tool calculate({"expression": "122 + 121"}) id=c2]',
        "TOOL RESULT calculate [c2]: 243.0",
        "ASSISTANT: The new flights on 2024-05-24 total $243; shall I go ahead?",
    )
    assert _weighed(span)["$243"] == 2  # worked out, though a search row holds 243 too
    read = span.replace("calculate", "get_fare")
    assert "$243" not in _weighed(read)  # passed on from a read, told once
    assert ctxmgr._fact_weight._works_out("calculate")
    assert not ctxmgr._fact_weight._works_out("get_fare")


# -- the weighing asks each text only about the facts its answer changes ------------------------

_WORDS = ["W7QX2P", "HAT268", "$507", "2024-05-15", "May 15", "mia_li_3668", "78750", "2 passengers",
          "passengers Ana and Bo", "07:35", "reservation", "that order", "the booking", "order", "#", "thanks",
          "credit_card_4421486", "4421486", "ana@example.com", "12", "USD", "cancel"]  # fmt: skip
_LINES = ["USER: ", "ASSISTANT: ", 'ASSISTANT: [calls tool cancel_order({"id": "',
          'ASSISTANT: [calls tool get_x({"id": "', "TOOL RESULT get_x [c1]: ", "SYSTEM: ",
          'ASSISTANT: [calls tool get_x({"order_id": "', 'TOOL RESULT get_x [c1]: {"paid": ',
          'TOOL RESULT cancel_order [c2]: {"refund": -']  # fmt: skip


def _rendered(lines: list[tuple[str, list[str]]]) -> str:
    closing = '"}) id=c2]'
    return "\n".join(start + " ".join(words) + (closing if "calls tool" in start else "") for start, words in lines)


_rendered_lines = st.lists(
    st.tuples(st.sampled_from(_LINES), st.lists(st.sampled_from(_WORDS), max_size=6)), max_size=8
)


def _weighed_plainly(facts: list[Fact], span: str, kept: str) -> dict[Fact, int]:
    """weigh_facts as the module docstring states it: every text asked about every fact."""
    weight = ctxmgr._fact_weight

    def stated(some: Collection[Fact], texts: list[str]) -> set[Fact]:
        return set(some) - set(missing_facts(list(some), "\n\n".join(texts))) if texts and some else set()

    instructions, recent = kept_parts(kept)
    parts = weight._read_span(span)
    restated = stated(facts, [recent]) if recent else set()
    told, relayed = weight._told(facts, parts)
    alone: dict[Fact, int] = {}  # the ranks the span alone gives
    users = stated(facts, parts.users)
    users -= denied(users, *parts.users)
    for rank, found in ((0, stated(facts, list(parts.arguments.values()))), (1, users), (2, told)):
        for fact in found:
            alone.setdefault(fact, rank)
    for fact in weight._reported(facts, parts, span):
        alone.setdefault(fact, 0)
    for fact in stated(facts, list(parts.retry.values())):
        alone.setdefault(fact, 2)
    for fact in weight._asked_of(facts, parts, dict(alone)):
        alone.setdefault(fact, 2)
    for fact in weight._held_by(facts, parts, dict(alone)):
        alone.setdefault(fact, 2)
    ranks = {fact: rank for fact, rank in alone.items() if fact not in restated}
    record = stated(relayed - restated, weight._changed_records(parts, recent))
    for fact in record - stated(record, [result for result, _ in parts.results]) if parts.results else record:
        ranks.setdefault(fact, 2)
    quotable = {f for f, r in ranks.items() if r == 2 and f.kind not in ("label", "category")}  # no quote
    last_open = parts.told and parts.heard[-1] == len(parts.users) and "?" in parts.told[-1][0]
    offer = [parts.told[-1][0]] if last_open else []  # a question no user answered in the span
    quoted = stated(quotable, [instructions]) - stated(quotable, offer) if instructions else set()
    ranks = {fact: rank for fact, rank in ranks.items() if fact not in quoted}
    kept_users = users_words(recent)  # the total of the option the first kept answer takes
    if parts.told and parts.heard[-1] == len(parts.users) and kept_users:
        chosen = chosen_option(parts.told[-1][0], kept_users[0])
        for fact in totals(stated(facts, [parts.told[-1][0]]), chosen) if chosen else ():
            if fact not in restated:
                ranks.setdefault(fact, 2)
    nouns = weight._pointing(recent) if recent else set()
    for fact in weight._referred(weight._named(facts, span), nouns, restated):
        ranks.setdefault(fact, 3)
    replaced: set[str] = set()  # what a kept change replaces in a record the span read
    for call in weight._CALL.finditer(recent):
        if weight._changes(call["name"]):
            for ids, (_, result) in zip(parts.records, parts.looked_up, strict=True):
                if ids & weight._targets(call["name"], call["args"]):
                    replaced |= replaced_values(call["args"], result)
    for fact in facts:
        if fact.text in replaced and fact not in restated:
            ranks.setdefault(fact, 3)
    for fact in picked_by(facts, span, users_words(recent)):
        if fact not in restated:
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


_READ_LINES = st.lists(
    st.tuples(st.sampled_from(['ASSISTANT: [calls tool get_x({"id": "', "TOOL RESULT get_x [c1]: "]),
              st.lists(st.sampled_from(_WORDS), max_size=6)),
    max_size=8,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(_READ_LINES, st.sampled_from(["", "USER: thanks", "SYSTEM: policy 78750"]))
def test_what_only_read_only_calls_say_is_never_required(span_lines: Any, kept: str) -> None:
    span = _rendered(span_lines)
    facts = find_facts(span, ignore={"c1", "c2"})
    assert weigh_facts(facts, span, kept) == {}


@settings(max_examples=150, deadline=None)
@given(_rendered_lines, _rendered_lines)
def test_the_kept_messages_can_only_take_required_facts_away_or_point_at_one(span_lines: Any, kept: Any) -> None:
    span = _rendered(span_lines)
    facts = find_facts(span, ignore={"c1", "c2"})
    alone = weigh_facts(facts, span)
    with_kept = weigh_facts(facts, span, _rendered(kept))
    for fact, rank in with_kept.items():
        assert fact in alone or rank in (2, 3)  # a change in the kept messages, or a reference


_PLAIN_REFERRING = re.compile(
    rf"(?i:\b(?:that|this|the|same|those|these|it'?s|its)\s+(?:[a-z]+\s+)??(?P<noun>{ctxmgr._fact_weight._NOUNS})s?\b)"
)
# Letters that case-fold to the words' first letters: long s, dotless and dotted capital i.
_FOLDING = ["\u017fame", "\u0131ts", "\u0130ts", "\u017fhipment"]
_REFERRING_WORDS = ["that", "This", "THE", "same", "those", "these", "it's", "its", "It'S", *_FOLDING, "the", "tHe",
                    "order", "Orders", "booking", "ticket", "reservations", "x", "the_", "9", "delayed"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_REFERRING_WORDS), st.sampled_from([" ", "  ", "\n", "", "-", ".", "\t"]))))
def test_the_referring_pattern_finds_what_its_plain_form_finds(words: list[tuple[str, str]]) -> None:
    text = "".join(word + gap for word, gap in words)
    found = [(m.span(), m["noun"]) for m in ctxmgr._fact_weight._REFERRING.finditer(text)]
    assert found == [(m.span(), m["noun"]) for m in _PLAIN_REFERRING.finditer(text)]


def _trip_span(flights: list[str]) -> str:
    record = json.dumps({"trip_id": "T1XQ7Z", "flights": [{"number": f, "date": "2024-05-21"} for f in flights]})
    return (
        'USER: please change my trip T1XQ7Z\nASSISTANT: [calls tool get_trip({"trip_id": "T1XQ7Z"}) id=c1]\n'
        f"TOOL RESULT get_trip [c1]: {record}\n"
    )


def _kept_update(flights: list[str], tool: str = "update_trip") -> str:
    arguments = json.dumps({"trip_id": "T1XQ7Z", "flights": [{"number": f, "date": "2024-05-21"} for f in flights]})
    return f"ASSISTANT: [calls tool {tool}({arguments}) id=k1]\n"


def test_what_a_kept_change_replaces_in_a_record_read_is_required() -> None:
    span = _trip_span(["HAT252", "HAT030"])
    facts = find_facts(span, ignore={"c1"})
    ranks = {str(f): rank for f, rank in weigh_facts(facts, span, _kept_update(["HAT052", "HAT030"])).items()}
    assert ranks.get("HAT252") == 3  # the flight the pending change takes out
    assert "HAT030" not in ranks  # the kept change states it again: it survives there
    assert "2024-05-21" not in ranks  # kept as it was


def test_a_change_in_the_span_made_its_replacement_history() -> None:
    span = _trip_span(["HAT252"]) + _kept_update(["HAT052"]).replace("id=k1", "id=c2")
    span += 'TOOL RESULT update_trip [c2]: {"trip_id": "T1XQ7Z", "flights": [{"number": "HAT052"}]}\n'
    facts = find_facts(span, ignore={"c1", "c2"})
    assert "HAT252" not in {str(f) for f in weigh_facts(facts, span, "ASSISTANT: done, anything else?")}


def test_a_value_at_another_place_or_a_read_change_replaces_nothing() -> None:
    span = _trip_span(["HAT252"])
    facts = find_facts(span, ignore={"c1"})
    elsewhere = 'ASSISTANT: [calls tool update_trip({"trip_id": "T1XQ7Z", "number": "HAT052"}) id=k1]\n'
    assert "HAT252" not in {str(f) for f in weigh_facts(facts, span, elsewhere)}
    read = _kept_update(["HAT052"], tool="get_trip")
    assert "HAT252" not in {str(f) for f in weigh_facts(facts, span, read)}
    other = _kept_update(["HAT052"]).replace("T1XQ7Z", "T9ZZ9Z")
    assert "HAT252" not in {str(f) for f in weigh_facts(facts, span, other)}


def test_replaced_values_are_those_at_the_same_place_with_another_value() -> None:
    arguments = '{"flights": [{"number": "HAT052"}], "payment_id": "card_2"}'
    record = '{"flights": [{"number": "HAT252"}, {"number": "HAT052"}], "payments": [{"payment_id": "card_1"}]}'
    assert replaced_values(arguments, record) == {"HAT252"}
    assert replaced_values("not json", record) == set()


_FLIGHT = st.sampled_from(["HAT001", "HAT052", "HAT118", "HAT252", "HAT300"])


@settings(max_examples=100, deadline=None)
@given(st.lists(_FLIGHT, min_size=1, max_size=4, unique=True), st.lists(_FLIGHT, min_size=1, max_size=4, unique=True))
def test_a_kept_change_makes_exactly_the_flights_it_takes_out_required(before: list[str], after: list[str]) -> None:
    span = _trip_span(before)
    facts = find_facts(span, ignore={"c1"})
    ranks = weigh_facts(facts, span, _kept_update(after))
    required = {str(f) for f in ranks if f.kind == "code"}
    assert required == set(before) - set(after)
    assert list(ranks.items()) == list(_weighed_plainly(facts, span, _kept_update(after)).items())


PROFILE = _span(
    "USER: my flight was delayed, user id noah_li_1234",
    'ASSISTANT: [calls tool get_user_details({"user_id": "noah_li_1234"}) id=c1]',
    'TOOL RESULT get_user_details [c1]: {"membership": "gold", "payment_methods": {'
    '"gift_card_1": {"source": "gift_card", "amount": 6, "id": "gift_card_1"}, '
    '"gift_card_2": {"source": "gift_card", "amount": 113, "id": "gift_card_2"}, '
    '"credit_card_3": {"source": "credit_card", "amount": 90, "id": "credit_card_3"}}}',
)


def test_a_label_the_assistant_gives_as_its_ground_is_required_one_it_passes_on_is_not() -> None:
    grounded = _span(PROFILE, "ASSISTANT: Since you are a gold member, I can offer you a $50 certificate.")
    assert _weighed(grounded)["gold"] == 2
    passed_on = _span(PROFILE, "ASSISTANT: Your membership is gold. How can I help?")
    assert "gold" not in _weighed(passed_on)
    # The kept instructions name every tier: a category there, not the assistant quoting them.
    assert _weighed(grounded, kept="SYSTEM: gold members get a certificate for a delay.")["gold"] == 2


def test_a_label_the_user_states_or_a_change_is_given_is_required() -> None:
    span = _span(
        "USER: please move me to business class on reservation W7QX2P",
        'ASSISTANT: [calls tool update_reservation({"reservation_id": "W7QX2P", "cabin": "business"}) id=c1]',
        'TOOL RESULT update_reservation [c1]: {"cabin": "business", "flight_type": "round_trip"}',
    )
    weighed = _weighed(span)
    assert weighed["business"] == 0
    assert "round_trip" not in weighed  # a label the result holds and nobody speaks of


def test_the_operands_of_a_sum_the_assistant_works_out_are_its_working_not_facts_told() -> None:
    span = _span(
        "USER: what would business cost on reservation W7QX2P?",
        "ASSISTANT: Outbound: $282 (Business) - $177 (Economy) = $105; return $443 - $180 = $263.",
    )
    weighed = _weighed(span)
    assert weighed["$105"] == 2
    assert weighed["$263"] == 2
    assert not {"$282", "$177", "$443", "$180"} & set(weighed)
    told = span.replace("= $105;", "= $105; the business fare is $282;")
    assert _weighed(told)["$282"] == 2  # told in its own right too
    assert without_workings("3 x $50 = $150 on 2024-05-19") == " " * 8 + "= $150 on 2024-05-19"
    assert without_workings("fares $100 - $120") == "fares $100 - $120"  # a range, no sum worked out


def test_what_the_user_names_as_the_record_to_change_is_required_what_it_denies_is_not() -> None:
    span = _span(
        "USER: my flight was originally from ATL to PHL; move it from June 3 to June 5.",
        "USER: one-way please, not round trip, and no longer 2024-05-20",
    )
    weighed = _weighed(span)
    assert weighed["ATL"] == 1
    assert weighed["June 3"] == 1
    assert weighed["June 5"] == 1
    assert "2024-05-20" not in weighed


def test_a_category_is_required_from_the_users_words_never_the_assistants_alone() -> None:
    span = _span(
        "USER: I'd like the cheapest business round trip; I'll be using my Gold membership.",
        "ASSISTANT: A business class seat costs more; as a Silver member you get one free bag.",
    )
    weighed = _weighed(span)
    assert weighed["business"] == 1  # named as a category by the assistant, asked for by the user
    assert weighed["Gold"] == 1  # spelled as the span first writes it
    assert "Silver" not in weighed  # only the assistant names it
    assert "Gold" not in _weighed(span, kept="USER: yes, as a gold member, go ahead")  # kept says it


def test_a_choice_the_user_takes_in_other_words_is_required() -> None:
    span = _span(
        "ASSISTANT: What is the reason (change of plan, airline cancelled flight, or other reasons)?",
        "USER: My plans have changed.",
    )
    weighed = _weighed(span)
    assert weighed["change of plan"] == 1
    assert "other reasons" not in weighed
    assert "airline cancelled flight" not in weighed


def test_labels_mark_no_message_as_passing_on_options() -> None:
    # "economy" is in the search's rows too; the total the assistant worked out is its own.
    span = _span(
        "USER: what would economy cost?",
        'ASSISTANT: [calls tool search_flights({"date": "2024-05-20"}) id=c1]',
        'TOOL RESULT search_flights [c1]: [{"flight_number": "HAT100", "cabin": "economy", "price": 120}]',
        'ASSISTANT: [calls tool calculate({"expression": "120 * 2"}) id=c2]',
        "TOOL RESULT calculate [c2]: 240",
        "ASSISTANT: For two passengers in economy the total is $240.",
    )
    assert _weighed(span)["$240"] == 2


def test_the_values_a_kept_pick_by_the_least_of_a_field_compares_are_required() -> None:
    kept = "USER: Please use the gift card with the smallest balance."
    weighed = _weighed(PROFILE, kept=kept)
    assert weighed["6"] == 3
    assert weighed["113"] == 3
    assert "90" not in weighed  # a credit card, not one of the things picked among
    assert "6" not in _weighed(PROFILE, kept="USER: thanks")
    # The assistant saying how it paid made the pick already: nothing is left to compare.
    assert "6" not in _weighed(PROFILE, kept="ASSISTANT: I paid with the gift card with the smallest balance.")
    # A value the kept messages state survives there.
    assert "6" not in _weighed(PROFILE, kept=kept + " The $6 one.")


def test_a_place_code_is_required_from_the_users_words_not_from_the_assistants() -> None:
    span = _span(
        "USER: I'd also take a flight landing at EWR.",
        "ASSISTANT: Your trip goes SEA to DFW on May 5; I will look for one landing at EWR.",
    )
    weighed = _weighed(span)
    assert weighed["EWR"] == 1
    assert "SEA" not in weighed
    assert "DFW" not in weighed
    assert weighed["May 5"] == 2  # the assistant's other words still count


def test_a_value_the_user_negates_is_what_they_replace_not_what_they_ask() -> None:
    span = _span(
        'TOOL RESULT get_trip [c1]: {"trip_id": "T1XQ7Z", "flight_type": "round_trip"}',
        "USER: I only need a one-way ticket, not round trip, on trip T1XQ7Z.",
    )
    weighed = _weighed(span)
    assert "round_trip" not in weighed
    assert weighed["T1XQ7Z"] == 1
    # "noted" is no "not": a marker is a whole word.
    assert _weighed(_span("USER: my id is mia_li_3668", "ASSISTANT: noted, HAT268."))["HAT268"] == 2


def test_an_offer_still_open_is_no_quoting_of_the_instructions() -> None:
    offer = _span(
        'ASSISTANT: [calls tool get_user_details({"user_id": "noah_li_1234"}) id=c1]',
        'TOOL RESULT get_user_details [c1]: {"membership": "gold"}',
        "ASSISTANT: You are eligible for a certificate of $75. Shall I issue it?",
    )
    instructions = "SYSTEM: a delayed member may get a certificate of $75."
    assert _weighed(offer, kept=instructions)["$75"] == 2
    answered = _span(offer, "USER: not now, thanks.")
    assert "$75" not in _weighed(answered, kept=instructions)  # answered: the assistant quoted its rules
    assert _weighed(answered)["$75"] == 2


def test_kept_messages_may_point_with_one_word_between() -> None:
    span = _span(
        "USER: my flight was delayed",
        'ASSISTANT: [calls tool get_reservation_details({"reservation_id": "4OG6T3"}) id=c1]',
        'TOOL RESULT get_reservation_details [c1]: {"reservation_id": "4OG6T3", "passengers": 1}',
    )
    assert _weighed(span, kept="USER: How many passengers were in that delayed reservation?")["4OG6T3"] == 3
    assert "4OG6T3" not in _weighed(span, kept="USER: How many passengers were in my reservation?")


def test_the_option_the_user_chooses_is_required_the_ones_offered_are_not() -> None:
    span = _span(
        "ASSISTANT: What is the reason for cancellation (change of plan, airline cancelled flight, or other reasons)?",
        "USER: The reason is a change of plans.",
    )
    weighed = _weighed(span)
    assert weighed["change of plan"] == 1
    assert "other reasons" not in weighed
    assert "airline cancelled flight" not in weighed


def test_the_total_of_the_option_the_first_kept_answer_takes_is_required() -> None:
    span = _span(
        'ASSISTANT: [calls tool search_flights({"date": "2024-05-24"}) id=c1]',
        'TOOL RESULT search_flights [c1]: [{"flight_number": "HAT227", "price": 112}, {"flight_number": "HAT139", '
        '"price": 104}, {"flight_number": "HAT110", "price": 105}, {"flight_number": "HAT132", "price": 190}]',
        "ASSISTANT: 1. HAT110 $105 and HAT132 $190, Total Price: $295 2. HAT227 $112 and HAT139 $104, "
        "Total Price: $216. Which option would you like?",
    )
    weighed = _weighed(span, kept="USER: I'll go with Option 2, please.")
    assert weighed["$216"] == 2
    assert "$295" not in weighed
    assert "$216" not in _weighed(span, kept="USER: Neither, thanks.")
    assert "$216" not in _weighed(span)
