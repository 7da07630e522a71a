"""Providers through the real openai and google-genai SDKs, against the local server."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import pickle
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import pytest
from llm_server import DEFAULT_SUMMARY, LLMServer, Reply

from ctxmgr._summarizer import Summarizer
from ctxmgr.errors import MissingKeyError, ProviderError, ProviderNotInstalledError, UsageError
from ctxmgr.providers import ModelRef, ProviderOptions, detect_provider, get_summarizer
from ctxmgr.providers._base import LOCAL_SERVER_KEY
from ctxmgr.providers._gemini import GeminiSummarizer
from ctxmgr.providers._offline import OfflineSummarizer
from ctxmgr.providers._openai import OpenAISummarizer
from ctxmgr.providers._retry import Pacer, parse_retry_after, retry_delay
from ctxmgr.state import AgentState, Message, SummaryContextManager, ToolResultBlock

OPENAI_KEY = "sk-test-c0ffee1234567890abcdef"
GEMINI_KEY = "AIza-test-feedface0987654321"
TEXT = "<transcript-x>\nUSER: hello\n</transcript-x>"


def fast(**kwargs: Any) -> ProviderOptions:
    """Options with test-sized timeouts and backoff."""
    values: dict[str, Any] = {"timeout": 5.0, "max_retries": 2, "backoff": 0.01, "max_backoff": 0.05}
    values.update(kwargs)
    return ProviderOptions(**values)


def run(summarizer: Summarizer, text: str = TEXT, *, instructions: str = "Summarize.", max_tokens: int = 77) -> str:
    return asyncio.run(summarizer.summarize(text, instructions=instructions, max_tokens=max_tokens))


def openai_summarizer(server: LLMServer, style: str = "responses", **options: Any) -> OpenAISummarizer:
    options.setdefault("api_key", OPENAI_KEY)
    return OpenAISummarizer("gpt-4o-mini", fast(base_url=server.openai_url, **options), api_style=style)  # type: ignore[arg-type]


def gemini_summarizer(server: LLMServer, **options: Any) -> GeminiSummarizer:
    options.setdefault("api_key", GEMINI_KEY)
    return GeminiSummarizer("gemini-2.0-flash", fast(base_url=server.url, **options))


KINDS = ["responses", "chat", "gemini"]


def summarizer_for(kind: str, server: LLMServer, **options: Any) -> Summarizer:
    if kind == "gemini":
        return gemini_summarizer(server, **options)
    return openai_summarizer(server, kind, **options)


# -- detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gemini/gemini-2.0-flash", ("google", "gemini-2.0-flash")),
        ("google/gemini-1.5-pro", ("google", "gemini-1.5-pro")),
        ("openai/gpt-4o", ("openai", "gpt-4o")),
        ("gpt/gpt-4o-mini", ("openai", "gpt-4o-mini")),
        ("GEMINI/custom-tune", ("google", "custom-tune")),
        ("meta-llama/Llama-3-8B", ("openai", "meta-llama/Llama-3-8B")),
        ("gemini-2.0-flash", ("google", "gemini-2.0-flash")),
        ("imagen-3.0", ("google", "imagen-3.0")),
        ("veo-2", ("google", "veo-2")),
        ("chirp-2", ("google", "chirp-2")),
        ("gpt-4o-mini", ("openai", "gpt-4o-mini")),
        ("o1-mini", ("openai", "o1-mini")),
        ("o3-mini", ("openai", "o3-mini")),
        ("o4-mini", ("openai", "o4-mini")),
        ("llama3.2", ("openai", "llama3.2")),
        ("claude-3-5-haiku", ("openai", "claude-3-5-haiku")),
        ("offline", ("offline", "offline")),
    ],
)
def test_detect_provider(model: str, expected: tuple[str, str]) -> None:
    assert detect_provider(model) == ModelRef(*expected)


def test_get_summarizer_picks_by_name_and_provider_overrides() -> None:
    assert isinstance(get_summarizer("gemini-2.0-flash"), GeminiSummarizer)
    assert isinstance(get_summarizer("offline"), OfflineSummarizer)
    chat = get_summarizer("openai/gpt-4o-mini", api_style="chat")
    assert isinstance(chat, OpenAISummarizer)
    assert chat.model == "gpt-4o-mini"
    assert chat.api_style == "chat"
    # An explicit provider wins; a name not meant for it goes to the SDK whole.
    forced = get_summarizer("google/gemma-3", provider="openai")
    assert isinstance(forced, OpenAISummarizer)
    assert forced.model == "google/gemma-3"
    tuned = get_summarizer("my-tuned-model", provider="google")
    assert isinstance(tuned, GeminiSummarizer)
    assert tuned.model == "my-tuned-model"
    assert isinstance(get_summarizer("gpt-4o", provider="offline"), OfflineSummarizer)
    with pytest.raises(UsageError, match="unknown provider 'anthropic'"):
        get_summarizer("claude", provider="anthropic")
    with pytest.raises(UsageError, match="api_style"):
        get_summarizer("gpt-4o", api_style="soap")  # type: ignore[arg-type]


def test_provider_options_validate() -> None:
    with pytest.raises(UsageError, match="base URL"):
        ProviderOptions(base_url="localhost:11434/v1")
    with pytest.raises(UsageError, match="max_retries"):
        ProviderOptions(max_retries=-1)
    with pytest.raises(UsageError, match="timeout"):
        ProviderOptions(timeout=0)
    assert OPENAI_KEY not in repr(ProviderOptions(api_key=OPENAI_KEY))


def test_building_a_summarizer_reads_no_key_and_imports_no_sdk() -> None:
    code = (
        "import sys\n"
        "from ctxmgr.providers import get_summarizer\n"
        "from ctxmgr.state import AgentState, Message, SummaryContextManager\n"
        "for m in ('gpt-4o-mini', 'gemini-2.0-flash', 'offline'):\n"
        "    s = get_summarizer(m)\n"
        "    mgr = SummaryContextManager(m, summarizer=s)\n"
        "    mgr.trim_context(AgentState(context=[Message.text_message('hi')]))\n"  # no summary needed
        "print(sorted(n for n in ('openai', 'google.genai') if n in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"  # and no MissingKeyError although no key is set


# -- what is sent --------------------------------------------------------------------------


def test_openai_responses_request(llm_server: LLMServer) -> None:
    llm_server.script(Reply.ok("The user said hello."))
    summary = run(openai_summarizer(llm_server), instructions="Be brief.", max_tokens=77)
    assert summary == "The user said hello."
    request = llm_server.last
    assert request.method == "POST"
    assert request.path == "/v1/responses"
    assert request.body["model"] == "gpt-4o-mini"
    assert request.body["instructions"] == "Be brief."
    assert request.body["input"] == TEXT
    assert request.body["max_output_tokens"] == 77
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert llm_server.request_count == 1


def test_openai_chat_request(llm_server: LLMServer) -> None:
    summary = run(openai_summarizer(llm_server, "chat"), instructions="Be brief.", max_tokens=55)
    assert summary == DEFAULT_SUMMARY
    request = llm_server.last
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "gpt-4o-mini"
    assert request.body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": TEXT},
    ]
    assert request.body["max_tokens"] == 55
    assert "max_completion_tokens" not in request.body


def test_openai_chat_reasoning_models_get_max_completion_tokens(llm_server: LLMServer) -> None:
    summarizer = OpenAISummarizer("o3-mini", fast(base_url=llm_server.openai_url), api_style="chat")
    run(summarizer, max_tokens=42)
    assert llm_server.last.body["max_completion_tokens"] == 42
    assert "max_tokens" not in llm_server.last.body


def test_gemini_request(llm_server: LLMServer) -> None:
    summary = run(gemini_summarizer(llm_server), instructions="Be brief.", max_tokens=66)
    assert summary == DEFAULT_SUMMARY
    request = llm_server.last
    assert request.path.endswith("/models/gemini-2.0-flash:generateContent")
    assert request.instructions == "Be brief."
    assert request.input_text == TEXT
    assert request.body["generationConfig"]["maxOutputTokens"] == 66
    assert request.headers["x-goog-api-key"] == GEMINI_KEY
    assert llm_server.request_count == 1


def test_gemini_vertex_express_mode(llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_API_KEY", GEMINI_KEY)
    summarizer = GeminiSummarizer("gemini-2.0-flash", fast(base_url=llm_server.url))
    assert summarizer.client_arguments() == {"vertexai": True, "api_key": GEMINI_KEY}
    assert run(summarizer) == DEFAULT_SUMMARY
    assert llm_server.last.model == "gemini-2.0-flash"
    assert llm_server.last.headers["x-goog-api-key"] == GEMINI_KEY


def test_vertex_with_a_project_uses_project_and_location(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "1")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    assert GeminiSummarizer("gemini-2.0-flash").client_arguments() == {
        "vertexai": True,
        "project": "my-project",
        "location": "global",
    }
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
    assert GeminiSummarizer("gemini-2.0-flash").client_arguments()["location"] == "europe-west4"


def test_vertex_without_credentials_says_how_to_get_them(
    llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "my-project")
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))  # no gcloud credentials file
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # do not probe a metadata server
    with pytest.raises(MissingKeyError, match="gcloud auth application-default login"):
        run(GeminiSummarizer("gemini-2.0-flash", fast(base_url=llm_server.url, max_retries=2)))
    assert llm_server.request_count == 0


def test_summaries_through_the_manager_for_each_api(llm_server: LLMServer) -> None:
    for kind in KINDS:
        llm_server.script(Reply.ok(f"summary via {kind}"))
        messages = [Message.text_message(f"message {i}") for i in range(5)]
        state = AgentState(context=messages)
        manager = SummaryContextManager(
            "any", max_messages=2, keep_recent=1, summarizer=summarizer_for(kind, llm_server), max_summary_tokens=99
        )
        manager.trim_context(state)
        assert state.context_summary == f"summary via {kind}"
        assert [m.text() for m in state.context] == ["message 4"]
        request = llm_server.last
        assert request.kind == kind
        assert request.input_text == manager.request_text(messages[:4])
        assert request.instructions == manager.instructions
        assert request.max_tokens == 99


# -- keys and base URLs ----------------------------------------------------------------------


def test_openai_missing_key_names_the_variable() -> None:
    with pytest.raises(MissingKeyError, match="set OPENAI_API_KEY"):
        run(OpenAISummarizer("gpt-4o-mini", fast()))


@pytest.mark.parametrize(
    ("env", "match"),
    [({}, "set GEMINI_API_KEY"), ({"GOOGLE_GENAI_USE_VERTEXAI": "true"}, "set GOOGLE_CLOUD_PROJECT")],
)
def test_gemini_missing_key_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], match: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(MissingKeyError, match=match):
        run(GeminiSummarizer("gemini-2.0-flash", fast()))


def test_keys_come_from_the_environment(llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    run(OpenAISummarizer("gpt-4o-mini", fast(base_url=llm_server.openai_url)))
    assert llm_server.last.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    run(GeminiSummarizer("gemini-2.0-flash", fast(base_url=llm_server.url)))
    assert llm_server.last.headers["x-goog-api-key"] == GEMINI_KEY
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-google-wins")  # the SDK's order
    run(GeminiSummarizer("gemini-2.0-flash", fast(base_url=llm_server.url)))
    assert llm_server.last.headers["x-goog-api-key"] == "AIza-google-wins"
    # An explicit key beats the environment.
    run(GeminiSummarizer("gemini-2.0-flash", fast(base_url=llm_server.url, api_key="AIza-explicit")))
    assert llm_server.last.headers["x-goog-api-key"] == "AIza-explicit"


def test_local_server_needs_no_key(llm_server: LLMServer) -> None:
    summary = run(OpenAISummarizer("llama3.2", fast(base_url=llm_server.openai_url), api_style="chat"))
    assert summary == DEFAULT_SUMMARY
    assert llm_server.last.headers["authorization"] == f"Bearer {LOCAL_SERVER_KEY}"


def test_sdk_base_url_variables_are_honoured(llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_url)
    assert run(OpenAISummarizer("gpt-4o-mini", fast())) == DEFAULT_SUMMARY  # no key needed either
    assert llm_server.last.path == "/v1/responses"
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", llm_server.url)
    assert run(GeminiSummarizer("gemini-2.0-flash", fast(api_key=GEMINI_KEY))) == DEFAULT_SUMMARY
    assert llm_server.last.kind == "gemini"
    assert llm_server.request_count == 2


@pytest.mark.parametrize("module", ["openai", "google.genai"])
def test_missing_sdk_gives_the_pip_command(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    summarizer = OpenAISummarizer("gpt-4o", fast(api_key="k")) if module == "openai" else GeminiSummarizer("g")
    with pytest.raises(ProviderNotInstalledError, match="pip install"):
        run(summarizer)


# -- answers and failures --------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_empty_answer_is_an_empty_summary(llm_server: LLMServer, kind: str) -> None:
    llm_server.script(Reply.empty())
    assert run(summarizer_for(kind, llm_server)) == ""


@pytest.mark.parametrize("kind", KINDS)
def test_429_and_5xx_are_retried_until_success(llm_server: LLMServer, kind: str) -> None:
    llm_server.script(Reply.error(429), Reply.error(503))
    assert run(summarizer_for(kind, llm_server, max_retries=2)) == DEFAULT_SUMMARY
    assert llm_server.request_count == 3
    assert len({r.raw for r in llm_server.requests}) == 1  # the same request each time


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_retries_are_bounded(llm_server: LLMServer, kind: str, status: int) -> None:
    llm_server.fail(status, times=10)
    with pytest.raises(ProviderError) as caught:
        run(summarizer_for(kind, llm_server, max_retries=2))
    assert llm_server.request_count == 3
    error = caught.value
    assert error.status_code == status
    assert error.retryable
    assert f"HTTP {status}" in str(error)
    assert "gave up after 3 attempts" in str(error)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("status", "words"), [(400, "bad request"), (401, "check the API key"), (404, "model name")])
def test_client_errors_are_not_retried(llm_server: LLMServer, kind: str, status: int, words: str) -> None:
    llm_server.fail(status, times=3)
    with pytest.raises(ProviderError) as caught:
        run(summarizer_for(kind, llm_server, max_retries=2))
    assert llm_server.request_count == 1
    assert caught.value.status_code == status
    assert not caught.value.retryable
    assert words in str(caught.value)
    assert str(caught.value).startswith("google: " if kind == "gemini" else "openai: ")


@pytest.mark.parametrize("kind", KINDS)
def test_malformed_answer(llm_server: LLMServer, kind: str) -> None:
    llm_server.script(Reply.malformed())
    with pytest.raises(ProviderError, match="malformed answer, not JSON"):
        run(summarizer_for(kind, llm_server))
    assert llm_server.request_count == 1


@pytest.mark.parametrize("kind", KINDS)
def test_hang_past_the_timeout_is_retried_then_fails(llm_server: LLMServer, kind: str) -> None:
    llm_server.script(Reply.hang(5), Reply.hang(5))
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"no answer within 0.3 s \(timeout\).*2 attempts"):
        run(summarizer_for(kind, llm_server, timeout=0.3, max_retries=1))
    assert time.monotonic() - started < 3
    assert llm_server.request_count == 2


@pytest.mark.parametrize("kind", KINDS)
def test_latency_under_the_timeout_is_fine(llm_server: LLMServer, kind: str) -> None:
    llm_server.latency = 0.2
    started = time.monotonic()
    assert run(summarizer_for(kind, llm_server, timeout=3)) == DEFAULT_SUMMARY
    assert time.monotonic() - started >= 0.2


@pytest.mark.parametrize("kind", KINDS)
def test_retry_after_is_honoured_and_capped(llm_server: LLMServer, kind: str) -> None:
    llm_server.script(Reply.error(429, retry_after=0.4))
    started = time.monotonic()
    run(summarizer_for(kind, llm_server, backoff=0.001, max_backoff=5))
    assert time.monotonic() - started >= 0.4
    llm_server.script(Reply.error(429, retry_after=3600))
    started = time.monotonic()
    run(summarizer_for(kind, llm_server, backoff=0.001, max_backoff=0.05))
    assert time.monotonic() - started < 2
    assert llm_server.request_count == 4


def test_connection_refused_is_retried_then_reported(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    for summarizer in (
        OpenAISummarizer("gpt-4o-mini", fast(base_url=f"http://127.0.0.1:{port}/v1", api_key=OPENAI_KEY)),
        GeminiSummarizer("gemini-2.0-flash", fast(base_url=f"http://127.0.0.1:{port}", api_key=GEMINI_KEY)),
    ):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="ctxmgr"), pytest.raises(ProviderError) as caught:
            run(summarizer)
        assert caught.value.retryable
        assert "gave up after 3 attempts" in str(caught.value)
        assert "connect" in str(caught.value)
        retries = [r.getMessage().split("; ")[-1][:10] for r in caplog.records if r.name == "ctxmgr.providers"]
        assert retries == ["retry 1 of", "retry 2 of"]


@pytest.mark.parametrize("kind", KINDS)
def test_keys_never_appear_in_errors(llm_server: LLMServer, kind: str, caplog: pytest.LogCaptureFixture) -> None:
    key = GEMINI_KEY if kind == "gemini" else OPENAI_KEY
    llm_server.script(Reply.error(503, f"overloaded for key {key}"), Reply.error(401, f"Incorrect API key: {key}"))
    with caplog.at_level(logging.DEBUG), pytest.raises(ProviderError) as caught:
        run(summarizer_for(kind, llm_server))
    assert llm_server.request_count == 2
    assert "Incorrect API key: ***" in str(caught.value)
    assert key not in str(caught.value)
    assert key not in repr(caught.value)
    assert key not in "".join(traceback.format_exception(caught.value))  # what CTXMGR_DEBUG=1 shows
    assert key not in caplog.text
    assert key not in repr(summarizer_for(kind, llm_server))


def test_every_failure_leaves_the_state_unchanged_and_logs(
    llm_server: LLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    failures = [
        Reply.error(429, retry_after=0),
        Reply.error(500),
        Reply.error(502),
        Reply.error(503),
        Reply.error(401),
        Reply.error(404),
        Reply.malformed(),
        Reply.hang(5),
    ]
    for kind in KINDS:
        for reply in failures:
            llm_server.script(reply)
            messages = [Message.text_message(f"m{i}") for i in range(6)]
            state = AgentState(context=list(messages), context_summary="before")
            # Only the hanging reply needs a short timeout; the others answer at once, and a
            # loaded machine can take longer than a tight timeout just to accept the connection.
            timeout = 0.3 if reply.delay else 5.0
            summarizer = summarizer_for(kind, llm_server, max_retries=0, timeout=timeout)
            caplog.clear()
            answered = llm_server.request_count
            with caplog.at_level(logging.WARNING, logger="ctxmgr"):
                SummaryContextManager("m", max_messages=2, keep_recent=1, summarizer=summarizer).trim_context(state)
            assert state.context == messages, (kind, reply)
            assert state.context_summary == "before"
            assert "Summarisation LLM call failed" in caplog.text, (kind, reply)
            # The server may read the hung request after the client gave up: wait for it, so
            # that its scripted reply is not left for the next request.
            deadline = time.monotonic() + 5
            while llm_server.request_count == answered and time.monotonic() < deadline:
                time.sleep(0.01)
            assert llm_server.request_count == answered + 1, (kind, reply)


def test_concurrent_calls_are_counted_in_flight(llm_server: LLMServer) -> None:
    llm_server.latency = 0.5  # long enough for all four to be waiting at once

    async def many() -> list[str]:
        summarizer = openai_summarizer(llm_server)
        return await asyncio.gather(
            *(summarizer.summarize(f"text {i}", instructions="i", max_tokens=5) for i in range(4))
        )

    assert asyncio.run(many()) == [DEFAULT_SUMMARY] * 4
    assert llm_server.max_in_flight == 4
    assert llm_server.in_flight == 0
    assert sorted(r.body["input"] for r in llm_server.requests) == [f"text {i}" for i in range(4)]


def test_responder_answers_per_request(llm_server: LLMServer) -> None:
    llm_server.responder = lambda request: Reply.ok(f"{len(request.input_text or '')} characters")
    assert run(openai_summarizer(llm_server), "abcd") == "4 characters"
    assert run(gemini_summarizer(llm_server), "abcdef") == "6 characters"


# -- retry policy ---------------------------------------------------------------------------


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "0.25"}) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse_retry_after({"retry-after": future}) or 0) <= 31


def test_retry_delay_is_exponential_jittered_and_capped() -> None:
    options = ProviderOptions(backoff=1.0, max_backoff=5.0)
    for retry, (low, high) in enumerate([(0.5, 1.0), (1.0, 2.0), (2.0, 4.0), (2.5, 5.0), (2.5, 5.0)]):
        assert low <= retry_delay(retry, None, options) <= high
    assert retry_delay(0, 3.0, options) == 3.0
    assert retry_delay(0, 60.0, options) == 5.0


# -- paced attempts ---------------------------------------------------------------------------


class _Time:
    """A clock that moves only when a waiter sleeps: to the end of the longest sleep so
    far, as concurrent sleeps end on one timeline. Sleeps are recorded."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        target = self.now + seconds
        await asyncio.sleep(0)
        self.now = max(self.now, target)


