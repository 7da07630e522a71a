"""``--backup`` and ``ctxmgr restore``: a rewrite keeps its way back, and the way back
refuses a sidecar it cannot trust or a file that changed since."""

from __future__ import annotations

import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.config._flags import PROJECT_MAY_SET
from ctxmgr.errors import InputError
from ctxmgr.files import RunOptions, compact_paths, restore
from ctxmgr.files._backup import SIDECAR_SUFFIX, sidecar_path
from ctxmgr.state import MessageContextManager
from tests._conversations import random_state

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [
    ROOT / "samples" / name
    for name in (
        "support-chat.json",
        "booking-chat.jsonl",
        "openai-chat.json",
        "openai-responses.json",
        "anthropic.json",
        "gemini.json",
        "langchain.json",
    )
] + [
    ROOT / "tests" / "conversations" / "anthropic" / "anthropic_web_search_tool.json",
    ROOT / "tests" / "conversations" / "openai-chat" / "image_url_tool_response.json",
    ROOT / "tests" / "conversations" / "openai-responses" / "openai_responses_model_mcp_server_tool.json",
]
DATASETS = [ROOT / "tests" / "data" / "tau-airline-slice.jsonl", ROOT / "tests" / "data" / "tau-airline-sample.jsonl"]


def invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args)


def copy(source: Path, folder: Path) -> Path:
    target = folder / source.name
    shutil.copyfile(source, target)
    return target


def trim_in_place(path: Path, *extra: str) -> Any:
    result = invoke(["trim", "-n", "1", "-i", str(path), *extra])
    assert result.exit_code == 0, result.stderr
    return result


def error_lines(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line]


# -- the way there and back ------------------------------------------------------------------


@pytest.mark.parametrize("source", DOCUMENTS + DATASETS, ids=lambda p: p.name)
def test_trim_in_place_then_restore_gives_the_input_back_byte_for_byte(source: Path, tmp_path: Path) -> None:
    path = copy(source, tmp_path)
    original = path.read_bytes()
    result = trim_in_place(path)
    assert path.read_bytes() != original, "the sample must be trimmed for the test to mean anything"
    sidecar = sidecar_path(path)
    assert stat.S_IMODE(sidecar.stat().st_mode) == 0o600
    assert f"backup: {sidecar} (ctxmgr restore {path} puts the file back)" in result.stderr
    restored = invoke(["restore", str(path)])
    assert restored.exit_code == 0, restored.stderr
    assert path.read_bytes() == original
    assert not sidecar.exists()  # the file holds everything it kept


@pytest.mark.parametrize("source", [DOCUMENTS[0], DATASETS[0]], ids=lambda p: p.name)
def test_a_second_rewrite_keeps_the_way_back_to_the_first_original(source: Path, tmp_path: Path) -> None:
    path = copy(source, tmp_path)
    original = path.read_bytes()
    invoke(["trim", "-n", "3", "-i", str(path)])
    once = path.read_bytes()
    second = trim_in_place(path)
    assert path.read_bytes() != once
    assert "warning" not in second.stderr
    assert invoke(["restore", str(path)]).exit_code == 0
    assert path.read_bytes() == original
    assert sorted(os.listdir(tmp_path)) == [path.name]  # the earlier sidecar's second name is gone


def test_a_sidecar_of_another_version_is_replaced_and_said(tmp_path: Path) -> None:
    path = copy(DATASETS[0], tmp_path)
    trim_in_place(path)
    edited = path.read_bytes() + DATASETS[0].read_bytes().splitlines(keepends=True)[0]
    path.write_bytes(edited)
    result = trim_in_place(path)
    assert "was of another version of the file; replaced" in result.stderr
    assert invoke(["restore", str(path)]).exit_code == 0
    assert path.read_bytes() == edited  # back to the file this rewrite read


def test_an_earlier_sidecar_others_may_read_is_not_carried_on(tmp_path: Path) -> None:
    path = copy(DATASETS[0], tmp_path)
    invoke(["trim", "-n", "3", "-i", str(path)])
    once = path.read_bytes()
    os.chmod(sidecar_path(path), 0o644)
    result = trim_in_place(path)
    assert "the earlier backup" in result.stderr
    assert "has mode 0644" in result.stderr
    assert stat.S_IMODE(sidecar_path(path).stat().st_mode) == 0o600
    assert invoke(["restore", str(path)]).exit_code == 0
    assert path.read_bytes() == once


