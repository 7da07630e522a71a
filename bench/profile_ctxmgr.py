"""Where ctxmgr's time goes on a dataset, step by step, next to the orjson baseline.

Runs the steps of ``ctxmgr.files._compaction.compact_dataset_line`` one by one over every line of a dataset
(the same calls, in the same order) and adds up the time of each: parse, detection,
reading into the model (pydantic), the trim itself, the report counters
(``estimate_tokens``), the provider-rule check, dumping and writing. The orjson baseline's
steps (parse, slice, dump) are timed on the same lines. Then, optionally, cProfile's top
functions, and the start-up imports.

    python bench/profile_ctxmgr.py                     # the 100 MB dataset (generated if missing)
    python bench/profile_ctxmgr.py --mb 10 --cprofile  # and cProfile's top functions
    python bench/profile_ctxmgr.py --startup           # import times of `ctxmgr trim`
    python bench/profile_ctxmgr.py --tau anthropic --mb 10 --cprofile   # the real conversations
    python bench/profile_ctxmgr.py --tau openai-chat --mb 5 --offline   # summarize --model offline
    python bench/profile_ctxmgr.py --startup validate  # import times of another command
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io as stdio
import pstats
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import _data
import orjson

from ctxmgr import formats
from ctxmgr._pipeline import compact_conversation
from ctxmgr.files import FileResult, FileSink, Settings, _compaction as compaction, _reading as reading, compact_file
from ctxmgr.state import Message, MessageContextManager

DATA = Path(__file__).resolve().parent / "data"


def _orjson_trim(messages: list[Any], keep: int) -> list[Any] | None:
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if len(users) <= keep:
        return None
    start = users[-keep] if keep else len(messages)
    return [m for m in messages if m.get("role") == "system"] + [
        m for m in messages[start:] if m.get("role") != "system"
    ]


def steps(path: Path, keep: int) -> tuple[dict[str, float], dict[str, float], int, int]:
    """Seconds per step for ctxmgr's dataset path and for the orjson baseline."""
    ours: dict[str, float] = defaultdict(float)
    base: dict[str, float] = defaultdict(float)
    manager = MessageContextManager(keep)
    settings = Settings()
    result = FileResult(source=str(path))
    name = str(path)
    clock = time.perf_counter
    lines = messages = 0
    with tempfile.TemporaryDirectory() as folder:
        sink = FileSink(Path(folder) / "out.jsonl")
        with open(path, "rb") as handle:
            t = clock()
            head = handle.read(reading.SNIFF_BYTES)
            iterator = reading.iter_lines(handle, head)
            ours["read lines"] += clock() - t
            while True:
                t0 = clock()
                item = next(iterator, None)
                t1 = clock()
                ours["read lines"] += t1 - t0
                if item is None:
                    break
                _number, raw = item
                if not raw.strip():
                    continue
                lines += 1
                record = orjson.loads(raw)
                t2 = clock()
                reading.is_conversation_record(record)
                reader = formats.detect(record, source=name)
                t3 = clock()
                conversation = reader.read(record, source=name, layout="document")
                t4 = clock()
                messages += len(conversation.state.context)
                outcome = compact_conversation(conversation, manager)
                changed = outcome.changed
                t5 = clock()
                result.add(outcome, keep=False)
                t6 = clock()
                problems = compaction.rule_problems(conversation, settings, conversation.format)
                t7 = clock()
                out = formats.dump(conversation) if changed else raw + b"\n"
                t8 = clock()
                sink.write(out)
                t9 = clock()
                ours["parse (orjson.loads)"] += t2 - t1
                ours["detect format"] += t3 - t2
                ours["read into model (pydantic)"] += t4 - t3
                ours["trim (manager + changed)"] += t5 - t4
                ours["report counters (estimate_tokens)"] += t6 - t5
                ours["provider-rule check (check_messages)"] += t7 - t6
                ours["dump (write from source records)"] += t8 - t7
                ours["write to sink"] += t9 - t8
                del problems
                # The baseline on the same line: parse, slice, dump.
                b0 = clock()
                value = orjson.loads(raw)
                b1 = clock()
                kept = _orjson_trim(value["messages"] if "messages" in value else value["context"], keep)
                b2 = clock()
                if kept is not None:
                    value["messages" if "messages" in value else "context"] = kept
                    orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
                b3 = clock()
                base["parse (orjson.loads)"] += b1 - b0
                base["slice"] += b2 - b1
                base["dump (orjson.dumps)"] += b3 - b2
            t = clock()
            sink.commit()
            ours["commit (fsync + rename)"] += clock() - t
    return dict(ours), dict(base), lines, messages


