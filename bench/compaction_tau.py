"""The compaction managers on real agent conversations, in every format: budgets, pairs, counts.

Run from the repository root (about half a minute for 50 conversations)::

    python bench/compaction_tau.py [DATA] [--lines 50]

For each of the first ``--lines`` conversations of ``DATA`` (the tau-bench airline
trajectories by default), converted to each format ctxmgr writes, and for each policy
(``--max-tokens 2000``; ``--clear-tool-results --keep-tool-results 2``; ``--max-tool-output
200``; all three), it applies :func:`ctxmgr.state.compact_messages`, writes the result in
the format, reads it back and counts:

* ``over``: conversations above the budget whose messages never cut (rules, last request)
  did not alone exceed it (must be 0);
* ``warned``: conversations whose never-cut messages alone exceed the budget;
* ``new_problems``: conversations where ``validate --for FORMAT`` finds a kind of problem
  on the output that it did not find on the input (must be 0);
* the summed counters of the managers' reports.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ctxmgr import formats
from ctxmgr._validate import check_messages
from ctxmgr.state import collect_compaction_reports, compact_messages
from ctxmgr.state._compaction import COUNTERS, tokens_of

FORMATS = ["openai-chat", "openai-responses", "anthropic", "gemini", "langchain", "native"]
POLICIES: dict[str, dict[str, Any]] = {
    "--max-tokens 2000": {"max_tokens": 2000},
    "--clear-tool-results --keep-tool-results 2": {"clear_tool_results": True, "keep_tool_results": 2},
    "--max-tool-output 200": {"max_tool_output": 200},
    "all three": {"clear_tool_results": True, "keep_tool_results": 2, "max_tool_output": 200, "max_tokens": 2000},
}


def problems(messages: list[Any], fmt: str) -> set[str]:
    return {p.code for p in check_messages(messages, target=None if fmt == "native" else fmt)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("data", nargs="?", default="bench/tau/tau-airline-gpt4o.jsonl")
    parser.add_argument("--lines", type=int, default=50)
    args = parser.parse_args()
    lines = Path(args.data).read_bytes().splitlines()[: args.lines]
    for fmt in FORMATS:
        inputs = []
        for number, line in enumerate(lines, 1):
            data = formats.dump(formats.load(line, source=f"line {number}"), to=fmt)
            inputs.append(data)
        before = sum(tokens_of(formats.load(d, source="in", fmt=fmt).state.context) for d in inputs)
        for name, policy in POLICIES.items():
            started = time.process_time()
            over = warned = new = 0
            counts = dict.fromkeys(COUNTERS, 0)
            for data in inputs:
                conversation = formats.load(data, source="in", fmt=fmt)
                messages = conversation.state.context
                with collect_compaction_reports() as reports:
                    conversation.state.context = compact_messages(messages, **policy)
                back = formats.load(formats.dump(conversation), source="out", fmt=fmt).state.context
                if problems(back, fmt) - problems(messages, fmt):
                    new += 1
                budget = policy.get("max_tokens")
                warned_here = any("over the budget" in w for r in reports for w in r.warnings)
                warned += warned_here
                if budget is not None and not warned_here and tokens_of(back) > budget:
                    over += 1
                for report in reports:
                    for counter in COUNTERS:
                        counts[counter] += getattr(report, counter)
            seconds = time.process_time() - started
            figures = ", ".join(f"{k} {v:,}" for k, v in counts.items())
            print(
                f"{fmt:17} {name:45} tokens {before:,}; over {over}, warned {warned}, new_problems {new}; "
                f"{figures}; {seconds:.2f} s CPU",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