def _paced(time_: _Time) -> Pacer:
    return Pacer(time_.clock, time_.sleep)


def _held_together(
    pacer: Pacer, time_: _Time, count: int, look: Callable[[], Any] = lambda: None
) -> tuple[list[tuple[int, float]], Any]:
    """Start ``count`` paced attempts at once, each recording its index and the time it
    started, then waiting; once all have started, ``look()`` is taken and all are let
    go. Returns the starts, in the order they came, and what ``look`` saw."""
    started: list[tuple[int, float]] = []
    release = asyncio.Event()

    async def attempt(index: int) -> None:
        started.append((index, time_.now))
        await release.wait()

    async def crowd() -> Any:
        running = [asyncio.ensure_future(pacer.run(lambda i=i: attempt(i))) for i in range(count)]
        for _ in range(50 * count + 200):  # bounded: a pacer that never lets one start fails here
            if len(started) == count:
                break
            await asyncio.sleep(0)
        seen = look()
        release.set()
        await asyncio.gather(*running)
        return seen

    seen = asyncio.run(crowd())
    assert len(started) == count
    return started, seen


def test_attempts_started_together_start_a_gap_apart() -> None:
    """Before any attempt has finished, starts are Pacer.MAX_GAP apart: a burst of
    calls (answers that arrived together) does not open its connections at once."""
    time_ = _Time()
    started, _ = _held_together(_paced(time_), time_, 6)
    times = [at for _, at in started]
    assert [round(at - times[0], 6) for at in times] == [round(k * Pacer.MAX_GAP, 6) for k in range(6)]


