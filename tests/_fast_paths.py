"""Trimming a file on the fast path and on the full one, for the outline readers' tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ctxmgr.files import FileResult, FileSink, Settings, compact_file
from ctxmgr.state import MessageContextManager


def trim(path: Path, out: Path, manager: MessageContextManager, fast: bool) -> tuple[FileResult, bytes | None]:
    """Trim ``path`` into ``out`` (token counts on): the result, and what was written."""
    out.unlink(missing_ok=True)
    result = asyncio.run(compact_file(str(path), manager, FileSink(out), Settings(fast=fast, measure=True)))
    return result, out.read_bytes() if out.exists() else None


def trim_both_ways(
    path: Path, manager: MessageContextManager, folder: Path | None = None
) -> tuple[FileResult, FileResult]:
    """Trim ``path`` on both paths (outputs beside it, or in ``folder``) and check that
    everything agrees: bytes, errors, warnings, format and counts. ``(fast, full)``."""
    where = folder or path.parent
    fast, fast_out = trim(path, where / f"{path.name}.fast", manager, True)
    full, full_out = trim(path, where / f"{path.name}.full", manager, False)
    assert fast_out == full_out
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
    return fast, full
