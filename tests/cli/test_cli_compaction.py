"""``ctxmgr trim`` with the compaction options, on a real conversation (a tau-bench
airline line) converted to every format with ``ctxmgr convert``, and on a real dataset."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr._validate import check_messages
from ctxmgr.cli import app
from ctxmgr.state._compaction import tokens_of

DATA = Path(__file__).resolve().parents[1] / "data"
FORMATS = ["openai-chat", "openai-responses", "anthropic", "gemini", "langchain", "native"]
COUNTERS = ["messages_dropped", "cleared_results", "truncated_outputs", "chars_removed", "tokens_removed"]


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def converted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The second conversation of tests/data/tau-airline-sample.jsonl in every format."""
    monkeypatch.chdir(tmp_path)
    line = (DATA / "tau-airline-sample.jsonl").read_bytes().splitlines()[1]
    (tmp_path / "chat.json").write_text(json.dumps({"messages": json.loads(line)["messages"]}), encoding="utf-8")
    paths = {}
    for name in FORMATS:
        done = invoke("convert", "chat.json", "--to", name, "-o", f"in-{name}.json")
        assert done.exit_code == 0, done.output
        paths[name] = tmp_path / f"in-{name}.json"
    return paths


def read(path: Path, fmt: str) -> list[Any]:
    return formats.load(path.read_bytes(), source=str(path), fmt=fmt).state.context


def trim(path: Path, *options: str) -> tuple[int, dict[str, Any], Path]:
    out = path.with_name("out-" + path.name)
    done = invoke("trim", str(path), *options, "-o", str(out), "--json")
    return done.exit_code, orjson.loads(done.stdout), out


@pytest.mark.parametrize("fmt", FORMATS)
def test_max_tokens_keeps_the_file_within_budget_with_valid_pairs(converted: dict[str, Path], fmt: str) -> None:
    before = read(converted[fmt], fmt)
    code, report, out = trim(converted[fmt], "--max-tokens", "2500", "--start-on", "user")
    assert code == 0
    after = read(out, fmt)
    (entry,) = report["files"]
    assert tokens_of(after) <= 2500
    assert entry["tokens_after"] <= 2500
    assert check_messages(after, target=fmt if fmt != "native" else None) == []
    assert after[0].text() == before[0].text()  # the rules
    assert after[-1].text() == before[-1].text()  # the last request
    assert [m.role for m in after[1:2]] == ["user"]
    assert entry["messages_dropped"] == len(before) - len(after) > 0
    assert report["totals"]["messages_dropped"] == entry["messages_dropped"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_clearing_and_truncation_keep_every_pair(converted: dict[str, Path], fmt: str) -> None:
    before = read(converted[fmt], fmt)
    code, report, out = trim(
        converted[fmt], "--clear-tool-results", "--keep-tool-results", "2", "--max-tool-output", "60"
    )
    assert code == 0
    after = read(out, fmt)
    assert len(after) == len(before)
    assert check_messages(after, target=fmt if fmt != "native" else None) == []
    tools = [m.text() for m in after if m.role == "tool"]
    originals = [m.text() for m in before if m.role == "tool"]
    cleared = [t for t in tools if t.startswith("[tool result cleared by ctxmgr: ")]
    # All but the 2 most recent, unless shorter than their placeholder (left as they were).
    assert all(t in cleared or (t == o and len(o) < 120) for t, o in zip(tools[:-2], originals, strict=False))
    assert len(cleared) >= 4
    (entry,) = report["files"]
    assert entry["cleared_results"] == len(cleared)
    assert [name for name in entry if name in COUNTERS] == COUNTERS
    assert entry["tokens_removed"] == entry["tokens_before"] - entry["tokens_after"]


def test_a_dataset_in_place_reports_each_line_and_the_totals(tmp_path: Path) -> None:
    data = tmp_path / "tau.jsonl"
    shutil.copyfile(DATA / "tau-airline-slice.jsonl", data)
    done = invoke("trim", str(data), "-i", "--max-tokens", "2000", "--clear-tool-results", "--json")
    assert done.exit_code == 0, done.output
    totals = orjson.loads(done.stdout)["totals"]
    assert totals["messages_dropped"] == totals["messages_before"] - totals["messages_after"]
    assert totals["cleared_results"] > 0
    for line in data.read_bytes().splitlines():
        messages = formats.load(line, source="line").state.context
        assert tokens_of(messages) <= 2000
        assert not {p.code for p in check_messages(messages)} & {"orphan-result", "missing-result", "tool-first"}


def test_a_pin_that_matches_nothing_is_one_warning_on_stderr(converted: dict[str, Path]) -> None:
    done = invoke("trim", str(converted["openai-chat"]), "--max-tokens", "3000", "--pin-match", "no such text")
    assert done.exit_code == 0
    assert done.stderr.count("warning:") == 1
    assert "pin_match 'no such text' matched no message" in done.stderr


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--max-tokens", "0"], "0 is not in the range x>=1"),
        (["--pin-index", "2"], "apply only with max_tokens"),
        (["--max-tokens", "9", "--start-on", "bot"], "--start-on must be 'user', got 'bot'"),
        (["--max-tokens", "9", "--pin-index", "x"], "--pin-index must be a whole number >= 0, got 'x'"),
    ],
)
def test_bad_values_exit_2(converted: dict[str, Path], options: list[str], message: str) -> None:
    done = invoke("trim", str(converted["openai-chat"]), *options)
    assert done.exit_code == 2
    assert message in done.stderr


