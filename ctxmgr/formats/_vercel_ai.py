"""The Vercel AI SDK's ``ModelMessage`` and ``UIMessage`` lists: ``vercel-ai``.

How messages map onto the model (each message keeps its record as its source, so a kept
message is written back untouched):

* ``system`` messages (a string) and the call's ``system`` setting are system messages;
* ``text`` parts are text, ``reasoning`` parts reasoning blocks, ``image`` and ``file``
  parts media blocks (base64, a data URL or a URL); an assistant's ``tool-call``
  (``toolCallId``, ``toolName``, ``input``; ``args`` before SDK 5) is a tool call, and a
  ``tool`` message's ``tool-result`` its result: ``output`` ``{"type": "text" | "json",
  "value"}`` is the output, ``error-text`` / ``error-json`` a failed one, ``content`` a
  list of parts kept as the output (``result`` before SDK 5). Another part is carried whole.

The summary is a system message (``content``: ctxmgr's header, then the summary) right
after the leading system messages, where the SDK's messages carry the context a call
gives the model; only there is it read back. Written from another format, messages take
the SDK's shape: an assistant's content is a list of parts, a user's a string when it is
one text, each tool result names its call's ``toolName``.

``UIMessage`` lists (``useChat``'s shape: typed ``parts``, no ``content``) are read and
written back by :mod:`ctxmgr.formats._vercel_ui`.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.errors import InputError
from ctxmgr.formats._base import (
    Conversation,
    Layout,
    forged_summary,
    record_error,
    record_name,
    split_summary_text,
)
from ctxmgr.formats._detection.vercel_ai import PART_TYPES, ROLES, is_ui, messages_of, score
from ctxmgr.formats._interop import (
    NotedWriter,
    SystemSlot,
    call_name_and_args,
    data_url,
    describe_block,
    media_block,
    media_of,
    message_carries_header,
    openai_call,
    parse_data_url,
    passthrough,
    passthrough_value,
    read_guarded,
    summary_text,
    type_name,
)
from ctxmgr.formats._vercel_ai_request import REQUEST
from ctxmgr.formats._vercel_ui import read_ui, write_ui
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import ContentBlock, ImageBlock, MediaRef, ReasoningBlock, TextBlock, ToolResultBlock
from ctxmgr.state.message import Message

__all__ = ["VercelAIFormat"]

NAME = "vercel-ai"


def _media(part: dict[str, Any], key: str) -> MediaRef | None:
    value = part.get(key)
    mime = part.get("mediaType") if isinstance(part.get("mediaType"), str) else None
    if not isinstance(value, str):
        return None
    if value.startswith("data:"):
        ref = parse_data_url(value)
        return ref if ref.mime_type or mime is None else ref.model_copy(update={"mime_type": mime})
    if value.startswith(("http://", "https://")):
        return MediaRef(kind="url", url=value, mime_type=mime)
    return MediaRef(kind="data", data_base64=value, mime_type=mime)


def _result(part: dict[str, Any]) -> ToolResultBlock:
    call_id = part["toolCallId"]
    output = part.get("output")
    if isinstance(output, dict) and output.get("type") in ("text", "json", "error-text", "error-json", "content"):
        failed = str(output["type"]).startswith("error")
        return ToolResultBlock(call_id=call_id, output=output.get("value"), is_error=failed)
    return ToolResultBlock(call_id=call_id, output=part.get("result", output), is_error=part.get("isError") is True)


def _part(part: Any, fail: Any) -> Any:
    """The block, OpenAI-shaped call or result one part reads as."""
    kind = part.get("type") if isinstance(part, dict) else None
    if not isinstance(part, dict) or kind not in PART_TYPES:
        return passthrough(part, NAME, part=True)
    if kind == "text":
        if not isinstance(part.get("text"), str):
            raise fail(".text", "a text part needs a 'text' string")
        return TextBlock(text=part["text"])
    if kind == "reasoning":
        text = part.get("text")
        # The part itself only when it says more than its text (providerOptions: a signature).
        details = part if set(part) - {"type", "text"} or not isinstance(text, str) else None
        return ReasoningBlock(summary=text if isinstance(text, str) else None, details=details)
    if kind in ("image", "file"):
        media = _media(part, "image" if kind == "image" else "data")
        if media is None:
            raise fail("", f"an {kind} part needs its data as a string (base64, a data URL or a URL)")
        return media_block(media, kind="image" if kind == "image" else None)
    if not isinstance(part.get("toolCallId"), str) or not part["toolCallId"]:
        raise fail(".toolCallId", f"a {kind} part needs a 'toolCallId' string")
    if kind == "tool-result":
        return _result(part)
    name = part.get("toolName")
    if not isinstance(name, str):
        raise fail(".toolName", "a tool-call part needs a 'toolName' string")
    args = part.get("input", part.get("args"))
    return openai_call(part["toolCallId"], name, args if args is not None else {})


class VercelAIFormat:
    """Reads and writes the AI SDK's ``ModelMessage`` lists."""

    name = NAME
    list_key = "messages"
    request = REQUEST
    user_turn_summary = False

    def detect(self, value: Any) -> int:
        return score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """A call's settings beside its ``messages`` and ``system``."""
        if not isinstance(container, dict):
            return {}
        return {k: v for k, v in container.items() if k not in ("messages", "system")}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: self._read(value, source, layout), source, "AI SDK")

    def _read(self, value: Any, source: str, layout: Layout) -> Conversation:
        if is_ui(value):
            return self._read_ui(value, source, layout)
        records = messages_of(value)
        if records is None:
            raise InputError(f"expected a list of AI SDK messages or {{'messages': [...]}}, got {type_name(value)}",
                             source=source)  # fmt: skip
        messages: list[Message] = []
        summaries: list[str] = []
        warnings: list[str] = []
        system = value.get("system") if isinstance(value, dict) else None
        if isinstance(system, str) and system:
            slot = Message(role="system", content=[TextBlock(text=system)])
            messages.append(slot.with_source([SystemSlot(system, ("system",))], NAME))
        leading = True
        for index, record in enumerate(records):
            if not isinstance(record, dict) or record.get("role") not in ROLES:
                role = record.get("role") if isinstance(record, dict) else None
                raise record_error(source, records, index, "role", f"unknown role {role!r} (expected one of: "
                             "system, user, assistant, tool)")  # fmt: skip
            leading = leading and record["role"] == "system"
            content = record.get("content")
            found = split_summary_text(content) if isinstance(content, str) and record["role"] == "system" else None
            if found is not None and leading:
                summaries.append(found)
                continue
            message = self._message(index, record, source, records)
            if message_carries_header(message):
                why = "is a system message after the conversation began" if record["role"] == "system" else (
                    f"is a {record['role']} message")  # fmt: skip
                warnings.append(forged_summary(record_name(records, index), why))
            messages.append(message)
        state = AgentState(context=messages, context_summary="\n\n".join(summaries) if summaries else None)
        return Conversation(state=state, format=NAME, container=value, layout=layout, warnings=warnings)

    def _read_ui(self, value: Any, source: str, layout: Layout) -> Conversation:
        records = messages_of(value) or []
        summaries: list[str] = []
        at = 0
        while at < len(records) and records[at]["role"] == "system":
            parts = records[at]["parts"]
            text = parts[0].get("text") if len(parts) == 1 and parts[0]["type"] == "text" else None
            found = split_summary_text(text) if isinstance(text, str) else None
            if found is None:
                break
            summaries.append(found)
            at += 1
        messages = read_ui(records[at:], NAME, source)
        warnings = [
            forged_summary(f"message {index}", "is not a summary where ctxmgr writes one")
            for index, message in enumerate(messages)
            if message_carries_header(message)
        ]
        state = AgentState(context=messages, context_summary="\n\n".join(summaries) if summaries else None)
        return Conversation(state=state, format=NAME, container=value, layout=layout, warnings=warnings)

    def _message(self, index: int, record: dict[str, Any], source: str, records: Any) -> Message:
        content = record.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(parts, list):
            raise record_error(source, records, index, "content", f"expected a string or a list of parts, got "
                         f"{type_name(content)}")  # fmt: skip
        blocks: list[ContentBlock] = []
        calls: list[dict[str, Any]] = []
        for k, part in enumerate(parts):

            def fail(field: str, problem: str, k: int = k) -> InputError:
                return record_error(source, records, index, f"content[{k}]{field}", problem)

            found = _part(part, fail)
            if isinstance(found, dict):
                calls.append(found)
            elif not (isinstance(found, TextBlock) and not found.text and isinstance(content, str)):
                blocks.append(found)
        message = Message(role=record["role"], content=blocks, tools_calls=calls or None)
        return message.with_source([record], NAME)

    def write(self, conversation: Conversation) -> Any:
        return _Writer(conversation).write()


