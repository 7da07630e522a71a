"""Trimming a file on the fast path and on the full one, and the text strategy, for the
outline readers' tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import settings, strategies as st

from ctxmgr.files import FileResult, FileSink, Settings, compact_file
from ctxmgr.state import BaseContextManager


def explored(*, max_examples: int, **options: Any) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``hypothesis.settings(max_examples=..., **options)`` for a property test, which it
    also marks ``fuzz``: under the fuzz profile (see ``tests/conftest.py``) the test
    explores the profile's multiple of ``max_examples``, with fresh random examples."""
    fuzzing = settings.get_current_profile_name() == "fuzz"
    scaled = max_examples * (settings.default.max_examples // 100) if fuzzing else max_examples

    def decorate(test: Callable[..., None]) -> Callable[..., None]:
        marked: Callable[..., None] = pytest.mark.fuzz(settings(max_examples=scaled, **options)(test))
        return marked

    return decorate


def scripts(max_size: int, *, lone_surrogates: bool = False) -> st.SearchStrategy[str]:
    """Text of every weight class of the token estimate (ASCII, U+0080..U+1FFF,
    U+2000..U+FFFF, beyond U+FFFF), mixed within one string. Lone surrogates only on
    request: a file (JSON text) cannot hold them, a value built in memory can."""
    middle = (
        st.characters(min_codepoint=0x2000, max_codepoint=0xFFFF, categories=None)
        if lone_surrogates
        else st.characters(min_codepoint=0x2000, max_codepoint=0xFFFF, exclude_categories=["Cs"])
    )
    return st.text(
        st.one_of(
            st.characters(max_codepoint=0x7F),
            st.characters(min_codepoint=0x80, max_codepoint=0x1FFF),
            middle,
            st.characters(min_codepoint=0x10000),
        ),
        max_size=max_size,
    )


def budget_managers(*, most_tokens: int = 40, last_pin: int = 8) -> st.SearchStrategy[BaseContextManager[Any]]:
    """``trim --max-tokens`` managers, as the command builds them: a budget of 1 to
    ``most_tokens``, with and without ``--start-on user``, and up to two pinned positions."""
    from ctxmgr.state._compose import trim_manager

    return st.builds(
        lambda max_tokens, start_on, pins: trim_manager(None, max_tokens=max_tokens, start_on=start_on, pin_index=pins),
        st.integers(1, most_tokens),
        st.sampled_from([None, "user"]),
        st.lists(st.integers(0, last_pin), max_size=2),
    )


def trim(
    path: Path, out: Path, manager: BaseContextManager[Any], fast: bool, *, strict: bool = False, measure: bool = True
) -> tuple[FileResult, bytes | None]:
    """Trim ``path`` into ``out`` (token counts on, unless not ``measure``): the result, and what was written."""
    out.unlink(missing_ok=True)
    settings = Settings(fast=fast, measure=measure, strict=strict)
    result = asyncio.run(compact_file(str(path), manager, FileSink(out), settings))
    return result, out.read_bytes() if out.exists() else None


def trim_both_ways(
    path: Path, manager: BaseContextManager[Any], folder: Path | None = None, *, strict: bool = False
) -> tuple[FileResult, FileResult]:
    """Trim ``path`` on both paths (outputs beside it, or in ``folder``) and check that
    everything agrees: bytes, errors, warnings, format and counts. ``(fast, full)``.

    The fast path also runs unmeasured (as ``trim`` without ``--json``), where it counts
    the tokens a compaction removes without the messages' tokens when it can: the same
    bytes and counters."""
    where = folder or path.parent
    fast, fast_out = trim(path, where / f"{path.name}.fast", manager, True, strict=strict)
    full, full_out = trim(path, where / f"{path.name}.full", manager, False, strict=strict)
    quick, quick_out = trim(path, where / f"{path.name}.quick", manager, True, strict=strict, measure=False)
    assert fast_out == full_out == quick_out
    assert quick.compaction == full.compaction
    assert str(fast.input_error) == str(full.input_error)
    assert (fast.format, fast.warnings, fast.errors, fast.bad_lines) == (
        full.format,
        full.warnings,
        full.errors,
        full.bad_lines,
    )
    assert (fast.conversations, fast.changed_conversations, fast.changed) == (
        full.conversations,
        full.changed_conversations,
        full.changed,
    )
    assert (fast.messages_before, fast.messages_after) == (full.messages_before, full.messages_after)
    assert (fast.tokens_before, fast.tokens_after) == (full.tokens_before, full.tokens_after)
    assert fast.compaction == full.compaction
    return fast, full


def trim_rows_both_ways(
    folder: Path, rows: list[Any], manager: BaseContextManager[Any], *, strict: bool = False
) -> tuple[FileResult, FileResult]:
    """:func:`trim_both_ways` on a dataset of ``rows`` (one JSON line each)."""
    path = folder / "rows.jsonl"
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return trim_both_ways(path, manager, folder, strict=strict)


def trim_document_both_ways(
    folder: Path, value: Any, manager: BaseContextManager[Any], *, pretty: bool, strict: bool = False
) -> tuple[FileResult, FileResult]:
    """:func:`trim_both_ways` on a document holding ``value`` (indented if ``pretty``)."""
    path = folder / "chat.json"
    path.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2 if pretty else 0))
    return trim_both_ways(path, manager, folder, strict=strict)
