"""The compaction options end to end on real agent data, through the command line: 40
tau-bench airline conversations (``bench/tau/tau-airline-gpt4o.jsonl``) converted with
``ctxmgr convert`` to each format, trimmed in place with each policy (and compacted by
``run`` after a manager of the user's), measured with ``stats --json``, checked with
``validate --for FORMAT --json`` and put back with ``ctxmgr restore``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr.cli import app

TAU = Path(__file__).resolve().parents[2] / "bench" / "tau" / "tau-airline-gpt4o.jsonl"
MANAGER = Path(__file__).resolve().parents[2] / "samples" / "managers" / "keep_last.py"
LINES = 40
FORMATS = ["openai-chat", "openai-responses", "anthropic", "gemini", "langchain", "native"]
POLICIES = {
    "max-tokens": ["--max-tokens", "2000"],
    "clearing": ["--clear-tool-results", "--keep-tool-results", "2"],
    "truncation": ["--max-tool-output", "200"],
    "all three": [
        "--max-tokens",
        "2000",
        "--clear-tool-results",
        "--keep-tool-results",
        "2",
        "--max-tool-output",
        "200",
    ],
    # Over the budget where the rules, the last request and the pins alone exceed it (warned);
    # the pins include tool results whose call ids the conversation reuses.
    "pins": ["--max-tokens", "1700", "--start-on", "user", "--pin-match", "baggage"],
    # `run`: the user's manager first (keep the last 6 messages), then the compaction.
    "run": [
        "--manager",
        f"{MANAGER}:KeepLastMessages",
        "--max-tokens",
        "2000",
        "--clear-tool-results",
        "--max-tool-output",
        "100",
    ],
}
PROVIDERS = {"openai-chat", "openai-responses", "anthropic", "gemini"}
PAIRING = {"orphan-result", "missing-result", "tool-first"}
OVER = re.compile(r"^line (\d+): the messages never cut \(rules, last user request, pins\) take ([\d,]+) tokens, over")


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The first 40 conversations, one dataset per format, each made by ``ctxmgr convert``."""
    folder = tmp_path_factory.mktemp("tau")
    source = folder / "tau.jsonl"
    source.write_bytes(b"".join(TAU.read_bytes().splitlines(keepends=True)[:LINES]))
    paths = {}
    for fmt in FORMATS:
        paths[fmt] = folder / f"{fmt}.jsonl"
        fix = ["--fix-call-ids"] if fmt == "anthropic" else []  # Anthropic refuses tau's reused call ids
        done = invoke("convert", str(source), "--to", fmt, *fix, "-o", str(paths[fmt]))
        assert done.exit_code == 0, done.output
        assert len(paths[fmt].read_bytes().splitlines()) == LINES
    return paths


def tokens_per_line(path: Path, folder: Path) -> list[int]:
    """``stats --json``'s estimated tokens of each line of ``path`` (one file a line)."""
    folder.mkdir()
    lines = path.read_bytes().splitlines(keepends=True)
    for number, line in enumerate(lines, 1):
        (folder / f"{number:03}.jsonl").write_bytes(line)
    done = invoke("stats", str(folder), "--json", "--from", fmt_of(path))
    assert done.exit_code == 0, done.output
    files = sorted(orjson.loads(done.stdout)["files"], key=lambda f: f["path"])
    assert len(files) == len(lines)
    return [f["estimated_tokens"] for f in files]


def fmt_of(path: Path) -> str:
    return path.stem.removeprefix("out-")


def problems(path: Path, fmt: str) -> dict[int, set[str]]:
    """``validate --for FORMAT --json`` (the rules every provider shares for LangChain and
    native, which no provider reads as they are): the codes of the problems found, by line."""
    target = ["--for", fmt] if fmt in PROVIDERS else []
    done = invoke("validate", str(path), *target, "--json")
    assert done.exit_code in (0, 1), done.output
    found: dict[int, set[str]] = {}
    for entry in orjson.loads(done.stdout)["files"]:
        for problem in entry["problems"]:
            found.setdefault(problem["line"], set()).add(problem["code"])
    return found


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("fmt", FORMATS)
def test_in_place_on_real_conversations_in_every_format(
    converted: dict[str, Path], fmt: str, policy: str, tmp_path: Path
) -> None:
    original = converted[fmt].read_bytes()
    path = tmp_path / f"{fmt}.jsonl"
    path.write_bytes(original)
    before = problems(path, fmt)
    tokens_before = tokens_per_line(path, tmp_path / "before")

    done = invoke("run" if policy == "run" else "trim", str(path), "-i", *POLICIES[policy], "--json")
    assert done.exit_code == 0, done.output
    report = orjson.loads(done.stdout)
    totals = report["totals"]
    assert path.read_bytes() != original
    assert len(path.read_bytes().splitlines()) == LINES

    # The budget holds on every line, but where the messages never cut alone exceed it (warned).
    tokens_after = tokens_per_line(path, tmp_path / "after")
    warned = [OVER.match(w) for w in report["files"][0]["warnings"]]  # all of them (stderr says a few)
    over = {int(m[1]): int(m[2].replace(",", "")) for m in warned if m}
    options = POLICIES[policy]
    if "--max-tokens" in options:
        budget = int(options[options.index("--max-tokens") + 1])
        for number, tokens in enumerate(tokens_after, 1):
            assert tokens <= budget or number in over, (number, tokens)
        assert all(tokens > budget for tokens in over.values())
        assert bool(over) == (policy == "pins")
    else:
        assert not over
    assert all(a <= b for a, b in zip(tokens_after, tokens_before, strict=True))
    removed = sum(tokens_before) - sum(tokens_after)  # under `run`, also what the user's manager dropped
    assert removed == totals["tokens_removed"] > 0 if policy != "run" else removed > totals["tokens_removed"] > 0

    # No orphaned call or result, and no kind of problem the input did not already have.
    after = problems(path, fmt)
    assert not any(codes & PAIRING for codes in after.values())
    for number, codes in after.items():
        assert codes <= before.get(number, set()), (number, codes, before.get(number))

    if policy == "pins":  # every message that matches is kept, whole
        pairs = zip(original.splitlines(), path.read_bytes().splitlines(), strict=True)
        for number, (line_before, line_after) in enumerate(pairs, 1):
            texts = [m.text() for m in formats.load(line_after, source="after", fmt=fmt).state.context]
            pinned = [m.text() for m in formats.load(line_before, source="before", fmt=fmt).state.context]
            assert [t for t in pinned if "baggage" in t and t not in texts] == [], number

    # The way back: the input, byte for byte.
    restored = invoke("restore", str(path))
    assert restored.exit_code == 0, restored.output
    assert path.read_bytes() == original
