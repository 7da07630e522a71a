"""The summarizer chain the library builds from one settings object (ctxmgr.providers._chain)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llm_server import DEFAULT_SUMMARY, LLMServer, Reply

from ctxmgr.cache import CachingSummarizer, find_cache
from ctxmgr.errors import ProviderError, UsageError
from ctxmgr.providers import (
    ProviderOptions,
    Summarizer,
    SummarizerChain,
    SummarizerSettings,
    build_summarizer,
    chain_of,
    get_summarizer,
    settings_of,
)
from ctxmgr.providers._base import RequireText
from ctxmgr.providers._gemini import GeminiSummarizer
from ctxmgr.providers._offline import OfflineSummarizer
from ctxmgr.providers._openai import OpenAISummarizer
from ctxmgr.state import AgentState, Message, SummaryContextManager

KEY = "sk-test-c0ffee1234567890abcdef"


def layers(summarizer: object) -> list[type]:
    """The classes of a chain, outermost first."""
    found: list[type] = []
    while summarizer is not None:
        found.append(type(summarizer))
        summarizer = getattr(summarizer, "inner", None)
    return found


def local(server: LLMServer, **settings: Any) -> SummarizerSettings:
    """Settings for gpt-4o-mini on the local server, with test-sized timeouts."""
    values: dict[str, Any] = {
        "model": "gpt-4o-mini",
        "base_url": server.openai_url,
        "api_key": KEY,
        "timeout": 5.0,
        "max_retries": 0,
    }
    values.update(settings)
    return SummarizerSettings(**values)


def ask(summarizer: Summarizer, text: str = "USER: hi") -> str:
    return asyncio.run(summarizer.summarize(text, instructions="Summarize.", max_tokens=50))


# -- the layers, as the settings say ---------------------------------------------------------


def test_every_layer_when_asked(tmp_path: Path) -> None:
    chain = build_summarizer(SummarizerSettings("gpt-4o-mini", cache_dir=tmp_path, concurrency=3))
    assert layers(chain) == [SummarizerChain, CachingSummarizer, RequireText, OpenAISummarizer]
    assert (chain.model, chain.api_style, chain.settings.concurrency) == ("gpt-4o-mini", "responses", 3)
    assert (chain.calls, chain.stopped) == (0, None)
    cache = chain.inner
    assert isinstance(cache, CachingSummarizer)
    assert cache.folder == tmp_path
    assert cache.max_size == 256_000_000  # neither the setting nor CTXMGR_CACHE_MAX_SIZE
    assert chain.name == "openai:gpt-4o-mini"


def test_no_cache_and_no_limit_unless_asked() -> None:
    chain = build_summarizer(SummarizerSettings("gemini-2.0-flash"))
    assert layers(chain) == [SummarizerChain, RequireText, GeminiSummarizer]


def test_the_offline_digest_is_neither_cached_nor_required_to_answer(tmp_path: Path) -> None:
    chain = build_summarizer(SummarizerSettings("offline", cache_dir=tmp_path, concurrency=2))
    assert layers(chain) == [SummarizerChain, OfflineSummarizer]
    assert ask(chain, "") == ""  # nothing to say is no summary, not a failure


def test_a_check_sends_nothing_but_still_checks_the_model(tmp_path: Path) -> None:
    chain = build_summarizer(SummarizerSettings("gpt-4o-mini", cache_dir=tmp_path, concurrency=2, check=True))
    assert layers(chain) == [SummarizerChain, OfflineSummarizer]
    found = settings_of(chain)
    assert found is not None
    assert found.model == "gpt-4o-mini"  # what the run is about, though the digest answers
    with pytest.raises(UsageError, match="Anthropic model"):
        build_summarizer(SummarizerSettings("claude-3-5-sonnet", check=True))


def test_the_cache_cap_is_read_only_when_there_is_a_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_summarizer(SummarizerSettings("gpt-4o-mini", cache_max_size="lots"))  # no cache: not read
    build_summarizer(SummarizerSettings("offline", cache_dir=tmp_path, cache_max_size="lots"))  # nothing cached
    with pytest.raises(UsageError, match="'lots' is not a size"):
        build_summarizer(SummarizerSettings("gpt-4o-mini", cache_dir=tmp_path, cache_max_size="lots"))
    sized = find_cache(build_summarizer(SummarizerSettings("gpt-4o-mini", cache_dir=tmp_path, cache_max_size="1MB")))
    assert isinstance(sized, CachingSummarizer)
    assert sized.max_size == 1_000_000
    exact = find_cache(build_summarizer(SummarizerSettings("gpt-4o-mini", cache_dir=tmp_path, cache_max_size=12345)))
    assert isinstance(exact, CachingSummarizer)
    assert exact.max_size == 12345
    monkeypatch.setenv("CTXMGR_CACHE_MAX_SIZE", "2MB")
    from_environment = find_cache(build_summarizer(SummarizerSettings("gpt-4o-mini", cache_dir=tmp_path)))
    assert isinstance(from_environment, CachingSummarizer)
    assert from_environment.max_size == 2_000_000


def test_settings_are_checked() -> None:
    with pytest.raises(UsageError, match="api_style"):
        SummarizerSettings("gpt-4o-mini", api_style="soap")  # type: ignore[arg-type]
    for bad in (0, -1, True, 1.5):
        with pytest.raises(UsageError, match="concurrency"):
            SummarizerSettings("gpt-4o-mini", concurrency=bad)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="unknown provider"):
        build_summarizer(SummarizerSettings("gpt-4o-mini", provider="anthropic"))
    with pytest.raises(UsageError, match="base URL"):
        build_summarizer(SummarizerSettings("gpt-4o-mini", base_url="localhost:11434/v1"))
    with pytest.raises(UsageError, match="timeout"):
        build_summarizer(SummarizerSettings("gpt-4o-mini", timeout=0))
    assert KEY not in repr(SummarizerSettings("gpt-4o-mini", api_key=KEY))


def test_a_password_in_the_base_url_is_never_quoted() -> None:
    from ctxmgr._redact import scrub

    build_summarizer(SummarizerSettings("gpt-4o-mini", base_url="https://user:hunter2-chain@proxy.example/v1"))
    assert "hunter2-chain" not in scrub("failed at https://user:hunter2-chain@proxy.example/v1")


def test_building_the_chain_imports_no_sdk_and_reads_no_key(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from ctxmgr.providers import SummarizerSettings, build_summarizer\n"
        "from ctxmgr.state import AgentState, Message, SummaryContextManager\n"
        "for m in ('gpt-4o-mini', 'gemini-2.0-flash', 'offline'):\n"
        f"    chain = build_summarizer(SummarizerSettings(m, cache_dir=Path({str(tmp_path)!r}), concurrency=2))\n"
        "    SummaryContextManager(summarizer=chain).trim_context(AgentState(context=[Message.text_message('hi')]))\n"
        "print(sorted(n for n in ('openai', 'google.genai') if n in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"  # and no MissingKeyError although no key is set


# -- what the layers do ------------------------------------------------------------------------


def test_an_empty_answer_is_refused_for_a_real_model(llm_server: LLMServer) -> None:
    llm_server.script(Reply.empty())
    with pytest.raises(ProviderError, match="answered with no text"):
        ask(build_summarizer(local(llm_server)))
    # The provider's own summarizer takes it as "no summary", as the reference's managers do.
    llm_server.script(Reply.empty())
    options = ProviderOptions(base_url=llm_server.openai_url, api_key=KEY, timeout=5.0, max_retries=0)
    assert ask(get_summarizer("gpt-4o-mini", options=options)) == ""


def test_the_cache_answers_a_request_made_before(llm_server: LLMServer, tmp_path: Path) -> None:
    first = build_summarizer(local(llm_server, cache_dir=tmp_path))
    assert ask(first) == DEFAULT_SUMMARY
    again = build_summarizer(local(llm_server, cache_dir=tmp_path))
    assert ask(again) == DEFAULT_SUMMARY
    assert llm_server.request_count == 1
    cache = find_cache(again)
    assert isinstance(cache, CachingSummarizer)
    assert (cache.hits, cache.misses) == (1, 0)
    # Another API style is another answer: the key covers it.
    assert ask(build_summarizer(local(llm_server, cache_dir=tmp_path, api_style="chat"))) == DEFAULT_SUMMARY
    assert llm_server.request_count == 2
    # An empty answer is a failure, and is not cached.
    llm_server.script(Reply.empty())
    with pytest.raises(ProviderError):
        ask(build_summarizer(local(llm_server, cache_dir=tmp_path)), "USER: other")
    assert ask(build_summarizer(local(llm_server, cache_dir=tmp_path)), "USER: other") == DEFAULT_SUMMARY
    assert llm_server.request_count == 4


def test_the_limit_caps_calls_in_flight(llm_server: LLMServer) -> None:
    llm_server.latency = 0.3  # long enough for the calls to queue
    chain = build_summarizer(local(llm_server, concurrency=2))

    async def many() -> list[str]:
        return await asyncio.gather(*(chain.summarize(f"USER: {i}", instructions="i", max_tokens=5) for i in range(5)))

    assert asyncio.run(many()) == [DEFAULT_SUMMARY] * 5
    assert llm_server.max_in_flight == 2


def test_without_a_limit_every_call_goes_at_once(llm_server: LLMServer) -> None:
    llm_server.latency = 0.3
    chain = build_summarizer(local(llm_server))

    async def many() -> list[str]:
        return await asyncio.gather(*(chain.summarize(f"USER: {i}", instructions="i", max_tokens=5) for i in range(4)))

    assert asyncio.run(many()) == [DEFAULT_SUMMARY] * 4
    assert llm_server.max_in_flight == 4


# -- the manager takes the model and API style from the chain ----------------------------------


def test_a_manager_given_the_chain_takes_its_model_and_api_style(llm_server: LLMServer) -> None:
    settings = local(llm_server, model="openai/gpt-4o-mini", api_style="chat", concurrency=2)
    chain = build_summarizer(settings)
    manager: SummaryContextManager[AgentState] = SummaryContextManager(summarizer=chain, max_messages=2, keep_recent=1)
    assert (manager.model, manager.api_style, manager.summarizer) == ("openai/gpt-4o-mini", "chat", chain)
    assert manager._provider == "openai"
    state = AgentState(context=[Message.text_message(f"message {i}") for i in range(4)])
    manager.trim_context(state)
    assert state.context_summary == DEFAULT_SUMMARY
    assert llm_server.last.kind == "chat"
    # What is passed wins, as before.
    explicit: SummaryContextManager[AgentState] = SummaryContextManager(
        "my-name", summarizer=chain, api_style="responses"
    )
    assert (explicit.model, explicit.api_style) == ("my-name", "responses")


def test_a_manager_builds_the_chain_from_settings(tmp_path: Path) -> None:
    settings = SummarizerSettings("gpt-4o-mini", api_style="chat", cache_dir=tmp_path, concurrency=4)
    manager: SummaryContextManager[AgentState] = SummaryContextManager(settings=settings, token_budget=6000)
    assert (manager.model, manager.api_style) == ("gpt-4o-mini", "chat")
    assert layers(manager.summarizer)[:2] == [SummarizerChain, CachingSummarizer]
    assert chain_of(manager) is manager.summarizer
    with pytest.raises(UsageError, match="not both"):
        SummaryContextManager(settings=settings, summarizer=build_summarizer(settings))


def test_a_manager_given_another_summarizer_takes_the_model_from_its_name() -> None:
    manager: SummaryContextManager[AgentState] = SummaryContextManager(summarizer=OfflineSummarizer())
    assert (manager.model, manager.api_style) == ("offline", "responses")
    wrapped: SummaryContextManager[AgentState] = SummaryContextManager(
        summarizer=get_summarizer("google/gemini-2.0-flash")
    )
    assert wrapped.model == "gemini-2.0-flash"
    with pytest.raises(UsageError, match="needs a model"):
        SummaryContextManager()
    # The reference's call still works as it did.
    reference: SummaryContextManager[AgentState] = SummaryContextManager("gpt-4o-mini", max_messages=4)
    assert (reference.model, reference.api_style, reference._provider) == ("gpt-4o-mini", "responses", "openai")
