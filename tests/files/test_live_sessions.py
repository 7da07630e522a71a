"""A file still being written is not rewritten in place: another process holding it open
for writing (any format), or a session log changed in the last seconds; ``--force``
overrides that check and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from _session_dummy import NAME, registered, session
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.files import _live

RUNNER = CliRunner()
HAS_PROC = os.path.isdir("/proc/self/fd") and os.path.exists("/proc/self/fdinfo")
needs_proc = pytest.mark.skipif(not HAS_PROC, reason="open files are found through Linux's /proc")

CHAT = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        *(
            message
            for turn in range(1, 5)
            for message in (
                {"role": "user", "content": f"Where is A-{turn}00?"},
                {"role": "assistant", "content": f"A-{turn}00 ships on day {turn}."},
            )
        ),
    ]
}


@pytest.fixture
def dummy_log() -> Iterator[None]:
    with registered():
        yield


def _old(path: Path) -> None:
    then = time.time() - 60
    os.utime(path, (then, then))


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    """A conversation file another process holds open for appending (as an agent tool holds its log)."""
    path = tmp_path / "chat.json"
    path.write_bytes(orjson.dumps(CHAT))
    _old(path)
    process = _hold(path, "a")
    try:
        yield path, process
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.communicate()  # waits, and closes its pipes


def _hold(path: Path, mode: str) -> subprocess.Popen[str]:
    code = f"import sys; f = open({str(path)!r}, {mode!r}); print('ready', flush=True); sys.stdin.read()"
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


@needs_proc
def test_the_writers_of_a_file_are_found(holder: tuple[Path, subprocess.Popen[str]], tmp_path: Path) -> None:
    path, process = holder
    assert _live.writers(str(path)) == [process.pid]
    other = tmp_path / "other.json"
    other.write_bytes(b"{}")
    assert _live.writers(str(other)) == []
    assert _live.writers(str(tmp_path / "missing.json")) == []


@needs_proc
def test_a_reader_is_no_writer(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(orjson.dumps(CHAT))
    process = _hold(path, "r")
    try:
        assert _live.writers(str(path)) == []
    finally:
        _stop(process)


@needs_proc
def test_a_file_open_for_writing_is_not_rewritten_in_place(holder: tuple[Path, subprocess.Popen[str]]) -> None:
    path, process = holder
    before = path.read_bytes()
    result = RUNNER.invoke(app, ["trim", "-n", "1", "-i", "--no-view", str(path)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert lines[0] == (
        f"error: {path}: not rewritten in place: another process has it open for writing "
        f"(process {process.pid} (python{lines[0].split('(python', 1)[1]}"
    )
    assert "(--force rewrites it anyway)" in lines[0]
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["chat.json"]  # no sidecar, no temporary


@needs_proc
def test_force_rewrites_a_file_open_for_writing(holder: tuple[Path, subprocess.Popen[str]]) -> None:
    path, _ = holder
    result = RUNNER.invoke(app, ["trim", "-n", "1", "-i", "--force", "--no-view", str(path)])
    assert result.exit_code == 0, result.output
    assert len(orjson.loads(path.read_bytes())["messages"]) == 3
    assert (path.parent / "chat.json.ctxmgr-removed.jsonl").exists()  # -i keeps its sidecar


@needs_proc
def test_writing_elsewhere_from_a_file_open_for_writing_is_allowed(
    holder: tuple[Path, subprocess.Popen[str]], tmp_path: Path
) -> None:
    path, _ = holder
    out = tmp_path / "out.json"
    result = RUNNER.invoke(app, ["trim", "-n", "1", "--no-view", "-o", str(out), str(path)])
    assert result.exit_code == 0, result.output
    assert len(orjson.loads(out.read_bytes())["messages"]) == 3


def test_a_session_log_changed_seconds_ago_is_not_rewritten_in_place(dummy_log: None, tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_bytes(orjson.dumps(session(4)))
    before = path.read_bytes()
    result = RUNNER.invoke(app, ["trim", "-n", "1", "-i", "--no-view", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {path}: not rewritten in place: it changed ")
    assert "s ago: its tool may still be writing this session (--force rewrites it anyway)" in result.stderr
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["session.json"]
    # A minute later it is written, with its sidecar.
    _old(path)
    result = RUNNER.invoke(app, ["trim", "-n", "1", "-i", "--no-view", str(path)])
    assert result.exit_code == 0, result.output
    assert len(orjson.loads(path.read_bytes())["log"]) == 3
    assert (tmp_path / "session.json.ctxmgr-removed.jsonl").exists()


def test_force_rewrites_a_session_log_changed_seconds_ago(dummy_log: None, tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_bytes(orjson.dumps(session(4)))
    result = RUNNER.invoke(app, ["trim", "-n", "1", "-i", "--force", "--no-backup", "--no-view", str(path)])
    assert result.exit_code == 0, result.output
    assert orjson.loads(path.read_bytes())["log"][0]["who"] == "boss"
    assert [p.name for p in tmp_path.iterdir()] == ["session.json"]  # --no-backup


def test_a_conversation_written_just_now_is_rewritten_in_place(tmp_path: Path) -> None:
    # Not a session log: a script writing a file and trimming it right away is no race.
    path = tmp_path / "chat.json"
    path.write_bytes(orjson.dumps(CHAT))
    result = RUNNER.invoke(app, ["trim", "-n", "1", "-i", "--no-view", str(path)])
    assert result.exit_code == 0, result.output


def test_a_recent_session_log_is_still_read_and_written_elsewhere(dummy_log: None, tmp_path: Path) -> None:
    path, out = tmp_path / "session.json", tmp_path / "out.json"
    path.write_bytes(orjson.dumps(session(4)))
    assert RUNNER.invoke(app, ["stats", str(path)]).exit_code == 0
    assert RUNNER.invoke(app, ["trim", "-n", "1", "--check", str(path)]).exit_code == 1
    result = RUNNER.invoke(app, ["trim", "-n", "1", "--no-view", "-o", str(out), str(path)])
    assert result.exit_code == 0, result.output


def test_force_does_not_write_through_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("real.json").write_bytes(orjson.dumps(CHAT))
    Path("link.json").symlink_to("real.json")
    result = RUNNER.invoke(app, ["trim", "-n", "1", "-i", "--force", "--no-view", "link.json"])
    assert result.exit_code == 2
    assert "symbolic link" in result.stderr
    assert len(orjson.loads(Path("real.json").read_bytes())["messages"]) == len(CHAT["messages"])


def test_the_recent_window_is_a_few_seconds(dummy_log: None, tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_bytes(b"{}")
    written = path.stat().st_mtime
    assert _live.live_reason(str(path), session_log=True, now=written + 1) is not None
    assert _live.live_reason(str(path), session_log=True, now=written + _live.RECENT_SECONDS + 0.5) is None
    assert _live.live_reason(str(path), session_log=False, now=written + 1) is None
    assert NAME  # the format the session-log rule is applied to is registered by the fixture


def test_a_project_file_cannot_force_a_rewrite(
    dummy_log: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("ctxmgr.toml").write_text("[trim]\nforce = true\n", encoding="utf-8")
    path = tmp_path / "session.json"
    path.write_bytes(orjson.dumps(session(4)))
    before = path.read_bytes()
    result = RUNNER.invoke(app, ["trim", "-n", "1", "-i", "--no-view", "session.json"])
    assert result.exit_code == 2, result.output
    assert "force" in result.stderr
    assert path.read_bytes() == before


@needs_proc
def test_a_dataset_open_for_writing_is_not_rewritten_in_place(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_bytes(b"".join(orjson.dumps(CHAT) + b"\n" for _ in range(3)))
    before = path.read_bytes()
    process = _hold(path, "a")
    try:
        result = RUNNER.invoke(app, ["trim", "-n", "1", "-i", "--no-view", str(path)])
        assert result.exit_code == 2, result.output
        assert f"error: {path}: not rewritten in place: another process has it open for writing" in result.stderr
        assert path.read_bytes() == before
        assert [p.name for p in tmp_path.iterdir()] == ["data.jsonl"]
    finally:
        _stop(process)
