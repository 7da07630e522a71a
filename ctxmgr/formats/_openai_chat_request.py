"""The Chat Completions request's settings (sampling, tools, tool choice, stop): read into
and written from the shared :class:`~ctxmgr.formats._request.RequestSettings`, with the
OpenAI spellings the Responses API shares. The messages are
:mod:`ctxmgr.formats._openai_chat`'s.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.formats._base import Losses
from ctxmgr.formats._request import (
    RequestSettings,
    ToolChoice,
    ToolDefinition,
    count,
    number,
    read_tools,
    stop_list,
)

__all__ = ["OPENAI_SHARED", "REQUEST", "ChatRequest", "allowed_choice", "openai_choice", "openai_settings"]

OPENAI_SHARED = frozenset(
    {
        "model",
        "stream",
        "user",
        "store",
        "metadata",
        "service_tier",
        "top_logprobs",
        "prompt_cache_key",
        "prompt_cache_options",
        "prompt_cache_retention",
        "safety_identifier",
        "moderation",
    }
)
"""Keys the two OpenAI APIs share, name and meaning (``model`` and ``stream`` with others)."""


class ChatRequest:
    """The Chat Completions request spelling (see :mod:`ctxmgr.formats._request`)."""

    keys = frozenset(
        {
            "messages",
            "model",
            "audio",
            "frequency_penalty",
            "function_call",
            "functions",
            "logit_bias",
            "logprobs",
            "max_completion_tokens",
            "max_tokens",
            "metadata",
            "modalities",
            "moderation",
            "n",
            "parallel_tool_calls",
            "prediction",
            "presence_penalty",
            "prompt_cache_key",
            "prompt_cache_options",
            "prompt_cache_retention",
            "reasoning_effort",
            "response_format",
            "safety_identifier",
            "seed",
            "service_tier",
            "stop",
            "store",
            "stream",
            "stream_options",
            "temperature",
            "tool_choice",
            "tools",
            "top_logprobs",
            "top_p",
            "user",
            "verbosity",
            "web_search_options",
        }
    )
    shared = OPENAI_SHARED

    def read(self, request: dict[str, Any], losses: Losses) -> tuple[RequestSettings, dict[str, Any]]:
        rest = dict(request)
        settings = RequestSettings()
        self._read_tool_settings(rest, settings, losses)
        for key in ("max_completion_tokens", "max_tokens"):
            cap = count(rest.get(key))
            if cap is not None:
                settings.max_tokens = settings.max_tokens or cap
                del rest[key]
        for key in ("temperature", "top_p"):
            if number(rest.get(key)) is not None:
                setattr(settings, key, rest.pop(key))
        if stop_list(rest.get("stop")) is not None:
            settings.stop = stop_list(rest.pop("stop"))
        if isinstance(rest.get("reasoning_effort"), str):
            settings.reasoning_effort = rest.pop("reasoning_effort")
        return settings, rest

    def _read_tool_settings(self, rest: dict[str, Any], settings: RequestSettings, losses: Losses) -> None:
        """Moves the tools and how they are chosen from ``rest`` into ``settings``, in either spelling."""
        if isinstance(rest.get("tools"), list):
            settings.tools = read_tools(rest.pop("tools"), [self], losses)
        if isinstance(rest.get("functions"), list):  # the legacy spelling of function tools
            legacy = [_legacy_function(f) for f in rest.pop("functions")]
            settings.tools = (settings.tools or []) + [t for t in legacy if t is not None]
            if None in legacy:
                losses.add("tool definition of an unknown shape", legacy.count(None))
        for key in ("tool_choice", "function_call"):
            if key in rest and settings.tool_choice is None:
                settings.tool_choice = self.choice(rest[key]) or _legacy_choice(rest[key])
                if settings.tool_choice is not None:
                    del rest[key]
        if isinstance(rest.get("parallel_tool_calls"), bool):
            settings.parallel_tool_calls = rest.pop("parallel_tool_calls")

    def write(self, settings: RequestSettings, losses: Losses) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if settings.tools is not None:
            out["tools"] = [_chat_tool(tool) for tool in settings.tools]
        out.update(openai_settings(settings, losses, chat=True))
        if settings.stop is not None:
            out["stop"] = settings.stop
        if settings.reasoning_effort is not None:
            out["reasoning_effort"] = settings.reasoning_effort
        return out

    def tools(self, value: Any) -> list[ToolDefinition] | None:
        function = value.get("function") if isinstance(value, dict) and value.get("type") == "function" else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return None
        parameters = function.get("parameters")
        return [
            ToolDefinition(
                name=function["name"],
                description=function.get("description") if isinstance(function.get("description"), str) else None,
                parameters=parameters if isinstance(parameters, dict) else None,
                strict=function.get("strict") is True,
            )
        ]

    def choice(self, value: Any) -> ToolChoice | None:
        if value in ("auto", "none", "required"):
            return ToolChoice(value)
        function = value.get("function") if isinstance(value, dict) and value.get("type") == "function" else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return ToolChoice("tool", function["name"])
        allowed = value.get("allowed_tools") if isinstance(value, dict) else None
        if isinstance(allowed, dict) and value.get("type") == "allowed_tools":
            return allowed_choice(allowed.get("mode"), allowed.get("tools"), chat=True)
        return None


def allowed_choice(mode: Any, tools: Any, *, chat: bool) -> ToolChoice | None:
    """An ``allowed_tools`` choice naming only functions (Chat nests each under ``function``)."""
    if mode not in ("auto", "required") or not isinstance(tools, list):
        return None
    names = []
    for tool in tools:
        inner = tool.get("function") if chat and isinstance(tool, dict) else tool
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(inner, dict):
            return None
        if not isinstance(inner.get("name"), str):
            return None
        names.append(inner["name"])
    return ToolChoice(mode, allowed=names)


def openai_settings(settings: RequestSettings, losses: Losses, *, chat: bool) -> dict[str, Any]:
    """The request settings both OpenAI APIs spell alike (Chat: ``chat``), but for the
    tools, stop sequences and reasoning effort, which each writer adds in its own way."""
    out: dict[str, Any] = {}
    if settings.tool_choice is not None:
        out["tool_choice"] = openai_choice(settings.tool_choice, chat=chat)
    if settings.parallel_tool_calls is not None:
        out["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.max_tokens is not None:
        out["max_completion_tokens" if chat else "max_output_tokens"] = settings.max_tokens
    for key in ("temperature", "top_p"):
        if getattr(settings, key) is not None:
            out[key] = getattr(settings, key)
    if settings.top_k is not None:
        losses.add("request setting top_k")
    return out


def openai_choice(choice: ToolChoice, *, chat: bool) -> Any:
    """``tool_choice`` for the OpenAI APIs (Chat nests a name under ``function``)."""

    def function(name: str | None) -> dict[str, Any]:
        return {"type": "function", "function": {"name": name}} if chat else {"type": "function", "name": name}

    if choice.mode == "tool":
        return function(choice.name)
    if choice.allowed is not None and choice.mode in ("auto", "required"):
        allowed = {"mode": choice.mode, "tools": [function(name) for name in choice.allowed]}
        return {"type": "allowed_tools", "allowed_tools": allowed} if chat else {"type": "allowed_tools", **allowed}
    return choice.mode


def _chat_tool(tool: ToolDefinition) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    if tool.parameters is not None:
        function["parameters"] = tool.parameters
    if tool.strict:
        function["strict"] = True  # Chat's default is not strict
    return {"type": "function", "function": function}


def _legacy_function(value: Any) -> ToolDefinition | None:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    parameters = value.get("parameters")
    description = value.get("description")
    return ToolDefinition(
        name=value["name"],
        description=description if isinstance(description, str) else None,
        parameters=parameters if isinstance(parameters, dict) else None,
    )


def _legacy_choice(value: Any) -> ToolChoice | None:
    """The legacy ``function_call``: ``"auto"``, ``"none"`` or ``{"name": ...}``."""
    if value in ("auto", "none"):
        return ToolChoice(value)
    if isinstance(value, dict) and isinstance(value.get("name"), str) and len(value) == 1:
        return ToolChoice("tool", value["name"])
    return None


REQUEST = ChatRequest()
