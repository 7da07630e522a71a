"""`summarize --clear-tool-results` / `--max-tool-output`: tool output cleared and cut in the
span sent to the model only, the request saying so, counted in --json; the kept messages
untouched. The real openai SDK against the local server, and the offline digest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llm_server import LLMServer, Reply
from typer.testing import CliRunner, Result

from ctxmgr.cli import app
from ctxmgr.config import PROJECT_MAY_SET

runner = CliRunner()
FAKE_KEY = "sk-test-9f8e7d6c5b4a39281706"
COUNTERS = ("cleared_results", "truncated_outputs", "chars_removed", "tokens_removed")


def text(role: str, words: str) -> dict[str, Any]:
    return {"message_id": f"{role}-{words}", "role": role, "content": [{"type": "text", "text": words}]}


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "message_id": f"call-{call_id}",
        "role": "assistant",
        "content": [],
        "tools_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def result(call_id: str, output: str) -> dict[str, Any]:
    return {
        "message_id": f"result-{call_id}",
        "role": "tool",
        "content": [{"type": "tool_result", "call_id": call_id, "output": output}],
    }


def session() -> list[dict[str, Any]]:
    """An agent's session: four tool calls with long, recognizable output, then two
    short turns that stay (``--keep-recent 2``)."""
    records = [text("system", "You are a coding agent."), text("user", "Fix the failing build.")]
    for i, name in enumerate(["read_file", "grep", "read_file", "run_tests"], 1):
        records.append(call(f"call_{i}", name, json.dumps({"path": f"src/module_{i}.py", "pattern": f"ARG{i}" * 30})))
        records.append(result(f"call_{i}", f"HEAD{i} " + f"body{i} " * 400 + f"TAIL{i}"))
    records += [text("assistant", "The build passes now."), text("user", "Thanks, commit it.")]
    return records


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def summarize(path: Path, *args: str, server: LLMServer | None = None, cache: str = "--no-cache") -> Result:
    command = ["summarize", str(path), "--max-messages", "4", "--keep-recent", "2", cache, "--no-view", *args]
    if server is not None:
        # One request a span, whatever the model's window: the requests are compared whole.
        command += ["--model", "gpt-4o-mini", "--base-url", server.openai_url, "--max-input-tokens", "100000"]
    return runner.invoke(app, command)


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return FAKE_KEY


def sent(server: LLMServer) -> str:
    request = server.last
    assert request.input_text is not None
    return request.input_text


def test_cleared_results_are_placeholders_in_the_request_and_the_kept_messages_are_untouched(
    tmp_path: Path, llm_server: LLMServer, openai_key: str
) -> None:
    records = session()
    path = write(tmp_path / "s.json", records)
    llm_server.script(Reply.ok("The agent fixed the build."))
    done = summarize(path, "--clear-tool-results", "--keep-tool-results", "1", "--json", server=llm_server)
    assert done.exit_code == 0, done.stderr
    request = sent(llm_server)
    # The three oldest results are placeholders naming the tool and the call; their text is not sent.
    for i, name in [(1, "read_file"), (2, "grep"), (3, "read_file")]:
        assert f"[tool result cleared by ctxmgr: {name} call_{i}, " in request
        assert f"HEAD{i}" not in request
        assert f"body{i}" not in request
    assert "HEAD4 body4" in request
    assert "TAIL4" in request
    assert "ARG1ARG1" in request  # the calls' arguments are sent (no --clear-tool-inputs)
    # The request says what was cleared, before the fenced transcript.
    preface = request.split("<transcript-", 1)[0]
    assert "ctxmgr cleared 3 tool results" in preface
    assert "read_file call_1, grep call_2, read_file call_3" in preface
    report = json.loads(done.stdout)
    summary = report["files"][0]["summaries"][0]
    assert summary["cleared_results"] == 3
    assert summary["truncated_outputs"] == 0
    assert summary["tokens_removed"] > 1500
    assert summary["chars_removed"] > 6000
    assert {name: report["totals"][name] for name in COUNTERS} == {name: summary[name] for name in COUNTERS}
    assert "cleared 3 and cut 0 tool results in the messages sent" in done.stderr


def test_the_kept_messages_are_written_as_they_were(tmp_path: Path, llm_server: LLMServer, openai_key: str) -> None:
    records = session()
    path = write(tmp_path / "s.json", records)
    llm_server.script(Reply.ok("The agent fixed the build."))
    done = summarize(
        path, "--clear-tool-results", "--keep-tool-results", "0", "--max-tool-output", "20", server=llm_server
    )
    assert done.exit_code == 0, done.stderr
    out = json.loads(done.stdout)
    assert out[0] == records[0]
    assert out[2:] == records[-2:]  # the kept tail, byte for byte the input's records
    assert "The agent fixed the build." in json.dumps(out[1])


def test_max_tool_output_cuts_the_results_sent_to_their_head_and_tail(
    tmp_path: Path, llm_server: LLMServer, openai_key: str
) -> None:
    path = write(tmp_path / "s.json", session())
    llm_server.script(Reply.ok("Summary."))
    done = summarize(path, "--max-tool-output", "50", "--json", server=llm_server)
    assert done.exit_code == 0, done.stderr
    request = sent(llm_server)
    for i in range(1, 5):
        assert f"HEAD{i}" in request
        assert f"TAIL{i}" in request
        assert f"body{i} " * 100 not in request
    assert request.count("characters cut by ctxmgr") == 4
    assert "ctxmgr cut 4 tool outputs to their head and tail" in request.split("<transcript-", 1)[0]
    summary = json.loads(done.stdout)["files"][0]["summaries"][0]
    assert (summary["cleared_results"], summary["truncated_outputs"]) == (0, 4)
    assert summary["tokens_removed"] > 2000


def test_excluded_tools_keep_their_results_and_cleared_inputs_leave_a_valid_object(
    tmp_path: Path, llm_server: LLMServer, openai_key: str
) -> None:
    path = write(tmp_path / "s.json", session())
    llm_server.script(Reply.ok("Summary."))
    done = summarize(
        path,
        "--clear-tool-results",
        "--keep-tool-results",
        "0",
        "--exclude-tool",
        "grep",
        "--clear-tool-inputs",
        "--json",
        server=llm_server,
    )
    assert done.exit_code == 0, done.stderr
    request = sent(llm_server)
    assert "HEAD2 body2" in request  # grep is never cleared
    assert "ARG2ARG2" in request  # nor its arguments
    for i in (1, 3, 4):
        assert f"HEAD{i}" not in request
        assert f"ARG{i}" not in request
    assert request.count("ctxmgr_cleared") == 3
    assert "ctxmgr cleared 3 tool results (results and arguments not shown" in request
    assert json.loads(done.stdout)["files"][0]["summaries"][0]["cleared_results"] == 3


def test_without_the_options_the_request_is_what_it_was(tmp_path: Path, llm_server: LLMServer, openai_key: str) -> None:
    path = write(tmp_path / "s.json", session())
    llm_server.script(Reply.ok("Summary."))
    done = summarize(path, "--json", server=llm_server)
    assert done.exit_code == 0, done.stderr
    request = sent(llm_server)
    assert request.startswith("Summarize the conversation inside the transcript-")
    assert "HEAD1 body1" in request
    assert "by ctxmgr" not in request
    report = json.loads(done.stdout)
    assert not set(COUNTERS) & set(report["files"][0]["summaries"][0])
    assert not set(COUNTERS) & set(report["totals"])


def test_the_cache_key_changes_with_the_options(tmp_path: Path, llm_server: LLMServer, openai_key: str) -> None:
    path = write(tmp_path / "s.json", session())
    cache = f"--cache={tmp_path / 'cache'}"
    llm_server.script(Reply.ok("Plain."), Reply.ok("Cleared."), Reply.ok("Kept one."))
    plain = summarize(path, server=llm_server, cache=cache)
    cleared = summarize(path, "--clear-tool-results", "--keep-tool-results", "0", server=llm_server, cache=cache)
    again = summarize(path, "--clear-tool-results", "--keep-tool-results", "0", server=llm_server, cache=cache)
    other = summarize(path, "--clear-tool-results", "--keep-tool-results", "1", server=llm_server, cache=cache)
    assert [r.exit_code for r in (plain, cleared, again, other)] == [0, 0, 0, 0]
    assert llm_server.request_count == 3  # the repeated run was answered by the cache
    assert "Cleared." in again.stdout
    assert "Kept one." in other.stdout


def test_offline_digest_says_what_was_cleared_and_is_deterministic(tmp_path: Path) -> None:
    records = session()
    path = write(tmp_path / "s.json", records)
    args = ("--clear-tool-results", "--keep-tool-results", "1", "--max-tool-output", "40")
    first = summarize(path, *args)
    second = summarize(path, *args)
    assert first.exit_code == 0, first.stderr
    assert first.stdout == second.stdout
    out = json.loads(first.stdout)
    digest = out[1]["content"][0]["text"]
    assert digest.splitlines()[0] == (
        "Earlier conversation (9 events; ctxmgr cleared 3 tool results and cut 1 tool output before summarizing):"
    )
    assert "[tool result cleared by ctxmgr: grep call_2, " in digest
    assert "body1" not in digest
    assert "HEAD1" not in digest
    assert out[2:] == records[-2:]
    report = json.loads(summarize(path, *args, "--json").stdout)["files"][0]["summaries"][0]
    assert (report["cleared_results"], report["truncated_outputs"]) == (3, 1)


def test_a_project_may_set_them_for_summarize(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"clear-tool-results", "keep-tool-results", "exclude-tools", "clear-tool-inputs", "max-tool-output"} <= (
        PROJECT_MAY_SET["summarize"]
    )
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ctxmgr.toml").write_text(
        "[summarize]\nclear-tool-results = true\nkeep-tool-results = 2\n", encoding="utf-8"
    )
    path = write(tmp_path / "s.json", session())
    done = summarize(path, "--json")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["files"][0]["summaries"][0]["cleared_results"] == 2


@pytest.mark.parametrize("value", ["0", "-3"])
def test_max_tool_output_must_be_positive(tmp_path: Path, value: str) -> None:
    done = summarize(write(tmp_path / "s.json", session()), "--max-tool-output", value)
    assert done.exit_code == 2


def test_run_composes_to_clear_the_kept_messages_too(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(
        "from ctxmgr.state import SummaryContextManager\n\n"
        "class Lean(SummaryContextManager):\n"
        "    def __init__(self) -> None:\n"
        "        super().__init__(\n"
        "            'offline', max_messages=4, keep_recent=4, clear_tool_results=True, keep_tool_results=0\n"
        "        )\n",
        encoding="utf-8",
    )
    path = write(tmp_path / "s.json", session())
    command = ["run", str(path), "--manager", f"{tmp_path / 'mine.py'}:Lean", "--no-view", "--json"]
    alone = runner.invoke(app, command)
    both = runner.invoke(app, [*command, "--clear-tool-results", "--keep-tool-results", "0"])
    assert alone.exit_code == 0, alone.stderr
    assert both.exit_code == 0, both.stderr
    for done, kept_cleared in ((alone, 0), (both, 1)):
        entry = json.loads(done.stdout)["files"][0]
        assert entry["summaries"][0]["cleared_results"] == 3  # call_1 to call_3, in the span sent
        assert entry.get("cleared_results", 0) == kept_cleared  # call_4's result, kept, by run's option


def test_dry_run_plans_the_smaller_requests(tmp_path: Path) -> None:
    path = write(tmp_path / "s.json", session())

    def planned(*args: str) -> int:
        done = summarize(path, "--dry-run", "--json", *args)
        assert done.exit_code == 0, done.stderr
        tokens = json.loads(done.stdout)["totals"]["input_tokens"]
        assert isinstance(tokens, int)
        return tokens

    plain = planned()
    assert planned("--clear-tool-results", "--keep-tool-results", "1") < plain - 1000
    assert planned("--max-tool-output", "50") < plain - 1000


def _answer(request: Any) -> Reply:
    """The same answer for the same request, however it is sent."""
    import hashlib

    return Reply.ok("Summary " + hashlib.sha256((request.input_text or "").encode()).hexdigest()[:12])


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gemini-2.0-flash"])
def test_a_provider_batch_sends_the_requests_an_interactive_run_sends(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", FAKE_KEY)
    llm_server.responder = _answer
    source = tmp_path / "agents.jsonl"
    source.write_text("".join(json.dumps(session()) + "\n" for _ in range(2)), encoding="utf-8")
    base = llm_server.url if model.startswith("gemini") else llm_server.openai_url
    common = ["summarize", str(source), "--model", model, "--base-url", base, "--no-cache", "--no-view"]
    common += ["--max-messages", "4", "--keep-recent", "2", "--clear-tool-results", "--keep-tool-results", "1"]
    alone = runner.invoke(app, [*common, "-o", str(tmp_path / "alone.jsonl")])
    assert alone.exit_code == 0, alone.stderr
    sent_alone = {r.input_text for r in llm_server.requests if r.kind in ("responses", "gemini")}
    assert len(sent_alone) == 1
    (request,) = sent_alone
    assert request is not None
    assert "[tool result cleared by ctxmgr: grep call_2, " in request
    assert "HEAD1" not in request
    llm_server.reset()
    batch = runner.invoke(
        app, [*common, "-o", str(tmp_path / "batch.jsonl"), "--batch", "--wait", "--poll-interval", "0.01"]
    )
    assert batch.exit_code == 0, batch.stderr
    assert (tmp_path / "batch.jsonl").read_bytes() == (tmp_path / "alone.jsonl").read_bytes()
    assert {r.input_text for r in llm_server.batch_requests} == sent_alone
