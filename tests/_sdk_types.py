"""Check what ctxmgr writes against each provider SDK's own request types.

:func:`check_output` takes the parsed output of a conversion and validates it with the
types of ``openai``, ``anthropic``, ``google-genai`` or ``langchain-core`` (unknown keys
are errors: TypedDicts ignore them unless told otherwise). A dataset's columns are not
the SDK's business and are left out; everything else of the request is checked, with a
stand-in ``model`` (and Anthropic's required ``max_tokens``) where the file has none.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import ConfigDict, TypeAdapter

__all__ = ["check_output"]

_FORBID = ConfigDict(extra="forbid")


@cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    # A list: pydantic takes the extra="forbid" config for a list of TypedDicts, not for one.
    return TypeAdapter(list[kind], config=_FORBID)


def _check(kind: Any, value: Any) -> None:
    _adapter(kind).validate_python([value])


def _request(value: Any, fmt: str) -> dict[str, Any]:
    """The request keys of ``value`` (its dataset columns left out)."""
    from ctxmgr.formats import FORMATS

    keys = FORMATS[fmt].request.keys
    return {k: v for k, v in value.items() if k in keys}


def _openai_chat(value: Any) -> None:
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import CompletionCreateParams

    records = value if isinstance(value, list) else value.get("messages", [value])
    for record in records:
        _check(ChatCompletionMessageParam, record)
    if isinstance(value, dict) and "messages" in value:
        _check(CompletionCreateParams, {"model": "m", **_request(value, "openai-chat")})


def _openai_responses(value: Any) -> None:
    from openai.types.responses import ResponseInputItemParam
    from openai.types.responses.response_create_params import ResponseCreateParams

    items = value if isinstance(value, list) else value.get("input", [value])
    for item in items if isinstance(items, list) else ():
        _check(ResponseInputItemParam, item)
    if isinstance(value, dict) and "input" in value:
        _check(ResponseCreateParams, {"model": "m", **_request(value, "openai-responses")})


def _anthropic(value: Any) -> None:
    from anthropic.types import MessageParam
    from anthropic.types.message_create_params import MessageCreateParams

    records = value if isinstance(value, list) else value["messages"]
    for record in records:
        _check(MessageParam, record)
    if isinstance(value, dict):
        request = {"model": "m", "max_tokens": 1, **_request(value, "anthropic")}
        _check(MessageCreateParams, request)


_GEMINI_TYPES = {
    "systemInstruction": "Content",
    "toolConfig": "ToolConfig",
    "generationConfig": "GenerationConfig",
}


def _gemini(value: Any) -> None:
    from google.genai import types

    contents = value if isinstance(value, list) else value["contents"]
    for content in contents:
        types.Content.model_validate(content)
    if not isinstance(value, dict):
        return
    request = _request(value, "gemini")
    for key, name in _GEMINI_TYPES.items():
        if key in request:
            getattr(types, name).model_validate(request[key])
    for tool in request.get("tools", ()):
        types.Tool.model_validate(tool)


def _langchain(value: Any) -> None:
    from langchain_core.load import load
    from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict

    records = value if isinstance(value, list) else value["messages"]
    plain = [r for r in records if "lc" not in r]
    if plain:
        assert messages_to_dict(messages_from_dict(plain)) == plain
    for record in records:
        if "lc" in record:
            assert isinstance(load(record), BaseMessage)


_CHECKS = {
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "langchain": _langchain,
}


def check_output(fmt: str, value: Any) -> None:
    """Raise (a pydantic ValidationError, an AssertionError) unless ``fmt``'s SDK takes
    ``value``: a parsed document, or the list of a JSON Lines file's records. Native
    output is checked against 10xGraph itself (see ``tests/_reference_venv.py``)."""
    if fmt != "native":
        _CHECKS[fmt](value)
