"""``trim -n`` of a Codex rollout as a stream (:mod:`ctxmgr.files._codex_stream`): the same
bytes, warnings and counts as the full path, on the real rollouts and on generated ones,
and the stream is taken where it should be (and declines where the full path must)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest
from _codex_rollouts import ROLLOUTS, rollouts
from _fast_paths import explored
from hypothesis import HealthCheck, given, strategies as st
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.files import FileResult, FileSink, Settings, _codex_stream, compact_file
from ctxmgr.state import ChainContextManager, MessageContextManager, TokenBudgetContextManager
from ctxmgr.state._managers import BaseContextManager


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What each call of the stream answered (``True``: it trimmed the file)."""
    answers: list[bool] = []
    stream = _codex_stream.stream_rollout

    def recorded(*arguments: Any) -> bool:
        answers.append(stream(*arguments))
        return answers[-1]

    monkeypatch.setattr(_codex_stream, "stream_rollout", recorded)
    return answers


def trim(
    path: Path, out: Path, manager: BaseContextManager[Any], fast: bool, measure: bool = False
) -> tuple[FileResult, bytes | None]:
    out.unlink(missing_ok=True)
    result = asyncio.run(compact_file(str(path), manager, FileSink(out), Settings(fast=fast, measure=measure)))
    return result, out.read_bytes() if out.exists() else None


def both_ways(path: Path, manager: BaseContextManager[Any], measure: bool = False) -> tuple[FileResult, bytes | None]:
    fast, fast_out = trim(path, path.with_suffix(".fast"), manager, True, measure)
    full, full_out = trim(path, path.with_suffix(".full"), manager, False, measure)
    assert fast_out == full_out
    assert str(fast.input_error) == str(full.input_error)
    assert (fast.format, fast.warnings, fast.messages_before, fast.messages_after) == (
        full.format,
        full.warnings,
        full.messages_before,
        full.messages_after,
    )
    # Token counts (a budget's, or measured for a report) and the compaction's report.
    assert (fast.tokens_before, fast.tokens_after) == (full.tokens_before, full.tokens_after)
    assert (fast.compaction, fast.compaction_warned) == (full.compaction, full.compaction_warned)
    return fast, fast_out


def budget(max_tokens: int, **options: Any) -> ChainContextManager:
    return ChainContextManager(TokenBudgetContextManager(max_tokens, **options))


@pytest.mark.parametrize("remove_tool_msgs", [False, True])
@pytest.mark.parametrize("turns", [0, 1, 3, 1000])
@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:27])
def test_a_real_rollout_streams_to_the_full_paths_bytes(
    path: Path, turns: int, remove_tool_msgs: bool, tmp_path: Path, taken: list[bool]
) -> None:
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    result, _ = both_ways(copy, MessageContextManager(max_messages=turns, remove_tool_msgs=remove_tool_msgs))
    assert result.format == "codex"
    # The compacted rollout declines only when the trim drops messages of its replacement history.
    declines = "12-54-34" in path.name and turns < 1000
    assert taken[0] is not declines


@pytest.mark.parametrize(("line", "streamed"), [(0, False), (3, True)])
def test_a_written_line_the_full_path_would_rewrite_declines(
    line: int, streamed: bool, tmp_path: Path, taken: list[bool]
) -> None:
    # Line 0 (session_meta) is always written; line 3 (an early user turn) is dropped by -n 1.
    path = tmp_path / "rollout.jsonl"
    lines = next(p for p in ROLLOUTS if "20-34-25" in p.name).read_bytes().splitlines()
    lines[line] = orjson.dumps(orjson.loads(lines[line]), option=orjson.OPT_INDENT_2).replace(b"\n", b"")
    path.write_bytes(b"\n".join(lines) + b"\n")
    both_ways(path, MessageContextManager(max_messages=1))
    assert taken == [streamed]


@explored(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(rollout=rollouts(), turns=st.integers(0, 4), remove_tool_msgs=st.booleans())
def test_a_generated_rollout_streams_to_the_full_paths_bytes(
    rollout: list[dict[str, Any]], turns: int, remove_tool_msgs: bool, tmp_path: Path
) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rollout))
    both_ways(path, MessageContextManager(max_messages=turns, remove_tool_msgs=remove_tool_msgs))


