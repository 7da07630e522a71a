"""`ctxmgr summarize` end to end: real SDKs against the local server, files in and out."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES
from llm_server import INFO_PATHS, LLMServer, Reply
from typer.testing import CliRunner, Result

from ctxmgr.cli import app
from ctxmgr.formats._native import SUMMARY_MARKER
from ctxmgr.state._transcript import DEFAULT_SUMMARY_PROMPT

runner = CliRunner()
FAKE_KEY = "sk-test-9f8e7d6c5b4a39281706"


def msg(role: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"message_id": f"{role}-{text}", "role": role, "content": [{"type": "text", "text": text}], **extra}


def chat(n: int) -> list[dict[str, Any]]:
    """A system message and ``n`` alternating user/assistant messages."""
    return [msg("system", "Be helpful.")] + [
        msg("user", f"question {i}") if i % 2 == 0 else msg("assistant", f"answer {i}") for i in range(n)
    ]


def call(call_id: str, name: str) -> dict[str, Any]:
    return {
        "message_id": f"call-{call_id}",
        "role": "assistant",
        "content": [],
        "tools_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}],
    }


def tool_result(call_id: str, output: str) -> dict[str, Any]:
    return {
        "message_id": f"result-{call_id}",
        "role": "tool",
        "content": [{"type": "tool_result", "call_id": call_id, "output": output}],
    }


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def summarize(server: LLMServer | None, *args: str, model: str = "gpt-4o-mini") -> Result:
    """Run `ctxmgr summarize` (no cache, no diff) against ``server``."""
    command = ["summarize", *args, "--model", model, "--no-cache", "--no-view"]
    if server is not None and "--base-url" not in args:
        command += ["--base-url", server.openai_url]
    return runner.invoke(app, command)


def ids(records: list[dict[str, Any]]) -> list[str]:
    return [r["message_id"] for r in records]


@pytest.fixture
def openai_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return FAKE_KEY


# -- summaries stored where the container has room ------------------------------------------


def test_agent_state_keeps_the_summary_in_context_summary(
    tmp_path: Path, llm_server: LLMServer, openai_key: str
) -> None:
    path = write(tmp_path / "state.json", {"context": chat(6), "context_summary": None, "thread": "t-1"})
    llm_server.script(Reply.ok("First summary."), Reply.ok("Second summary."))
    first = summarize(llm_server, str(path), "--max-messages", "4", "--keep-recent", "2")
    assert first.exit_code == 0, first.stderr
    out = json.loads(first.stdout)
    assert out["context_summary"] == "First summary."
    assert ids(out["context"]) == ["system-Be helpful.", "user-question 4", "assistant-answer 5"]
    assert out["thread"] == "t-1"  # keys outside the messages survive
    request = llm_server.last
    assert request.path == "/v1/responses"
    assert request.body["model"] == "gpt-4o-mini"
    assert request.body["instructions"] == DEFAULT_SUMMARY_PROMPT
    assert request.body["max_output_tokens"] == 600
    assert "USER: question 0" in request.body["input"]
    assert "ASSISTANT: answer 3" in request.body["input"]
    assert "question 4" not in request.body["input"]
    assert request.headers["authorization"] == f"Bearer {openai_key}"

    # A longer conversation on top of the summarized one: the new summary is appended.
    out["context"] += [msg("user", "question 6"), msg("assistant", "answer 7"), msg("user", "question 8")]
    again = summarize(llm_server, str(write(tmp_path / "more.json", out)), "--max-messages", "4", "--keep-recent", "1")
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["context_summary"] == "First summary.\n\nSecond summary."


@pytest.mark.parametrize("layout", ["list", "jsonl"])
def test_list_containers_get_a_marked_summary_message_that_a_second_run_appends_to(
    tmp_path: Path, llm_server: LLMServer, openai_key: str, layout: str
) -> None:
    def dump(records: list[dict[str, Any]]) -> str:
        if layout == "jsonl":
            return "".join(json.dumps(r) + "\n" for r in records)
        return json.dumps(records)

    def load(text: str) -> list[dict[str, Any]]:
        if layout == "jsonl":
            return [json.loads(line) for line in text.splitlines()]
        value = json.loads(text)
        assert isinstance(value, list)
        return value

    path = tmp_path / f"chat.{layout if layout == 'jsonl' else 'json'}"
    path.write_text(dump(chat(6)), encoding="utf-8")
    llm_server.script(Reply.ok("First summary."), Reply.ok("Second summary."))
    first = summarize(llm_server, str(path), "--max-messages", "4", "--keep-recent", "2")
    assert first.exit_code == 0, first.stderr
    records = load(first.stdout)
    assert [r["role"] for r in records] == ["system", "system", "user", "assistant"]
    assert records[0]["message_id"] == "system-Be helpful."
    assert records[1]["metadata"] == {SUMMARY_MARKER: True}
    assert records[1]["content"][0]["text"] == "First summary."

    records += [msg("user", "question 6"), msg("assistant", "answer 7"), msg("user", "question 8")]
    path.write_text(dump(records), encoding="utf-8")
    second = summarize(llm_server, str(path), "--max-messages", "4", "--keep-recent", "1")
    assert second.exit_code == 0, second.stderr
    records = load(second.stdout)
    marked = [r for r in records if r.get("metadata", {}).get(SUMMARY_MARKER)]
    assert len(marked) == 1
    assert marked[0]["content"][0]["text"] == "First summary.\n\nSecond summary."
    assert records.index(marked[0]) == 1  # right after the system messages
    # The first summary was carried over, not summarized again.
    assert "First summary." not in llm_server.last.body["input"]
    assert ids(records[2:]) == ["user-question 8"]


# -- flags mirror the constructor -------------------------------------------------------------


def test_flags_reach_the_request(tmp_path: Path, llm_server: LLMServer, openai_key: str) -> None:
    path = write(tmp_path / "c.json", chat(6))
    done = summarize(
        llm_server,
        str(path),
        "--api-style",
        "chat",
        "--max-summary-tokens",
        "50",
        "--summary-system-prompt",
        "Bullets only.",
        "--max-messages",
        "3",
        "--keep-recent",
        "1",
    )
    assert done.exit_code == 0, done.stderr
    request = llm_server.last
    assert request.path == "/v1/chat/completions"
    assert request.body["max_tokens"] == 50
    assert request.body["messages"][0] == {"role": "system", "content": "Bullets only."}
    assert "ASSISTANT: answer 3" in request.body["messages"][1]["content"]
    assert "answer 5" not in request.body["messages"][1]["content"]
    assert ids(json.loads(done.stdout)) == ["system-Be helpful.", "ctxmgr-summary", "assistant-answer 5"]


def test_keep_recent_and_max_messages(tmp_path: Path, llm_server: LLMServer, openai_key: str) -> None:
    path = write(tmp_path / "c.json", {"context": chat(6)})
    below = summarize(llm_server, str(path), "--max-messages", "7")  # 7 messages: not more than 7
    assert below.exit_code == 0
    assert llm_server.request_count == 0
    kept = summarize(llm_server, str(path), "--max-messages", "6", "--keep-recent", "3")
    assert ids(json.loads(kept.stdout)["context"]) == [
        "system-Be helpful.",
        "assistant-answer 3",
        "user-question 4",
        "assistant-answer 5",
    ]
    assert llm_server.request_count == 1


def test_token_budget_and_none(tmp_path: Path, llm_server: LLMServer, openai_key: str) -> None:
    path = write(tmp_path / "c.json", {"context": chat(6)})
    never = summarize(llm_server, str(path), "--max-messages", "none", "--token-budget", "none", "--keep-recent", "0")
    assert never.exit_code == 0
    assert json.loads(never.stdout)["context"] == chat(6)
    assert llm_server.request_count == 0
    budget = summarize(llm_server, str(path), "--max-messages", "none", "--token-budget", "5", "--keep-recent", "1")
    assert budget.exit_code == 0, budget.stderr
    assert llm_server.request_count == 1
    assert len(json.loads(budget.stdout)["context"]) == 2
    bad = summarize(llm_server, str(path), "--token-budget", "lots")
    assert bad.exit_code == 2
    assert "--token-budget must be a whole number or 'none'" in bad.stderr


def test_preserve_tool_pairs_flag(tmp_path: Path, llm_server: LLMServer, openai_key: str) -> None:
    records = [
        msg("user", "q1"),
        msg("assistant", "a1"),
        msg("user", "q2"),
        call("c1", "lookup"),
        tool_result("c1", "found"),
        msg("assistant", "done"),
    ]
    path = write(tmp_path / "c.json", {"context": records})
    safe = summarize(llm_server, str(path), "--max-messages", "3", "--keep-recent", "2")
    assert ids(json.loads(safe.stdout)["context"]) == ["call-c1", "result-c1", "assistant-done"]
    reference = summarize(
        llm_server, str(path), "--max-messages", "3", "--keep-recent", "2", "--no-preserve-tool-pairs"
    )
    assert ids(json.loads(reference.stdout)["context"]) == ["result-c1", "assistant-done"]


def test_tool_results_flag(tmp_path: Path, llm_server: LLMServer, openai_key: str) -> None:
    records = [msg("user", "q1"), call("c1", "lookup"), tool_result("c1", "ORDER-77 shipped"), msg("user", "q2")]
    path = write(tmp_path / "c.json", {"context": records})
    for flags, shown in (((), True), (("--no-tool-results",), False)):
        llm_server.reset()
        done = summarize(llm_server, str(path), "--max-messages", "2", "--keep-recent", "1", *flags)
        assert done.exit_code == 0, done.stderr
        sent = llm_server.last.input_text or ""
        assert "lookup" in sent  # the call is shown either way
        assert ("ORDER-77 shipped" in sent) is shown


def test_remove_tool_msgs_flag(tmp_path: Path, llm_server: LLMServer, openai_key: str) -> None:
    records = [msg("user", "q1"), call("c1", "lookup"), tool_result("c1", "found"), msg("assistant", "a1")]
    path = write(tmp_path / "c.json", {"context": records})
    done = summarize(llm_server, str(path), "--max-messages", "3", "--remove-tool-msgs")
    assert done.exit_code == 0
    assert ids(json.loads(done.stdout)["context"]) == ["user-q1", "assistant-a1"]
    assert llm_server.request_count == 0  # cleaned to 2 messages: no summary needed


def test_provider_and_base_url_flags_reach_gemini(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-0123456789")
    path = write(tmp_path / "c.json", {"context": chat(6)})
    done = summarize(
        llm_server,
        str(path),
        "--provider",
        "google",
        "--base-url",
        llm_server.url,
        "--max-messages",
        "3",
        "--keep-recent",
        "1",
        model="my-tuned-model",
    )
    assert done.exit_code == 0, done.stderr
    request = llm_server.last
    assert request.path.endswith("/models/my-tuned-model:generateContent")
    assert request.headers["x-goog-api-key"] == "AIza-test-0123456789"
    assert json.loads(done.stdout)["context_summary"] == "The user and the assistant discussed the earlier topic."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--api-style", "soap"], "--api-style must be 'responses' or 'chat'"),
        (["--provider", "anthropic"], "unknown provider 'anthropic'"),
        (["--base-url", "localhost:11434/v1"], "base URL must start with http:// or https://"),
        (["--max-messages", "-3"], "--max-messages must be >= 0"),
    ],
)
def test_invalid_flags_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    path = write(tmp_path / "c.json", chat(2))
    done = runner.invoke(app, ["summarize", str(path), "--model", "gpt-4o-mini", *args])
    assert done.exit_code == 2
    assert message in done.stderr


# -- failures ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (Reply.error(500), "HTTP 500 (server error)"),
        (Reply.error(429, retry_after=0), "HTTP 429 (rate limited)"),
        (Reply.error(401), "HTTP 401 (authentication failed"),
        (Reply.malformed(), "malformed answer"),
        (Reply.hang(5), "no answer within 0.3 s (timeout)"),
    ],
)
def test_failure_exits_3_with_the_unchanged_conversation(
    tmp_path: Path, llm_server: LLMServer, openai_key: str, reply: Reply, words: str
) -> None:
    original = {"context": chat(6), "context_summary": "older"}
    path = write(tmp_path / "c.json", original)
    llm_server.script(reply)
    timeout = "0.3" if reply.delay else "10"  # short only for the hang: a loaded machine answers slowly
    flags = ["--max-messages", "3", "--keep-recent", "2", "--max-retries", "0", "--timeout", timeout]
    done = summarize(llm_server, str(path), *flags)
    assert done.exit_code == 3
    assert json.loads(done.stdout) == original
    error_lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(error_lines) == 1
    assert error_lines[0].startswith("error: ")
    assert words in error_lines[0]

    llm_server.script(reply)
    out = tmp_path / "out.json"
    written = summarize(llm_server, str(path), *flags, "-o", str(out))
    assert written.exit_code == 3
    assert json.loads(out.read_text(encoding="utf-8")) == original
    assert json.loads(path.read_text(encoding="utf-8")) == original


def test_retries_are_counted(tmp_path: Path, llm_server: LLMServer, openai_key: str) -> None:
    path = write(tmp_path / "c.json", {"context": chat(6)})
    llm_server.fail(503, times=5)
    done = summarize(llm_server, str(path), "--max-messages", "3", "--keep-recent", "2", "--max-retries", "1")
    assert done.exit_code == 3
    assert llm_server.request_count == 2
    assert "gave up after 2 attempts" in done.stderr


@pytest.mark.parametrize(
    ("model", "variable"), [("gpt-4o-mini", "OPENAI_API_KEY"), ("gemini-2.0-flash", "GEMINI_API_KEY")]
)
def test_missing_key_names_the_variable(tmp_path: Path, model: str, variable: str) -> None:
    path = write(tmp_path / "c.json", {"context": chat(6)})
    done = summarize(None, str(path), "--max-messages", "3", "--keep-recent", "2", model=model)
    assert done.exit_code == 3
    assert f"set {variable}" in done.stderr
    assert json.loads(done.stdout) == {"context": chat(6)}


def test_no_summary_needed_needs_no_key(tmp_path: Path) -> None:
    path = write(tmp_path / "c.json", {"context": chat(2)})
    done = summarize(None, str(path), "--max-messages", "30")
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout) == {"context": chat(2)}


@pytest.mark.parametrize("verbose", [[], ["--verbose"]])
def test_the_key_never_appears_in_output(
    tmp_path: Path, llm_server: LLMServer, openai_key: str, verbose: list[str]
) -> None:
    path = write(tmp_path / "c.json", {"context": chat(6)})
    llm_server.script(
        Reply.error(503, f"overloaded, key {openai_key}"),
        Reply.error(401, f"Incorrect API key provided: {openai_key}"),
    )
    done = summarize(llm_server, str(path), "--max-messages", "3", "--keep-recent", "2", "--max-retries", "2", *verbose)
    assert done.exit_code == 3
    assert "Incorrect API key provided: ***" in done.stderr
    assert openai_key not in done.stdout
    assert openai_key not in done.stderr
    assert llm_server.request_count == 2


# -- offline and lazy imports ----------------------------------------------------------------------


def test_offline_model_is_deterministic(tmp_path: Path) -> None:
    sample = str(SAMPLES / "support-chat.json")
    runs = [summarize(None, sample, "--max-messages", "6", "--keep-recent", "4", model="offline") for _ in range(2)]
    assert runs[0].exit_code == 0, runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    summary = json.loads(runs[0].stdout)["context_summary"]
    assert summary.startswith("Earlier conversation (")
    assert "noah_muller_9847" in summary  # an identifier from the summarized span


def test_the_main_task_ends_holding_no_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_server: LLMServer, openai_key: str
) -> None:
    """asyncio.run formats the main task (its result included) when it restores the SIGINT
    handler: the results are handed over beside the task, which returns None. (A network
    model: the offline digest runs without an event loop.)"""
    import asyncio

    returned: list[object] = []
    real_run = asyncio.run

    def run(main: Any, **options: Any) -> Any:
        returned.append(real_run(main, **options))
        return returned[-1]

    monkeypatch.setattr(asyncio, "run", run)
    out = tmp_path / "out.json"
    done = summarize(llm_server, str(SAMPLES / "support-chat.json"), "--max-messages", "6", "-o", str(out))
    assert done.exit_code == 0, done.stderr
    assert returned == [None]
    assert json.loads(out.read_text())["context_summary"]


def _sdk_modules_after(code: str) -> list[str]:
    program = f"import sys\n{code}\nprint(sorted(m for m in ('openai', 'google.genai') if m in sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().replace("'", '"'))


def test_trim_never_imports_the_sdks() -> None:
    sample = str(SAMPLES / "support-chat.json")
    code = (
        "from typer.testing import CliRunner\n"
        "from ctxmgr.cli import app\n"
        f"result = CliRunner().invoke(app, ['trim', {sample!r}, '-n', '1'])\n"
        "assert result.exit_code == 0, result.output\n"
        f"result = CliRunner().invoke(app, ['summarize', {sample!r}, '--model', 'offline', '--max-messages', '4'])\n"
        "assert result.exit_code == 0, result.output\n"
    )
    assert _sdk_modules_after(code) == []


def test_summarize_imports_the_sdk_only_when_it_calls_it(llm_server: LLMServer) -> None:
    # A check that would pass if nothing were ever imported proves nothing: show the import happens.
    code = (
        "import asyncio\n"
        "from ctxmgr.providers import ProviderOptions, get_summarizer\n"
        f"s = get_summarizer('gpt-4o-mini', options=ProviderOptions(base_url={llm_server.openai_url!r}))\n"
        "asyncio.run(s.summarize('t', instructions='i', max_tokens=5))\n"
    )
    assert _sdk_modules_after(code) == ["openai"]
    assert llm_server.request_count == 1


# -- docs/summaries.md runs as written ---------------------------------------------------------

REPO = SAMPLES.parent


def _summaries_page() -> str:
    return (REPO / "docs" / "summaries.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return [m.group(1) for m in re.finditer(rf"^```{language}\n(.*?)^```", _summaries_page(), flags=re.S | re.M)]


def _commands() -> list[str]:
    return [line.strip() for block in _blocks("sh") for line in block.splitlines() if line.strip()]


def test_the_summaries_page_documents_every_flag_of_the_constructor() -> None:
    text = _summaries_page()
    for flag in (
        "--model",
        "--max-messages",
        "--token-budget",
        "--keep-recent",
        "--remove-tool-msgs",
        "--summary-system-prompt",
        "--max-summary-tokens",
        "--api-style",
        "--preserve-tool-pairs",
        "--no-preserve-tool-pairs",
        "--no-tool-results",
        "--provider",
        "--base-url",
        "--timeout",
        "--max-retries",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_USE_VERTEXAI",
        "not-needed",
    ):
        assert flag in text, flag
    help_text = runner.invoke(app, ["summarize", "--help"], env={"COLUMNS": "200"}).stdout
    for command in _commands():
        for word in shlex.split(command):
            if word.startswith("--"):
                assert word in help_text, word


def test_the_documented_offline_command_runs_as_written() -> None:
    offline = [c for c in _commands() if "--model offline" in c]
    assert len(offline) == 1
    done = subprocess.run(offline[0], shell=True, cwd=REPO, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["context_summary"].startswith("Earlier conversation (")
    assert b"summary added" in done.stderr  # the diff view shows the summary


def _summary_requests(server: LLMServer) -> int:
    return sum(1 for r in server.requests if r.path not in INFO_PATHS)


def test_the_documented_provider_commands_run_against_the_local_server(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "chat.json", {"context": chat(60)})
    monkeypatch.chdir(tmp_path)
    # In-process (the SDKs are loaded once): the shell's `NAME=value` prefixes become the
    # environment, the key placeholders stay as written, only where requests go changes.
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_url)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", llm_server.url)
    commands = [c for c in _commands() if "--model offline" not in c]
    assert len(commands) == 3
    kinds = []
    for command in commands:
        words = shlex.split(command.replace("http://localhost:11434/v1", llm_server.openai_url))
        env = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))
        words = [w for w in words if w not in {f"{k}={v}" for k, v in env.items()}]
        assert words[0] == "ctxmgr"
        before = _summary_requests(llm_server)
        done = runner.invoke(app, [*words[1:], "--no-cache"], env=env)
        assert done.exit_code == 0, (command, done.stderr)
        assert json.loads(done.stdout)["context_summary"]
        assert _summary_requests(llm_server) == before + 1  # besides asking a local server its window
        summary = [r for r in llm_server.requests if r.path not in INFO_PATHS][-1]
        kinds.append((summary.kind, summary.model))
    assert kinds == [("responses", "gpt-4o-mini"), ("gemini", "gemini-2.0-flash"), ("chat", "llama3.2")]
    summaries = [r for r in llm_server.requests if r.path not in INFO_PATHS]
    assert summaries[0].headers["authorization"] == "Bearer sk-..."
    assert summaries[2].headers["authorization"] == "Bearer not-needed"
    # Asking the local server its window sends no key.
    assert all("authorization" not in r.headers for r in llm_server.requests if r.path in INFO_PATHS)


def test_the_python_examples_print_what_they_say() -> None:
    blocks = _blocks("python")
    assert len(blocks) == 2  # the manager on an AgentState, and the chain built from settings
    for block in blocks:
        expected = [m.group(1).strip() for m in re.finditer(r"^print\(.*\)\s+#\s*(.+)$", block, flags=re.M)]
        assert expected
        done = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=60, check=True)
        assert done.stdout.splitlines() == expected


def test_the_view_says_what_max_messages_means_to_each_command(tmp_path: Path) -> None:
    chat = tmp_path / "chat.json"
    shutil.copyfile(SAMPLES / "support-chat.json", chat)
    env = {"COLUMNS": "120", "NO_COLOR": "1"}
    trim = runner.invoke(app, ["trim", str(chat), "--max-messages", "4", "--view"], env=env)
    assert trim.exit_code == 0, trim.stderr
    assert "kept the last 4 user turns" in trim.stderr
    args = ["summarize", str(chat), "--model", "offline", "--max-messages", "4", "--keep-recent", "2", "--view"]
    summary = runner.invoke(app, args, env=env)
    assert summary.exit_code == 0, summary.stderr
    assert "summary when over 4 messages; the last 2 messages kept verbatim" in summary.stderr
    assert "user turn" not in summary.stderr


def test_a_datasets_warnings_come_in_line_order_whatever_order_its_summaries_finish(
    tmp_path: Path, llm_server: LLMServer, openai_key: str
) -> None:
    """At ``--concurrency`` above 1 the first line's summary may finish last: the one line
    a kind of warning gets on standard error names the first line still, and ``--json``
    lists the lines' warnings and summaries in their order."""
    lines = []
    for number in range(3):
        messages = [
            msg("user", f"please cancel order W{number}0001 today"),
            msg("assistant", "Which one?"),
            msg("user", f"order W{number}0001, and refund it"),
            msg("assistant", "Done."),
            msg("user", "thanks"),
        ]
        lines.append(
            json.dumps({"messages": [{"role": m["role"], "content": m["content"][0]["text"]} for m in messages]})
        )
    path = tmp_path / "orders.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    llm_server.script(
        Reply.ok("Nothing to keep.", delay=1.0), Reply.ok("Nothing to keep."), Reply.ok("Nothing to keep.")
    )
    result = summarize(llm_server, str(path), "--max-messages", "2", "--keep-recent", "1", "-c", "3", "--json")
    assert result.exit_code == 0, result.stderr
    stated = [line for line in result.stderr.splitlines() if line.startswith("warning:") and "facts" in line]
    assert len(stated) == 1
    assert "orders.jsonl:1: " in stated[0]
    assert "2 more like it" in stated[0]
    (report,) = json.loads(result.stdout)["files"]
    numbers = [int(w.split(":", 1)[0].removeprefix("line ")) for w in report["warnings"] if w.startswith("line ")]
    assert numbers == sorted(numbers)
    assert set(numbers) == {1, 2, 3}
    assert [summary["line"] for summary in report["summaries"]] == [1, 2, 3]  # line order too
