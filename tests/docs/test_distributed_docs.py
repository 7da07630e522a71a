"""docs/distributed.md: its Dask example runs, and writes what `ctxmgr trim` writes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import DATA, REPO
from typer.testing import CliRunner

from ctxmgr.cli import app

pytest.importorskip("dask")


def _example(marker: str) -> str:
    text = (REPO / "docs" / "distributed.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    (block,) = [b for b in blocks if marker in b]
    return block


def test_the_dask_example_writes_what_trim_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import dask

    monkeypatch.chdir(tmp_path)
    shutil.copy(DATA / "tau-airline-slice.jsonl", "chats.jsonl")
    # The same partitions and calls as the default scheduler's processes, in this thread:
    # a pool of threads left running would keep later tests from forking (ctxmgr.parallel).
    with dask.config.set(scheduler="sync"):
        exec(compile(_example("import dask.bag"), "docs/distributed.md", "exec"), {"__name__": "__example__"})
    printed = capsys.readouterr().out
    trimmed = CliRunner().invoke(app, ["trim", "chats.jsonl", "-n", "3", "-v", "-o", "expected.jsonl"])
    assert trimmed.exit_code == 0, trimmed.output
    assert Path("chats.trimmed.jsonl").read_bytes() == Path("expected.jsonl").read_bytes()
    assert printed.splitlines() == trimmed.stderr.splitlines()


def test_compact_lines_takes_text_and_raises_the_first_bad_line() -> None:
    from ctxmgr.errors import InputError
    from ctxmgr.files import Settings, compact_lines
    from ctxmgr.state import MessageContextManager

    lines = (DATA / "tau-airline-slice.jsonl").read_bytes().split(b"\n")[:4]
    manager = MessageContextManager(2)
    as_bytes = compact_lines(lines, manager, Settings(), first_line=21, source="s.jsonl")
    as_text = compact_lines([line.decode() for line in lines], manager, Settings(), first_line=21, source="s.jsonl")
    assert as_text.lines == as_bytes.lines
    assert len(as_bytes.lines) == 4
    assert as_bytes.result.conversations == 4
    assert as_bytes.result.format == "openai-chat"
    with pytest.raises(InputError) as raised:
        compact_lines([lines[0], b"{oops", lines[1]], manager, Settings(on_error="fail"), source="s.jsonl")
    assert (raised.value.source, raised.value.line) == ("s.jsonl", 2)


def test_the_engines_package_exports_nothing_and_the_files_call_is_the_one() -> None:
    import ctxmgr._engines

    assert ctxmgr._engines.__all__ == []
    assert not hasattr(ctxmgr._engines, "compact_lines")
    text = (REPO / "docs" / "distributed.md").read_text(encoding="utf-8")
    assert "ctxmgr._engines import" not in text
    assert "ctxmgr.files.compact_lines" in (REPO / "ctxmgr" / "_engines" / "__init__.py").read_text(encoding="utf-8")
