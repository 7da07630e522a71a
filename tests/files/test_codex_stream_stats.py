"""``stats`` and ``validate`` on a Codex rollout read line by line
(:func:`ctxmgr.files._codex_stream.counted_outline`): the same report, table and JSON, as the
full reader's, on the real rollouts and on generated ones."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import orjson
import pytest
from _codex_rollouts import ROLLOUTS, rollouts
from _fast_paths import explored
from hypothesis import HealthCheck, given, strategies as st
from rich.console import Console

from ctxmgr._stats import Triggers
from ctxmgr.cli.console import lazy_console, reset_notes
from ctxmgr.cli.stats import stats_files
from ctxmgr.cli.validate import validate_files
from ctxmgr.files import _codex_stream


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each rollout was counted line by line."""
    answers: list[bool] = []
    counted = _codex_stream.counted_outline

    def recorded(*arguments: Any) -> Any:
        found = counted(*arguments)
        answers.append(found is not None)
        return found

    monkeypatch.setattr(_codex_stream, "counted_outline", recorded)
    return answers


def stats(paths: list[Path], fast: bool, json_report: bool, triggers: Triggers) -> tuple[int, bytes, bytes]:
    return run(
        stats_files,
        fast,
        arguments=[str(p) for p in paths],
        triggers=triggers,
        fmt=None,
        json_report=json_report,
        top=3,
    )


def validate(paths: list[Path], fast: bool, json_report: bool, target: str | None) -> tuple[int, bytes, bytes]:
    return run(
        validate_files,
        fast,
        arguments=[str(p) for p in paths],
        target=target,
        fmt=None,
        json_report=json_report,
        quiet=False,
    )


def run(command: Any, fast: bool, **options: Any) -> tuple[int, bytes, bytes]:
    """``command`` as the CLI runs it, on the outline path (lazy consoles) or the full one."""
    reset_notes()
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    with redirect_stdout(stdout), redirect_stderr(stderr):
        if fast:
            console, shown = lazy_console(stderr=True, highlight=False), lazy_console(highlight=False)
        else:
            console, shown = Console(stderr=True, highlight=False), Console(highlight=False)
        code = command(console=console, out=shown, fast=fast, **options)
    reset_notes()
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("json_report", [False, True])
def test_stats_on_the_real_rollouts_streamed_reports_what_the_full_reader_does(
    json_report: bool, streamed: list[bool]
) -> None:
    triggers = Triggers(trim_max_messages=10, summary_max_messages=30)
    fast = stats(ROLLOUTS, True, json_report, triggers)
    # The compacted rollout warns (records before its compaction) and goes the full way.
    assert streamed == ["12-54-34" not in p.name for p in ROLLOUTS]
    assert fast == stats(ROLLOUTS, False, json_report, triggers)
    assert fast[0] == 0
    if json_report:
        totals = orjson.loads(fast[1])["totals"]
        assert totals["messages"] == 180
        assert totals["estimated_tokens"] > 4000


def test_a_token_budget_trigger_takes_the_full_reader(streamed: list[bool]) -> None:
    # The budget's estimate counts the model's blocks: the outline is not taken.
    triggers = Triggers(token_budget=100)
    assert stats(ROLLOUTS[:1], True, True, triggers) == stats(ROLLOUTS[:1], False, True, triggers)


@explored(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(rollout=rollouts(), json_report=st.booleans(), trim=st.sampled_from([None, 0, 2]))
def test_stats_on_a_generated_rollout_reports_what_the_full_reader_does(
    rollout: list[dict[str, Any]], json_report: bool, trim: int | None, tmp_path: Path
) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rollout))
    triggers = Triggers(trim_max_messages=trim, summary_max_messages=3)
    assert stats([path], True, json_report, triggers) == stats([path], False, json_report, triggers)


@pytest.mark.parametrize("target", [None, "openai-chat", "anthropic", "gemini"])
@pytest.mark.parametrize("json_report", [False, True])
def test_validate_on_the_real_rollouts_streamed_reports_what_the_full_reader_does(
    json_report: bool, target: str | None, streamed: list[bool]
) -> None:
    fast = validate(ROLLOUTS, True, json_report, target)
    assert streamed == ["12-54-34" not in p.name for p in ROLLOUTS]
    assert fast == validate(ROLLOUTS, False, json_report, target)


@explored(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(rollout=rollouts(), json_report=st.booleans(), target=st.sampled_from([None, "anthropic", "gemini"]))
def test_validate_on_a_generated_rollout_reports_what_the_full_reader_does(
    rollout: list[dict[str, Any]], json_report: bool, target: str | None, tmp_path: Path
) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rollout))
    assert validate([path], True, json_report, target) == validate([path], False, json_report, target)


def test_a_large_one_line_document_is_not_parsed_to_tell_it_is_no_rollout(monkeypatch: pytest.MonkeyPatch) -> None:
    # stats and validate ask of every regular file whether it is a rollout: a 1 MB
    # document on one line is not parsed for that (the full reader parses it once).
    document = orjson.dumps({"messages": [{"role": "user", "content": "x" * (1 << 20)}], "note": "session_meta"})
    rollout = ROLLOUTS[0].read_bytes()
    assert _codex_stream._rollout(rollout)
    monkeypatch.setattr(_codex_stream.orjson, "loads", None)  # any parse would fail
    assert not _codex_stream._rollout(document)
