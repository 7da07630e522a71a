"""Gemini: ``contents[{role: "user" | "model", parts}]`` plus ``systemInstruction``.

Accepted shapes: a request-like object ``{"contents", "systemInstruction",
"generationConfig", "tools", ...}`` (the Python SDK's ``system_instruction`` may also sit
in ``config``), a bare list of contents, or JSONL with one content per line. Both the
REST API's camelCase (``functionCall``, ``inlineData``, ``thoughtSignature``) and the
Python SDK's snake_case (``function_call``, ``inline_data``, ``thought_signature``) are
read; what ctxmgr writes uses the spelling the file uses (camelCase for a new file).
Converted, ``functionDeclarations``, ``toolConfig`` and the ``generationConfig`` settings
other formats have take the target's spelling (:mod:`ctxmgr.formats._gemini_request`).

Each content becomes one model message that keeps its record: ``functionCall`` parts
become OpenAI-shaped ``tools_calls``; a user content carrying ``functionResponse`` parts
becomes a ``tool`` message (the media of a response's own ``parts`` follow its result as
blocks tagged as inside it, ``IN_RESULT``, and are written back there); an
``audioTranscription`` is its audio's transcript; ``thought: true`` parts stay in their
message as ``ReasoningBlock`` (and ``thoughtSignature`` stays in the record; a function call's
signature is also kept in ``metadata["gemini_thought_signatures"]`` so a conversion to
another format and back still has it). Calls and responses
pair by ``id``; without ids the n-th response of function ``X`` answers the n-th call of
``X``, and both get the same synthesized id (``gemini_X_0``...).

The system instruction becomes one system message written back to where it was read.
A summary goes, by default, into the system instruction as an extra text part (a string
instruction stays a string, with the summary after a blank line); ``--summary-as
message`` puts it as a text part at the start of the first user content (a list of
contents has no system instruction: there that is the only slot). Reading finds either
and lifts it back; one read from the first content keeps a user turn's authority (it is
written back to a user turn, never into the system instruction, whatever
``--summary-as`` says, with a warning). A header anywhere else (a later content, a model
turn) marks nothing: the content is read as it is and a warning names it.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.errors import InputError
from ctxmgr.formats._base import (
    SUMMARY_HEADER,
    Conversation,
    Layout,
    forged_summary,
    record_name,
    split_summary_text,
)
from ctxmgr.formats._carry import carry_record_keys
from ctxmgr.formats._detection.gemini import (
    DECLARATION,
    ROLES as _ROLES,
    score as detection_score,
    system_path as _system_path,
)
from ctxmgr.formats._gemini_request import REQUEST
from ctxmgr.formats._gemini_spelling import (
    SNAKE as _SNAKE,
    get as _get,
    spelling as _spelling,
    text_or_none as _str,
)
from ctxmgr.formats._interop import (
    REMOVED,
    SERVER_CALL,
    IdPairer,
    Locator,
    NotedWriter,
    SystemSlot,
    call_name_and_args,
    describe_block,
    in_result,
    lift_leading_summary,
    listed_calls,
    media_block,
    media_of,
    message_carries_header,
    openai_call,
    parse_data_url,
    passthrough,
    passthrough_value,
    read_guarded,
    result_of,
    server_call,
    summary_text,
    type_name,
)
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import (
    AudioBlock,
    MediaRef,
    ReasoningBlock,
    RemoteToolCallBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxmgr.state.message import Message, Role

__all__ = ["SIGNATURES", "GeminiFormat"]

NAME = "gemini"

SIGNATURES = "gemini_thought_signatures"
"""``Message.metadata`` key: the ``thoughtSignature`` of each function call, by call id.

Kept so a Gemini conversation converted to another format (native, for editing) and back
still sends each call's signature, which Gemini requires for the calls of the current
turn. The record keeps it anyway when the format does not change."""

_ABSENT: Any = object()


class GeminiFormat:
    """Reads and writes Gemini ``generateContent`` conversations (REST or Python SDK)."""

    name = NAME
    user_turn_summary = True
    list_key = "contents"
    request = REQUEST

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """The keys of a request or dataset line beside ``contents`` and the system
        instruction (which may sit in the SDK's ``config``)."""
        if not isinstance(container, dict) or "contents" not in container:
            return {}
        path = _system_path(container)
        out = {k: v for k, v in container.items() if k != "contents" and (k,) != path}
        if path is not None and len(path) == 2 and isinstance(out.get(path[0]), dict):
            inner = {k: v for k, v in out[path[0]].items() if k != path[1]}
            if inner:
                out[path[0]] = inner
            else:
                del out[path[0]]
        return out

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: _Reader(source).read(value, layout), source, "Gemini")

    def write(self, conversation: Conversation) -> Any:
        return _Writer(conversation).write()


