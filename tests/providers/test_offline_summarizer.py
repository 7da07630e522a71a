"""The offline summarizer: a digest that keeps every fact that fits, and says what it left out."""

from __future__ import annotations

import asyncio
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from _lines_run import lines_run
from hypothesis import given, settings, strategies as st

import ctxmgr._fact_reading
import ctxmgr.facts
import ctxmgr.providers._offline
from ctxmgr._fact_weight import weigh_facts
from ctxmgr.facts import find_facts, missing_facts
from ctxmgr.files import read_conversations
from ctxmgr.providers import SummaryText
from ctxmgr.providers._offline import OfflineSummarizer
from ctxmgr.state import AgentState, Message, SummaryContextManager, ToolResultBlock
from ctxmgr.state._tokens import CHARS_PER_TOKEN
from ctxmgr.state._transcript import fence_transcript, render_transcript

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "tau-airline-sample.jsonl"
MARKER = re.compile(r"\[digest shortened: left out (\d+) of (\d+) events? and (\d+) of (\d+) facts?\]\Z")


def digest(text: str, max_tokens: int = 600) -> SummaryText:
    answer = asyncio.run(OfflineSummarizer().summarize(text, instructions="", max_tokens=max_tokens))
    assert isinstance(answer, SummaryText)
    return answer


@cache
def spans() -> list[tuple[str, frozenset[str]]]:
    """(transcript, tool-call ids) of every span the sample's conversations give at
    keep_recent 1 to 8, rendered whole."""
    found = []
    for _line, conversation in read_conversations(str(SAMPLE)):
        for keep in range(1, 9):
            _system, old, _recent = SummaryContextManager("offline", keep_recent=keep).split(conversation.state.context)
            ids = {str(call["id"]) for m in old for call in m.tools_calls or ()}
            found.append((render_transcript(old).text, frozenset(ids)))
    return found


def check_notes(answer: SummaryText, facts: list[Any]) -> tuple[int, int]:
    """The last line and the note agree with what the digest really lacks; returns
    (events, facts) left out."""
    marker = MARKER.search(answer)
    assert marker is not None, answer[-200:]
    events, _of_events, lost, of_facts = (int(n) for n in marker.groups())
    assert lost == len(missing_facts(facts, answer))
    assert of_facts == len(facts)
    (note,) = answer.notes
    which = r" \((?:[1-9]\d* of them required|all of them optional)\)" if lost else ""
    shown = re.escape(marker.group()[len("[digest shortened: ") : -1])
    assert re.fullmatch(f"the offline digest {shown}{which} to fit --max-summary-tokens \\d+", note), note
    return events, lost


def answer_tokens(answer: SummaryText) -> int:
    return int(answer.notes[0].rsplit(" ", 1)[1])


# -- facts kept ------------------------------------------------------------------------------


def test_every_fact_of_the_real_spans_is_kept_at_the_default_budget() -> None:
    for transcript, ids in spans():
        facts = find_facts(transcript, ignore=ids)
        answer = digest(fence_transcript(transcript))
        assert missing_facts(facts, answer) == [], answer
        assert len(answer) <= 600 * CHARS_PER_TOKEN
        assert not ids & set(re.findall(r"call_\w+", answer))  # tool-call ids are plumbing
        if answer.notes:
            assert check_notes(answer, facts)[1] == 0  # events may go, facts stay


def test_a_digest_that_fits_is_the_events_in_order_with_no_notes() -> None:
    transcript = (
        "USER: Change reservation 4OG6T3, my user id is mia_li_3668\n"
        'ASSISTANT: [calls tool get_reservation_details({"reservation_id": "4OG6T3"}) id=call_abc123]\n'
        'TOOL RESULT get_reservation_details [call_abc123]: {"flights": [{"flight_number": "HAT268", '
        '"date": "2024-05-15", "price": 142}], "total": "$1,234.50"}\n'
        "ASSISTANT: Your flight HAT268 on May 15 costs $1,234.50.\n"
        "  [image image/png, 1032 bytes, name=chart.png]"
    )
    answer = digest(fence_transcript(transcript))
    assert answer == (
        "Earlier conversation (4 events):\n"
        "- The user said: Change reservation 4OG6T3, my user id is mia_li_3668\n"
        "- The assistant called get_reservation_details with {reservation_id: 4OG6T3}\n"
        "- get_reservation_details returned: {flights: [{flight_number: HAT268, date: 2024-05-15, price: 142}], "
        "total: $1,234.50}\n"
        "- The assistant said: Your flight HAT268 on May 15 costs $1,234.50. | [image image/png, 1032 bytes, "
        "name=chart.png]"
    )
    assert answer.notes == ()


