"""`--engine ray`: the same per-line compaction as Ray Data tasks, on a local Ray of 2 CPUs.

One Ray serves the whole module (starting it costs seconds); every run is compared
byte for byte with the one-machine path on real conversations (tests/data).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA
from llm_server import LLMServer
from typer.testing import CliRunner

from ctxmgr.cli import app

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray

SLICE = DATA / "tau-airline-slice.jsonl"  # 16 real conversations, 290 kB: several stretches
WORKER_KEY = "sk-worker-environment-key-0123456789"


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    """One local Ray (2 CPUs) for the module. Its workers inherit this environment as
    it is when Ray starts: the key set here exists only there, never in the tests'."""
    before = set(threading.enumerate())
    saved = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = WORKER_KEY
    try:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    finally:
        if saved is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = saved
    yield
    ray.shutdown()
    # A thread left running would keep later tests' trims from forking (ctxmgr.parallel).
    deadline = time.monotonic() + 10
    while (left := set(threading.enumerate()) - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, sorted(t.name for t in left)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def both(tmp_path: Path, *args: str, data: Path = SLICE) -> tuple[Any, Any, Path, Path]:
    """Run a command on ``data`` here and on Ray, writing one file each."""
    here, there = tmp_path / "here.jsonl", tmp_path / "there.jsonl"
    local = invoke(*args, str(data), "-o", str(here), "--json")
    remote = invoke(*args, str(data), "-o", str(there), "--json", "--engine", "ray")
    return local, remote, here, there


def report(result: Any) -> dict[str, Any]:
    """The --json report, less the destination (each run wrote its own file)."""
    payload: dict[str, Any] = json.loads(result.stdout)
    for entry in payload["files"]:
        entry.pop("destination")
    return payload


def test_trim_on_ray_writes_the_same_bytes_warnings_and_counts(tmp_path: Path) -> None:
    local, remote, here, there = both(tmp_path, "trim", "-n", "3")
    assert local.exit_code == remote.exit_code == 0, remote.output
    assert there.read_bytes() == here.read_bytes()
    assert report(remote) == report(local)
    totals = report(remote)["totals"]
    assert totals["conversations"] == 16
    assert totals["messages_after"] < totals["messages_before"]
    # Real data: lines 5, 7 and 9 reuse tool call ids, which Chat Completions takes: no warning on either side.
    assert report(remote)["files"][0]["warnings"] == report(local)["files"][0]["warnings"] == []
    assert remote.stderr == local.stderr


def test_convert_on_ray_to_part_files_and_to_standard_output(tmp_path: Path) -> None:
    # Outside the working folder: under -o DIR/ a file is named by its base name, as here.
    data = tmp_path / SLICE.name
    shutil.copy(SLICE, data)
    to = ("convert", "--to", "anthropic", "--fix-call-ids")  # the slice reuses call ids, which Anthropic refuses
    local = invoke(*to, str(data), "-o", str(tmp_path / "here.jsonl"))
    parts = invoke(*to, str(data), "-o", f"{tmp_path}/parts/", "--engine", "ray")
    stdout = invoke(*to, str(data), "--engine", "ray")
    assert local.exit_code == parts.exit_code == stdout.exit_code == 0, parts.output
    expected = (tmp_path / "here.jsonl").read_bytes()
    files = sorted((tmp_path / "parts").iterdir())
    assert len(files) > 1, "the 290 kB slice is cut into several stretches on 2 CPUs"
    assert [f.name for f in files] == [f"tau-airline-slice-{i:05d}.jsonl" for i in range(len(files))]
    assert b"".join(f.read_bytes() for f in files) == expected
    assert stdout.stdout_bytes == expected
    assert parts.stderr == stdout.stderr == local.stderr


@pytest.mark.parametrize("on_error", ["skip", "fail"])
def test_bad_lines_are_reported_with_their_line_number_as_here(tmp_path: Path, on_error: str) -> None:
    lines = SLICE.read_bytes().splitlines(keepends=True)
    lines[12:12] = [b"{not json\n", b"\n"]  # in a late stretch, after a blank line's number
    lines.insert(3, b'{"messages": 5}\n')
    data = tmp_path / "bad.jsonl"
    data.write_bytes(b"".join(lines))
    local, remote, here, there = both(tmp_path, "trim", "-n", "2", "--on-error", on_error, data=data)
    assert local.exit_code == remote.exit_code == 2
    assert report(remote) == report(local)
    assert remote.stderr == local.stderr
    if on_error == "skip":
        assert f"{data}:4:" in remote.stderr
        assert f"{data}:14:" in remote.stderr
        assert there.read_bytes() == here.read_bytes()
        assert b"{not json\n" in there.read_bytes()
    else:
        assert not there.exists()
        assert not here.exists()
        assert remote.stderr.count("error:") == 1
        assert f"{data}:4:" in remote.stderr


def test_summaries_on_ray_match_and_use_the_workers_key(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The offline digest gives the same bytes; a model's calls carry the key of the
    workers' environment, which this process does not have."""
    assert "OPENAI_API_KEY" not in os.environ
    offline = ("summarize", "--model", "offline", "--max-messages", "12", "--keep-recent", "4", "--no-cache")
    local, remote, here, there = both(tmp_path, *offline)
    assert local.exit_code == remote.exit_code == 0, remote.output
    assert there.read_bytes() == here.read_bytes()
    assert report(remote) == report(local)
    assert report(remote)["totals"]["summary_calls"] > 0
    assert remote.stderr == local.stderr
    few = tmp_path / "few.jsonl"
    few.write_bytes(b"".join(SLICE.read_bytes().splitlines(keepends=True)[:2]))
    model = ("summarize", str(few), "--model", "gpt-4o-mini", "--base-url", llm_server.openai_url, "--no-cache")
    model += ("--max-messages", "12", "--keep-recent", "4", "-o")
    called = invoke(*model, str(tmp_path / "called.jsonl"), "--engine", "ray")
    assert called.exit_code == 0, called.output
    calls = llm_server.request_count
    assert calls > 0
    sent = {value for r in llm_server.requests for name, value in r.headers.items() if name.lower() == "authorization"}
    assert sent == {f"Bearer {WORKER_KEY}"}
    monkeypatch.setenv("OPENAI_API_KEY", WORKER_KEY)  # the same answers, asked from here
    assert invoke(*model, str(tmp_path / "called-here.jsonl")).exit_code == 0
    assert llm_server.request_count == 2 * calls
    assert (tmp_path / "called.jsonl").read_bytes() == (tmp_path / "called-here.jsonl").read_bytes()


def test_no_key_is_shipped_to_ray(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxmgr._engines import ray as engine

    monkeypatch.setenv("OPENAI_API_KEY", "sk-driver-key-abcdefgh")
    monkeypatch.setenv("GEMINI_API_KEY", "gm-driver-key-abcdefgh")
    passed: dict[str, Any] = {}

    class Unstarted:
        @staticmethod
        def is_initialized() -> bool:
            return False

        @staticmethod
        def init(**kwargs: Any) -> None:
            passed.update(kwargs)

    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")  # joined, not started: init is all there is
    engine._connect(Unstarted, lambda _text: None)
    shown = json.dumps(passed["runtime_env"])
    assert "driver-key" not in shown
    assert "env_vars" not in passed["runtime_env"]
    # A key given to this process (--api-key-file) would travel inside the manager: refused.
    key_file = tmp_path / "key"
    key_file.write_text("sk-from-a-key-file-0123456789\n")
    key_file.chmod(0o600)
    refused = invoke(
        "summarize", str(SLICE), "--model", "gpt-4o-mini", "--api-key-file", str(key_file), "--engine", "ray"
    )
    assert refused.exit_code == 2
    assert refused.stderr.strip().splitlines() == [
        "error: --engine ray sends no API key to the workers: drop --api-key-file and set the provider's key "
        "variable (OPENAI_API_KEY, GEMINI_API_KEY) in the workers' environment"
    ]


def test_without_engine_ray_is_never_imported_and_without_ray_one_line(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    shutil.copy(SLICE, data)
    code = (
        "import runpy, sys\n"
        "if sys.argv[1] == 'hide':\n"
        "    sys.modules['ray'] = None  # as if Ray were not installed\n"
        "sys.argv = ['ctxmgr', *sys.argv[2:]]\n"
        "try:\n"
        "    runpy.run_module('ctxmgr', run_name='__main__')\n"
        "finally:\n"
        "    sys.stderr.write('RAY=' + str(sys.modules.get('ray') is not None) + '\\n')\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        return subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, check=False, env=env
        )

    plain = run("show", "trim", str(data), "-o", str(tmp_path / "out.jsonl"))
    assert plain.returncode == 0, plain.stderr
    assert plain.stderr.splitlines()[-1] == "RAY=False"
    missing = run("hide", "trim", str(data), "--engine", "ray", "-o", str(tmp_path / "ray.jsonl"))
    assert missing.returncode == 2
    assert missing.stderr.splitlines() == ["error: --engine ray needs Ray Data: pip install 'ctxmgr[ray]'", "RAY=False"]
    assert not (tmp_path / "ray.jsonl").exists()


def test_a_folder_gives_parts_per_file_and_a_document_is_refused(tmp_path: Path) -> None:
    lines = SLICE.read_bytes().splitlines(keepends=True)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(b"".join(lines[:6]))
    (folder / "b.jsonl").write_bytes(b"".join(lines[6:]))
    remote = invoke("trim", "-n", "2", str(folder), "-o", f"{tmp_path}/out/", "--engine", "ray", "--json")
    local = invoke("trim", "-n", "2", str(folder), "-o", f"{tmp_path}/here/", "--json")
    assert remote.exit_code == local.exit_code == 0, remote.output
    assert [entry["path"] for entry in report(remote)["files"]] == [f"{folder}/a.jsonl", f"{folder}/b.jsonl"]
    assert report(remote)["totals"] == report(local)["totals"]
    for name in ("a", "b"):
        parts = sorted((tmp_path / "out").glob(f"{name}-*.jsonl"))
        assert parts
        assert b"".join(p.read_bytes() for p in parts) == (tmp_path / "here" / f"{name}.jsonl").read_bytes()
    several = invoke("trim", "-n", "2", str(folder), "--engine", "ray")
    assert several.exit_code == 2
    assert several.stdout == ""
    assert several.stderr.splitlines() == ["error: several inputs cannot all go to standard output; use -o DIR/"]
    document = tmp_path / "one.json"
    document.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    refused = invoke("trim", str(document), "--engine", "ray")
    assert refused.exit_code == 2
    assert refused.stderr.splitlines() == [
        f"error: {document}: --engine ray compacts datasets (JSONL, one conversation per line); "
        "this file is not one: compact it without --engine"
    ]


@pytest.mark.parametrize("lossless", [False, True])
def test_what_a_conversion_drops_is_worded_once_for_the_file(tmp_path: Path, lossless: bool) -> None:
    """Lines in an early and a late stretch carry request keys Anthropic has no place for:
    each stretch is compacted with finish=False and the file's note comes once, as here."""
    extra = b'{"messages": [{"role": "user", "content": "hi"}], "temperature": 0.2, "logprobs": true}\n'
    lines = SLICE.read_bytes().splitlines(keepends=True)
    lines[14:14] = [extra]
    lines.insert(1, extra)
    data = tmp_path / "keys.jsonl"
    data.write_bytes(b"".join(lines))
    flags = ("convert", "--to", "anthropic", "--fix-call-ids", *(["--lossless"] if lossless else []))
    local, remote, here, there = both(tmp_path, *flags, data=data)
    assert local.exit_code == remote.exit_code == (1 if lossless else 0), remote.output
    assert report(remote) == report(local)
    assert remote.stderr == local.stderr
    entry = report(remote)["files"][0]
    notes = [m for m in entry["errors" if lossless else "warnings"] if "has no place for" in m]
    assert len(notes) == 1, entry
    assert "temperature" in notes[0]
    if lossless:
        assert not there.exists()
        assert not here.exists()
    else:
        assert there.read_bytes() == here.read_bytes()


def test_the_engine_walks_and_writes_by_the_rules_of_the_one_machine_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One tree, with and without --engine ray: a link out of it, a git-ignored file, a
    hidden folder and file, a JSON file of no conversation are left out and named the
    same; a linked -o is refused the same."""
    lines = SLICE.read_bytes().splitlines(keepends=True)
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / "chats" / "sub").mkdir(parents=True)
    (repo / "chats" / ".hidden").mkdir()
    outside.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("chats/built.jsonl\n")
    (repo / "chats" / "a.jsonl").write_bytes(b"".join(lines[:3]))
    (repo / "chats" / "sub" / "b.jsonl").write_bytes(b"".join(lines[3:6]))
    for secret in (repo / "chats" / "built.jsonl", repo / "chats" / ".hidden" / "c.jsonl", outside / "secret.jsonl"):
        secret.write_bytes(lines[6])
    (repo / "chats" / ".d.jsonl").write_bytes(lines[7])
    (repo / "chats" / "package.json").write_text('{"name": "not-a-conversation"}\n')
    (repo / "chats" / "evil.jsonl").symlink_to(outside / "secret.jsonl")
    (repo / "linked").symlink_to(outside, target_is_directory=True)
    monkeypatch.chdir(repo)

    local = invoke("trim", "-n", "3", "chats", "-o", "here/", "--json")
    remote = invoke("trim", "-n", "3", "chats", "-o", "there/", "--json", "--engine", "ray")
    assert local.exit_code == remote.exit_code == 0, remote.output
    assert report(remote) == report(local)
    assert remote.stderr == local.stderr
    skipped = {(entry["path"], entry["reason"]) for entry in report(remote)["skipped"]}
    assert skipped == {
        ("chats/evil.jsonl", "symbolic link to outside the folder"),
        ("chats/built.jsonl", "git-ignored"),
        ("chats/.d.jsonl", "hidden file"),
        ("chats/.hidden", "hidden folder"),
        ("chats/package.json", "not a conversation"),
    }
    assert [entry["path"] for entry in report(remote)["files"]] == ["chats/a.jsonl", "chats/sub/b.jsonl"]
    for name in ("a", "sub/b"):
        parts = sorted((repo / "there").glob(f"{name}-*.jsonl"))
        assert b"".join(p.read_bytes() for p in parts) == (repo / "here" / f"{name}.jsonl").read_bytes()

    # One file found, the rest left out by --exclude: the same closing line.
    one_here = invoke("trim", "-n", "3", "chats", "--exclude", "sub", "-o", "here-one/")
    one_there = invoke("trim", "-n", "3", "chats", "--exclude", "sub", "-o", "there-one/", "--engine", "ray")
    assert one_here.exit_code == one_there.exit_code == 0, one_there.output
    assert one_there.stderr == one_here.stderr
    assert "skipped: chats/sub (--exclude sub)" in one_there.stderr.splitlines()

    linked_here = invoke("trim", "-n", "3", "chats/a.jsonl", "-o", "linked/")
    linked_there = invoke("trim", "-n", "3", "chats/a.jsonl", "-o", "linked/", "--engine", "ray")
    assert linked_here.exit_code == linked_there.exit_code == 2
    assert linked_there.stderr == linked_here.stderr
    assert linked_there.stderr.startswith("error: linked: is a symbolic link"), linked_there.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["secret.jsonl"]


class _StubRay:
    """What ``_connect`` asks of Ray, recording the folder ``init`` ran in."""

    __version__ = "2.60.0"

    def __init__(self) -> None:
        self.init_folder: str | None = None
        self.address: str | None = None

    def is_initialized(self) -> bool:
        return False

    def init(self, address: str | None = None, **options: Any) -> None:
        self.init_folder = os.getcwd()
        self.address = address


@pytest.mark.parametrize("address", [None, "", "local"])
def test_ray_address_local_starts_a_local_ray_like_no_address(
    address: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """"local" makes Ray start a cluster on this machine: it gets the loopback, token
    and private folder of one ctxmgr starts."""
    from ctxmgr._engines import ray as engine

    monkeypatch.setitem(sys.modules, "ray", _StubRay())
    if address is None:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    else:
        monkeypatch.setenv("RAY_ADDRESS", address)
    assert engine._starts_a_local_ray()
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    assert not engine._starts_a_local_ray()


def test_a_cluster_at_ray_address_is_joined_from_the_root_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers read the driver's folder when they start, after ``init`` returned: it
    must be one that still exists and no other user can add a module to."""
    from ctxmgr._engines import ray as engine

    stub = _StubRay()
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    monkeypatch.chdir(tmp_path)
    assert engine._connect(stub, lambda _text: None) is None
    assert stub.init_folder == os.path.abspath(os.sep)
    assert stub.address == "10.0.0.5:6379"
    assert os.getcwd() == str(tmp_path)
