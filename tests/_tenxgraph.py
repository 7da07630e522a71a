"""The reference package, 10xGraph, in a virtual environment of its own, for tests.

``10xgraph`` (imported as ``tenxgraph``) needs Python 3.12 or newer, which ctxmgr does
not: :func:`tenxgraph_python` finds such a Python (this one, ``python3.12``... on the
``PATH``, or a pyenv version), builds a virtual environment with the pinned release once
(kept in the given folder, pytest's cache, for later runs) and returns its interpreter.
No such Python is a failure, not a skip: a test that checks ctxmgr against the reference
must not pass without the reference. :func:`run_reference` runs one script there,
exchanging JSON, so a whole batch of checks costs one process.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["REFERENCE", "run_reference", "tenxgraph_python"]

REFERENCE = "10xgraph==0.10.3"
"""The release ctxmgr's native format is checked against."""

_MINIMUM = (3, 12)


def _version(python: str) -> tuple[int, int] | None:
    try:
        found = subprocess.run(
            [python, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    major, minor = found.stdout.split()
    return int(major), int(minor)


def _candidates() -> Iterator[str]:
    if sys.version_info >= _MINIMUM:
        yield sys.executable
    for minor in range(12, 20):
        found = shutil.which(f"python3.{minor}")
        if found:
            yield found
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    yield from sorted(glob.glob(os.path.join(pyenv, "versions", "3.1[2-9]*", "bin", "python")))


def _base_python() -> str:
    tried = []
    for python in _candidates():
        version = _version(python)
        tried.append(f"{python} ({'.'.join(map(str, version)) if version else 'does not run'})")
        if version is not None and version >= _MINIMUM:
            return python
    raise RuntimeError(
        f"{REFERENCE} needs Python >= 3.12 and none was found (tried: {', '.join(tried) or 'nothing'}); "
        "install one (for example with pyenv) to run the reference checks"
    )


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One builder at a time: parallel test runs share the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def tenxgraph_python(cache: Path) -> Path:
    """The interpreter of a virtual environment holding :data:`REFERENCE`, built in
    ``cache`` the first time (a few seconds; later runs find it there)."""
    venv = cache / "venv"
    python = venv / "bin" / "python"
    done = venv / "installed.txt"
    with _locked(cache):
        if done.exists() and done.read_text() == REFERENCE and python.exists():
            return python
        shutil.rmtree(venv, ignore_errors=True)
        base = _base_python()
        steps = [
            [base, "-m", "venv", str(venv)],
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", REFERENCE],
        ]
        for step in steps:
            run = subprocess.run(step, capture_output=True, text=True, timeout=600, check=False)
            if run.returncode != 0:
                raise RuntimeError(f"building the {REFERENCE} environment failed: {' '.join(step)}\n{run.stderr}")
        done.write_text(REFERENCE)
    return python


def run_reference(python: Path, script: str, payload: Any) -> Any:
    """Run ``script`` with the reference's interpreter: it reads ``payload`` as JSON on
    standard input and prints its answer as JSON on standard output."""
    run = subprocess.run(
        [str(python), "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if run.returncode != 0:
        raise RuntimeError(f"the reference script failed:\n{run.stderr}")
    return json.loads(run.stdout)
