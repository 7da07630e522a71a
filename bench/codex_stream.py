"""``trim -n`` of a large Codex rollout: peak memory, and time against parsing it.

Generates a rollout as Codex writes one (``session_meta`` with base instructions, then
turns of ``turn_context``, a user item and its ``user_message`` event, encrypted
reasoning, a ``function_call``, ``token_count`` events, the call's output, the answer),
of ``--size`` bytes (2 GB by default) with one tool output line of ``--big-line`` bytes
(50 MB) in its middle, then runs, in turn and ``--runs`` times:

* the baseline: a fresh interpreter that reads the file line by line and parses each line
  with ``orjson.loads`` (what any reader of the file must at least do);
* the same loop reading through a 1 MB buffer (the stream reads 1 MB blocks; Python's
  default 8 kB buffer makes reading lines of kilobytes cost as much as parsing them), a
  stricter baseline;
* ``ctxmgr trim -n 10 --no-view -o OUT FILE`` (the stream of
  :mod:`ctxmgr.files._codex_stream`).

Each run is a child process whose peak resident memory comes from the operating system
(``wait4``'s ``ru_maxrss``); times are wall and CPU (user + system). The ratio is taken
run by run (each trim against the baselines run just before it) and its median quoted,
with the spread. Targets: trim's peak memory under 250 MB, its time at most twice the
baseline's::

    python bench/codex_stream.py                      # 2 GB, 3 runs of each
    python bench/codex_stream.py --size 200e6 --runs 5
    python bench/codex_stream.py --keep /tmp/rollout.jsonl   # reuse (or keep) the file
    python bench/codex_stream.py --max-tokens 20000          # trim --max-tokens instead
    python bench/codex_stream.py --stats                     # ctxmgr stats instead
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

BASELINE = """
import sys, orjson
with open(sys.argv[1], "rb") as handle:
    for line in handle:
        orjson.loads(line)
