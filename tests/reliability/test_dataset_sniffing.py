"""A CI gate that a first line cannot open: what decides that a JSONL file is a dataset.

A dataset whose first line holds no conversation (``{"_meta": ...}``, a header) used to
read as a file of no conversation format, which a folder walk skips: ``trim --check``,
``validate``, ``stats`` and ``summarize --check`` then passed over every conversation below
it. A JSONL file is a dataset when its first line, or any of the next lines of the first
read, is a conversation; its lines that are not are bad lines, reported under
``--on-error`` (exit 2 by default). Only a file none of whose sampled lines is a
conversation (a log of events) is skipped in a walk, and named.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.files._reading import SNIFF_BYTES

runner = CliRunner()

# Each command would pass on the clean file alone, and fail (or change) on the dataset's
# conversations: longer than its limits, and holding a tool result without its call.
COMMANDS: dict[str, list[str]] = {
    "trim --check": ["trim", "--check", "-n", "2"],
    "validate": ["validate"],
    "stats": ["stats"],
    "summarize --check": ["summarize", "--model", "offline", "--check", "--max-messages", "2", "--keep-recent", "1"],
}
FIRST_LINES: dict[str, Any] = {
    "metadata": {"_meta": {"version": 2, "source": "export"}},
    "a header": {"dataset": "support-chats", "rows": 3},
    "an empty object": {},
}
VIOLATING = {"messages": [
    {"role": "user", "content": "where is my order?"},
    {"role": "tool", "tool_call_id": "call_planted", "content": "refund approved"},
    {"role": "assistant", "content": "It was refunded."},
    {"role": "user", "content": "thanks"},
    {"role": "assistant", "content": "You are welcome."},
]}
CLEAN = {"messages": [{"role": "user", "content": "hello"}]}


def _jsonl(*records: Any) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


def _folder(tmp_path: Path, first: Any, conversations: int = 3) -> Path:
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "clean.json").write_text(json.dumps(CLEAN))
    (folder / "data.jsonl").write_text(_jsonl(first, *[VIOLATING] * conversations))
    return folder


@pytest.mark.parametrize("first", FIRST_LINES)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_first_line_of_no_conversation_does_not_skip_the_dataset(command: str, first: str, tmp_path: Path) -> None:
    folder = _folder(tmp_path, FIRST_LINES[first])
    before = (folder / "data.jsonl").read_bytes()
    result = runner.invoke(app, [*COMMANDS[command], str(folder)])
    assert result.exit_code == 2, result.output
    assert f"error: {folder / 'data.jsonl'}:1: not a conversation (every line of a dataset must be one)\n" in (
        result.stderr)
    assert "skipped" not in result.stderr
    assert (folder / "data.jsonl").read_bytes() == before


def test_a_conversation_further_down_the_first_read_makes_a_dataset(tmp_path: Path) -> None:
    """Every line of the first read is looked at, its keys however escaped; the first bad line is named."""
    folder = tmp_path / "chats"
    folder.mkdir()
    header = _jsonl(*({"event": "header", "n": i} for i in range(10_000)))
    assert len(header) < SNIFF_BYTES
    escaped = json.dumps(VIOLATING).replace('"messages"', '"\\u006dessages"')
    (folder / "data.jsonl").write_text(header + escaped + "\n")
    result = runner.invoke(app, ["trim", "--check", str(folder)])
    assert result.exit_code == 2, result.output
    assert f"error: {folder / 'data.jsonl'}:1: not a conversation" in result.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_the_walk_still_skips_and_names_a_file_of_no_conversation(command: str, tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "clean.json").write_text(json.dumps(CLEAN))
    events = [{"event": "deploy", "step": i, "tags": []} for i in range(50)]
    (folder / "events.jsonl").write_text(_jsonl(*events, [], [1, 2, 3], ["a", "b"]))  # arrays of no message
    result = runner.invoke(app, [*COMMANDS[command], str(folder)])
    assert result.exit_code == 0, result.output
    assert f"skipped: {folder / 'events.jsonl'} (valid JSON of no conversation format)\n" in result.stderr
    assert "error" not in result.stderr


def test_a_jsonl_message_list_is_still_one_conversation(tmp_path: Path) -> None:
    """One message a line is a conversation, not a dataset of bad lines."""
    path = tmp_path / "chat.jsonl"
    path.write_text(_jsonl(*VIOLATING["messages"][:1], *VIOLATING["messages"][2:]))
    result = runner.invoke(app, ["stats", "--json", str(path)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["files"][0]
    assert (report["format"], report["conversations"], report["messages"]) == ("openai-chat", 1, 4)
