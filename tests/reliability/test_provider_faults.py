"""Every way a provider can fail, end to end: the real SDKs, the local test server, the CLI.

Each fault is tried with the OpenAI Responses API, Chat Completions and Gemini. What
must hold, for each:

* library (``SummaryContextManager``): the state is unchanged and the failure is logged;
* CLI: exit code 3; one line on standard error naming the file, the provider and the
  cause; the unchanged conversation written where output was asked for (standard output
  or ``-o``); retries bounded (the server counts the attempts) and each retry shown with
  ``--verbose``, and only then;
* in a batch, the other conversations are still summarized (a fault on one file; the
  server dying halfway).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from llm_server import DEFAULT_SUMMARY, LLMServer, Reply
from typer.testing import CliRunner, Result

from ctxmgr.cli import app
from ctxmgr.providers import _retry
from ctxmgr.providers._base import ProviderOptions
from ctxmgr.providers._gemini import GeminiSummarizer
from ctxmgr.providers._openai import OpenAISummarizer
from ctxmgr.state import AgentState, Message, SummaryContextManager

OPENAI_KEY = "sk-test-faults-0123456789abcdef"
GEMINI_KEY = "AIza-test-faults-0123456789"
KINDS = ("responses", "chat", "gemini")
MAX_RETRIES = 2
TIMEOUT = 0.3  # for the hanging server only
PATIENT = 10.0  # every other fault answers at once; a loaded machine may still take a while

runner = CliRunner()


@dataclass(frozen=True)
class Fault:
    """One way to fail. ``reply`` is scripted for every attempt; ``address`` replaces the server."""

    words: str  # in the one error line, after "PROVIDER: "
    reply: Reply | None = None
    retryable: bool = False
    address: str | None = None  # "closed-port" or an unresolvable host


FAULTS: dict[str, Fault] = {
    "connection refused": Fault("failed: ConnectError", retryable=True, address="closed-port"),
    "DNS failure": Fault("nonexistent.invalid", retryable=True, address="http://nonexistent.invalid"),
    "reset mid-answer": Fault("failed: ReadError", Reply.reset(), retryable=True),
    "not HTTP": Fault("failed: RemoteProtocolError", Reply.garbage(), retryable=True),
    "401": Fault("HTTP 401 (authentication failed (check the API key))", Reply.error(401, "Incorrect API key")),
    "403": Fault("HTTP 403 (permission denied", Reply.error(403, "Project lacks access")),
    "404 model": Fault("HTTP 404 (not found (check the model name", Reply.error(404, "model does not exist")),
    "429 Retry-After": Fault("HTTP 429 (rate limited)", Reply.error(429, "slow down", retry_after=0), True),
    "429": Fault("HTTP 429 (rate limited)", Reply.error(429, "slow down"), retryable=True),
    "500": Fault("HTTP 500 (server error)", Reply.error(500, "internal"), retryable=True),
    "502": Fault("HTTP 502 (server error)", Reply.error(502, "bad gateway"), retryable=True),
    "503": Fault("HTTP 503 (server error)", Reply.error(503, "overloaded"), retryable=True),
    "not JSON": Fault("malformed answer", Reply.malformed()),
    "no text": Fault("answered with no text; nothing was summarized", Reply.empty()),
    "cut at the token cap": Fault(
        "cut off at the output-token cap (600 tokens); raise --max-summary-tokens", Reply.truncated_answer()
    ),
    "hang past the timeout": Fault(f"no answer within {TIMEOUT:g} s (timeout)", Reply.hang(5), retryable=True),
}
FAULT_KINDS = len(FAULTS) + 1  # and the server dying halfway through a batch
"""Fault kinds tried (docs/reliability.md quotes this)."""

PROVIDER = {"responses": "openai", "chat": "openai", "gemini": "google"}


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real retry delays are half a second and up; here a few milliseconds (a
    ``Retry-After`` the server sends is still what is waited, up to the cap)."""
    original = _retry.retry_delay

    def quick(retry: int, retry_after: float | None, options: ProviderOptions) -> float:
        return original(retry, retry_after, dataclasses.replace(options, backoff=0.005))

    monkeypatch.setattr(_retry, "retry_delay", quick)


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unresolvable host must fail here, not be handed to a proxy."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)