def test_the_gap_is_a_quarter_of_a_typical_attempt_shared_by_those_waiting_or_running() -> None:
    time_ = _Time()
    pacer = _paced(time_)
    assert pacer.gap == Pacer.MAX_GAP  # nothing learnt yet

    async def taking(seconds: float) -> str:
        time_.now += seconds
        return "done"

    assert asyncio.run(pacer.run(lambda: taking(0.004))) == "done"
    assert pacer.gap == pytest.approx(0.001)  # 4 ms / 4, nothing else active

    # With four waiting or running, the gap is 4 ms shared four ways, then quartered.
    _, gap = _held_together(pacer, time_, 4, lambda: pacer.gap)
    assert gap == pytest.approx(0.004 / 16)

    # Slow attempts (a model's answer takes seconds): the gap stays at its cap.
    for _ in range(10):
        asyncio.run(pacer.run(lambda: taking(3.0)))
    assert pacer.gap == Pacer.MAX_GAP


def test_attempts_of_a_few_milliseconds_are_not_paced() -> None:
    """A gap shorter than Pacer.MIN_WAIT is not slept: a fast local server keeps its pace."""
    time_ = _Time()
    pacer = _paced(time_)

    async def quick() -> None:
        time_.now += 0.001

    async def many() -> None:
        await pacer.run(quick)  # learns: 1 ms an attempt
        time_.now += 0.01  # past the first turn's full gap
        time_.sleeps.clear()
        await asyncio.gather(*(pacer.run(quick) for _ in range(16)))

    asyncio.run(many())
    assert time_.sleeps == []


