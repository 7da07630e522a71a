"""The request settings of an MCP sampling request, in MCP's spelling (camelCase,
``inputSchema``): ``maxTokens``, ``temperature``, ``stopSequences``, ``tools`` and
``toolChoice`` convert; ``modelPreferences`` and ``includeContext`` have no equivalent
elsewhere."""

from __future__ import annotations

from typing import Any

from ctxmgr.formats._base import Losses
from ctxmgr.formats._request import RequestSettings, ToolChoice, ToolDefinition

__all__ = ["REQUEST", "MCPSamplingRequest"]


class MCPSamplingRequest:
    """The spelling of a sampling request's settings (camelCase, ``inputSchema``)."""

    keys = frozenset(
        {"tools", "toolChoice", "maxTokens", "temperature", "stopSequences", "modelPreferences", "includeContext"}
    )
    shared = frozenset({"metadata"})

    def read(self, request: dict[str, Any], losses: Losses) -> tuple[RequestSettings, dict[str, Any]]:
        settings = RequestSettings()
        rest = dict(request)
        tools = rest.pop("tools", None)
        if isinstance(tools, list):
            found = [t for entry in tools for t in self.tools(entry) or ()]
            if len(found) != len(tools):
                losses.add("tool definition of an unknown shape", len(tools) - len(found))
            settings.tools = found
        elif tools is not None:
            rest["tools"] = tools
        choice = self.choice(rest.pop("toolChoice", None))
        settings.tool_choice = choice
        cap = rest.pop("maxTokens", None)
        settings.max_tokens = cap if isinstance(cap, int) and not isinstance(cap, bool) else None
        temperature = rest.pop("temperature", None)
        if isinstance(temperature, int | float) and not isinstance(temperature, bool):
            settings.temperature = float(temperature)
        stop = rest.pop("stopSequences", None)
        if isinstance(stop, list) and all(isinstance(s, str) for s in stop):
            settings.stop = list(stop)
        return settings, rest

    def write(self, settings: RequestSettings, losses: Losses) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if settings.tools is not None:
            out["tools"] = [_tool(tool) for tool in settings.tools]
        if settings.tool_choice is not None:
            mode = settings.tool_choice.mode
            if mode == "tool" or settings.tool_choice.allowed:
                losses.add("tool choice naming tools")  # MCP's toolChoice has only a mode
                mode = "required"
            out["toolChoice"] = {"mode": mode}
        if settings.max_tokens is not None:
            out["maxTokens"] = settings.max_tokens
        if settings.temperature is not None:
            out["temperature"] = settings.temperature
        if settings.stop is not None:
            out["stopSequences"] = settings.stop
        for name in settings.filled():
            if name not in ("tools", "tool_choice", "max_tokens", "temperature", "stop"):
                losses.add(f"request setting '{name}'")
        return out

    def tools(self, value: Any) -> list[ToolDefinition] | None:
        if not isinstance(value, dict) or not isinstance(value.get("name"), str) or "inputSchema" not in value:
            return None
        description = value.get("description")
        schema = value.get("inputSchema")
        return [
            ToolDefinition(
                name=value["name"],
                description=description if isinstance(description, str) else None,
                parameters=schema if isinstance(schema, dict) else None,
            )
        ]

    def choice(self, value: Any) -> ToolChoice | None:
        mode = value.get("mode") if isinstance(value, dict) else None
        return ToolChoice(mode=mode) if mode in ("auto", "none", "required") else None


def _tool(tool: ToolDefinition) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        out["description"] = tool.description
    out["inputSchema"] = tool.parameters if tool.parameters is not None else {"type": "object", "properties": {}}
    return out


REQUEST = MCPSamplingRequest()
