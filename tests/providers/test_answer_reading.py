"""The OpenAI provider reads a plain answer's text from its JSON and gives every other
answer to the SDK: the same text, or the same error, as the SDK's own objects give.

Each answer is served through the SDK's HTTP client (a mock transport) twice: once read
as before (``responses.create``/``chat.completions.create``, the SDK's parsed objects),
once by :meth:`OpenAISummarizer._ask` (the client's ``post`` with the body written out,
the answer read raw); the two outcomes must be equal.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import openai
import pytest
from hypothesis import given, strategies as st

from ctxmgr.providers._openai import OpenAISummarizer, _plain_chat_text, _plain_responses_text

MISSING = object()


def _client(body: bytes, content_type: str = "application/json") -> openai.AsyncOpenAI:
    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=body, headers={"content-type": content_type})

    http_client = openai.DefaultAsyncHttpxClient(transport=httpx2.MockTransport(answer))
    return openai.AsyncOpenAI(api_key="k", base_url="http://answers.test/v1", max_retries=0, http_client=http_client)


async def _as_before(client: openai.AsyncOpenAI, style: str) -> str:
    """What the provider read before: the SDK's parsed answer."""
    if style == "responses":
        response = await client.responses.create(model="m", instructions="i", input="t", max_output_tokens=50)
        if response.status == "incomplete":
            details = getattr(response, "incomplete_details", None)
            raise RuntimeError(f"stopped: {getattr(details, 'reason', None) or 'unknown'}")
        return str(response.output_text or "")
    completion = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "t"}], max_tokens=50
    )
    if not completion.choices:
        return ""
    choice = completion.choices[0]
    if choice.finish_reason in ("length", "content_filter"):
        raise RuntimeError(f"stopped: {choice.finish_reason}")
    return str(choice.message.content or "")


def _outcome(awaitable: Any) -> tuple[str, str]:
    async def go() -> tuple[str, str]:
        try:
            return "text", await awaitable
        except Exception as error:
            # The provider's own "stopped" errors are worded differently from the stand-in
            # above; every other error must be the same type with the same message.
            message = str(error)
            if "cut off" in message or "stopped before finishing" in message or message.startswith("stopped: "):
                return "stopped", ""
            return type(error).__name__, message

    return asyncio.run(go())


def _compare(body: bytes, style: str, content_type: str = "application/json") -> tuple[str, str]:
    before = _outcome(_as_before(_client(body, content_type), style))
    summarizer = OpenAISummarizer("m", api_style=style)  # type: ignore[arg-type]
    now = _outcome(summarizer._ask(openai, _client(body, content_type), "t", "i", 50))
    assert now == before, body
    return now


def _drop_missing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_missing(v) for k, v in value.items() if v is not MISSING}
    if isinstance(value, list):
        return [_drop_missing(v) for v in value]
    return value


def _maybe(strategy: st.SearchStrategy[Any], *others: Any) -> st.SearchStrategy[Any]:
    return st.one_of(strategy, st.sampled_from([MISSING, None, *others]))


TEXTS = st.text(max_size=12)
PARTS = st.fixed_dictionaries(
    {
        "type": _maybe(st.sampled_from(["output_text", "refusal", "output_audio"]), 3),
        "text": _maybe(TEXTS, 7),
        "refusal": _maybe(TEXTS),
        "annotations": st.just([]),
    }
)
ITEMS = st.fixed_dictionaries(
    {
        "type": _maybe(st.sampled_from(["message", "reasoning", "function_call", "web_search_call"]), ["x"]),
        "id": st.just("msg_1"),
        "role": st.just("assistant"),
        "status": st.sampled_from(["completed", "incomplete"]),
        "content": _maybe(st.lists(PARTS, max_size=3), "text", {}),
        "summary": st.just([]),
    }
)
RESPONSES = st.fixed_dictionaries(
    {
        "id": st.just("resp_1"),
        "object": st.just("response"),
        "status": _maybe(st.sampled_from(["completed", "incomplete", "failed", "in_progress"]), 1),
        "incomplete_details": _maybe(st.fixed_dictionaries({"reason": _maybe(st.just("max_output_tokens"))})),
        "output": _maybe(st.lists(ITEMS, max_size=3), {}, "out"),
    }
).map(_drop_missing)
CHOICES = st.fixed_dictionaries(
    {
        "index": st.just(0),
        "finish_reason": _maybe(st.sampled_from(["stop", "length", "content_filter", "tool_calls"]), 5),
        "message": _maybe(
            st.fixed_dictionaries({"role": st.just("assistant"), "content": _maybe(TEXTS, 4, ["a"])}), "m"
        ),
    }
).map(_drop_missing)
CHATS = st.fixed_dictionaries(
    {
        "id": st.just("chatcmpl-1"),
        "object": st.just("chat.completion"),
        "choices": _maybe(st.lists(CHOICES, max_size=2), {}),
    }
).map(_drop_missing)


