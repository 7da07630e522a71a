"""--require-facts checks the required facts of a span, through the CLI against the
loopback server with the real SDK; --require-all-facts keeps the strict check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llm_server import LLMServer, Reply
from typer.testing import CliRunner

from ctxmgr.cli import app

runner = CliRunner()

GOOD = "User ana_ruiz_1234 cancelled reservation W7QX2P; a refund of $507 goes back to credit_card_4421486 in 5 days."
LOSSY = "User ana_ruiz_1234 cancelled a reservation; a refund goes back to credit_card_4421486 in 5 days."


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-required-0a1b2c")


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }


def _conversation(tmp_path: Path) -> Path:
    profile = {
        "user_id": "ana_ruiz_1234",
        "address": {"zip": "78750"},
        "email": "ana.ruiz@example.com",
        "dob": "1988-03-14",
        "payment_methods": {"credit_card_4421486": {}, "gift_card_7504069": {"amount": 120}},
        "created_at": "2024-05-01T07:35:03",
    }
    messages = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Cancel reservation W7QX2P please. My user id is ana_ruiz_1234."},
        _call("c1", "get_user_details", {"user_id": "ana_ruiz_1234"}),
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(profile)},
        _call("c2", "cancel_reservation", {"reservation_id": "W7QX2P"}),
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps({"status": "cancelled", "amount": 507})},
        {"role": "assistant", "content": "Done: $507 goes back to credit_card_4421486 within 5 days."},
        {"role": "user", "content": "Thanks, that's all."},
        {"role": "assistant", "content": "You're welcome!"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    return path


def _summarize(path: Path, server: LLMServer, *options: str) -> Any:
    return runner.invoke(
        app,
        [
            *("summarize", str(path), "--model", "gpt-4o-mini", "--base-url", server.openai_url, "--no-cache"),
            *("--max-messages", "4", "--keep-recent", "2", *options),
        ],
    )


def test_an_honest_summary_passes_require_facts_without_a_retry(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _conversation(tmp_path)
    llm_server.default = Reply.ok(GOOD)
    result = _summarize(path, llm_server, "--require-facts", "--json")
    assert result.exit_code == 0, result.output
    assert llm_server.request_count == 1
    (span,) = json.loads(result.stdout)["files"][0]["summaries"]
    optional = {fact["text"] for fact in span["missing_facts"]}
    assert {"78750", "ana.ruiz@example.com", "1988-03-14", "07:35:03"} <= optional  # left out, rightly
    assert not any(fact["required"] for fact in span["missing_facts"])
    assert "lacks" not in result.stderr  # no warning for optional facts alone


def test_require_all_facts_keeps_the_strict_check(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _conversation(tmp_path)
    llm_server.default = Reply.ok(GOOD)
    result = _summarize(path, llm_server, "--require-all-facts")
    assert result.exit_code == 3
    assert llm_server.request_count == 2
    assert "78750" in result.stderr


def test_a_drop_is_named_first_and_the_retry_asks_for_it_alone(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _conversation(tmp_path)
    llm_server.script(Reply.ok(LOSSY), Reply.ok(GOOD))
    result = _summarize(path, llm_server, "--require-facts", "-i")
    assert result.exit_code == 0, result.output
    asked = llm_server.requests[1].input_text or ""
    missing_line = next(line for line in asked.splitlines() if line.startswith("MISSING FACTS: "))
    assert "W7QX2P" in missing_line
    assert "$507" in missing_line
    assert "78750" not in missing_line  # optional facts are not asked for
    assert "at most 600 tokens" in asked  # the length limit
    assert GOOD in path.read_text()


def test_without_require_facts_the_warning_names_required_facts_first(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _conversation(tmp_path)
    llm_server.default = Reply.ok(LOSSY)
    result = _summarize(path, llm_server, "--json")
    assert result.exit_code == 0, result.output
    warning = next(line for line in result.stderr.splitlines() if "lacks" in line)
    named = warning.split("messages: ", 1)[1]
    assert named.startswith("W7QX2P")  # the argument of the change first
    assert "$507" in named
    assert "78750" not in named
    assert "optional facts left out" in warning
    totals = json.loads(result.stdout)["totals"]
    assert totals["missing_required"] >= 2
    assert totals["missing_optional"] >= 3


def test_a_retry_cut_off_is_discarded_and_the_first_summary_judged(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _conversation(tmp_path)
    before = path.read_bytes()
    llm_server.script(Reply.ok(LOSSY), Reply.truncated_answer("User ana_ruiz_1234 cancelled W7QX2P"))
    result = _summarize(path, llm_server, "--require-facts", "-i", "--json")
    assert result.exit_code == 3
    assert "W7QX2P" in result.stderr  # judged on the first summary, which lacks it
    assert path.read_bytes() == before


def test_a_retry_that_loses_more_required_facts_is_discarded(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _conversation(tmp_path)
    worse = "A reservation was cancelled."
    llm_server.script(Reply.ok(GOOD.replace("$507", "the money")), Reply.ok(worse))
    result = _summarize(path, llm_server, "--require-facts", "--json")
    assert result.exit_code == 3
    assert llm_server.request_count == 2
    assert "lacks 1 required facts" in result.stderr or "lacks 2 required facts" in result.stderr
    assert "ana_ruiz_1234" not in result.stderr.split("asking again:")[-1]  # the first summary's loss only


def test_totals_count_missing_facts_of_failed_summaries(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _conversation(tmp_path)
    llm_server.default = Reply.ok(LOSSY)
    result = _summarize(path, llm_server, "--require-facts", "--json")
    assert result.exit_code == 3
    totals = json.loads(result.stdout)["totals"]
    assert totals["missing_required"] >= 1
    assert totals["missing_facts"] == totals["missing_required"] + totals["missing_optional"]