@pytest.fixture(scope="module")
def closed_port() -> Iterator[str]:
    with socket.socket() as probe:  # bound, never listening: connections are refused
        probe.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{probe.getsockname()[1]}"


def base_url(kind: str, fault: Fault, server: LLMServer, closed_port: str) -> str:
    root = closed_port if fault.address == "closed-port" else fault.address or server.url
    return root if kind == "gemini" else f"{root}/v1"


def _settled_count(server: Any, expected: int) -> int:
    """The server's request count once its handler threads have caught up: a request the
    client gave up on (a hang past the timeout) may be counted a moment after the command
    returns, on a busy machine. Waits while the count is short of ``expected``, never past it."""
    waited = 0.0
    while server.request_count < expected and waited < 10.0:
        time.sleep(0.05)
        waited += 0.05
    count: int = server.request_count
    return count


def attempts(fault: Fault, max_retries: int = MAX_RETRIES) -> int:
    """HTTP requests the server must see: every attempt, or none when it cannot be reached."""
    if fault.address is not None:
        return 0
    return max_retries + 1 if fault.retryable else 1


def conversation(n: int = 6, tag: str = "") -> dict[str, Any]:
    messages = [{"role": "system", "content": "Be brief."}]
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"{tag}{role} message {i}"})
    return {"messages": messages}


def summarize(kind: str, url: str, *args: str, retries: int = MAX_RETRIES, timeout: float = PATIENT) -> Result:
    model = "gemini-2.0-flash" if kind == "gemini" else "gpt-4o-mini"
    style = ["--api-style", "chat"] if kind == "chat" else []
    command = [
        "summarize",
        *args,
        "--model",
        model,
        *style,
        "--base-url",
        url,
        "--max-messages",
        "3",
        "--keep-recent",
        "2",
        "--max-retries",
        str(retries),
        "--timeout",
        str(timeout),
        "--no-cache",
        "--no-view",
    ]
    result = runner.invoke(app, command)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stderr
    return result


def script(server: LLMServer, fault: Fault, times: int) -> None:
    server.reset()
    if fault.reply is not None:
        server.script(*[fault.reply] * times)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


# -- each fault, through the CLI --------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fault_name", FAULTS)
def test_a_provider_fault_through_the_cli(
    fault_name: str, kind: str, tmp_path: Path, llm_server: LLMServer, closed_port: str, keys: None
) -> None:
    fault = FAULTS[fault_name]
    url = base_url(kind, fault, llm_server, closed_port)
    path = tmp_path / "chat.json"
    original = conversation()
    path.write_text(json.dumps(original))
    hangs = fault_name == "hang past the timeout"
    retries = 1 if hangs else MAX_RETRIES  # each hang costs the timeout
    timeout = TIMEOUT if hangs else PATIENT
    expected_line = f"error: {path}: {PROVIDER[kind]}: "

    # Standard output: the unchanged conversation; one line on standard error.
    script(llm_server, fault, 5)
    quiet = summarize(kind, url, str(path), retries=retries, timeout=timeout)
    assert quiet.exit_code == 3, quiet.stderr
    assert json.loads(quiet.stdout) == original
    lines = quiet.stderr.splitlines()
    assert len(lines) == 1, quiet.stderr
    assert lines[0].startswith(expected_line), lines[0]
    assert fault.words in lines[0], lines[0]
    if fault.retryable:
        assert f"(gave up after {retries + 1} attempts)" in lines[0]
    assert "retry" not in quiet.stderr.replace("gave up", "")  # retries are silent without --verbose
    assert _settled_count(llm_server, attempts(fault, retries)) == attempts(fault, retries)  # bounded
    if fault.address == "http://nonexistent.invalid":
        assert "nonexistent.invalid" in lines[0]  # it failed there, and was sent nowhere else

    # -o: the unchanged conversation is written there; the input is untouched.
    script(llm_server, fault, 5)
    out = tmp_path / "out.json"
    written = summarize(kind, url, str(path), "-o", str(out), retries=retries, timeout=timeout)
    assert written.exit_code == 3
    assert json.loads(out.read_text()) == original
    assert json.loads(path.read_text()) == original
    assert len(error_lines(written.stderr)) == 1

    # --verbose: each retry is a visible line, and the error line is still there, once.
    script(llm_server, fault, 5)
    verbose = summarize(kind, url, str(path), "--verbose", retries=retries, timeout=timeout)
    assert verbose.exit_code == 3
    flat = " ".join(verbose.stderr.split())  # the log handler wraps long lines
    for retry in range(1, retries + 1):
        assert (f"retry {retry} of {retries} in" in flat) == fault.retryable, flat
    assert f"retry {retries + 1} of" not in flat
    assert len(error_lines(verbose.stderr)) == 1


