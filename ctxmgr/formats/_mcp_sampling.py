"""MCP ``sampling/createMessage`` requests: ``mcp-sampling``.

How a request maps onto the model (each message keeps its record as its source, so a kept
message is written back untouched):

* ``systemPrompt`` is the system message at the head (the rules), written back to the key;
* a message's content is one object or a list of them: ``text`` is text, ``image`` and
  ``audio`` (base64 ``data`` and ``mimeType``) media blocks, an assistant's ``tool_use``
  (``id``, ``name``, ``input``) a tool call, a user's ``tool_result`` (``toolUseId``,
  ``content``, ``isError``) the result of that call: a user message of results is a tool
  message, as Anthropic's is. Another content type is carried whole.

The summary goes where MCP puts the context a server gives: the ``systemPrompt``,
appended after a blank line and ctxmgr's header (the key is made if missing). Only there
is it read back; the header in a message is ordinary text, with a warning.

Written from another format: a leading system message is the ``systemPrompt``, a
message's content one object when it has one part (a list otherwise), the results of a
turn's calls one user message; the request's ``maxTokens``, ``temperature``,
``stopSequences``, ``tools`` (``inputSchema``) and ``toolChoice`` follow (see
:mod:`ctxmgr.formats._mcp_sampling_request`).
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
    split_system_prompt,
)
from ctxmgr.formats._detection.mcp_sampling import METHOD, PART_TYPES, ROLES, params_of, score
from ctxmgr.formats._interop import (
    NotedWriter,
    SystemSlot,
    call_name_and_args,
    describe_block,
    media_block,
    media_of,
    message_carries_header,
    openai_call,
    passthrough,
    passthrough_value,
    read_guarded,
    summary_text,
    type_name,
)
from ctxmgr.formats._mcp_sampling_request import REQUEST
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import AudioBlock, ContentBlock, ImageBlock, MediaRef, TextBlock, ToolResultBlock
from ctxmgr.state.message import Message

__all__ = ["MCPSamplingFormat"]

NAME = "mcp-sampling"


def _part(part: Any, fail: Any) -> Any:
    """The block, OpenAI-shaped call or result one content object reads as."""
    kind = part.get("type") if isinstance(part, dict) else None
    if not isinstance(part, dict) or kind not in PART_TYPES:
        return passthrough(part, NAME, part=True)
    if kind == "text":
        if not isinstance(part.get("text"), str):
            raise fail(".text", "a text content needs a 'text' string")
        return TextBlock(text=part["text"])
    if kind in ("image", "audio"):
        if not isinstance(part.get("data"), str):
            raise fail(".data", f"{kind} content needs base64 'data'")
        mime = part.get("mimeType") if isinstance(part.get("mimeType"), str) else None
        return media_block(MediaRef(kind="data", data_base64=part["data"], mime_type=mime), kind=kind)
    if kind == "tool_use":
        call_id, name = part.get("id"), part.get("name")
        if not isinstance(call_id, str) or not call_id or not isinstance(name, str):
            raise fail("", "a tool_use needs an 'id' and a 'name' string")
        return openai_call(call_id, name, part.get("input") if part.get("input") is not None else {})
    call_id = part.get("toolUseId")
    if not isinstance(call_id, str) or not call_id:
        raise fail(".toolUseId", "a tool_result needs a 'toolUseId' string")
    return ToolResultBlock(call_id=call_id, output=_output(part.get("content")), is_error=part.get("isError") is True)


def _output(content: Any) -> Any:
    """A tool result's output: its texts joined when it holds only text, else as it is."""
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        texts = [p.get("text") for p in content]
        if all(isinstance(t, str) for t in texts):
            return "\n".join(texts)
    return content


