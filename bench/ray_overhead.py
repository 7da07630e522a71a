"""What ``--engine ray`` costs over the one-machine path, on a real dataset.

Run from the repository root (needs ``pip install -e '.[ray]'``)::

    python bench/ray_overhead.py DATA.jsonl            # e.g. the 200 tau-bench airline conversations
    python bench/ray_overhead.py DATA.jsonl --pairs 3 --copies 10

Two measures, each as the ratios of paired runs that alternate (one-machine, Ray,
one-machine, Ray...), so a machine busy with something else slows both sides of a pair:

1. Start-up, what a run without a cluster pays: ``ctxmgr trim DATA -o OUT`` as a child
   process, ``--engine ray`` (which starts a local Ray and stops it) against
   ``--jobs 1``. Wall time of the whole command.
2. Throughput per core, with Ray already running (as on a cluster): in this process,
   ``DATA`` repeated ``--copies`` times, trimmed by ``ctxmgr.files.compact_file`` with
   one process against ``ctxmgr._engines.ray.compact_on_ray`` on a local Ray of
   ``--cpus`` CPUs. The ratio is one-process time over Ray time times the CPUs: 1.0
   would be perfect scaling, 0.5 means Ray's CPUs each do half of what one process does.

Every run's output is checked byte for byte against the one-machine path's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _command(data: Path, out: Path, *flags: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ctxmgr", "trim", str(data), "-n", "3", "-o", str(out), "--quiet", *flags],
        capture_output=True,
        env=env,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"ctxmgr {' '.join(flags)} failed: {done.stderr.decode()[-2000:]}")
    return elapsed


def start_up(data: Path, pairs: int, folder: Path) -> list[tuple[float, float]]:
    times = []
    for _ in range(pairs):
        here = _command(data, folder / "here.jsonl", "--jobs", "1")
        there = _command(data, folder / "there.jsonl", "--engine", "ray")
        if (folder / "here.jsonl").read_bytes() != (folder / "there.jsonl").read_bytes():
            raise SystemExit("the outputs differ")
        times.append((here, there))
    return times


def throughput(data: Path, pairs: int, copies: int, cpus: int, folder: Path) -> tuple[list[tuple[float, float]], int]:
    import ray

    sys.path.insert(0, str(REPO))
    from ctxmgr._engines.ray import RayOutput, compact_on_ray
    from ctxmgr.files import FileSink, Settings, compact_file
    from ctxmgr.state import MessageContextManager

    big = folder / "big.jsonl"
    content = data.read_bytes()
    big.write_bytes(content * copies)
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    manager = MessageContextManager(3)
    times = []
    try:
        compact_on_ray([str(big)], manager, Settings(), RayOutput(str(folder / "warm.jsonl")))  # workers started
        for _ in range(pairs):
            started = time.perf_counter()
            asyncio.run(compact_file(str(big), manager, FileSink(folder / "here.jsonl"), Settings(jobs=1)))
            here = time.perf_counter() - started
            started = time.perf_counter()
            compact_on_ray([str(big)], manager, Settings(), RayOutput(str(folder / "there.jsonl")))
            there = time.perf_counter() - started
            if (folder / "here.jsonl").read_bytes() != (folder / "there.jsonl").read_bytes():
                raise SystemExit("the outputs differ")
            times.append((here, there))
    finally:
        ray.shutdown()
    return times, len(content) * copies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="a JSONL dataset (one conversation a line)")
    parser.add_argument("--pairs", type=int, default=5, help="paired runs of each measure (default 5)")
    parser.add_argument("--copies", type=int, default=10, help="copies of DATA for the throughput (default 10)")
    parser.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        startup = start_up(args.data, args.pairs, folder)
        ratios = [there / here for here, there in startup]
        print(f"start-up: {args.data} ({args.data.stat().st_size / 1e6:.1f} MB), {args.pairs} pairs")
        print(f"  one machine (--jobs 1): median {statistics.median(h for h, _ in startup):.2f} s")
        print(f"  --engine ray (local Ray started): median {statistics.median(t for _, t in startup):.2f} s")
        spread = f"range {min(ratios):.1f}-{max(ratios):.1f}"
        print(f"  ratio ray / one machine: median {statistics.median(ratios):.1f}x ({spread})")
        paired, size = throughput(args.data, args.pairs, args.copies, args.cpus, folder)
        per_core = [here / (there * args.cpus) for here, there in paired]
        speed = [here / there for here, there in paired]
        print(f"throughput: {size / 1e6:.1f} MB, Ray running with {args.cpus} CPUs, {args.pairs} pairs")
        print(f"  one process: median {statistics.median(h for h, _ in paired):.2f} s")
        print(f"  ray: median {statistics.median(t for _, t in paired):.2f} s")
        print(f"  speed-up ray / one process: median {statistics.median(speed):.2f}x")
        spread = f"range {min(per_core):.2f}-{max(per_core):.2f}"
        print(f"  per core (1.0 = perfect): median {statistics.median(per_core):.2f} ({spread})")


if __name__ == "__main__":
    main()