def test_it_is_deterministic() -> None:
    transcript, _ids = spans()[15]
    first = digest(fence_transcript(transcript), 200)
    second = digest(fence_transcript(transcript), 200)
    assert first == second
    assert first.notes == second.notes


# -- a short budget ----------------------------------------------------------------------------


def test_prose_goes_before_facts() -> None:
    chatter = [f"USER: Well, let me think about that for a moment, sorry, number {i} of my worries." for i in range(40)]
    facts_lines = [f"ASSISTANT: Booked HAT{100 + i} for ${200 + i}." for i in range(10)]
    transcript = "\n".join(chatter[:20] + facts_lines + chatter[20:])
    answer = digest(fence_transcript(transcript), 150)
    assert len(answer) <= 150 * CHARS_PER_TOKEN
    facts = find_facts(transcript)
    assert missing_facts(facts, answer) == []
    events, lost = check_notes(answer, facts)
    assert events > 0
    assert lost == 0
    assert "The assistant said: Booked HAT100" in answer  # events with facts stay whole
    assert "worries" not in answer  # the chatter went first


def test_when_facts_alone_do_not_fit_as_many_as_fit_are_kept() -> None:
    transcript, ids = max(spans(), key=lambda span: len(find_facts(span[0], ignore=span[1])))
    facts = find_facts(transcript, ignore=ids)
    answer = digest(fence_transcript(transcript), 300)
    assert check_notes(answer, facts) == (42, 0)  # every fact fits in 300 tokens; 42 events are left out
    for tokens in (120, 60):
        answer = digest(fence_transcript(transcript), tokens)
        assert len(answer) <= tokens * CHARS_PER_TOKEN
        events, lost = check_notes(answer, facts)
        assert events == 42
        assert lost > 0
        # Optional facts go first, then required ones; within each, the longest first, so
        # what stays is the most that fits.
        required = set(weigh_facts(facts, transcript))
        missing = missing_facts(facts, answer)
        if any(f in required for f in missing):
            assert all(f in missing for f in facts if f not in required)
        for weighed in (required, set(facts) - required):
            kept = [len(f.text) for f in facts if f in weighed and f not in missing]
            lost_ones = [len(f.text) for f in missing if f in weighed]
            assert not kept or not lost_ones or max(kept) <= min(lost_ones)
        assert required - set(missing) or not required  # some required facts stay
        assert answer.splitlines()[-2].startswith("Also mentioned: ")


def test_a_budget_smaller_than_the_frame_still_says_what_it_dropped() -> None:
    answer = digest(fence_transcript("USER: my id is mia_li_3668\nASSISTANT: noted, HAT268."), 1)
    assert answer.startswith("Earlier conversation (2 events):\n")
    assert answer.endswith("[digest shortened: left out 2 of 2 events and 2 of 2 facts]")
    assert answer.notes == (
        "the offline digest left out 2 of 2 events and 2 of 2 facts (2 of them required) to fit --max-summary-tokens 1",
    )


# -- combining partial summaries -----------------------------------------------------------------


def test_a_combine_request_merges_the_parts_and_keeps_their_facts() -> None:
    part_one = digest(fence_transcript(spans()[2][0]))
    part_two = digest(fence_transcript(spans()[10][0]))
    lines = []
    for number, part in enumerate([part_one, part_two, "The user (mia_li_3668) paid $1,234.50.\nShe flies May 20."], 1):
        first, *rest = part.splitlines()
        lines.append(f"PART {number}: {first}")
        lines.extend(f"  {line}" for line in rest)
    request = "\n".join(lines)
    answer = digest(fence_transcript(request))
    facts = find_facts(request)
    assert missing_facts(facts, answer) == []
    assert answer.count("Earlier conversation") == 1  # the parts' own first lines are not events
    assert "- The user (mia_li_3668) paid $1,234.50." in answer
    assert answer.index("- She flies May 20.") > answer.index("- The user (mia_li_3668)")
    short = digest(fence_transcript(request), 100)
    assert len(short) <= 100 * CHARS_PER_TOKEN
    check_notes(short, facts)


# -- any text ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        "USER:",
        "<transcript-0123456789ab>\n</transcript-0123456789ab>",
        "</transcript-0123456789ab>",
        "ASSISTANT: [calls tool ",
        "ASSISTANT: [calls tool x(",
        "ASSISTANT: [calls tool x({]] id=]",
        "TOOL RESULT x [y]",
        "TOOL RESULT  [] (error): ",
        "PART : nothing",
        "PART 1:",
        "  only a continuation",
        "\x00\udcff odd \u202e text",
        '[{"a": ' * 5000 + "1" + "}]" * 5000,
        "ASSISTANT: " + "[calls tool f(1) id=c] " * 2000,
        "x" * 100_000,
    ],
    ids=range(17),
)
def test_odd_requests_never_fail(text: str) -> None:
    for tokens in (1, 600):
        answer = digest(text, tokens)
        assert isinstance(answer, str)
        assert answer == "" or answer.startswith("Earlier conversation (")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["USER: ", "ASSISTANT: ", "TOOL RESULT f [c1]: ", "PART 2: ", "  ", "", "SYSTEM: "]),
                min_size=1, max_size=6),
       st.lists(st.text(max_size=60), min_size=1, max_size=6), st.integers(1, 200))  # fmt: skip