def test_many_waiters_queue_and_only_the_first_watches_the_clock() -> None:
    """Hundreds of attempts waiting at once (a high --concurrency) wait in order; the
    pacer is asked about once per attempt and turn, not once per waiter and turn."""
    time_ = _Time()
    asked = 0

    class Counting(Pacer):
        def _claim(self) -> float:
            nonlocal asked
            asked += 1
            return super()._claim()

    started, _ = _held_together(Counting(time_.clock, time_.sleep), time_, 300)
    assert [index for index, _ in started] == list(range(300))  # in the order they asked
    assert asked <= 3 * 300


def test_a_waiter_cancelled_leaves_no_hole() -> None:
    """Turns are claimed when they come: attempts cancelled while waiting do not push
    the next one back."""
    time_ = _Time()
    pacer = _paced(time_)

    async def scenario() -> float:
        release = asyncio.Event()
        first = asyncio.ensure_future(pacer.run(release.wait))
        await asyncio.sleep(0)
        waiters = [asyncio.ensure_future(pacer.run(release.wait)) for _ in range(10)]
        await asyncio.sleep(0)
        for waiter in waiters:
            waiter.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
        time_.sleeps.clear()
        began = time_.now
        await pacer.run(lambda: asyncio.sleep(0))
        release.set()
        await first
        return time_.now - began

    assert asyncio.run(scenario()) <= Pacer.MAX_GAP
    assert pacer._active == 0


