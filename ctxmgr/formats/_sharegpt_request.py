"""The ``tools`` column of a training record: a JSON string of function definitions.

LLaMA-Factory and FastChat keep a record's tools as a string holding a JSON list, each
entry the flat ``{"name", "description", "parameters"}`` (ShareGPT) or OpenAI's
``{"type": "function", "function": {...}}`` (the part-typed records). Converting, the
functions follow to the target's ``tools``; converting into ShareGPT, the target's
functions become that string, in the flat shape. A training record has no other request
setting: any other one is counted as dropped.
"""

from __future__ import annotations

from typing import Any

import orjson

from ctxmgr import _nesting
from ctxmgr.formats._base import Losses
from ctxmgr.formats._request import RequestSettings, ToolChoice, ToolDefinition

__all__ = ["REQUEST", "ShareGPTRequest"]


class ShareGPTRequest:
    """The spelling of a training record's request keys (``tools`` only)."""

    keys = frozenset({"tools"})
    shared: frozenset[str] = frozenset()

    def read(self, request: dict[str, Any], losses: Losses) -> tuple[RequestSettings, dict[str, Any]]:
        settings = RequestSettings()
        rest = dict(request)
        value = rest.pop("tools", None)
        if value is not None:
            entries = _entries(value)
            if entries is None:
                rest["tools"] = value  # not a list of functions: the caller counts it
            else:
                found: list[ToolDefinition] = []
                for entry in entries:
                    tools = self.tools(entry)
                    if tools is None:
                        losses.add("tool definition of an unknown shape")
                    else:
                        found.extend(tools)
                settings.tools = found
        return settings, rest

    def write(self, settings: RequestSettings, losses: Losses) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if settings.tools is not None:
            flat = [_flat(tool) for tool in settings.tools]
            out["tools"] = _nesting.dumps(flat, ensure_ascii=False)
        for name in settings.filled():
            if name != "tools":
                losses.add(f"request setting '{name}'")
        return out

    def tools(self, value: Any) -> list[ToolDefinition] | None:
        if not isinstance(value, dict):
            return None
        function = value.get("function") if value.get("type") == "function" else value
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return None
        if function is value and "type" in value:
            return None  # a typed entry of another spelling (a hosted tool)
        if function is value and "parameters" not in value and "description" not in value:
            return None
        description = function.get("description")
        parameters = function.get("parameters")
        return [
            ToolDefinition(
                name=function["name"],
                description=description if isinstance(description, str) else None,
                parameters=parameters if isinstance(parameters, dict) else None,
            )
        ]

    def choice(self, value: Any) -> ToolChoice | None:
        return None


def _entries(value: Any) -> list[Any] | None:
    """The entries of a ``tools`` value: a JSON string of a list (or the list itself)."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value) if value.strip() else []
        except orjson.JSONDecodeError:
            return None
    return value if isinstance(value, list) else None


def _flat(tool: ToolDefinition) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        out["description"] = tool.description
    out["parameters"] = tool.parameters if tool.parameters is not None else {"type": "object", "properties": {}}
    return out


REQUEST = ShareGPTRequest()
