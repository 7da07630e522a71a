"""The input budget of a server given by a base URL: asked once per run where the server
says its window (vLLM, llama.cpp, Ollama), the known families' share of it; else the
conservative default, naming --max-input-tokens."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_server import LLMServer

from ctxmgr.providers import _budgets
from ctxmgr.providers._base import ProviderOptions
from ctxmgr.providers._openai import OpenAISummarizer


@pytest.fixture(autouse=True)
def _fresh_run() -> Iterator[None]:
    _budgets._WINDOWS.clear()  # each test is a run of its own
    yield
    _budgets._WINDOWS.clear()


def _limit(server: LLMServer, model: str = "qwen2.5-coder") -> tuple[int, str]:
    summarizer = OpenAISummarizer(model, ProviderOptions(base_url=server.openai_url), api_style="chat")
    return summarizer.input_limit()


def _asked(server: LLMServer) -> list[str]:
    return [r.path for r in server.requests if r.path in ("/v1/models", "/props", "/api/show")]


def test_vllm_max_model_len(llm_server: LLMServer) -> None:
    llm_server.info["/v1/models"] = {
        "data": [{"id": "other", "max_model_len": 8192}, {"id": "qwen2.5-coder", "max_model_len": 32768}]
    }
    tokens, why = _limit(llm_server)
    assert tokens == int(32768 * 0.6)
    assert "32,768-token window" in why
    assert "vLLM" in why
    assert _limit(llm_server)[0] == tokens
    assert _asked(llm_server) == ["/v1/models"]  # once per run


def test_llama_cpp_props(llm_server: LLMServer) -> None:
    llm_server.info["/props"] = {"default_generation_settings": {"n_ctx": 16384}}
    tokens, why = _limit(llm_server)
    assert tokens == int(16384 * 0.6)
    assert "llama.cpp" in why


def test_ollama_num_ctx_and_its_default(llm_server: LLMServer) -> None:
    llm_server.info["/api/show"] = {"parameters": 'stop "<|im_end|>"\nnum_ctx 32768\ntemperature 0.7'}
    tokens, why = _limit(llm_server)
    assert tokens == int(32768 * 0.6)
    assert "Ollama" in why
    assert llm_server.requests[-1].body == {"model": "qwen2.5-coder"}
    _budgets._WINDOWS.clear()
    llm_server.info["/api/show"] = {"parameters": "temperature 0.7", "model_info": {"qwen2.context_length": 131072}}
    tokens, why = _limit(llm_server)
    assert tokens == int(4096 * 0.6)  # not the trained length: Ollama's default window
    assert "default" in why


@pytest.mark.parametrize("said", [None, {"data": "nonsense"}, {"data": [{"id": "qwen2.5-coder", "max_model_len": -1}]}])
def test_a_server_that_does_not_say_gets_the_default(llm_server: LLMServer, said: object) -> None:
    if said is not None:
        llm_server.info["/v1/models"] = said
    tokens, why = _limit(llm_server)
    assert tokens == _budgets.CONSERVATIVE_INPUT_TOKENS
    assert "did not say its window" in why
    assert sorted(_asked(llm_server)) == ["/api/show", "/props", "/v1/models"]


def test_nothing_is_asked_for_a_known_family(llm_server: LLMServer) -> None:
    llm_server.info["/v1/models"] = {"data": [{"id": "gpt-4o-mini", "max_model_len": 65536}]}
    tokens, _ = _limit(llm_server, "gpt-4o-mini")
    assert tokens == _budgets.CONSERVATIVE_INPUT_TOKENS  # a proxy's budget, as before
    assert _asked(llm_server) == []


def _plan(server: LLMServer, *more: str) -> dict[str, object]:
    import orjson
    from typer.testing import CliRunner

    from ctxmgr.cli import app

    sample = "samples/support-chat.json"
    args = ["summarize", "--dry-run", "--json", "--model", "qwen2.5-coder", "--base-url", server.openai_url]
    done = CliRunner().invoke(app, [*args, *more, sample])
    assert done.exit_code == 0, done.stderr
    report: dict[str, object] = orjson.loads(done.stdout)
    return report


def test_the_cli_plans_with_the_servers_window(llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(__import__("pathlib").Path(__file__).resolve().parents[2])
    llm_server.info["/v1/models"] = {"data": [{"id": "qwen2.5-coder", "max_model_len": 32768}]}
    assert _plan(llm_server)["input_limit"] == int(32768 * 0.6)
    assert _asked(llm_server) == ["/v1/models"]
    _budgets._WINDOWS.clear()
    assert _plan(llm_server, "--max-input-tokens", "5000")["input_limit"] == 5000
    assert _asked(llm_server) == ["/v1/models"]  # not asked again: --max-input-tokens says it


def test_a_run_split_for_a_silent_server_says_so_once_naming_the_flag(llm_server: LLMServer, tmp_path: object) -> None:
    from pathlib import Path

    from typer.testing import CliRunner

    from ctxmgr.cli import app

    sample = Path(__file__).resolve().parents[1] / "data" / "tau-airline-sample.jsonl"
    out = Path(str(tmp_path)) / "out.jsonl"
    args = ["summarize", "--model", "qwen2.5-coder", "--api-style", "chat", "--base-url", llm_server.openai_url]
    done = CliRunner().invoke(app, [*args, "--no-cache", "--max-messages", "4", str(sample), "-o", str(out)])
    assert done.exit_code == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "did not say its window" in line]
    assert len(said) == 1
    assert "--max-input-tokens changes it" in said[0]
    assert _asked(llm_server) == ["/v1/models", "/props", "/api/show"]  # once for the run
