"""Do the facts of a summarized span reach the model? Measured on real conversations.

For each conversation of a dataset (default: the 200 real tau-bench airline
conversations, ``bench/tau/tau-airline-gpt4o.jsonl``) and each ``keep_recent``
from 1 to 8, a summary is forced (``max_messages=0``) through the real OpenAI SDK
against the project's loopback server (``tests/llm_server.py``), and every request the
server received for that span is read back. The facts of the span (``ctxmgr.facts``:
codes, ids, emails, amounts, dates, quantities) are counted as reaching the model when
their spelling occurs in one of those requests.

Two budgets are measured: the default for ``gpt-4o-mini`` at OpenAI (75,000 tokens: a
span fits one request) and the default for a server given by ``--base-url`` (2,000
tokens: most spans are split, summarized in parts and combined).

    python bench/span_facts.py [DATASET] [--limit 50]   (about 3 minutes for all 200)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from llm_server import LLMServer  # noqa: E402

from ctxmgr.facts import find_facts  # noqa: E402
from ctxmgr.files import read_conversations  # noqa: E402
from ctxmgr.providers import ProviderOptions, get_summarizer  # noqa: E402
from ctxmgr.state import SummaryContextManager  # noqa: E402
from ctxmgr.state._report import collect_summary_reports  # noqa: E402
from ctxmgr.state._transcript import render_transcript  # noqa: E402


def measure(path: Path, limit: int | None, budget: int | None) -> dict[str, Any]:
    """Facts of every span, and how many reached a request, per kind."""
    found: Counter[str] = Counter()
    reached: Counter[str] = Counter()
    calls = spans = split = 0
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-local")
    with LLMServer() as server:
        summarizer = get_summarizer("gpt-4o-mini", options=ProviderOptions(base_url=server.openai_url))
        conversations = [c for _, c in read_conversations(str(path))][:limit]
        for keep_recent in range(1, 9):
            manager: SummaryContextManager[Any] = SummaryContextManager(
                "gpt-4o-mini",
                max_messages=0,
                keep_recent=keep_recent,
                summarizer=summarizer,
                max_input_tokens=budget,
            )
            for conversation in conversations:
                state = conversation.state.model_copy(update={"context": list(conversation.state.context)})
                plan = manager.prepare(state.model_copy(update={"context": list(state.context)}))
                if plan is None:
                    continue
                transcript = render_transcript(plan[0])
                facts = find_facts(transcript.text, ignore=transcript.call_ids)
                server.reset()
                with collect_summary_reports() as reports:
                    manager.trim_context(state)
                sent = "\n".join(request.input_text or "" for request in server.requests)
                spans += 1
                calls += len(server.requests)
                split += any(report.parts > 1 for report in reports)
                for fact in facts:
                    found[fact.kind] += 1
                    reached[fact.kind] += fact.text in sent
    return {"found": found, "reached": reached, "calls": calls, "spans": spans, "split": split}


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("dataset", nargs="?", default=str(REPO / "bench/tau/tau-airline-gpt4o.jsonl"))
    parser.add_argument("--limit", type=int, default=None, help="Conversations to use (default: all).")
    args = parser.parse_args()
    for label, budget in (("75,000 tokens (gpt-4o-mini at OpenAI)", 75_000), ("2,000 tokens (--base-url)", 2_000)):
        started = time.perf_counter()
        result = measure(Path(args.dataset), args.limit, budget)
        found, reached = result["found"], result["reached"]
        print(f"\nbudget {label}: {result['spans']} spans, {result['split']} split, {result['calls']} calls")
        for kind in sorted(found):
            share = _share(reached[kind], found[kind])
            print(f"  {kind:10} {reached[kind]:6} of {found[kind]:6} reach a request ({share})")
        total_found, total_reached = sum(found.values()), sum(reached.values())
        print(f"  {'all':10} {total_reached:6} of {total_found:6} ({_share(total_reached, total_found)})")
        print(f"  ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