def test_a_failed_attempt_frees_its_place_and_still_teaches_the_pacer() -> None:
    time_ = _Time()
    pacer = _paced(time_)

    async def failing() -> None:
        time_.now += 0.008
        raise ProviderError("HTTP 503 (server error)", provider="openai", retryable=True)

    with pytest.raises(ProviderError):
        asyncio.run(pacer.run(failing))
    assert pacer._active == 0
    assert pacer.gap == pytest.approx(0.002)  # 8 ms / 4

    async def cancelled() -> None:
        time_.now += 5.0
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(pacer.run(cancelled))
    assert pacer._active == 0
    assert pacer.gap == pytest.approx(0.002)  # a cancelled attempt teaches nothing


def test_a_pacer_travels_by_pickle_and_starts_afresh() -> None:
    """A summarizer shipped to a Ray worker is pickled with its pacer (and its lock)."""
    time_ = _Time()
    pacer = _paced(time_)

    async def quick() -> str:
        time_.now += 0.001
        return "done"

    assert asyncio.run(pacer.run(quick)) == "done"
    assert pacer.gap == pytest.approx(0.00025)  # it learnt something
    copy = pickle.loads(pickle.dumps(pacer))
    assert copy.gap == Pacer.MAX_GAP
    assert asyncio.run(copy.run(quick)) == "done"
    assert pickle.loads(pickle.dumps(Pacer())).gap == Pacer.MAX_GAP  # the default clock and sleep travel too


