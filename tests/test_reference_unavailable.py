"""Without the reference's environment the comparisons are skipped outside CI, failed in it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _compare_without_reference(tmp_path: Path, *, ci: bool) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("CI", "PYTEST_"))}
    env.update(CTXMGR_REFERENCE_VENV=str(tmp_path / "none"), CTXMGR_REFERENCE_PYTHON=sys.executable + "-missing")
    if ci:
        env["CI"] = "true"
    compared = "tests/formats/test_native_reference.py"
    command = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", compared]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_outside_ci_the_comparisons_are_skipped_with_one_line(tmp_path: Path) -> None:
    done = _compare_without_reference(tmp_path, ci=False)
    assert done.returncode == 0, done.stdout
    lines = [line for line in done.stdout.splitlines() if "reference environment is unavailable" in line]
    assert len(lines) == 1, done.stdout  # one line for every test skipped, with the count
    assert lines[0].startswith("SKIPPED [2]")
    assert "CTXMGR_REFERENCE_PYTHON" in lines[0]  # what is missing, and how to give it


def test_in_ci_they_fail(tmp_path: Path) -> None:
    done = _compare_without_reference(tmp_path, ci=True)
    assert done.returncode == 1, done.stdout
    assert "2 errors" in done.stdout