def test_a_project_may_set_how_to_compact_but_not_the_pins(converted: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "ctxmgr.toml").write_text("[trim]\nmax-tokens = 2500\nclear-tool-results = true\n", encoding="utf-8")
    done = invoke("trim", str(converted["anthropic"]), "--json")
    assert done.exit_code == 0, done.output
    entry = orjson.loads(done.stdout)["files"][0]
    assert entry["tokens_after"] <= 2500
    assert entry["cleared_results"] > 0
    (tmp_path / "ctxmgr.toml").write_text('[trim]\npin-match = ["x"]\n', encoding="utf-8")
    refused = invoke("trim", str(converted["anthropic"]))
    assert refused.exit_code == 2
    assert "pin-match" in refused.stderr


def test_without_the_new_options_trim_is_what_it_was(converted: dict[str, Path]) -> None:
    plain = invoke("trim", str(converted["openai-chat"]), "-n", "2", "--json")
    assert not set(COUNTERS) & set(orjson.loads(plain.stdout)["files"][0])


def test_run_applies_the_compaction_after_the_users_manager(converted: dict[str, Path]) -> None:
    manager = Path(__file__).resolve().parents[2] / "samples" / "managers" / "keep_last.py"
    source = converted["openai-responses"]
    done = invoke(
        "run", str(source), "--manager", f"{manager}:KeepLastMessages", "--option", "count=30",
        "--clear-tool-results", "--keep-tool-results", "1", "--max-tokens", "2500", "--json",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    entry = orjson.loads(done.stdout)["files"][0]
    assert entry["messages_after"] <= 30
    assert entry["tokens_after"] <= 2500
    assert entry["cleared_results"] > 0


def test_the_view_marks_edited_messages_apart_from_dropped_ones(
    converted: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setenv("NO_COLOR", "1")
    done = invoke(
        "trim", str(converted["openai-chat"]), "--clear-tool-results", "--keep-tool-results", "1", "--view",
        "-o", "viewed.json",
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    rows = [line for line in done.stderr.splitlines() if " ~ " in line]
    assert rows
    assert all("tool" in row and "→" in row and "[tool result cleared by ctxmgr: " in row for row in rows)
    assert f"dropped 0   edited {len(rows)}" in done.stderr
    assert " ✗ " not in done.stderr


def test_one_note_per_file_says_what_was_removed(converted: dict[str, Path]) -> None:
    done = invoke("trim", str(converted["gemini"]), "--max-tokens", "2500", "--clear-tool-results", "-o", "n.json")
    assert done.exit_code == 0
    (line,) = [line for line in done.stderr.splitlines() if "compacted:" in line]
    assert re.fullmatch(
        r"note: .*in-gemini\.json: compacted: [\d,]+ messages dropped, [\d,]+ tool results cleared; "
        r"[\d,]+ characters, [\d,]+ est\. tokens removed",
        line,
    )
    quiet = invoke("trim", str(converted["gemini"]), "--max-tokens", "2500", "-q", "-o", "q.json")
    assert "compacted:" not in quiet.stderr


def test_keep_tool_results_0_clears_every_result_of_a_responses_file(tmp_path: Path) -> None:
    sample = Path(__file__).resolve().parents[2] / "samples" / "openai-responses.json"
    out = tmp_path / "cleared.json"
    done = invoke("trim", str(sample), "--clear-tool-results", "--keep-tool-results", "0", "--clear-tool-inputs",
                  "-o", str(out), "--json")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert orjson.loads(done.stdout)["files"][0]["cleared_results"] == 2  # the third is shorter than a placeholder
    items = orjson.loads(out.read_bytes())["input"]
    outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
    assert [o.startswith("[tool result cleared by ctxmgr: ") for o in outputs] == [True, True, False]
    arguments = [orjson.loads(i["arguments"]) for i in items if i.get("type") == "function_call"]
    assert [set(a) == {"ctxmgr_cleared"} for a in arguments] == [True, True, False]
    assert check_messages(read(out, "openai-responses"), target="openai-responses") == []


def _dataset(tmp_path: Path, fmt: str) -> Path:
    """The 4 tau-bench conversations of tests/data/tau-airline-sample.jsonl, in ``fmt``."""
    source = tmp_path / "sample.jsonl"
    shutil.copyfile(DATA / "tau-airline-sample.jsonl", source)
    if fmt == "openai-chat":
        return source
    out = tmp_path / f"{fmt}.jsonl"
    fix = ["--fix-call-ids"] if fmt == "anthropic" else []  # Anthropic refuses tau's reused call ids
    done = invoke("convert", str(source), "--to", fmt, *fix, "-o", str(out))
    assert done.exit_code == 0, done.output
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_dataset_over_the_budget_is_one_warning_with_its_count(tmp_path: Path, fmt: str) -> None:
    data = _dataset(tmp_path, fmt)
    # A budget below each line's rules: every line is over it.
    done = invoke("trim", str(data), "--max-tokens", "50", "-o", str(tmp_path / "out.jsonl"))
    assert done.exit_code == 0, done.output
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, done.stderr
    assert re.search(
        r"the messages never cut \(rules, last user request, pins\) take [\d,]+ to [\d,]+ tokens in 4 of 4 "
        r"conversations \(lines 1, 2, 3, 4; each in --json\), over the budget of 50: kept, everything else dropped",
        warnings[0],
    ), warnings[0]
    # --json keeps each line's own warning, with its tokens.
    report = orjson.loads(invoke("trim", str(data), "--max-tokens", "50", "--json").stdout)
    detail = report["files"][0]["warnings"]
    assert [int(w.split(":")[0].removeprefix("line ")) for w in detail] == [1, 2, 3, 4]
    assert all(re.search(r"take [\d,]+ tokens, over the budget of 50", w) for w in detail)


def test_a_pin_that_matches_nothing_in_a_dataset_is_one_warning(tmp_path: Path) -> None:
    data = _dataset(tmp_path, "openai-chat")
    done = invoke(
        "trim", str(data), "--max-tokens", "3000", "--pin-match", "no such text", "--pin-match", "Airline Agent",
        "--pin-index", "40", "-o", str(tmp_path / "out.jsonl"),
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len([w for w in warnings if "pin_match" in w]) == 1, done.stderr
    pin_match = "pin_match 'no such text' matched no message in 4 of 4 conversations (lines 1, 2, 3, 4;"
    assert any(pin_match in w for w in warnings)
    # The sample's conversations have 32, 40, 20 and 42 messages: position 40 is past the first three.
    past = [w for w in warnings if "pin_index 40 is past the last message" in w]
    assert len(past) == 1, done.stderr
    assert "in 3 of 4 conversations (lines 1, 2, 3;" in past[0]
    done = invoke("trim", str(data), "--max-tokens", "3000", "--pin-match", "no such text", "--json")
    detail = orjson.loads(done.stdout)["files"][0]["warnings"]
    assert detail == [f"line {n}: pin_match 'no such text' matched no message" for n in range(1, 5)]


def test_a_dataset_line_alone_keeps_its_own_warning(tmp_path: Path) -> None:
    data = tmp_path / "one.jsonl"
    data.write_bytes((DATA / "tau-airline-sample.jsonl").read_bytes().splitlines(keepends=True)[0])
    done = invoke("trim", str(data), "--max-tokens", "50", "-o", str(tmp_path / "out.jsonl"))
    assert done.exit_code == 0, done.output
    assert re.search(r"one\.jsonl:1: the messages never cut .* take [\d,]+ tokens, over the budget of 50", done.stderr)


def _tool_results(path: Path) -> list[tuple[str, str]]:
    """(tool name, result text) of each tool message of an OpenAI chat file."""
    messages = json.loads(path.read_bytes())["messages"]
    names = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or ()}
    return [(names[m["tool_call_id"]], m["content"]) for m in messages if m["role"] == "tool"]


@pytest.mark.parametrize("key", ["exclude-tools", "exclude_tools", "exclude-tool"])
def test_a_project_may_name_the_tools_never_cleared(converted: dict[str, Path], tmp_path: Path, key: str) -> None:
    path = converted["openai-chat"]
    before = _tool_results(path)
    kept = sorted({name for name, _ in before})[0]
    (tmp_path / "ctxmgr.toml").write_text(
        f'[trim]\nclear-tool-results = true\nkeep-tool-results = 0\n{key} = ["{kept}"]\n', encoding="utf-8"
    )
    code, _, out = trim(path)
    assert code == 0
    after = _tool_results(out)
    assert [t for n, t in after if n == kept] == [t for n, t in before if n == kept]
    assert any(t.startswith("[tool result cleared by ctxmgr: ") for n, t in after if n != kept)
    # The command line's --exclude-tool replaces the file's list.
    code, _, out = trim(path, "--exclude-tool", "no_such_tool")
    assert code == 0
    assert any(t.startswith(f"[tool result cleared by ctxmgr: {kept} ") for n, t in _tool_results(out) if n == kept)
