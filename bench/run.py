"""ctxmgr's benchmark: the performance targets, each measured side by side and judged.

Run from the repository root::

    pip install -r bench/requirements.txt
    python bench/run.py --check          # full run; exit 1 when a target is not met
    python bench/run.py --quick          # smaller inputs, one round
    python bench/run.py --only startup   # one part: trim, startup, scaling, sdk
    python bench/run.py --json bench/results/latest.json

Every measurement is one child process (its wall time, CPU time and peak RSS); the peers
run alternately, round after round, on the same inputs, and each target is a ratio of
medians (with the spread of the rounds). The parts:

* trim: the 200 real tau-bench conversations (``bench/tau/``) repeated to ~100 MB and
  converted to each format with ``ctxmgr convert``; ``ctxmgr trim`` (default parallelism
  and ``--jobs 1``) against ``peers/orjson_trim.py``, which does the same slice in one
  process; ``summarize --model offline`` on the OpenAI chat file against ``ctxmgr trim``
  of the same file (CPU of all processes, paired by round);
  ``trim --max-tokens 2000``, ``trim --max-tool-output 200`` and ``trim
  --clear-tool-results --keep-tool-results 2`` (one process each) against ``trim -n`` in
  one process (``ctxmgr-j1``), CPU and peak memory;
* startup: each command on a 10-message file against ``python -c pass``, and the
  modules each imports;
* scaling: one conversation of 1,000 and of 1,000,000 messages: time per MB of the work
  (ctxmgr as a library, start-up excluded) and peak memory against the orjson script;
* sdk: ``ctxmgr summarize`` against the raw openai SDK (``peers/openai_sdk.py``) at
  concurrency 1, 4 and 16 on a server with keep-alive and on a plainer one (no
  keep-alive, a small backlog, a connection reset every 50th request; ``sdk_server.py``).

Generated inputs go to ``bench/data/`` (git-ignored) and are reused.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import _data
import orjson
import startup

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DATA = BENCH / "data"
OUT = DATA / "out"
PEERS_DIR = BENCH / "peers"
PYTHON = sys.executable

# -- running one child process ------------------------------------------------------------


@dataclass
class Run:
    """One child process: wall seconds, peak RSS (MB), the work time it reported, exit code."""

    wall: float
    rss_mb: float
    work: float | None
    code: int
    stderr: str = ""
    cpu: float = 0.0
    """User + system CPU seconds of the process (less sensitive than wall to other load)."""


_TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None


def measure(cmd: list[str], *, stdout_to: Path | None = None, env: dict[str, str] | None = None) -> Run:
    """Run ``cmd`` once: wall time, and peak RSS of exactly that process.

    The RSS comes from GNU time (``/usr/bin/time -f %M``), whose own child starts small.
    ``wait4`` on a child forked from this (large) process would report at least this
    process's RSS at fork time, hiding small peers; it is only the fallback.
    """
    with tempfile.TemporaryDirectory() as folder:
        out_path, err_path, rss_path = (Path(folder) / n for n in ("out", "err", "rss"))
        argv = [_TIME, "-f", "%M", "-o", str(rss_path), *cmd] if _TIME else cmd
        with open(stdout_to or out_path, "wb") as out, open(err_path, "wb") as err:
            started = time.perf_counter()
            process = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
            tree = _TreeRss(process.pid, include_root=not _TIME)
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - started
            tree.stop()
            process.returncode = os.waitstatus_to_exitcode(status)
        rss_kb = float(usage.ru_maxrss)  # kilobytes on Linux
        if _TIME:
            numbers = [line for line in rss_path.read_text().splitlines() if line.strip().isdigit()]
            rss_kb = float(numbers[-1]) if numbers else float("nan")
        # A peer that forks workers (ctxmgr on a large dataset) uses their memory too: the
        # peak of the whole process tree, sampled, counts when it is the larger.
        rss_kb = max(rss_kb, tree.peak_kb)
        work = None
        if stdout_to is None:
            for line in out_path.read_text(errors="replace").splitlines():
                if line.startswith("{"):
                    work = json.loads(line).get("seconds")
        stderr = err_path.read_text(errors="replace")[-2000:]
        cpu = usage.ru_utime + usage.ru_stime  # GNU time waits for its child: included
        return Run(wall, rss_kb / 1024, work, process.returncode, stderr, cpu)


class _TreeRss:
    """Samples the summed RSS of a process's descendants (and of the process itself unless
    it is GNU time, whose child is the peer)."""

    def __init__(self, pid: int, *, include_root: bool, every: float = 0.005) -> None:
        self.peak_kb = 0.0
        self._pid, self._every, self._root = pid, every, include_root
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _descendants(self, pid: int) -> list[int]:
        try:
            children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except (OSError, ValueError):
            return []
        return children + [d for c in children for d in self._descendants(c)]

    @staticmethod
    def _rss_kb(pid: int) -> float:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return float(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0.0

    def _run(self) -> None:
        while not self._done.wait(self._every):
            pids = self._descendants(self._pid) + ([self._pid] if self._root else [])
            total = sum(self._rss_kb(pid) for pid in pids)
            self.peak_kb = max(self.peak_kb, total)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"})
    env.pop("CTXMGR_DEBUG", None)
    # Compiled bytecode is cached, as it is for any installed package (pip compiles it at
    # install time): with PYTHONDONTWRITEBYTECODE set (some sandboxes and containers set
    # it), every run would compile ctxmgr from source and time the compiler.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def ctxmgr_executable() -> str:
    """The console script next to this interpreter (not a pyenv/asdf shim, which adds ~50 ms)."""
    beside = Path(PYTHON).parent / "ctxmgr"
    if beside.exists():
        return str(beside)
    found = shutil.which("ctxmgr")
    if found is None:
        sys.exit("ctxmgr is not installed: pip install -e .")
    return found


# -- the peers ------------------------------------------------------------------------------

Command = tuple[list[str], Path | None]
"""(argv, file for stdout or None)."""


def _orjson(fmt: str, keep: int, source: Path, target: Path) -> Command:
    return [PYTHON, str(PEERS_DIR / "orjson_trim.py"), fmt, str(keep), str(source), str(target)], None


def _lib(fmt: str, keep: int, source: Path, target: Path) -> Command:
    return [PYTHON, str(PEERS_DIR / "ctxmgr_lib.py"), fmt, str(keep), str(source), str(target)], None


def _langchain(fmt: str, keep: int, source: Path, target: Path) -> Command:
    return [PYTHON, str(PEERS_DIR / "langchain_trim.py"), "messages", str(keep), str(source), str(target)], None


def _jq(fmt: str, keep: int, source: Path, target: Path) -> Command:
    return ["jq", "-c", "--arg", "key", "messages", "--argjson", "n", str(keep), "-f", str(PEERS_DIR / "trim.jq"),
            str(source)], target


def _cli(*extra: str) -> Callable[[str, int, Path, Path], Command]:
    def command(fmt: str, keep: int, source: Path, target: Path) -> Command:
        return [ctxmgr_executable(), "trim", str(source), "--max-messages", str(keep), "-o", str(target), "--quiet",
                "--no-view", *extra], None

    return command


def _compacting(*options: str) -> Callable[[str, int, Path, Path], Command]:
    """``trim`` with compaction options instead of the user-turn limit (one process, as
    the compaction managers run; set beside ``ctxmgr-j1``, ``trim -n`` in one process)."""
    def command(fmt: str, keep: int, source: Path, target: Path) -> Command:
        return [ctxmgr_executable(), "trim", str(source), *options, "-o", str(target), "--quiet", "--no-view",
                "--jobs", "1"], None

    return command


def _offline(fmt: str, keep: int, source: Path, target: Path) -> Command:
    return [ctxmgr_executable(), "summarize", str(source), "--model", "offline", "--max-messages", "10",
            "--no-cache", "-o", str(target), "--quiet", "--no-view"], None


@dataclass(frozen=True)
class Peer:
    name: str
    command: Callable[[str, int, Path, Path], Command]
    """(format, N, input, output) -> command."""
    check: str | None
    """How its output is compared to the baseline's: ``exact`` (same JSON values), ``roles``, or not at all."""
    only: tuple[str, ...] = ()
    """The formats it runs on (all when empty)."""


