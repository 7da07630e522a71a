"""Agents SDK ``SQLiteSession`` databases on the command line: ``stats`` per session,
``trim``/``summarize`` of one session to JSON lines or in place (one transaction),
``--check``, ``--json``, ``--backup`` and ``restore``, and the database as untrusted input
(triggers, views, locks, links, live use)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from ctxmgr.cli import app

ROOT = Path(__file__).resolve().parents[2]
DB = ROOT / "tests" / "conversations" / "agents" / "agents-sdk-sqlite" / "sessions.db"
WEATHER = "weather-1"


@contextlib.contextmanager
def connect(path: Path | str, **kwargs: Any) -> Iterator[sqlite3.Connection]:
    """A connection committed and closed on exit (a WAL database is checkpointed then)."""
    connection = sqlite3.connect(path, **kwargs)
    try:
        with connection:
            yield connection
    finally:
        connection.close()


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed command, as a user runs it (another process than the test's)."""
    command = [sys.executable, "-m", "ctxmgr", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def rows(path: Path, session: str = WEATHER) -> list[tuple[Any, ...]]:
    with connect(path) as connection:
        query = "SELECT id, message_data, created_at FROM agent_messages WHERE session_id = ? ORDER BY id"
        return connection.execute(query, (session,)).fetchall()


def items(path: Path, session: str = WEATHER) -> list[Any]:
    return [json.loads(data) for _, data, _ in rows(path, session)]


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "sessions.db"
    shutil.copyfile(DB, target)
    return target


def pairs_kept(session: list[Any]) -> bool:
    calls = [i["call_id"] for i in session if isinstance(i, dict) and i.get("type") == "function_call"]
    outputs = [i["call_id"] for i in session if isinstance(i, dict) and i.get("type") == "function_call_output"]
    return sorted(calls) == sorted(outputs)


def test_the_vendored_database_is_what_the_sdk_wrote(db: Path) -> None:
    with connect(f"file:{db}?mode=ro", uri=True) as connection:
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        counts = dict(connection.execute("SELECT session_id, count(*) FROM agent_messages GROUP BY session_id"))
    assert {"agent_sessions", "agent_messages"} <= tables
    assert counts == {"weather-1": 65, "greeting-2": 2}


def test_stats_lists_each_session_with_its_size(db: Path) -> None:
    result = invoke("stats", "sessions.db", "--json")
    assert result.exit_code == 0, result.stderr
    report = orjson.loads(result.stdout_bytes)
    by_path = {entry["path"]: entry for entry in report["files"]}
    assert set(by_path) == {"sessions.db#weather-1", "sessions.db#greeting-2"}
    assert by_path["sessions.db#weather-1"]["messages"] == 65
    assert by_path["sessions.db#weather-1"]["estimated_tokens"] > 8000
    assert by_path["sessions.db#greeting-2"]["messages"] == 2
    table = invoke("stats", "sessions.db")
    assert table.exit_code == 0
    lines = [line for line in table.stdout.splitlines() if "openai-responses" in line]
    assert [line.split()[0].rstrip(",") for line in lines] == ["sessions.db#greeting-2", "sessions.db#weather-1"]


def test_trim_writes_the_session_as_sdk_items_on_standard_output(db: Path) -> None:
    before = db.read_bytes()
    result = invoke("trim", "sessions.db", "--session", WEATHER, "--max-tokens", "8000")
    assert result.exit_code == 0, result.stderr
    out = [json.loads(line) for line in result.stdout.splitlines()]
    original = items(db)
    assert 1 < len(out) < len(original)
    assert out[0] == original[0]  # the system message stays
    assert out[-4:] == original[-4:]  # the newest turn stays whole
    assert pairs_kept(out)
    # Kept items are written as their rows' own text.
    texts = {data for _, data, _ in rows(db)}
    assert all(line in texts for line in result.stdout.splitlines())
    assert db.read_bytes() == before


def test_a_database_of_several_sessions_needs_session(db: Path) -> None:
    result = invoke("trim", "sessions.db", "-n", "2")
    assert result.exit_code == 2
    assert "a database of 2 sessions: name one with --session ID (greeting-2, weather-1)" in result.stderr
    missing = invoke("trim", "sessions.db", "--session", "nope", "-n", "2")
    assert missing.exit_code == 2
    assert "no session 'nope' in this database" in missing.stderr


def test_in_place_rewrites_only_that_session_and_restore_puts_it_back(db: Path) -> None:
    weather, greeting = rows(db), rows(db, "greeting-2")
    result = invoke("trim", "sessions.db", "--session", WEATHER, "--max-tokens", "8000", "-i")
    assert result.exit_code == 0, result.stderr
    after = items(db)
    assert 1 < len(after) < len(weather)
    assert pairs_kept(after)
    assert rows(db, "greeting-2") == greeting
    sidecar = db.with_name("sessions.db.ctxmgr-removed.jsonl")
    assert sidecar.stat().st_mode & 0o777 == 0o600
    # A second rewrite carries the first one's rows on: restore goes back to the start.
    second = invoke("trim", "sessions.db", "--session", WEATHER, "-n", "1", "-i")
    assert second.exit_code == 0, second.stderr
    assert len(items(db)) < len(after)
    restored = invoke("restore", "sessions.db")
    assert restored.exit_code == 0, restored.stderr
    assert rows(db) == weather
    assert not sidecar.exists()


def test_restore_refuses_a_session_changed_since(db: Path) -> None:
    assert invoke("trim", "sessions.db", "--session", WEATHER, "-n", "1", "-i").exit_code == 0
    with connect(db) as connection:
        connection.execute("INSERT INTO agent_messages (session_id, message_data) VALUES (?, ?)", (WEATHER, "{}"))
    now = rows(db)
    result = invoke("restore", "sessions.db")
    assert result.exit_code != 0
    assert "changed since it was read" in result.stderr
    assert rows(db) == now


def test_check_and_json_write_nothing(db: Path) -> None:
    before = db.read_bytes()
    check = invoke("trim", "sessions.db", "--session", WEATHER, "--max-tokens", "8000", "--check")
    assert check.exit_code == 1
    assert "would change sessions.db" in check.stderr
    unchanged = invoke("trim", "sessions.db", "--session", "greeting-2", "--max-tokens", "8000", "--check")
    assert unchanged.exit_code == 0
    report = invoke("trim", "sessions.db", "--session", WEATHER, "--max-tokens", "8000", "--json")
    assert report.exit_code == 0, report.stderr
    entry = orjson.loads(report.stdout_bytes)["files"][0]
    assert entry["format"] == "openai-responses"
    assert entry["changed"] is True or entry.get("changed_conversations") == 1
    assert db.read_bytes() == before


def test_summarize_offline_puts_the_summary_in_the_session(db: Path) -> None:
    result = invoke(
        "summarize", "sessions.db", "--session", WEATHER, "--model", "offline", "--max-messages", "10", "-i"
    )
    assert result.exit_code == 0, result.stderr
    after = items(db)
    assert len(after) < 65
    assert pairs_kept(after)
    assert any("summary" in json.dumps(item).lower() for item in after[:3])


def test_session_may_come_from_a_project_file_in_place_may_not(db: Path) -> None:
    (db.parent / "ctxmgr.toml").write_text('[trim]\nsession = "weather-1"\n', encoding="utf-8")
    result = invoke("trim", "sessions.db", "-n", "1")
    assert result.exit_code == 0, result.stderr
    assert len(result.stdout.splitlines()) < 65
    (db.parent / "ctxmgr.toml").write_text('[trim]\nsession = "weather-1"\nin-place = true\n', encoding="utf-8")
    refused = invoke("trim", "sessions.db", "-n", "1")
    assert refused.exit_code == 2
    assert "in-place" in refused.stderr
    assert len(rows(db)) == 65


def _copy_with(db: Path, name: str, sql: str) -> Path:
    target = db.with_name(name)
    shutil.copyfile(db, target)
    with connect(target) as connection:
        connection.execute(sql)
    return target


@pytest.mark.parametrize(
    ("kind", "sql"),
    [
        (
            "trigger",
            "CREATE TRIGGER t AFTER DELETE ON agent_messages BEGIN "
            "INSERT INTO agent_sessions (session_id) VALUES ('planted'); END",
        ),
        ("view", "CREATE VIEW v AS SELECT * FROM agent_messages"),
    ],
)
def test_a_trigger_or_view_on_the_session_tables_is_refused(db: Path, kind: str, sql: str) -> None:
    target = _copy_with(db, f"{kind}.db", sql)
    before = target.read_bytes()
    for args in (("stats", target.name), ("trim", target.name, "--session", WEATHER, "-n", "1", "-i")):
        result = invoke(*args)
        assert result.exit_code == 2
        assert f"refused: the database has a {kind}" in result.stderr
    assert target.read_bytes() == before
    with connect(target) as connection:
        assert connection.execute("SELECT count(*) FROM agent_sessions WHERE session_id = 'planted'").fetchone() == (0,)


def test_a_database_without_session_tables_is_an_input_error(db: Path) -> None:
    other = db.with_name("other.db")
    with connect(other) as connection:
        connection.execute("CREATE TABLE notes (x)")
    result = invoke("stats", "other.db")
    assert result.exit_code == 2
    assert "without the Agents SDK's session tables" in result.stderr


def test_a_locked_database_is_a_clear_error(db: Path) -> None:
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("INSERT INTO agent_sessions (session_id) VALUES ('new')")
        # Another process holds a write: an in-place rewrite is refused as live use ...
        live = cli("trim", "sessions.db", "--session", WEATHER, "-n", "1", "-i", cwd=db.parent)
        assert live.returncode == 2
        assert "another process has it open for writing" in live.stderr
        # ... and, forced, meets the lock: exit 2, nothing written.
        locked = cli("trim", "sessions.db", "--session", WEATHER, "-n", "1", "-i", "--force", cwd=db.parent)
        assert locked.returncode == 2
        assert "the database is locked by another connection" in locked.stderr
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(rows(db)) == 65


def test_an_exclusive_lock_stops_a_read_too(db: Path) -> None:
    with connect(db) as connection:
        connection.execute("PRAGMA journal_mode=DELETE")
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        result = invoke("stats", "sessions.db")
        assert result.exit_code == 2
        assert "the database is locked by another connection" in result.stderr
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_link_is_not_rewritten_through(db: Path) -> None:
    os.symlink("sessions.db", db.with_name("link.db"))
    result = invoke("trim", "link.db", "--session", WEATHER, "-n", "1", "-i")
    assert result.exit_code == 2
    assert "is a symbolic link" in result.stderr
    assert len(rows(db)) == 65


def test_diff_is_refused_rather_than_showing_the_binary_file(db: Path) -> None:
    result = invoke("trim", "sessions.db", "--session", WEATHER, "-n", "1", "--diff")
    assert result.exit_code == 2
    assert "--diff compares text files" in result.stderr
    assert "SQLite format" not in result.stdout


def test_backup_without_in_place_is_refused(db: Path) -> None:
    result = invoke("trim", "sessions.db", "--session", WEATHER, "-n", "1", "-o", "out.jsonl", "--backup")
    assert result.exit_code == 2
    assert not (db.parent / "out.jsonl").exists()


# -- generated sessions ----------------------------------------------------------------------

SCHEMA = (
    "CREATE TABLE agent_sessions (session_id TEXT PRIMARY KEY, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, "
    "updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)",
    "CREATE TABLE agent_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, "
    "message_data TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, "
    "FOREIGN KEY (session_id) REFERENCES agent_sessions (session_id) ON DELETE CASCADE)",
)


def _turn(number: int, calls: int, size: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": f"question {number} " + "q" * size}]
    for call in range(calls):
        call_id = f"call_{number}_{call}"
        out.append({"type": "function_call", "call_id": call_id, "name": "look", "arguments": "{}"})
        out.append({"type": "function_call_output", "call_id": call_id, "output": "r" * (size * 3)})
    out.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"a{number}"}]})
    return out


