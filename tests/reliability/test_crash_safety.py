"""SIGKILL during ``ctxmgr trim --in-place`` on a batch: every file is the old one or the whole new one.

A batch of small conversations around a 30 MB dataset (so that there is time to kill in
the middle of a write) is rewritten in place by a real ``ctxmgr`` process, killed at
moments spread over a whole run (seeded, so a failure can be replayed). After each
kill, each file must be byte for byte the original or byte for byte what an
uninterrupted run writes, with its permission bits kept. The run after the last kill
must finish the job and leave no temporary file behind.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from conftest import SAMPLES

from ctxmgr._io import TEMP_SUFFIX
from ctxmgr.files._backup import SIDECAR_SUFFIX

KILL_POINTS = 20
"""How many times a run is killed (docs/reliability.md quotes this)."""
SEED = 20240515
DATASET_LINES = 20_000

SMALL = [
    "support-chat.json",
    "openai-chat.json",
    "openai-responses.json",
    "anthropic.json",
    "gemini.json",
    "langchain.json",
    "booking-chat.jsonl",
]
MODES = {"big-dataset.jsonl": 0o640, "a-support-chat.json": 0o600, "z-gemini.json": 0o755}


def _dataset() -> bytes:
    lines = []
    for i in range(DATASET_LINES):
        messages = [{"role": "system", "content": "Be brief."}]
        for turn in range(4):
            messages.append({"role": "user", "content": f"question {turn} of conversation {i}: " + "lorem " * 12})
            messages.append({"role": "assistant", "content": f"answer {turn}: " + "ipsum " * 12})
        lines.append(orjson.dumps({"messages": messages}))
    return b"\n".join(lines) + b"\n"


@pytest.fixture(scope="module")
def originals() -> dict[str, bytes]:
    """The batch, in the order it is given: small samples, a big dataset, small samples."""
    files = {f"a-{name}": (SAMPLES / name).read_bytes() for name in SMALL}
    files["big-dataset.jsonl"] = _dataset()
    files.update({f"z-{name}": (SAMPLES / name).read_bytes() for name in SMALL})
    return files


def _restore(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = folder / name
        if path.exists() and path.read_bytes() == data:
            continue
        path.write_bytes(data)
        path.chmod(MODES.get(name, 0o644))


def _command(names: list[str]) -> list[str]:
    return [sys.executable, "-m", "ctxmgr", "trim", "-n", "1", "--in-place", *names]


def _temporaries(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(TEMP_SUFFIX))


def test_sigkill_at_random_moments_loses_nothing(tmp_path: Path, originals: dict[str, bytes]) -> None:
    names = list(originals)
    # What an uninterrupted run writes, and how long it takes.
    reference = tmp_path / "reference"
    reference.mkdir()
    _restore(reference, originals)
    started = time.monotonic()
    done = subprocess.run(_command(names), cwd=reference, capture_output=True, timeout=120, check=False)
    duration = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    expected = {name: (reference / name).read_bytes() for name in names}
    changed = [n for n in names if expected[n] != originals[n]]
    assert "big-dataset.jsonl" in changed
    assert len(changed) >= 8  # old and new can be told apart for most of the batch

    folder = tmp_path / "batch"
    folder.mkdir()
    rng = random.Random(SEED)
    delays = sorted(rng.uniform(0.0, duration * 1.1) for _ in range(KILL_POINTS))
    seen = {"all old": 0, "mixed": 0, "all new": 0, "mid-write": 0}
    for delay in delays:
        _restore(folder, originals)
        for sidecar in folder.glob(f"*{SIDECAR_SUFFIX}"):
            sidecar.unlink()
        process = subprocess.Popen(_command(names), cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        new = 0
        for name in names:
            data = (folder / name).read_bytes()
            assert data in (originals[name], expected[name]), (name, delay)  # never a part of either
            assert stat.S_IMODE((folder / name).stat().st_mode) == MODES.get(name, 0o644), name
            new += data == expected[name] != originals[name]
            if data != originals[name]:  # a rewrite is never visible before its way back
                assert (folder / (name + SIDECAR_SUFFIX)).exists(), (name, delay)
        leftovers = _temporaries(folder)
        sidecars = sorted(name + SIDECAR_SUFFIX for name in names)
        assert set(os.listdir(folder)) - set(leftovers) - set(names) <= set(sidecars)  # nothing else appeared
        seen["mid-write"] += any(n.startswith(f".big-dataset.jsonl.{process.pid}.") for n in leftovers)
        seen["all old" if new == 0 else "all new" if new == len(changed) else "mixed"] += 1
    # The sweep reached the interesting moments: inside the batch and inside a write.
    assert seen["mixed"] >= 1, seen
    assert seen["mid-write"] >= 1, seen

    # The next run, uninterrupted, finishes the job and removes every leftover.
    final = subprocess.run(_command(names), cwd=folder, capture_output=True, timeout=120, check=False)
    assert final.returncode == 0, final.stderr
    assert _temporaries(folder) == []
    for name in names:
        assert (folder / name).read_bytes() == expected[name], name
        assert stat.S_IMODE((folder / name).stat().st_mode) == MODES.get(name, 0o644), name
    # Every rewritten file, whichever run rewrote it, goes back as it was.
    back = subprocess.run(
        [sys.executable, "-m", "ctxmgr", "restore", *changed], cwd=folder, capture_output=True, timeout=120, check=False
    )
    assert back.returncode == 0, back.stderr
    for name in names:
        assert (folder / name).read_bytes() == originals[name], name
    print(f"kill points: {KILL_POINTS} over {duration:.2f} s; {seen}")  # shown with -s


def test_a_read_only_file_in_a_batch_is_reported_and_the_others_are_done(tmp_path: Path) -> None:
    """The read-only file and folder cases of a single file are in test_io_safety.py."""
    names = []
    for name in ("support-chat.json", "openai-chat.json", "gemini.json"):
        shutil.copyfile(SAMPLES / name, tmp_path / name)
        names.append(name)
    (tmp_path / "openai-chat.json").chmod(0o444)
    before = (tmp_path / "openai-chat.json").read_bytes()
    done = subprocess.run(_command(names), cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    closing = "3 files: 2 changed, 1 failed\n"
    assert done.stderr == (
        "backup: support-chat.json.ctxmgr-removed.jsonl (ctxmgr restore support-chat.json puts the file back)\n"
        "error: openai-chat.json: the file is read-only; not rewritten\n"
        "backup: gemini.json.ctxmgr-removed.jsonl (ctxmgr restore gemini.json puts the file back)\n" + closing
    )
    assert not (tmp_path / "openai-chat.json.ctxmgr-removed.jsonl").exists()
    assert (tmp_path / "openai-chat.json").read_bytes() == before
    for name in ("support-chat.json", "gemini.json"):
        assert (tmp_path / name).read_bytes() != (SAMPLES / name).read_bytes()
    assert _temporaries(tmp_path) == []