"""

BUFFERED = BASELINE.replace('"rb")', '"rb", buffering=1 << 20)')

MB = 1_000_000


def generate(path: Path, size: int, big_line: int) -> int:
    """Write a rollout of about ``size`` bytes with one output of ``big_line`` bytes."""
    stamp = "2026-02-23T11:40:29.279Z"
    text = "all work and no play makes a dull rollout " * 400  # 16.8 kB of tool output
    with path.open("wb", buffering=8 << 20) as out:

        def record(kind: str, payload: dict[str, object]) -> None:
            out.write(orjson.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + b"\n")

        meta = {"id": "019c8a4c", "cwd": "/work", "originator": "codex_cli_rs", "cli_version": "0.104.0"}
        record("session_meta", {**meta, "base_instructions": {"text": "You are Codex. " * 800}})
        developer = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Rules."}]}
        record("response_item", developer)
        turn = 0
        big_done = False
        while out.tell() < size:
            turn += 1
            question = f"question {turn}: what does file {turn} hold?"
            record("turn_context", {"turn_id": f"t{turn}", "cwd": "/work", "model": "gpt-5.3-codex"})
            record(
                "response_item",
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": question}]},
            )
            record("event_msg", {"type": "user_message", "message": question, "images": []})
            reasoning = {"type": "reasoning", "summary": [], "content": None, "encrypted_content": "gAAAA" * 300}
            record("response_item", reasoning)
            call = {
                "type": "function_call",
                "name": "exec_command",
                "arguments": '{"cmd":"cat f"}',
                "call_id": f"c{turn}",
            }
            record("response_item", call)
            record("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": turn}}})
            output = text
            if not big_done and out.tell() >= size // 2:
                output, big_done = "x" * big_line, True
            record("response_item", {"type": "function_call_output", "call_id": f"c{turn}", "output": output})
            answer = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": f"file {turn}"}],
            }
            record("response_item", answer)
            record("event_msg", {"type": "task_complete"})
        return out.tell()


def run(arguments: list[str]) -> tuple[float, float, int]:
    """``(wall seconds, CPU seconds, peak RSS bytes)`` of a child process."""
    start = time.perf_counter()
    process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read() if process.stderr else b""
    if process.returncode != 0:
        raise SystemExit(f"{arguments[:4]} failed ({process.returncode}): {stderr.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", type=float, default=2e9, help="rollout size in bytes (default 2e9)")
    parser.add_argument("--big-line", type=float, default=50e6, help="the big output line's bytes (default 50e6)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--keep", type=Path, help="the rollout's path: reused if present, else written and kept")
    parser.add_argument("--max-tokens", type=int, help="trim with --max-tokens N instead of -n 10")
    parser.add_argument("--stats", action="store_true", help="run ctxmgr stats on the file instead of trim")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = options.keep or Path(folder) / "rollout.jsonl"
        if not path.exists():
            started = time.perf_counter()
            written = generate(path, int(options.size), int(options.big_line))
            print(f"generated {written / MB:,.0f} MB in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        out = Path(folder) / "out.jsonl"
        rule = ["-n", "10"] if options.max_tokens is None else ["--max-tokens", str(options.max_tokens)]
        trim = [sys.executable, "-m", "ctxmgr", "trim", *rule, "--no-view", "-o", str(out), str(path)]
        if options.stats:
            rule, trim = ["(stats)"], [sys.executable, "-m", "ctxmgr", "stats", str(path)]
            out.write_bytes(b"")
        baseline = [sys.executable, "-c", BASELINE, str(path)]
        buffered = [sys.executable, "-c", BUFFERED, str(path)]
        runs = [(run(baseline), run(buffered), run(trim)) for _ in range(options.runs)]

        def ratios(which: int, measure: int) -> list[float]:
            return [r[2][measure] / r[which][measure] for r in runs]

        figures: dict[str, Any] = {"trim": " ".join(rule)}
        figures |= {
            "size_mb": round(path.stat().st_size / MB),
            "output_kb": round(out.stat().st_size / 1000),
            "runs": options.runs,
            "baseline_wall_s": statistics.median(r[0][0] for r in runs),
            "buffered_wall_s": statistics.median(r[1][0] for r in runs),
            "trim_wall_s": statistics.median(r[2][0] for r in runs),
            "ratio_wall": statistics.median(ratios(0, 0)),
            "ratio_wall_range": [min(ratios(0, 0)), max(ratios(0, 0))],
            "ratio_cpu": statistics.median(ratios(0, 1)),
            "ratio_cpu_range": [min(ratios(0, 1)), max(ratios(0, 1))],
            "buffered_ratio_wall": statistics.median(ratios(1, 0)),
            "buffered_ratio_wall_range": [min(ratios(1, 0)), max(ratios(1, 0))],
            "buffered_ratio_cpu": statistics.median(ratios(1, 1)),
            "baseline_peak_mb": max(r[0][2] for r in runs) / MB,
            "trim_peak_mb": max(r[2][2] for r in runs) / MB,
        }
    if options.json:
        print(json.dumps(figures, indent=2))
        return
    print(
        f"{figures['size_mb']:,} MB rollout -> {figures['output_kb']:,} kB; {options.runs} runs\n"
        f"  orjson line by line: {figures['baseline_wall_s']:.2f} s, peak {figures['baseline_peak_mb']:.0f} MB\n"
        f"  the same, 1 MB buffer: {figures['buffered_wall_s']:.2f} s\n"
        f"  trim {' '.join(rule):15} {figures['trim_wall_s']:.2f} s, peak {figures['trim_peak_mb']:.0f} MB "
        f"(target < 250 MB)\n"
        f"  ratio (median of runs): wall {figures['ratio_wall']:.2f}x "
        f"[{figures['ratio_wall_range'][0]:.2f}-{figures['ratio_wall_range'][1]:.2f}], "
        f"CPU {figures['ratio_cpu']:.2f}x "
        f"[{figures['ratio_cpu_range'][0]:.2f}-{figures['ratio_cpu_range'][1]:.2f}] (target <= 2x)\n"
        f"  against the 1 MB buffer: wall {figures['buffered_ratio_wall']:.2f}x "
        f"[{figures['buffered_ratio_wall_range'][0]:.2f}-{figures['buffered_ratio_wall_range'][1]:.2f}], "
        f"CPU {figures['buffered_ratio_cpu']:.2f}x"
    )


if __name__ == "__main__":
    main()