@pytest.mark.parametrize("kind", KINDS)
def test_every_attempt_of_a_provider_is_paced_retries_included(
    llm_server: LLMServer, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both SDKs' calls, through the real SDKs and the local server, go through the
    provider's pacer: one turn an attempt, a retry included."""
    turns: list[Pacer] = []
    real_run = Pacer.run

    async def counted(self: Pacer, attempt: Any) -> Any:
        turns.append(self)
        return await real_run(self, attempt)

    monkeypatch.setattr(Pacer, "run", counted)
    llm_server.script(Reply.error(503))
    summarizer = summarizer_for(kind, llm_server, max_retries=2)
    assert run(summarizer) == DEFAULT_SUMMARY
    assert asyncio.run(summarizer.summarize("again", instructions="i", max_tokens=5)) == DEFAULT_SUMMARY
    assert llm_server.request_count == 3
    assert len(turns) == 3
    assert len(set(map(id, turns))) == 1  # one pacer for the summarizer's calls


# -- offline --------------------------------------------------------------------------------


def test_offline_summarizer_is_deterministic_and_factual() -> None:
    messages = [
        Message.text_message("Book me a flight to Oslo on 3 May."),
        Message(
            role="assistant",
            content=[],
            tools_calls=[
                {"id": "c1", "type": "function", "function": {"name": "search_flights", "arguments": '{"to": "OSL"}'}}
            ],
        ),
        Message.tool_message([ToolResultBlock(call_id="c1", output="SK4411 at 09:05")]),
        Message.text_message("Flight SK4411 leaves at 09:05.", role="assistant"),
    ]
    manager = SummaryContextManager("offline", max_messages=1, keep_recent=0)
    text = manager.request_text(messages)
    first = run(OfflineSummarizer(), text, max_tokens=600)
    assert first == run(OfflineSummarizer(), text, max_tokens=600)
    assert "Oslo on 3 May" in first
    assert "search_flights" in first
    assert "OSL" in first
    assert "SK4411 at 09:05" in first
    assert "Flight SK4411 leaves at 09:05." in first
    done = subprocess.run(
        [sys.executable, "-c", "import asyncio, json, sys; from ctxmgr.providers._offline import OfflineSummarizer;"
         "print(json.dumps(asyncio.run(OfflineSummarizer().summarize(sys.argv[1], instructions='', max_tokens=600))))",
         text],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(done.stdout) == first  # the same in another process
