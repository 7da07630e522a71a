"""LangChain message dicts: ``messages_to_dict`` output and the ``lc`` constructor form.

Two record shapes, freely mixed:

* ``{"type": "human" | "ai" | "system" | "tool" | "chat" | "function", "data": {...}}``
  as ``langchain_core.messages.messages_to_dict`` writes them;
* ``{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"], "kwargs": {...}}`` as
  ``langchain_core.load.dumpd`` writes them (``*MessageChunk`` classes included).

Containers: a bare list, JSONL (one message per line), or an object whose ``messages``
list holds such records (a LangGraph state), every other key kept. LangChain has no
request of its own: converted to it, a container's other keys (a request's settings, a
dataset's columns) are kept as they are, in ``{"messages": [...], ...}``.

AI messages' ``tool_calls`` (``{name, args, id}``; older files: OpenAI-shaped
``additional_kwargs.tool_calls`` or ``function_call``; ``invalid_tool_calls`` too) become
OpenAI-shaped ``tools_calls``; ``ToolMessage.tool_call_id`` pairs results with them and
``status: "error"`` marks failures. A legacy ``FunctionMessage`` pairs by name and order.
Anthropic-style ``tool_use`` parts that ChatAnthropic leaves in an AI message's content
duplicate ``tool_calls`` and stay only in the record; ``thinking`` / ``reasoning``
parts stay in their message as ``ReasoningBlock``, and so does the
``additional_kwargs.reasoning_content`` of ChatDeepSeek and ChatOllama (as the message's
``reasoning``). A text part's ``annotations`` (or ChatAnthropic's ``citations``) are its
``TextBlock``'s.

A summary is a system message whose text starts with the ctxmgr header, placed right
after the leading system messages (the same for ``--summary-as system`` and
``message``: LangChain's system prompt is made of system messages). Only the leading
system messages are read as a summary: the header elsewhere (a human, AI or tool message,
a system message after the first turn) marks nothing; the message is read as it is and a
warning names it.

Its twin: ``trim`` reads plain records through
:func:`ctxmgr.formats._detection.langchain.outline`, which declines whatever this reader
treats specially; a change to what a record means here is one there too
(``tests/formats/test_langchain_outline.py`` holds them to the same answers).
"""

from __future__ import annotations

from typing import Any