def test_any_text_gives_a_digest_within_its_budget_and_honest_notes(
    starts: list[str], bodies: list[str], tokens: int
) -> None:
    text = "\n".join(start + body for start, body in zip(starts, bodies, strict=False))
    answer = digest(fence_transcript(text), tokens)
    if not answer:
        return
    facts = find_facts(text)
    if answer.notes:
        check_notes(answer, facts)
    else:
        assert missing_facts(facts, answer) == []
        assert len(answer) <= tokens * CHARS_PER_TOKEN


def test_summary_text_is_a_string_with_notes() -> None:
    answer = SummaryText("digest", notes=["left out 1 of 2 events"])
    assert answer == "digest"
    assert isinstance(answer, str)
    assert answer.notes == ("left out 1 of 2 events",)
    assert getattr(SummaryText("x"), "notes", None) == ()
    assert getattr("plain", "notes", ()) == ()
    assert answer.strip() == "digest"


def test_the_manager_stores_the_digest() -> None:
    messages = [
        Message.text_message("Change 4OG6T3 to May 15, please."),
        Message.text_message("Done: HAT268, $142.", role="assistant"),
        Message.text_message("Thanks!"),
    ]
    state = SummaryContextManager("offline", max_messages=1, keep_recent=1).trim_context(AgentState(context=messages))
    assert state.context_summary is not None
    assert not missing_facts(find_facts("4OG6T3 May 15 HAT268 $142"), state.context_summary)


# -- work grows in proportion to the request ------------------------------------------------------

WATCHED = {
    str(Path(module.__file__).resolve()) for module in (ctxmgr.facts, ctxmgr._fact_reading, ctxmgr.providers._offline)
}  # type: ignore[arg-type]


def test_work_grows_linearly_whatever_has_to_be_left_out() -> None:
    """Lines executed for n, 2n and 4n copies of a real span at a fixed budget: every
    step of the shortening runs at every size, and none is quadratic."""
    unit = "\n".join(spans()[7][0].splitlines()[:12])
    # Once first, not counted: work done once per process (patterns built on first use)
    # would otherwise count in the smallest size only, whichever test ran before this.
    digest(fence_transcript(unit), 300)
    counts = []
    for copies in (4, 8, 16):
        text = "\n".join(unit.replace("HAT", f"H{i:02}") for i in range(copies))
        # Each size from empty caches: the larger copies repeat the smaller ones' lines,
        # whose facts a cache would otherwise hand over, and so would earlier tests.
        for cached in (ctxmgr.facts._odd_ids, ctxmgr.facts._span_facts, ctxmgr.facts._fact_keys, ctxmgr.facts._lacking):
            cached.cache_clear()
        counts.append(lines_run(lambda t=text: digest(fence_transcript(t), 300), WATCHED))
    c1, c2, c4 = counts
    assert c4 - c2 <= 2.2 * (c2 - c1), counts


def test_tool_results_of_a_message_list_are_rendered_and_kept() -> None:
    messages = [
        Message(role="assistant", content=[], tools_calls=[
            {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"code": "ZX9Q21"}'}}
        ]),
        Message.tool_message([ToolResultBlock(call_id="call_1", output='{"seat": "14C", "fee": "EUR 35"}')]),
    ]  # fmt: skip
    answer = digest(SummaryContextManager("offline").request_text(messages))
    assert "- The assistant called lookup with {code: ZX9Q21}" in answer
    assert "- lookup returned: {seat: 14C, fee: EUR 35}" in answer
    assert "call_1" not in answer


# -- JSON without its quotes, as first written ---------------------------------------------------


def first_plain(value: object) -> str:
    """``_plain`` as first written: a call for every value, json.dumps for every scalar."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {first_plain(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(first_plain(item) for item in value) + "]"
    if isinstance(value, str):
        return value
    return json.dumps(value)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_json_is_shown_as_first_written(value: object) -> None:
    assert ctxmgr.providers._offline._plain(value) == first_plain(value)
    text = json.dumps(value)
    # Shown on one line: a string's escaped line break does not start a line of the digest.
    expected = " ".join(first_plain(json.loads(text)).split()) if text[0] in "[{" else text
    assert ctxmgr.providers._offline._readable(text) == expected
