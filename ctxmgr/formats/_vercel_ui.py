"""The AI SDK's ``UIMessage`` lists (``vercel-ai``'s second shape), as ``useChat`` keeps them.

``[{"id", "role": "system" | "user" | "assistant", "parts": [...], "metadata"?}]``, bare or
under ``messages``. ``text`` parts are text, ``reasoning`` parts reasoning, ``file`` parts
media (``url``, ``mediaType``); a ``tool-<name>`` (or ``dynamic-tool``) part is a tool call
and, once its ``state`` is ``output-available`` (``output``) or ``output-error``
(``errorText``), its result too. Other parts (``step-start``, ``source-url``, ``data-*``)
are carried whole.

An assistant UIMessage holds every step of a turn: it is read as one assistant message per
step (a step ends where a ``step-start`` part, or a part after its tool parts, begins),
each followed by a tool message of that step's results. Each keeps its slice of the
record (the record with that step's parts) as its source, so the writer joins the slices
of one record that were kept back into one UIMessage (the very record when all were) and
writes a changed result (a cleared or cut output) into its tool part.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.errors import InputError
from ctxmgr.formats._base import record_name
from ctxmgr.formats._interop import media_block, openai_call, parse_data_url, passthrough
from ctxmgr.state._blocks import ContentBlock, MediaRef, ReasoningBlock, TextBlock, ToolResultBlock
from ctxmgr.state.message import Message

__all__ = ["is_tool_part", "read_ui", "write_ui"]


def is_tool_part(part: Any) -> bool:
    kind = part.get("type") if isinstance(part, dict) else None
    return isinstance(kind, str) and (kind.startswith("tool-") or kind == "dynamic-tool")


def _steps(parts: list[Any]) -> list[list[Any]]:
    steps: list[list[Any]] = [[]]
    for part in parts:
        current = steps[-1]
        tools_before = any(is_tool_part(p) for p in current)
        if current and (part.get("type") == "step-start" or (tools_before and not is_tool_part(part))):
            steps.append([])
        steps[-1].append(part)
    return steps


def read_ui(records: list[Any], fmt: str, source: str) -> list[Message]:
    """The model messages of UIMessage ``records`` (see the module docstring)."""
    messages: list[Message] = []
    for index, record in enumerate(records):
        steps = _steps(record["parts"]) if record["role"] == "assistant" else [record["parts"]]
        for step in steps:
            piece = record if len(steps) == 1 else {**record, "parts": step}
            blocks: list[ContentBlock] = []
            calls: list[dict[str, Any]] = []
            results: list[ToolResultBlock] = []
            for k, part in enumerate(step):
                if is_tool_part(part):
                    call, result = _tool(part, f"{record_name(records, index)}: parts[{k}]", source)
                    calls.append(call)
                    if result is not None:
                        results.append(result)
                else:
                    blocks.append(_block(part, fmt))
            message = Message(role=record["role"], content=blocks, tools_calls=calls or None)
            if isinstance(record.get("id"), str) and record["id"]:
                message.message_id = record["id"]
            messages.append(message.with_source([piece], fmt))
            if results:
                messages.append(Message(role="tool", content=list(results)).with_source([piece], fmt))
    return messages


def _tool(part: dict[str, Any], where: str, source: str) -> tuple[dict[str, Any], ToolResultBlock | None]:
    call_id = part.get("toolCallId")
    name = part["type"][5:] if part["type"] != "dynamic-tool" else part.get("toolName")
    if not isinstance(call_id, str) or not call_id or not isinstance(name, str):
        raise InputError(f"{where}: a tool part needs a 'toolCallId' (and a dynamic-tool a 'toolName')", source=source)
    call = openai_call(call_id, name, part.get("input") if part.get("input") is not None else {})
    state = part.get("state")
    if state == "output-available":
        return call, ToolResultBlock(call_id=call_id, output=part.get("output"))
    if state == "output-error":
        return call, ToolResultBlock(call_id=call_id, output=part.get("errorText"), is_error=True)
    return call, None


def _block(part: dict[str, Any], fmt: str) -> Any:
    kind = part["type"]
    if kind == "text" and isinstance(part.get("text"), str):
        return TextBlock(text=part["text"])
    if kind == "reasoning" and isinstance(part.get("text"), str):
        return ReasoningBlock(summary=part["text"], details=part)
    if kind == "file" and isinstance(part.get("url"), str):
        url = part["url"]
        mime = part.get("mediaType") if isinstance(part.get("mediaType"), str) else None
        media = parse_data_url(url) if url.startswith("data:") else MediaRef(kind="url", url=url, mime_type=mime)
        if media.mime_type is None and mime is not None:
            media = media.model_copy(update={"mime_type": mime})
        return media_block(media)
    return passthrough(part, fmt, part=True)


def write_ui(messages: list[Message], fmt: str, render: Any, drop: Any) -> list[Any]:
    """UIMessage records for ``messages``: kept slices joined back, changed results
    written into their tool parts, other messages made by ``render``."""
    records: list[Any] = []
    previous: Any = None  # the slice written last
    for message in messages:
        source = message.source_in(fmt)
        if source is not None:
            for piece in source:
                last = records[-1] if records else None
                if piece is previous or piece == previous:
                    continue  # the step's results: its slice is written already
                previous = piece
                if last is not None and _same_message(last, piece):
                    records[-1] = {**last, "parts": [*last["parts"], *piece["parts"]]}
                else:
                    records.append(piece)
        elif message.role == "tool":
            previous = None
            for block in message.content:
                if isinstance(block, ToolResultBlock) and not _patch(records, block):
                    drop("tool result whose call is not in a kept UIMessage")
        else:
            previous = None
            records.extend(render(message))
    return records


def _same_message(last: Any, piece: Any) -> bool:
    return (
        isinstance(last, dict)
        and isinstance(piece, dict)
        and last.get("role") == "assistant" == piece.get("role")
        and last.get("id") is not None
        and last.get("id") == piece.get("id")
    )


def _patch(records: list[Any], block: ToolResultBlock) -> bool:
    """Write ``block`` into the tool part of its call in the newest record holding it."""
    for at in range(len(records) - 1, -1, -1):
        record: dict[str, Any] = records[at] if isinstance(records[at], dict) else {}
        parts: list[Any] = record.get("parts") or []
        for k, part in enumerate(parts):
            if is_tool_part(part) and part.get("toolCallId") == block.call_id:
                changed = {key: v for key, v in part.items() if key not in ("output", "errorText")}
                if block.is_error:
                    changed.update(state="output-error", errorText=str(block.output))
                else:
                    changed.update(state="output-available", output=block.output)
                records[at] = {**record, "parts": [*parts[:k], changed, *parts[k + 1 :]]}
                return True
    return False
