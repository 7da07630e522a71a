"""A dataset's lines share one format: the first line only one format reads settles it,
and lines valid in several formats (a text-only message list is OpenAI chat and
Anthropic alike) are read in it; when no line tells them apart, that is said once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.files._loading import read_conversations, settled_format

TAU = Path(__file__).resolve().parents[2] / "bench" / "tau" / "tau-airline-gpt4o.jsonl"
runner = CliRunner()


def _text_only(i: int) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": f"question {i} " + "word " * 200},
            {"role": "assistant", "content": "answer " * 200},
            {"role": "user", "content": "more " * 100},
            {"role": "assistant", "content": "fine " * 100},
            {"role": "user", "content": "last?"},
        ]
    }


_ANTHROPIC_TOOLS = {
    "messages": [
        {"role": "user", "content": "book it " + "x " * 200},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "book", "input": {"a": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "done " * 100}]},
        {"role": "assistant", "content": "booked " * 100},
        {"role": "user", "content": "thanks"},
    ]
}


def _write(path: Path, records: list[Any]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return path


def _summarize(path: Path, out: Path, *more: str) -> Any:
    args = ["summarize", "--model", "offline", "--max-messages", "3", "--keep-recent", "1", *more]
    return runner.invoke(app, [*args, str(path), "-o", str(out)])


def test_tau_text_only_lines_get_the_datasets_summary_shape(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = _summarize(TAU, out)
    assert done.exit_code == 0, done.stderr
    assert "reads as" not in done.stderr
    shapes = []
    for line in out.read_bytes().splitlines():
        messages = orjson.loads(line)["messages"]
        summaries = [m for m in messages if m["role"] == "system" and "ctxmgr: summary" in str(m["content"])]
        assert len(summaries) == 1
        shapes.append(summaries[0].get("name"))
    # Lines 10 and 160 are text-only (valid Anthropic too): read as the dataset's format.
    assert shapes[9] == shapes[159] == "ctxmgr_summary"
    assert set(shapes) == {"ctxmgr_summary"}


def test_a_later_line_settles_the_format_of_the_lines_before_it(tmp_path: Path) -> None:
    source = _write(tmp_path / "mixed.jsonl", [_text_only(0), _text_only(1), _ANTHROPIC_TOOLS, _text_only(3)])
    out = tmp_path / "out.jsonl"
    done = _summarize(source, out)
    assert done.exit_code == 0, done.stderr
    assert "reads as" not in done.stderr
    written = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    # Every line's summary is where Anthropic keeps it: the top-level system prompt.
    assert all("ctxmgr: summary" in str(record.get("system")) for record in written)
    assert all(m["role"] != "system" for record in written for m in record["messages"])
    stats = orjson.loads(runner.invoke(app, ["stats", "--json", str(out)]).stdout)
    assert stats["files"][0]["format"] == "anthropic"
    assert stats["files"][0]["conversations_with_summary"] == 4


def test_nothing_tells_them_apart_is_said_once_per_file(tmp_path: Path) -> None:
    source = _write(tmp_path / "plain.jsonl", [_text_only(i) for i in range(5)])
    out = tmp_path / "out.jsonl"
    done = _summarize(source, out)
    assert done.exit_code == 0, done.stderr
    assert done.stderr.count("reads as openai-chat and as anthropic") == 1
    assert "5 of 5 conversations" in done.stderr
    # Each summary is a plain system message, which both formats take and read back.
    for line in out.read_bytes().splitlines():
        first = orjson.loads(line)["messages"][0]
        assert first["role"] == "system"
        assert "name" not in first
    report = orjson.loads(_summarize(source, tmp_path / "again.jsonl", "--json").stdout)
    warned = [w for w in report["files"][0]["warnings"] if "reads as" in w]
    assert [w.split(":")[0] for w in warned] == [f"line {i}" for i in range(1, 6)]


def test_a_line_of_another_format_is_still_refused(tmp_path: Path) -> None:
    gemini = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"text": "yo"}]}]}
    source = _write(tmp_path / "bad.jsonl", [_text_only(0), _ANTHROPIC_TOOLS, gemini])
    done = runner.invoke(app, ["trim", "-n", "1", str(source), "-o", str(tmp_path / "out.jsonl")])
    assert done.exit_code != 0
    assert "this line is gemini but the first line is anthropic" in done.stderr


def test_the_look_ahead_is_bounded(tmp_path: Path) -> None:
    plain = orjson.dumps(_text_only(0)) + b"\n"
    late = plain * 1000 + orjson.dumps(_ANTHROPIC_TOOLS) + b"\n"
    assert settled_format(late, "<x>") is None  # past the first 1,000 lines
    assert settled_format(plain * 999 + orjson.dumps(_ANTHROPIC_TOOLS) + b"\n", "<x>") == "anthropic"
    assert settled_format(plain * 3, "<x>") is None


@settings(max_examples=30, deadline=None)
@given(before=st.integers(0, 6), after=st.integers(0, 6), tools_format=st.sampled_from(["anthropic", "openai-chat"]))
def test_every_line_reads_as_the_settled_format(
    tmp_path_factory: Any, before: int, after: int, tools_format: str
) -> None:
    openai_tools = {
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ]
    }
    telling = _ANTHROPIC_TOOLS if tools_format == "anthropic" else openai_tools
    records = [_text_only(i) for i in range(before)] + [telling] + [_text_only(i) for i in range(after)]
    path = _write(tmp_path_factory.mktemp("ds") / "d.jsonl", records)
    read = list(read_conversations(str(path)))
    assert len(read) == before + after + 1
    assert {c.format for _, c in read} == {tools_format}
    assert all(not c.also_reads_as for _, c in read)
