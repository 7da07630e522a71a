"""The Responses request's settings (sampling, tools, tool choice, reasoning), stored
responses included: read into and written from the shared
:class:`~ctxmgr.formats._request.RequestSettings`. The items are
:mod:`ctxmgr.formats._openai_responses`'s.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.formats._base import Losses
from ctxmgr.formats._openai_chat_request import OPENAI_SHARED, allowed_choice, openai_settings
from ctxmgr.formats._request import RequestSettings, ToolChoice, ToolDefinition, count, number, read_tools

__all__ = ["REQUEST", "ResponsesRequest"]


class ResponsesRequest:
    """The Responses request spelling, stored responses included (see
    :mod:`ctxmgr.formats._request`)."""

    keys = frozenset(
        {
            "input",
            "instructions",
            "model",
            "access_programs",
            "background",
            "background_options",
            "context_management",
            "conversation",
            "image",
            "moderation",
            "prompt_cache_options",
            "include",
            "max_output_tokens",
            "max_tool_calls",
            "metadata",
            "parallel_tool_calls",
            "previous_response_id",
            "prompt",
            "prompt_cache_key",
            "prompt_cache_retention",
            "reasoning",
            "safety_identifier",
            "service_tier",
            "store",
            "stream",
            "stream_options",
            "temperature",
            "text",
            "tool_choice",
            "tools",
            "top_logprobs",
            "top_p",
            "truncation",
            "user",
            # a stored response
            "id",
            "object",
            "created_at",
            "completed_at",
            "status",
            "error",
            "incomplete_details",
            "output",
            "output_text",
            "usage",
            "billing",
            "input_transformations",
            "prompt_cache_diagnostics",
            "tool_usage",
        }
    )
    shared = OPENAI_SHARED

    def read(self, request: dict[str, Any], losses: Losses) -> tuple[RequestSettings, dict[str, Any]]:
        rest = dict(request)
        settings = RequestSettings()
        if isinstance(rest.get("tools"), list):
            settings.tools = read_tools(rest.pop("tools"), [self], losses)
        if "tool_choice" in rest and (choice := self.choice(rest["tool_choice"])) is not None:
            settings.tool_choice = choice
            del rest["tool_choice"]
        if isinstance(rest.get("parallel_tool_calls"), bool):
            settings.parallel_tool_calls = rest.pop("parallel_tool_calls")
        if count(rest.get("max_output_tokens")) is not None:
            settings.max_tokens = rest.pop("max_output_tokens")
        for key in ("temperature", "top_p"):
            if number(rest.get(key)) is not None:
                setattr(settings, key, rest.pop(key))
        reasoning = rest.get("reasoning")
        if isinstance(reasoning, dict) and isinstance(reasoning.get("effort"), str):
            settings.reasoning_effort = reasoning["effort"]
            others = [k for k, v in reasoning.items() if k != "effort" and v is not None]
            for key in others:
                losses.add(f"request key 'reasoning.{key}'")
            del rest["reasoning"]
        return settings, rest

    def write(self, settings: RequestSettings, losses: Losses) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if settings.tools is not None:
            out["tools"] = [_function_tool(tool) for tool in settings.tools]
        out.update(openai_settings(settings, losses, chat=False))
        if settings.stop is not None:
            losses.add("stop sequences (the Responses API has none)")
        if settings.reasoning_effort is not None:
            out["reasoning"] = {"effort": settings.reasoning_effort}
        return out

    def tools(self, value: Any) -> list[ToolDefinition] | None:
        if not isinstance(value, dict) or value.get("type") != "function" or not isinstance(value.get("name"), str):
            return None
        parameters = value.get("parameters")
        description = value.get("description")
        return [
            ToolDefinition(
                name=value["name"],
                description=description if isinstance(description, str) else None,
                parameters=parameters if isinstance(parameters, dict) else None,
                strict=value.get("strict") is not False,  # strict unless told otherwise
            )
        ]

    def choice(self, value: Any) -> ToolChoice | None:
        if value in ("auto", "none", "required"):
            return ToolChoice(value)
        if isinstance(value, dict) and value.get("type") == "function" and isinstance(value.get("name"), str):
            return ToolChoice("tool", value["name"])
        if isinstance(value, dict) and value.get("type") == "allowed_tools":
            return allowed_choice(value.get("mode"), value.get("tools"), chat=False)
        return None


def _function_tool(tool: ToolDefinition) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description is not None:
        out["description"] = tool.description
    # Both are required keys; stated because a Responses function is strict by default.
    return {**out, "parameters": tool.parameters, "strict": tool.strict}


REQUEST = ResponsesRequest()
