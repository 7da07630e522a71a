"""Once a run's client is built, or the offline digest (its construction is its set-up), the
command line freezes the collector's objects; a program using the library is left alone
(ctxmgr._summarizer.setup_done)."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
from typing import Any

import pytest

from ctxmgr import _summarizer
from ctxmgr.providers._base import LoopClients
from ctxmgr.providers._offline import OfflineSummarizer


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


def _watched(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[tuple[int, ...]]]:
    """The collector's freezes and thresholds set from now on, none done; nothing asked yet."""
    frozen: list[int] = []
    thresholds: list[tuple[int, ...]] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(gc, "set_threshold", lambda *values: thresholds.append(values))
    monkeypatch.setattr(_summarizer, "_setup", {"freeze": False, "done": False})
    return frozen, thresholds


def test_the_cli_freezes_once_when_the_first_kept_client_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen, thresholds = _watched(monkeypatch)
    _summarizer.freeze_after_setup()
    assert frozen == []  # asked for, not done: nothing is built yet
    made = _kept_client_in_two_runs()
    assert len(made) == 2  # one client a run (a loop)
    assert frozen == [1]  # the first only
    first, *older = gc.get_threshold()
    assert thresholds == [(max(first, _summarizer.YOUNG_AFTER_SETUP), *older)]  # young collections spaced, once


def test_the_cli_freezes_once_when_the_offline_digest_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen, thresholds = _watched(monkeypatch)
    _summarizer.freeze_after_setup()
    OfflineSummarizer()
    OfflineSummarizer("offline")
    assert frozen == [1]
    first, *older = gc.get_threshold()
    assert thresholds == [(max(first, _summarizer.YOUNG_AFTER_SETUP), *older)]


def test_a_program_building_the_offline_digest_is_not_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen, thresholds = _watched(monkeypatch)
    OfflineSummarizer()
    assert frozen == []
    assert thresholds == []


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


def test_the_collector_is_paused_while_the_cli_sets_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only in the command line's process, only until the set-up is done, and it is
    enabled again however the set-up ends."""
    monkeypatch.setattr(gc, "freeze", lambda: None)
    monkeypatch.setattr(gc, "set_threshold", lambda *values: None)
    monkeypatch.setattr(_summarizer, "_setup", {"freeze": False, "done": False})
    with _summarizer.setting_up():
        assert gc.isenabled()  # a program using the library: left alone
    _summarizer.freeze_after_setup()
    seen: list[bool] = []

    def failing_set_up() -> None:
        with _summarizer.setting_up():
            seen.append(gc.isenabled())
            raise ImportError("no SDK")

    with pytest.raises(ImportError):
        failing_set_up()
    assert seen == [False]
    assert gc.isenabled()
    gc.disable()
    try:
        with _summarizer.setting_up():
            pass
        assert not gc.isenabled()  # a collector the program paused stays paused
    finally:
        gc.enable()
    _summarizer.setup_done()
    with _summarizer.setting_up():
        assert gc.isenabled()  # done: nothing changes


def test_a_summary_run_sets_up_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch, llm_server: Any) -> None:
    """Through the OpenAI provider against the test server: paused for the SDK's import
    and the kept client's build, enabled for the calls."""
    from ctxmgr.providers import ProviderOptions
    from ctxmgr.providers._openai import OpenAISummarizer

    monkeypatch.setattr(gc, "freeze", lambda: None)
    monkeypatch.setattr(gc, "set_threshold", lambda *values: None)
    monkeypatch.setattr(_summarizer, "_setup", {"freeze": True, "done": False})
    states: list[bool] = []
    made = LoopClients.acquire

    def acquire(self: LoopClients, make: Any) -> Any:
        states.append(gc.isenabled())
        return made(self, make)

    monkeypatch.setattr(LoopClients, "acquire", acquire)
    summarizer = OpenAISummarizer("m", ProviderOptions(base_url=llm_server.openai_url, api_key="k"))

    async def run() -> list[str]:
        await summarizer.aopen()
        try:
            return [await summarizer.summarize("t", instructions="i", max_tokens=50) for _ in range(2)]
        finally:
            await summarizer.aclose()

    assert all(asyncio.run(run()))
    assert states == [False, True]  # paused for the first (the build), not after
    assert gc.isenabled()
    assert _summarizer._setup["done"]
