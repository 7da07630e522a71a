"""The fact check against summaries written the way a model writes them, every alarm judged.

The pairs are in ``bench/fact_pairs/`` (its README says where they come from): for 40
real conversations of ``bench/tau/tau-airline-gpt4o.jsonl``, the exact request
``ctxmgr summarize`` sends at ``--keep-recent 4`` (``requests/``; a request's
``"keep_recent"`` names another number), an honest summary of
each written by a model given that request (``summaries/*.honest.txt``) and, for 10 of
them, a lossy copy with one recorded drop of a fact that matters (``*.lossy.txt``, the
drop in ``*.lossy.json``).

Every pair is run through the CLI as a user runs it, against the loopback server
(``tests/llm_server.py``) with the real OpenAI SDK: the conversation is written to a
temporary file and summarized with the options of the stored request, the server
answering the pair's summary. The request the server receives must equal the stored one
(the transcript tag's random suffix normalised): the summary answers that exact request.
Two runs a pair:

* without ``--require-facts``, with ``--json``: the warning line on standard error and
  ``missing_facts`` (each with ``required``): the alarms;
* with ``--require-facts``: the exit code (3: the summary fails). The retry it makes is
  answered with the same summary again, a model that cannot do better, so the first
  summary is the one judged.

Every alarm (a missing fact, required or optional) is judged by hand in
``bench/fact_pairs/judgements.json``: ``"lost"`` (truly lost and needed later),
``"said"`` (the summary says it in another way: a false alarm of the matcher) or
``"optional"`` (rightly left out by a good summary), with a short reason. The file is
keyed by conversation (``"tau-000"``: the judgement holds for its honest and lossy
summary alike), then by the fact's text as the span writes it; a key ``"tau-020.lossy"``
holds what differs for the lossy summary (its drop). Each drop is judged too, in a set's
``drops.json``: whether the dropped fact is a required one by the issue's definition
(what the user stated, a change's arguments, what the assistant told or confirmed, what
is still open, what the kept messages refer to without stating; not what the kept
messages state again, not what only read-only lookups returned and nothing used again).
The judges saw the spans, the kept messages and the drops, not the checker's output.

Reported: per pair the alarms; the precision of the warning (required alarms judged
"lost" / all required alarms); the drops caught (the lossy summary fails
``--require-facts`` and its dropped fact is among the first five the warning names), all
of them and those of a required fact;
the honest summaries ``--require-facts`` fails; the optional alarms by judgement; the
same for the first and the last 20 conversations (a guard against rules fitted to a
few); and beside them the simulated benchmark (``bench/facts_recall.py``, part (b)).

    python bench/fact_summaries.py [--check] [--unjudged] [--only tau-000] [--no-simulated]

``--check`` exits 1 when an alarm has no judgement or a target is missed (honest
summaries failing: at most 1 in 30; drops of a required fact caught, where every drop is
judged, else all drops caught: at least 9 in 10; precision: at least 80%). ``--unjudged``
prints every unjudged alarm with where the span says it, for judging. About three minutes
(two CLI runs a pair, then the simulated benchmark).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from llm_server import LLMServer, Reply  # noqa: E402

from ctxmgr.facts import Fact, find_facts, missing_facts  # noqa: E402

PAIRS = REPO / "bench" / "fact_pairs"
DATA = REPO / "bench" / "tau" / "tau-airline-gpt4o.jsonl"
VERDICTS = ("lost", "said", "optional")
KEEP_RECENT = 4
"""The kept recent messages of a stored request that does not say (``"keep_recent"``)."""
OPTIONS = [
    *("--model", "gpt-4o-mini", "--max-messages", "0", "--token-budget", "none"),
    *("--max-input-tokens", "75000", "--no-cache"),
]
"""The options the stored requests were made with (``--base-url`` and ``--keep-recent``
are added per run)."""

HONEST_FAIL_SHARE = 1 / 30
DROPS_CAUGHT_SHARE = 0.9
PRECISION = 0.8
SHOWN = 5
_TAG = re.compile(r"transcript-[0-9a-f]+")
_NAMED = re.compile(r"facts of the summarized messages(?: after asking again)?: (?P<named>.*)$")
_MORE = re.compile(r" and \d+ more(?:; .*)?$|; \d+ optional facts? left out.*$")


@dataclass(frozen=True)
class Pair:
    """A conversation's stored request and one summary of it (honest or lossy)."""

    name: str
    kind: str
    request: dict[str, Any]
    summary: str
    drop: dict[str, Any] | None = None
    drop_required: bool | None = None  # the drop judged by hand (drops.json): a required fact?

    @property
    def key(self) -> str:
        return f"{self.name}.{self.kind}"

    @property
    def keep_recent(self) -> int:
        """The messages kept after the summary when the request was recorded."""
        return int(self.request.get("keep_recent", KEEP_RECENT))