def _lookup(value: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = value
    for key in path:
        node = node[key]
    return node


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.summaries: list[str] = []
        self.from_user_turn = False
        self.warnings: list[str] = []
        self.pairer = IdPairer("gemini")

    def read(self, value: Any, layout: Layout) -> Conversation:
        context: list[Message] = []
        if isinstance(value, dict):
            contents = value.get("contents")
            if not isinstance(contents, list):
                raise InputError(
                    f"contents: expected a list of contents, got {type_name(contents)}", source=self.source
                )
            path = _system_path(value)
            if path is not None:
                context.extend(self._system(_lookup(value, path), path, lift=DECLARATION.container_marked(value)))
            loc = Locator(self.source, contents, "contents")
        elif isinstance(value, list):
            contents = value
            loc = Locator(self.source, contents, "")
        else:
            raise InputError(
                f"expected an object with 'contents' or a list of contents, got {type_name(value)}", source=self.source
            )
        for index, record in enumerate(contents):
            # Only a record the declaration finds marked holds a summary or a forged one:
            # the outline reader declines exactly those (see ctxmgr.formats._declaration).
            marked = DECLARATION.marked(record)
            if index == 0 and marked:
                record = self._lift_summary(record)
                if record is _ABSENT:
                    continue
            message = self._content(record, loc, index)
            if marked and message_carries_header(message):
                self.warnings.append(forged_summary(record_name(contents, index, "content"), _why(message.role, index)))
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

    def _system(self, system: Any, path: tuple[str, ...], *, lift: bool) -> list[Message]:
        """The system instruction's message; a summary in it is lifted only if ``lift``
        (the declaration finds the instruction marked)."""
        where = ".".join(path)
        if isinstance(system, str):
            lifted = split_summary_text(system) if lift else None
            if lifted is not None:
                self.summaries.append(lifted)
                return []
            at = system.find(f"\n\n{SUMMARY_HEADER}") if lift else -1
            if at != -1:
                self.summaries.append(split_summary_text(system[at + 2 :]) or "")
                system = system[:at]
            blocks: list[Any] = [TextBlock(text=system)] if system else []
            return [Message(role="system", content=blocks).with_source([SystemSlot(system, path)], NAME)]
        if isinstance(system, dict):
            parts = system.get("parts")
            if not isinstance(parts, list):
                raise InputError(f"{where}.parts: expected a list of parts, got {type_name(parts)}", source=self.source)
            kept = self._system_parts(parts, f"{where}.parts", lift)
            if parts and not kept and set(system) <= {"parts", "role"}:
                return []
            value: Any = dict(system)
            value["parts"] = kept
        elif isinstance(system, list):
            kept = self._system_parts(system, where, lift)
            if system and not kept:
                return []
            value = kept
        else:
            raise InputError(
                f"{where}: expected a string or an object with 'parts', got {type_name(system)}", source=self.source
            )
        texts: list[Any] = []
        for part in kept:
            text = part if isinstance(part, str) else part.get("text")
            if isinstance(text, str):
                texts.append(TextBlock(text=text))
        return [Message(role="system", content=texts).with_source([SystemSlot(value, path)], NAME)]

    def _system_parts(self, parts: list[Any], where: str, lift: bool) -> list[Any]:
        kept: list[Any] = []
        for index, part in enumerate(parts):
            if not isinstance(part, dict | str):
                raise InputError(f"{where}[{index}]: expected a part object or a string", source=self.source)
            text = part if isinstance(part, str) else part.get("text")
            lifted = split_summary_text(text) if lift and isinstance(text, str) else None
            if lifted is not None:
                self.summaries.append(lifted)
            else:
                kept.append(part)
        return kept

    def _lift_summary(self, record: Any) -> Any:
        if not isinstance(record, dict) or record.get("role", "user") != "user":
            return record
        rest, lifted = lift_leading_summary(record, "parts", _plain_part_text)
        if lifted is not None:
            self.summaries.append(lifted)
            self.from_user_turn = True
        return _ABSENT if rest is REMOVED else rest

    def _content(self, record: Any, loc: Locator, index: int) -> Message:
        role, parts = _role_and_parts(record, loc, index)
        blocks: list[Any] = []
        calls: list[dict[str, Any]] = []
        signatures: dict[str, str] = {}
        has_result = False
        for position, part in enumerate(parts):
            where = f"parts[{position}]"
            if not isinstance(part, dict):
                raise loc.error(index, where, f"expected a part object, got {type_name(part)}")
            call = _get(part, "functionCall")
            response = _get(part, "functionResponse")
            if call is not None:
                calls.append(self._call(call, loc, index, where))
                signature = _get(part, "thoughtSignature")
                if isinstance(signature, str):
                    signatures[calls[-1]["id"]] = signature
            elif response is not None:
                result = self._response(response, loc, index, where)
                blocks.append(result)
                blocks.extend(self._response_parts(response, result.call_id, loc, index, where))
                has_result = True
            else:
                blocks.append(self._part(part, loc, index, where))
        message = Message(role=_message_role(role, has_result), content=blocks, tools_calls=calls or None)
        if signatures:
            message.metadata[SIGNATURES] = signatures
        return message.with_source([record], NAME)

    def _call(self, call: Any, loc: Locator, index: int, where: str) -> dict[str, Any]:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise loc.error(index, f"{where}.functionCall", "expected an object with a 'name' string")
        args = call.get("args")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise loc.error(index, f"{where}.functionCall.args", f"expected an object, got {type_name(args)}")
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise loc.error(index, f"{where}.functionCall.id", f"expected a string, got {type_name(call_id)}")
        return openai_call(self.pairer.call(call["name"], call_id), call["name"], args)

    def _response(self, response: Any, loc: Locator, index: int, where: str) -> ToolResultBlock:
        if not isinstance(response, dict) or not isinstance(response.get("name"), str):
            raise loc.error(index, f"{where}.functionResponse", "expected an object with a 'name' string")
        call_id = response.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise loc.error(index, f"{where}.functionResponse.id", f"expected a string, got {type_name(call_id)}")
        body = response.get("response")
        output: Any = body
        is_error = False
        if body is None:
            output = ""
        elif isinstance(body, dict) and len(body) == 1 and ("output" in body or "error" in body):
            is_error = "error" in body
            output = body.get("error") if is_error else body.get("output")
        return ToolResultBlock(call_id=self.pairer.result(response["name"], call_id), output=output, is_error=is_error)

    def _response_parts(
        self, response: dict[str, Any], call_id: str, loc: Locator, index: int, where: str
    ) -> list[Any]:
        """The media a function response carries beside its ``response`` (its ``parts``),
        as blocks tagged as inside the result for ``call_id`` (see :data:`IN_RESULT`)."""
        parts = response.get("parts")
        if not isinstance(parts, list):
            return []
        blocks: list[Any] = []
        for position, part in enumerate(parts):
            if not isinstance(part, dict):
                raise loc.error(index, f"{where}.functionResponse.parts[{position}]", "expected a part object")
            blocks.append(in_result(self._part(part, loc, index, where), call_id, NAME))
        return blocks

    def _part(self, part: dict[str, Any], loc: Locator, index: int, where: str) -> Any:
        text = part.get("text")
        if "text" in part:
            if not isinstance(text, str):
                raise loc.error(index, f"{where}.text", f"expected a string, got {type_name(text)}")
            if part.get("thought") is True:
                return ReasoningBlock(summary=text, details=part)
            return TextBlock(text=text)
        inline = _get(part, "inlineData")
        if isinstance(inline, dict) and isinstance(inline.get("data"), str):
            mime, name = _str(_get(inline, "mimeType")), _str(_get(inline, "displayName"))
            block = media_block(MediaRef(kind="data", data_base64=inline["data"], mime_type=mime, filename=name))
        else:
            file_data = _get(part, "fileData")
            uri = _get(file_data, "fileUri") if isinstance(file_data, dict) else None
            if not isinstance(file_data, dict) or not isinstance(uri, str):
                return passthrough(part, NAME)
            name = _str(_get(file_data, "displayName"))
            block = media_block(
                MediaRef(kind="url", url=uri, mime_type=_str(_get(file_data, "mimeType")), filename=name)
            )
        transcription = _get(part, "audioTranscription")
        if (
            isinstance(block, AudioBlock)
            and isinstance(transcription, dict)
            and isinstance(transcription.get("text"), str)
        ):
            block.transcript = transcription["text"]  # what was said: text the summarizer reads
        return block


def _role_and_parts(record: Any, loc: Locator, index: int) -> tuple[str, list[Any]]:
    """A content's role and parts, or an error naming the field that is wrong."""
    if not isinstance(record, dict):
        raise loc.error(index, "", f"expected a content object, got {type_name(record)}")
    role = record.get("role", "user")
    if role not in _ROLES:
        raise loc.error(index, "role", f"expected 'user' or 'model', got {role!r}")
    parts = record.get("parts")
    if not isinstance(parts, list):
        if "parts" not in record:
            raise loc.error(index, "parts", "required field is missing")
        raise loc.error(index, "parts", f"expected a list of parts, got {type_name(parts)}")
    return role, parts


def _message_role(role: str, has_result: bool) -> Role:
    # Gemini sends function responses as 'user' content: holding one makes the message a tool message.
    if role == "model":
        return "assistant"
    if has_result or role in ("function", "tool"):
        return "tool"
    return "user"


class _Writer(NotedWriter):
    name = NAME
    messages_noun = "Gemini contents"

    def __init__(self, conversation: Conversation) -> None:
        super().__init__(conversation)
        self.same = conversation.format == NAME
        # Keys ctxmgr adds take the file's spelling (or, back from native, its records').
        own = [record for m in conversation.state.context for record in m.source_in(NAME) or ()]
        self.snake = _spelling(conversation.container if self.same else own) == "snake"
        self.names: dict[str, str] = {}

    def key(self, camel: str) -> str:
        return _SNAKE.get(camel, camel) if self.snake else camel

    def _write(self) -> Any:
        conversation = self.conversation
        container = conversation.container
        # Converted from another format, a JSON document becomes a request object (its
        # other keys converted by formats.dump, see _request); back from native, the
        # shape it had.
        keep_shape = self.same or conversation.origin == NAME
        as_document = isinstance(container, dict) if keep_shape else conversation.layout == "document"
        pieces: list[Any] = []
        path: tuple[str, ...] | None = None
        records: list[Any] = []
        merged_tool: dict[str, Any] | None = None
        for index, message in enumerate(conversation.state.context):
            for call in message.tools_calls or ():
                call_id, name, _, _ = call_name_and_args(call)
                self.names.setdefault(call_id, name)
            for block in message.content:
                if isinstance(block, ToolCallBlock | RemoteToolCallBlock):
                    self.names.setdefault(block.id, block.name)
            source = message.source_in(NAME)
            if message.role == "system":
                if source is not None and isinstance(source[0], SystemSlot):
                    pieces.append(source[0].value)
                    path = path or source[0].key
                else:
                    pieces.append(self._system_parts(message, index))
                continue
            if source is not None:
                records.extend(source)
                merged_tool = None
                continue
            record = carry_record_keys(message.edited_source_in(NAME), self._render(message, index))
            if message.role == "tool" and merged_tool is not None:
                # Gemini wants the responses to one turn's calls in one content.
                merged_tool["parts"].extend(record["parts"])
                continue
            records.append(record)
            merged_tool = record if message.role == "tool" else None
        return self._assemble(container, as_document, pieces, path, records)

    def _assemble(
        self, container: Any, as_document: bool, pieces: list[Any], path: tuple[str, ...] | None, records: list[Any]
    ) -> Any:
        conversation = self.conversation
        summary = conversation.state.context_summary
        slot = conversation.summary_as or "system"
        if conversation.summary_from_user_turn and summary:
            # Read from a user turn, the summary has a user turn's authority: it goes back
            # to one, whatever was asked.
            if slot == "system" and conversation.summary_as is not None:
                self.notes.add(
                    "the summary was read from a user turn; it stays in the first user content, "
                    "not in the system instruction"
                )
            slot = "message"
        if not as_document:
            if pieces:
                self.drop("system instruction (a JSON Lines file of contents has no place for one)")
                pieces = []
            if summary and slot == "system":
                if conversation.summary_as == "system":
                    self.notes.add(
                        "a list of contents has no system instruction; the summary is put in the first content"
                    )
                slot = "message"
        if summary and slot == "message":
            records = self._with_summary_content(records, summary)
        if not as_document:
            return records
        system = self._join_system(pieces, summary if slot == "system" else None)
        out: dict[str, Any] = dict(container) if self.same and isinstance(container, dict) else {}
        original = _system_path(out) if out else None
        if system is _ABSENT:
            if original is not None:
                _remove(out, original)
            out["contents"] = records
            return out
        target = path or original or self._new_system_path(out)
        if original is not None and original != target:
            _remove(out, original)
        out = _place(out, target, system)
        out["contents"] = records
        return out

    def _new_system_path(self, out: dict[str, Any]) -> tuple[str, ...]:
        if self.snake and isinstance(out.get("config"), dict):
            return ("config", "system_instruction")
        return (self.key("systemInstruction"),)

    def _join_system(self, pieces: list[Any], summary: str | None) -> Any:
        if not pieces and summary is None:
            return _ABSENT
        extra = {"text": summary_text(summary)} if summary is not None else None
        if len(pieces) == 1 and not isinstance(pieces[0], _ConvertedParts):
            # The instruction read from this file: extend it in its own form.
            piece = pieces[0]
            if extra is None:
                return piece
            if isinstance(piece, str):
                return f"{piece}\n\n{extra['text']}" if piece else extra["text"]
            if isinstance(piece, dict):
                value = dict(piece)
                value["parts"] = [*piece.get("parts", []), extra]
                return value
            strings = all(isinstance(p, str) for p in piece)
            return [*piece, extra["text"] if strings and piece else extra]
        parts: list[Any] = []
        head: dict[str, Any] = {}
        for piece in pieces:
            if isinstance(piece, str):
                if piece:
                    parts.append({"text": piece})
            elif isinstance(piece, dict):
                head = head or {k: v for k, v in piece.items() if k != "parts"}
                parts.extend(piece.get("parts", []))
            else:
                parts.extend({"text": p} if isinstance(p, str) else p for p in piece)
        if extra is not None:
            parts.append(extra)
        return {**head, "parts": parts}

    def _system_parts(self, message: Message, index: int) -> _ConvertedParts:
        parts = _ConvertedParts()
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append({"text": block.text})
                for _ in block.annotations:
                    self.drop("citation (Gemini text has no place for one)")
            else:
                self.drop(f"{describe_block(block)} block in a system message")
        return parts

    def _with_summary_content(self, records: list[Any], summary: str) -> list[Any]:
        part = {"text": summary_text(summary)}
        if records:
            first = records[0]
            parts = first.get("parts") if isinstance(first, dict) else None
            plain_user = (
                isinstance(first, dict)
                and first.get("role", "user") == "user"
                and isinstance(parts, list)
                and not any(isinstance(p, dict) and _get(p, "functionResponse") is not None for p in parts)
            )
            if plain_user and isinstance(parts, list):
                merged = dict(first)
                merged["parts"] = [part, *parts]
                return [merged, *records[1:]]
        return [{"role": "user", "parts": [part]}, *records]

    def _render(self, message: Message, index: int) -> dict[str, Any]:
        parts: list[Any] = []
        results: list[Any] = []
        if message.reasoning and message.role == "assistant":
            parts.append({"text": message.reasoning, "thought": True})
        answered = {b.call_id for b in message.content if isinstance(b, ToolResultBlock)}
        inside: dict[str, list[Any]] = {}  # media read from inside a response (see IN_RESULT)
        for block in message.content:
            call_id = result_of(block)
            if call_id in answered:
                rendered = self._part(block, message, index, named=True)
                if rendered is not None:
                    inside.setdefault(call_id, []).append(rendered)
            elif isinstance(block, ToolResultBlock):
                results.append(self._response(block))
            elif isinstance(block, ToolCallBlock | RemoteToolCallBlock):
                if server_call(block):
                    self.drop(SERVER_CALL)
                elif block.id not in listed_calls(message):  # else written from tools_calls below
                    parts.append({self.key("functionCall"): {"name": block.name, "args": block.args, "id": block.id}})
            else:
                rendered = self._part(block, message, index)
                if rendered is not None:
                    parts.append(rendered)
        if message.tools_calls:  # most messages have none: spare them the call
            parts += self._listed_calls(message, index)
        if inside:
            self._nest_result_media(results, inside)
        role = "model" if message.role == "assistant" else "user"
        return {"role": role, "parts": results + parts}

    def _nest_result_media(self, results: list[Any], inside: dict[str, list[Any]]) -> None:
        """Puts the media read from inside a function response (see IN_RESULT) back in its parts."""
        for result in results:
            body = result[self.key("functionResponse")]
            if inside.get(body["id"]):
                body["parts"] = inside[body["id"]]

    def _listed_calls(self, message: Message, index: int) -> list[dict[str, Any]]:
        """functionCall parts for the calls in ``tools_calls``, each with the thought signature read beside it."""
        found = message.metadata.get(SIGNATURES)
        signatures: dict[str, Any] = found if isinstance(found, dict) else {}
        parts: list[dict[str, Any]] = []
        for call in message.tools_calls or ():
            call_id, name, args, problem = call_name_and_args(call)
            if problem:
                self.notes.add(f"{problem}; kept under 'arguments'", index)
            body: dict[str, Any] = {"name": name, "args": args}
            if call_id:
                body["id"] = call_id
            part: dict[str, Any] = {self.key("functionCall"): body}
            if isinstance(signatures.get(call_id), str):
                part[self.key("thoughtSignature")] = signatures[call_id]
            parts.append(part)
        return parts

    def _response(self, block: ToolResultBlock) -> dict[str, Any]:
        name = self.names.get(block.call_id)
        if name is None:
            self.notes.add(f"no call found for tool result {block.call_id!r}; its functionResponse is named 'unknown'")
            name = "unknown"
        failed = block.is_error or block.status == "failed"
        output = block.output
        if isinstance(output, dict) and not failed:
            response = output
        else:
            response = {"error" if failed else "output": "" if output is None else output}
        return {self.key("functionResponse"): {"name": name, "response": response, "id": block.call_id}}

    def _part(self, block: Any, message: Message, index: int, *, named: bool = False) -> Any:
        if isinstance(block, TextBlock):
            for _ in block.annotations:
                self.drop("citation (Gemini text has no place for one)")
            return {"text": block.text}
        if isinstance(block, ReasoningBlock):
            details = block.details
            if isinstance(details, dict) and details.get("thought") is True and isinstance(details.get("text"), str):
                return details
            if block.summary:
                return {"text": block.summary, "thought": True}
            self.drop("reasoning block without readable text")
            return None
        own = passthrough_value(block, NAME)
        if own is not None:
            return own
        media = media_of(block)
        if media is not None:
            return self._media(media, block, index, named=named)
        self.drop(f"{describe_block(block)} block")
        return None

    def _media(self, media: MediaRef, block: Any, index: int, *, named: bool = False) -> Any:
        if media.kind == "url" and media.url and media.url.startswith("data:"):
            inline = parse_data_url(media.url)
            if inline.kind == "data":
                media = inline if inline.mime_type else inline.model_copy(update={"mime_type": media.mime_type})
        mime = media.mime_type or "application/octet-stream"
        # The Gemini API takes a display name only on a function response's parts.
        name = {self.key("displayName"): media.filename} if named and media.filename else {}
        if media.kind == "data" and media.data_base64 is not None:
            return {self.key("inlineData"): {self.key("mimeType"): mime, "data": media.data_base64, **name}}
        uri = media.url or media.file_id
        if uri:
            return {self.key("fileData"): {self.key("mimeType"): mime, self.key("fileUri"): uri, **name}}
        self.drop(f"{describe_block(block)} block without data or a URI")
        return None


class _ConvertedParts(list[Any]):
    """System parts rendered from a converted message (not read from this file)."""


def _remove(out: dict[str, Any], path: tuple[str, ...]) -> None:
    if len(path) == 1:
        out.pop(path[0], None)
        return
    inner = out.get(path[0])
    if isinstance(inner, dict):
        inner = dict(inner)
        inner.pop(path[1], None)
        out[path[0]] = inner


def _place(out: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """``out`` with ``value`` at ``path``; a new top-level key goes before 'contents'."""
    if len(path) == 2:
        inner = dict(out.get(path[0]) or {})
        inner[path[1]] = value
        out[path[0]] = inner
        return out
    key = path[0]
    if key in out or "contents" not in out:
        out[key] = value
        return out
    rebuilt: dict[str, Any] = {}
    for name, item in out.items():
        if name == "contents":
            rebuilt[key] = value
        rebuilt[name] = item
    return rebuilt


def _why(role: str, index: int) -> str:
    """Why a content with the header is no summary (see :func:`forged_summary`)."""
    if role == "assistant":
        return "is a model content"
    if role == "tool":
        return "is a function response"
    return "is not the first part of the first content" if index == 0 else "is a user content after the first"


def _plain_part_text(part: Any) -> Any:
    return part.get("text") if isinstance(part, dict) and not part.get("thought") else None