def test_a_dataset_keeps_only_its_changed_lines_with_their_numbers(tmp_path: Path) -> None:
    lines = (ROOT / "tests" / "data" / "tau-airline-slice.jsonl").read_bytes().splitlines(keepends=True)
    # A blank line, a line too short to trim, Windows line ends and no final line feed.
    short = orjson.dumps({"messages": [{"role": "user", "content": "hi"}]}) + b"\n"
    data = lines[0] + b"\n" + short + lines[1].replace(b"\n", b"\r\n") + lines[2].rstrip(b"\n")
    path = tmp_path / "runs.jsonl"
    path.write_bytes(data)
    trim_in_place(path)
    records = [orjson.loads(line) for line in sidecar_path(path).read_bytes().splitlines()]
    header, kept, end = records[0], records[1:-1], records[-1]
    assert header == {"ctxmgr_backup": 1, "kind": "dataset", "file": "runs.jsonl"}
    assert [record["line"] for record in kept] == [1, 4, 5]  # the blank and the short line are not stored
    assert kept[0]["original"].encode() == lines[0]
    assert (end["lines"], end["changed_lines"], end["original_size"]) == (5, 3, len(data))
    assert invoke(["restore", str(path)]).exit_code == 0
    assert path.read_bytes() == data


def test_output_folder_gets_a_sidecar_beside_each_output(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    sources = [copy(ROOT / "samples" / "support-chat.json", inputs), copy(DATASETS[0], inputs)]
    out = tmp_path / "out"
    result = invoke(["trim", "-n", "1", "--backup", "-o", f"{out}/", str(inputs)])
    assert result.exit_code == 0, result.stderr
    for source in sources:
        written = out / source.name
        assert sidecar_path(written).exists()
        assert invoke(["restore", str(written)]).exit_code == 0
        assert written.read_bytes() == source.read_bytes()


def test_writing_the_same_output_again_replaces_its_sidecar_quietly(tmp_path: Path) -> None:
    source = copy(DATASETS[0], tmp_path)
    out = tmp_path / "out.jsonl"
    assert invoke(["trim", "-n", "2", "--backup", "-o", str(out), str(source)]).exit_code == 0
    again = invoke(["trim", "-n", "1", "--backup", "-o", str(out), str(source)])
    assert again.exit_code == 0
    assert "warning" not in again.stderr
    assert invoke(["restore", str(out)]).exit_code == 0
    assert out.read_bytes() == source.read_bytes()


def test_an_unchanged_rewrite_leaves_the_earlier_sidecar_and_says_nothing(tmp_path: Path) -> None:
    path = copy(DATASETS[0], tmp_path)
    trim_in_place(path)
    sidecar = sidecar_path(path).read_bytes()
    again = invoke(["trim", "-n", "1", "-i", str(path)])
    assert again.exit_code == 0
    assert "backup" not in again.stderr
    assert sidecar_path(path).read_bytes() == sidecar


def test_json_report_names_each_backup(tmp_path: Path) -> None:
    path = copy(DATASETS[0], tmp_path)
    result = invoke(["trim", "-n", "1", "-i", "--json", str(path)])
    assert result.exit_code == 0, result.stderr
    assert orjson.loads(result.stdout)["files"][0]["backup"] == str(sidecar_path(path))
    report = invoke(["restore", "--json", str(path)])
    assert report.exit_code == 0
    entry = orjson.loads(report.stdout)["restored"][0]
    assert (entry["path"], entry["kind"]) == (str(path), "dataset")
    assert entry["lines_restored"] > 0


def test_convert_in_place_is_restored(tmp_path: Path) -> None:
    path = copy(ROOT / "samples" / "openai-chat.json", tmp_path)
    original = path.read_bytes()
    result = invoke(["convert", "--to", "anthropic", "-i", str(path)])
    assert result.exit_code == 0, result.stderr
    assert invoke(["restore", str(path)]).exit_code == 0
    assert path.read_bytes() == original


def test_no_backup_writes_no_sidecar_and_a_walk_leaves_sidecars_out(tmp_path: Path) -> None:
    path = copy(ROOT / "samples" / "support-chat.json", tmp_path)
    assert invoke(["trim", "-n", "1", "-i", "--no-backup", str(path)]).exit_code == 0
    assert sorted(os.listdir(tmp_path)) == ["support-chat.json"]
    other = copy(DATASETS[0], tmp_path)
    trim_in_place(other)
    sidecar = sidecar_path(other).read_bytes()
    again = invoke(["trim", "-n", "1", "-i", str(tmp_path)])
    assert again.exit_code == 0, again.stderr
    assert sidecar_path(other).read_bytes() == sidecar  # the sidecar was not read as a dataset
    assert not Path(str(sidecar_path(other)) + SIDECAR_SUFFIX).exists()


def test_the_command_line_round_trip_in_a_real_process(tmp_path: Path) -> None:
    path = copy(DATASETS[0], tmp_path)
    original = path.read_bytes()

    def ctxmgr(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "ctxmgr", *args], capture_output=True, check=False, timeout=120)

    trimmed = ctxmgr("trim", "-n", "1", "-i", str(path))
    assert trimmed.returncode == 0, trimmed.stderr
    assert f"backup: {sidecar_path(path)}".encode() in trimmed.stderr
    assert path.read_bytes() != original
    restored = ctxmgr("restore", str(path))
    assert restored.returncode == 0, restored.stderr
    assert path.read_bytes() == original