@dataclass(frozen=True)
class Alarm:
    """A fact of the span the summary lacks, as ``--json`` reports it."""

    text: str
    kind: str
    required: bool


@dataclass
class Outcome:
    """What the CLI said of one pair."""

    pair: Pair
    facts: int = 0
    alarms: list[Alarm] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    exit_code: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def named(self) -> list[str]:
        """The facts the warning names (the first five required ones, most important first)."""
        required = [alarm.text for alarm in self.alarms if alarm.required]
        return named_facts(self.warnings, required)

    @property
    def fails(self) -> bool:
        return self.exit_code == 3


def load_pairs(root: Path = PAIRS) -> list[Pair]:
    """Every (request, summary) pair of ``root``, honest ones and lossy ones."""
    pairs = []
    drops_path = root / "drops.json"
    drops = json.loads(drops_path.read_text()) if drops_path.exists() else {}
    for request_path in sorted((root / "requests").glob("*.json")):
        name = request_path.stem
        request = json.loads(request_path.read_text())
        for kind in ("honest", "lossy"):
            summary_path = root / "summaries" / f"{name}.{kind}.txt"
            if not summary_path.exists():
                continue
            drop = None
            if kind == "lossy":
                drop = json.loads(summary_path.with_suffix(".json").read_text())
            required = drops.get(name, {}).get("required") if drop is not None else None
            pairs.append(Pair(name, kind, request, summary_path.read_text(), drop, required))
    return pairs


def normalise(text: str | None) -> str:
    """A request's text with the transcript tag's random suffix made constant."""
    return _TAG.sub("transcript-N", text or "")


def named_facts(warnings: list[str], required: list[str]) -> list[str]:
    """The facts a warning line names, in its order: read by matching the required
    facts' texts one after the other (a fact's text may hold a comma)."""
    for line in warnings:
        found = _NAMED.search(line)
        if found is None:
            continue
        rest = _MORE.sub("", found["named"])
        names: list[str] = []
        by_length = sorted(set(required), key=len, reverse=True)
        while rest:
            text = next((t for t in by_length if rest.startswith(t) and rest[len(t) :][:2] in ("", ", ")), None)
            if text is None:
                break
            names.append(text)
            rest = rest[len(text) + 2 :]
        return names
    return []


def names_drop(named: list[str], dropped: str) -> bool:
    """Whether one of the named facts is the dropped one (as written in the span; a
    drop recorded with its words, "3 checked bags", is named by its quantity; an amount
    recorded with its sign, "$288", is named by its number, "288", as the span's JSON
    gives it; a drop recorded in another spelling than the warning's, "May 23", is named
    by the same value, "2024-05-23", and a label in the singular by the plural)."""
    wanted = dropped.casefold()
    for text in named:
        facts = [fact for fact in find_facts(text) if fact.text == text]
        if re.fullmatch(r"[a-z]+(?:[ _-][a-z]+)*", text):
            facts = [Fact("label", text)]  # a label or a choice: "change of plans" for "change of plan"
        if facts and not missing_facts(facts, dropped):
            return True  # the same value in another spelling ("2024-05-23" for "May 23")
    for text in (t.casefold() for t in named):
        if text == wanted or re.search(rf"(?<![\w$.]){re.escape(text)}(?![\w.])", wanted):
            return True
        if _bare_amount(text) is not None and _bare_amount(text) == _bare_amount(wanted):
            return True
    return False


def _bare_amount(text: str) -> str | None:
    """``text``'s number when it is an amount alone ("$1,204", "-54.2", "288")."""
    found = re.fullmatch(r"-?\$?-?(\d[\d,]*(?:\.\d+)?)", text)
    return found[1].replace(",", "") if found else None


