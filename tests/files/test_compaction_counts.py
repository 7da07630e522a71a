"""The compaction managers' counters in each file's result and its ``--json`` entry, on
real conversations: a dataset (per line, summed) and one conversation; merged results
add them; a run without them keeps its report as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxmgr.files import FileResult, RunOptions, Settings, compact_paths
from ctxmgr.state import (
    ChainContextManager,
    MessageContextManager,
    TokenBudgetContextManager,
    ToolResultClearingManager,
)

ROOT = Path(__file__).resolve().parents[2]
COUNTERS = ["messages_dropped", "cleared_results", "truncated_outputs", "chars_removed", "tokens_removed"]


@pytest.fixture
def tau(tmp_path: Path) -> Path:
    path = tmp_path / "tau.jsonl"
    shutil.copyfile(ROOT / "tests" / "data" / "tau-airline-sample.jsonl", path)
    return path


def test_a_dataset_reports_every_counter_summed_over_its_lines(tau: Path) -> None:
    manager = ChainContextManager(ToolResultClearingManager(2), TokenBudgetContextManager(1800, pin_match=["nowhere"]))
    run = compact_paths([str(tau)], manager, Settings(), RunOptions(measure=True, write=False))
    (result,) = run.results
    entry = result.as_json()
    assert [name for name in entry if name in COUNTERS] == COUNTERS
    assert entry["messages_dropped"] == result.messages_before - result.messages_after > 0
    assert entry["cleared_results"] > 0
    assert entry["tokens_removed"] > 0
    assert entry["warnings"] == [f"line {n}: pin_match 'nowhere' matched no message" for n in range(1, 5)]


def test_a_run_without_compaction_managers_has_no_counters(tau: Path) -> None:
    run = compact_paths([str(tau)], MessageContextManager(1), Settings(), RunOptions(measure=True, write=False))
    assert run.results[0].compaction is None
    assert not set(COUNTERS) & set(run.results[0].as_json())


def test_merged_results_add_the_counters() -> None:
    first, second = FileResult("a"), FileResult("a")
    first.add_compaction(dict.fromkeys(COUNTERS, 1))
    second.add_compaction(dict.fromkeys(COUNTERS, 2))
    first.merge(second)
    first.merge(FileResult("a"))
    assert first.compaction == dict.fromkeys(COUNTERS, 3)


def test_the_note_says_one_in_the_singular() -> None:
    result = FileResult("a")
    result.add_compaction({**dict.fromkeys(COUNTERS, 1), "chars_removed": 1_204, "tokens_removed": 301})
    assert result.compaction_notes() == [
        "compacted: 1 message dropped, 1 tool result cleared, 1 tool output cut; "
        "1,204 characters, 301 est. tokens removed"
    ]
    result.add_compaction({"messages_dropped": 1, "cleared_results": 0, "truncated_outputs": 1})
    assert result.compaction_notes()[0].startswith(
        "compacted: 2 messages dropped, 1 tool result cleared, 2 tool outputs cut;"
    )
