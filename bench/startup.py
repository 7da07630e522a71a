"""Start-up of each command against ``python -c pass``: paired runs, ratios reported.

Run it with the interpreter of a virtual environment that holds only ctxmgr's own
install (no test tools, no editable install), so the figures are the ones a user gets::

    python -m venv /tmp/ctxmgr-rt && /tmp/ctxmgr-rt/bin/pip install .
    /tmp/ctxmgr-rt/bin/python bench/startup.py                  # every command, 21 pairs each
    /tmp/ctxmgr-rt/bin/python bench/startup.py --runs 41 --only trim,stats
    /tmp/ctxmgr-rt/bin/python bench/startup.py --tree /tmp/copy  # a changed copy against the install

Each command runs on a file of ``samples/`` (its output thrown away) in turn with
``python -c pass``, run after run (one warm-up of each, not counted), so that both see the
same machine: the ratio is taken pair by pair, and its median is quoted with its spread.
CPU time (user + system, from the operating system's accounting of the finished process)
moves less than wall time when other work shares the machine: on a busy machine, read it.

``--tree DIR`` answers "what does this change cost or save at start-up?": each command
runs from the copy of the ``ctxmgr`` package in ``DIR`` (``PYTHONPATH=DIR python -m
ctxmgr``) in turn with the installed one run the same way, and the difference is
reported in milliseconds and as a share of the installed command's start-up (its time
over ``python -c pass``). To measure what a start-up device saves, copy the package,
disable the device in the copy, and compare.

``bench/run.py --only startup`` times its commands (on a 10-message file, each judged
against its bound) with the same pairing, :func:`paired`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"

COMMANDS: dict[str, list[str]] = {
    "--help": ["--help"],
    "trim": ["trim", "-n", "2", str(SAMPLES / "support-chat.json")],
    "convert": ["convert", str(SAMPLES / "openai-chat.json"), "--to", "anthropic"],
    "stats": ["stats", str(SAMPLES / "support-chat.json")],
    "validate": ["validate", str(SAMPLES / "openai-chat.json")],
    "summarize --model offline": [
        "summarize",
        "--model",
        "offline",
        "--max-messages",
        "10",
        "--no-cache",
        str(SAMPLES / "support-chat.json"),
    ],
}
"""What is timed, by name: the arguments given to ``ctxmgr``."""


@dataclass
class Run:
    """One finished process: wall and CPU (user + system) seconds, peak RSS, exit code."""

    wall: float
    cpu: float
    rss_mb: float
    code: int


@dataclass
class Pairs:
    """The runs of a command (``a``) and of what it is compared with (``b``), in turn."""

    a: list[Run] = field(default_factory=list)
    b: list[Run] = field(default_factory=list)

    def median(self, side: str, what: str) -> float:
        return statistics.median(getattr(run, what) for run in getattr(self, side))

    def ratios(self, what: str) -> list[float]:
        return [getattr(a, what) / getattr(b, what) for a, b in zip(self.a, self.b, strict=True) if getattr(b, what)]

    def differences(self, what: str) -> list[float]:
        return [getattr(a, what) - getattr(b, what) for a, b in zip(self.a, self.b, strict=True)]


def child_env(tree: Path | None = None) -> dict[str, str]:
    """The environment of every run: a plain, narrow terminal setting, no debug, and
    bytecode cached as pip caches it for an installed package (with
    ``PYTHONDONTWRITEBYTECODE`` set, every run would time the compiler)."""
    env = dict(os.environ)
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"})
    for name in ("CTXMGR_DEBUG", "PYTHONDONTWRITEBYTECODE", "PYTHONPATH"):
        env.pop(name, None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def run_once(argv: list[str], env: dict[str, str], cwd: str | None = None) -> Run:
    """Run ``argv`` once, its output thrown away: its wall and CPU seconds, peak RSS (of
    the process itself, which starts as a fresh interpreter) and exit code."""
    started = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, process.returncode)


def paired(
    a: list[str], b: list[str], runs: int, *, env_a: dict[str, str], env_b: dict[str, str], cwd: str | None = None
) -> Pairs:
    """``a`` and ``b`` in turn, ``runs`` times each after one warm-up of each."""
    pairs = Pairs()
    for index in range(runs + 1):
        run_a = run_once(a, env_a, cwd)
        run_b = run_once(b, env_b, cwd)
        if index:
            pairs.a.append(run_a)
            pairs.b.append(run_b)
    return pairs


def ctxmgr_command(python: str) -> list[str]:
    """The console script beside ``python`` (how users start it), else ``python -m ctxmgr``."""
    script = Path(python).parent / "ctxmgr"
    return [str(script)] if script.exists() else [python, "-m", "ctxmgr"]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f}"


def against_python(names: list[str], runs: int, cwd: str) -> bool:
    """Each command against ``python -c pass``; print the table; whether every run exited 0."""
    python = sys.executable
    env = child_env()
    ctxmgr = ctxmgr_command(python)
    print(f"{runs} pairs each, in turn with `python -c pass` ({python}); medians, ms")
    print(f"{'command':<27} {'wall':>7} {'cpu':>7} {'over':>7} {'x wall':>7} {'x cpu':>7}  spread x wall")
    clean = True
    passes = Pairs()
    for name in names:
        pairs = paired([*ctxmgr, *COMMANDS[name]], [python, "-c", "pass"], runs, env_a=env, env_b=env, cwd=cwd)
        clean = clean and all(run.code == 0 for run in pairs.a)
        passes.a += pairs.b
        wall_ratios = pairs.ratios("wall")
        print(
            f"{name:<27} {_ms(pairs.median('a', 'wall'))} {_ms(pairs.median('a', 'cpu'))}"
            f" {_ms(statistics.median(pairs.differences('cpu')))}"
            f" {statistics.median(wall_ratios):7.2f} {statistics.median(pairs.ratios('cpu')):7.2f}"
            f"  {min(wall_ratios):.2f}-{max(wall_ratios):.2f}"
        )
    print(f"{'python -c pass':<27} {_ms(passes.median('a', 'wall'))} {_ms(passes.median('a', 'cpu'))}")
    print("over: the command's CPU time beyond python -c pass (its start-up and work), pair by pair")
    return clean


def against_tree(names: list[str], runs: int, tree: Path, cwd: str) -> bool:
    """Each command from ``tree`` against the installed package; print the table."""
    python = sys.executable
    installed, copy = child_env(), child_env(tree)
    module = [python, "-m", "ctxmgr"]
    print(f"{runs} pairs each: ctxmgr from {tree} in turn with the installed one; medians, ms")
    print(f"{'command':<27} {'copy':>7} {'install':>7} {'change':>7} {'% start':>7}  (cpu; wall change)")
    start = {
        name: statistics.median(
            paired(
                [*module, *COMMANDS[name]], [python, "-c", "pass"], 5, env_a=installed, env_b=installed, cwd=cwd
            ).differences("cpu")
        )
        for name in names
    }
    clean = True
    for name in names:
        pairs = paired(
            [*module, *COMMANDS[name]], [*module, *COMMANDS[name]], runs, env_a=copy, env_b=installed, cwd=cwd
        )
        clean = clean and all(run.code == 0 for run in pairs.a + pairs.b)
        change = statistics.median(pairs.differences("cpu"))
        print(
            f"{name:<27} {_ms(pairs.median('a', 'cpu'))} {_ms(pairs.median('b', 'cpu'))} {_ms(change)}"
            f" {change / start[name] * 100:6.1f}%  {_ms(statistics.median(pairs.differences('wall')))}"
        )
    print(
        "change: copy minus installed, pair by pair; % start: of the installed command's CPU time over python -c pass"
    )
    return clean


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="counted pairs per command (default 21)")
    parser.add_argument("--only", help=f"commands to time, comma-separated, from: {', '.join(COMMANDS)}")
    parser.add_argument("--tree", type=Path, help="a folder holding a copy of the ctxmgr package to compare")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.only.split(",")] if args.only else list(COMMANDS)
    unknown = [name for name in names if name not in COMMANDS]
    if unknown:
        parser.error(f"unknown command {', '.join(unknown)}; choose from: {', '.join(COMMANDS)}")
    if args.tree is not None and not (args.tree / "ctxmgr" / "__init__.py").is_file():
        parser.error(f"{args.tree} holds no ctxmgr package (ctxmgr/__init__.py)")
    # Outside the repository: no project configuration of its own is read.
    with tempfile.TemporaryDirectory() as cwd:
        if args.tree is None:
            clean = against_python(names, args.runs, cwd)
        else:
            clean = against_tree(names, args.runs, args.tree.resolve(), cwd)
    if not clean:
        print("a command exited with an error: its figures are not its start-up", file=sys.stderr)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
