"""``ctxmgr.compact_paths``: the library's run over paths gives what ``ctxmgr trim`` gives.

Each test runs the library and the command line on the same copies of real conversations
(``samples/`` and ``tests/conversations/``) and compares the outputs byte for byte, the
results, the skipped entries, the notes and the exit code.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

import ctxmgr
from ctxmgr.cli import app
from ctxmgr.errors import InputError, UsageError
from ctxmgr.files import (
    CaptureSink,
    FileResult,
    Note,
    RunEvents,
    RunOptions,
    RunResult,
    Settings,
    Skipped,
    compact_paths,
)
from ctxmgr.state import MessageContextManager

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
CONVERSATIONS = ROOT / "tests" / "conversations"

NOT_A_CONVERSATION = b'{"name": "left-pad", "version": "1.3.0"}'
LEFTOVER = ".support-chat.json.4194999.abcdefgh.ctxmgr-tmp"
"""What a killed write leaves beside its file (a pid above Linux's highest: no such process)."""


@pytest.fixture
def chats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of real conversations, with what a walk passes over: a file of no
    conversation format, a hidden file and a folder of installed packages."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "chats"
    shutil.copytree(SAMPLES, folder, ignore=shutil.ignore_patterns("managers", "*.md"))
    shutil.copytree(CONVERSATIONS / "openai-chat", folder / "openai-chat")
    shutil.copytree(CONVERSATIONS / "anthropic", folder / "anthropic")
    (folder / "package.json").write_bytes(NOT_A_CONVERSATION)
    (folder / ".draft.json").write_bytes((SAMPLES / "short-chat.json").read_bytes())
    (folder / "node_modules").mkdir()
    (folder / "node_modules" / "chat.json").write_bytes((SAMPLES / "short-chat.json").read_bytes())
    return folder


def cli(*args: str) -> tuple[int, dict[str, Any]]:
    """``ctxmgr trim ARGS --json``: the exit code and the report."""
    done = CliRunner().invoke(app, ["trim", *args, "--json"])
    return done.exit_code, orjson.loads(done.stdout)


def library(paths: Sequence[str], max_messages: int, **options: Any) -> RunResult:
    """The library's run of ``trim --max-messages N --json``: figures counted, nothing on
    standard output."""
    chosen = RunOptions(**{"measure": True, "write": False, **options})
    return compact_paths(paths, MessageContextManager(max_messages), Settings(), chosen)


def as_report(run: RunResult) -> dict[str, Any]:
    """The run as the ``--json`` report says it (each file's figures, warnings and errors;
    where it was written aside: the two runs write to two folders)."""
    return {
        "files": [{**r.as_json(), "destination": None} for r in run.results],
        "skipped": [{"path": s.path, "reason": s.reason} for s in run.skipped],
        "exit_code": run.exit_code,
    }


def of_report(report: dict[str, Any]) -> dict[str, Any]:
    return {
        "files": [{**f, "destination": None} for f in report["files"]],
        "skipped": report["skipped"],
        "exit_code": report["exit_code"],
    }


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_check_is_the_cli_check_results_skipped_and_exit_code(chats: Path) -> None:
    run = library(["chats"], 4, check=True)
    code, report = cli("chats", "--max-messages", "4", "--check")
    assert as_report(run) == of_report(report)
    assert run.exit_code == code == 1  # files would change
    assert len(run.results) == 19
    assert sum(r.changed for r in run.results) == 7
    assert {(s.path, s.reason) for s in run.skipped} == {
        ("chats/.draft.json", "hidden file"),
        ("chats/node_modules", "excluded by default"),
        ("chats/package.json", "not a conversation"),
    }
    assert [s.unread for s in run.skipped if s.path == "chats/.draft.json"] == [True]


def test_check_with_nothing_to_change_exits_0(chats: Path) -> None:
    run = library(["chats"], 10_000, check=True)
    code, report = cli("chats", "--max-messages", "10000", "--check")
    assert as_report(run) == of_report(report)
    assert run.exit_code == code == 0
    assert not any(r.changed for r in run.results)


def test_outputs_are_the_cli_outputs_byte_for_byte(chats: Path) -> None:
    run = library(["chats"], 3, output="out-library/")
    code, report = cli("chats", "--max-messages", "3", "-o", "out-cli/")
    assert run.exit_code == code == 0
    assert as_report(run) == of_report(report)
    written = tree(Path("out-library"))
    assert written == tree(Path("out-cli"))
    assert "openai-chat/tau-airline-gpt4o.jsonl" in written
    assert "support-chat.json" in written
    assert written["support-chat.json"] != (SAMPLES / "support-chat.json").read_bytes()


def test_notes_are_returned_and_heard_as_they_are_made(chats: Path) -> None:
    """Leftovers of a killed write are removed and said: in the result and to the events,
    in the words of the command line's note."""
    (chats / LEFTOVER).write_bytes(b"half a file")
    heard: list[object] = []

    class Heard(RunEvents):
        def note(self, note: Note) -> None:
            heard.append(note)

        def skipped(self, items: Sequence[Skipped]) -> None:
            heard.append([item.reason for item in items])

    run = compact_paths(
        ["chats/support-chat.json", "chats/short-chat.json"],
        MessageContextManager(2),
        options=RunOptions(in_place=True),
        events=Heard(),
    )
    assert not (chats / LEFTOVER).exists()
    expected = Note("note", f"{chats}: removed 1 leftover temporary file of interrupted ctxmgr runs")
    assert run.notes == [expected]
    assert heard == [[], expected]  # nothing skipped (named files), then the note
    assert run.exit_code == 0
    assert [r.changed for r in run.results] == [True, False]

    (chats / LEFTOVER).write_bytes(b"half a file")
    done = CliRunner().invoke(app, ["trim", "chats/support-chat.json", "--max-messages", "2", "--in-place", "--json"])
    assert orjson.loads(done.stdout)["notes"] == [{"level": expected.level, "message": expected.message}]


def test_a_walk_that_finds_no_conversation_is_an_input_error(chats: Path) -> None:
    only = Path("only")
    only.mkdir()
    (only / "package.json").write_bytes(NOT_A_CONVERSATION)
    with pytest.raises(InputError, match=r"no conversation found \(1 skipped: only/package.json\)") as caught:
        library(["only"], 4, check=True)
    done = CliRunner().invoke(app, ["trim", "only", "--check"])
    assert done.exit_code == 2
    assert str(caught.value) in done.stderr


def test_refusals_are_the_cli_refusals(chats: Path) -> None:
    with pytest.raises(UsageError, match="several inputs need --in-place, -o DIR, --check or --json"):
        compact_paths(["chats"], MessageContextManager(4))
    done = CliRunner().invoke(app, ["trim", "chats"])
    assert done.exit_code == 2
    assert "several inputs need --in-place, -o DIR, --check or --json" in done.stderr


def test_exported_from_the_package() -> None:
    assert ctxmgr.compact_paths is compact_paths


def test_progress_hears_every_file_once_and_is_closed(chats: Path) -> None:
    seen: list[str] = []

    class View:
        def file(self, index: int) -> tuple[Callable[[int, int], None], Callable[[], None]]:
            seen.append(f"start {index}")
            return (lambda conversations, nbytes: None), (lambda: seen.append(f"done {index}"))

        def close(self) -> None:
            seen.append("closed")

    class Watched(RunEvents):
        def progress(self, paths: Sequence[str | None], summarizer: Any) -> View:
            seen.append(f"{len(paths)} files")
            return View()

    compact_paths(["chats/openai-chat"], MessageContextManager(4), options=RunOptions(check=True), events=Watched())
    assert seen == ["5 files", *(f"{what} {i}" for i in range(5) for what in ("start", "done")), "closed"]


def test_diff_keeps_each_output_for_its_diff(chats: Path) -> None:
    run = library(["chats/support-chat.json", "chats/short-chat.json"], 3, diff=True, write=True)
    Path("out").mkdir()
    CliRunner().invoke(app, ["trim", "chats/support-chat.json", "--max-messages", "3", "-o", "out/one.json"])
    captured = [sink for _, sink, _ in run.outputs]
    assert all(isinstance(sink, CaptureSink) for sink in captured)
    first = captured[0]
    assert isinstance(first, CaptureSink)
    assert first.data == Path("out/one.json").read_bytes()
    assert Path("chats/support-chat.json").read_bytes() != first.data
    assert run.exit_code == 0


def test_an_engine_is_given_the_walked_files_and_their_names_below_the_output(chats: Path) -> None:
    asked: list[tuple[list[str], dict[str, str], str | None, bool]] = []

    def engine(
        paths: list[str],
        manager: Any,
        settings: Settings,
        *,
        output: str | None,
        writes: bool,
        relative: Mapping[str, str],
        notify: Callable[[str], None],
    ) -> list[FileResult]:
        asked.append((paths, dict(relative), output, writes))
        notify("started elsewhere")
        return [FileResult(source=path, kind="dataset", conversations=1) for path in paths]

    run = compact_paths(
        ["chats/openai-chat", "s3://bucket/chats.jsonl"],
        MessageContextManager(4),
        options=RunOptions(output="out/", engine=engine),
    )
    local = [f"chats/openai-chat/{name}" for name in sorted(p.name for p in (chats / "openai-chat").iterdir())]
    assert asked == [([*local, "s3://bucket/chats.jsonl"], {p: p.rsplit("/", 1)[1] for p in local}, "out/", True)]
    assert run.notes == [Note("note", "started elsewhere")]
    assert [r.source for r in run.results] == [*local, "s3://bucket/chats.jsonl"]
    with pytest.raises(UsageError, match="--engine reads files, folders or URLs, not standard input"):
        compact_paths(["-"], MessageContextManager(4), options=RunOptions(engine=engine))