def test_retry_after_is_waited_and_shown(tmp_path: Path, llm_server: LLMServer, keys: None) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(conversation()))
    llm_server.script(Reply.error(429, retry_after=0.25), Reply.ok("Recovered."))
    done = summarize("responses", llm_server.openai_url, str(path), "--verbose")
    assert done.exit_code == 0, done.stderr
    assert "retry 1 of 2 in 0.25 s" in " ".join(done.stderr.split())
    requests = llm_server.requests
    assert requests[1].received_at - requests[0].received_at >= 0.25
    assert json.loads(done.stdout)["messages"][1]["content"].endswith("Recovered.")


# -- each fault, through the library ----------------------------------------------------------------


def summarizer_for(kind: str, url: str, retries: int, timeout: float = PATIENT) -> Any:
    options = ProviderOptions(base_url=url, timeout=timeout, max_retries=retries, backoff=0.005)
    if kind == "gemini":
        return GeminiSummarizer("gemini-2.0-flash", dataclasses.replace(options, api_key=GEMINI_KEY))
    return OpenAISummarizer("gpt-4o-mini", dataclasses.replace(options, api_key=OPENAI_KEY), api_style=kind)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS)
def test_every_fault_leaves_the_state_unchanged_and_logs(
    kind: str, llm_server: LLMServer, closed_port: str, caplog: pytest.LogCaptureFixture
) -> None:
    for name, fault in FAULTS.items():
        script(llm_server, fault, 5)
        messages = [Message.text_message(f"message {i}", role="user" if i % 2 == 0 else "assistant") for i in range(6)]
        state = AgentState(context=list(messages), context_summary="earlier")
        summarizer = summarizer_for(
            kind,
            base_url(kind, fault, llm_server, closed_port),
            retries=1,
            timeout=TIMEOUT if fault.reply is not None and fault.reply.delay else PATIENT,
        )
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="ctxmgr"):
            SummaryContextManager("m", max_messages=3, keep_recent=2, summarizer=summarizer).trim_context(state)
        assert state.context == messages, name
        assert state.context_summary == "earlier", name
        # The reference's contract: a failed call is logged; an empty summary leaves it as it was.
        logged = (
            "Summarisation LLM call returned an empty summary"
            if name == "no text"
            else ("Summarisation LLM call failed; context left unchanged")
        )
        assert logged in caplog.text, (name, caplog.text)
        assert _settled_count(llm_server, attempts(fault, 1)) == attempts(fault, 1), name


