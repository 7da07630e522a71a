"""Once a run's client is built, the command line freezes the collector's objects; a
program using the library is left alone (ctxmgr._summarizer.setup_done)."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from typing import Any

import pytest

from ctxmgr import _summarizer
from ctxmgr.providers._base import LoopClients


def _kept_client_in_two_runs() -> list[Any]:
    made: list[Any] = []

    async def run() -> None:
        clients = LoopClients()
        clients.keep()
        first, temporary = clients.acquire(lambda: made.append(object()) or made[-1])
        again, _ = clients.acquire(lambda: made.append(object()) or made[-1])
        assert again is first
        assert not temporary

    asyncio.run(run())
    asyncio.run(run())
    return made


def test_the_cli_freezes_once_when_the_first_kept_client_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(_summarizer, "_setup", {"freeze": False, "done": False})
    _summarizer.freeze_after_setup()
    assert frozen == []  # asked for, not done: nothing is built yet
    made = _kept_client_in_two_runs()
    assert len(made) == 2  # one client a run (a loop)
    assert frozen == [1]  # the first only


def test_a_program_using_the_library_is_not_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(_summarizer, "_setup", {"freeze": False, "done": False})
    _kept_client_in_two_runs()
    assert frozen == []


def test_a_temporary_client_freezes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(_summarizer, "_setup", {"freeze": True, "done": False})

    async def call() -> bool:
        _, temporary = LoopClients().acquire(object)
        return temporary

    assert asyncio.run(call())
    assert frozen == []


def test_the_cli_entry_point_asks_for_it() -> None:
    code = (
        "import sys; sys.argv = ['ctxmgr', '--version']\n"
        "from ctxmgr import _summarizer\n"
        "from ctxmgr.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(_summarizer._setup['freeze'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip().splitlines()[-1] == "True", done.stderr
