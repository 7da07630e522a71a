"""The offline digest reads a span's facts once and gives each to an event by its spelling.

Each event's text is no longer read for facts: a fact goes to the first event that spells
it as a word of its own. The finished digest is still checked with the matcher, and a
digest that lacks a fact it meant to keep is made again the slow way (each event's facts
read from its own text): the 200 real tau-bench conversations never need that, and keep
every fact at the default budget.
"""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, strategies as st

import ctxmgr.providers._offline as offline
from ctxmgr.facts import Fact, find_facts, missing_facts
from ctxmgr.files import read_conversations
from ctxmgr.providers import SummaryText
from ctxmgr.providers._offline import OfflineSummarizer, _Event, _give_by_spelling, _unjoined
from ctxmgr.state import SummaryContextManager
from ctxmgr.state._transcript import fence_transcript, render_transcript

TAU = Path(__file__).resolve().parents[2] / "bench" / "tau" / "tau-airline-gpt4o.jsonl"


def digest(text: str, max_tokens: int = 600) -> SummaryText:
    answer = asyncio.run(OfflineSummarizer().summarize(text, instructions="", max_tokens=max_tokens))
    assert isinstance(answer, SummaryText)
    return answer


@cache
def tau_spans() -> list[tuple[str, frozenset[str]]]:
    """(transcript, tool-call ids) of the span each of the 200 tau conversations gives at
    the CLI's defaults with ``--max-messages 10``: the spans of bench target 3."""
    found = []
    manager = SummaryContextManager("offline", max_messages=10)
    for _line, conversation in read_conversations(str(TAU)):
        _system, old, _recent = manager.split(conversation.state.context)
        if old:
            ids = {str(call["id"]) for m in old for call in m.tools_calls or ()}
            found.append((render_transcript(old).text, frozenset(ids)))
    return found


def left_out(answer: SummaryText) -> int:
    """The facts the digest says it left out (0 when it says nothing)."""
    if not answer.notes:
        return 0
    return int(answer.notes[0].split(" events and ", 1)[1].split(" of ", 1)[0])


@pytest.mark.parametrize("max_tokens", [600, 150])
def test_the_real_spans_never_need_the_slow_way_and_say_exactly_what_they_lack(
    max_tokens: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow(*args: Any) -> list[Fact]:
        raise AssertionError("a digest lacked a fact it meant to keep")

    monkeypatch.setattr(offline, "_give_by_reading", slow)
    spans = tau_spans()
    assert len(spans) >= 190
    for transcript, ids in spans:
        facts = find_facts(transcript, ignore=ids)
        answer = digest(fence_transcript(transcript), max_tokens)
        lacking = missing_facts(facts, answer)
        assert len(lacking) == left_out(answer)  # what it says it left out, no more
        if max_tokens == 600:
            assert lacking == []  # at the default budget every fact stays


def test_a_fact_given_where_the_matcher_does_not_read_it_sends_the_digest_the_slow_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Spelled inside "$5,000", "$5" would not be stated by that event's line: give it
    # there on purpose, as a spelling rule that went wrong would.
    fee = "the fee you asked about is, as far as I can tell, " * 3
    transcript = f"USER: my budget is $5,000 in all\nASSISTANT: {fee}$5."
    text = fence_transcript(transcript)
    facts = find_facts(transcript)
    assert [f.text for f in facts] == ["$5,000", "$5"]
    right = digest(text, 60)
    used: list[int] = []
    real = offline._give_by_reading

    def wrong(events: list[_Event], facts: list[Fact]) -> list[Fact]:
        for fact in facts:
            offline._give(events[0], fact, 0)
        return []

    def reading(*args: Any) -> list[Fact]:
        used.append(1)
        return real(*args)

    monkeypatch.setattr(offline, "_give_by_spelling", wrong)
    monkeypatch.setattr(offline, "_give_by_reading", reading)
    answer = digest(text, 60)
    assert used == [1]
    assert missing_facts(facts, answer) == []
    assert answer == right
    assert answer.notes == right.notes


def test_each_fact_goes_to_the_first_event_that_spells_it_alone() -> None:
    events = [
        _Event("The user said: ", "pay with certificate_7504069 and $5,000 on 2024-05-06T17:41:02"),
        _Event("The assistant said: ", "Use certificate 7504069: $5 now, then $5,000 (HAT268)"),
        _Event("The user said: ", "HAT268 and 7504069"),
    ]
    facts = [Fact("number", "7504069"), Fact("amount", "$5,000"), Fact("date", "2024-05-06"),
             Fact("amount", "$5"), Fact("code", "HAT268"), Fact("code", "ZZZ999")]  # fmt: skip
    unowned = _give_by_spelling(events, facts)
    assert unowned == [Fact("code", "ZZZ999")]
    whole = events[0].head + events[0].prose
    assert [(f.text, end) for f, end in events[0].owned] == [("$5,000", whole.index("$5,000") + 6), ("2024-05-06", 0)]
    assert [f.text for f, _end in events[1].owned] == ["7504069", "$5", "HAT268"]  # in order of place
    assert events[2].owned == []
    assert [text for text, _end in events[1].listed] == ["7504069", "$5", "HAT268"]


WORDS = ["ab", "AB1", "12", "$5", "5", "x_12", "12-3", ",", ".", ":", "-", "_", "/", " ", "é", "7"]


@given(
    st.lists(st.lists(st.sampled_from(WORDS), max_size=8).map("".join), min_size=1, max_size=4),
    st.lists(st.sampled_from(WORDS[:7]), max_size=5, unique=True),
)
def test_giving_by_spelling_keeps_every_fact_once_where_it_is_spelled(texts: list[str], spellings: list[str]) -> None:
    events = [_Event("", text) for text in texts]
    facts = [Fact("code", spelled) for spelled in spellings]
    unowned = _give_by_spelling(events, facts)
    given_facts = [fact for event in events for fact, _end in event.owned]
    assert sorted(given_facts + unowned, key=facts.index) == facts  # each once
    for fact in unowned:
        assert not any(fact.text in text for text in texts)
    for i, event in enumerate(events):
        ends = [end for _fact, end in event.owned]
        for fact, end in event.owned:
            assert fact.text in event.prose
            if end:  # spelled alone there, and alone in no event before
                assert event.prose[end - len(fact.text) : end] == fact.text
                assert _unjoined(event.prose, end - len(fact.text), end)
                assert not any(_alone_in(fact.text, earlier.prose) for earlier in events[:i])
            else:  # spelled alone nowhere, and nowhere before
                assert not any(_alone_in(fact.text, other.prose) for other in events)
                assert not any(fact.text in earlier.prose for earlier in events[:i])
        assert [text for text, _end in event.listed] == [fact.text for fact, _end in event.owned]
        assert ends == [end for _text, end in event.listed]


def _alone_in(spelled: str, text: str) -> bool:
    return any(text.startswith(spelled, at) and _unjoined(text, at, at + len(spelled)) for at in range(len(text)))
