"""What the fact finder and the weighing say on real spans, as JSON: to compare two versions.

For every conversation of a dataset (default: the 200 real tau-bench airline
conversations) and each ``--keep-recent`` given, the span ``summarize`` would replace is
rendered as it is sent; its facts (``find_facts``), their weighing against the kept
messages (``weigh_facts``), what the kept messages and the span's first half leave
missing (``missing_facts``), and the facts of each message rendered alone are written
out, one JSON line a span. Run it under two versions of ctxmgr (the installed one is
imported) and compare the files: a change meant to be one of speed alone leaves them
identical.

    python bench/fact_snapshot.py [DATASET] [--keep-recent 1,4,8] > facts.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from ctxmgr._fact_weight import weigh_facts
from ctxmgr.facts import find_facts, missing_facts
from ctxmgr.files import read_conversations
from ctxmgr.state._transcript import render_transcript

DEFAULT = Path(__file__).resolve().parent / "tau" / "tau-airline-gpt4o.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", nargs="?", default=str(DEFAULT))
    parser.add_argument("--keep-recent", default="1,4,8")
    args = parser.parse_args()
    keeps = [int(k) for k in args.keep_recent.split(",")]
    for index, (_line, conversation) in enumerate(read_conversations(args.dataset)):
        rest = [m for m in conversation.state.context if m.role != "system"]
        for keep in keeps:
            if len(rest) <= keep:
                continue
            old, kept = rest[:-keep], rest[-keep:]
            transcript = render_transcript(old)
            span, kept_text = transcript.text, render_transcript(kept).text
            ignore = frozenset(transcript.call_ids)
            facts = find_facts(span, ignore=ignore)
            row = {
                "conversation": index,
                "keep": keep,
                "facts": [[f.kind, f.text] for f in facts],
                "weights": [[f.kind, f.text, rank] for f, rank in weigh_facts(facts, span, kept_text).items()],
                "missing_in_kept": [f.text for f in missing_facts(facts, kept_text)],
                "missing_in_half": [f.text for f in missing_facts(facts, span[: len(span) // 2])],
                "per_message": [
                    [[f.kind, f.text] for f in find_facts(render_transcript([m]).text, ignore=ignore)] for m in old
                ],
            }
            sys.stdout.buffer.write(orjson.dumps(row) + b"\n")


if __name__ == "__main__":
    main()
