"""A deterministic summarizer that needs no network and no key (``--model offline``).

It writes a digest of the rendered span, one line per event: what the user said, what the
assistant said, which tool it called with which arguments, what the tool returned. JSON
is shown without its quotes. Every fact of the span (:mod:`ctxmgr.facts`: codes, ids,
amounts, dates...) is kept: a fact that an event's shortened text no longer shows is
listed after it, ``(also 4OG6T3, $1,234.50)``.

The span's facts are read once, from the transcript (the fact check then finds that
reading kept). Each belongs to the first event whose text spells it as a word of its own
(else the first that spells it at all), the few that no event spells go on a closing
line; no event's text is read for facts again. The finished digest is checked with
:func:`ctxmgr.facts.missing_facts`; should it lack a fact it meant to keep (a spelling the
matcher does not read as that fact where the digest shows it), it is made again with each
event's facts read from its own text, which gives an event only what its text states.

The digest fits in ``max_tokens`` (estimated at ``CHARS_PER_TOKEN`` characters a token).
When the span is longer, prose goes before facts, step by step until it fits:

1. every event's text is shortened, from 200 characters down to 40;
2. events that hold no fact of their own are left out, oldest first;
3. the other events' text is shortened further, down to their facts alone;
4. events are left out, oldest first, their facts kept on a closing "Also mentioned"
   line;
5. facts are left out, the optional ones first (:mod:`ctxmgr._fact_weight`: facts only
   looked up and never used again), each kind longest first, so that every required
   fact and as many others as possible stay.

What steps 2, 4 and 5 leave out is said on the digest's last line and in the answer's
``notes`` (:class:`~ctxmgr.providers._base.SummaryText`; they also say how many of the
facts left out were required), counted by checking the finished digest with
:func:`ctxmgr.facts.missing_facts`. The digest is never shorter than its first line and
that last line.

When the request says, before its transcript, that ctxmgr cleared or cut tool output in
the span (:mod:`ctxmgr.state._span`), the digest's first line says it too.

A request to combine partial summaries (lines ``PART 1: ...`` with their continuation
lines) is merged the same way, each line of each part an event. Any other line is kept
as an event of its own, so no text makes the summarizer fail; its work grows in
proportion to the length of the request. The same input always gives the same digest.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from itertools import accumulate
from operator import itemgetter

from ctxmgr._summarizer import setup_done
from ctxmgr._text import one_line
from ctxmgr._units import CHARS_PER_TOKEN
from ctxmgr.facts import Fact, find_facts, find_facts_among, missing_facts
from ctxmgr.providers._base import SummaryText

__all__ = ["OfflineSummarizer"]

_CLOSING = re.compile(r"</(transcript-[0-9a-f]{12})>")
_CLOSING_SIZE = len("</transcript-0123456789ab>")
_TOOL_RESULT = re.compile(r"TOOL RESULT (\S++) \[([^\]\n]*+)\]( \(error\))?:(?: |\Z)")
_ROLE = re.compile(r"([A-Z][A-Z_]*+):(?: |\Z)")
_PART = re.compile(r"PART (\d++):(?: |\Z)")
_OWN_HEADER = re.compile(r"Earlier conversation \(\d+ events?(?:; [^()\n]*)?\):")
_EDITS = re.compile(r"\bctxmgr (cleared|cut) (\d+) (tool results?|tool outputs?)\b")
_CALL_MARK = "[calls tool "

_HEADS = {
    "USER": "The user said: ",
    "ASSISTANT": "The assistant said: ",
    "SYSTEM": "The system said: ",
    "DEVELOPER": "The developer said: ",
}

_LONGEST_PROSE = (200, 160, 120, 96, 80, 64, 48, 40)
"""Step 1: the lengths an event's text is cut to, tried in turn."""
_SHORTEST_PROSE = (32, 24, 16, 8, 0)
"""Step 3: the lengths tried once events without facts are gone (0: facts alone)."""
_ELLIPSIS = "…"