MANAGERS = [
    ("trim", "--max-tokens", "{budget}"),
    ("trim", "-n", "1"),
    ("trim", "--clear-tool-results", "--keep-tool-results", "1", "--max-tool-output", "{budget}"),
    ("summarize", "--model", "offline", "--max-messages", "4", "--keep-recent", "2"),
]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    turns=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 400)), min_size=1, max_size=8),
    budget=st.integers(50, 2000),
    manager=st.sampled_from(MANAGERS),
)
def test_compacting_a_generated_session_keeps_pairs_and_reads_back(
    tmp_path: Path, turns: list[tuple[int, int]], budget: int, manager: tuple[str, ...]
) -> None:
    target = tmp_path / "generated.db"
    target.unlink(missing_ok=True)
    session = [item for number, (calls, size) in enumerate(turns) for item in _turn(number, calls, size)]
    with connect(target) as connection:
        for statement in SCHEMA:
            connection.execute(statement)
        connection.execute("INSERT INTO agent_sessions (session_id) VALUES ('g')")
        connection.executemany(
            "INSERT INTO agent_messages (session_id, message_data) VALUES ('g', ?)",
            [(json.dumps(item),) for item in session],
        )
    command = [part.format(budget=budget) for part in manager]
    printed = invoke(command[0], str(target), *command[1:])
    assert printed.exit_code == 0, printed.stderr
    written = invoke(command[0], str(target), *command[1:], "-i", "--no-backup")
    assert written.exit_code == 0, written.stderr
    after = items(target, "g")
    assert pairs_kept(after)
    # What -i wrote reads back as what standard output showed.
    assert after == [json.loads(line) for line in printed.stdout.splitlines()]
    if manager[0] == "trim":
        last_request = [item for item in session if item.get("role") == "user"][-1]
        assert last_request in after  # trim always keeps the last user request
    if manager[1] == "--max-tokens":
        # Read back, the session is within the budget: a second trim changes nothing.
        again = invoke("trim", str(target), "--max-tokens", str(budget), "--check")
        assert again.exit_code == 0, again.stderr


