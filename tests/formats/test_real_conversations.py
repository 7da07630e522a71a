"""Real conversations of every format (``tests/conversations/``, with their sources):
through native and back they are the same file; converted to every other format they
are what that format's SDK accepts, the same whether or not they went through native;
what a target cannot hold is named, and what it can hold arrives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _sdk_types import check_output

from ctxmgr import formats

CONVERSATIONS = Path(__file__).resolve().parents[1] / "conversations"
FILES = sorted(CONVERSATIONS.glob("*/*.json*"))
FORMATS = ["native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"]


def _values(data: bytes, path: Path) -> list[Any]:
    return [json.loads(line) for line in data.splitlines()] if path.suffix == ".jsonl" else [json.loads(data)]


def _conversations(path: Path) -> list[bytes]:
    """The file's conversations: the document, or each line of a dataset."""
    data = path.read_bytes()
    return data.splitlines() if path.suffix == ".jsonl" else [data]


def _load(data: bytes, fmt: str | None = None) -> formats.Conversation:
    return formats.load(data, source="conversation.json", fmt=fmt)


def test_there_are_real_files_of_every_format() -> None:
    assert {path.parent.name for path in FILES} == set(FORMATS)
    for path in FILES:
        for data in _conversations(path):
            assert _load(data).format == path.parent.name, path


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_real_file_through_native_and_back_is_the_same(path: Path) -> None:
    fmt = path.parent.name
    for data in _conversations(path):
        native = _load(formats.dump(_load(data, fmt), to="native"), "native")
        assert not [w for w in native.warnings if "does not match" in w]
        assert json.loads(formats.dump(native, to=fmt)) == json.loads(data)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_real_file_converts_to_what_every_sdk_takes(path: Path) -> None:
    fmt = path.parent.name
    for data in _conversations(path):
        via_native = formats.dump(_load(data, fmt), to="native")
        for target in FORMATS:
            if target == fmt:
                continue
            direct = _load(data, fmt)
            written = json.loads(formats.dump(direct, to=target))
            check_output(target, written)
            through = _load(via_native, "native")
            assert json.loads(formats.dump(through, to=target)) == written, target
            assert through.dropped == direct.dropped, target


def _convert(name: str, target: str) -> tuple[Any, formats.Conversation]:
    conversation = _load((CONVERSATIONS / name).read_bytes())
    return json.loads(formats.dump(conversation, to=target)), conversation


def test_tool_definitions_and_settings_reach_every_provider() -> None:
    source = json.loads((CONVERSATIONS / "anthropic/anthropic_tool_with_thinking.json").read_bytes())
    schema = source["tools"][0]["input_schema"]
    chat, _ = _convert("anthropic/anthropic_tool_with_thinking.json", "openai-chat")
    assert chat["tools"] == [
        {"type": "function", "function": {"name": "get_user_country", "description": "", "parameters": schema}}
    ]
    assert (chat["tool_choice"], chat["max_completion_tokens"], chat["model"]) == ("auto", 4096, "claude-sonnet-4-0")
    responses, _ = _convert("anthropic/anthropic_tool_with_thinking.json", "openai-responses")
    assert responses["tools"][0] == {
        "type": "function",
        "name": "get_user_country",
        "description": "",
        "parameters": schema,
        "strict": False,
    }
    assert responses["max_output_tokens"] == 4096
    gemini, lost = _convert("anthropic/anthropic_tool_with_thinking.json", "gemini")
    assert gemini["tools"] == [
        {"functionDeclarations": [{"name": "get_user_country", "description": "", "parametersJsonSchema": schema}]}
    ]
    assert gemini["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}
    assert gemini["generationConfig"] == {"maxOutputTokens": 4096}
    assert lost.dropped["request key 'thinking'"] == 1
    # Gemini's spelling back to Anthropic's: allowed functions, the cap, the system prompt.
    anthropic, lost = _convert("gemini/google_instructions_only_with_tool_calls.json", "anthropic")
    assert anthropic["tool_choice"] == {"type": "any"}
    assert lost.dropped["tool_choice restriction to some tools (Anthropic has none)"] == 1
    assert anthropic["system"]
    assert {tool["name"] for tool in anthropic["tools"]} == {"generate_topic", "final_result"}


def test_signatures_reach_the_targets_that_have_a_slot_for_them() -> None:
    # Anthropic's signed thinking: kept by LangChain (as ChatAnthropic keeps it), named elsewhere.
    langchain, lost = _convert("anthropic/anthropic_tool_with_thinking.json", "langchain")
    thinking = [
        p
        for m in langchain["messages"]
        for p in m["data"]["content"]
        if isinstance(p, dict) and p.get("type") == "thinking"
    ]
    assert thinking
    assert all(p["signature"] for p in thinking)
    assert not any("signature" in kind for kind in lost.dropped)
    _, lost = _convert("anthropic/anthropic_tool_with_thinking.json", "openai-chat")
    assert lost.dropped["content-part field 'signature'"] == 1  # the request's one thinking block
    # Gemini's call signatures: in LangChain's additional_kwargs, and back to Gemini from there.
    source = json.loads((CONVERSATIONS / "gemini/google_model_retry.json").read_bytes())
    signed = [p for c in source["contents"] for p in c["parts"] if "functionCall" in p and "thoughtSignature" in p]
    assert signed
    langchain, lost = _convert("gemini/google_model_retry.json", "langchain")
    again = json.loads(formats.dump(_load(json.dumps(langchain).encode(), "langchain"), to="gemini"))
    calls = [p for c in again["contents"] for p in c["parts"] if "functionCall" in p]
    assert [p["thoughtSignature"] for p in calls] == [p["thoughtSignature"] for p in signed]
    # LangChain's Responses reasoning item (in additional_kwargs) back to a Responses item.
    responses, _ = _convert("langchain/langgraph-approval-gpt5.json", "openai-responses")
    (reasoning,) = [item for item in responses["input"] if item.get("type") == "reasoning"]
    assert reasoning["id"].startswith("rs_")
    assert all(set(part) == {"type", "text"} for part in reasoning["summary"])


def test_what_has_no_place_is_named_by_kind() -> None:
    _, lost = _convert("anthropic/anthropic_web_search_tool.json", "gemini")
    assert lost.dropped["anthropic server_tool_use block"] >= 1
    assert lost.dropped["anthropic web_search_tool_result block"] >= 1
    assert lost.dropped["tool definition of type 'web_search_20250305'"] == 1
    _, lost = _convert("anthropic/anthropic_cache_real_api.json", "openai-responses")
    assert any("cache_control" in kind for kind in lost.dropped)
    _, lost = _convert("openai-responses/openai_responses_model_web_search_tool.json", "anthropic")
    assert lost.dropped["openai-responses web_search_call block"] >= 1
