"""SWE-agent trajectories and OpenHands event streams through the command line, as a user
runs it on the real files: validate, stats, trim (every compaction), summarize
``--model offline``, convert to the six formats, and a folder walk that takes ``.traj``."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from _trajectory_support import OPENHANDS_FILES, SWE_AGENT_FILES
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr.cli import app

runner = CliRunner()
FILES = [*SWE_AGENT_FILES, *OPENHANDS_FILES]
KIND = {path: path.parent.name for path in FILES}
TARGETS = ["native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"]
COMPACTIONS = [
    ["trim", "-n", "1"],
    ["trim", "--max-tokens", "1500"],
    ["trim", "--clear-tool-results"],
    ["trim", "--max-tool-output", "200"],
    ["summarize", "--model", "offline", "--max-messages", "6", "--keep-recent", "2"],
]


def _history(value: Any) -> list[Any]:
    return value["history"] if isinstance(value, dict) else value


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_validate_and_stats_name_the_kind(path: Path) -> None:
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.replace("\n", " ").startswith(f"{path}: ok (1")
    result = runner.invoke(app, ["stats", "--json", str(path)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["files"][0]["format"] == KIND[path]
    assert report["files"][0]["messages"] > 0


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("command", COMPACTIONS, ids=lambda c: " ".join(c[:2]))
def test_every_compaction_writes_the_tools_shape_back(path: Path, command: list[str], tmp_path: Path) -> None:
    out = tmp_path / path.name
    result = runner.invoke(app, [*command, "--no-view", "-o", str(out), str(path)])
    assert result.exit_code == 0, result.output
    before, after = orjson.loads(path.read_bytes()), orjson.loads(out.read_bytes())
    again = formats.load(out.read_bytes(), source=out.name)
    assert again.format == KIND[path]
    assert runner.invoke(app, ["validate", str(out)]).exit_code == 0
    if isinstance(before, dict):  # the trajectory's other keys are untouched
        assert {k: v for k, v in after.items() if k != "history"} == {k: v for k, v in before.items() if k != "history"}
    # Every event or item written is the input's, or the input's with its content edited
    # (a summary is the tool's own kind of record, at the head or the end).
    old = _history(before)
    for record in _history(after):
        if record in old:
            continue
        if record.get("message_type") == "summary" or record.get("action") == "condensation":
            assert again.state.context_summary
            continue
        assert any(
            set(record) == set(o) and record.get("role", record.get("id")) == o.get("role", o.get("id")) for o in old
        )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_trim_with_nothing_to_do_writes_the_records_unchanged(path: Path, tmp_path: Path) -> None:
    out = tmp_path / path.name
    result = runner.invoke(app, ["trim", "-n", "100", "--no-view", "-o", str(out), str(path)])
    assert result.exit_code == 0, result.output
    assert orjson.loads(out.read_bytes()) == orjson.loads(path.read_bytes())
    assert out.read_bytes().rstrip(b"\n") == path.read_bytes().rstrip(b"\n")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("target", TARGETS)
def test_converted_to_each_of_the_six_formats_it_validates(path: Path, target: str, tmp_path: Path) -> None:
    out = tmp_path / f"{path.stem}.json"
    result = runner.invoke(app, ["convert", "--to", target, "-o", str(out), str(path)])
    assert result.exit_code == 0, result.output
    converted = formats.load(out.read_bytes(), source=out.name)
    assert converted.format == target
    source = formats.load(path.read_bytes(), source=path.name)
    assert len(converted.state.context) >= 1
    assert [m.role for m in converted.state.context if m.role != "tool"][:2] == [
        m.role for m in source.state.context if m.role != "tool"
    ][:2]
    result = runner.invoke(app, ["validate", "--from", target, str(out)])
    assert result.exit_code == 0, result.output


def test_summarize_offline_on_a_trajectory_puts_the_summary_in_a_history_item(tmp_path: Path) -> None:
    path = SWE_AGENT_FILES[-1]
    out = tmp_path / path.name
    command = ["summarize", "--model", "offline", "--max-messages", "4", "--keep-recent", "2", "--no-view"]
    result = runner.invoke(app, [*command, "-o", str(out), str(path)])
    assert result.exit_code == 0, result.output
    history = orjson.loads(out.read_bytes())["history"]
    assert [item["role"] for item in history[:2]] == ["system", "system"]
    assert history[1]["message_type"] == "summary"
    assert history[1]["agent"] == "main"
    assert history[1]["content"].startswith("[ctxmgr: summary of the earlier conversation]\n")
    assert history[-2:] == orjson.loads(path.read_bytes())["history"][-2:]


def test_summarize_offline_on_events_writes_a_condensation_action(tmp_path: Path) -> None:
    path = OPENHANDS_FILES[1]
    out = tmp_path / path.name
    command = ["summarize", "--model", "offline", "--max-messages", "4", "--keep-recent", "2", "--no-view"]
    result = runner.invoke(app, [*command, "-o", str(out), str(path)])
    assert result.exit_code == 0, result.output
    events = orjson.loads(out.read_bytes())
    assert events[-1]["action"] == "condensation"
    assert events[-1]["args"]["summary"]
    assert events[-1]["args"]["summary_offset"] == 1
    ids = [e["id"] for e in events]
    assert all(e.get("cause") is None or e["cause"] in ids for e in events)
    stats = json.loads(runner.invoke(app, ["stats", "--json", str(out)]).stdout)
    assert stats["files"][0]["conversations_with_summary"] == 1


def test_a_folder_walk_takes_traj_files(tmp_path: Path) -> None:
    for path in FILES:
        shutil.copy(path, tmp_path / path.name)
    result = runner.invoke(app, ["stats", "--json", str(tmp_path)])
    assert result.exit_code == 0, result.output
    found = {Path(entry["path"]).name: entry["format"] for entry in json.loads(result.stdout)["files"]}
    assert found == {path.name: KIND[path] for path in FILES}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_in_place_then_restore_gives_the_file_back_byte_for_byte(path: Path, tmp_path: Path) -> None:
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    settled = time.time() - 60  # a session its tool finished writing a minute ago (a fresher one is refused)
    os.utime(copy, (settled, settled))
    result = runner.invoke(app, ["trim", "-i", "--max-tokens", "1500", "--no-view", str(copy)])
    assert result.exit_code == 0, result.output
    assert copy.read_bytes() != path.read_bytes()
    assert (tmp_path / f"{path.name}.ctxmgr-removed.jsonl").exists()
    result = runner.invoke(app, ["restore", str(copy)])
    assert result.exit_code == 0, result.output
    assert copy.read_bytes() == path.read_bytes()


def test_from_a_trajectory_kind_on_another_file_names_what_is_missing(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_bytes(b'[{"role": "user", "content": "hi"}]')
    result = runner.invoke(app, ["stats", "--from", "openhands", str(chat)])
    assert result.exit_code == 2
    assert "[0]: not an OpenHands event (no 'action' or 'observation' name)" in result.stderr
    result = runner.invoke(app, ["stats", "--from", "swe-agent", str(chat)])
    assert result.exit_code == 2
    assert "history: expected a list of history items, got a list" not in result.stderr
    assert "history: expected a list of history items" in result.stderr


def test_an_evaluation_output_is_a_dataset_of_event_streams(tmp_path: Path) -> None:
    # OpenHands' evaluation output: one record a line, its events under "history".
    events = orjson.loads(OPENHANDS_FILES[1].read_bytes())
    rows = [{"instance_id": f"case-{n}", "history": events, "metrics": {"n": n}} for n in range(2)]
    dataset, out = tmp_path / "output.jsonl", tmp_path / "trimmed.jsonl"
    dataset.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    result = runner.invoke(app, ["trim", "--max-tokens", "3500", "--no-view", "-o", str(out), str(dataset)])
    assert result.exit_code == 0, result.output
    written = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [row["instance_id"] for row in written] == ["case-0", "case-1"]
    assert [row["metrics"] for row in written] == [{"n": 0}, {"n": 1}]
    assert [[e["id"] for e in row["history"]] for row in written] == [[0, 1, 2, 4, 27, 28, 47, 48, 49]] * 2
    stats = json.loads(runner.invoke(app, ["stats", "--json", str(out)]).stdout)
    assert (stats["files"][0]["format"], stats["files"][0]["conversations"]) == ("openhands", 2)


@pytest.mark.parametrize("target", ["swe-agent", "openhands"])
def test_converting_another_format_into_a_session_log_is_refused(target: str, tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_bytes(b'[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]')
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["convert", "--to", target, "-o", str(out), str(chat)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")
    assert target in result.stderr
    assert not out.exists()
