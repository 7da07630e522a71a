"""The progress bar: bytes, percentage and time left, on a real pseudo-terminal."""

from __future__ import annotations

import io
import os
import re
import subprocess
from pathlib import Path

import orjson
import pytest
from _terminal import progress_shown_at_once, stderr_on_a_terminal
from llm_server import LLMServer
from rich.console import Console

from ctxmgr.cli import progress
from ctxmgr.cli.progress import ProgressView

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "tau-airline-sample.jsonl"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _on_a_terminal(
    args: list[str],
    *,
    stdin: object = subprocess.DEVNULL,
    show_after: float = 0.0,
    env: dict[str, str] | None = None,
) -> tuple[int, str]:
    """Run ``ctxmgr ARGS`` with standard error on a pseudo-terminal (the bar shown at
    once: ``show_after``); its return code and what the terminal received, without
    escape sequences."""
    env = {**os.environ, "COLUMNS": "200", "TERM": "xterm-256color", "PYTHONPATH": str(ROOT), **(env or {})}
    env.pop("NO_COLOR", None)
    code, shown = stderr_on_a_terminal(progress_shown_at_once(args, show_after=show_after), stdin=stdin, env=env)
    return code, ANSI.sub("", shown.decode(errors="replace"))


def _dataset(path: Path, copies: int) -> Path:
    path.write_bytes(DATA.read_bytes() * copies)
    return path


def test_one_dataset_shows_its_bytes_percentage_and_time_left(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "rows.jsonl", 3)
    code, shown = _on_a_terminal(["trim", "-n", "1", "--check", "--no-view", "--jobs", "1", str(data)])
    assert code == 1, shown
    assert "rows.jsonl" in shown  # one file: its name, not "files 0/1"
    assert "files 0/1" not in shown
    assert "100%" in shown
    assert re.search(r"\d+ conversations", shown)
    size_kb = data.stat().st_size / 1000
    assert re.search(rf"/{size_kb:.1f} kB", shown), shown  # bytes done of the file's size
    assert "left" in shown


def test_a_summary_of_one_dataset_counts_calls_and_time_left(tmp_path: Path, llm_server: LLMServer) -> None:
    data = _dataset(tmp_path / "rows.jsonl", 1)
    args = ["summarize", "--model", "gpt-4o-mini", "--base-url", llm_server.openai_url, "--no-cache"]
    code, shown = _on_a_terminal(
        [*args, "--max-messages", "4", "--keep-recent", "2", "--no-view", "-o", str(tmp_path / "out.jsonl"), str(data)],
        env={"OPENAI_API_KEY": "sk-test"},
    )
    assert code == 0, shown
    assert re.search(r"\d+%", shown)
    assert re.search(r"\d+ calls, ~[\d,]+ tokens sent", shown)
    assert "left" in shown


@pytest.mark.parametrize("how", [["--model", "offline"], ["--model", "gpt-4o-mini", "--check"]])
def test_a_summary_that_sends_nothing_counts_no_calls(tmp_path: Path, how: list[str]) -> None:
    data = _dataset(tmp_path / "rows.jsonl", 1)
    code, shown = _on_a_terminal(["summarize", *how, "--max-messages", "4", "--check", "--no-view", str(data)])
    assert code == 1, shown
    assert re.search(r"\d+ conversations", shown)  # the bar was drawn
    assert "calls" not in shown
    assert "tokens sent" not in shown


def test_a_pipe_of_unknown_length_shows_what_was_read(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "rows.jsonl", 2)
    reader = subprocess.Popen(["cat", str(data)], stdout=subprocess.PIPE)
    try:
        code, shown = _on_a_terminal(["trim", "-n", "1", "--check", "--no-view", "-"], stdin=reader.stdout)
    finally:
        assert reader.stdout is not None
        reader.stdout.close()
        reader.wait()
    assert code == 1, shown
    assert "<stdin>" in shown
    assert re.search(r"\d+ conversations", shown)
    assert "%" not in shown  # no total: no percentage to invent


def test_a_quick_run_shows_no_bar(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "rows.jsonl", 1)
    code, shown = _on_a_terminal(["trim", "-n", "1", "--check", "--no-view", str(data)], show_after=30.0)
    assert code == 1, shown
    assert "conversations" not in shown.replace("would change", "")
    assert "would change" in shown


def test_quiet_shows_no_bar(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "rows.jsonl", 1)
    code, shown = _on_a_terminal(["trim", "-n", "1", "--check", "--quiet", str(data)])
    assert code == 1
    assert shown == ""


def _view(tmp_path: Path, sizes: list[int], monkeypatch: pytest.MonkeyPatch) -> tuple[ProgressView, io.StringIO]:
    paths = []
    for number, size in enumerate(sizes):
        path = tmp_path / f"f{number}.jsonl"
        path.write_bytes(b"x" * size)
        paths.append(str(path))
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(progress, "REDRAW_EVERY", 0.0)
    monkeypatch.setenv("TERM", "xterm-256color")  # a dumb terminal draws no bar
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=200, color_system=None)
    return ProgressView(console, paths), screen


def test_a_file_counts_its_bytes_once_and_in_full_when_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    view, screen = _view(tmp_path, [100, 50], monkeypatch)
    advance, done = view.file(0)
    advance(1, 60)
    advance(1, 60)  # an estimate past the file's end counts no further than its size
    assert view.bytes_done == 100
    other, other_done = view.file(1)
    other(1, 10)
    assert view.bytes_done == 110
    other_done()  # done: the rest of the file counts
    done()
    assert (view.bytes_done, view.files_done, view.conversations) == (150, 2, 3)
    view.close()
    assert "files 2/2" in ANSI.sub("", screen.getvalue())


def test_an_input_of_unknown_size_leaves_the_total_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "input_size", lambda path: None if path == "-" else 10)
    view, _ = _view(tmp_path, [10], monkeypatch)
    assert view._total == 10
    assert ProgressView(Console(file=io.StringIO()), ["-", "x"])._total is None


def test_input_size_of_a_regular_file_and_a_missing_one(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(orjson.dumps({"messages": []}))
    assert progress.input_size(str(path)) == path.stat().st_size
    assert progress.input_size(str(tmp_path / "missing.json")) is None
