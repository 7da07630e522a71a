"""Which facts of a summarized span are required (``ctxmgr._fact_weight``), on real data.

For the first conversations of a dataset (default: the 200 real tau-bench airline
conversations, ``bench/tau/tau-airline-gpt4o.jsonl``), the span ``summarize`` would
replace at ``--keep-recent 4`` is rendered as it is sent, its facts found
(``ctxmgr.facts.find_facts``) and weighed against the kept messages; the counts of
facts and of required facts per span are printed, with the share of each kind.

This measures what the check asks of a summary, not how summaries fare: that needs
summaries written by a model and every alarm judged by hand.

    python bench/fact_weights.py [DATASET] [--limit 40] [--keep-recent 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ctxmgr._fact_weight import weigh_facts  # noqa: E402
from ctxmgr.facts import find_facts  # noqa: E402
from ctxmgr.files import read_conversations  # noqa: E402
from ctxmgr.state._transcript import render_transcript  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", nargs="?", default=str(REPO / "bench" / "tau" / "tau-airline-gpt4o.jsonl"))
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--keep-recent", type=int, default=4)
    args = parser.parse_args()
    found: list[int] = []
    required: list[int] = []
    kinds: Counter[str] = Counter()
    required_kinds: Counter[str] = Counter()
    for index, (_line, conversation) in enumerate(read_conversations(args.dataset)):
        if index >= args.limit:
            break
        rest = [m for m in conversation.state.context if m.role != "system"]
        if len(rest) <= args.keep_recent:
            continue
        old, kept = rest[: -args.keep_recent], rest[-args.keep_recent :]
        transcript = render_transcript(old)
        facts = find_facts(transcript.text, ignore=transcript.call_ids)
        weighed = weigh_facts(facts, transcript.text, render_transcript(kept).text)
        found.append(len(facts))
        required.append(len(weighed))
        kinds.update(fact.kind for fact in facts)
        required_kinds.update(fact.kind for fact in weighed)
    print(f"spans: {len(found)}")
    print(f"facts: {sum(found)} (median {statistics.median(found)} a span, up to {max(found)})")
    print(f"required: {sum(required)} (median {statistics.median(required)} a span, up to {max(required)})")
    for kind, count in kinds.most_common():
        print(f"  {kind:9} {count:5} found, {required_kinds[kind]:4} required")


if __name__ == "__main__":
    main()