@dataclass
class _Event:
    head: str  # "The user said: ": who did what, never shortened
    prose: str  # what was said or done, shortened as the budget requires
    owned: list[tuple[Fact, int]] = field(default_factory=list)  # facts said first here, see _own
    listed: list[tuple[str, int]] = field(default_factory=list)  # the same, as an "(also ...)" list writes them


# -- reading the request -----------------------------------------------------------------


def _closing(text: str) -> re.Match[str] | None:
    r"""The fence's closing tag, when ``text`` ends with one (whitespace after it aside):
    what ``</(transcript-[0-9a-f]{12})>\s*\Z`` finds, without trying it at every
    character of a long request (``\s`` and ``str.rstrip()`` strip the same characters)."""
    end = len(text.rstrip())
    return _CLOSING.fullmatch(text, end - _CLOSING_SIZE, end) if end >= _CLOSING_SIZE else None


def _unfence(text: str) -> str:
    """The transcript inside the fence, or the whole text when it has none."""
    closing = _closing(text)
    if closing is None:
        return text
    opening = f"<{closing.group(1)}>\n"
    start = text.find(opening)
    if start < 0:
        return text
    return text[start + len(opening) : closing.start()].removesuffix("\n")


def _records(transcript: str) -> Iterator[list[str]]:
    """Each line that starts a record, with the continuation lines (two spaces) under it."""
    record: list[str] = []
    for line in transcript.splitlines():
        if line.startswith("  ") and record:
            record.append(line.strip())
        elif line.strip():
            if record:
                yield record
            record = [line.strip()]
    if record:
        yield record


