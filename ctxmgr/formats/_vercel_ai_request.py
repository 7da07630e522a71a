"""The settings of an AI SDK call beside its messages (``maxOutputTokens``,
``temperature``, ``topP``, ``topK``, ``stopSequences``, ``toolChoice``); its tools are
code, so tool definitions have no JSON place here."""

from __future__ import annotations

from typing import Any

from ctxmgr.formats._base import Losses
from ctxmgr.formats._request import RequestSettings, ToolChoice, ToolDefinition

__all__ = ["REQUEST", "VercelAIRequest"]


class VercelAIRequest:
    """The spelling of a ``generateText`` call's settings (its tools are code: no JSON)."""

    keys = frozenset({"tools", "toolChoice", "maxOutputTokens", "temperature", "topP", "topK", "stopSequences"})
    shared: frozenset[str] = frozenset()
    _NUMBERS = (("maxOutputTokens", "max_tokens"), ("temperature", "temperature"), ("topP", "top_p"), ("topK", "top_k"))

    def read(self, request: dict[str, Any], losses: Losses) -> tuple[RequestSettings, dict[str, Any]]:
        settings = RequestSettings()
        rest = dict(request)
        for key, name in self._NUMBERS:
            value = rest.pop(key, None)
            if isinstance(value, int | float) and not isinstance(value, bool):
                setattr(settings, name, int(value) if name in ("max_tokens", "top_k") else float(value))
        stop = rest.pop("stopSequences", None)
        if isinstance(stop, list) and all(isinstance(s, str) for s in stop):
            settings.stop = list(stop)
        settings.tool_choice = self.choice(rest.pop("toolChoice", None))
        return settings, rest

    def write(self, settings: RequestSettings, losses: Losses) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, name in self._NUMBERS:
            if getattr(settings, name) is not None:
                out[key] = getattr(settings, name)
        if settings.stop is not None:
            out["stopSequences"] = settings.stop
        choice = settings.tool_choice
        if choice is not None:
            out["toolChoice"] = {"type": "tool", "toolName": choice.name} if choice.mode == "tool" else choice.mode
            if choice.allowed:
                losses.add("tool choice among some tools")
        if settings.tools is not None:
            losses.add("tool definition (the AI SDK's tools are code)", len(settings.tools))
        for name in settings.filled():
            if name in ("parallel_tool_calls", "reasoning_effort"):
                losses.add(f"request setting '{name}'")
        return out

    def tools(self, value: Any) -> list[ToolDefinition] | None:
        return None

    def choice(self, value: Any) -> ToolChoice | None:
        if value in ("auto", "none", "required"):
            return ToolChoice(mode=value)
        if isinstance(value, dict) and value.get("type") == "tool" and isinstance(value.get("toolName"), str):
            return ToolChoice(mode="tool", name=value["toolName"])
        return None


REQUEST = VercelAIRequest()
