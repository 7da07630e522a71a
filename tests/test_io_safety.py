"""File safety: symlinks, read-only files and folders, concurrent edits, leftovers."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from ctxmgr import _io as io
from ctxmgr.cli import app
from ctxmgr.errors import OutputError

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "support-chat.json"
runner = CliRunner()


def _users(path: Path) -> int:
    return sum(1 for m in orjson.loads(path.read_bytes())["context"] if m["role"] == "user")


def test_in_place_through_a_symlink_rewrites_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_bytes(SAMPLE.read_bytes())
    link = tmp_path / "link.json"
    link.symlink_to(target)
    result = runner.invoke(app, ["trim", "-n", "1", "--in-place", "--follow-symlinks", str(link)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink()
    assert _users(target) == 1


def test_a_read_only_file_is_a_clear_error_and_stays_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(SAMPLE.read_bytes())
    path.chmod(0o444)
    result = runner.invoke(app, ["trim", "-n", "1", "--in-place", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {path}: the file is read-only; not rewritten"
    assert path.read_bytes() == SAMPLE.read_bytes()
    assert oct(path.stat().st_mode & 0o777) == oct(0o444)


def test_a_read_only_folder_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    path = folder / "chat.json"
    path.write_bytes(SAMPLE.read_bytes())
    folder.chmod(0o555)
    try:
        result = runner.invoke(app, ["trim", "-n", "1", "--in-place", str(path)])
        assert result.exit_code == 2
        assert f"the folder {folder} is read-only" in result.stderr
        assert path.read_bytes() == SAMPLE.read_bytes()
        assert sorted(os.listdir(folder)) == ["chat.json"]
    finally:
        folder.chmod(0o755)


def test_the_mode_of_a_rewritten_file_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(SAMPLE.read_bytes())
    path.chmod(0o640)
    assert runner.invoke(app, ["trim", "-n", "1", "--in-place", str(path)]).exit_code == 0
    assert path.stat().st_mode & 0o777 == 0o640
    assert _users(path) == 1


def test_a_file_edited_meanwhile_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(b"[1]")
    before = os.stat(path)
    writer = io.AtomicWriter(path, expect=before)
    writer.write(b"[2]")
    path.write_bytes(b"[3, 3]")  # someone saves the file while we work
    with pytest.raises(OutputError, match="changed while ctxmgr was working on it"):
        writer.commit()
    assert path.read_bytes() == b"[3, 3]"
    assert sorted(os.listdir(tmp_path)) == ["chat.json"]


def test_leftovers_of_a_killed_write_are_removed_by_the_next_one(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(b"[]")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    leftover = tmp_path / f".chat.json.{int(dead.stdout)}.abcd1234.ctxmgr-tmp"
    leftover.write_bytes(b"[half")
    alive = tmp_path / f".chat.json.{os.getpid()}.zzzz.ctxmgr-tmp"  # a write still in progress
    alive.write_bytes(b"[")
    io.atomic_write(path, b"[1]\n")
    assert not leftover.exists()
    assert alive.exists()
    assert path.read_bytes() == b"[1]\n"


def test_no_input_at_a_terminal_is_a_usage_error_not_a_hang() -> None:
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "ctxmgr", "trim", "-n", "1"], stdin=follower, capture_output=True, timeout=30
        )
    finally:
        os.close(leader)
        os.close(follower)
    assert proc.returncode == 2
    assert b"no input: name a file or folder, or pipe a conversation to standard input" in proc.stderr


def test_output_folder_never_receives_writes_outside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "a.json").write_bytes(SAMPLE.read_bytes())
    outside = tmp_path / "outside.json"
    outside.write_bytes(SAMPLE.read_bytes())
    out = work / "out"
    out.mkdir()
    escape = tmp_path / "escape"
    escape.mkdir()
    (out / "sub").symlink_to(escape)  # a symlink in the destination pointing elsewhere
    monkeypatch.chdir(work)
    result = runner.invoke(app, ["trim", "-n", "1", "-o", str(out), "sub/a.json", str(outside), "../outside.json"])
    assert result.exit_code == 2
    assert "would be written outside" in result.stderr
    assert list(escape.iterdir()) == []
    assert outside.read_bytes() == SAMPLE.read_bytes()


def test_two_inputs_mapping_to_one_output_are_refused(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "chat.json").write_bytes(SAMPLE.read_bytes())
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["trim", "-n", "1", "-o", str(out), str(tmp_path / "a" / "chat.json"), str(tmp_path / "b" / "chat.json")]
    )
    assert result.exit_code == 2
    assert "would both be written to" in result.stderr
    assert not out.exists() or not list(out.iterdir())


def test_standard_input_redirected_from_a_file(tmp_path: Path) -> None:
    for command in (["trim", "-n", "1"], ["stats"], ["validate"], ["convert", "--to", "openai-chat"]):
        with SAMPLE.open("rb") as stdin:
            proc = subprocess.run(
                [sys.executable, "-m", "ctxmgr", *command], stdin=stdin, capture_output=True, timeout=60
            )
        assert proc.returncode == 0, (command, proc.stderr)
        assert proc.stdout


def test_a_dataset_whose_first_line_is_longer_than_one_read(tmp_path: Path) -> None:
    big = {"messages": [{"role": "user", "content": "x" * (1 << 20)}, {"role": "assistant", "content": "ok"}], "id": 1}
    small = {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], "id": 2}
    data = tmp_path / "rows.jsonl"
    data.write_bytes(orjson.dumps(big) + b"\n" + orjson.dumps(small) + b"\n")
    result = runner.invoke(app, ["trim", "-n", "1", "--json", str(data)])
    assert result.exit_code == 0, result.output
    report = orjson.loads(result.stdout)["files"][0]
    assert (report["kind"], report["conversations"]) == ("dataset", 2)


def test_a_one_line_jsonl_without_a_final_newline_is_a_dataset(tmp_path: Path) -> None:
    data = tmp_path / "one.jsonl"
    data.write_bytes(orjson.dumps({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}))
    result = runner.invoke(app, ["trim", "-n", "1", str(data)])
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout) == {"messages": [{"role": "user", "content": "b"}]}


def test_a_sibling_files_live_temporary_is_left_alone(tmp_path: Path) -> None:
    sibling = io.AtomicWriter(tmp_path / "a.json.9")  # its temp file: .a.json.9.<pid>.xxxxxxxx.ctxmgr-tmp
    sibling.write(b"[1]")
    io.atomic_write(tmp_path / "a.json", b"[2]")
    sibling.commit()
    assert (tmp_path / "a.json.9").read_bytes() == b"[1]"
    assert (tmp_path / "a.json").read_bytes() == b"[2]"


def test_output_named_as_a_folder_is_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["trim", "-n", "1", "-o", "out/", str(SAMPLE)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out").is_dir()
    assert _users(tmp_path / "out" / SAMPLE.name) == 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.lists(st.sampled_from([b" ", b"\n", b"\r\n", b"{", b"x", b"}", b"\t"]), max_size=40).map(b"".join),
    read_size=st.integers(1, 7),
)
def test_the_head_holds_the_first_line_whatever_the_reads(
    data: bytes, read_size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The head is read until a newline ends the first non-blank line (or the input
    ends), however the reads cut it: the same as re-checking the whole head each time."""
    import io as stdio

    from ctxmgr.files import _reading as reading

    monkeypatch.setattr(reading, "SNIFF_BYTES", read_size)
    handle = stdio.BytesIO(data)
    head = reading.head_with_first_line(handle, handle.read(read_size), "x.jsonl")
    expected = data[:read_size]
    rest = stdio.BytesIO(data[read_size:])
    while b"\n" not in expected.lstrip() and (more := rest.read(read_size)):
        expected += more
    assert head == expected


@given(
    st.lists(st.sampled_from([b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c", b"{", b"x", b"\xa0", b"\x1c"]), max_size=40)
)
def test_content_bounds_are_what_strip_keeps(pieces: list[bytes]) -> None:
    """The bounds the reader looks at instead of copying the input with ``strip()``."""
    data = b"".join(pieces)
    start, end = io._content_bounds(data)
    assert data[start:end] == data.strip()
    assert start == len(data) - len(data.lstrip()) or not data.strip()


def test_content_bounds_of_a_long_blank_tail() -> None:
    """A document followed by megabytes of blank lines: bounds found, the tail not copied whole."""
    data = b"\n" * 3_000_000 + b'{"messages": []}' + b" \n" * 3_000_000
    assert io._content_bounds(data) == (3_000_000, 3_000_016)