def _plain(value: object) -> str:
    # Strings, most of the leaves, are written without a call; an int is written as
    # json.dumps writes it (int.__repr__), without its encoder.
    # Lists, not generators, for join: it makes a list of what it is given anyway.
    if isinstance(value, dict):
        items = [f"{key}: {item if type(item) is str else _plain(item)}" for key, item in value.items()]
        return "{" + ", ".join(items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join([item if type(item) is str else _plain(item) for item in value]) + "]"
    if isinstance(value, str):
        return value
    if type(value) is int:
        return int.__repr__(value)
    return json.dumps(value)


def _readable(text: str) -> str:
    """JSON without its quotes (``{flight_number: HAT268, ...}``); other text as it is."""
    if not text.startswith(("{", "[")):
        return text
    try:
        # A string in the JSON may hold an escaped line break: the digest's line keeps it
        # on one line, as the transcript did.
        return one_line(_plain(json.loads(text)))
    except (ValueError, RecursionError):
        return text  # not JSON (or shortened JSON), or nested deeper than we recurse


def _calls(text: str, ids: set[str], who: str) -> Iterator[_Event]:
    """``[calls tool name(arguments) id=...]`` marks, as events of ``who`` ("The
    assistant"); their ids go to ``ids``."""
    for chunk in text.split(_CALL_MARK)[1:]:
        call, _, call_id = chunk.rstrip().removesuffix("]").rpartition(" id=")
        if not call:
            call, call_id = chunk.rstrip().removesuffix("]"), ""
        if call_id:
            ids.add(call_id)
        name, paren, arguments = call.partition("(")
        arguments = arguments.removesuffix(")") if paren else ""
        yield _Event(f"{who} called {name.strip()} with ", _readable(arguments.strip()) or "no arguments")


def _events(transcript: str, ids: set[str]) -> Iterator[_Event]:
    """The events of a transcript or of a combine request; tool-call ids go to ``ids``."""
    for record in _records(transcript):
        first = record[0]
        if part := _PART.match(first):
            lines = [first[part.end() :], *record[1:]]
            for line in lines:
                line = line.removeprefix("- ").strip()
                if line and not _OWN_HEADER.fullmatch(line):
                    yield _Event("", line)
            continue
        text = " | ".join(record)
        if result := _TOOL_RESULT.match(text):
            ids.add(result.group(2))
            verb = "failed" if result.group(3) else "returned"
            yield _Event(f"{result.group(1)} {verb}: ", _readable(text[result.end() :].strip()) or "nothing")
            continue
        role = _ROLE.match(text)
        if role is None:
            yield _Event("", text)
            continue
        body = text[role.end() :]
        said, mark, calls = body.partition(_CALL_MARK)
        head = _HEADS.get(role.group(1), f"{role.group(1).capitalize()}: ")
        if said.strip():
            yield _Event(head, said.strip())
        if mark:
            # A call is told as its message's role's: a user's text quoting the mark
            # reads "The user called ...", never "The assistant called ...".
            yield from _calls(mark + calls, ids, f"The {role.group(1).lower()}")


# -- fitting the budget ------------------------------------------------------------------


def _clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a space where one is near, marked ``…``."""
    if len(text) <= limit:
        return text
    if limit <= len(_ELLIPSIS):
        return ""
    cut = text[: limit - len(_ELLIPSIS)]
    space = cut.rfind(" ")
    if space >= len(cut) // 2:
        cut = cut[:space]
    return cut.rstrip(_CLIP_STRIPPED) + _ELLIPSIS


_CLIP_STRIPPED = " ,;:|"
"""What a cut text ends without (:func:`_clip`)."""


def _line(event: _Event, limit: int) -> str:
    prose = _clip(event.prose, limit)
    if prose == event.prose:
        return f"- {event.head}{prose}"  # its whole text states every fact it owns
    shown = len(event.head) + len(prose) - len(_ELLIPSIS) if prose else len(event.head)
    lacking = [text for text, end in event.listed if not 0 < end <= shown]
    if not lacking:
        return f"- {event.head}{prose}"
    listed = ", ".join(lacking)
    return f"- {event.head}{prose} (also {listed})" if prose else f"- {event.head}{listed}"


def _give_by_spelling(events: list[_Event], facts: list[Fact]) -> list[Fact]:
    """Give each fact to the first event whose text spells it as a word of its own (see
    :func:`_unjoined`), in order of where it stands there; a fact that no
    event spells alone goes to the first that spells it at all (``2024-05-06`` in
    ``2024-05-06T17:41:02``), listed after the event's line whenever that line is
    shortened. The facts that no event spells, in order, are returned (the closing
    line lists them).

    The facts are read once, from the span; here each is only searched for, in one
    string of every event's text: no event's text is read for facts again.
    """
    texts = [event.head + event.prose for event in events]
    starts = list(accumulate((len(text) + 1 for text in texts[:-1]), initial=0))
    whole = "\n".join(texts)
    given: list[list[tuple[int, int, Fact]]] = [[] for _ in events]
    unowned = []
    for fact in facts:
        found = _first_spelled(whole, fact.text, starts, texts)
        if found is None:
            unowned.append(fact)
        else:
            i, at, alone = found
            given[i].append((at, at + len(fact.text) if alone else 0, fact))
    for event, said in zip(events, given, strict=True):
        said.sort(key=_WHERE)  # stable: facts at one place keep the span's order
        for _at, end, fact in said:
            _give(event, fact, end)
    return unowned


_WHERE = itemgetter(0)


def _first_spelled(whole: str, spelled: str, starts: list[int], texts: list[str]) -> tuple[int, int, bool] | None:
    """The event and place in its text where ``spelled`` first stands alone (True), else
    first stands at all (False), within one event's text, in ``whole`` (the events' texts
    joined by line breaks, each starting at ``starts[i]``)."""
    if not spelled:
        return None
    within = None
    at = whole.find(spelled)
    while at >= 0:
        i = bisect_right(starts, at) - 1
        start = at - starts[i]
        if start + len(spelled) <= len(texts[i]):
            if _unjoined(texts[i], start, start + len(spelled)):
                return i, start, True
            within = within or (i, start, False)
        at = whole.find(spelled, at + 1)
    return within


def _unjoined(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` is not part of a longer word or number: no letter, digit or
    ``_`` touches it, nor a ``,.:/-`` with a letter or digit beyond it (the fact reader
    reads ``certificate_7504069`` as one word, ``$5,000`` as one amount)."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    if before.isalnum() or before == "_" or after.isalnum() or after == "_":
        return False
    if before in _JOINING and start >= 2 and text[start - 2].isalnum():
        return False
    return not (after in _JOINING and end + 1 < len(text) and text[end + 1].isalnum())


_JOINING = frozenset(",.:/-")


def _give_by_reading(events: list[_Event], facts: list[Fact], ignore: frozenset[str]) -> list[Fact]:
    """Give each fact to the first event whose own text reads as it (``find_facts_among``
    on each event's text); the facts no event reads, in order, are returned."""
    unowned = dict.fromkeys(facts)
    for event in events:
        said = find_facts_among(event.head + event.prose, ignore, unowned)
        _own(event, said)
        for fact in said:
            del unowned[fact]
    return list(unowned)


def _own(event: _Event, facts: list[Fact]) -> None:
    """Give ``event`` its ``facts`` (in order of appearance), each with where its text
    ends in the event's text, so a shortened line knows which it still shows."""
    text = event.head + event.prose
    start = 0
    for fact in facts:
        # Where the fact's spelling stands as a word of its own; from the previous
        # fact's start, since they come in order: one pass over the text for them all.
        at = text.find(fact.text, start)
        while at >= 0 and not _alone(text, at, at + len(fact.text)):
            at = text.find(fact.text, at + 1)
        _give(event, fact, at + len(fact.text) if at >= 0 else 0)
        if at >= 0:
            start = at


def _give(event: _Event, fact: Fact, end: int) -> None:
    event.owned.append((fact, end))
    # Made once: a line is made at each length tried, and lists what it lacks.
    event.listed.append((one_line(fact.text), end))


def _alone(text: str, start: int, end: int) -> bool:
    return not (start and text[start - 1].isalnum()) and not (end < len(text) and text[end].isalnum())


_ALSO = "Also mentioned: "


@dataclass
class _Plan:
    """The digest's lines, and what was left out to fit."""

    lines: list[str]
    dropped_events: int = 0
    left_out: set[Fact] = field(default_factory=set)  # the facts step 5 left out


class _Lines(dict[int, list[int]]):
    """The length of every event's line at a length (``lines[limit][i]``), counted on
    first use, and the lines themselves (:meth:`made`), written only for the length the
    digest settles on. An event whose text is no longer than the length is its whole line
    at every such length."""

    def __init__(self, events: list[_Event]) -> None:
        super().__init__()
        self.events = events
        self.whole = [f"- {event.head}{event.prose}" for event in events]
        self.whole_lengths = [len(whole) for whole in self.whole]

    def __missing__(self, limit: int) -> list[int]:
        made = self[limit] = [
            whole if len(event.prose) <= limit else _line_length(event, limit)
            for event, whole in zip(self.events, self.whole_lengths, strict=True)
        ]
        return made

    def made(self, limit: int, kept: list[int]) -> list[str]:
        """The lines of the events ``kept`` at ``limit``."""
        events, whole = self.events, self.whole
        return [whole[i] if len(events[i].prose) <= limit else _line(events[i], limit) for i in kept]


def _line_length(event: _Event, limit: int) -> int:
    """``len(_line(event, limit))`` of an event whose text is longer than ``limit``,
    counted without writing the line: the digest tries up to thirteen lengths for a span
    too long for its budget, and writes the lines of one (tests/providers/test_offline_speed.py)."""
    prose = event.prose
    if limit <= len(_ELLIPSIS):
        shown_prose = 0  # _clip gives ""
    else:
        # _clip: the text cut before the ellipsis, back to a space in its second half,
        # then stripped of the separators it ends with.
        cut = limit - len(_ELLIPSIS)
        space = prose.rfind(" ", 0, cut)
        if space >= cut // 2:
            cut = space
        while cut and prose[cut - 1] in _CLIP_STRIPPED:
            cut -= 1
        shown_prose = cut + len(_ELLIPSIS)
    head = len(event.head)
    shown = head + shown_prose - len(_ELLIPSIS) if shown_prose else head
    count = chars = 0
    for text, end in event.listed:
        if not 0 < end <= shown:
            count += 1
            chars += len(text)
    if not count:
        return 2 + head + shown_prose
    listed = chars + 2 * (count - 1)
    return 2 + head + shown_prose + len(" (also )") + listed if shown_prose else 2 + head + listed


def _without_unowned(
    events: list[_Event], lengths: list[int], kept: list[int], size: int, room: int
) -> tuple[list[int], int]:
    """``kept`` less its events that own no fact, oldest first, until ``size`` fits
    ``room`` (``lengths``: each event's line's); with the size left."""
    fewer = []
    for i in kept:
        if size > room and not events[i].owned:
            size -= lengths[i] + 1
        else:
            fewer.append(i)
    return fewer, size


def _fit(
    events: list[_Event], loose: list[Fact], order: dict[Fact, int], room: int, weigh: Callable[[], Collection[Fact]]
) -> _Plan:
    """The lines of ``events`` and of the ``loose`` facts (owned by no event) in ``room``
    characters, shortened by steps 1 to 5 of the module docstring as far as needed.

    Every event's line is measured at a length when that length is first tried (a few
    string operations per event and length tried, at most every length: most spans fit
    at the first), and the lines are written at the length chosen.
    """
    lines = _Lines(events)
    loose = list(loose)
    count, chars = len(loose), sum(len(f.text) + 2 for f in loose)  # the closing line's facts

    def closing() -> int:
        return len(_ALSO) + chars - 1 if count else 0

    def sized(limit: int, kept: list[int]) -> int:
        lengths = lines[limit]
        if len(kept) == len(lengths):  # every event (kept is a subset of them, in order)
            return sum(lengths) + len(lengths) + closing()
        return sum([lengths[i] for i in kept]) + len(kept) + closing()

    kept = list(range(len(events)))
    for limit in _LONGEST_PROSE:
        if sized(limit, kept) <= room:
            return _Plan(lines.made(limit, kept) + _also(loose, order))
    # Step 2: events with no fact of their own, oldest first.
    fewer, size = _without_unowned(events, lines[limit], kept, sized(limit, kept), room)
    kept, dropped = fewer, len(kept) - len(fewer)
    if size <= room:
        return _Plan(lines.made(limit, kept) + _also(loose, order), dropped)
    # Step 3: what is left is cut down to its facts.
    for limit in _SHORTEST_PROSE:
        if sized(limit, kept) <= room:
            return _Plan(lines.made(limit, kept) + _also(loose, order), dropped)
    # Step 4: events oldest first; their facts join the closing line.
    size = sized(limit, kept) - closing()
    first = 0
    while first < len(kept) and size + closing() > room:
        event = events[kept[first]]
        size -= lines[limit][kept[first]] + 1
        loose.extend(fact for fact, _end in event.owned)
        count += len(event.owned)
        chars += sum(len(fact.text) + 2 for fact, _end in event.owned)
        first += 1
    kept, dropped = kept[first:], dropped + first
    # Step 5: optional facts, then required ones (weigh), each longest first (the latest
    # first among equals), so most of them stay.
    left_out: set[Fact] = set()
    required = weigh() if size + closing() > room else ()
    for fact in sorted(loose, key=lambda f: (f not in required, len(f.text), order[f]), reverse=True):
        if size + closing() <= room:
            break
        left_out.add(fact)
        count, chars = count - 1, chars - len(fact.text) - 2
    loose = [f for f in loose if f not in left_out]
    return _Plan(lines.made(limit, kept) + _also(loose, order), dropped, left_out)


def _also(facts: list[Fact], order: dict[Fact, int]) -> list[str]:
    """The closing line listing ``facts`` in the span's order, if there are any."""
    return [_ALSO + ", ".join(one_line(f.text) for f in sorted(facts, key=order.__getitem__))] if facts else []


def _digest(text: str, max_tokens: int) -> SummaryText:
    ids: set[str] = set()
    transcript = _unfence(text)
    events = list(_events(transcript, ids))
    if not events:
        return SummaryText("")
    ignore = frozenset(ids)
    # Read once, from the span: the fact check reads the same span with the same ids
    # and finds this reading kept (ctxmgr.facts keeps the last two).
    facts = find_facts(transcript, ignore=ignore)
    order = {fact: i for i, fact in enumerate(facts)}
    header = f"Earlier conversation ({_count(len(events), 'event')}{_edits(text)}):"
    # Room is kept for the last line's longest form, whether it is needed or not: one
    # plan, whatever it turns out to say.
    marker_room = len(_marker(len(events), len(events), len(facts), len(facts))) + 1
    budget = max(1, max_tokens) * CHARS_PER_TOKEN
    weighed: list[Collection[Fact]] = []

    def weigh() -> Collection[Fact]:
        # Read only when facts must be left out: most spans never need it (nor its module,
        # with its rules' expressions: a few milliseconds of start-up).
        from ctxmgr._fact_weight import weigh_facts

        weighed[:] = weighed or [weigh_facts(facts, transcript)]
        return weighed[0]

    room = budget - len(header) - marker_room
    plan = _fit(events, _give_by_spelling(events, facts), order, room, weigh)
    body = "\n".join([header, *plan.lines])
    # Counted on the finished digest: what it really lacks, not what the plan meant.
    lacking = missing_facts(facts, body)
    if any(fact not in plan.left_out for fact in lacking):
        # A spelling the matcher does not read as its fact where the digest shows it (a
        # number "15" given to an event saying "May 15"): each event's facts are read
        # from its own text instead, the slower way that gives only what it states.
        for event in events:
            event.owned.clear()
            event.listed.clear()
        plan = _fit(events, _give_by_reading(events, facts, ignore), order, room, weigh)
        body = "\n".join([header, *plan.lines])
        lacking = missing_facts(facts, body)
    lost = len(lacking)
    if not plan.dropped_events and not lost:
        return SummaryText(body)
    marker = _marker(plan.dropped_events, len(events), lost, len(facts))
    which = ""
    if lost:
        required = sum(1 for fact in lacking if fact in weigh())
        which = f" ({required} of them required)" if required else " (all of them optional)"
    note = (
        f"the offline digest {marker[len('[digest shortened: ') : -1]}{which} to fit --max-summary-tokens {max_tokens}"
    )
    return SummaryText(f"{body}\n{marker}", notes=(note,))


def _edits(text: str) -> str:
    """What the request says ctxmgr cleared and cut in the span before sending it (on
    the lines before the fence), for the digest's first line: ``; ctxmgr cleared 3 tool
    results before summarizing``, or ``""``."""
    closing = _closing(text)
    start = text.find(f"<{closing.group(1)}>\n") if closing is not None else -1
    said = [" ".join(match.groups()) for match in _EDITS.finditer(text[: max(start, 0)])]
    return f"; ctxmgr {' and '.join(said)} before summarizing" if said else ""


def _marker(events: int, of_events: int, facts: int, of_facts: int) -> str:
    counted = f"{events} of {_count(of_events, 'event')} and {facts} of {_count(of_facts, 'fact')}"
    return f"[digest shortened: left out {counted}]"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


class OfflineSummarizer:
    """Digest of a transcript made by rules, not by a model; it keeps every fact that fits."""

    name = "offline"
    never_waits = True
    """The digest is made here, at once (see :func:`ctxmgr._summarizer.never_waits`)."""

    def __init__(self, model: str = "offline", options: object = None, *, api_style: str = "responses") -> None:
        """The registry builds every provider's summarizer alike; the digest needs none of it.

        Building it is the digest's whole set-up: in the command line's process the start-up's
        objects are frozen then, and young collections come every 5,000 new objects
        (:func:`ctxmgr._summarizer.setup_done`; a program that imports the library is left as
        it is). A run's messages, events and facts mostly die young: on the 10 MB OpenAI chat
        file in one process, 0.06 s of collections against 0.10 s at Python's 700.
        """
        setup_done()

    def input_limit(self) -> tuple[None, str]:
        """No limit: the digest is made here, from a transcript of any length."""
        return None, "the offline digest reads any length"

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        return _digest(text, max_tokens)
