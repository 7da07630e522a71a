"""The offline digest's set-up is its construction: in the command line's process the
collector's objects are frozen then (ctxmgr._summarizer.setup_done); a program using the
library is left alone."""

from __future__ import annotations

import gc

import pytest

from ctxmgr import _summarizer
from ctxmgr.providers._offline import OfflineSummarizer


def test_the_cli_freezes_once_when_the_offline_digest_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen: list[int] = []
    thresholds: list[tuple[int, ...]] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(gc, "set_threshold", lambda *values: thresholds.append(values))
    monkeypatch.setattr(_summarizer, "_setup", {"freeze": False, "done": False})
    _summarizer.freeze_after_setup()
    OfflineSummarizer()
    OfflineSummarizer("offline")
    assert frozen == [1]
    first, *older = gc.get_threshold()
    assert thresholds == [(max(first, _summarizer.YOUNG_AFTER_SETUP), *older)]


def test_a_program_building_the_offline_digest_is_not_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen: list[int] = []
    thresholds: list[tuple[int, ...]] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(gc, "set_threshold", lambda *values: thresholds.append(values))
    monkeypatch.setattr(_summarizer, "_setup", {"freeze": False, "done": False})
    OfflineSummarizer()
    assert frozen == []
    assert thresholds == []