PEERS = {
    "orjson": Peer("orjson", _orjson, None),
    "ctxmgr": Peer("ctxmgr", _cli(), "exact"),
    "ctxmgr-j1": Peer("ctxmgr-j1", _cli("--jobs", "1"), "exact"),
    "ctxmgr-lib": Peer("ctxmgr-lib", _lib, "exact"),
    "offline": Peer("offline", _offline, None, ("openai-chat",)),
    "max-tokens": Peer("max-tokens", _compacting("--max-tokens", "2000"), None),
    "max-tool-output": Peer("max-tool-output", _compacting("--max-tool-output", "200"), None),
    "clear-tool-results": Peer(
        "clear-tool-results", _compacting("--clear-tool-results", "--keep-tool-results", "2"), None
    ),
    "jq": Peer("jq", _jq, "exact", ("openai-chat",)),
    "langchain": Peer("langchain", _langchain, "roles", ("openai-chat",)),
}
BASELINE = "orjson"
DATASET_PEERS = ("orjson", "ctxmgr", "ctxmgr-j1", "offline", "max-tokens", "max-tool-output", "clear-tool-results")
COMPACTING = {
    "max-tokens": ("trim --max-tokens 2000", 1.5),
    "max-tool-output": ("trim --max-tool-output 200", 1.5),
    "clear-tool-results": ("trim --clear-tool-results --keep-tool-results 2", None),
}
"""The compaction peers, each measured against ``trim -n`` in one process (``ctxmgr-j1``),
and the bound of its CPU ratio (``None``: measured beside the others, without one; the
issue asks clearing to come as close to ``trim -n`` as it can)."""
CONVERSATION_PEERS = ("orjson", "ctxmgr", "ctxmgr-lib")