class _Writer(NotedWriter):
    name = NAME
    messages_noun = "AI SDK messages"

    def _write_ui(self) -> Any:
        conversation = self.conversation
        records = write_ui(conversation.state.context, NAME, self._ui_record, self.drop)
        summary = conversation.state.context_summary
        if summary:
            at = next((i for i, r in enumerate(records) if r.get("role") != "system"), len(records))
            text = {"type": "text", "text": summary_text(summary)}
            records.insert(at, {"id": "ctxmgr-summary", "role": "system", "parts": [text]})
        container = conversation.container if conversation.format == NAME else None
        return {**container, "messages": records} if isinstance(container, dict) else records

    def _ui_record(self, message: Message) -> list[dict[str, Any]]:
        """A UIMessage for a message ctxmgr made (its calls waiting for their results)."""
        parts: list[dict[str, Any]] = []
        if message.reasoning:
            parts.append({"type": "reasoning", "text": message.reasoning})
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append({"type": "text", "text": block.text})
            elif isinstance(block, ReasoningBlock) and block.summary:
                parts.append({"type": "reasoning", "text": block.summary})
            elif (own := passthrough_value(block, NAME, part=True)) is not None:
                parts.append(dict(own))
            else:
                self.drop(f"{describe_block(block)} block")
        for call in message.tools_calls or ():
            call_id, name, args, _ = call_name_and_args(call)
            parts.append({"type": f"tool-{name}", "toolCallId": call_id, "state": "input-available", "input": args})
        role = message.role if message.role in ("system", "user", "assistant") else "user"
        return [{"id": message.message_id or "ctxmgr", "role": role, "parts": parts}]

    def _write(self) -> Any:
        conversation = self.conversation
        if _ui_shaped(conversation):
            return self._write_ui()
        records: list[Any] = []
        system: str | None = None
        names: dict[str, str] = {}  # call id -> tool name, for the results
        insert_at: int | None = None
        for message in conversation.state.context:
            for call in message.tools_calls or ():
                call_id, name, _, _ = call_name_and_args(call)
                names[call_id] = name
            source = message.source_in(NAME)
            if source is not None and isinstance(source[0], SystemSlot):
                system = source[0].value
                continue
            if insert_at is None and message.role != "system":
                insert_at = len(records)
            records.extend(source if source is not None else self._render(message, names))
        summary = conversation.state.context_summary
        if summary:
            at = len(records) if insert_at is None else insert_at
            records.insert(at, {"role": "system", "content": summary_text(summary)})
        container = conversation.container if conversation.format == NAME else None
        if isinstance(container, dict) or system is not None:
            out = dict(container) if isinstance(container, dict) else {}
            if system is not None:
                out["system"] = system
            out["messages"] = records
            return out
        return records

    def _render(self, message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                results.append(_result_part(block, names.get(block.call_id, "")))
            elif (part := self._part(block)) is not None:
                parts.append(part)
        if message.reasoning and message.role == "assistant":
            parts.insert(0, {"type": "reasoning", "text": message.reasoning})
        for call in message.tools_calls or ():
            call_id, name, args, _ = call_name_and_args(call)
            parts.append({"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": args})
        out: list[dict[str, Any]] = []
        if results:
            out.append({"role": "tool", "content": results})
            if parts:
                out.append({"role": "user", "content": parts})  # text sent beside results (Anthropic)
            return out
        if message.role == "system":
            return [{"role": "system", "content": "".join(p.get("text", "") for p in parts if p["type"] == "text")}]
        if message.role == "user" and len(parts) == 1 and parts[0]["type"] == "text":
            return [{"role": "user", "content": parts[0]["text"]}]
        return [{"role": "assistant" if message.role == "assistant" else "user", "content": parts}]

    def _part(self, block: Any) -> dict[str, Any] | None:
        """The part for a block that is not a result (``None``: no place, counted)."""
        if isinstance(block, TextBlock):
            return {"type": "text", "text": block.text}
        if isinstance(block, ReasoningBlock):
            details = block.details
            if isinstance(details, dict) and details.get("type") == "reasoning":
                return details
            if block.summary:
                return {"type": "reasoning", "text": block.summary}
            self.drop("reasoning block without readable text")
            return None
        own = passthrough_value(block, NAME, part=True)
        if own is not None:
            return dict(own)
        media = media_of(block)
        part = _media_part(block, media) if media is not None else None
        if part is None:
            self.drop(f"{describe_block(block)} block" + (" without data" if media is not None else ""))
        return part


def _ui_shaped(conversation: Conversation) -> bool:
    """Whether to write UIMessages: read from them (directly, or kept in a native file's raw)."""
    if conversation.format == NAME:
        return is_ui(conversation.container)
    for message in conversation.state.context:
        source = message.source_in(NAME)
        if source:
            return isinstance(source[0], dict) and "parts" in source[0]
    return False


def _media_part(block: Any, media: MediaRef) -> dict[str, Any] | None:
    value = media.url if media.kind == "url" else data_url(media) if media.kind == "data" else None
    if value is None:
        return None
    if isinstance(block, ImageBlock):
        part: dict[str, Any] = {"type": "image", "image": value}
    else:
        part = {"type": "file", "data": value, "mediaType": media.mime_type or "application/octet-stream"}
    if isinstance(block, ImageBlock) and media.mime_type:
        part["mediaType"] = media.mime_type
    return part


def _result_part(block: ToolResultBlock, name: str) -> dict[str, Any]:
    failed = block.is_error or block.status == "failed"
    output = block.output
    if isinstance(output, str):
        shaped: dict[str, Any] = {"type": "error-text" if failed else "text", "value": output}
    else:
        shaped = {"type": "error-json" if failed else "json", "value": output}
    return {"type": "tool-result", "toolCallId": block.call_id, "toolName": name, "output": shaped}
