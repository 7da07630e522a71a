"""Anthropic Messages: a top-level ``system`` plus ``messages`` of user/assistant turns.

Accepted shapes: a request-like object ``{"system", "messages", "model", "tools", ...}``
(any subset that has ``messages``), a bare list of messages, or JSONL with one message
per line. Converted, the request's tools, ``tool_choice``, cap and stop sequences take
the target's spelling (:mod:`ctxmgr.formats._anthropic_request`). Each message is read
into one model message that keeps its record:

* a user message carrying ``tool_result`` blocks becomes a ``tool`` message (its results
  as ``ToolResultBlock(call_id=tool_use_id)``, any text beside them kept as text);
* ``tool_use`` blocks become OpenAI-shaped ``tools_calls`` (``arguments`` is
  ``json.dumps(input)``) so the managers pair calls and results;
* ``thinking`` / ``redacted_thinking`` blocks stay in their assistant message (as
  ``ReasoningBlock`` holding the signed block), so they are kept or dropped with it;
* a text block's ``citations`` are its ``TextBlock``'s ``annotations``;
* blocks the model has no class for (server tool use, web search results, ...) stay in
  the record, and in a passthrough data block for conversions.

The top-level ``system`` (a string or text blocks, ``cache_control`` included) becomes
one system message whose source is that value; it is written back to ``system``, never
into ``messages``. A summary goes, by default, into ``system`` as an extra text block (a
string system stays a string: the summary is appended after a blank line). With
``--summary-as message`` it is a text block at the start of the first message: merged
into the first user message when there is one, so user and assistant turns still
alternate, else a user message of its own. Reading finds either and lifts it back; one
read from the first user turn keeps that turn's authority (it is written back to a user
turn, never into ``system``, whatever ``--summary-as`` says, with a warning). A header
anywhere else (a later message, an assistant turn) marks nothing: the message is read as
it is and a warning names it. A list
or JSONL file has no ``system``: there the summary takes the message slot, and a system
prompt converted from another format is written as a ``{"role": "system"}`` message, which
the Messages API accepts (``anthropic.types.SystemMessageParam``) and which is read back
in place.
"""

from __future__ import annotations

from typing import Any

