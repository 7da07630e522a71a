"""The benchmark of real-style summaries (bench/fact_summaries.py, bench/fact_pairs/): its
data holds together, it reads the warning as the CLI writes it, and one pair run through
the CLI against the loopback server sends the stored request and reports its alarms."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

import fact_summaries as bench  # noqa: E402

PAIRS = bench.load_pairs()
JUDGEMENTS = json.loads((bench.PAIRS / "judgements.json").read_text())


def test_forty_requests_of_real_conversations_with_an_honest_summary_each() -> None:
    honest = [pair for pair in PAIRS if pair.kind == "honest"]
    lines = bench.DATA.read_text().splitlines()
    assert len(honest) == 40
    for pair in honest:
        record = json.loads(lines[pair.request["line"] - 1])
        first_user = next(m["content"] for m in record["messages"] if m["role"] == "user")
        assert first_user.strip()[:60] in pair.request["input"], pair.name  # the request is of that conversation
        assert pair.request["max_tokens"] == 600
        assert 50 <= len(pair.summary.split()) <= 450, pair.name


def test_each_lossy_summary_records_one_drop_the_honest_one_states() -> None:
    lossy = [pair for pair in PAIRS if pair.kind == "lossy"]
    assert len(lossy) == 10
    honest = {pair.name: pair.summary for pair in PAIRS if pair.kind == "honest"}
    for pair in lossy:
        assert pair.drop is not None
        assert pair.drop["why_needed"]
        assert pair.summary != honest[pair.name]
        words = pair.drop["dropped"].split()
        assert any(word in honest[pair.name] for word in words), pair.name


def test_every_judgement_is_one_of_three_with_a_reason() -> None:
    for key, entries in JUDGEMENTS.items():
        assert key.split(".")[0] in {pair.name for pair in PAIRS}, key
        for text, entry in entries.items():
            assert entry["verdict"] in bench.VERDICTS, (key, text)
            assert entry["why"].strip(), (key, text)


def _squeezed(text: str) -> str:
    return text.lower().replace(" ", "")


def _plain(text: str) -> str:
    return text.replace(",", "").replace("$", "").lstrip("-")


KEEP_RECENT = {"test-set-6": 8, "test-set-7": 6, "test-set-8": 5, "test-set-9": 7, "test-set-10": 6, "test-set-11": 5,
               "test-set-12": 10, "test-set-13": 2, "test-set-14": 3,
               "test-set-15": 12, "test-set-16": 9,
               "test-set-17": 7, "test-set-18": 5}  # fmt: skip


@pytest.mark.parametrize(
    ("folder", "honest", "lossy"),
    [
        ("held-out", 20, 6),
        ("test-set", 20, 6),
        ("test-set-2", 30, 12),
        ("test-set-3", 30, 13),
        ("test-set-4", 30, 13),
        ("test-set-5", 30, 13),
        ("test-set-6", 30, 13),
        ("test-set-7", 30, 13),
        ("test-set-8", 30, 20),
        ("test-set-9", 30, 25),
        ("test-set-10", 30, 25),
        ("test-set-11", 30, 22),
        ("test-set-12", 30, 25),
        ("test-set-13", 30, 25),
        ("test-set-14", 30, 25),
        ("test-set-15", 30, 25),
        ("test-set-16", 30, 24),
        ("test-set-17", 30, 25),
        ("test-set-18", 30, 25),
    ],
)
def test_the_other_sets_hold_together(folder: str, honest: int, lossy: int) -> None:
    # Each request's span is the conversation less its kept recent messages (``keep_recent``,
    # 4 unless the request says: test-set-6 is cut at 8, test-set-7 at 6, test-set-8 at 5...).
    root = bench.PAIRS / folder
    pairs = bench.load_pairs(root)
    lines = bench.DATA.read_text().splitlines()
    honest_ones = {pair.name: pair for pair in pairs if pair.kind == "honest"}
    assert len(honest_ones) == honest
    assert len([pair for pair in pairs if pair.kind == "lossy"]) == lossy
    for pair in pairs:
        record = json.loads(lines[pair.request["line"] - 1])
        first_user = next(m["content"] for m in record["messages"] if m["role"] == "user")
        assert first_user.strip()[:60] in pair.request["input"], pair.key
        assert len(pair.summary.split()) <= 450, pair.key
        assert pair.keep_recent == KEEP_RECENT.get(folder, 4), pair.key
        if pair.kind == "lossy":
            assert pair.drop is not None
            assert pair.summary != honest_ones[pair.name].summary, pair.key
            dropped = _plain(pair.drop["dropped"])  # "-6594" as the span writes it, "$6,594" in a summary
            # "master card" as the user wrote it, "Mastercard" in a summary
            assert _squeezed(dropped) in _squeezed(_plain(honest_ones[pair.name].summary)), pair.key
            assert not re.search(rf"(?<![\w.]){re.escape(dropped)}(?![\w]|\.\d)", _plain(pair.summary)), pair.key
    for key, entries in json.loads((root / "judgements.json").read_text()).items():
        assert key.split(".")[0] in honest_ones, (folder, key)
        for entry in entries.values():
            assert entry["verdict"] in bench.VERDICTS
            assert entry["why"].strip()


def test_the_named_facts_are_read_in_the_warnings_order_commas_and_all() -> None:
    warning = (
        "warning: x.jsonl: line 1: the summary lacks 7 required of 40 facts of the summarized messages: "
        "$1,234, May 27, 2024, W12345, 07:35, $12 and 2 more; 30 optional facts left out (all in --json)"
    )
    required = ["$12", "W12345", "May 27, 2024", "$1,234", "07:35", "X1", "X2"]
    assert bench.named_facts([warning], required) == ["$1,234", "May 27, 2024", "W12345", "07:35", "$12"]
    short = "line 1: the summary lacks 1 required of 9 facts of the summarized messages: W12345"
    assert bench.named_facts([short], ["W12345"]) == ["W12345"]
    assert bench.named_facts(["nothing to see"], ["W12345"]) == []


def test_a_drop_is_named_by_its_text_or_by_the_quantity_it_holds() -> None:
    assert bench.names_drop(["W12345", "$54"], "W12345")
    assert bench.names_drop(["3"], "3 checked bags")
    assert not bench.names_drop(["$54"], "$5")
    assert bench.names_drop(["2024-05-23"], "May 23")  # the same day in another spelling
    assert not bench.names_drop(["2024-05-23"], "May 24")
    assert bench.names_drop(["change of plan"], "change of plans")
    assert not bench.names_drop(["gold"], "silver")
    assert bench.names_drop(["288"], "$288")
    assert bench.names_drop(["$1,204"], "1204")
    assert not bench.names_drop(["288"], "$28")
    assert not bench.names_drop(["13"], "3 checked bags")


def test_targets_scale_with_the_pairs() -> None:
    figures = bench.Figures(honest=40, lossy=10)
    figures.required.update(lost=8, said=1, optional=1)
    figures.honest_failing = ["a"]
    figures.caught = [str(i) for i in range(9)]
    assert bench.missed_targets(figures) == []
    figures.honest_failing = ["a", "b"]
    figures.caught.pop()
    figures.required["optional"] += 1
    assert len(bench.missed_targets(figures)) == 3


@pytest.mark.parametrize("kind", ["honest", "lossy"])
def test_a_pair_through_the_cli_sends_the_stored_request(kind: str, tmp_path: Path) -> None:
    pair = next(p for p in PAIRS if p.name == "tau-165" and p.kind == kind)
    (outcome,) = bench.run_all([pair])
    assert outcome.problems == []
    assert outcome.facts > 10
    assert outcome.alarms  # a good summary leaves optional facts out, and --json lists them
    if kind == "lossy":
        assert outcome.fails
        assert pair.drop is not None
        assert bench.names_drop(outcome.named, pair.drop["dropped"])


def test_the_drop_target_counts_drops_of_a_required_fact_once_every_drop_is_judged() -> None:
    def _drop_targets(outcomes: list[bench.Outcome]) -> list[str]:
        return [miss for miss in bench.missed_targets(bench.figures(outcomes, {})) if miss.startswith("drops")]

    request = {"line": 1, "input": "", "instructions": "", "max_tokens": 600}

    def lossy(name: str, required: bool | None, caught: bool) -> bench.Outcome:
        pair = bench.Pair(name, "lossy", request, "s", {"dropped": "W12345"}, required)
        warning = "x: the summary lacks 1 required of 9 facts of the summarized messages: W12345"
        alarms = [bench.Alarm("W12345", "id", True)] if caught else []
        return bench.Outcome(pair, 9, alarms, [warning] if caught else [], 3 if caught else 0)

    # Nine of ten drops caught; the one missed is of an optional fact: met either way.
    outcomes = [lossy(f"tau-{i:03d}", True, True) for i in range(9)] + [lossy("tau-009", False, False)]
    assert _drop_targets(outcomes) == []
    # Eight of ten caught, one missed of a required fact: 8 of 9 misses too.
    outcomes = [lossy(f"tau-{i:03d}", True, True) for i in range(8)] + [
        lossy("tau-008", True, False),
        lossy("tau-009", False, False),
    ]
    assert _drop_targets(outcomes) == ["drops of a required fact caught: 8 of 9"]
    # Eight of ten caught, the two missed of optional facts: met on the drops that count.
    outcomes = [lossy(f"tau-{i:03d}", True, True) for i in range(8)] + [
        lossy("tau-008", False, False),
        lossy("tau-009", False, False),
    ]
    assert _drop_targets(outcomes) == []
    # A drop not judged: every drop counts.
    outcomes[-1] = lossy("tau-009", None, False)
    assert _drop_targets(outcomes) == ["drops caught: 8 of 10"]


@pytest.mark.parametrize(
    "folder",
    ["", "held-out", "test-set", *(f"test-set-{n}" for n in range(2, 13))],
)
def test_every_drop_is_judged_required_or_not_with_a_reason(folder: str) -> None:
    root = bench.PAIRS / folder if folder else bench.PAIRS
    drops = json.loads((root / "drops.json").read_text())
    lossy = {pair.name: pair for pair in bench.load_pairs(root) if pair.kind == "lossy"}
    assert set(drops) == set(lossy)
    for name, entry in drops.items():
        assert entry["dropped"] == lossy[name].drop["dropped"], name
        assert isinstance(entry["required"], bool), name
        assert entry["why"].strip(), name
        assert lossy[name].drop_required is entry["required"]
