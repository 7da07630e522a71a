"""The compaction options end to end through the command line, on real agent conversations
in every format: what issue-level acceptance asks of ``trim``, measured and checked.

Run from the repository root (about a minute for the 200 conversations)::

    python bench/compaction_cli.py [DATA] [--lines 200]

The first ``--lines`` conversations of ``DATA`` (the tau-bench airline trajectories by
default) are converted with ``ctxmgr convert`` to each format; each dataset is trimmed in
place (``trim -i --json``, a backup beside it) with each policy, then:

* ``over``: lines above the budget (``stats --json``, one file a line) that were not warned
  about (the rules, last request and pins alone over it): must be 0;
* ``warned``: lines kept over the budget with the warning;
* ``pairing``: lines where ``validate`` finds an orphaned call or result: must be 0;
* ``new``: lines where ``validate --for FORMAT`` (the shared rules for LangChain and native)
  finds a kind of problem the input line did not have: must be 0;
* ``restore``: ``ctxmgr restore`` gives the input back byte for byte: must be ``exact``.

Exit status 1 when a check fails.

With ``--speed``, the CPU each option costs instead: the conversions are repeated to
about ``--megabytes`` (100) per format, and ``trim --max-tokens 2000``,
``trim --max-tool-output 200`` and ``trim --clear-tool-results --keep-tool-results 2``
(``--jobs 1``) each run in turn with ``trim -n 2 --jobs 1``
on the same file, ``--pairs`` times (5); the median of the pairs' CPU ratios is printed
(the issue's bound: 1.5), for each of ``--sets`` sets (1), then each option's spread over
the sets. Bytecode is cached, as for an installed package (``PYTHONDONTWRITEBYTECODE``
is unset for the runs timed, as ``bench/run.py`` does)::

    python bench/compaction_cli.py --speed [--megabytes 100] [--pairs 5] [--sets 1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

FORMATS = ["openai-chat", "openai-responses", "anthropic", "gemini", "langchain", "native"]
PROVIDERS = {"openai-chat", "openai-responses", "anthropic", "gemini"}
PAIRING = {"orphan-result", "missing-result", "tool-first"}
POLICIES = {
    "--max-tokens 2000": ["--max-tokens", "2000"],
    "--clear-tool-results --keep-tool-results 2": ["--clear-tool-results", "--keep-tool-results", "2"],
    "--max-tool-output 200": ["--max-tool-output", "200"],
    "all three": [
        "--max-tokens", "2000", "--clear-tool-results", "--keep-tool-results", "2", "--max-tool-output", "200",
    ],
    "--max-tokens 1700 --start-on user --pin-match baggage": [
        "--max-tokens", "1700", "--start-on", "user", "--pin-match", "baggage",
    ],
}  # fmt: skip
FIX = {"anthropic": ["--fix-call-ids"]}
"""Options a conversion needs: Anthropic refuses the tool-call ids tau-bench reuses."""
OVER = re.compile(r"^line (\d+): the messages never cut .* over the budget")


def ctxmgr(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ctxmgr", *args], capture_output=True, text=True, check=False)


def report(*args: str) -> dict[str, Any]:
    done = ctxmgr(*args, "--json")
    if done.returncode not in (0, 1):
        raise SystemExit(f"ctxmgr {' '.join(args)}: exit {done.returncode}: {done.stderr}")
    value: dict[str, Any] = json.loads(done.stdout)
    return value


def tokens_per_line(path: Path, fmt: str, folder: Path) -> list[int]:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for number, line in enumerate(path.read_bytes().splitlines(keepends=True), 1):
        (folder / f"{number:04}.jsonl").write_bytes(line)
    files = sorted(report("stats", str(folder), "--from", fmt)["files"], key=lambda f: f["path"])
    return [f["estimated_tokens"] for f in files]


def problems(path: Path, fmt: str) -> dict[int, set[str]]:
    target = ["--for", fmt] if fmt in PROVIDERS else []
    found: dict[int, set[str]] = {}
    for entry in report("validate", str(path), *target)["files"]:
        for problem in entry["problems"]:
            found.setdefault(problem["line"], set()).add(problem["code"])
    return found


SPEED = {
    "--max-tokens 2000": ["--max-tokens", "2000"],
    "--max-tool-output 200": ["--max-tool-output", "200"],
    "--clear-tool-results": ["--clear-tool-results", "--keep-tool-results", "2"],
}


TIMED_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
"""The timed runs' environment: bytecode cached (with ``PYTHONDONTWRITEBYTECODE`` set, as
some sandboxes set it, every run would compile ctxmgr and time the compiler)."""


def cpu_seconds(*args: str) -> float:
    """The CPU time (user and system) of one ``ctxmgr`` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "ctxmgr", *args], capture_output=True, check=False, env=TIMED_ENV)
    if done.returncode:
        raise SystemExit(f"ctxmgr {' '.join(args)}: exit {done.returncode}: {done.stderr.decode()}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def speed(source: Path, folder: Path, megabytes: int, pairs: int, sets: int) -> None:
    """Paired CPU ratios of each option of :data:`SPEED` against ``trim -n 2``, per format,
    in ``sets`` sets (each format's files made once), then each one's spread over the sets."""
    paths = {}
    for fmt in FORMATS:
        converted = folder / f"{fmt}.jsonl"
        done = ctxmgr("convert", str(source), "--to", fmt, *FIX.get(fmt, ()), "-o", str(converted))
        if done.returncode:
            raise SystemExit(done.stderr)
        data = converted.read_bytes()
        paths[fmt] = folder / f"{fmt}-big.jsonl"
        paths[fmt].write_bytes(data * max(1, round(megabytes * 1_000_000 / len(data))))
    out = str(folder / "out.jsonl")
    for options in [["-n", "2"], *SPEED.values()]:  # not timed: the bytecode each run imports, written once
        cpu_seconds("trim", str(folder / f"{FORMATS[0]}.jsonl"), *options, "--jobs", "1", "-q", "-o", out)
    medians: dict[tuple[str, str], list[float]] = {}
    for number in range(1, sets + 1):
        for fmt, path in paths.items():
            for policy, options in SPEED.items():
                ratios, plain, compacted = [], [], []
                for _ in range(pairs):  # in turn, so that both see the same machine
                    plain.append(cpu_seconds("trim", str(path), "-n", "2", "--jobs", "1", "-q", "-o", out))
                    compacted.append(cpu_seconds("trim", str(path), *options, "--jobs", "1", "-q", "-o", out))
                    ratios.append(compacted[-1] / plain[-1])
                medians.setdefault((fmt, policy), []).append(statistics.median(ratios))
                print(
                    f"{f'set {number}: ' if sets > 1 else ''}{fmt:17} {policy:22} "
                    f"{statistics.median(ratios):.2f}x the CPU of trim -n 2 "
                    f"({statistics.median(compacted):.2f} s against {statistics.median(plain):.2f} s; "
                    f"{path.stat().st_size / 1e6:.0f} MB; pairs {', '.join(f'{r:.2f}' for r in ratios)})",
                    flush=True,
                )
    if sets > 1:
        for (fmt, policy), found in medians.items():
            print(f"{fmt:17} {policy:22} sets' medians {', '.join(f'{r:.2f}' for r in found)}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("data", nargs="?", default="bench/tau/tau-airline-gpt4o.jsonl")
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--speed", action="store_true", help="measure CPU against trim -n 2 instead")
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--sets", type=int, default=1, help="with --speed: sets of --pairs pairs")
    args = parser.parse_args()
    if args.speed:
        with tempfile.TemporaryDirectory() as name:
            source = Path(name) / "source.jsonl"
            source.write_bytes(b"".join(Path(args.data).read_bytes().splitlines(keepends=True)[: args.lines]))
            speed(source, Path(name), args.megabytes, args.pairs, args.sets)
        return 0
    failed = False
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        source = folder / "source.jsonl"
        source.write_bytes(b"".join(Path(args.data).read_bytes().splitlines(keepends=True)[: args.lines]))
        for fmt in FORMATS:
            original = folder / f"{fmt}.jsonl"
            done = ctxmgr("convert", str(source), "--to", fmt, *FIX.get(fmt, ()), "-o", str(original))
            if done.returncode:
                raise SystemExit(done.stderr)
            before = problems(original, fmt)
            tokens_before = tokens_per_line(original, fmt, folder / "lines")
            print(
                f"{fmt}: {len(tokens_before)} conversations, {sum(tokens_before):,} tokens, "
                f"validate finds {', '.join(sorted(set().union(*before.values()))) or 'nothing'} "
                f"on {len(before)} lines",
                flush=True,
            )
            for policy, options in POLICIES.items():
                path = folder / "work.jsonl"
                shutil.copyfile(original, path)
                entry = report("trim", str(path), "-i", *options)["files"][0]
                tokens = tokens_per_line(path, fmt, folder / "lines")
                warned = {int(m[1]) for m in map(OVER.match, entry["warnings"]) if m}
                budget = int(options[options.index("--max-tokens") + 1]) if "--max-tokens" in options else None
                over = [n for n, t in enumerate(tokens, 1) if budget is not None and t > budget and n not in warned]
                after = problems(path, fmt)
                pairing = [n for n, codes in after.items() if codes & PAIRING]
                new = [n for n, codes in after.items() if not codes <= before.get(n, set())]
                restored = ctxmgr("restore", str(path)).returncode == 0 and path.read_bytes() == original.read_bytes()
                failed |= bool(over or pairing or new) or not restored
                print(
                    f"  {policy:55} tokens {sum(tokens_before):,} -> {sum(tokens):,}; "
                    f"dropped {entry['messages_dropped']:,}, cleared {entry['cleared_results']:,}, "
                    f"truncated {entry['truncated_outputs']:,}, {entry['tokens_removed']:,} tokens removed; "
                    f"over {len(over)}, warned {len(warned)}, pairing {len(pairing)}, new {len(new)}, "
                    f"restore {'exact' if restored else 'DIFFERENT'}",
                    flush=True,
                )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
