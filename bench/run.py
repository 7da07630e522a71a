"""ctxmgr's benchmark: trim against orjson, jq and LangChain; start-up; summarize throughput.

Run from the repository root::

    pip install -r bench/requirements.txt
    python bench/run.py            # full run (~5-10 minutes)
    python bench/run.py --quick    # smaller inputs, one repeat (< 1 minute)
    python bench/run.py --json bench/results/latest.json

Every measurement is one child process (its wall time and, from ``os.wait4``, its peak
RSS); the peers run alternately, round after round, on the same inputs, and the median
of the rounds is reported with its ratio to the orjson baseline. The targets of issue 5
are printed as PASS/FAIL lines at the end. Generated inputs go to ``bench/data/``
(git-ignored) and are reused while the generator version is unchanged.
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


@dataclass(frozen=True)
class Peer:
    name: str
    command: Callable[[str, int, Path, Path], tuple[list[str], Path | None]]
    """(list key, N, input, output) -> (argv, file for stdout or None)."""
    check: str
    """How its output is compared to the baseline's: ``exact`` (same JSON values) or ``roles``."""


def _script(name: str) -> Callable[[str, int, Path, Path], tuple[list[str], Path | None]]:
    def command(key: str, keep: int, source: Path, target: Path) -> tuple[list[str], Path | None]:
        return [PYTHON, str(PEERS_DIR / name), key, str(keep), str(source), str(target)], None

    return command


def _jq(key: str, keep: int, source: Path, target: Path) -> tuple[list[str], Path | None]:
    return ["jq", "-c", "--arg", "key", key, "--argjson", "n", str(keep), "-f", str(PEERS_DIR / "trim.jq"),
            str(source)], target


def _cli(key: str, keep: int, source: Path, target: Path) -> tuple[list[str], Path | None]:
    return [ctxmgr_executable(), "trim", str(source), "--max-messages", str(keep), "-o", str(target), "--quiet",
            "--no-view"], None


PEERS = {
    "orjson": Peer("orjson", _script("orjson_trim.py"), "exact"),
    "jq": Peer("jq", _jq, "exact"),
    "langchain": Peer("langchain", _script("langchain_trim.py"), "roles"),
    "ctxmgr-lib": Peer("ctxmgr-lib", _script("ctxmgr_lib.py"), "exact"),
    "ctxmgr-cli": Peer("ctxmgr-cli", _cli, "exact"),
}
BASELINE = "orjson"


def available_peers(requested: list[str]) -> tuple[list[str], list[str]]:
    """The requested peers that can run here, and notes on the ones that cannot."""
    notes = []
    peers = []
    for name in requested:
        if name not in PEERS:
            sys.exit(f"unknown peer {name!r}; choose from {', '.join(PEERS)}")
        if name == "jq" and shutil.which("jq") is None:
            notes.append("jq skipped: not installed (apt-get install -y jq)")
            continue
        if name == "langchain" and importlib.util.find_spec("langchain_core") is None:
            notes.append("langchain skipped: pip install -r bench/requirements.txt")
            continue
        peers.append(name)
    if BASELINE not in peers:
        peers.insert(0, BASELINE)
    return peers, notes


# -- comparing outputs ------------------------------------------------------------------------


def _values(path: Path) -> Any:
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                yield orjson.loads(line)


def same_output(path: Path, baseline: Path, key: str, how: str) -> bool:
    """Whether ``path`` holds what the baseline wrote (``roles``: the same role sequences)."""
    try:
        sentinel = object()
        for mine, theirs in itertools.zip_longest(_values(path), _values(baseline), fillvalue=sentinel):
            if mine is sentinel or theirs is sentinel:
                return False
            if how == "roles":
                if [m.get("role") for m in mine[key]] != [m.get("role") for m in theirs[key]]:
                    return False
            elif mine != theirs:
                return False
        return True
    except (OSError, orjson.JSONDecodeError):
        return False


# -- inputs -------------------------------------------------------------------------------------


@dataclass
class Input:
    label: str
    path: Path
    kind: str  # "conversation" or "dataset"
    messages: int
    conversations: int

    @property
    def megabytes(self) -> float:
        return self.path.stat().st_size / 1e6


def count_messages(path: Path, key: str) -> tuple[int, int]:
    conversations = messages = 0
    for value in _values(path):
        conversations += 1
        messages += len(value[key])
    return conversations, messages