def test_a_session_converts_to_another_format_and_writes_to_a_file(db: Path) -> None:
    converted = invoke("convert", "sessions.db", "--session", "greeting-2", "--to", "anthropic")
    assert converted.exit_code == 0, converted.stderr
    assert orjson.loads(converted.stdout_bytes) == {
        "messages": [
            {"role": "user", "content": "Hello! Who are you?"},
            {"role": "assistant", "content": "I am a weather assistant."},
        ]
    }
    refused = invoke("convert", "sessions.db", "--session", "greeting-2", "--to", "anthropic", "-i")
    assert refused.exit_code == 2
    assert "rewritten as its own items" in refused.stderr
    written = invoke("trim", "sessions.db", "--session", WEATHER, "-n", "1", "-o", "out.jsonl")
    assert written.exit_code == 0, written.stderr
    lines = (db.parent / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [items(db)[0], *items(db)[-4:]]
    assert len(rows(db)) == 65


def test_validate_checks_every_session(db: Path) -> None:
    ok = invoke("validate", "sessions.db")
    assert ok.exit_code == 0, ok.stderr
    assert "sessions.db: ok (2 conversations)" in ok.stdout
    call = {"type": "function_call_output", "call_id": "call_lost", "output": "no call made this"}
    with connect(db) as connection:
        connection.execute(
            "INSERT INTO agent_messages (session_id, message_data) VALUES ('greeting-2', ?)", (json.dumps(call),)
        )
    broken = invoke("validate", "sessions.db", "--json")
    assert broken.exit_code == 1
    problems = orjson.loads(broken.stdout_bytes)["files"][0]["problems"]
    assert problems
    assert all(problem["line"] == 1 for problem in problems)  # the first session (by creation)