# -- batches: the other conversations are still done --------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_fault_on_one_file_of_a_batch(kind: str, tmp_path: Path, llm_server: LLMServer, keys: None) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in ("a", "b", "c"):
        (inputs / f"{name}.json").write_text(json.dumps(conversation(tag=name)))
    # -j 1: files in order; "b" gets an error of its own request (not retried, and not one
    # every call would meet, as a key error is), the others a summary.
    llm_server.script(Reply.ok("Summary of a."), Reply.error(400, "Context too long"), Reply.ok("Summary of c."))
    url = llm_server.url if kind == "gemini" else llm_server.openai_url
    done = summarize(kind, url, str(inputs), "-o", str(tmp_path / "out"), "-c", "1")
    assert done.exit_code == 3
    assert error_lines(done.stderr) == [
        f"error: {inputs / 'b.json'}: {PROVIDER[kind]}: HTTP 400 (bad request): Context too long"
    ]
    out = {name: json.loads((tmp_path / "out" / f"{name}.json").read_text()) for name in "abc"}
    assert out["b"] == conversation(tag="b")
    for name in "ac":
        assert f"Summary of {name}." in json.dumps(out[name])
        assert len(out[name]["messages"]) < len(conversation()["messages"])
    assert llm_server.request_count == 3


def test_the_server_dying_halfway_through_a_dataset(tmp_path: Path, llm_server: LLMServer, keys: None) -> None:
    path = tmp_path / "dataset.jsonl"
    lines = [conversation(tag=f"c{i} ") for i in range(6)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    llm_server.die_after(2)
    done = summarize("chat", llm_server.openai_url, str(path), "-o", str(tmp_path / "out.jsonl"), "-c", "1", retries=1)
    assert done.exit_code == 3
    assert llm_server.dead
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(out) == 6
    for i in range(2):  # done before the server died
        assert DEFAULT_SUMMARY in json.dumps(out[i])
    assert out[2:] == lines[2:]  # the rest written unchanged, nothing lost
    # An unreachable host fails every call: the calls stop at the first, one line says so.
    errors = error_lines(done.stderr)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"error: {path}:3: openai: connection to {llm_server.openai_url}/ failed")
    assert "(gave up after 2 attempts)" in errors[0]
    assert errors[0].endswith("(4 conversations left as they were, written unchanged where output was asked for)")
    assert llm_server.request_count == 2  # what reached a live server


def test_the_server_dying_halfway_through_a_batch_of_files(tmp_path: Path, llm_server: LLMServer, keys: None) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    for i in range(5):
        (inputs / f"{i}.json").write_text(json.dumps(conversation(tag=f"f{i} ")))
    llm_server.die_after(3)
    done = summarize("gemini", llm_server.url, str(inputs), "--in-place", "-c", "1", retries=1)
    assert done.exit_code == 3
    summarized = [i for i in range(5) if DEFAULT_SUMMARY in (inputs / f"{i}.json").read_text()]
    assert summarized == [0, 1, 2]
    for i in (3, 4):  # left exactly as they were
        assert json.loads((inputs / f"{i}.json").read_text()) == conversation(tag=f"f{i} ")
    # One line for the fault that stopped the calls, naming where it struck and what it left.
    errors = error_lines(done.stderr)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"error: {inputs / '3.json'}: google: connection to ")
    left = "(2 conversations in 2 files left as they were, written unchanged where output was asked for)"
    assert errors[0].endswith(left)


def test_the_no_text_check_keeps_the_batch_client(
    tmp_path: Path, llm_server: LLMServer, keys: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI's wrapper that fails empty answers forwards aopen/aclose to the provider."""
    events: list[str] = []
    for name in ("aopen", "aclose"):
        original = getattr(OpenAISummarizer, name)

        async def spy(self: OpenAISummarizer, _original: Any = original, _name: str = name) -> None:
            events.append(_name)
            await _original(self)

        monkeypatch.setattr(OpenAISummarizer, name, spy)
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(conversation()))
    assert summarize("responses", llm_server.openai_url, str(path)).exit_code == 0
    assert events == ["aopen", "aclose"]
