"""The Gemini request's settings (``generationConfig``, tools, ``toolConfig``): read into
and written from the shared :class:`~ctxmgr.formats._request.RequestSettings`, in the
request's own spelling. The contents are :mod:`ctxmgr.formats._gemini`'s.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.formats._base import Losses
from ctxmgr.formats._gemini_spelling import CAMEL as _CAMEL, get as _get
from ctxmgr.formats._request import (
    RequestSettings,
    ToolChoice,
    ToolDefinition,
    count,
    json_schema,
    number,
    read_tools,
    stop_list,
)

__all__ = ["REQUEST", "GeminiRequest"]

# generationConfig key (REST spelling) -> RequestSettings field
_GENERATION = {
    "maxOutputTokens": "max_tokens",
    "temperature": "temperature",
    "topP": "top_p",
    "topK": "top_k",
    "stopSequences": "stop",
}
_DECLARATION_KEYS = frozenset({"name", "description", "parameters", "parametersJsonSchema", "parameters_json_schema"})
"""Keys of a function declaration that other formats have an equivalent for."""


class GeminiRequest:
    """The ``generateContent`` request spelling, REST or Python SDK (``config``) form."""

    keys = frozenset(
        {
            "contents",
            "model",
            "config",
            "systemInstruction",
            "system_instruction",
            "tools",
            "toolConfig",
            "tool_config",
            "generationConfig",
            "generation_config",
            "safetySettings",
            "safety_settings",
            "cachedContent",
            "cached_content",
            "labels",
        }
    )
    shared = frozenset({"model"})

    def read(self, request: dict[str, Any], losses: Losses) -> tuple[RequestSettings, dict[str, Any]]:
        rest = dict(request)
        settings = RequestSettings()
        sections = [(key, rest.pop(key)) for key in ("generationConfig", "generation_config", "config") if key in rest]
        for section, values in sections:
            self._read_section(section, values, settings, rest, losses)
        tools = rest.pop("tools", None)
        if isinstance(tools, list):
            settings.tools = read_tools(tools, [self], losses)
            _note_tool_losses(tools, losses)
        elif tools is not None:
            rest["tools"] = tools
        for key in ("toolConfig", "tool_config"):
            config = rest.pop(key, None)
            if isinstance(config, dict):
                self._read_tool_config(key, config, settings, losses)
            elif config is not None:
                rest[key] = config
        return settings, rest

    def _read_section(
        self, section: str, values: Any, settings: RequestSettings, rest: dict[str, Any], losses: Losses
    ) -> None:
        if not isinstance(values, dict):
            losses.add(f"request key '{section}'")
            return
        for key, value in values.items():
            # The SDK's 'config' holds what REST spreads over the request, in snake_case.
            camel = _CAMEL.get(key, key)
            if section == "config" and camel in ("tools", "toolConfig"):
                rest.setdefault(camel, value)
            elif camel in _GENERATION and self._setting(settings, _GENERATION[camel], value):
                continue
            elif section == "config" and camel in ("systemInstruction", "httpOptions"):
                continue  # the system message; how the SDK sends, not what
            else:
                losses.add(f"request key '{section}.{key}'")

    def _read_tool_config(self, key: str, config: dict[str, Any], settings: RequestSettings, losses: Losses) -> None:
        calling = _get(config, "functionCallingConfig")
        if calling is not None:
            settings.tool_choice = self.choice(config)
            if settings.tool_choice is None:
                losses.add(f"request key '{key}.functionCallingConfig'")
            elif isinstance(calling, dict) and calling.get("mode") == "VALIDATED":
                losses.add("function calling mode VALIDATED (written as auto)")
        for other in config:
            if _CAMEL.get(other, other) != "functionCallingConfig":
                losses.add(f"request key '{key}.{other}'")

    @staticmethod
    def _setting(settings: RequestSettings, name: str, value: Any) -> bool:
        found = (
            stop_list(value) if name == "stop" else count(value) if name in ("max_tokens", "top_k") else number(value)
        )
        if found is None:
            return False
        setattr(settings, name, found)
        return True

    def write(self, settings: RequestSettings, losses: Losses) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if settings.tools is not None:
            out["tools"] = [{"functionDeclarations": [_declaration(tool, losses) for tool in settings.tools]}]
        if settings.tool_choice is not None:
            out["toolConfig"] = {"functionCallingConfig": _calling_config(settings.tool_choice, losses)}
        if settings.parallel_tool_calls is False:
            losses.add("request key 'parallel_tool_calls' (Gemini has no switch for it)")
        generation = {
            camel: getattr(settings, name) for camel, name in _GENERATION.items() if getattr(settings, name) is not None
        }
        if generation:
            out["generationConfig"] = generation
        if settings.reasoning_effort is not None:
            losses.add("request setting reasoning effort (Gemini budgets thinking in tokens)")
        return out

    def tools(self, value: Any) -> list[ToolDefinition] | None:
        declarations = _get(value, "functionDeclarations") if isinstance(value, dict) else None
        if not isinstance(declarations, list):
            return None
        found: list[ToolDefinition] = []
        for declaration in declarations:
            if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
                return None
            schema = _get(declaration, "parametersJsonSchema")
            if schema is None and isinstance(declaration.get("parameters"), dict):
                schema = json_schema(declaration["parameters"])  # OpenAPI's types are upper case
            description = declaration.get("description")
            found.append(
                ToolDefinition(
                    name=declaration["name"],
                    description=description if isinstance(description, str) else None,
                    parameters=schema if isinstance(schema, dict) else None,
                )
            )
        return found

    def choice(self, value: Any) -> ToolChoice | None:
        calling = _get(value, "functionCallingConfig") if isinstance(value, dict) else None
        if not isinstance(calling, dict):
            return None
        mode = calling.get("mode", "AUTO")
        names = _get(calling, "allowedFunctionNames")
        if names is not None and (not isinstance(names, list) or not all(isinstance(n, str) for n in names)):
            return None
        if mode in ("AUTO", "VALIDATED", "NONE") and not names:
            # VALIDATED: calls or text, calls checked against their schema; the nearest is auto.
            return ToolChoice("none" if mode == "NONE" else "auto")
        if mode == "ANY" and not names:
            return ToolChoice("required")
        if mode == "ANY" and names and len(names) == 1:
            return ToolChoice("tool", names[0])
        if mode == "ANY" and names:
            return ToolChoice("required", allowed=list(names))
        return None


REQUEST = GeminiRequest()


def _note_tool_losses(tools: list[Any], losses: Losses) -> None:
    """Names what a Gemini tool entry holds beyond the function declarations the model keeps."""
    for tool in tools:
        declarations = _get(tool, "functionDeclarations") if isinstance(tool, dict) else None
        for declaration in declarations if isinstance(declarations, list) else ():
            for key in declaration.keys() - _DECLARATION_KEYS if isinstance(declaration, dict) else ():
                losses.add(f"tool definition field '{key}'")
        for key in tool if declarations is not None else ():
            if _CAMEL.get(key, key) != "functionDeclarations":
                losses.add(f"tool definition '{key}'")


def _declaration(tool: ToolDefinition, losses: Losses) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        declaration["description"] = tool.description
    if tool.parameters is not None:
        declaration["parametersJsonSchema"] = tool.parameters
    if tool.strict:
        losses.add("strict flag of a tool definition (Gemini has none)")
    return declaration


def _calling_config(choice: ToolChoice, losses: Losses) -> dict[str, Any]:
    calling: dict[str, Any] = {"mode": {"auto": "AUTO", "none": "NONE"}.get(choice.mode, "ANY")}
    if choice.mode == "tool":
        calling["allowedFunctionNames"] = [choice.name]
    elif choice.allowed is not None and choice.mode == "required":
        calling["allowedFunctionNames"] = choice.allowed
    elif choice.allowed is not None:
        losses.add("tool_choice restriction to some tools in auto mode (Gemini restricts only ANY)")
    return calling