@given(
    chunks=st.lists(st.sampled_from([b"a", b"\n", b"{}", b"x" * 300, b"\n\n"]), max_size=40),
    buffer=st.integers(2, 64),
    at=st.integers(0, 50),
)
def test_the_scans_lines_are_the_files_lines(chunks: list[bytes], buffer: int, at: int, tmp_path_factory: Any) -> None:
    # Buffers far smaller than the lines: a line gathered over many reads, a newline at a
    # buffer's edge, a file ending without one.
    path = tmp_path_factory.mktemp("lines") / "file"
    data = b"".join(chunks)
    path.write_bytes(data)
    with path.open("rb") as handle:
        expected = handle.readlines()
        handle.seek(at)
        ahead = handle.read(3)  # the handle's buffer now holds the file (it is small)
        with _codex_stream.lines(handle.fileno(), buffer) as reader:
            assert list(reader) == expected
        # The handle reads on where it was, through its buffer and past it.
        assert ahead + handle.read() == data[at:]
        handle.seek(0)
        assert handle.read() == data


HEADER = "[ctxmgr: summary of the earlier conversation]"


@pytest.mark.parametrize(
    "item",
    [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"{HEADER}\nold"}]},
        # The header split across two parts: the reader joins their texts.
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": HEADER[:9]}, {"type": "output_text", "text": HEADER[9:]}],
        },
        {"type": "function_call_output", "call_id": "c1", "output": [HEADER[:5], HEADER[5:]]},
        {"type": "function_call", "name": "ctxmgr_summary", "arguments": "{}", "call_id": "c9"},
    ],
    ids=["whole", "split-parts", "split-output", "summary-name"],
)
def test_a_marker_in_a_dropped_record_is_found_as_the_full_path_finds_it(
    item: dict[str, Any], tmp_path: Path, taken: list[bool]
) -> None:
    path = tmp_path / "rollout.jsonl"
    lines = next(p for p in ROLLOUTS if "20-34-25" in p.name).read_bytes().splitlines(keepends=True)
    record = {"timestamp": "2026-02-23T11:40:29.279Z", "type": "response_item", "payload": item}
    lines.insert(2, orjson.dumps(record) + b"\n")
    path.write_bytes(b"".join(lines))
    both_ways(path, MessageContextManager(max_messages=1))
    assert taken == [False]  # a marker: the full path words it


@pytest.mark.parametrize("max_tokens", [1, 300, 3000, 10**9])
@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:27])
def test_a_token_budget_streams_a_real_rollout_to_the_full_paths_bytes_and_report(
    path: Path, max_tokens: int, tmp_path: Path, taken: list[bool]
) -> None:
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    result, _ = both_ways(copy, budget(max_tokens, start_on="user"), measure=True)
    assert result.format == "codex"
    # Only the compacted rollout may decline (a budget dropping messages of its history).
    assert taken[0] or "12-54-34" in path.name


@explored(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    rollout=rollouts(),
    max_tokens=st.integers(1, 400),
    turns=st.none() | st.integers(0, 3),
    measure=st.booleans(),
    plain=st.booleans(),
    pins=st.lists(st.integers(0, 6), max_size=2),
)
def test_a_generated_rollout_streams_a_budget_or_a_measured_trim_to_the_full_paths_bytes(
    rollout: list[dict[str, Any]],
    max_tokens: int,
    turns: int | None,
    measure: bool,
    plain: bool,
    pins: list[int],
    tmp_path: Path,
) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rollout))
    manager: BaseContextManager[Any] = (
        MessageContextManager(max_messages=turns or 0)
        if plain
        else budget(max_tokens, max_messages=turns, pin_index=pins)
    )
    both_ways(path, manager, measure=measure)


@pytest.mark.parametrize("flags", [["--max-tokens", "400", "--start-on", "user"], ["-n", "2", "--json"]])
def test_the_cli_streams_a_budget_and_a_report_as_the_full_path_writes_them(
    flags: list[str], tmp_path: Path, taken: list[bool]
) -> None:
    # As a user runs it: the report's figures and the file written are the full path's.
    path = next(p for p in ROLLOUTS if "20-34-25" in p.name)
    streamed, full = tmp_path / "streamed.jsonl", tmp_path / "full.jsonl"
    done = CliRunner().invoke(app, ["trim", *flags, "--json", "-o", str(streamed), str(path)])
    assert done.exit_code == 0, done.output
    assert taken == [True]
    manager = budget(400, start_on="user") if "--max-tokens" in flags else MessageContextManager(max_messages=2)
    result, written = trim(path, full, manager, fast=False, measure=True)
    assert streamed.read_bytes() == written
    report = orjson.loads(done.stdout)
    figures = report["files"][0]
    assert (figures["messages_before"], figures["messages_after"]) == (result.messages_before, result.messages_after)
    assert (figures["tokens_before"], figures["tokens_after"]) == (result.tokens_before, result.tokens_after)
    assert 0 < result.tokens_after < result.tokens_before