def whole(path: Path, keep: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        sink = FileSink(Path(folder) / "o.jsonl")
        asyncio.run(compact_file(str(path), MessageContextManager(keep), sink, Settings()))
        return time.perf_counter() - started


def micro(path: Path, limit: int = 2000) -> list[tuple[str, float]]:
    """Per-message costs of the model's pieces, on the first ``limit`` lines' messages."""
    records: list[Any] = []
    with open(path, "rb") as handle:
        for number, line in enumerate(handle):
            if number >= limit:
                break
            records.append(orjson.loads(line))
    name = str(path)
    conversations = [formats.detect(r, source=name).read(r, source=name, layout="document") for r in records]
    models = [m for c in conversations for m in c.state.context]
    dumped = [m.model_dump() for m in models]
    clock = time.perf_counter
    rows = []

    def timed(label: str, fn: Any, count: int) -> None:
        # Without the collector: these lists keep every object alive, which a stream does not.
        gc.collect()
        gc.disable()
        try:
            started = clock()
            fn()
            rows.append((label, (clock() - started) / count * 1e6))
        finally:
            gc.enable()

    raw = [orjson.dumps(r) for r in records]
    timed("orjson.loads, per message (whole lines / messages)", lambda: [orjson.loads(r) for r in raw], len(models))
    timed("format adapter read, per message", lambda: [formats.detect(r, source=name).read(
        r, source=name, layout="document") for r in records], len(models))
    timed("Message.model_validate (native dict), per message", lambda: [Message.model_validate(d) for d in dumped],
          len(models))
    timed("Message.model_construct (no validation), per message",
          lambda: [Message.model_construct(**d) for d in dumped], len(models))
    timed("role scan on plain dicts, per message", lambda: [[m.get("role") for m in r["messages"]] for r in records
                                                            if "messages" in r], len(models))
    from ctxmgr.state import estimate_tokens

    timed("estimate_tokens, per message", lambda: [estimate_tokens(c.state.context) for c in conversations],
          len(models))
    from ctxmgr._validate import check_messages

    timed("check_messages, per message", lambda: [check_messages(c.state.context) for c in conversations],
          len(models))
    return rows


def cprofile_top(path: Path, keep: int, top: int) -> str:
    profiler = cProfile.Profile()
    with tempfile.TemporaryDirectory() as folder:
        manager = MessageContextManager(keep)
        sink = FileSink(Path(folder) / "o.jsonl")
        profiler.enable()
        asyncio.run(compact_file(str(path), manager, sink, Settings()))
        profiler.disable()
    out = stdio.StringIO()
    stats = pstats.Stats(profiler, stream=out).sort_stats("tottime")
    stats.print_stats(top)
    out.write("\n--- by cumulative time ---\n")
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


_STARTUP_ARGS = {
    "trim": ["--max-messages", "2", "--quiet", "--no-view", "-o", "/dev/null"],
    "validate": [],
    "stats": [],
    "convert": ["--to", "anthropic", "-o", "/dev/null"],
    "summarize": ["--model", "offline", "--max-messages", "4", "--no-cache", "--no-view", "-o", "/dev/null"],
}


def offline_profile(path: Path, top: int) -> str:
    """cProfile of ``ctxmgr summarize --model offline`` on ``path`` (in this process)."""
    from ctxmgr.cli import main as cli_main

    with tempfile.TemporaryDirectory() as folder:
        argv = sys.argv
        sys.argv = ["ctxmgr", "summarize", str(path), "--model", "offline", "--max-messages", "10", "--no-cache",
                    "-o", str(Path(folder) / "o.jsonl"), "--quiet", "--no-view"]
        profiler = cProfile.Profile()
        profiler.enable()
        try:
            cli_main()
        except SystemExit:
            pass
        finally:
            profiler.disable()
            sys.argv = argv
    out = stdio.StringIO()
    stats = pstats.Stats(profiler, stream=out).sort_stats("tottime")
    stats.print_stats(top)
    out.write("\n--- by cumulative time ---\n")
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def startup_imports(top: int, command: str = "trim") -> str:
    """The slowest imports of ``ctxmgr COMMAND`` (``python -X importtime``), self and cumulative."""
    small = _data.conversation_file(DATA, "openai", 10)
    argv = ["ctxmgr", command, str(small), *_STARTUP_ARGS[command]]
    code = (
        f"import sys; sys.argv={argv!r}"
        "\nfrom ctxmgr.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
    )
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative, module = line[len("import time:"):].split("|", 2)
        # One space before a top-level import, two more per level of nesting.
        rows.append((int(cumulative), int(self_us), module.rstrip()))
    top_level = [r for r in rows if not r[2].startswith("  ")]
    total = sum(r[0] for r in top_level)
    lines = [f"total imports: {total / 1000:.0f} ms; top-level imports by cumulative time:"]
    for cumulative, _self, module in sorted(top_level, reverse=True)[:top]:
        lines.append(f"  {cumulative / 1000:7.1f} ms  {module.strip()}")
    groups: dict[str, int] = defaultdict(int)
    for _cumulative, self_us, module in rows:
        groups[module.strip().split(".")[0]] += self_us
    lines.append("self time by root package:")
    for package, micros in sorted(groups.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"  {micros / 1000:7.1f} ms  {package}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100.0, help="dataset size (default 100)")
    parser.add_argument("--format", choices=_data.FORMATS, default="openai")
    parser.add_argument("--keep", type=int, default=2)
    parser.add_argument("--cprofile", action="store_true", help="also print cProfile's top functions")
    parser.add_argument("--tau", choices=_data.CTXMGR_FORMATS,
                        help="profile the real tau-bench conversations in this format instead of generated ones")
    parser.add_argument("--offline", action="store_true",
                        help="profile summarize --model offline on the dataset (and nothing else)")
    parser.add_argument("--startup", nargs="?", const="trim", choices=sorted(_STARTUP_ARGS),
                        help="also print the slowest imports of a command (default trim)")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    if args.tau:
        path, _lines = _data.tau_dataset(DATA, args.tau, args.mb, [sys.executable, "-m", "ctxmgr", "convert"])
    else:
        path, _lines = _data.dataset_file(DATA, args.format, args.mb)
    if args.offline:
        print(offline_profile(path, args.top))
        return
    size = path.stat().st_size / 1e6
    total = whole(path, args.keep)
    ours, base, lines, messages = steps(path, args.keep)
    base_total = sum(base.values())
    print(f"{path.name}: {size:.1f} MB, {lines} conversations, {messages} messages")
    print(f"compact_file (library, in process): {total:.2f} s = {total / size * 1000:.1f} ms/MB; "
          f"orjson baseline steps: {base_total:.2f} s ({total / base_total:.1f}x)\n")
    print(f"{'ctxmgr step':<42} {'s':>7} {'share':>6} {'us/msg':>7} {'x orjson total':>15}")
    for label, seconds in sorted(ours.items(), key=lambda kv: -kv[1]):
        print(f"{label:<42} {seconds:7.3f} {seconds / sum(ours.values()):6.1%} {seconds / messages * 1e6:7.2f} "
              f"{seconds / base_total:14.2f}x")
    print(f"{'sum of steps':<42} {sum(ours.values()):7.3f}")
    print(f"\n{'orjson baseline step':<42} {'s':>7}")
    for label, seconds in base.items():
        print(f"{label:<42} {seconds:7.3f}")
    print("\nper-message micro-costs (first 2,000 lines):")
    for label, micros in micro(path):
        print(f"  {label:<58} {micros:7.2f} us")
    if args.cprofile:
        print("\n" + cprofile_top(path, args.keep, args.top))
    if args.startup:
        print("\n" + startup_imports(args.top, args.startup))


if __name__ == "__main__":
    main()