from ctxmgr import _nesting
from ctxmgr.errors import InputError
from ctxmgr.formats._anthropic_request import REQUEST
from ctxmgr.formats._base import (
    SUMMARY_HEADER,
    Conversation,
    Layout,
    forged_summary,
    record_name,
    split_summary_text,
)
from ctxmgr.formats._carry import carry_record_keys
from ctxmgr.formats._detection.anthropic import (
    DECLARATION,
    ROLES as _ROLES,
    score as detection_score,
)
from ctxmgr.formats._interop import (
    PASSTHROUGH_MIME,
    REMOVED,
    SERVER_CALL,
    Locator,
    NotedWriter,
    SystemSlot,
    call_name_and_args,
    data_url,
    describe_block,
    lift_leading_summary,
    listed_calls,
    media_of,
    message_carries_header,
    openai_call,
    parse_data_url,
    passthrough,
    passthrough_value,
    read_guarded,
    result_of,
    safe_id,
    server_call,
    summary_text,
    type_name,
)
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import (
    DataBlock,
    DocumentBlock,
    ImageBlock,
    MediaRef,
    ReasoningBlock,
    RemoteToolCallBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxmgr.state.message import Message, Role

__all__ = ["AnthropicFormat"]

NAME = "anthropic"

_RESULT_CONTENT_TYPES = frozenset({"text", "image", "document", "search_result", "tool_reference"})
_CITATIONS = frozenset(
    {
        "char_location",
        "page_location",
        "content_block_location",
        "web_search_result_location",
        "search_result_location",
    }
)
"""Citation types of Anthropic text blocks (what ``citations`` may hold)."""
_ABSENT: Any = object()


class AnthropicFormat:
    """Reads and writes Anthropic Messages API conversations."""

    name = NAME
    user_turn_summary = True
    list_key = "messages"
    request = REQUEST

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """The keys of a request or dataset line beside ``messages`` and ``system``."""
        if isinstance(container, dict) and "messages" in container:
            return {k: v for k, v in container.items() if k not in ("messages", "system")}
        return {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: _Reader(source).read(value, layout), source, "Anthropic")

    def write(self, conversation: Conversation) -> Any:
        return _Writer(conversation).write()


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.summaries: list[str] = []
        self.from_user_turn = False
        self.warnings: list[str] = []

    def read(self, value: Any, layout: Layout) -> Conversation:
        context: list[Message] = []
        if isinstance(value, dict):
            messages = value.get("messages")
            if not isinstance(messages, list):
                raise InputError(
                    f"messages: expected a list of messages, got {type_name(messages)}", source=self.source
                )
            system = value.get("system")
            if system is not None:
                context.extend(self._system(system, lift=DECLARATION.container_marked(value)))
            loc = Locator(self.source, messages, "messages")
        elif isinstance(value, list):
            messages = value
            loc = Locator(self.source, messages, "")
        else:
            raise InputError(
                f"expected an object with 'messages' or a list of messages, got {type_name(value)}",
                source=self.source,
            )
        first_turn = next(
            (i for i, r in enumerate(messages) if not (isinstance(r, dict) and r.get("role") == "system")), None
        )
        for index, record in enumerate(messages):
            # Only a record the declaration finds marked holds a summary or a forged one:
            # the outline reader declines exactly those (see ctxmgr.formats._declaration).
            marked = DECLARATION.marked(record)
            if index == first_turn and marked:
                record = self._lift_summary(record)
                if record is _ABSENT:
                    continue
            elif marked and (first_turn is None or index < first_turn):
                # A leading system-role message holding only the marked text: how a summary
                # is written in a file that is also valid OpenAI chat (it has system
                # authority already).
                lifted = _system_role_summary(record)
                if lifted is not None:
                    self.summaries.append(lifted)
                    continue
            message = self._message(record, loc, index)
            if marked and message_carries_header(message):
                why = _why(message.role, index == first_turn)
                self.warnings.append(forged_summary(record_name(messages, index), why))
            context.append(message)
        summary = "\n\n".join(self.summaries) if self.summaries else None
        state = AgentState(context=context, context_summary=summary)
        return Conversation(
            state=state,
            format=NAME,
            container=value,
            layout=layout,
            warnings=self.warnings,
            summary_from_user_turn=self.from_user_turn,
        )

    def _system(self, system: Any, *, lift: bool) -> list[Message]:
        """The system prompt's message; a summary in it is lifted only if ``lift`` (the
        declaration finds the prompt marked)."""
        if isinstance(system, str):
            kept, lifted = _split_string_summary(system) if lift else (system, None)
            if lifted is not None:
                self.summaries.append(lifted)
            if kept is _ABSENT:
                return []
            blocks: list[Any] = [TextBlock(text=kept)] if kept else []
            return [Message(role="system", content=blocks).with_source([SystemSlot(kept, ("system",))], NAME)]
        if not isinstance(system, list):
            raise InputError(
                f"system: expected a string or a list of text blocks, got {type_name(system)}", source=self.source
            )
        kept_blocks: list[Any] = []
        for index, block in enumerate(system):
            if not isinstance(block, dict) or not isinstance(block.get("text"), str):
                raise InputError(f"system[{index}]: expected a text block with a 'text' string", source=self.source)
            lifted = split_summary_text(block["text"]) if lift else None
            if lifted is not None:
                self.summaries.append(lifted)
            else:
                kept_blocks.append(block)
        if system and not kept_blocks:
            return []
        texts: list[Any] = [TextBlock(text=b["text"], annotations=_citations(b)) for b in kept_blocks]
        message = Message(role="system", content=texts)
        return [message.with_source([SystemSlot(kept_blocks, ("system",))], NAME)]

    def _lift_summary(self, record: Any) -> Any:
        """The first record without a summary ctxmgr put there (``_ABSENT`` if it was only that)."""
        if not isinstance(record, dict) or record.get("role") != "user":
            return record
        content = record.get("content")
        if isinstance(content, str):
            lifted = split_summary_text(content)
            if lifted is None:
                return record
            self.summaries.append(lifted)
            self.from_user_turn = True
            return _ABSENT
        rest, lifted = lift_leading_summary(record, "content", _text_block_text)
        if lifted is not None:
            self.summaries.append(lifted)
            self.from_user_turn = True
        return _ABSENT if rest is REMOVED else rest

    def _message(self, record: Any, loc: Locator, index: int) -> Message:
        if not isinstance(record, dict):
            raise loc.error(index, "", f"expected a message object, got {type_name(record)}")
        role = record.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            raise loc.error(index, "role", f"expected 'user' or 'assistant', got {role!r}")
        if "content" not in record:
            raise loc.error(index, "content", "required field is missing")
        content = record["content"]
        if isinstance(content, str):
            blocks: list[Any] = [TextBlock(text=content)] if content else []
            return Message(role=_ROLES[role], content=blocks).with_source([record], NAME)
        if not isinstance(content, list):
            raise loc.error(index, "content", f"expected a string or a list of blocks, got {type_name(content)}")
        blocks = []
        calls: list[dict[str, Any]] = []
        has_result = False
        for position, block in enumerate(content):
            where = f"content[{position}]"
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise loc.error(index, where, "expected a content block object with a 'type'")
            kind = block["type"]
            if kind == "tool_result":
                blocks.append(self._result(block, loc, index, where))
                has_result = True
            elif kind == "tool_use" and role == "assistant":
                calls.append(self._call(block, loc, index, where))
            elif role == "system" and kind != "text":
                raise loc.error(index, where, f"a system message holds text blocks only, got {kind!r}")
            else:
                blocks.append(self._block(block, loc, index, where))
        message_role: Role = "tool" if has_result and role == "user" else _ROLES[role]
        message = Message(role=message_role, content=blocks, tools_calls=calls or None)
        return message.with_source([record], NAME)

    def _call(self, block: dict[str, Any], loc: Locator, index: int, where: str) -> dict[str, Any]:
        call_id, name, arguments = block.get("id"), block.get("name"), block.get("input", {})
        if not isinstance(call_id, str) or not call_id:
            raise loc.error(index, f"{where}.id", "a tool_use block needs a non-empty string 'id'")
        if not isinstance(name, str):
            raise loc.error(index, f"{where}.name", f"expected a string, got {type_name(name)}")
        if not isinstance(arguments, dict):
            raise loc.error(index, f"{where}.input", f"expected an object, got {type_name(arguments)}")
        return openai_call(call_id, name, arguments)

    def _result(self, block: dict[str, Any], loc: Locator, index: int, where: str) -> ToolResultBlock:
        call_id = block.get("tool_use_id")
        if not isinstance(call_id, str) or not call_id:
            raise loc.error(index, f"{where}.tool_use_id", "a tool_result block needs a non-empty string 'tool_use_id'")
        is_error = block.get("is_error", False)
        if not isinstance(is_error, bool) and is_error is not None:
            raise loc.error(index, f"{where}.is_error", f"expected a boolean, got {type_name(is_error)}")
        content = block.get("content")
        output: Any
        if content is None:
            output = ""
        elif isinstance(content, str):
            output = content
        elif isinstance(content, list):
            for position, part in enumerate(content):
                if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                    raise loc.error(
                        index, f"{where}.content[{position}]", "expected a content block object with a 'type'"
                    )
            texts = [p.get("text") for p in content]
            if all(p["type"] == "text" and isinstance(t, str) for p, t in zip(content, texts, strict=True)):
                output = "\n".join(t for t in texts if isinstance(t, str))
            else:
                output = content
        else:
            raise loc.error(
                index, f"{where}.content", f"expected a string or a list of blocks, got {type_name(content)}"
            )
        return ToolResultBlock(call_id=call_id, output=output, is_error=bool(is_error))

    def _block(self, block: dict[str, Any], loc: Locator, index: int, where: str) -> Any:
        kind = block["type"]
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise loc.error(index, f"{where}.text", "a text block needs a 'text' string")
            citations = block.get("citations")
            return TextBlock(text=block["text"], annotations=citations if isinstance(citations, list) else [])
        if kind == "thinking":
            thinking = block.get("thinking")
            return ReasoningBlock(summary=thinking if isinstance(thinking, str) else None, details=block)
        if kind == "redacted_thinking":
            return ReasoningBlock(details=block)
        if kind in ("image", "document"):
            # A document's title and context are text the summarizer is shown.
            named = {k: block[k] for k in ("title", "context") if kind == "document" and isinstance(block.get(k), str)}
            media = _media(block.get("source"))
            if media is not None:
                return ImageBlock(media=media) if kind == "image" else DocumentBlock(media=media, **named)
            src = block.get("source")
            if kind == "document" and isinstance(src, dict) and src.get("type") == "text":
                data = src.get("data")
                return DocumentBlock(text=data if isinstance(data, str) else None, **named)
        return passthrough(block, NAME)


def _media(src: Any) -> MediaRef | None:
    if not isinstance(src, dict):
        return None
    kind = src.get("type")
    if kind == "base64" and isinstance(src.get("data"), str):
        mime = src.get("media_type")
        return MediaRef(kind="data", data_base64=src["data"], mime_type=mime if isinstance(mime, str) else None)
    if kind == "url" and isinstance(src.get("url"), str):
        return MediaRef(kind="url", url=src["url"])
    if kind == "file" and isinstance(src.get("file_id"), str):
        return MediaRef(kind="file_id", file_id=src["file_id"])
    return None


def _citations(block: dict[str, Any]) -> list[Any]:
    citations = block.get("citations")
    return citations if isinstance(citations, list) else []


def _system_role_summary(record: Any) -> str | None:
    """The summary in ``{"role": "system", "content": "<header>..."}`` (or one text block)."""
    if not isinstance(record, dict) or record.get("role") != "system" or set(record) != {"role", "content"}:
        return None
    content = record["content"]
    if isinstance(content, list) and len(content) == 1:
        content = _text_block_text(content[0])
    return split_summary_text(content) if isinstance(content, str) else None


def _why(role: str, first_turn: bool) -> str:
    """Why a message with the header is no summary (see :func:`forged_summary`)."""
    if role == "user" and not first_turn:
        return "is a user message after the first turn"
    if role == "user":
        return "is not the first block of the first user turn"
    if role == "tool":
        return "is a tool result"
    return f"is {'an' if role == 'assistant' else 'a'} {role} message"


def _split_string_summary(system: str) -> tuple[Any, str | None]:
    """``(system without the summary, summary)``; ``_ABSENT`` if it held only the summary."""
    lifted = split_summary_text(system)
    if lifted is not None:
        return _ABSENT, lifted
    marker = f"\n\n{SUMMARY_HEADER}"
    at = system.find(marker)
    if at == -1:
        return system, None
    return system[:at], split_summary_text(system[at + 2 :])


class _Writer(NotedWriter):
    name = NAME
    messages_noun = "Anthropic messages"

    def __init__(self, conversation: Conversation) -> None:
        super().__init__(conversation)
        self.same = conversation.format == NAME

    def _write(self) -> Any:
        conversation = self.conversation
        container = conversation.container
        # Converted from another format, a JSON document becomes a request object (its
        # other keys converted by formats.dump, see _request); back from native, the
        # shape it had (a list keeps its system prompts as system-role messages).
        keep_shape = self.same or conversation.origin == NAME
        as_document = isinstance(container, dict) if keep_shape else conversation.layout == "document"
        system_pieces: list[Any] = []
        records: list[Any] = []
        merged_tool: dict[str, Any] | None = None
        seen_turn = False
        for index, message in enumerate(conversation.state.context):
            source = message.source_in(NAME)
            if message.role == "system" and (source is None or isinstance(source[0], SystemSlot)):
                if source is not None:
                    system_pieces.append(source[0].value)
                else:
                    if seen_turn:
                        self.notes.add("a system message after the first turn moved to 'system'", index)
                    system_pieces.append(self._system_text(message, index))
                continue
            seen_turn = True
            if source is not None:
                records.extend(source)
                merged_tool = None
                continue
            record = carry_record_keys(message.edited_source_in(NAME), self._render(message, index))
            if message.role == "tool" and merged_tool is not None:
                # Anthropic wants every result of one assistant turn in the next user message.
                results = [b for b in merged_tool["content"] if b.get("type") == "tool_result"]
                others = [b for b in merged_tool["content"] if b.get("type") != "tool_result"]
                new = record["content"] if isinstance(record["content"], list) else []
                results += [b for b in new if b.get("type") == "tool_result"]
                others += [b for b in new if b.get("type") != "tool_result"]
                merged_tool["content"] = results + others
                continue
            records.append(record)
            merged_tool = record if message.role == "tool" else None
        return self._assemble(container, as_document, system_pieces, records)

    def _assemble(self, container: Any, as_document: bool, system_pieces: list[Any], records: list[Any]) -> Any:
        conversation = self.conversation
        summary = conversation.state.context_summary
        slot = conversation.summary_as or "system"
        if conversation.summary_from_user_turn and summary:
            # Read from a user turn, the summary has a user turn's authority: it goes back
            # to one, whatever was asked.
            if slot == "system" and conversation.summary_as is not None:
                self.notes.add(
                    "the summary was read from a user turn; it stays in the first user turn, not in 'system'"
                )
            slot = "message"
        if not as_document:
            # A list has no top-level 'system': use system-role messages, which the
            # Messages API accepts in 'messages' (anthropic.types.SystemMessageParam).
            records = [{"role": "system", "content": piece} for piece in system_pieces if piece] + records
            system_pieces = []
            if summary and slot == "system":
                if conversation.summary_as == "system":
                    self.notes.add("a list of messages has no 'system'; the summary is put in the first message")
                slot = "message"
        if summary and slot == "message":
            records = _with_summary_message(records, summary)
        if not as_document:
            return records
        system_value = _join_system(system_pieces, summary if slot == "system" else None)
        out: dict[str, Any] = dict(container) if self.same and isinstance(container, dict) else {}
        return _with_system_and_messages(out, system_value, records)

    def _system_text(self, message: Message, index: int) -> str:
        texts: list[str] = []
        for block in message.content:
            if isinstance(block, TextBlock):
                texts.append(block.text)
                for _ in block.annotations:
                    self.drop("citation in a system prompt converted from another format")
            else:
                self.drop(f"{describe_block(block)} block in a system message")
        return "".join(texts)

    def _render(self, message: Message, index: int) -> dict[str, Any]:
        if message.reasoning:
            self.drop("reasoning text (Anthropic has no place for unsigned reasoning)")
        leading: list[Any] = []  # thinking first (assistant) / tool results first (user)
        blocks: list[Any] = []
        trailing: list[Any] = []  # tool_use blocks
        answered = {b.call_id for b in message.content if isinstance(b, ToolResultBlock)}
        inside: dict[str, list[Any]] = {}  # media read from inside a result (see IN_RESULT)
        for block in message.content:
            call_id = result_of(block)
            if call_id in answered:
                rendered = self._block(block, index)
                if rendered is not None:
                    inside.setdefault(safe_id(call_id), []).append(rendered)
            elif isinstance(block, ReasoningBlock):
                rendered = self._reasoning(block, message, index)
                if rendered is not None:
                    leading.append(rendered)
            elif isinstance(block, ToolResultBlock):
                leading.append(self._tool_result(block))
            elif isinstance(block, ToolCallBlock | RemoteToolCallBlock):
                tool_use = self._tool_use_block(block, message)
                if tool_use is not None:
                    trailing.append(tool_use)
            else:
                rendered = self._block(block, index)
                if rendered is not None:
                    blocks.append(rendered)
        if message.tools_calls:  # most messages have none: spare them the call
            trailing.extend(self._listed_tool_uses(message, index))
        _nest_result_media(leading, inside)
        return _record(message, leading + blocks + trailing)

    def _tool_use_block(self, block: ToolCallBlock | RemoteToolCallBlock, message: Message) -> dict[str, Any] | None:
        """A tool call held as a content block, as a tool_use block; None when written elsewhere or dropped."""
        if block.id in listed_calls(message):
            return None  # written from tools_calls
        if server_call(block):
            self.drop(SERVER_CALL)
            return None
        if message.role != "assistant":
            self.drop("tool call outside an assistant message")
            return None
        return {"type": "tool_use", "id": safe_id(block.id), "name": block.name, "input": block.args}

    def _listed_tool_uses(self, message: Message, index: int) -> list[dict[str, Any]]:
        """The calls from ``tools_calls`` as tool_use blocks; only an assistant message can hold them."""
        tool_uses: list[dict[str, Any]] = []
        for call in message.tools_calls or ():
            call_id, name, args, problem = call_name_and_args(call)
            if problem:
                self.notes.add(f"{problem}; kept under 'arguments'", index)
            if message.role != "assistant":
                self.drop(f"tool call on a {message.role} message")
                continue
            tool_uses.append({"type": "tool_use", "id": safe_id(call_id), "name": name, "input": args})
        return tool_uses

    def _reasoning(self, block: ReasoningBlock, message: Message, index: int) -> Any:
        details = block.details
        if (
            message.role == "assistant"
            and isinstance(details, dict)
            and details.get("type")
            in (
                "thinking",
                "redacted_thinking",
            )
        ):
            return details
        self.drop("reasoning block (Anthropic takes only its own signed thinking blocks)")
        return None

    def _tool_result(self, block: ToolResultBlock) -> dict[str, Any]:
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": safe_id(block.call_id)}
        output = block.output
        blocks = (
            isinstance(output, list)
            and output
            and all(isinstance(p, dict) and p.get("type") in _RESULT_CONTENT_TYPES for p in output)
        )
        if isinstance(output, str) or blocks:
            result["content"] = output
        elif output is not None:
            result["content"] = _nesting.dumps(output)
        if block.is_error or block.status == "failed":
            result["is_error"] = True
        return result

    def _block(self, block: Any, index: int) -> Any:
        if isinstance(block, TextBlock):
            cited = [c for c in block.annotations if isinstance(c, dict) and c.get("type") in _CITATIONS]
            for _ in range(len(block.annotations) - len(cited)):
                self.drop("citation of a kind Anthropic has not")
            return {"type": "text", "text": block.text, **({"citations": cited} if cited else {})}
        own = passthrough_value(block, NAME)
        if own is not None:
            return own
        media = media_of(block)
        extra = (block.model_extra or {}) if isinstance(block, DocumentBlock) else {}
        # A document's title and context (read from this format or another) go back with it.
        named = {k: extra[k] for k in ("title", "context") if isinstance(extra.get(k), str)}
        if isinstance(block, DocumentBlock) and media is None and block.text is not None:
            source = {"type": "text", "media_type": "text/plain", "data": block.text}
            return {"type": "document", "source": source, **named}
        if media is not None:
            kind = "image" if isinstance(block, ImageBlock) else "document"
            if isinstance(block, DataBlock) and block.mime_type != PASSTHROUGH_MIME:
                kind = "image" if block.mime_type.startswith("image/") else "document"
            mime = media.mime_type or ""
            if not isinstance(block, ImageBlock | DocumentBlock | DataBlock) or (
                kind == "document" and mime and mime not in ("application/pdf", "text/plain")
            ):
                self.drop(f"{describe_block(block)} block ({mime or 'media'})")
                return None
            src = _media_source(media)
            if src is not None:
                return {"type": kind, "source": src, **(named if kind == "document" else {})}
        self.drop(f"{describe_block(block)} block")
        return None


def _media_source(media: MediaRef) -> dict[str, Any] | None:
    if media.kind == "data" and media.data_base64 is not None:
        mime = media.mime_type or "application/octet-stream"
        return {"type": "base64", "media_type": mime, "data": media.data_base64}
    if media.kind == "file_id" and media.file_id:
        return {"type": "file", "file_id": media.file_id}
    url = data_url(media)
    if url is None:
        return None
    if url.startswith("data:"):
        inline = parse_data_url(url)
        if inline.kind == "data":
            return _media_source(inline)
    return {"type": "url", "url": url}


def _join_system(pieces: list[Any], summary: str | None) -> Any:
    """The ``system`` value for ``pieces`` (strings or block lists) plus the summary."""
    if not pieces and summary is None:
        return _ABSENT
    if all(isinstance(p, str) for p in pieces):
        text = "\n\n".join(p for p in pieces if p)
        if summary is None:
            return pieces[0] if len(pieces) == 1 else text
        return f"{text}\n\n{summary_text(summary)}" if text else summary_text(summary)
    blocks: list[Any] = []
    for piece in pieces:
        if isinstance(piece, str):
            if piece:
                blocks.append({"type": "text", "text": piece})
        else:
            blocks.extend(piece)
    if summary is not None:
        blocks.append({"type": "text", "text": summary_text(summary)})
    return blocks


def _with_summary_message(records: list[Any], summary: str) -> list[Any]:
    """Records with the summary as the first block of the first user message after the
    system-role messages (merged into it when it is a plain user message)."""
    block = {"type": "text", "text": summary_text(summary)}
    at = 0
    while at < len(records) and isinstance(records[at], dict) and records[at].get("role") == "system":
        at += 1
    head, records = records[:at], records[at:]
    return head + _prepend_summary(records, block)


def _prepend_summary(records: list[Any], block: dict[str, Any]) -> list[Any]:
    if records:
        first = records[0]
        content = first.get("content") if isinstance(first, dict) else None
        has_results = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )
        plain_user = isinstance(first, dict) and first.get("role") == "user" and not has_results
        if plain_user and isinstance(content, str | list):
            merged = dict(first)
            if isinstance(content, str):
                merged["content"] = [block, {"type": "text", "text": content}] if content else [block]
            else:
                merged["content"] = [block, *content]
            return [merged, *records[1:]]
    return [{"role": "user", "content": [block]}, *records]


