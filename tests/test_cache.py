"""The summary cache's entries: written atomically, cheaply, never failing a run."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from ctxmgr import cache as cache_module
from ctxmgr._io import TEMP_SUFFIX
from ctxmgr.cache import CachingSummarizer


class Echo:
    name = "echo:model"

    def __init__(self) -> None:
        self.calls = 0

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        self.calls += 1
        return f"summary of {text}"


def _summarize(summarizer: CachingSummarizer, text: str) -> str:
    return asyncio.run(summarizer.summarize(text, instructions="i", max_tokens=10))


def test_an_entry_is_written_without_fsync_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An fsync per summary blocked the event loop; a lost entry only costs a call.
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd))
    inner = Echo()
    summarizer = CachingSummarizer(inner, tmp_path / "cache", "echo")
    assert _summarize(summarizer, "a") == "summary of a"
    assert _summarize(summarizer, "b") == "summary of b"
    assert synced == []
    entries = sorted((tmp_path / "cache").rglob("*"))
    assert [e for e in entries if e.is_file() and e.suffix == ".json"] != []
    assert not [e for e in entries if e.name.endswith(TEMP_SUFFIX)]
    again = CachingSummarizer(inner, tmp_path / "cache", "echo")
    assert _summarize(again, "a") == "summary of a"
    assert (again.hits, again.misses, inner.calls) == (1, 0, 2)


def test_a_failed_write_leaves_no_temporary_and_does_not_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_module.os, "replace", refuse)
    inner = Echo()
    summarizer = CachingSummarizer(inner, tmp_path / "cache", "echo")
    assert _summarize(summarizer, "a") == "summary of a"
    assert [p for p in (tmp_path / "cache").rglob("*") if p.is_file()] == []
    assert summarizer.lookup(summarizer.key("a", instructions="i", max_tokens=10)) is None


def test_an_entry_replaces_an_older_one(tmp_path: Path) -> None:
    summarizer = CachingSummarizer(Echo(), tmp_path / "cache", "echo")
    key = summarizer.key("a", instructions="i", max_tokens=10)
    summarizer.store(key, "first")
    summarizer.store(key, "second")
    assert summarizer.lookup(key) == "second"
    assert len([p for p in (tmp_path / "cache").rglob("*") if p.is_file()]) == 1