@given(RESPONSES)
def test_a_responses_answer_reads_as_the_sdk_reads_it(answer: dict[str, Any]) -> None:
    _compare(json.dumps(answer).encode(), "responses")


@given(CHATS)
def test_a_chat_answer_reads_as_the_sdk_reads_it(answer: dict[str, Any]) -> None:
    _compare(json.dumps(answer).encode(), "chat")


PLAIN_RESPONSE = {
    "status": "completed",
    "output": [
        {"type": "reasoning", "summary": []},
        {
            "type": "message",
            "content": [
                {"type": "output_text", "text": "The user ", "annotations": []},
                {"type": "refusal", "refusal": "no"},
                {"type": "output_text", "text": "asked.", "annotations": []},
            ],
        },
    ],
}


def test_plain_answers_are_read_without_the_sdk() -> None:
    assert _plain_responses_text(json.dumps(PLAIN_RESPONSE).encode()) == "The user asked."
    chat = {"choices": [{"finish_reason": "stop", "message": {"role": "assistant", "content": "Summary."}}]}
    assert _plain_chat_text(json.dumps(chat).encode()) == "Summary."
    assert _plain_chat_text(b'{"choices": []}') == ""
    assert _compare(json.dumps(PLAIN_RESPONSE).encode(), "responses") == ("text", "The user asked.")


@pytest.mark.parametrize(
    "body",
    [
        b"<html>not json",
        b"[1, 2]",
        b'{"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []}',
        b'{"status": "completed", "output": [{"type": "function_call", "name": "f"}]}',
        b'{"status": "completed", "output": [{"type": "message", "content": [{"type": "output_text"}]}]}',
        b'{"status": "completed", "output": [{"type": ["message"], "content": []}]}',
        b'{"status": "completed", "output": "\\ud800"}',
        b"\xef\xbb\xbf{}",
        b"null",
        b"7",
        b'"text"',
        b'[{"status": "completed"}, 1]',
        b"",
    ],
)
@pytest.mark.parametrize("content_type", ["application/json", "text/plain"])
def test_other_answers_go_to_the_sdk(body: bytes, content_type: str) -> None:
    assert _plain_responses_text(body) is None
    _compare(body, "responses", content_type)


@pytest.mark.parametrize(
    "body",
    [
        b'{"choices": [{"finish_reason": "length", "message": {"content": "cut"}}]}',
        b'{"choices": [{"message": {"content": "no reason"}}]}',
        b'{"choices": [{"finish_reason": "stop", "message": {"content": ["a"]}}]}',
        b'{"choices": [{"finish_reason": "stop", "message": {}}]}',
        b'{"choices": {}}',
        b"<html>not json",
        b"null",
        b"[1, 2]",
    ],
)
@pytest.mark.parametrize("content_type", ["application/json", "text/plain"])
def test_other_chat_answers_go_to_the_sdk(body: bytes, content_type: str) -> None:
    assert _plain_chat_text(body) is None
    _compare(body, "chat", content_type)


def test_the_request_is_the_one_create_sends() -> None:
    """The body (its keys in create's order) and the headers the server sees are those of
    ``responses.create`` and ``chat.completions.create``, but for the SDK's marker of a
    raw-response call."""
    seen: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json={"status": "completed", "output": [], "choices": []})

    def client() -> openai.AsyncOpenAI:
        http_client = openai.DefaultAsyncHttpxClient(transport=httpx2.MockTransport(answer))
        return openai.AsyncOpenAI(
            api_key="k", base_url="http://answers.test/v1", max_retries=0, http_client=http_client
        )

    async def both(style: str, model: str) -> None:
        if style == "responses":
            await client().responses.with_raw_response.create(
                model=model, instructions="i", input="t", max_output_tokens=50
            )
        else:
            cap = {"max_completion_tokens": 50} if model.startswith("o") else {"max_tokens": 50}
            await client().chat.completions.with_raw_response.create(
                model=model, messages=[{"role": "system", "content": "i"}, {"role": "user", "content": "t"}], **cap
            )
        summarizer = OpenAISummarizer(model, api_style=style)  # type: ignore[arg-type]
        await summarizer._ask(openai, client(), "t", "i", 50)

    for style, model in (("responses", "m"), ("chat", "m"), ("chat", "o3-mini")):
        seen.clear()
        asyncio.run(both(style, model))
        before, now = seen
        assert (now.method, now.url, now.content) == (before.method, before.url, before.content)
        ignored = {"x-stainless-raw-response"}
        assert {k: v for k, v in now.headers.items() if k not in ignored} == {
            k: v for k, v in before.headers.items() if k not in ignored
        }
        assert now.headers["authorization"] == "Bearer k"
