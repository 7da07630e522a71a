"""The Messages API request's settings (sampling, tools, tool choice, cap, stop
sequences): read into and written from the shared
:class:`~ctxmgr.formats._request.RequestSettings`. The messages are
:mod:`ctxmgr.formats._anthropic`'s.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.formats._base import Losses
from ctxmgr.formats._request import RequestSettings, ToolChoice, ToolDefinition, count, number, read_tools, stop_list

__all__ = ["REQUEST", "AnthropicRequest"]

_TOOL_KEYS = frozenset({"name", "description", "input_schema", "strict", "type"})
"""Keys of a custom tool definition that other formats have an equivalent for."""


class AnthropicRequest:
    """The Messages API request spelling (see :mod:`ctxmgr.formats._request`)."""

    keys = frozenset(
        {
            "messages",
            "system",
            "model",
            "max_tokens",
            "metadata",
            "service_tier",
            "stop_sequences",
            "stream",
            "temperature",
            "thinking",
            "tool_choice",
            "tools",
            "top_k",
            "top_p",
            "container",
            "context_management",
            "mcp_servers",
            "output_config",
            "output_format",
            "inference_geo",
            "betas",
            "cache_control",
            "diagnostics",
            "speed",
            "user_profile_id",
            "workspace_id",
        }
    )
    shared = frozenset({"model", "stream"})

    def read(self, request: dict[str, Any], losses: Losses) -> tuple[RequestSettings, dict[str, Any]]:
        rest = dict(request)
        settings = RequestSettings()
        if isinstance(rest.get("tools"), list):
            settings.tools = read_tools(rest.pop("tools"), [self], losses)
            for tool in request["tools"]:
                if self.tools(tool) is not None:
                    for key in tool.keys() - _TOOL_KEYS:
                        losses.add(f"tool definition field '{key}'")
        choice = rest.get("tool_choice")
        if self.choice(choice) is not None:
            settings.tool_choice = self.choice(rest.pop("tool_choice"))
            if isinstance(choice, dict) and isinstance(choice.get("disable_parallel_tool_use"), bool):
                settings.parallel_tool_calls = not choice["disable_parallel_tool_use"]
        if count(rest.get("max_tokens")) is not None:
            settings.max_tokens = rest.pop("max_tokens")
        for key in ("temperature", "top_p", "top_k"):
            if number(rest.get(key)) is not None:
                setattr(settings, key, rest.pop(key))
        if stop_list(rest.get("stop_sequences")) is not None:
            settings.stop = stop_list(rest.pop("stop_sequences"))
        return settings, rest

    def write(self, settings: RequestSettings, losses: Losses) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if settings.max_tokens is not None:
            out["max_tokens"] = settings.max_tokens
        if settings.tools is not None:
            out["tools"] = [_tool_param(tool) for tool in settings.tools]
        choice: dict[str, Any] | None = None
        if settings.tool_choice is not None:
            mode = {"required": "any"}.get(settings.tool_choice.mode, settings.tool_choice.mode)
            choice = {"type": mode, **({"name": settings.tool_choice.name} if mode == "tool" else {})}
            if settings.tool_choice.allowed is not None:
                losses.add("tool_choice restriction to some tools (Anthropic has none)")
        if settings.parallel_tool_calls is False:
            choice = choice or {"type": "auto"}
            if choice["type"] != "none":  # with no tool use at all, there is nothing to serialise
                choice["disable_parallel_tool_use"] = True
        if choice is not None:
            out["tool_choice"] = choice
        for key in ("temperature", "top_p", "top_k"):
            if getattr(settings, key) is not None:
                # Older files have them; the Messages API of the current SDK takes none.
                losses.add(f"request setting {key} (the Anthropic API has none)")
        if settings.stop is not None:
            out["stop_sequences"] = settings.stop
        if settings.reasoning_effort is not None:
            losses.add("request setting reasoning effort (Anthropic budgets thinking in tokens)")
        return out

    def tools(self, value: Any) -> list[ToolDefinition] | None:
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("name"), str)
            or not isinstance(value.get("input_schema"), dict)
            or value.get("type", "custom") not in ("custom", None)
        ):
            return None
        description = value.get("description")
        return [
            ToolDefinition(
                name=value["name"],
                description=description if isinstance(description, str) else None,
                parameters=value["input_schema"],
                strict=value.get("strict") is True,
            )
        ]

    def choice(self, value: Any) -> ToolChoice | None:
        kind = value.get("type") if isinstance(value, dict) and "function" not in value else None
        if kind in ("auto", "none"):
            return ToolChoice(kind)
        if kind == "any":
            return ToolChoice("required")
        if kind == "tool" and isinstance(value.get("name"), str):
            return ToolChoice("tool", value["name"])
        return None


def _tool_param(tool: ToolDefinition) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        out["description"] = tool.description
    out["input_schema"] = tool.parameters if tool.parameters is not None else {"type": "object", "properties": {}}
    if tool.strict:
        out["strict"] = True
    return out


REQUEST = AnthropicRequest()