def available(requested: list[str], log: Callable[[str], None]) -> list[str]:
    peers = []
    for name in requested:
        if name not in PEERS:
            sys.exit(f"unknown peer {name!r}; choose from {', '.join(PEERS)}")
        if name == "jq" and shutil.which("jq") is None:
            log("jq skipped: not installed (apt-get install -y jq)")
            continue
        if name == "langchain" and importlib.util.find_spec("langchain_core") is None:
            log("langchain skipped: pip install -r bench/requirements.txt")
            continue
        peers.append(name)
    return peers if BASELINE in peers else [BASELINE, *peers]


# -- comparing outputs ------------------------------------------------------------------------


def _values(path: Path) -> Any:
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                yield orjson.loads(line)


def same_output(path: Path, baseline: Path, how: str) -> bool:
    """Whether ``path`` holds what the baseline wrote (``roles``: the same role sequences)."""
    try:
        sentinel = object()
        for mine, theirs in itertools.zip_longest(_values(path), _values(baseline), fillvalue=sentinel):
            if mine is sentinel or theirs is sentinel:
                return False
            if how == "roles":
                if [m.get("role") for m in mine["messages"]] != [m.get("role") for m in theirs["messages"]]:
                    return False
            elif mine != theirs:
                return False
        return True
    except (OSError, orjson.JSONDecodeError):
        return False


# -- inputs and rounds --------------------------------------------------------------------------


@dataclass
class Input:
    label: str
    path: Path
    fmt: str
    kind: str  # "dataset" or "conversation"
    messages: int

    @property
    def megabytes(self) -> float:
        return self.path.stat().st_size / 1e6


@dataclass
class Result:
    input: str
    peer: str
    megabytes: float
    runs: list[Run] = field(default_factory=list)
    same_output: bool | None = None
    failed: str | None = None

    def median(self, what: str) -> float:
        return statistics.median(getattr(r, what) for r in self.runs)

    def spread(self, what: str) -> tuple[float, float]:
        values = [getattr(r, what) for r in self.runs]
        return min(values), max(values)

    @property
    def work(self) -> float | None:
        works = [r.work for r in self.runs if r.work is not None]
        return statistics.median(works) if works else None


def bench_rounds(inputs: list[Input], peers_of: Callable[[Input], list[str]], keep: int, repeat: int, budget: float,
                 log: Callable[[str], None]) -> dict[tuple[str, str], Result]:
    """Round after round, each peer on each input, the peers' order rotating every round."""
    OUT.mkdir(parents=True, exist_ok=True)
    env = child_env()
    results = {(i.label, p): Result(i.label, p, i.megabytes) for i in inputs for p in peers_of(i)}
    for round_index in range(repeat):
        for item in inputs:
            peers = peers_of(item)
            shift = round_index % len(peers)
            for name in peers[shift:] + peers[:shift]:
                result = results[(item.label, name)]
                if result.failed:
                    continue
                # A slow peer is repeated only while its runs fit in the per-peer budget.
                if result.runs and sum(r.wall for r in result.runs) + result.median("wall") > budget:
                    continue
                target = OUT / f"{name}-{item.label}{item.path.suffix}"
                cmd, stdout_to = PEERS[name].command(item.fmt, keep, item.path, target)
                run = measure(cmd, stdout_to=stdout_to, env=env)
                if run.code != 0:
                    result.failed = f"exit {run.code}: {(run.stderr.strip().splitlines() or [''])[-1]}"
                    log(f"  {name} on {item.label}: FAILED {result.failed}")
                    continue
                result.runs.append(run)
                log(f"  round {round_index + 1}: {name:<10} {item.label:<22} {run.wall:8.3f} s wall "
                    f"{run.cpu:8.3f} s cpu {run.rss_mb:7.1f} MB")
                if round_index == 0 and PEERS[name].check and name != BASELINE:
                    result.same_output = same_output(target, OUT / f"{BASELINE}-{item.label}{item.path.suffix}",
                                                     PEERS[name].check or "exact")
    return results