class MCPSamplingFormat:
    """Reads and writes MCP sampling requests (params, or the JSON-RPC request)."""

    name = NAME
    list_key = "messages"
    request = REQUEST
    user_turn_summary = False

    def detect(self, value: Any) -> int:
        return score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """The params' keys beside their messages and system prompt."""
        params = params_of(container)
        if params is None:
            return {}
        return {k: v for k, v in params.items() if k not in ("messages", "systemPrompt")}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: self._read(value, source, layout), source, "MCP sampling")

    def _read(self, value: Any, source: str, layout: Layout) -> Conversation:
        params = params_of(value) if not isinstance(value, list) else {"messages": value}  # (a bare list)
        records = params.get("messages") if params is not None else None
        if params is None or not isinstance(records, list):
            raise InputError(
                f"not an MCP sampling request (expected {{'messages': [...]}} or a {METHOD!r} request)", source=source
            )
        messages: list[Message] = []
        summary: str | None = None
        prompt = params.get("systemPrompt")
        if prompt is not None and not isinstance(prompt, str):
            raise InputError(f"systemPrompt: expected a string, got {type_name(prompt)}", source=source)
        if prompt:
            rules, summary = split_system_prompt(prompt)
            if rules:
                message = Message(role="system", content=[TextBlock(text=rules)])
                messages.append(message.with_source([SystemSlot(rules, ("systemPrompt",))], NAME))
        warnings: list[str] = []
        for index, record in enumerate(records):
            message = self._message(index, record, source, records)
            if message_carries_header(message):
                warnings.append(forged_summary(record_name(records, index), "is not the system prompt"))
            messages.append(message)
        state = AgentState(context=messages, context_summary=summary)
        return Conversation(state=state, format=NAME, container=value, layout=layout, warnings=warnings)

    def _message(self, index: int, record: Any, source: str, records: Any) -> Message:
        if not isinstance(record, dict):
            raise record_error(source, records, index, "", "expected a message object {role, content}")
        role = record.get("role")
        if role not in ROLES:
            raise record_error(source, records, index, "role", f"unknown role {role!r} (expected user or assistant)")
        content = record.get("content")
        parts = [content] if isinstance(content, dict) else content
        if not isinstance(parts, list):
            raise record_error(
                source, records, index, "content", f"expected an object or a list, got {type_name(content)}"
            )
        blocks: list[ContentBlock] = []
        calls: list[dict[str, Any]] = []
        results: list[ToolResultBlock] = []
        for k, part in enumerate(parts):
            where = "content" if isinstance(content, dict) else f"content[{k}]"

            def fail(field: str, problem: str, where: str = where) -> InputError:
                return record_error(source, records, index, f"{where}{field}", problem)

            found = _part(part, fail)
            if isinstance(found, ToolResultBlock):
                results.append(found)
            elif isinstance(found, dict):
                calls.append(found)
            else:
                blocks.append(found)
        if results and role == "user":
            message = Message(role="tool", content=[*results, *blocks])
        else:
            message = Message(role=role, content=[*blocks, *results], tools_calls=calls or None)
        return message.with_source([record], NAME)

    def write(self, conversation: Conversation) -> Any:
        return _Writer(conversation).write()


class _Writer(NotedWriter):
    name = NAME
    messages_noun = "MCP sampling messages"

    results: dict[str, Any] | None = None
    """The user message of results this writer made last (the next results join it)."""

    def _write(self) -> Any:
        conversation = self.conversation
        records: list[Any] = []
        prompt: str | None = None
        for message in conversation.state.context:
            source = message.source_in(NAME)
            if source is not None and isinstance(source[0], SystemSlot):
                prompt = source[0].value
            elif source is not None:
                records.extend(source)
            elif message.role == "system":
                if records:
                    self.drop("system message after the conversation began")
                else:
                    text = message.text()
                    prompt = f"{prompt}\n\n{text}" if prompt else text
            else:
                self._render(message, records)
        summary = conversation.state.context_summary
        if summary:
            prompt = f"{prompt}\n\n{summary_text(summary)}" if prompt else summary_text(summary)
        container = conversation.container if conversation.format == NAME else None
        if isinstance(container, list) and not prompt:
            return records  # a bare list of messages stays one
        params = params_of(container)
        out: dict[str, Any] = dict(params) if params is not None else {}
        out["messages"] = records
        if prompt:
            out["systemPrompt"] = prompt
        else:
            out.pop("systemPrompt", None)
        if params is not None and params is not container and isinstance(container, dict):
            return {**container, "params": out}
        return out

    def _render(self, message: Message, records: list[Any]) -> None:
        """Append ``message``'s record (a result joins the user message of results before it)."""
        parts: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                results.append(_result_part(block))
            elif isinstance(block, TextBlock):
                parts.append({"type": "text", "text": block.text})
            elif (own := passthrough_value(block, NAME, part=True)) is not None:
                parts.append(own)
            elif isinstance(block, ImageBlock | AudioBlock) and (media := media_of(block)) is not None:
                if media.kind == "data" and media.data_base64 is not None:
                    kind = "image" if isinstance(block, ImageBlock) else "audio"
                    parts.append({"type": kind, "data": media.data_base64, "mimeType": media.mime_type or ""})
                else:
                    self.drop(f"{describe_block(block)} block without inline data")
            else:
                self.drop(f"{describe_block(block)} block")
        if message.reasoning:
            self.drop("reasoning text")
        for call in message.tools_calls or ():
            call_id, name, args, _ = call_name_and_args(call)
            parts.append({"type": "tool_use", "id": call_id, "name": name, "input": args})
        if results:
            previous = self.results
            if previous is not None and records and records[-1] is previous and not parts:
                # The results of one turn's calls: one user message, as MCP wants them.
                previous["content"] = [*_listed(previous["content"]), *results]
                return
            parts = [*results, *parts]
            self.results = {"role": "user", "content": parts if len(parts) > 1 else parts[0]}
            records.append(self.results)
            return
        if not parts:
            return  # nothing this format can say (a reasoning-only message)
        role = "assistant" if message.role == "assistant" else "user"
        records.append({"role": role, "content": parts if len(parts) > 1 else parts[0]})


def _listed(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [content]


def _result_part(block: ToolResultBlock) -> dict[str, Any]:
    output = block.output
    if isinstance(output, list) and all(isinstance(p, dict) and "type" in p for p in output):
        content: list[Any] = output
    else:
        text = output if isinstance(output, str) else "" if output is None else _json(output)
        content = [{"type": "text", "text": text}]
    part: dict[str, Any] = {"type": "tool_result", "toolUseId": block.call_id, "content": content}
    if block.is_error or block.status == "failed":
        part["isError"] = True
    return part


def _json(value: Any) -> str:
    from ctxmgr import _nesting

    return _nesting.dumps(value, ensure_ascii=False)
