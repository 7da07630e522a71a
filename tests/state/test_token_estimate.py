"""The script-aware token estimate of the reports, and the summary trigger's choice of estimate.

The reports count a quarter token per ASCII character, half per character up to U+1FFF,
one per character up to U+FFFF and two beyond; the summary trigger counts the
reference's four characters a token unless ``--trigger-estimate script`` (or
``token_estimate=script_aware_reference_tokens``) says otherwise.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.state import (
    AgentState,
    Message,
    SummaryContextManager,
    ToolResultBlock,
    estimate_tokens,
    message_units,
    script_aware_reference_tokens,
    text_units,
)
from ctxmgr.state._tokens import TRIGGER_ESTIMATES, reference_estimate_tokens

runner = CliRunner()

CJK = "航班改签" * 10  # 40 CJK characters: 40 tokens by script, 10 by characters
TURNS = [("user" if i % 2 == 0 else "assistant", f"{CJK}") for i in range(6)]
# 6 messages of 40 CJK characters: 240 tokens by script, 60 by the reference's count.
BY_SCRIPT, BY_CHARACTERS, BUDGET = 240, 60, 100


def _per_character(text: str) -> int:
    """The table of the estimate, one character at a time."""
    units = 0
    for char in text:
        point = ord(char)
        units += 1 if point < 0x80 else 2 if point < 0x2000 else 4 if point < 0x10000 else 8
    return units


# -- the formula ---------------------------------------------------------------------------


def test_ascii_counts_four_characters_a_token_as_before() -> None:
    text = 'Your flight HAT268 leaves at 06:00; {"seat": "12A"}'
    assert text_units(text) == len(text)
    assert estimate_tokens([Message.text_message("a" * 400)]) == 100
    assert estimate_tokens([Message.text_message("a" * 3)]) == 1  # at least one


def test_fifty_cjk_characters_are_fifty_tokens() -> None:
    assert estimate_tokens([Message.text_message("航" * 50)]) == 50
    assert estimate_tokens([Message.text_message("ひらがなカタカナ" * 5)]) == 40  # kana
    assert estimate_tokens([Message.text_message("안녕하세요" * 10)]) == 50  # Hangul


def test_alphabets_count_half_a_token_a_letter() -> None:
    assert text_units("Привет") == 12  # Cyrillic
    assert estimate_tokens([Message.text_message("Привет, мир" * 4)]) == (9 * 2 + 2) * 4 // 4
    assert text_units("Καλημέρα") == 16  # Greek
    assert text_units("שלום") == 8  # Hebrew
    assert text_units("नमस्ते") == 12  # Devanagari (six code points)
    assert text_units("café") == 5


def test_emoji_and_symbols() -> None:
    assert text_units("😀") == 8  # beyond U+FFFF: two tokens
    assert estimate_tokens([Message.text_message("🎉" * 10)]) == 20
    assert text_units("\u2019\u2014\u2026\u201c\u201d") == 20  # typographic quotes, dash, ellipsis: a token each
    assert text_units("✈️") == 8  # U+2708 and its variation selector U+FE0F


def test_mixed_text_adds_up_by_class() -> None:
    text = "Hello, 世界! Привет 😀"  # 10 ASCII, 2 CJK, 6 Cyrillic, 1 emoji
    assert text_units(text) == 10 + 2 * 4 + 6 * 2 + 8
    assert estimate_tokens([Message.text_message(text)]) == 38 // 4


@pytest.mark.parametrize(
    ("char", "units"),
    [
        ("\x7f", 1),
        ("\x80", 2),
        ("\u07ff", 2),  # the last two-byte character
        ("\u0800", 2),
        ("\u1fff", 2),
        ("\u2000", 4),
        ("\ud800", 4),  # a lone surrogate
        ("\uffff", 4),
        ("\U00010000", 8),
        ("\U0010ffff", 8),
    ],
)
def test_the_boundaries_of_each_class(char: str, units: int) -> None:
    assert text_units(char) == units
    assert text_units("ab" + char + "cd") == 4 + units


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec=None, categories=None)), st.text(st.characters(categories=None)))
def test_the_fast_count_is_the_table_character_by_character(text: str, more: str) -> None:
    assert text_units(text) == _per_character(text)
    assert text_units(text + more) == text_units(text) + text_units(more)


def test_a_message_counts_its_text_tool_outputs_and_tool_calls_by_script() -> None:
    calling = Message(role="assistant", content=[], tools_calls=[{"id": "c", "arguments": {"city": "東京"}}])
    assert message_units(calling) == _per_character(str(calling.tools_calls))
    assert message_units(calling) == len(str(calling.tools_calls)) + 2 * 3
    result = Message.tool_message([ToolResultBlock(call_id="c", output="晴れ")])
    assert message_units(result) == 8


# -- the summary trigger ----------------------------------------------------------------------


def _cjk_state() -> AgentState:
    return AgentState(
        context=[Message.text_message(text, role=role, message_id=f"m{i}") for i, (role, text) in enumerate(TURNS)]
    )


def test_the_trigger_counts_as_the_reference_unless_told() -> None:
    messages = _cjk_state().context
    assert reference_estimate_tokens(messages) == BY_CHARACTERS
    assert script_aware_reference_tokens(messages) == BY_SCRIPT
    assert estimate_tokens(messages) == BY_SCRIPT  # the reports
    default = SummaryContextManager("offline", max_messages=None, token_budget=BUDGET, keep_recent=2)
    assert default.token_estimate is reference_estimate_tokens
    assert list(TRIGGER_ESTIMATES) == ["reference", "script"]
    assert TRIGGER_ESTIMATES["script"] is script_aware_reference_tokens
    assert default.trim_context(_cjk_state()).context_summary is None  # 60 tokens: within the budget
    by_script = SummaryContextManager(
        "offline", max_messages=None, token_budget=BUDGET, keep_recent=2, token_estimate=script_aware_reference_tokens
    )
    state = by_script.trim_context(_cjk_state())  # 240 tokens: over it
    assert state.context_summary
    assert [m.message_id for m in state.context] == ["m4", "m5"]


def test_the_script_aware_trigger_counts_the_references_text_only() -> None:
    messages = [
        Message.text_message("q"),
        Message(role="assistant", content=[], tools_calls=[{"id": "c1", "name": "f"}]),
        Message.tool_message([ToolResultBlock(call_id="c1", output="結果" * 100)]),  # tool output: not counted
    ]
    ascii_part = 1 + len(str(messages[1].tools_calls))
    assert script_aware_reference_tokens(messages) == reference_estimate_tokens(messages) == ascii_part // 4
    assert estimate_tokens(messages) == (ascii_part + 800) // 4


def test_the_progress_figure_counts_by_script() -> None:
    from ctxmgr.providers import SummarizerSettings, build_summarizer

    chain = build_summarizer(SummarizerSettings("offline", concurrency=1))
    asyncio.run(chain.summarize("USER: " + "航" * 40, instructions="Sum up.", max_tokens=100))
    assert chain.tokens == (6 + 160 + 7) // 4


# -- through the command line -----------------------------------------------------------------


def _chat_file(path: Path) -> Path:
    """The CJK conversation in OpenAI chat format (the trim fast path reads it)."""
    path.write_text(json.dumps({"messages": [{"role": r, "content": t} for r, t in TURNS]}, ensure_ascii=False))
    return path


def _native_file(path: Path) -> Path:
    path.write_text(json.dumps(_cjk_state().model_dump(mode="json"), ensure_ascii=False))
    return path


def _summarize(*args: str) -> dict[str, Any]:
    result = runner.invoke(
        app, ["summarize", "--model", "offline", "--max-messages", "none", "--keep-recent", "2", "--json", *args]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert isinstance(report, dict)
    return report


def test_summarize_fires_on_the_script_aware_estimate_only_when_asked(tmp_path: Path) -> None:
    path = _native_file(tmp_path / "chat.json")
    budget = ["--token-budget", str(BUDGET), str(path), "-o", str(tmp_path / "out.json")]
    (default,) = _summarize(*budget)["files"]
    assert default["summaries_added"] == 0
    assert default["tokens_before"] == BY_SCRIPT  # the report counts by script whatever the trigger
    (by_script,) = _summarize(*budget, "--trigger-estimate", "script")["files"]
    assert by_script["summaries_added"] == 1
    assert by_script["messages_after"] == 2
    (reference,) = _summarize(*budget, "--trigger-estimate", "reference")["files"]
    assert reference["summaries_added"] == 0


def test_summarize_trigger_estimate_in_a_real_process(tmp_path: Path) -> None:
    path = _native_file(tmp_path / "chat.json")
    out = tmp_path / "out.json"
    command = [sys.executable, "-m", "ctxmgr", "summarize", "--model", "offline", "--token-budget", str(BUDGET)]
    command += ["--max-messages", "none", "--keep-recent", "2", "--trigger-estimate", "script", str(path)]
    proc = subprocess.run([*command, "-o", str(out)], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    written = json.loads(out.read_text())
    assert written["context_summary"]
    assert [m["message_id"] for m in written["context"]] == ["m4", "m5"]


def test_check_and_dry_run_follow_the_trigger_estimate(tmp_path: Path) -> None:
    path = _native_file(tmp_path / "chat.json")
    common = ["summarize", "--model", "offline", "--max-messages", "none", "--keep-recent", "2"]
    common += ["--token-budget", str(BUDGET), str(path)]
    assert runner.invoke(app, [*common, "--check"]).exit_code == 0
    assert runner.invoke(app, [*common, "--check", "--trigger-estimate", "script"]).exit_code == 1
    plans = {}
    for estimate in ("reference", "script"):
        planned = runner.invoke(app, [*common, "--dry-run", "--json", "--trigger-estimate", estimate])
        assert planned.exit_code == 0, planned.output
        plans[estimate] = json.loads(planned.stdout)["totals"]
    assert plans["reference"]["calls"] == 0
    assert plans["script"]["calls"] == 1
    assert plans["script"]["messages_summarized"] == 4


def test_dry_run_counts_input_tokens_by_script(tmp_path: Path) -> None:
    cjk = _native_file(tmp_path / "cjk.json")
    ascii_text = tmp_path / "ascii.json"
    ascii_text.write_text(cjk.read_text(encoding="utf-8").replace("航班改签", "abcd"))
    tokens = {}
    for path in (cjk, ascii_text):
        planned = runner.invoke(
            app, ["summarize", "--dry-run", "--json", "--max-messages", "3", "--keep-recent", "2", str(path)]
        )
        assert planned.exit_code == 0, planned.output
        tokens[path.name] = json.loads(planned.stdout)["totals"]["input_tokens"]
    # The same request but for 160 characters: 4 units each in CJK, 1 in ASCII.
    assert tokens["cjk.json"] - tokens["ascii.json"] == 160 * 3 // 4


def test_an_unknown_trigger_estimate_is_a_usage_error(tmp_path: Path) -> None:
    path = _native_file(tmp_path / "chat.json")
    result = runner.invoke(app, ["summarize", "--model", "offline", "--trigger-estimate", "words", str(path)])
    assert result.exit_code == 2
    assert "--trigger-estimate must be 'reference' or 'script', got 'words'" in result.stderr
    stats = runner.invoke(app, ["stats", "--trigger-estimate", "words", str(path)])
    assert stats.exit_code == 2


def test_help_explains_the_trigger_estimate() -> None:
    for command in ("summarize", "stats"):
        result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0
        assert "--trigger-estimate" in result.stdout
        assert "'script', the same text counted by script" in " ".join(result.stdout.split())


def test_a_project_config_may_set_the_trigger_estimate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _native_file(tmp_path / "chat.json")
    (tmp_path / "ctxmgr.toml").write_text(
        f'[summarize]\ntoken-budget = {BUDGET}\ntrigger-estimate = "script"\n'
        f'[stats]\ntoken-budget = {BUDGET}\ntrigger-estimate = "script"\n'
    )
    monkeypatch.chdir(tmp_path)
    (report,) = _summarize(str(path), "-o", str(tmp_path / "out.json"))["files"]
    assert report["summaries_added"] == 1
    stats = runner.invoke(app, ["stats", "--json", str(path)])
    assert stats.exit_code == 0, stats.output
    assert json.loads(stats.stdout)["files"][0]["summary_would_fire"] == 1


# -- the reports -------------------------------------------------------------------------------


def test_stats_counts_by_script_and_reports_either_trigger(tmp_path: Path) -> None:
    path = _chat_file(tmp_path / "chat.json")
    report = json.loads(runner.invoke(app, ["stats", "--json", "--token-budget", str(BUDGET), str(path)]).stdout)
    (stats,) = report["files"]
    assert stats["estimated_tokens"] == BY_SCRIPT
    assert [m["estimated_tokens"] for m in stats["largest_messages"]] == [40, 40, 40]
    assert stats["summary_would_fire"] == 0  # the reference's 60 tokens are within 100
    by_script = ["stats", "--json", "--token-budget", str(BUDGET), "--trigger-estimate", "script", str(path)]
    assert json.loads(runner.invoke(app, by_script).stdout)["files"][0]["summary_would_fire"] == 1
    table = runner.invoke(app, [*by_script[:1], *by_script[2:]], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert f"more than {BUDGET} est. tokens (by script, tool outputs left out)" in table.stdout


@pytest.mark.parametrize(
    ("kind", "options"),
    [
        ("chat", []),  # the outline path
        ("native with a summary", []),  # the outline path, the summary field counted beside it
        ("native with a summary", ["--to", "native"]),  # the full reader
    ],
)
def test_trim_json_and_view_count_by_script(tmp_path: Path, kind: str, options: list[str]) -> None:
    path = tmp_path / "chat.json"
    if kind == "chat":
        _chat_file(path)
        summary_tokens = 0
    else:
        state = _cjk_state()
        state.context_summary = "要約" * 10  # 20 CJK characters, held before and after
        path.write_text(json.dumps(state.model_dump(mode="json"), ensure_ascii=False))
        summary_tokens = 20
    trim = ["trim", "-n", "1", *options, str(path), "-o", str(tmp_path / "out.json")]
    result = runner.invoke(app, [*trim, "--json"])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)["files"]
    assert (report["tokens_before"], report["tokens_after"]) == (BY_SCRIPT + summary_tokens, 80 + summary_tokens)
    view = runner.invoke(app, [*trim, "--view"])
    assert f"est. tokens {BY_SCRIPT + summary_tokens} → {80 + summary_tokens}" in view.stderr