# -- start-up -----------------------------------------------------------------------------------

_IMPORT_PROBE = """
import sys
sys.argv = ["ctxmgr", *{argv!r}]
from ctxmgr.cli import main
try:
    main()
except SystemExit:
    pass
print(" ".join(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})))
"""
HEAVY = ("openai", "google", "pydantic", "rich", "httpx", "asyncio")


def startup_commands(small: Path) -> dict[str, tuple[list[str], float]]:
    """The commands timed on a 10-message file, each with its bound (x ``python -c pass``)."""
    exe = ctxmgr_executable()
    out = str(OUT / "startup-out.json")
    return {
        "python -c pass": ([PYTHON, "-c", "pass"], 1.0),
        "ctxmgr --help": ([exe, "--help"], 3.0),
        "trim": ([exe, "trim", str(small), "--max-messages", "2", "--no-view", "-o", out], 3.0),
        "validate": ([exe, "validate", str(small)], 3.0),
        "stats": ([exe, "stats", str(small)], 3.0),
        "convert": ([exe, "convert", str(small), "--to", "anthropic", "-o", out], 5.0),
        "summarize --model offline": ([exe, "summarize", str(small), "--model", "offline", "--max-messages", "4",
                                       "--no-cache", "--no-view", "-o", out], 5.0),
    }