def test_a_link_planted_as_the_sidecar_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = copy(ROOT / "samples" / "support-chat.json", tmp_path)
    original = path.read_bytes()
    target = tmp_path / "target.txt"
    target.write_bytes(b"mine")
    sidecar_path(path).symlink_to(target)
    result = invoke(["trim", "-n", "1", "-i", str(path)])
    assert result.exit_code == 2
    assert "is a symbolic link" in result.stderr
    assert path.read_bytes() == original
    assert target.read_bytes() == b"mine"
    assert sidecar_path(path).is_symlink()


# -- usage ----------------------------------------------------------------------------------


def test_backup_to_standard_output_is_a_usage_error(tmp_path: Path) -> None:
    path = copy(ROOT / "samples" / "support-chat.json", tmp_path)
    result = invoke(["trim", "-n", "1", "--backup", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "standard output cannot be restored" in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["support-chat.json"]
    piped = CliRunner().invoke(app, ["trim", "-n", "1", "--backup", "-o", str(tmp_path / "o.json")], input=b"{}")
    assert piped.exit_code == 2
    assert "--backup needs files" in piped.stderr


def test_backup_is_refused_with_an_engine_after_what_an_engine_refuses(tmp_path: Path) -> None:
    path = copy(DATASETS[0], tmp_path)
    in_place = invoke(["trim", "-n", "1", "-i", "--engine", "ray", str(path)])
    assert in_place.exit_code == 2
    assert "not --in-place" in in_place.stderr  # as before backups: -i is what is refused
    out = invoke(["trim", "-n", "1", "--backup", "--engine", "ray", "-o", str(tmp_path / "out.jsonl"), str(path)])
    assert out.exit_code == 2
    assert "--backup is made where the files are written here" in out.stderr
    assert sorted(os.listdir(tmp_path)) == [path.name]


def test_a_project_file_cannot_switch_backups_off() -> None:
    for command in ("trim", "summarize", "run", "convert"):
        assert "backup" not in PROJECT_MAY_SET[command]


# -- refusals: nothing written, one line, exit 2 ---------------------------------------------


@pytest.fixture
def trimmed(tmp_path: Path) -> Path:
    path = copy(DATASETS[0], tmp_path)
    trim_in_place(path)
    return path


def refused(path: Path, expected: str) -> None:
    before = path.read_bytes()
    sidecar = sidecar_path(path)
    kept = sidecar.read_bytes() if sidecar.is_file() and not sidecar.is_symlink() else None
    result = invoke(["restore", str(path)])
    assert result.exit_code == 2
    lines = error_lines(result)
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    assert expected in lines[0], lines
    assert path.read_bytes() == before
    if kept is not None:
        assert sidecar.read_bytes() == kept


def test_restore_refuses_a_file_changed_since(trimmed: Path) -> None:
    trimmed.write_bytes(trimmed.read_bytes() + b"\n")
    refused(trimmed, "changed since ctxmgr wrote it")


def test_restore_refuses_a_symlinked_sidecar(trimmed: Path, tmp_path: Path) -> None:
    sidecar = sidecar_path(trimmed)
    elsewhere = tmp_path / "elsewhere.jsonl"
    sidecar.rename(elsewhere)
    sidecar.symlink_to(elsewhere)
    refused(trimmed, "is a symbolic link")


def test_restore_refuses_a_sidecar_others_may_read(trimmed: Path) -> None:
    os.chmod(sidecar_path(trimmed), 0o644)
    refused(trimmed, "has mode 0644")


def test_restore_refuses_a_folder_in_place_of_the_sidecar(trimmed: Path) -> None:
    sidecar = sidecar_path(trimmed)
    sidecar.unlink()
    sidecar.mkdir()
    refused(trimmed, "not a regular file")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user takes root")
def test_restore_refuses_a_sidecar_owned_by_another_user(trimmed: Path) -> None:
    os.chown(sidecar_path(trimmed), 4321, 4321)
    refused(trimmed, "owned by uid 4321, not by you")


def test_restore_refuses_a_tampered_sidecar(trimmed: Path) -> None:
    sidecar = sidecar_path(trimmed)
    records = sidecar.read_bytes().splitlines()
    record = orjson.loads(records[1])
    record["original"] = record["original"].replace("airline", "AIRLINE", 1)
    records[1] = orjson.dumps(record)
    sidecar.write_bytes(b"\n".join(records) + b"\n")
    refused(trimmed, "tampered")


def test_restore_refuses_a_sidecar_recording_another_written_file(trimmed: Path) -> None:
    sidecar = sidecar_path(trimmed)
    records = sidecar.read_bytes().splitlines()
    end = orjson.loads(records[-1])
    end["written_sha256"] = "0" * 64
    records[-1] = orjson.dumps(end)
    sidecar.write_bytes(b"\n".join(records) + b"\n")
    refused(trimmed, "changed since ctxmgr wrote it")


@pytest.mark.parametrize(
    "content",
    [b"not json\n", b'{"ctxmgr_backup": 1, "kind": "dataset"}\n', b'{"ctxmgr_backup": 9}\n{"end": true}\n'],
)
def test_restore_refuses_a_malformed_sidecar(trimmed: Path, content: bytes) -> None:
    sidecar_path(trimmed).write_bytes(content)
    refused(trimmed, "malformed")


def test_restore_refuses_records_out_of_order(trimmed: Path) -> None:
    sidecar = sidecar_path(trimmed)
    records = sidecar.read_bytes().splitlines()
    records[1], records[2] = records[2], records[1]
    sidecar.write_bytes(b"\n".join(records) + b"\n")
    refused(trimmed, "not in increasing order")


def test_a_dataset_split_over_processes_is_restored(tmp_path: Path) -> None:
    lines = DATASETS[0].read_bytes()
    path = tmp_path / "big.jsonl"
    path.write_bytes(lines * (9 * 1024 * 1024 // len(lines)))
    original = path.read_bytes()
    # In a fresh interpreter: a dataset is split over processes only while the process runs
    # no other thread, and a test worker may hold one (a session's server) at any time.
    code = (
        "import sys\n"
        "from ctxmgr.files import RunOptions, Settings, compact_paths\n"
        "from ctxmgr.state import MessageContextManager\n"
        "run = compact_paths([sys.argv[1]], MessageContextManager(max_messages=1), Settings(jobs=2),\n"
        "                    RunOptions(in_place=True, backup=True))\n"
        "print(run.exit_code, run.results[0].jobs)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, timeout=120, check=False)
    assert proc.stdout.split() == [b"0", b"2"], proc.stderr
    assert path.read_bytes() != original
    assert invoke(["restore", str(path)]).exit_code == 0
    assert path.read_bytes() == original


def test_restore_without_a_sidecar(tmp_path: Path) -> None:
    path = copy(ROOT / "samples" / "support-chat.json", tmp_path)
    refused(path, "no backup here")


# -- the property: restore(trim(x)) == x -------------------------------------------------------


def _document(state: Any, rng: random.Random) -> bytes:
    value = state.model_dump(mode="json")
    data = orjson.dumps(value, option=orjson.OPT_INDENT_2) if rng.random() < 0.5 else orjson.dumps(value)
    if rng.random() < 0.3:
        data = data.replace(b"\n", b"\r\n")
    return data + (b"\n" if rng.random() < 0.5 else b"")


def _dataset(rng: random.Random, count: int) -> bytes:
    lines = []
    for _ in range(count):
        if rng.random() < 0.15:
            lines.append(b"")
        lines.append(orjson.dumps(random_state(rng).model_dump(mode="json")))
    return b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b"")


WRITTEN: list[int] = []


@given(
    seed=st.integers(0, 2**32 - 1),
    conversations=st.integers(0, 5),
    max_messages=st.integers(1, 4),
    remove_tool_msgs=st.booleans(),
)
def test_restore_undoes_any_trim(seed: int, conversations: int, max_messages: int, remove_tool_msgs: bool) -> None:
    rng = random.Random(seed)
    data = _dataset(rng, conversations) if conversations else _document(random_state(rng), rng)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ("runs.jsonl" if conversations else "chat.json")
        path.write_bytes(data)
        manager = MessageContextManager(max_messages=max_messages, remove_tool_msgs=remove_tool_msgs)
        options = RunOptions(in_place=True, backup=True)
        first = compact_paths([str(path)], MessageContextManager(max_messages=max_messages + 1), options=options)
        assert first.exit_code == 0, first.results[0].input_error
        run = compact_paths([str(path)], manager, options=options)  # a second rewrite keeps the first original
        (result,) = run.results
        assert run.exit_code == 0, result.input_error
        assert (result.backup is not None) == result.written
        if result.written or first.results[0].written:
            WRITTEN.append(conversations)
            restored = restore(path)
            assert restored.size == len(data)
        else:
            assert not sidecar_path(path).exists()
        assert path.read_bytes() == data
        with pytest.raises(InputError):  # the sidecar went with the restore
            restore(path)


def test_the_property_rewrote_documents_and_datasets() -> None:
    """The property above is not vacuous: it restored trimmed documents and datasets."""
    if not WRITTEN:
        test_restore_undoes_any_trim()
    assert 0 in WRITTEN
    assert any(count > 1 for count in WRITTEN)