def choose_format(requested: str) -> tuple[str, str]:
    """``openai`` once ctxmgr reads OpenAI chat datasets, else ``native``; with the reason."""
    if requested != "auto":
        return requested, "chosen with --format"
    probe = subprocess.run([PYTHON, "-c", "import ctxmgr.formats._openai_chat"], capture_output=True)
    if probe.returncode != 0:
        return "native", "ctxmgr.formats._openai_chat does not exist yet: native {\"context\": [...]} rows"
    path, _ = _data.dataset_file(DATA, "openai", 0.2)
    OUT.mkdir(parents=True, exist_ok=True)
    mine, theirs = OUT / "probe-ctxmgr.jsonl", OUT / "probe-orjson.jsonl"
    env = child_env()
    cli = measure(_cli("messages", 2, path, mine)[0], env=env)
    base = measure(_script("orjson_trim.py")("messages", 2, path, theirs)[0], env=env)
    if cli.code == 0 and base.code == 0 and same_output(mine, theirs, "messages", "exact"):
        return "openai", "OpenAI chat {\"messages\": [...]} rows"
    return "native", f"ctxmgr trim does not handle OpenAI chat datasets yet (exit {cli.code}): native rows"


# -- the trim benchmark ------------------------------------------------------------------------


@dataclass
class Result:
    input: str
    peer: str
    megabytes: float
    messages: int
    runs: list[Run] = field(default_factory=list)
    same_output: bool | None = None
    failed: str | None = None

    @property
    def wall(self) -> float:
        return statistics.median(r.wall for r in self.runs)

    @property
    def rss(self) -> float:
        return statistics.median(r.rss_mb for r in self.runs)

    @property
    def cpu(self) -> float:
        return statistics.median(r.cpu for r in self.runs)

    @property
    def work(self) -> float | None:
        works = [r.work for r in self.runs if r.work is not None]
        return statistics.median(works) if works else None


def bench_trim(inputs: list[Input], peers: list[str], key: str, keep: int, repeat: int, budget: float,
               log: Callable[[str], None]) -> list[Result]:
    """Round after round, each peer on each input (the order rotates every round)."""
    OUT.mkdir(parents=True, exist_ok=True)
    env = child_env()
    results = {(i.label, p): Result(i.label, p, i.megabytes, i.messages) for i in inputs for p in peers}
    for round_index in range(repeat):
        order = peers[round_index % len(peers):] + peers[: round_index % len(peers)]
        for item in inputs:
            for name in order:
                result = results[(item.label, name)]
                if result.failed:
                    continue
                # A slow peer is repeated only while its runs fit in the per-peer budget.
                if result.runs and sum(r.wall for r in result.runs) + result.wall > budget:
                    continue
                target = OUT / f"{name}-{item.label}{item.path.suffix}"
                cmd, stdout_to = PEERS[name].command(key, keep, item.path, target)
                run = measure(cmd, stdout_to=stdout_to, env=env)
                if run.code != 0:
                    result.failed = f"exit {run.code}: {run.stderr.strip().splitlines()[-1:] or ''}"
                    log(f"  {name} on {item.label}: FAILED {result.failed}")
                    continue
                result.runs.append(run)
                log(f"  round {round_index + 1}: {name:<10} {item.label:<14} {run.wall:8.3f} s {run.rss_mb:8.1f} MB")
        if round_index == 0:
            for item in inputs:
                baseline = OUT / f"{BASELINE}-{item.label}{item.path.suffix}"
                for name in peers:
                    result = results[(item.label, name)]
                    if name != BASELINE and not result.failed:
                        mine = OUT / f"{name}-{item.label}{item.path.suffix}"
                        result.same_output = same_output(mine, baseline, key, PEERS[name].check)
    return list(results.values())


# -- start-up -----------------------------------------------------------------------------------

_IMPORT_PROBE = """
import sys
sys.argv = ["ctxmgr", "trim", {path!r}, "--max-messages", "2", "--quiet", "--no-view", "-o", {out!r}]
from ctxmgr.cli import main
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m == "openai" or m.startswith(("openai.", "google.genai")))
print({{"heavy": heavy}}.__repr__().replace("'", '"'))
"""


