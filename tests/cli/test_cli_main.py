"""The console-script entry point (``ctxmgr.cli:main``)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from ctxmgr.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@pytest.mark.parametrize("fails", [False, True])
def test_main_freezes_the_collector_once_the_command_is_done(
    fails: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The collections at interpreter exit walked every object left (~0.25 s after a
    # summary run, the output long written); frozen objects are skipped.
    out = tmp_path / "out.json"
    written_when_frozen: list[bool] = []
    monkeypatch.setattr(gc, "freeze", lambda: written_when_frozen.append(out.exists()))
    source = tmp_path / "missing.json" if fails else SAMPLES / "short-chat.json"
    monkeypatch.setattr(sys, "argv", ["ctxmgr", "trim", str(source), "-o", str(out)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert (exited.value.code != 0) is fails
    assert written_when_frozen == [not fails]