def _text_block_text(block: Any) -> Any:
    return block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None


def _with_system_and_messages(out: dict[str, Any], system_value: Any, records: list[Any]) -> dict[str, Any]:
    """The document with its 'system' (or none, for ``_ABSENT``) and its 'messages'."""
    if system_value is _ABSENT:
        if out.get("system") is not None:
            out.pop("system")
        out["messages"] = records
        return out
    if "system" in out or "messages" not in out:
        out["system"] = system_value
        out["messages"] = records
        return out
    # Put a new 'system' right before 'messages', where people expect it.
    rebuilt: dict[str, Any] = {}
    for key, item in out.items():
        if key == "messages":
            rebuilt["system"] = system_value
            rebuilt["messages"] = records
        else:
            rebuilt[key] = item
    return rebuilt


def _nest_result_media(leading: list[Any], inside: dict[str, list[Any]]) -> None:
    """Puts the media read from inside a tool result (see IN_RESULT) back into that result's content."""
    for result in leading:
        nested = inside.get(result.get("tool_use_id")) if result.get("type") == "tool_result" else None
        if nested:
            output = result.get("content")
            head = [{"type": "text", "text": output}] if isinstance(output, str) and output else []
            result["content"] = [*(output if isinstance(output, list) else head), *nested]


def _record(message: Message, content: list[Any]) -> dict[str, Any]:
    role = "assistant" if message.role == "assistant" else "user"
    # A lone text block is written as a plain string, the shorter form people write by hand.
    if len(content) == 1 and message.role != "tool" and set(content[0]) == {"type", "text"}:
        return {"role": role, "content": content[0]["text"]}
    return {"role": role, "content": content}
