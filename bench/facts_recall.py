"""How well facts survive summaries, measured on real conversations.

Run from the repository root (about half a minute)::

    python bench/facts_recall.py [bench/tau/tau-airline-gpt4o.jsonl]

Spans are built as ``ctxmgr summarize`` builds them: for every conversation and every
``keep_recent`` from 1 to 8, the non-system messages before the kept ones (the cut moved
earlier to keep tool calls with their results), rendered whole.

It prints two tables:

(a) the offline summarizer at its defaults (``max_tokens=600``): the share of each kind
    of fact of the span (:func:`ctxmgr.facts.find_facts`) that its digest states
    (:func:`ctxmgr.facts.missing_facts`), and how many digests said they left something
    out;
(b) the fact check itself, against simulated model summaries: each span's facts, less a
    random subset (seeded), written into sentences in other spellings than the span's
    (amounts, dates and times reformatted, codes in another case or split, emails with
    the host in capitals...), with near misses of the dropped facts as distractors
    (``$120`` for ``$12``, ``HAT2681`` for ``HAT268``, the same day in another year...).
    Recall is the share of dropped facts the check reports; a false alarm is a reported
    fact that the summary does state. A dropped fact that a kept one states as well (a
    number inside a kept id) is not counted as dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ctxmgr.facts import Fact, find_facts, missing_facts  # noqa: E402
from ctxmgr.files import read_conversations  # noqa: E402
from ctxmgr.providers._offline import OfflineSummarizer  # noqa: E402
from ctxmgr.state import Message, RemoteToolCallBlock, SummaryContextManager, ToolCallBlock, ToolResultBlock  # noqa: E402
from ctxmgr.state._transcript import fence_transcript, render_transcript  # noqa: E402

DEFAULT_DATA = REPO / "bench" / "tau" / "tau-airline-gpt4o.jsonl"
SEED = 20240515
DROP_SHARE = 0.3
MONTHS = [datetime.date(2024, m, 1).strftime("%B") for m in range(1, 13)]


def call_ids(span: list[Message]) -> set[str]:
    ids: set[str] = set()
    for message in span:
        for call in message.tools_calls or ():
            if isinstance(call, dict) and call.get("id"):
                ids.add(str(call["id"]))
        for block in message.content:
            if isinstance(block, ToolCallBlock | RemoteToolCallBlock):
                ids.add(block.id)
            elif isinstance(block, ToolResultBlock):
                ids.add(block.call_id)
    return ids


def spans(path: Path) -> list[tuple[str, set[str]]]:
    """(transcript, tool-call ids) of every span summarized at keep_recent 1 to 8."""
    found = []
    for _line, conversation in read_conversations(str(path)):
        for keep in range(1, 9):
            manager = SummaryContextManager("offline", keep_recent=keep)
            _system, old, _recent = manager.split(conversation.state.context)
            if old:
                found.append((render_transcript(old).text, call_ids(old)))
    return found


# -- (a) the offline summarizer ----------------------------------------------------------


def offline_recall(all_spans: list[tuple[str, set[str]]]) -> None:
    total: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    shortened = 0
    summarizer = OfflineSummarizer()
    started = time.perf_counter()
    for transcript, ids in all_spans:
        facts = find_facts(transcript, ignore=ids)
        digest = asyncio.run(summarizer.summarize(fence_transcript(transcript), instructions="", max_tokens=600))
        shortened += bool(getattr(digest, "notes", ()))
        missing = set(missing_facts(facts, digest))
        for fact in facts:
            total[fact.kind] += 1
            kept[fact.kind] += fact not in missing
    elapsed = time.perf_counter() - started
    print(f"(a) offline digest, max_tokens=600: {len(all_spans)} spans in {elapsed:.1f} s")
    print(f"    {'kind':<10}{'facts':>8}{'kept':>8}{'recall':>9}")
    for kind in sorted(total, key=total.__getitem__, reverse=True):
        print(f"    {kind:<10}{total[kind]:>8}{kept[kind]:>8}{kept[kind] / total[kind]:>9.2%}")
    all_facts, all_kept = sum(total.values()), sum(kept.values())
    print(f"    {'all':<10}{all_facts:>8}{all_kept:>8}{all_kept / all_facts:>9.2%}")
    print(f"    digests that say they left something out: {shortened} of {len(all_spans)}")


# -- (b) the check, against simulated summaries ------------------------------------------

ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
NAMED = re.compile(r"([A-Z][a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?(?:,? (\d{4}))?")
CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?(?: ?([ap])\.?m\.?)?|(\d{1,2}) ?([ap])\.?m\.?", re.I)
MONEY = re.compile(r"(US\$|\$|€|£|USD |EUR |GBP )?([\d,]+(?:\.\d+)?)( ?(?:USD|EUR|GBP|dollars?|euros?))?")
AMOUNT_WORDS = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "dollar": "USD", "euro": "EUR"}
UNIT_SYNONYMS = {"bags": ["bags", "suitcases"], "hours": ["hours", "hrs"], "passengers": ["passengers", "travelers"],
                 "minutes": ["minutes", "mins"], "kg": ["kg", "kilograms"]}  # fmt: skip
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve"]  # fmt: skip


def a_day(text: str) -> datetime.date | None:
    if m := ISO.fullmatch(text):
        return datetime.date(int(m[1]), int(m[2]), int(m[3]))
    if (m := NAMED.fullmatch(text)) and m[1][:3] in [n[:3] for n in MONTHS]:
        month = [n[:3] for n in MONTHS].index(m[1][:3]) + 1
        return datetime.date(int(m[3] or 2024), month, int(m[2]))
    return None


def date_spellings(text: str, rng: random.Random) -> tuple[str, str] | None:
    day = a_day(text)
    if day is None:
        return None
    month = MONTHS[day.month - 1]
    ordinal = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}.get(day.day, "th")
    forms = [f"{month} {day.day}, {day.year}", f"{day.day} {month} {day.year}", f"{month[:3]} {day.day}{ordinal}",
             f"{day.year}/{day.month:02}/{day.day:02}", f"{day.month}/{day.day}/{day.year}",
             f"{day.day:02}.{day.month:02}.{day.year}", f"{month} {day.day}{ordinal}, {day.year}"]  # fmt: skip
    # A near miss must not be another fact of the span: another year than any it names
    # (a day without a year stands for any year, so its near miss is another month).
    if NAMED.fullmatch(text) and not NAMED.fullmatch(text)[3]:
        other = MONTHS[(day.month + 5) % 12]
        return rng.choice([f for f in forms if f != text]), f"{other} {day.day}"
    near = day.replace(year=2096)
    return rng.choice([f for f in forms if f != text]), rng.choice([f"{month} {day.day}, {near.year}", str(near)])


def time_spellings(text: str, rng: random.Random) -> tuple[str, str] | None:
    m = CLOCK.fullmatch(text)
    if m is None:
        return None
    if m[1] is not None:
        hour, minute, second, half = int(m[1]), int(m[2]), int(m[3] or 0), m[4]
    else:
        hour, minute, second, half = int(m[5]), 0, 0, m[6]
    if half:
        hour = hour % 12 + (12 if half.lower() == "p" else 0)
    twelve = hour % 12 or 12
    suffix = "PM" if hour >= 12 else "AM"
    seconds = f":{second:02}" if second else ""
    forms = [f"{hour:02}:{minute:02}{seconds}", f"{twelve}:{minute:02}{seconds} {suffix}"]
    if not minute and not second:
        forms += [f"{twelve} {suffix.lower()}", f"{twelve}{suffix.lower()}"]
    near_second = (second + rng.choice([7, 13])) % 60
    return rng.choice([f for f in forms if f != text] or forms), f"{hour:02}:{minute:02}:{near_second:02}"


def amount_spellings(text: str, rng: random.Random) -> tuple[str, str] | None:
    m = MONEY.fullmatch(text)
    if m is None or not (m[1] or m[3]):
        return None
    currency = AMOUNT_WORDS.get((m[1] or m[3]).strip().rstrip("s"), (m[1] or m[3]).strip().upper())
    value = Decimal(m[2].replace(",", ""))
    whole = value == value.to_integral_value()
    plain = f"{value:.2f}" if not whole else f"{int(value)}"
    grouped = f"{value:,.2f}" if not whole else f"{int(value):,}"
    sign = {"USD": "$", "EUR": "€", "GBP": "£"}[currency]
    word = {"USD": "dollars", "EUR": "euros", "GBP": "pounds sterling"}[currency]
    forms = [f"{plain} {currency}", f"{currency} {grouped}", f"{sign}{value:.2f}", f"{grouped} {word}"
             if currency != "GBP" else f"{sign}{grouped}", f"{sign}{plain}"]  # fmt: skip
    near = rng.choice([f"{sign}{plain}0", f"{sign}{value + Decimal('0.01'):.2f}", f"{sign}{value:,.2f}1"])
    return rng.choice([f for f in forms if f != text]), near


def code_spellings(text: str, rng: random.Random) -> tuple[str, str]:
    forms = [text.lower(), text.upper(), text.swapcase()]
    if "_" in text:
        forms += [text.replace("_", "-"), text.replace("_", " ")]
    else:
        split = re.match(r"([A-Za-z]+)(\d.*)", text)
        if split:
            forms.append(f"{split[1]}-{split[2]}")
    # Not a letter before an id: "Bgift_card_7091239" would still state the number 7091239.
    near = text + rng.choice("0123456789") if rng.random() < 0.5 or "_" in text else rng.choice("ABXZ") + text
    return rng.choice([f for f in forms if f != text] or forms), near


def quantity_spellings(text: str, rng: random.Random) -> tuple[str, str] | None:
    if text.endswith("%"):
        number = text[:-1].strip()
        return rng.choice([f"{number} percent", f"{number} %"]), f"{Decimal(number) + Decimal('0.25')}%"
    words = text.split()
    if len(words) < 2:
        return None
    number, unit = words[0].lower(), words[-1].lower()
    if number in NUMBER_WORDS:
        number = str(NUMBER_WORDS.index(number))
    if not re.fullmatch(r"\d+(?:\.\d+)?", number):
        return None
    unit = rng.choice(UNIT_SYNONYMS.get(unit, [unit]))
    spelled = NUMBER_WORDS[int(number)] if number.isdigit() and int(number) < len(NUMBER_WORDS) else number
    return f"{rng.choice([number, spelled])} {unit}", f"{Decimal(number) + Decimal('0.25')} {unit}"


def other_spelling(fact: Fact, rng: random.Random) -> tuple[str, str]:
    """(the fact in another spelling, a near miss of it) for the simulated summaries."""
    spell: Callable[[str, random.Random], tuple[str, str] | None] | None = {
        "date": date_spellings, "time": time_spellings, "amount": amount_spellings,
        "code": code_spellings, "id": code_spellings, "quantity": quantity_spellings,
    }.get(fact.kind)  # fmt: skip
    pair = spell(fact.text, rng) if spell else None
    if pair is not None:
        return pair
    if fact.kind == "email":
        local, _, host = fact.text.partition("@")
        return f"{local}@{host.upper()}", f"{local}1@{host}"
    if fact.kind == "number":
        digits = fact.text.lstrip("#")
        return f"{int(digits):,}" if digits.isdigit() else fact.text, digits + "1"
    if fact.kind in ("label", "choice", "category"):
        # A word fact is said in any form of its words ("plans changed" for "change of
        # plan"): its near miss is a part of it, its first word alone or a longer word.
        words = fact.text.replace("_", " ").split()
        return fact.text, words[0] if len(words) > 1 else fact.text + fact.text[-1]
    return fact.text, fact.text + "9"


FILLERS = [
    "The customer confirmed {}.",
    "They mentioned {} earlier.",
    "Noted: {}.",
    "The agent looked up {}.",
    "Details include {} and 42 other items.",
    "As discussed, {} applies (ref 7).",
    "{} was checked twice.",
]


def implied(fact: Fact, kept: list[Fact]) -> bool:
    """Whether a kept fact states ``fact`` too: a number or an id inside a longer id, an
    email or an amount (``7504069`` in ``certificate_7504069``), a day without a year that
    a kept date names. The check rightly finds those in the summary, so they do not count as dropped."""
    if fact.kind in ("number", "id", "code"):
        inside = re.compile(rf"(?<![A-Za-z0-9]){re.escape(fact.text.lstrip('#'))}(?![A-Za-z0-9])", re.I)
        return any(inside.search(k.text.replace(",", "")) for k in kept)
    named = NAMED.fullmatch(fact.text)
    if fact.kind == "date" and named and not named[3]:
        day = a_day(fact.text)
        return any((d := a_day(k.text)) is not None and (d.month, d.day) == (day.month, day.day) for k in kept)  # type: ignore[union-attr]
    return False


def check_quality(all_spans: list[tuple[str, set[str]]]) -> tuple[int, int, int, int]:
    """Print part (b); return its totals: (dropped, caught, reported, false alarms)."""
    rng = random.Random(SEED)
    dropped: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    reported: Counter[str] = Counter()
    false_alarms: Counter[str] = Counter()
    started = time.perf_counter()
    for transcript, ids in all_spans:
        facts = find_facts(transcript, ignore=ids)
        gone = {f for f in facts if rng.random() < DROP_SHARE}
        kept = [f for f in facts if f not in gone]
        gone = {f for f in gone if not implied(f, kept)}
        sentences = []
        for fact in facts:
            spelled, near = other_spelling(fact, rng)
            sentences.append(rng.choice(FILLERS).format(near if fact in gone else spelled))
        rng.shuffle(sentences)
        summary = " ".join(sentences)
        for fact in missing_facts(facts, summary):
            reported[fact.kind] += 1
            if fact in gone:
                caught[fact.kind] += 1
            else:
                false_alarms[fact.kind] += 1

        for fact in gone:
            dropped[fact.kind] += 1
    elapsed = time.perf_counter() - started
    print(f"(b) the fact check against simulated summaries ({DROP_SHARE:.0%} of facts dropped): {elapsed:.1f} s")
    print(f"    {'kind':<10}{'dropped':>9}{'caught':>8}{'recall':>9}{'reported':>10}{'false':>7}{'f. alarm':>10}")
    for kind in sorted(dropped, key=dropped.__getitem__, reverse=True):
        alarm = false_alarms[kind] / reported[kind] if reported[kind] else 0.0
        print(f"    {kind:<10}{dropped[kind]:>9}{caught[kind]:>8}{caught[kind] / dropped[kind]:>9.2%}"
              f"{reported[kind]:>10}{false_alarms[kind]:>7}{alarm:>10.2%}")  # fmt: skip
    d, c, r, f = (sum(x.values()) for x in (dropped, caught, reported, false_alarms))
    print(f"    {'all':<10}{d:>9}{c:>8}{c / d:>9.2%}{r:>10}{f:>7}{f / r if r else 0:>10.2%}")
    return d, c, r, f


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA, help="OpenAI chat JSONL conversations")
    args = parser.parse_args()
    started = time.perf_counter()
    all_spans = spans(args.data)
    print(f"{len(all_spans)} spans from {args.data} in {time.perf_counter() - started:.1f} s")
    offline_recall(all_spans)
    check_quality(all_spans)


if __name__ == "__main__":
    main()
