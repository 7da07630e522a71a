"""The two spellings of Gemini's keys: the REST API's camelCase and the Python SDK's
snake_case. A file is read in either and written back in the one it uses."""

from __future__ import annotations

from typing import Any

__all__ = ["CAMEL", "SNAKE", "get", "spelling", "text_or_none"]

# REST spelling -> Python SDK spelling of every key ctxmgr reads or writes.
SNAKE = {
    "functionCall": "function_call",
    "functionResponse": "function_response",
    "inlineData": "inline_data",
    "fileData": "file_data",
    "mimeType": "mime_type",
    "fileUri": "file_uri",
    "thoughtSignature": "thought_signature",
    "systemInstruction": "system_instruction",
    "generationConfig": "generation_config",
    "executableCode": "executable_code",
    "codeExecutionResult": "code_execution_result",
    "displayName": "display_name",
    "audioTranscription": "audio_transcription",
    "videoMetadata": "video_metadata",
    "safetySettings": "safety_settings",
    "toolConfig": "tool_config",
    "cachedContent": "cached_content",
    "functionDeclarations": "function_declarations",
    "parametersJsonSchema": "parameters_json_schema",
    "functionCallingConfig": "function_calling_config",
    "allowedFunctionNames": "allowed_function_names",
    "maxOutputTokens": "max_output_tokens",
    "topP": "top_p",
    "topK": "top_k",
    "stopSequences": "stop_sequences",
    "httpOptions": "http_options",
}
CAMEL = {snake: camel for camel, snake in SNAKE.items()}


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def get(obj: dict[str, Any], camel: str) -> Any:
    """``obj[camel]`` or its snake_case spelling."""
    if camel in obj:
        return obj[camel]
    return obj.get(SNAKE.get(camel, camel))


def spelling_of(keys: Any) -> str | None:
    for key in keys:
        if key in SNAKE:
            return "camel"
        if key in CAMEL:
            return "snake"
    return None


def spelling(value: Any) -> str:
    """``camel`` or ``snake``: the spelling ``value`` uses (camel when nothing tells)."""
    records: list[Any] = []
    if isinstance(value, dict):
        found = spelling_of(value)
        config = value.get("config")
        if found is None and isinstance(config, dict):
            found = spelling_of(config)
        if found is not None:
            return found
        contents = value.get("contents")
        records = contents if isinstance(contents, list) else []
    elif isinstance(value, list):
        records = value
    for record in records:
        parts = record.get("parts") if isinstance(record, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict):
                found = spelling_of(part) or next(
                    (spelling_of(v) for v in part.values() if isinstance(v, dict) and spelling_of(v)), None
                )
                if found is not None:
                    return found
    return "camel"
