"""The agent tools' own folders: walked when named although hidden, ``.traj`` included, and
one ``stats`` line per session (its companion files, as a registry entry names them,
counted with it)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from _session_dummy import registered, session
from typer.testing import CliRunner

from ctxmgr.cli import app

RUNNER = CliRunner()
CHAT = {"messages": [{"role": "user", "content": "Where is A-100?"}, {"role": "assistant", "content": "Day 1."}]}


@pytest.fixture
def dummy_log() -> Iterator[None]:
    with registered():
        yield


def _stats(*arguments: str) -> dict[str, Any]:
    result = RUNNER.invoke(app, ["stats", "--json", *arguments])
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(value))


def test_a_hidden_folder_named_is_walked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    rollout = home / ".codex" / "sessions" / "2025" / "01" / "02" / "rollout-1.json"
    session_file = home / ".claude" / "projects" / "-work-app" / "abc.json"
    _write(rollout, CHAT)
    _write(session_file, CHAT)
    for named, found in ((home / ".codex", rollout), (home / ".codex" / "sessions", rollout)):
        assert [f["path"] for f in _stats(str(named))["files"]] == [str(found)]
    assert [f["path"] for f in _stats(str(home / ".claude" / "projects"))["files"]] == [str(session_file)]
    # Below a folder named, hidden folders are still left out, and said so.
    result = RUNNER.invoke(app, ["stats", "--json", str(home)])
    assert result.exit_code == 2
    assert "no .json, .jsonl or .traj files in this folder (2 skipped" in result.stderr


def test_a_hidden_folder_below_a_named_one_is_left_out(tmp_path: Path) -> None:
    _write(tmp_path / "chats" / "a.json", CHAT)
    _write(tmp_path / "chats" / ".old" / "b.json", CHAT)
    payload = _stats(str(tmp_path / "chats"))
    assert [f["path"] for f in payload["files"]] == [str(tmp_path / "chats" / "a.json")]
    assert [s["path"] for s in payload["skipped"]] == [str(tmp_path / "chats" / ".old")]


def test_trajectories_are_picked_up_by_walks(tmp_path: Path) -> None:
    _write(tmp_path / "runs" / "django-1234.traj", CHAT)
    _write(tmp_path / "runs" / "notes.txt", {"not": "read"})
    payload = _stats(str(tmp_path / "runs"))
    assert [f["path"] for f in payload["files"]] == [str(tmp_path / "runs" / "django-1234.traj")]
    result = RUNNER.invoke(app, ["trim", "--check", "-n", "0", str(tmp_path / "runs")])
    assert result.exit_code == 1, result.output  # read, and it would change


def test_a_session_and_its_companions_are_one_line(dummy_log: None, tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-work-app"
    _write(project / "s-1.json", session(4, "s-1"))
    _write(project / "s-1" / "agents" / "agent-a.json", session(2, "s-1"))
    _write(project / "s-1" / "agents" / "agent-b.json", session(1, "s-1"))
    _write(project / "s-2.json", session(3, "s-2"))
    _write(project / "s-2" / "notes" / "other.json", session(1, "s-2"))  # not a companion by the rule
    payload = _stats(str(tmp_path / "projects"))
    lines = {f["path"]: f for f in payload["files"]}
    assert sorted(lines) == sorted(
        str(p) for p in (project / "s-1.json", project / "s-2.json", project / "s-2" / "notes" / "other.json")
    )
    first = lines[str(project / "s-1.json")]
    assert first["companions"] == [str(project / "s-1" / "agents" / n) for n in ("agent-a.json", "agent-b.json")]
    assert first["conversations"] == 3
    assert first["messages"] == (1 + 8) + (1 + 4) + (1 + 2)
    assert first["messages_by_role"] == {"assistant": 7, "system": 3, "user": 7}
    assert "companions" not in lines[str(project / "s-2.json")]
    assert payload["total"]["conversations"] == 5  # every file still counted once
    assert payload["total"]["messages"] == 9 + 5 + 3 + 7 + 3


def test_the_table_shows_a_session_with_its_companions(dummy_log: None, tmp_path: Path) -> None:
    _write(tmp_path / "s-1.json", session(4))
    _write(tmp_path / "s-1" / "agents" / "agent-a.json", session(2))
    result = RUNNER.invoke(app, ["stats", str(tmp_path)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "dummy-log" in line]
    assert len(rows) == 1
    assert f"{tmp_path / 's-1.json'} (+1)" in rows[0]
    assert "(+N): a session counted with its N companion files" in result.stdout


def test_a_companion_named_without_its_session_keeps_its_line(dummy_log: None, tmp_path: Path) -> None:
    agent = tmp_path / "s-1" / "agents" / "agent-a.json"
    _write(tmp_path / "s-1.json", session(4))
    _write(agent, session(2))
    payload = _stats(str(agent))
    assert [f["path"] for f in payload["files"]] == [str(agent)]
    assert payload["files"][0]["conversations"] == 1


# -- on files in the tools' own layouts (tests/conversations/agents/sessions/SOURCE.md) --------

SESSIONS = Path(__file__).resolve().parents[1] / "conversations" / "agents" / "sessions"


def _home(tmp_path: Path) -> Path:
    """A home folder holding the vendored trees where the tools keep them: ~/.codex, ~/.claude."""
    home = tmp_path / "home"
    shutil.copytree(SESSIONS / "codex", home / ".codex")
    shutil.copytree(SESSIONS / "claude", home / ".claude")
    return home


def test_a_codex_rollout_under_a_wrong_from_is_an_error_naming_it(tmp_path: Path) -> None:
    home = _home(tmp_path)
    rollout = next((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    for command in (["stats"], ["trim", "--check", "-n", "1"], ["convert", "--to", "openai-chat"]):
        result = RUNNER.invoke(app, [*command, "--from", "openai-responses", str(home / ".codex" / "sessions")])
        assert result.exit_code == 2, (command, result.output)
        assert result.stderr.splitlines()[0] == (
            f"error: {rollout}: reads as nothing meaningful as openai-responses: none of its 1 message holds "
            "text or tool calls; it looks like a codex file (leave --from out, or use --from codex)"
        )
        assert result.stdout == ""


def test_a_claude_session_and_its_subagent_are_one_line(tmp_path: Path) -> None:
    home = _home(tmp_path)
    project = home / ".claude" / "projects" / "-workspace-example-app"
    session_file = project / "55550000-0000-4000-8000-000000000001.jsonl"
    agent = project / "55550000-0000-4000-8000-000000000001" / "subagents" / "agent-showcol2.jsonl"
    payload = _stats(str(home / ".claude" / "projects"))
    assert [f["path"] for f in payload["files"]] == [str(session_file)]
    line = payload["files"][0]
    assert line["format"] == "claude-code"  # the registry's entry declares the subagent files
    assert line["companions"] == [str(agent)]
    assert line["conversations"] == 2
    alone = [_stats(str(path))["files"][0]["messages"] for path in (session_file, agent)]
    assert line["messages"] == sum(alone) > 0
    assert payload["total"]["messages"] == sum(alone)