def _run(server: LLMServer, pair: Pair, path: Path, *options: str) -> tuple[subprocess.CompletedProcess[str], list]:
    server.reset()
    server.default = Reply.ok(pair.summary)
    env = dict(os.environ, OPENAI_API_KEY="sk-bench-fact-pairs", NO_COLOR="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    command = ["ctxmgr", "summarize", str(path), *OPTIONS, "--keep-recent", str(pair.keep_recent)]
    command += ["--base-url", server.openai_url, *options]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    return result, list(server.requests)


def _same_request(pair: Pair, sent: Any) -> list[str]:
    stored = pair.request
    problems = []
    if sent.instructions != stored["instructions"]:
        problems.append("instructions differ from the stored request")
    if normalise(sent.input_text) != normalise(stored["input"]):
        problems.append("input differs from the stored request")
    if sent.max_tokens != stored["max_tokens"]:
        problems.append(f"max_tokens {sent.max_tokens} != {stored['max_tokens']}")
    return problems


def run_pair(server: LLMServer, pair: Pair, line: str, tmp: Path) -> Outcome:
    """Both CLI runs of ``pair`` (its conversation is ``line`` of the data set)."""
    path = tmp / f"{pair.key}.jsonl"
    path.write_text(line + "\n")
    outcome = Outcome(pair)
    plain, requests = _run(server, pair, path, "--json", "-o", os.devnull)
    if plain.returncode != 0 or len(requests) != 1:
        outcome.problems.append(f"plain run: exit {plain.returncode}, {len(requests)} requests: {plain.stderr[-300:]}")
        return outcome
    outcome.problems += _same_request(pair, requests[0])
    (summary,) = json.loads(plain.stdout)["files"][0]["summaries"]
    outcome.facts = summary["facts"]
    outcome.alarms = [Alarm(f["text"], f["kind"], bool(f["required"])) for f in summary.get("missing_facts", [])]
    outcome.warnings = [line for line in plain.stderr.splitlines() if "facts of the summarized messages" in line]
    strict, requests = _run(server, pair, path, "--require-facts", "-o", os.devnull)
    outcome.exit_code = strict.returncode
    if strict.returncode not in (0, 3) or not requests:
        outcome.problems.append(f"--require-facts run: exit {strict.returncode}: {strict.stderr[-300:]}")
    else:
        outcome.problems += _same_request(pair, requests[0])
        if len(requests) != (2 if strict.returncode == 3 else 1):
            outcome.problems.append(f"--require-facts run: {len(requests)} requests, exit {strict.returncode}")
    return outcome


def run_all(pairs: list[Pair], data: Path = DATA, jobs: int = 1) -> list[Outcome]:
    """Every pair through the CLI; ``jobs`` at once, each with a loopback server of its own."""
    lines = data.read_text().splitlines()

    def run(share: list[Pair]) -> list[Outcome]:
        with LLMServer() as server, tempfile.TemporaryDirectory() as tmp:
            return [run_pair(server, pair, lines[pair.request["line"] - 1], Path(tmp)) for pair in share]

    shares = [pairs[i::jobs] for i in range(max(1, jobs))]
    with ThreadPoolExecutor(len(shares)) as pool:
        done = {outcome.pair.key: outcome for share in pool.map(run, shares) for outcome in share}
    return [done[pair.key] for pair in pairs]


def save_outcomes(path: Path, outcomes: list[Outcome]) -> None:
    rows = [
        {"pair": o.pair.key, "facts": o.facts, "exit": o.exit_code, "warnings": o.warnings,
         "alarms": [a.__dict__ for a in o.alarms], "problems": o.problems}
        for o in outcomes
    ]  # fmt: skip
    path.write_text(json.dumps(rows, indent=1))


def load_outcomes(path: Path, pairs: list[Pair]) -> list[Outcome]:
    by_key = {pair.key: pair for pair in pairs}
    outcomes = []
    for row in json.loads(path.read_text()):
        if row["pair"] in by_key:
            alarms = [Alarm(**alarm) for alarm in row["alarms"]]
            outcomes.append(
                Outcome(by_key[row["pair"]], row["facts"], alarms, row["warnings"], row["exit"], row["problems"])
            )
    return outcomes


# -- judgements and figures ---------------------------------------------------------------


def verdict(judgements: dict[str, dict[str, Any]], pair: Pair, text: str) -> str | None:
    """The hand judgement of an alarm: the pair's own first, then its conversation's."""
    for key in (pair.key, pair.name):
        entry = judgements.get(key, {}).get(text)
        if entry is not None:
            return str(entry["verdict"])
    return None


@dataclass
class Figures:
    """The benchmark's figures over some outcomes."""

    required: Counter[str] = field(default_factory=Counter)
    optional: Counter[str] = field(default_factory=Counter)
    unjudged: list[tuple[str, str]] = field(default_factory=list)
    honest: int = 0
    honest_failing: list[str] = field(default_factory=list)
    lossy: int = 0
    caught: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    judged_drops: int = 0  # drops judged by hand, required or not
    required_caught: list[str] = field(default_factory=list)
    required_missed: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        total = sum(self.required.values())
        return self.required["lost"] / total if total else 1.0


def figures(outcomes: list[Outcome], judgements: dict[str, dict[str, Any]]) -> Figures:
    result = Figures()
    for outcome in outcomes:
        pair = outcome.pair
        for alarm in outcome.alarms:
            judged = verdict(judgements, pair, alarm.text)
            if judged is None:
                result.unjudged.append((pair.key, alarm.text))
                judged = "unjudged"
            (result.required if alarm.required else result.optional)[judged] += 1
        if pair.kind == "honest":
            result.honest += 1
            if outcome.fails:
                result.honest_failing.append(pair.name)
        else:
            result.lossy += 1
            caught = outcome.fails and pair.drop is not None and names_drop(outcome.named, pair.drop["dropped"])
            (result.caught if caught else result.missed).append(pair.name)
            if pair.drop_required is not None:
                result.judged_drops += 1
                if pair.drop_required:
                    (result.required_caught if caught else result.required_missed).append(pair.name)
    return result


def missed_targets(result: Figures) -> list[str]:
    missed = []
    if len(result.honest_failing) > math.floor(result.honest * HONEST_FAIL_SHARE + 1e-9) and result.honest:
        missed.append(f"honest summaries failing --require-facts: {len(result.honest_failing)} of {result.honest}")
    if result.judged_drops == result.lossy and result.lossy:
        # The target counts the drops of a required fact, each drop judged by hand.
        caught, drops = len(result.required_caught), len(result.required_caught) + len(result.required_missed)
        if caught < math.ceil(drops * DROPS_CAUGHT_SHARE - 1e-9):
            missed.append(f"drops of a required fact caught: {caught} of {drops}")
    elif len(result.caught) < math.ceil(result.lossy * DROPS_CAUGHT_SHARE - 1e-9):
        missed.append(f"drops caught: {len(result.caught)} of {result.lossy}")
    if result.precision < PRECISION:
        missed.append(f"precision of the required alarms: {result.precision:.0%}")
    return missed


def _counts(counter: Counter[str]) -> str:
    parts = [f"{counter[v]} {v}" for v in (*VERDICTS, "unjudged") if counter[v]]
    return f"{sum(counter.values())} ({', '.join(parts) or 'none'})"


def print_figures(label: str, result: Figures) -> None:
    print(f"\n{label}")
    lost = result.required["lost"]
    print(f"  required alarms:  {_counts(result.required)}; precision {lost} of {sum(result.required.values())}"
          f" = {result.precision:.1%}")  # fmt: skip
    print(f"  optional alarms:  {_counts(result.optional)}")
    failing = ", ".join(result.honest_failing)
    print(f"  honest summaries failing --require-facts: {len(result.honest_failing)} of {result.honest}"
          + (f" ({failing})" if failing else ""))  # fmt: skip
    missed = ", ".join(result.missed)
    print(f"  drops caught (fail --require-facts, named among the first {SHOWN}): {len(result.caught)} of "
          f"{result.lossy}" + (f" (missed: {missed})" if missed else ""))  # fmt: skip
    if result.judged_drops:
        drops = len(result.required_caught) + len(result.required_missed)
        missed = ", ".join(result.required_missed)
        print(f"  drops of a required fact (drops.json: {drops} of the {result.judged_drops} judged) caught:"
              f" {len(result.required_caught)} of {drops}" + (f" (missed: {missed})" if missed else ""))  # fmt: skip


def print_pairs(outcomes: list[Outcome], judgements: dict[str, dict[str, Any]]) -> None:
    for outcome in outcomes:
        pair = outcome.pair
        required = [a for a in outcome.alarms if a.required]
        optional = len(outcome.alarms) - len(required)
        marks = ", ".join(f"{a.text} [{verdict(judgements, pair, a.text) or '?'}]" for a in required)
        status = "FAILS" if outcome.fails else "passes"
        drop = ""
        if pair.drop is not None:
            named = "named" if names_drop(outcome.named, pair.drop["dropped"]) else "NOT named"
            drop = f"; drop {pair.drop['dropped']!r} {named}"
        print(f"{pair.key:13} {outcome.facts:3} facts, {status:6} {len(required)} required: {marks or '-'};"
              f" {optional} optional{drop}")  # fmt: skip
        for problem in outcome.problems:
            print(f"    PROBLEM: {problem}")


def _kept(line: str, keep_recent: int = KEEP_RECENT) -> str:
    record = json.loads(line)
    messages = [m for m in record.get("messages", []) if m.get("role") != "system"]
    return json.dumps(messages[-keep_recent:], ensure_ascii=False)


def _source(span: str, at: int) -> str:
    """What says the text at ``at``: ``USER``, ``ASSISTANT``, ``call NAME`` or ``result NAME``."""
    start = span.rfind("\n", 0, at) + 1
    head = span[start : start + 80]
    if head.startswith("TOOL RESULT "):
        return "result " + head.split()[2]
    call = span.rfind("[calls tool ", start, at)
    if call >= 0 and span.find(") id=", call, at) < 0:
        return "call " + span[call + 12 : span.index("(", call)]
    return head.split(":")[0]


def print_unjudged(outcomes: list[Outcome], judgements: dict[str, dict[str, Any]], data: Path = DATA) -> None:
    """Every unjudged alarm, with the lines of the span that say it and whether the kept
    messages hold it; the summary and the kept messages once a conversation."""
    lines = data.read_text().splitlines()
    shown: set[str] = set()
    for outcome in outcomes:
        pair = outcome.pair
        todo = [a for a in outcome.alarms if verdict(judgements, pair, a.text) is None]
        if not todo:
            continue
        kept = _kept(lines[pair.request["line"] - 1], pair.keep_recent)
        print(f"\n=== {pair.key}  (warning names: {', '.join(outcome.named) or '-'})")
        if pair.name not in shown:
            shown.add(pair.name)
            print(f"SUMMARY: {pair.summary.strip()}\nKEPT: {kept[:1500]}")
        span = pair.request["input"]
        for alarm in todo:
            places = []
            for found in list(re.finditer(re.escape(alarm.text), span))[:4]:
                near = span[max(0, found.start() - 60) : found.end() + 30].replace("\n", " ")
                places.append(f"{_source(span, found.start())}: {near!r}")
            in_kept = "IN KEPT" if alarm.text in kept else ""
            print(f"- {alarm.text!r} ({alarm.kind}, {'REQUIRED' if alarm.required else 'optional'}) {in_kept}")
            for place in places:
                print(f"    {place}")


def simulated() -> str:
    """Part (b) of ``bench/facts_recall.py``, the simulated summaries, in one line."""
    sys.path.insert(0, str(REPO / "bench"))
    import contextlib
    import io

    import facts_recall

    with contextlib.redirect_stdout(io.StringIO()):
        totals = facts_recall.check_quality(facts_recall.spans(facts_recall.DEFAULT_DATA))
    dropped, caught, reported, false = totals
    return (
        f"simulated summaries (bench/facts_recall.py): {caught} of {dropped} dropped facts reported "
        f"({caught / dropped:.1%}); {false} of {reported} reported facts false alarms ({false / reported:.1%})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="Exit 1 on an unjudged alarm or a missed target.")
    parser.add_argument("--unjudged", action="store_true", help="Print every unjudged alarm with its context.")
    parser.add_argument("--only", action="append", default=[], help="Run these conversations only (tau-000).")
    parser.add_argument("--no-simulated", action="store_true", help="Skip the simulated benchmark.")
    parser.add_argument("--jobs", type=int, default=1, help="Pairs run at once (default 1).")
    parser.add_argument("--save", type=Path, help="Write the per-pair outcomes to this JSON file.")
    parser.add_argument("--load", type=Path, help="Read the outcomes --save wrote instead of running the CLI.")
    parser.add_argument(
        "--pairs",
        type=Path,
        default=PAIRS,
        help="The folder of pairs and judgements (default bench/fact_pairs; held-out, test-set and test-set-2 to "
        "-4 in it: more development sets; test-set-5: the set no rule was written against).",
    )
    args = parser.parse_args()
    pairs = [p for p in load_pairs(args.pairs) if not args.only or p.name in args.only]
    judged = args.pairs / "judgements.json"
    judgements = json.loads(judged.read_text()) if judged.exists() else {}
    outcomes = load_outcomes(args.load, pairs) if args.load else run_all(pairs, jobs=args.jobs)
    print_pairs(outcomes, judgements)
    if args.unjudged:
        print_unjudged(outcomes, judgements)
    names = sorted({p.name for p in pairs})
    whole = figures(outcomes, judgements)
    print_figures(f"all {len(names)} conversations, {len(outcomes)} pairs", whole)
    for label, part in (("first 20", names[:20]), ("last 20", names[20:40])):
        if len(names) > 20:
            print_figures(f"{label} conversations", figures([o for o in outcomes if o.pair.name in part], judgements))
    if args.save:
        save_outcomes(args.save, outcomes)
    if not args.no_simulated:
        print(f"\n{simulated()}")
    problems = [p for o in outcomes for p in o.problems]
    failed = missed_targets(whole)
    if whole.unjudged:
        print(f"\n{len(whole.unjudged)} alarms have no judgement (--unjudged lists them)")
    for target in failed:
        print(f"target missed: {target}")
    if args.check and (failed or whole.unjudged or problems):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