from ctxmgr import _nesting
from ctxmgr.errors import InputError
from ctxmgr.formats._base import Conversation, Layout, forged_summary, record_name, split_summary_text
from ctxmgr.formats._carry import carry_keys
from ctxmgr.formats._detection.langchain import (
    CALL_PARTS as _CALL_PARTS,
    CHAT_ROLES as _CHAT_ROLES,
    DECLARATION,
    ROLE_OF as _ROLE_OF,
    is_flat as _is_flat,
    kind as _kind,
    messages_of as _messages_of,
    score as detection_score,
    thread_values as _thread_values,
)
from ctxmgr.formats._gemini import SIGNATURES
from ctxmgr.formats._interop import (
    SERVER_CALL,
    IdPairer,
    Locator,
    NotedWriter,
    call_name_and_args,
    data_url,
    describe_block,
    listed_calls,
    media_block,
    media_of,
    message_carries_header,
    openai_call,
    parse_data_url,
    passthrough,
    passthrough_value,
    read_guarded,
    server_call,
    summary_text,
    type_name,
)
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import (
    ImageBlock,
    MediaRef,
    ReasoningBlock,
    RemoteToolCallBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxmgr.state.message import Message, Role

__all__ = ["LangChainFormat"]

NAME = "langchain"

GEMINI_SIGNATURES = "__gemini_function_call_thought_signatures__"
"""``additional_kwargs`` key where ChatGoogleGenerativeAI keeps each function call's
thought signature, by call id."""

_CLASS_OF = {"human": "HumanMessage", "ai": "AIMessage", "system": "SystemMessage", "tool": "ToolMessage"}
# Citation types of Anthropic text blocks, which ChatAnthropic keeps under "citations";
# other annotations (LangChain's own, OpenAI's) go under "annotations".
_ANTHROPIC_CITATIONS = frozenset(
    {"char_location", "page_location", "content_block_location", "web_search_result_location", "search_result_location"}
)


_KEPT_IN_CONTENT = ("anthropic", "openai-responses")
"""Formats whose blocks LangChain's own integrations keep in a message's content as is."""


class LangChainFormat:
    """Reads and writes LangChain serialized messages."""

    name = NAME
    user_turn_summary = False
    list_key = "messages"
    request = None  # no request of its own: every key of a container is kept as it is

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """The keys of a state or dataset line beside its ``messages``."""
        if isinstance(container, dict) and "messages" in container:
            return {k: v for k, v in container.items() if k != "messages"}
        values = _thread_values(container)
        if values is not None and isinstance(container, dict):
            # A LangGraph thread state: its keys, and its values' keys beside the messages.
            # ("values" stays, if empty, so a native file converted back is a thread state again.)
            kept = {k: v for k, v in container.items() if k != "values"}
            return {**kept, "values": {k: v for k, v in values.items() if k != "messages"}}
        return {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: _Reader(source).read(value, layout), source, "LangChain")

    def write(self, conversation: Conversation) -> Any:
        return _Writer(conversation).write()


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.summaries: list[str] = []
        self.warnings: list[str] = []
        self.pairer = IdPairer("langchain")

    def read(self, value: Any, layout: Layout) -> Conversation:
        values = _thread_values(value)
        if values is not None:
            records = values["messages"]
            loc = Locator(self.source, records, "values.messages")
        elif isinstance(value, dict):
            records = value.get("messages")
            if not isinstance(records, list):
                raise InputError(
                    f"messages: expected a list of LangChain messages, got {type_name(records)}", source=self.source
                )
            loc = Locator(self.source, records, "messages")
        elif isinstance(value, list):
            records = value
            loc = Locator(self.source, records, "")
        else:
            raise InputError(
                f"expected a list of LangChain messages or an object with 'messages', got {type_name(value)}",
                source=self.source,
            )
        context: list[Message] = []
        leading = True  # still in the leading system messages, where a summary may be
        for index, record in enumerate(records):
            found = _kind(record)
            if found is None:
                raise loc.error(index, "", "not a LangChain message (expected {'type', 'data'} or an 'lc' constructor)")
            kind, data = found
            leading = leading and kind == "system"
            # Only a record the declaration finds marked holds a summary or a forged one:
            # the outline reader declines exactly those (see ctxmgr.formats._declaration).
            marked = DECLARATION.marked(record)
            lifted = _summary_of(data.get("content")) if marked else None
            if lifted is not None and leading:
                self.summaries.append(lifted)
                continue
            message = self._message(kind, data, record, loc, index)
            if marked and (lifted is not None or message_carries_header(message)):
                article = "an" if kind == "ai" else "a"
                why = f"is {article} {kind} message"
                if kind == "system":
                    late = "is a system message after the conversation began"
                    why = "is not a summary message as ctxmgr writes it" if leading else late
                self.warnings.append(forged_summary(record_name(records, index), why))
            context.append(message)
        summary = "\n\n".join(self.summaries) if self.summaries else None
        state = AgentState(context=context, context_summary=summary)
        conversation = Conversation(state=state, format=NAME, container=value, layout=layout)
        conversation.warnings.extend(self.warnings)
        return conversation

    def _message(self, kind: str, data: dict[str, Any], record: Any, loc: Locator, index: int) -> Message:
        where = "kwargs." if "lc" in record else "" if _is_flat(record) else "data."
        role: Role
        if kind == "chat":
            chat_role = data.get("role")
            role = _CHAT_ROLES.get(chat_role, "user") if isinstance(chat_role, str) else "user"
            if not isinstance(chat_role, str) or chat_role not in _CHAT_ROLES:
                self.warnings.append(f"{loc.path(index)}: chat role {chat_role!r} is read as 'user'")
        else:
            role = _ROLE_OF[kind]
        content = data.get("content")
        blocks = self._content(content, loc, index, f"{where}content")
        calls: list[dict[str, Any]] = []
        if kind == "ai":
            calls = self._calls(data, loc, index, where)
        elif kind == "tool":
            call_id = data.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise loc.error(index, f"{where}tool_call_id", "a tool message needs a non-empty string 'tool_call_id'")
            blocks = [self._result(call_id, content, blocks, data)]
        elif kind == "function":
            name = data.get("name")
            if not isinstance(name, str):
                raise loc.error(index, f"{where}name", "a function message needs a 'name' string")
            blocks = [self._result(self.pairer.result(name, None), content, blocks, data)]
        message_id = data.get("id")
        message = Message(role=role, content=blocks, tools_calls=calls or None)
        extra = data.get("additional_kwargs")
        reasoning = extra.get("reasoning_content") if isinstance(extra, dict) and kind == "ai" else None
        if isinstance(reasoning, str) and reasoning:
            # Where ChatDeepSeek, ChatOllama and others keep the model's visible reasoning.
            message.reasoning = reasoning
        signatures = extra.get(GEMINI_SIGNATURES) if isinstance(extra, dict) and kind == "ai" else None
        if isinstance(signatures, dict) and signatures and all(isinstance(v, str) for v in signatures.values()):
            message.metadata[SIGNATURES] = dict(signatures)
        item = extra.get("reasoning") if isinstance(extra, dict) and kind == "ai" else None
        if isinstance(item, dict) and item.get("type") == "reasoning":
            # ChatOpenAI (Responses API) keeps the reasoning item here: its summary is text
            # the transcript shows, and the item goes back to the Responses API as it was.
            message.content.insert(0, _part(item))
        if isinstance(message_id, str) and message_id:
            message.message_id = message_id
        return message.with_source([record], NAME)

    def _result(self, call_id: str, content: Any, blocks: list[Any], data: dict[str, Any]) -> ToolResultBlock:
        output: Any = content
        if isinstance(content, list) and len(blocks) == len(content) and all(isinstance(b, TextBlock) for b in blocks):
            output = "\n".join(b.text for b in blocks)
        return ToolResultBlock(call_id=call_id, output=output, is_error=data.get("status") == "error")

    def _calls(self, data: dict[str, Any], loc: Locator, index: int, where: str) -> list[dict[str, Any]]:
        calls: list[dict[str, Any]] = []
        tool_calls = data.get("tool_calls")
        extra = data.get("additional_kwargs")
        kwargs: dict[str, Any] = extra if isinstance(extra, dict) else {}
        if tool_calls is not None and not isinstance(tool_calls, list):
            raise loc.error(index, f"{where}tool_calls", f"expected a list, got {type_name(tool_calls)}")
        if tool_calls:
            for position, call in enumerate(tool_calls):
                path = f"{where}tool_calls[{position}]"
                if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                    raise loc.error(index, path, "expected an object with a 'name' string")
                args = call.get("args") if call.get("args") is not None else {}
                if not isinstance(args, dict):
                    raise loc.error(index, f"{path}.args", f"expected an object, got {type_name(args)}")
                call_id = call.get("id")
                call_id = call_id if isinstance(call_id, str) and call_id else None
                calls.append(openai_call(self.pairer.call(call["name"], call_id), call["name"], args))
        elif isinstance(kwargs.get("tool_calls"), list):
            # Older LangChain: only the provider's OpenAI-shaped calls.
            for call in kwargs["tool_calls"]:
                call_id, name, _, _ = call_name_and_args(call)
                function = call.get("function") if isinstance(call, dict) else None
                arguments = function.get("arguments") if isinstance(function, dict) else None
                resolved = self.pairer.call(name, call_id or None)
                calls.append(openai_call(resolved, name, arguments if isinstance(arguments, str) else "{}"))
        elif isinstance(kwargs.get("function_call"), dict):
            function = kwargs["function_call"]
            name = function.get("name") if isinstance(function.get("name"), str) else ""
            arguments = function.get("arguments")
            arguments = arguments if isinstance(arguments, str) else "{}"
            calls.append(openai_call(self.pairer.call(name, None), name, arguments))
        invalid = data.get("invalid_tool_calls")
        for call in invalid if isinstance(invalid, list) else ():
            # Calls whose arguments did not parse: a tool message may still answer them.
            if isinstance(call, dict):
                name = call["name"] if isinstance(call.get("name"), str) else ""
                found_id = call["id"] if isinstance(call.get("id"), str) and call["id"] else None
                raw = call["args"] if isinstance(call.get("args"), str) else ""
                calls.append(openai_call(self.pairer.call(name, found_id), name, raw))
        return calls

    def _content(self, content: Any, loc: Locator, index: int, where: str) -> list[Any]:
        if isinstance(content, str):
            return [TextBlock(text=content)] if content else []
        if not isinstance(content, list):
            raise loc.error(index, where, f"expected a string or a list of parts, got {type_name(content)}")
        blocks: list[Any] = []
        for position, part in enumerate(content):
            if isinstance(part, str):
                blocks.append(TextBlock(text=part))
                continue
            if not isinstance(part, dict):
                raise loc.error(
                    index, f"{where}[{position}]", f"expected a string or a part object, got {type_name(part)}"
                )
            block = _part(part)
            if block is not None:
                blocks.append(block)
        return blocks


def _part(part: dict[str, Any]) -> Any:
    kind = part.get("type") if isinstance(part.get("type"), str) else None
    if kind == "text" and isinstance(part.get("text"), str):
        # v1 blocks cite under "annotations"; ChatAnthropic keeps Anthropic's "citations".
        cited = [c for key in ("annotations", "citations") if isinstance(part.get(key), list) for c in part[key]]
        return TextBlock(text=part["text"], annotations=cited)
    if kind in _CALL_PARTS:
        return None
    if kind == "thinking":
        thinking = part.get("thinking")
        return ReasoningBlock(summary=thinking if isinstance(thinking, str) else None, details=part)
    if kind == "reasoning":
        text = part.get("reasoning")
        if not isinstance(text, str):
            summary = part.get("summary")
            pieces = [s.get("text") for s in summary if isinstance(s, dict)] if isinstance(summary, list) else []
            text = "\n".join(p for p in pieces if isinstance(p, str)) or None
        return ReasoningBlock(summary=text, details=part)
    if kind == "redacted_thinking":
        return ReasoningBlock(details=part)
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if isinstance(url, str):
            return ImageBlock(media=parse_data_url(url))
    if kind in ("image", "audio", "video", "file"):
        media = _standard_media(part)
        if media is not None:
            return media_block(media, kind=kind if kind != "file" else "document")
    return passthrough(part, NAME)


def _standard_media(part: dict[str, Any]) -> MediaRef | None:
    """Media of a LangChain standard block (v0.3 ``source_type`` or v1 keys)."""
    mime = part.get("mime_type") if isinstance(part.get("mime_type"), str) else None
    source_type = part.get("source_type")
    data = part.get("base64") if isinstance(part.get("base64"), str) else None
    if source_type == "base64" and isinstance(part.get("data"), str):
        data = part["data"]
    if data is not None:
        return MediaRef(kind="data", data_base64=data, mime_type=mime)
    if isinstance(part.get("url"), str):
        ref = parse_data_url(part["url"])
        return ref if ref.mime_type or mime is None else ref.model_copy(update={"mime_type": mime})
    file_id = part.get("file_id") if isinstance(part.get("file_id"), str) else part.get("id")
    if (source_type == "id" or "file_id" in part) and isinstance(file_id, str):
        return MediaRef(kind="file_id", file_id=file_id, mime_type=mime)
    return None


def _summary_of(content: Any) -> str | None:
    if isinstance(content, str):
        return split_summary_text(content)
    if isinstance(content, list) and len(content) == 1:
        part = content[0]
        text = part if isinstance(part, str) else part.get("text") if isinstance(part, dict) else None
        return split_summary_text(text) if isinstance(text, str) else None
    return None


class _Writer(NotedWriter):
    name = NAME
    messages_noun = "LangChain messages"

    def __init__(self, conversation: Conversation) -> None:
        super().__init__(conversation)
        self.same = conversation.format == NAME
        # New records take the form of the file's (or, back from native, of its records').
        records = _messages_of(conversation.container) if self.same else _own_records(conversation)
        self.lc_form = bool(records) and all(isinstance(r, dict) and "lc" in r for r in records or ())
        self.flat = bool(records) and all(_is_flat(r) for r in records or ())

    def _write(self) -> Any:
        conversation = self.conversation
        records: list[Any] = []
        insert_at: int | None = None
        for index, message in enumerate(conversation.state.context):
            if insert_at is None and message.role != "system":
                insert_at = len(records)
            source = message.source_in(NAME)
            if source is not None:
                records.extend(source)
            else:
                records.extend(carry_keys(message.edited_source_in(NAME), self._render(message, index)))
        summary = conversation.state.context_summary
        if summary:
            at = len(records) if insert_at is None else insert_at
            records.insert(at, self._record("system", {"content": summary_text(summary)}))
        container = conversation.container
        values = _thread_values(container)
        if values is not None and self.same:
            # A LangGraph thread state: the messages go back into its values, the rest as it was.
            return {**container, "values": {**values, "messages": records}}
        if conversation.origin == NAME and isinstance(container, dict) and isinstance(container.get("values"), dict):
            # A thread state back from native: its other keys follow (formats.dump adds them).
            return {"values": {"messages": records}}
        if self.same and isinstance(container, dict):
            out = dict(container)
            out["messages"] = records
            return out
        if conversation.origin == NAME and isinstance(container, dict):
            return {"messages": records}  # a state object, back from native as it was
        # A bare list; keys of the container to keep make it {"messages": [...], ...}
        # (formats.dump adds them).
        return records

    def _record(self, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        extras = fields.get("additional_kwargs") or {}
        if self.lc_form:
            # As langchain_core.load.dumpd writes them: only fields that differ from the defaults.
            kwargs: dict[str, Any] = {"content": fields["content"], "type": kind}
            if extras:
                kwargs["additional_kwargs"] = extras
            if fields.get("id") is not None:
                kwargs["id"] = fields["id"]
            if kind == "ai":
                kwargs.update(tool_calls=fields.get("tool_calls", []), invalid_tool_calls=[])
            elif kind == "tool":
                kwargs.update(tool_call_id=fields["tool_call_id"], status=fields.get("status", "success"))
            return {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "messages", _CLASS_OF[kind]],
                "kwargs": kwargs,
            }
        data: dict[str, Any] = {
            "content": fields["content"],
            "additional_kwargs": extras,
            "response_metadata": {},
            "type": kind,
            "name": None,
            "id": fields.get("id"),
        }
        if kind == "ai":
            data.update(tool_calls=fields.get("tool_calls", []), invalid_tool_calls=[], usage_metadata=None)
        elif kind == "tool":
            data.update(tool_call_id=fields["tool_call_id"], artifact=None, status=fields.get("status", "success"))
        return data if self.flat else {"type": kind, "data": data}

    def _render(self, message: Message, index: int) -> list[dict[str, Any]]:
        if message.role == "tool" or any(isinstance(b, ToolResultBlock) for b in message.content):
            return self._render_results(message, index)
        parts: list[Any] = []
        calls: list[dict[str, Any]] = []
        if message.reasoning:
            parts.append({"type": "reasoning", "reasoning": message.reasoning})
        for block in message.content:
            if isinstance(block, ToolCallBlock | RemoteToolCallBlock):
                if server_call(block):
                    self.drop(SERVER_CALL)
                elif block.id not in listed_calls(message):  # else written from tools_calls below
                    calls.append({"name": block.name, "args": block.args, "id": block.id, "type": "tool_call"})
                continue
            part = self._part(block, index)
            if part is not None:
                parts.append(part)
        calls.extend(self._listed_calls(message, index))
        kind = {"user": "human", "assistant": "ai", "system": "system"}[message.role]
        if calls and kind != "ai":
            self.drop(f"tool call on a {message.role} message")
            calls = []
        content: Any = parts
        if all(isinstance(p, dict) and set(p) == {"type", "text"} for p in parts) and len(parts) <= 1:
            content = parts[0]["text"] if parts else ""
        fields: dict[str, Any] = {"content": content, "id": self._message_id(message)}
        if kind == "ai":
            fields["tool_calls"] = calls
            signatures = message.metadata.get(SIGNATURES)
            if isinstance(signatures, dict) and signatures:
                # Where ChatGoogleGenerativeAI keeps the thought signature of each call.
                fields["additional_kwargs"] = {GEMINI_SIGNATURES: dict(signatures)}
        return [self._record(kind, fields)]

    def _message_id(self, message: Message) -> str | None:
        """The LangChain message's ``id`` (see :func:`_message_id`); the item ids it has no
        place for are counted lost."""
        for _ in _item_ids(message)[1:]:
            self.drop(ITEM_ID)
        return _message_id(message)

    def _listed_calls(self, message: Message, index: int) -> list[dict[str, Any]]:
        """The calls from ``tools_calls`` as LangChain tool calls."""
        calls: list[dict[str, Any]] = []
        for call in message.tools_calls or ():
            call_id, name, args, problem = call_name_and_args(call)
            if problem:
                self.notes.add(f"{problem}; kept under 'arguments'", index)
            calls.append({"name": name, "args": args, "id": call_id or None, "type": "tool_call"})
        return calls

    def _render_results(self, message: Message, index: int) -> list[dict[str, Any]]:
        # A Responses call output item's own id (fco_...) is the ToolMessage's id.
        items = message.source_in("openai-responses") or ()
        output_ids = {
            item["call_id"]: item["id"]
            for item in items
            if isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("call_id"), str)
        }
        records: list[dict[str, Any]] = []
        texts: list[Any] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                failed = block.is_error or block.status == "failed"
                output = block.output
                parts = isinstance(output, list) and all(isinstance(p, dict) and "type" in p for p in output)
                if not isinstance(output, str) and not parts:
                    # A list of content blocks stays one (a ToolMessage's content may be);
                    # any other value becomes its JSON.
                    output = "" if output is None else _nesting.dumps(output)
                records.append(
                    self._record(
                        "tool",
                        {
                            "content": output,
                            "tool_call_id": block.call_id,
                            "status": "error" if failed else "success",
                            "id": output_ids.get(block.call_id),
                        },
                    )
                )
            else:
                part = self._part(block, index)
                if part is not None:
                    texts.append(part)
        if texts:
            # Text sent beside tool results (Anthropic) is the user speaking: a human message.
            content: Any = texts[0]["text"] if len(texts) == 1 and set(texts[0]) == {"type", "text"} else texts
            records.append(self._record("human", {"content": content}))
        return records

    def _part(self, block: Any, index: int) -> Any:
        if isinstance(block, TextBlock):
            text: dict[str, Any] = {"type": "text", "text": block.text}
            cited = block.annotations
            if cited:
                anthropic = all(isinstance(c, dict) and c.get("type") in _ANTHROPIC_CITATIONS for c in cited)
                text["citations" if anthropic else "annotations"] = cited
            return text
        if isinstance(block, ReasoningBlock):
            details = block.details
            if isinstance(details, dict) and isinstance(details.get("type"), str):
                return details
            if block.summary:
                return {"type": "reasoning", "reasoning": block.summary}
            self.drop("reasoning block without readable text")
            return None
        own = passthrough_value(block, NAME)
        if own is not None:
            return own
        for provider in _KEPT_IN_CONTENT:
            # ChatAnthropic keeps server tool blocks in an AI message's content as they
            # came; ChatOpenAI (Responses) keeps built-in tool calls there too.
            found = passthrough_value(block, provider)
            if isinstance(found, dict) and isinstance(found.get("type"), str):
                return found
        media = media_of(block)
        if media is not None:
            return self._media_part(block, media)
        self.drop(f"{describe_block(block)} block")
        return None

    def _media_part(self, block: Any, media: MediaRef) -> dict[str, Any] | None:
        if isinstance(block, ImageBlock):
            url = data_url(media)
            if url is not None:
                return {"type": "image_url", "image_url": {"url": url}}
        kind = getattr(block, "type", "file")
        kind = kind if kind in ("image", "audio", "video") else "file"
        part: dict[str, Any] = {"type": kind}
        if media.kind == "data" and media.data_base64 is not None:
            part.update(source_type="base64", data=media.data_base64)
        elif media.kind == "file_id" and media.file_id:
            part.update(source_type="id", id=media.file_id)
        elif media.url:
            part.update(source_type="url", url=media.url)
        else:
            self.drop(f"{describe_block(block)} block without data")
            return None
        if media.mime_type:
            part["mime_type"] = media.mime_type
        return part


def _own_records(conversation: Conversation) -> list[Any]:
    """The LangChain records the messages of a converted conversation were read from."""
    return [record for m in conversation.state.context for record in m.source_in(NAME) or ()]


def _message_id(message: Message) -> str | None:
    # Only ids read from a native file are worth keeping; the other adapters (and ctxmgr)
    # leave random uuids there. A Responses message keeps its items' own ids (see _item_ids).
    message_id = message.message_id
    if message.source_format == "openai-responses":
        found = _item_ids(message)
        return found[0] if found else None
    return message_id if isinstance(message_id, str) and message.source_format == "native" else None


ITEM_ID = "Responses item id (a LangChain message has one id)"


def _item_ids(message: Message) -> list[str]:
    """The ids of the Responses items a message was read from (``msg_...``, ``fc_...``):
    a LangChain message has one ``id``, which takes the first; the others are counted lost."""
    records = message.source_in("openai-responses") or ()
    return [r["id"] for r in records if isinstance(r, dict) and isinstance(r.get("id"), str) and r["id"]]