def bench_startup(small: Path, repeat: int, log: Callable[[str], None]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    env = child_env()
    exe = ctxmgr_executable()
    commands = {
        "python -c pass": [PYTHON, "-c", "pass"],
        "ctxmgr --help": [exe, "--help"],
        "ctxmgr trim (10 messages)": [exe, "trim", str(small), "--max-messages", "2", "--no-view"],
    }
    runs: dict[str, list[Run]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, cmd in commands.items():
            runs[name].append(measure(cmd, env=env))
    table = {}
    for name, rs in runs.items():
        table[name] = {"wall": statistics.median(r.wall for r in rs), "rss_mb": statistics.median(r.rss_mb for r in rs),
                       "code": max(r.code for r in rs)}
        log(f"  {name:<28} {table[name]['wall'] * 1000:7.1f} ms")
    probe = subprocess.run(
        [PYTHON, "-c", _IMPORT_PROBE.format(path=str(small), out=str(OUT / "import-probe.json"))],
        capture_output=True, text=True, env=env,
    )
    try:
        heavy = json.loads(probe.stdout.strip().splitlines()[-1])["heavy"]
    except (IndexError, ValueError, KeyError):
        heavy = [f"probe failed: {probe.stderr.strip()[-300:]}"]
    return table, heavy


# -- summarize throughput ----------------------------------------------------------------------


def _load_server() -> Any:
    spec = importlib.util.spec_from_file_location("llm_server", REPO / "tests" / "llm_server.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["llm_server"] = module
    spec.loader.exec_module(module)
    return module.LLMServer


def bench_summarize(fmt: str, latency: float, levels: list[int], per_slot: int, minimum: int,
                    log: Callable[[str], None]) -> list[dict[str, Any]]:
    """``ctxmgr summarize`` on a dataset against the test server answering after ``latency`` s."""
    server_class = _load_server()
    env = child_env()
    env["OPENAI_API_KEY"] = "dummy"
    rows = []
    for level in levels:
        count = max(minimum, per_slot * level)
        path = _data.summarize_file(DATA, fmt, count)
        # An empty summary cache per run: the user's cache is keyed by the base URL, so a
        # port used by an earlier run answered some conversations without a request.
        # The cache stays on (entries are written, as in real use), it just starts empty.
        with server_class() as server, tempfile.TemporaryDirectory(prefix="ctxmgr-bench-cache-") as cache:
            server.latency = latency
            cmd = [ctxmgr_executable(), "summarize", str(path), "--model", "gpt-4o-mini", "--base-url",
                   server.openai_url, "--concurrency", str(level), "--max-messages", "10", "--max-retries", "0",
                   "-o", str(OUT / f"summarize-{level}.jsonl"), "--quiet", "--no-view", "--cache", cache]
            run = measure(cmd, env=env)
            requests = server.requests
            peak = server.max_in_flight
        ideal = level / latency
        throughput = count / run.wall
        stamps = sorted(r.received_at for r in requests)
        steady = len(stamps) / (stamps[-1] - stamps[0] + latency) if stamps else 0.0
        row = {
            "concurrency": level, "conversations": count, "requests": len(requests), "max_in_flight": peak,
            "wall": run.wall, "code": run.code, "per_second": throughput, "ideal_per_second": ideal,
            "efficiency": throughput / ideal, "steady_per_second": steady, "steady_efficiency": steady / ideal,
        }
        if run.code != 0:
            row["error"] = run.stderr.strip()[-300:]
        rows.append(row)
        log(f"  concurrency {level:>2}: {count} conversations in {run.wall:.2f} s, {throughput:.1f}/s "
            f"(ideal {ideal:.1f}/s, {throughput / ideal:.0%}; steady {steady / ideal:.0%}; max in flight {peak})")
    return rows


# -- reporting ----------------------------------------------------------------------------------


def _fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def trim_rows(results: list[Result]) -> list[dict[str, Any]]:
    base = {r.input: r for r in results if r.peer == BASELINE and r.runs}
    rows = []
    for r in results:
        if not r.runs:
            rows.append({"input": r.input, "peer": r.peer, "failed": r.failed or "not run"})
            continue
        b = base.get(r.input)
        rows.append({
            "input": r.input, "peer": r.peer, "megabytes": round(r.megabytes, 3), "messages": r.messages,
            "runs": len(r.runs), "wall": r.wall, "walls": [x.wall for x in r.runs], "cpu": r.cpu,
            "cpu_ratio": r.cpu / b.cpu if b and b.cpu else None, "rss_mb": r.rss,
            "work": r.work, "wall_ratio": r.wall / b.wall if b else None, "rss_ratio": r.rss / b.rss if b else None,
            "wall_per_mb": r.wall / r.megabytes, "work_per_mb": (r.work / r.megabytes) if r.work is not None else None,
            "same_output": r.same_output,
        })
    return rows


def print_tables(report: dict[str, Any]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # plain text when Rich is missing
        Console = Table = None

    headers = ["input", "MB", "peer", "runs", "wall s", "x orjson", "cpu s", "x cpu", "RSS MB", "x RSS", "same"]
    lines = []
    for row in report["trim"]:
        if "failed" in row:
            lines.append([row["input"], "", row["peer"], "0", "FAILED", "", "", "", "", "", row["failed"][:40]])
            continue
        same = {None: "base", True: "yes", False: "NO"}[row["same_output"]]
        if row["same_output"] and PEERS[row["peer"]].check == "roles":
            same = "roles"
        lines.append([
            row["input"], f"{row['megabytes']:.1f}", row["peer"], str(row["runs"]), f"{row['wall']:.3f}",
            _fmt_ratio(row["wall_ratio"]), f"{row['cpu']:.3f}", _fmt_ratio(row["cpu_ratio"]),
            f"{row['rss_mb']:.0f}", _fmt_ratio(row["rss_ratio"]), same,
        ])
    startup = [[name, f"{v['wall'] * 1000:.1f}", f"{v['rss_mb']:.0f}"] for name, v in report["startup"].items()]
    summarize = [[str(r["concurrency"]), str(r["conversations"]), f"{r['wall']:.2f}", f"{r['per_second']:.1f}",
                  f"{r['ideal_per_second']:.1f}", f"{r['efficiency']:.0%}", f"{r['steady_efficiency']:.0%}",
                  str(r["max_in_flight"])] for r in report.get("summarize", [])]
    tables = [
        ("trim: keep the last N user turns (median of runs; cpu = user + system time of the process)", headers, lines),
        ("start-up (median)", ["command", "wall ms", "RSS MB"], startup),
        (f"summarize against the test server (latency {report['settings']['latency']} s)",
         ["concurrency", "conversations", "wall s", "conv/s", "ideal", "of ideal", "steady", "in flight"], summarize),
    ]
    if Table is not None:
        console = Console(width=max(120, shutil.get_terminal_size().columns))
        for title, head, body in tables:
            if not body:
                continue
            table = Table(title=title, title_justify="left")
            for h in head:
                table.add_column(h, justify="left" if h in ("input", "peer", "command") else "right")
            for b in body:
                table.add_row(*b)
            console.print(table)
    else:
        for title, head, body in tables:
            if not body:
                continue
            print(f"\n{title}")
            widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
            print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
            for b in body:
                print("  ".join(c.ljust(w) for c, w in zip(b, widths, strict=True)))
    print()
    for line in report["scaling"]:
        print(line)
    print()
    for target in report["targets"]:
        print(f"{'PASS' if target['holds'] else 'FAIL'}  {target['name']}: {target['detail']}")


def evaluate(report: dict[str, Any], inputs: list[Input]) -> None:
    """The targets of issue 5, each with the numbers behind it."""
    rows = {(r["input"], r["peer"]): r for r in report["trim"] if "failed" not in r}
    targets: list[dict[str, Any]] = []

    def target(name: str, holds: bool | None, detail: str) -> None:
        if holds is None:
            targets.append({"name": name, "holds": False, "detail": f"not measured: {detail}"})
        else:
            targets.append({"name": name, "holds": bool(holds), "detail": detail})

    datasets = [i for i in inputs if i.kind == "dataset"]
    big = max(datasets, key=lambda i: i.megabytes) if datasets else None
    if big is not None:
        cli, base = rows.get((big.label, "ctxmgr-cli")), rows.get((big.label, BASELINE))
        if cli and base:
            ratio = cli["wall"] / base["wall"]
            target(f"trim {big.label} via CLI <= 1.5x orjson", ratio <= 1.5,
                   f"{cli['wall']:.2f} s vs {base['wall']:.2f} s = {ratio:.2f}x")
        for peer, factor in (("jq", 3), ("langchain", 10)):
            other = rows.get((big.label, peer))
            if cli and other:
                speedup = other["wall"] / cli["wall"]
                target(f"trim {big.label} via CLI >= {factor}x faster than {peer}", speedup >= factor,
                       f"{other['wall']:.2f} s / {cli['wall']:.2f} s = {speedup:.1f}x")
            else:
                target(f"trim {big.label} via CLI >= {factor}x faster than {peer}", None, f"{peer} did not run")
        for item in datasets:
            cli = rows.get((item.label, "ctxmgr-cli"))
            if cli:
                target(f"peak RSS on {item.label} < 150 MB", cli["rss_mb"] < 150,
                       f"{cli['rss_mb']:.0f} MB for {item.megabytes:.0f} MB of input")
    conversations = [i for i in inputs if i.kind == "conversation"]
    largest = max(conversations, key=lambda i: i.messages) if conversations else None
    if largest is not None:
        cli = rows.get((largest.label, "ctxmgr-cli"))
        if cli:
            factor = cli["rss_mb"] / largest.megabytes
            scope = "" if largest.messages >= 100_000 else " (the target is for 100,000 messages)"
            target(f"peak RSS on {largest.label} < 5x file size", factor < 5,
                   f"{cli['rss_mb']:.0f} MB for {largest.megabytes:.1f} MB = {factor:.1f}x{scope}")
    startup = report["startup"].get("ctxmgr trim (10 messages)")
    if startup:
        target("start-up: ctxmgr trim on 10 messages < 150 ms", startup["wall"] < 0.150 and startup["code"] == 0,
               f"{startup['wall'] * 1000:.0f} ms "
               f"(python -c pass: {report['startup']['python -c pass']['wall'] * 1000:.0f} ms)")
    target("start-up: no openai / google.genai import on the trim path", not report["heavy_imports"],
           ", ".join(report["heavy_imports"]) or "none imported")
    scaling = report["scaling_ratios"]
    for name, ratio in scaling.items():
        target(f"linear: {name}", ratio is not None and ratio <= 1.5,
               "not measured" if ratio is None else f"work per MB grows {ratio:.2f}x (limit 1.5x)")
    for row in report.get("summarize", []):
        if row["concurrency"] == 16:
            target("summarize at concurrency 16 >= 80% of ideal", row["efficiency"] >= 0.8 and row["code"] == 0,
                   f"{row['per_second']:.1f} conv/s of {row['ideal_per_second']:.1f} = {row['efficiency']:.0%} end to "
                   f"end (steady state {row['steady_efficiency']:.0%}; start-up included)")
    report["targets"] = targets


def scaling(report: dict[str, Any], inputs: list[Input]) -> None:
    """Work time per MB of ctxmgr as a library (start-up excluded) from small to large inputs."""
    rows = {(r["input"], r["peer"]): r for r in report["trim"] if "failed" not in r}
    lines = ["time per MB of the work (timed inside the process, after imports), by input size:"]
    for peer in PEERS:
        cells = []
        for item in inputs:
            row = rows.get((item.label, peer))
            if row and row["work_per_mb"] is not None:
                cells.append(f"{item.label} {row['work_per_mb'] * 1000:.1f} ms/MB")
        if cells:
            lines.append(f"  {peer:<11} " + ", ".join(cells))
    ratios: dict[str, float | None] = {}

    def ratio(small: Input | None, large: Input | None, name: str) -> None:
        if small is None or large is None or small is large:
            return
        a, b = rows.get((small.label, "ctxmgr-lib")), rows.get((large.label, "ctxmgr-lib"))
        ratios[name] = (b["work_per_mb"] / a["work_per_mb"]) if a and b and a["work_per_mb"] else None

    conversations = sorted((i for i in inputs if i.kind == "conversation" and i.messages >= 1000),
                           key=lambda i: i.messages)
    if len(conversations) >= 2:
        ratio(conversations[0], conversations[-1], f"ctxmgr-lib {conversations[0].label} -> {conversations[-1].label}")
    datasets = sorted((i for i in inputs if i.kind == "dataset"), key=lambda i: i.megabytes)
    if len(datasets) >= 2:
        ratio(datasets[0], datasets[-1], f"ctxmgr-lib {datasets[0].label} -> {datasets[-1].label}")
    report["scaling"] = lines
    report["scaling_ratios"] = ratios


# -- main -----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, one repeat (< 1 minute)")
    parser.add_argument("--sizes", help="messages of the single conversations (default 10,1000,100000; "
                        "quick 10,1000,10000)")
    parser.add_argument("--dataset-mb", type=float, help="dataset size in MB (default 100, quick 10); a 1/10 "
                        "prefix is also run to check linear scaling")
    parser.add_argument("--repeat", type=int, help="rounds per measurement (default 3, quick 1)")
    parser.add_argument("--budget", type=float, default=60.0,
                        help="seconds a peer may spend on one input before it stops being repeated (default 60)")
    parser.add_argument("--keep", type=int, default=2, help="user turns kept (--max-messages), default 2")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated, from {','.join(PEERS)}")
    parser.add_argument("--format", choices=("auto", *_data.FORMATS), default="auto",
                        help="data format (auto: openai once ctxmgr reads it, else native)")
    parser.add_argument("--latency", type=float, help="test server latency in s (default 0.2, quick 0.1)")
    parser.add_argument("--concurrency", default="1,4,16", help="summarize concurrency levels (default 1,4,16)")
    parser.add_argument("--no-summarize", action="store_true", help="skip the summarize throughput part")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)

    quick = args.quick
    sizes = [int(s) for s in (args.sizes or ("10,1000,10000" if quick else "10,1000,100000")).split(",")]
    dataset_mb = args.dataset_mb or (10.0 if quick else 100.0)
    repeat = args.repeat or (1 if quick else 3)
    latency = args.latency or (0.1 if quick else 0.2)
    levels = [int(c) for c in args.concurrency.split(",")]
    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

    peers, notes = available_peers([p.strip() for p in args.peers.split(",") if p.strip()])
    for note in notes:
        log(note)
    fmt, why = choose_format(args.format)
    key = _data.LIST_KEY[fmt]
    log(f"format: {fmt} ({why})")

    log("generating inputs (reused when present)")
    inputs: list[Input] = []
    for size in sizes:
        path = _data.conversation_file(DATA, fmt, size)
        inputs.append(Input(f"conv-{size}", path, "conversation", size, 1))
    small_mb = round(dataset_mb / 10, 3)
    for megabytes in (small_mb, dataset_mb):
        path, lines = _data.dataset_file(DATA, fmt, megabytes)
        _, messages = count_messages(path, key)
        inputs.append(Input(f"dataset-{megabytes:g}MB", path, "dataset", messages, lines))
    for item in inputs:
        log(f"  {item.label}: {item.path.name}, {item.megabytes:.2f} MB, {item.conversations} conversations, "
            f"{item.messages} messages")
    small = _data.conversation_file(DATA, fmt, 10)

    load_before = os.getloadavg()[0]
    log(f"trim, keep {args.keep} user turns: {', '.join(peers)}; {repeat} round(s); load average {load_before:.2f}")
    results = bench_trim(inputs, peers, key, args.keep, repeat, args.budget, log)
    log("start-up")
    startup, heavy = bench_startup(small, 5 if quick else 15, log)
    summarize: list[dict[str, Any]] = []
    if not args.no_summarize:
        log("summarize throughput")
        summarize = bench_summarize(fmt, latency, levels, per_slot=4 if quick else 32, minimum=16 if quick else 64,
                                    log=log)

    report: dict[str, Any] = {
        "settings": {"format": fmt, "format_reason": why, "keep": args.keep, "repeat": repeat, "quick": quick,
                     "latency": latency, "sizes": sizes, "dataset_mb": dataset_mb},
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
                    "jq": subprocess.run(["jq", "--version"], capture_output=True, text=True).stdout.strip()
                    if shutil.which("jq") else None},
        "inputs": [{"label": i.label, "path": str(i.path.relative_to(REPO)), "megabytes": i.megabytes,
                    "messages": i.messages, "conversations": i.conversations} for i in inputs],
        "trim": trim_rows(results),
        "raw_runs": [{"input": r.input, "peer": r.peer, "runs": [asdict(x) | {"stderr": None} for x in r.runs]}
                     for r in results],
        "startup": startup,
        "heavy_imports": heavy,
        "summarize": summarize,
        "notes": notes,
    }
    scaling(report, inputs)
    evaluate(report, inputs)
    report["seconds"] = time.perf_counter() - started
    report["machine"]["load_average"] = {"start": load_before, "end": os.getloadavg()[0]}
    print_tables(report)
    if max(load_before, os.getloadavg()[0]) > 0.5 * (os.cpu_count() or 1):
        print(f"\nwarning: load average {load_before:.2f} -> {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs: "
              "something else was running; wall times are inflated (compare cpu s and ratios)")
    print(f"\nformat: {fmt} ({why}); total {report['seconds']:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