def bench_startup(small: Path, repeat: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Each command in turn with ``python -c pass``, ``repeat`` pairs (``bench/startup.py``)."""
    env = child_env()
    commands = startup_commands(small)
    python, _ = commands.pop("python -c pass")
    rows: dict[str, Any] = {}
    passes: list[startup.Run] = []
    for name, (argv, bound) in commands.items():
        pairs = startup.paired(argv, python, repeat, env_a=env, env_b=env)
        passes += pairs.b
        # Each run's ratio to the `python -c pass` run beside it: its spread shows how noisy
        # the machine was; the median of the ratios is the figure.
        ratios = pairs.ratios("wall")
        rows[name] = {"wall": pairs.median("a", "wall"), "rss_mb": pairs.median("a", "rss_mb"),
                      "code": max(r.code for r in pairs.a), "ratio": statistics.median(ratios),
                      "ratio_min": min(ratios), "ratio_max": max(ratios), "bound": bound,
                      "cpu": pairs.median("a", "cpu"),
                      # CPU moves less than wall time when other jobs share the machine.
                      "cpu_ratio": statistics.median(pairs.ratios("cpu"))}
        log(f"  {name:<28} {rows[name]['wall'] * 1000:7.1f} ms  {rows[name]['ratio']:.2f}x")
    base = startup.Pairs(a=passes)
    table: dict[str, Any] = {"python -c pass": {
        "wall": base.median("a", "wall"), "rss_mb": base.median("a", "rss_mb"), "code": max(r.code for r in passes),
        "ratio": 1.0, "ratio_min": 1.0, "ratio_max": 1.0, "bound": 1.0, "cpu": base.median("a", "cpu"),
        "cpu_ratio": 1.0}, **rows}
    imports: dict[str, list[str]] = {}
    for name in ("ctxmgr --help", "trim", "validate", "stats"):
        argv = commands[name][0][1:]
        probe = subprocess.run([PYTHON, "-c", _IMPORT_PROBE.format(argv=argv, heavy=set(HEAVY))],
                               capture_output=True, text=True, env=env)
        lines = probe.stdout.strip().splitlines()
        imports[name] = lines[-1].split() if lines else [f"probe failed: {probe.stderr.strip()[-300:]}"]
    return {"commands": table, "imports": imports}


# -- summarize throughput against the raw SDK ----------------------------------------------------


def bench_sdk(levels: list[int], latency: float, per_slot: int, minimum: int, repeat: int,
              log: Callable[[str], None]) -> list[dict[str, Any]]:
    """``ctxmgr summarize`` and the raw openai SDK, alternately, against the same server."""
    import sdk_server

    env = child_env()
    env["OPENAI_API_KEY"] = "dummy"
    rows = []
    for server_name, settings in sdk_server.SERVERS.items():
        for level in levels:
            count = max(minimum, per_slot * level)
            path = _data.summarize_file(DATA, "openai", count)
            runs: dict[str, list[float]] = {"ctxmgr": [], "sdk": []}
            cpu: dict[str, list[float]] = {"ctxmgr": [], "sdk": []}
            failures: dict[str, str] = {}
            for round_index in range(repeat):
                for peer in (("ctxmgr", "sdk") if round_index % 2 == 0 else ("sdk", "ctxmgr")):
                    # A new server and an empty summary cache per run, so no run answers from an
                    # earlier one.
                    with sdk_server.server(latency=latency, **settings) as server, \
                            tempfile.TemporaryDirectory(prefix="ctxmgr-bench-cache-") as cache:
                        if peer == "ctxmgr":
                            cmd = [ctxmgr_executable(), "summarize", str(path), "--model", "gpt-4o-mini",
                                   "--base-url", server.openai_url, "--concurrency", str(level), "--max-messages",
                                   "10", "-o", str(OUT / f"summarize-{level}.jsonl"), "--quiet", "--no-view",
                                   "--cache", cache,
                                   # One request a conversation, as the SDK script sends: a
                                   # --base-url server's default budget (2,000 tokens) would
                                   # split a span into parts and a request combining them.
                                   "--max-input-tokens", "100000"]
                        else:
                            cmd = [PYTHON, str(PEERS_DIR / "openai_sdk.py"), server.openai_url, str(level), str(path)]
                        run = measure(cmd, env=env)
                    if run.code != 0:
                        failures[peer] = f"exit {run.code}: {run.stderr.strip()[-200:]}"
                    runs[peer].append(count / run.wall)
                    cpu[peer].append(run.cpu / count)
                    log(f"  {server_name:<10} concurrency {level:>2} {peer:<6}: {count} in {run.wall:6.2f} s, "
                        f"{count / run.wall:6.1f}/s, CPU {run.cpu / count * 1000:.2f} ms a conversation"
                        f"{'  FAILED' if run.code else ''}")
            mine, theirs = statistics.median(runs["ctxmgr"]), statistics.median(runs["sdk"])
            rows.append({"server": server_name, "concurrency": level, "conversations": count,
                         "ctxmgr_per_second": mine, "sdk_per_second": theirs, "ratio": mine / theirs,
                         "ratios": [a / b for a, b in zip(runs["ctxmgr"], runs["sdk"], strict=True)],
                         "ideal_per_second": level / latency, "failures": failures,
                         # CPU a conversation (start-up included), the figure a shared machine moves least.
                         "ctxmgr_cpu_ms": statistics.median(cpu["ctxmgr"]) * 1000,
                         "sdk_cpu_ms": statistics.median(cpu["sdk"]) * 1000})
    return rows


# -- targets -------------------------------------------------------------------------------------


def evaluate(report: dict[str, Any], results: dict[tuple[str, str], Result],
             inputs: list[Input]) -> list[dict[str, Any]]:
    targets: list[dict[str, Any]] = []

    def target(number: int, name: str, holds: bool | None, detail: str) -> None:
        if holds is None:
            targets.append({"target": number, "name": name, "holds": False, "detail": f"not measured: {detail}"})
        else:
            targets.append({"target": number, "name": name, "holds": bool(holds), "detail": detail})

    def ok(label: str, peer: str) -> Result | None:
        result = results.get((label, peer))
        return result if result is not None and result.runs and not result.failed else None

    datasets = [i for i in inputs if i.kind == "dataset"]
    for item in datasets:
        base, cli, one = ok(item.label, BASELINE), ok(item.label, "ctxmgr"), ok(item.label, "ctxmgr-j1")
        if base is None:
            target(1, f"{item.fmt}: trim", None, "the orjson baseline failed")
            continue
        same = " (output differs from the baseline's)"
        if one is not None:
            ratio = one.median("cpu") / base.median("cpu")
            target(1, f"{item.fmt}: trim --jobs 1 CPU <= 1.5x orjson", ratio <= 1.5 and bool(one.same_output),
                   f"{ratio:.2f}x ({one.median('cpu'):.2f} s vs {base.median('cpu'):.2f} s)"
                   f"{'' if one.same_output else same}")
        else:
            target(1, f"{item.fmt}: trim --jobs 1 CPU <= 1.5x orjson", None, "ctxmgr-j1 failed or was not run")
        if cli is not None:
            ratio = cli.median("wall") / base.median("wall")
            target(1, f"{item.fmt}: trim wall <= 1.1x orjson", ratio <= 1.1 and bool(cli.same_output),
                   f"{ratio:.2f}x ({cli.median('wall'):.2f} s vs {base.median('wall'):.2f} s)"
                   f"{'' if cli.same_output else same}")
            target(5, f"{item.fmt}: peak memory on {item.megabytes:.0f} MB < 100 MB", cli.median("rss_mb") < 100,
                   f"{cli.median('rss_mb'):.0f} MB (all processes)"
                   + (f", --jobs 1 {one.median('rss_mb'):.0f} MB" if one else ""))
        else:
            target(1, f"{item.fmt}: trim wall <= 1.1x orjson", None, "ctxmgr failed or was not run")
        for peer, (command, bound) in COMPACTING.items():
            compacting = ok(item.label, peer)
            if compacting is None or one is None:
                continue
            ratio = compacting.median("cpu") / one.median("cpu")
            name = f"{item.fmt}: {command} CPU " + (f"<= {bound:g}x trim -n" if bound else "beside trim -n (no bound)")
            target(7, name, bound is None or ratio <= bound,
                   f"{ratio:.2f}x ({compacting.median('cpu'):.2f} s vs {one.median('cpu'):.2f} s; "
                   f"{compacting.median('rss_mb'):.0f} MB vs {one.median('rss_mb'):.0f} MB)")
        offline, trim = ok(item.label, "offline"), cli or one
        if offline is not None and trim is not None:
            # Paired by round (the peers run in turn, round after round): the ratio of each
            # round's CPU, all processes of each command counted.
            pairs = [o.cpu / t.cpu for o, t in zip(offline.runs, trim.runs, strict=False)]
            ratio = statistics.median(pairs)
            target(3, f"{item.fmt}: summarize --model offline CPU <= 10x trim", ratio <= 10,
                   f"{ratio:.2f}x (rounds {min(pairs):.2f}-{max(pairs):.2f}x; {offline.median('cpu'):.2f} s vs "
                   f"{trim.median('cpu'):.2f} s, trim {'--jobs 1' if trim is one else 'default parallelism'})")
        elif offline is not None:
            target(3, f"{item.fmt}: summarize --model offline CPU <= 10x trim", None, "ctxmgr's trim was not run")
    startup = report.get("startup")
    if startup:
        for name, row in startup["commands"].items():
            if name == "python -c pass":
                continue
            target(2, f"start-up: {name} <= {row['bound']:g}x python -c pass",
                   row["ratio"] <= row["bound"] and row["code"] == 0,
                   f"{row['ratio']:.2f}x (rounds {row['ratio_min']:.2f}-{row['ratio_max']:.2f}x; "
                   f"{row['wall'] * 1000:.0f} ms vs {startup['commands']['python -c pass']['wall'] * 1000:.0f} ms;"
                   f" CPU {row['cpu_ratio']:.2f}x)")
        for name, modules in startup["imports"].items():
            # The SDKs only when a summary is requested; pydantic (the full reader) not
            # on the paths that need no model (trim, validate and stats read outlines).
            banned = ("openai", "google", "pydantic")
            heavy = sorted({m.split(".")[0] for m in modules if m.split(".")[0] in banned})
            target(2, f"start-up: {name} imports none of {', '.join(banned)}", not heavy, ", ".join(heavy) or "none")
    for row in report.get("sdk", []):
        failed = "; failures: " + ", ".join(f"{k} {v}" for k, v in row["failures"].items()) if row["failures"] else ""
        target(4, f"summarize, {row['server']} server, concurrency {row['concurrency']}: >= 90% of the raw SDK",
               row["ratio"] >= 0.9 and "ctxmgr" not in row["failures"],
               f"{row['ratio']:.0%} ({row['ctxmgr_per_second']:.1f} vs {row['sdk_per_second']:.1f} conv/s; rounds "
               f"{min(row['ratios']):.0%}-{max(row['ratios']):.0%}){failed}")
    conversations = sorted((i for i in inputs if i.kind == "conversation"), key=lambda i: i.messages)
    if conversations:
        largest = conversations[-1]
        cli, base = ok(largest.label, "ctxmgr"), ok(largest.label, BASELINE)
        if cli and base:
            ratio = cli.median("rss_mb") / base.median("rss_mb")
            target(5, f"peak memory on one {largest.messages:,}-message document <= 1.2x orjson's", ratio <= 1.2,
                   f"{ratio:.2f}x ({cli.median('rss_mb'):.0f} MB vs {base.median('rss_mb'):.0f} MB; "
                   f"{largest.megabytes:.0f} MB file)")
        small = conversations[0]
        a, b = ok(small.label, "ctxmgr-lib"), ok(largest.label, "ctxmgr-lib")
        if small is not largest and a and b and a.work and b.work:
            ratio = (b.work / largest.megabytes) / (a.work / small.megabytes)
            target(6, f"scaling: work per MB at {largest.messages:,} messages <= 1.2x at {small.messages:,}",
                   ratio <= 1.2, f"{ratio:.2f}x ({b.work / largest.megabytes * 1000:.1f} vs "
                   f"{a.work / small.megabytes * 1000:.1f} ms/MB)")
        else:
            target(6, "scaling: work per MB", None, "needs two conversation sizes measured by ctxmgr-lib")
    return targets


# -- reporting ----------------------------------------------------------------------------------


def rows_of(results: dict[tuple[str, str], Result]) -> list[dict[str, Any]]:
    rows = []
    for r in results.values():
        base = results.get((r.input, BASELINE))
        row: dict[str, Any] = {"input": r.input, "peer": r.peer, "megabytes": round(r.megabytes, 3),
                               "failed": r.failed, "same_output": r.same_output, "runs": [asdict(x) | {"stderr": None}
                                                                                         for x in r.runs]}
        if r.runs:
            row.update({"wall": r.median("wall"), "cpu": r.median("cpu"), "rss_mb": r.median("rss_mb"),
                        "work": r.work, "wall_spread": r.spread("wall"), "cpu_spread": r.spread("cpu")})
            if base is not None and base.runs:
                row.update({"wall_ratio": r.median("wall") / base.median("wall"),
                            "cpu_ratio": r.median("cpu") / base.median("cpu"),
                            "rss_ratio": r.median("rss_mb") / base.median("rss_mb")})
        rows.append(row)
    return rows


def _table(title: str, head: list[str], body: list[list[str]]) -> None:
    if not body:
        return
    print(f"\n{title}")
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    for b in body:
        print("  ".join(c.ljust(w) for c, w in zip(b, widths, strict=True)))


def print_report(report: dict[str, Any]) -> None:
    body = []
    for row in report["trim"]:
        if not row["runs"]:
            body.append([row["input"], row["peer"], "FAILED", row["failed"] or "not run", "", "", "", "", "", ""])
            continue
        same = {None: "-", True: "yes", False: "NO"}[row["same_output"]]
        wl, wh = row["wall_spread"]
        body.append([row["input"], row["peer"], str(len(row["runs"])), f"{row['wall']:.3f}", f"{wl:.2f}-{wh:.2f}",
                     f"{row.get('wall_ratio', 0):.2f}x", f"{row['cpu']:.3f}", f"{row.get('cpu_ratio', 0):.2f}x",
                     f"{row['rss_mb']:.0f}", same])
    _table("trim and offline summaries (median of runs; cpu = user + system of all processes; x = / orjson)",
           ["input", "peer", "runs", "wall s", "spread", "x wall", "cpu s", "x cpu", "RSS MB", "same"], body)
    if report.get("startup"):
        _table("start-up on a 10-message file (median; x = / python -c pass, with the per-round spread)",
               ["command", "wall ms", "x", "spread", "bound", "cpu ms", "x cpu", "RSS MB"],
               [[n, f"{v['wall'] * 1000:.1f}", f"{v['ratio']:.2f}", f"{v['ratio_min']:.2f}-{v['ratio_max']:.2f}",
                 f"{v['bound']:g}", f"{v['cpu'] * 1000:.1f}", f"{v['cpu_ratio']:.2f}", f"{v['rss_mb']:.0f}"]
                for n, v in report["startup"]["commands"].items()])
    _table(f"summaries against the benchmark's servers (latency {report['settings']['latency']} s; conv/s, median)",
           ["server", "concurrency", "conversations", "ctxmgr", "raw SDK", "ratio", "spread", "ideal",
            "CPU ms/conv ctxmgr", "SDK"],
           [[r["server"], str(r["concurrency"]), str(r["conversations"]), f"{r['ctxmgr_per_second']:.1f}",
             f"{r['sdk_per_second']:.1f}", f"{r['ratio']:.0%}", f"{min(r['ratios']):.0%}-{max(r['ratios']):.0%}",
             f"{r['ideal_per_second']:.1f}", f"{r['ctxmgr_cpu_ms']:.2f}", f"{r['sdk_cpu_ms']:.2f}"]
            for r in report.get("sdk", [])])
    print()
    for t in report["targets"]:
        print(f"{'met    ' if t['holds'] else 'NOT MET'}  {t['target']}. {t['name']}: {t['detail']}")


# -- main -----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, one round (a few minutes)")
    parser.add_argument("--dataset-mb", type=float, help="size of each format's dataset in MB (default 100, quick 10)")
    parser.add_argument("--formats", default=",".join(_data.CTXMGR_FORMATS), help="formats of the trim datasets")
    parser.add_argument("--sizes", help="messages of the single conversations (default 1000,1000000; quick "
                        "1000,100000)")
    parser.add_argument("--repeat", type=int, help="rounds per measurement (default 3, quick 1)")
    parser.add_argument("--budget", type=float, default=60.0,
                        help="seconds a peer may spend on one input before it stops being repeated (default 60)")
    parser.add_argument("--keep", type=int, default=2, help="user turns kept (--max-messages), default 2")
    parser.add_argument("--peers", default=",".join(DATASET_PEERS),
                        help=f"dataset peers, from {','.join(PEERS)} (default {','.join(DATASET_PEERS)})")
    parser.add_argument("--latency", type=float, help="server latency in s for the summaries (default 0.2, quick 0.1)")
    parser.add_argument("--concurrency", default="1,4,16", help="summary concurrency levels (default 1,4,16)")
    parser.add_argument("--only", default="trim,startup,scaling,sdk",
                        help="parts to run, from trim,startup,scaling,sdk (default all)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is not met")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)

    quick = args.quick
    parts = set(args.only.split(","))
    sizes = [int(s) for s in (args.sizes or ("1000,100000" if quick else "1000,1000000")).split(",")]
    dataset_mb = args.dataset_mb or (10.0 if quick else 100.0)
    repeat = args.repeat or (1 if quick else 3)
    latency = args.latency or (0.1 if quick else 0.2)
    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

    peers = available([p.strip() for p in args.peers.split(",") if p.strip()], log)
    convert = [ctxmgr_executable(), "convert"]
    inputs: list[Input] = []
    if "trim" in parts:
        for fmt in args.formats.split(","):
            path, _ = _data.tau_dataset(DATA, fmt, dataset_mb, convert)
            inputs.append(Input(f"tau-{fmt}-{dataset_mb:g}MB", path, fmt, "dataset", 0))
    if "scaling" in parts:
        for size in sizes:
            path = _data.conversation_file(DATA, "openai", size)
            inputs.append(Input(f"conv-{size}", path, "openai-chat", "conversation", size))
    for item in inputs:
        log(f"  {item.label}: {item.path.name}, {item.megabytes:.2f} MB")

    def peers_of(item: Input) -> list[str]:
        names = peers if item.kind == "dataset" else list(CONVERSATION_PEERS)
        return [n for n in names if not PEERS[n].only or item.fmt in PEERS[n].only]

    load_before = os.getloadavg()[0]
    log(f"trim, keep {args.keep} user turns; {repeat} round(s); load average {load_before:.2f}")
    results = bench_rounds(inputs, peers_of, args.keep, repeat, args.budget, log)
    report: dict[str, Any] = {
        "settings": {"keep": args.keep, "repeat": repeat, "quick": quick, "latency": latency, "sizes": sizes,
                     "dataset_mb": dataset_mb},
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "inputs": [{"label": i.label, "path": str(i.path.relative_to(REPO)), "megabytes": i.megabytes,
                    "format": i.fmt} for i in inputs],
        "trim": rows_of(results),
    }
    if "startup" in parts:
        log("start-up")
        small = _data.conversation_file(DATA, "openai", 10)
        report["startup"] = bench_startup(small, 7 if quick else 21, log)
    if "sdk" in parts:
        log("summaries against the raw SDK")
        report["sdk"] = bench_sdk([int(c) for c in args.concurrency.split(",")], latency, 4 if quick else 16,
                                  16 if quick else 32, 1 if quick else 2, log)
    report["targets"] = evaluate(report, results, inputs)
    report["seconds"] = time.perf_counter() - started
    report["machine"]["load_average"] = {"start": load_before, "end": os.getloadavg()[0]}
    print_report(report)
    if max(load_before, os.getloadavg()[0]) > 0.5 * (os.cpu_count() or 1):
        print(f"\nnote: load average {load_before:.2f} -> {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs: "
              "something else was running; compare ratios and spreads, not seconds")
    print(f"total {report['seconds']:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
        print(f"wrote {args.json}")
    return 1 if args.check and not all(t["holds"] for t in report["targets"]) else 0


if __name__ == "__main__":
    sys.exit(main())
