"""The reference package, 10xgraph 0.10.3, in a virtual environment built once and reused.

10xgraph needs Python >= 3.12 and ctxmgr runs on 3.11, so the reference cannot be
imported by the test process: it runs in a worker (``tests/_reference_calls.py``) in its
own environment. Building it takes a few seconds (a bare ``venv`` plus one ``pip
install`` by this environment's pip, which is faster than bootstrapping pip inside the
new environment); the result is kept where ``CTXMGR_REFERENCE_VENV`` points, else in
pytest's cache folder, and rebuilt only when it is missing or incomplete.

The build starts in the background as soon as the test session knows it will need it
(:class:`BackgroundBuild`, started from ``conftest.py`` once tests are collected), so
it overlaps the tests that run before the comparison instead of adding to the run.

Which Python >= 3.12: ``CTXMGR_REFERENCE_PYTHON``, else this interpreter if it is new
enough, else ``python3.12``/``python3.13``/``python3.14`` on the ``PATH``, else pyenv's
versions. Finding none is an error that says how to provide one, never a skip: CI must
run the comparison.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

REFERENCE_REQUIREMENT = "10xgraph==0.10.3"
_READY = "ctxmgr-reference-ready"
"""A file written last: an environment without it is incomplete (a build was killed)."""


class ReferenceUnavailable(RuntimeError):
    """The reference environment cannot be found or built; the message says what to do."""


def default_venv(cache_dir: Path | None) -> Path:
    """Where the environment lives: ``CTXMGR_REFERENCE_VENV``, else under ``cache_dir``
    (pytest's cache), else in the system's temporary folder (pytest's cache plugin off)."""
    given = os.environ.get("CTXMGR_REFERENCE_VENV")
    if given:
        return Path(given)
    if cache_dir is not None:
        return cache_dir / "venv"
    return Path(tempfile.gettempdir()) / "ctxmgr-reference-tenxgraph-0.10.3"


class BackgroundBuild:
    """:func:`ensure_reference` in a thread: started early, waited for by the first user."""

    def __init__(self, venv: Path) -> None:
        self.venv = venv
        self._python: Path | None = None
        self._error: BaseException | None = None
        # The environment as it is now: tests change os.environ while the build runs.
        self._env = dict(os.environ)
        self._thread = threading.Thread(target=self._build, name="reference-venv", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        try:
            self._python = ensure_reference(self.venv, env=self._env)
        except BaseException as exc:  # handed to the waiting test
            self._error = exc

    def python(self) -> Path:
        """The reference environment's Python, once built; the build's error if it failed."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._python is not None
        return self._python


def _version(python: str, env: dict[str, str] | None = None) -> tuple[int, int] | None:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            env=env,
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return int(out[0]), int(out[1])


def find_python(env: dict[str, str] | None = None) -> str:
    """A Python >= 3.12 interpreter (see the module docstring for the order)."""
    env = dict(os.environ) if env is None else env
    given = env.get("CTXMGR_REFERENCE_PYTHON")
    if given:
        version = _version(given, env)
        if version is None or version < (3, 12):
            raise ReferenceUnavailable(f"CTXMGR_REFERENCE_PYTHON={given} is not a Python >= 3.12 ({version})")
        return given
    if sys.version_info >= (3, 12):
        return sys.executable
    candidates = [shutil.which(f"python3.{minor}", path=env.get("PATH")) for minor in (12, 13, 14)]
    pyenv = Path(env.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if pyenv.is_dir():
        candidates += [str(p / "bin" / "python") for p in sorted(pyenv.iterdir()) if p.name.startswith("3.1")]
    for candidate in filter(None, candidates):
        version = _version(candidate, env)
        if version is not None and version >= (3, 12):
            return candidate
    raise ReferenceUnavailable(
        f"the differential test needs a Python >= 3.12 to install {REFERENCE_REQUIREMENT}, and found none "
        "(tried python3.12, python3.13, python3.14 on the PATH and pyenv's versions): install one, or set "
        "CTXMGR_REFERENCE_PYTHON to its path"
    )


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_reference(venv: Path, env: dict[str, str] | None = None) -> Path:
    """The Python of a ready environment at ``venv`` holding the reference, built if needed.

    ``env``: the environment variables the build runs with (pip's index settings among
    them); this process's by default.
    """
    if (venv / _READY).is_file():
        return venv_python(venv)
    env = dict(os.environ) if env is None else env
    python = find_python(env)
    venv.parent.mkdir(parents=True, exist_ok=True)
    # Built beside its final place and renamed into it, so a killed build or a second
    # test run building at the same time never leaves a half-built environment there.
    building = Path(tempfile.mkdtemp(prefix=f"{venv.name}.building-", dir=venv.parent))
    try:
        _run([python, "-m", "venv", "--without-pip", "--clear", str(building)], "create the environment", env)
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(venv_python(building)),
                "install",
                "--quiet",
                "--no-compile",
                "--disable-pip-version-check",
                REFERENCE_REQUIREMENT,
            ],
            f"install {REFERENCE_REQUIREMENT}",
            env,
        )
        (building / _READY).write_text(REFERENCE_REQUIREMENT + "\n", encoding="utf-8")
        if venv.exists():
            shutil.rmtree(venv)  # incomplete: no ready mark
        try:
            building.rename(venv)
        except OSError:
            if not (venv / _READY).is_file():  # not a concurrent build that won the race
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return venv_python(venv)


def _run(command: list[str], what: str, env: dict[str, str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False, env=env)
    if done.returncode != 0:
        raise ReferenceUnavailable(
            f"could not {what} for the reference ({' '.join(command)}), exit {done.returncode}:\n"
            f"{done.stderr.strip()[-2000:]}"
        )


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
