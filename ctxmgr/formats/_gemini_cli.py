"""Gemini CLI chat recordings: ``{sessionId, projectHash, ..., messages: [...]}``, or the
JSONL layout (a metadata line, a line per record, ``$set`` and ``$rewindTo`` updates), read
as Gemini CLI replays it (:func:`folded`) and written back as Gemini CLI rewrites one.

Each record the model sees on ``gemini --resume`` becomes model messages, read as Gemini
CLI rebuilds its history from the file: a ``user`` record is a user message; a ``gemini``
record is an assistant message (its ``thoughts`` as reasoning, its ``content``, its
``toolCalls`` as calls; a ``content`` holding ``functionCall`` parts is taken as it is)
followed, when its calls have results, by one tool message holding them (id
``<record id>_response``, as Gemini CLI names it). Parts are read as the ``gemini`` format
reads them.

Records Gemini CLI does not send back to the model (``info``, ``error``, ``warning``, a
user record that is a command: empty, or starting with ``/``, ``?``,
``<session_context>`` or ``<hook_context>``, a ``gemini`` record with nothing in it) are
not messages: each stays with the message record before it (written after it, dropped
with it); those before the first message stay at the head.

Written back, a record whose messages the manager kept as they were is written as it was
read. A tool message the manager edited (``--clear-tool-results``,
``--max-tool-output``) is written into its call's ``result`` (each ``functionResponse``
for that call gets ``{"output": ...}``, an ``error`` result ``{"error": ...}``) and a
string ``resultDisplay`` gets the same text; cleared arguments go to ``args`` (and to a
``functionCall`` part of the same id). A summary is written where Gemini CLI's own
compression puts one: a ``user`` record holding the marked summary at the head of the
messages, answered by a ``gemini`` record (``ctxmgr-summary-ack``) when a user record comes
next (turns alternate), which reading lifts back as the summary.
"""

from __future__ import annotations

import datetime
from typing import Any

from ctxmgr import _nesting
from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import Conversation, Layout, forged_summary, split_summary_text
from ctxmgr.formats._detection.gemini_cli import is_metadata, is_update, score as detection_score
from ctxmgr.formats._gemini import _Reader as _GeminiReader
from ctxmgr.formats._interop import Locator, message_carries_header, read_guarded, summary_text, type_name
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import ToolResultBlock
from ctxmgr.state.message import Message

__all__ = ["ACK_ID", "SUMMARY_ID", "GeminiCliFormat", "grouped"]

NAME = "gemini-cli"

SUMMARY_ID = "ctxmgr-summary"
"""The id of the user record ctxmgr writes a summary in."""
ACK_ID = "ctxmgr-summary-ack"
"""The id of the gemini record that answers it, as Gemini CLI's compression answers its own."""
_ACK_TEXT = "Got it. Thanks for the additional context!"

_IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")


def _parts(content: Any) -> list[Any]:
    """A record's ``content`` (a string, a part, or a list of both) as a list of parts."""
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, list):
        return [{"text": part} if isinstance(part, str) else part for part in content]
    if content is None:
        return []
    return [content]


def _text(content: Any) -> str:
    return "".join(p["text"] for p in _parts(content) if isinstance(p, dict) and isinstance(p.get("text"), str))


def _model_parts(record: dict[str, Any]) -> list[Any]:
    """The parts of a gemini record's model turn, as Gemini CLI rebuilds them on resume."""
    content = _parts(record.get("content"))
    if any(isinstance(p, dict) and (p.get("functionCall") is not None or p.get("thought")) for p in content):
        return content  # a newer recording: its content holds the calls and thoughts
    parts: list[Any] = []
    for thought in record.get("thoughts") or ():
        if isinstance(thought, dict):
            subject, description = thought.get("subject"), thought.get("description") or ""
            parts.append({"text": f"**{subject}** {description}" if subject else str(description), "thought": True})
    parts.extend(content)
    for call in record.get("toolCalls") or ():
        if isinstance(call, dict):
            parts.append({"functionCall": {"id": call.get("id"), "name": call.get("name"), "args": call.get("args")}})
    return parts


def _response_parts(record: dict[str, Any]) -> list[Any]:
    """The parts of the user turn answering a gemini record's calls (their results)."""
    parts: list[Any] = []
    for call in record.get("toolCalls") or ():
        result = call.get("result") if isinstance(call, dict) else None
        if not result:
            continue
        if isinstance(result, str):
            body = {"id": call.get("id"), "name": call.get("name"), "response": {"output": result}}
            parts.append({"functionResponse": body})
        else:
            parts.extend(_parts(result))
    return parts


def conversational(record: Any) -> bool:
    """Whether Gemini CLI sends ``record`` back to the model when it resumes the session."""
    if not isinstance(record, dict):
        return True  # not a record at all: the reader names it
    kind = record.get("type")
    if kind == "user":
        text = _text(record.get("content")).strip()
        return not (not text or text.startswith(_IGNORED_PREFIXES))
    if kind == "gemini":  # as Gemini CLI judges a record worth resuming
        content = _parts(record.get("content"))
        other = any(isinstance(p, dict) and not isinstance(p.get("text"), str) for p in content)
        return bool(_text(content).strip() or other or record.get("toolCalls") or record.get("thoughts"))
    return kind not in ("info", "error", "warning")  # an unknown type: the reader names it


def grouped(records: list[Any]) -> tuple[list[Any], list[tuple[Any, list[Any]]]]:
    """``(head, groups)``: the records before the first message record, and each message
    record with the records that follow it up to the next one."""
    head: list[Any] = []
    groups: list[tuple[Any, list[Any]]] = []
    for record in records:
        if conversational(record):
            groups.append((record, []))
        elif groups:
            groups[-1][1].append(record)
        else:
            head.append(record)
    return head, groups


def folded(value: Any) -> tuple[dict[str, Any], list[Any]]:
    """The session's envelope and its message records, as Gemini CLI loads them.

    A JSON recording holds both. A JSONL recording is replayed: metadata lines and
    ``$set`` updates merge into the envelope; a message record replaces an earlier one
    of the same id in place; ``{"$rewindTo": id}`` drops that record and those after it
    (all of them when the id is unknown); ``$set.messages`` replaces them all.
    """
    if isinstance(value, dict):
        records = value.get("messages")
        return value, records if isinstance(records, list) else []
    envelope: dict[str, Any] = {}
    by_id: dict[str, Any] = {}
    for record in value:
        if not isinstance(record, dict):
            continue  # the reader names it
        rewind = record.get("$rewindTo")
        if isinstance(rewind, str):
            ids = list(by_id)
            for dropped in ids[ids.index(rewind) :] if rewind in by_id else ids:
                del by_id[dropped]
        elif isinstance(record.get("id"), str):
            by_id[record["id"]] = record
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                by_id = {m["id"]: m for m in update["messages"] if isinstance(m, dict) and isinstance(m.get("id"), str)}
            envelope.update((k, v) for k, v in update.items() if k != "messages")
        elif is_metadata(record) or isinstance(record.get("messages"), list):
            envelope.update((k, v) for k, v in record.items() if k != "messages")
            for message in record.get("messages") or ():
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    by_id[message["id"]] = message
    return envelope, list(by_id.values())


def _clean(lines: list[Any]) -> bool:
    """Whether a JSONL recording is already as Gemini CLI rewrites one: a metadata line,
    then one line per message record (no updates, no id twice)."""
    if not lines or not is_metadata(lines[0]):
        return False
    ids = [r.get("id") for r in lines[1:] if isinstance(r, dict)]
    return len(ids) == len(lines) - 1 and all(isinstance(i, str) for i in ids) and len(set(ids)) == len(ids)


def _summary_groups(groups: list[tuple[Any, list[Any]]]) -> tuple[str | None, int]:
    """The summary ctxmgr wrote at the head of ``groups`` and how many groups hold it."""
    if not groups:
        return None, 0
    first = groups[0][0]
    if not isinstance(first, dict) or first.get("type") != "user" or first.get("id") != SUMMARY_ID:
        return None, 0
    summary = split_summary_text(_text(first.get("content")))
    if summary is None:
        return None, 0
    ack = groups[1][0] if len(groups) > 1 else None
    return summary, 2 if isinstance(ack, dict) and ack.get("id") == ACK_ID else 1


def _timestamp(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


class GeminiCliFormat:
    """Reads and writes Gemini CLI chat recordings (``session-*.json``)."""

    name = NAME
    list_key = "messages"
    request = None
    user_turn_summary = True

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """None: the session's envelope (ids, times, project) means nothing to a request."""
        return {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: _Reader(source).read(value, layout), source, "Gemini CLI")

    def write(self, conversation: Conversation) -> Any:
        return _Writer(conversation).write()


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source
        self.parts = _GeminiReader(source)
        self.warnings: list[str] = []

    def read(self, value: Any, layout: Layout) -> Conversation:
        if isinstance(value, list):  # a JSONL recording: records named by their line
            loc = Locator(self.source, value, "")
            for index, line in enumerate(value):
                if not isinstance(line, dict):
                    raise loc.error(index, "", f"expected an object, got {type_name(line)}")
                if index == 0 and not is_metadata(line):
                    raise loc.error(0, "", "expected a recording's metadata line (a 'sessionId' and a 'projectHash')")
                if not (isinstance(line.get("id"), str) or is_update(line) or is_metadata(line)):
                    raise loc.error(index, "", "not a Gemini CLI record (no 'id', '$set', '$rewindTo' or metadata)")
            lines: list[Any] = value
        elif isinstance(value, dict) and isinstance(value.get("messages"), list):
            loc = Locator(self.source, value["messages"], "messages")
            lines = value["messages"]
        else:
            raise InputError(
                f"expected a Gemini CLI session object with a 'messages' list, got {type_name(value)}",
                source=self.source,
            )
        _, records = folded(value)
        index_of = {id(record): index for index, record in enumerate(lines)}
        _, groups = grouped(records)
        summary, skip = _summary_groups(groups)
        context: list[Message] = []
        for record, attached in groups[skip:]:
            # A record inside a '$set' (or a metadata line's 'messages') has no line of its
            # own: an error in it names the file's first line.
            index = index_of.get(id(record), 0)
            context.extend(self._record(record, attached, loc, index))
        state = AgentState(context=context, context_summary=summary)
        return Conversation(
            state=state,
            format=NAME,
            container=value,
            layout=layout,
            warnings=self.warnings,
            summary_from_user_turn=summary is not None,
        )

    def _record(self, record: Any, attached: list[Any], loc: Locator, index: int) -> list[Message]:
        if not isinstance(record, dict):
            raise loc.error(index, "", f"expected a message object, got {type_name(record)}")
        kind = record.get("type")
        if kind not in ("user", "gemini"):
            problem = "required string is missing" if kind is None else f"unknown message type {kind!r}"
            raise loc.error(index, "type", problem)
        content = record.get("content")
        if content is not None and not isinstance(content, str | list | dict):
            raise loc.error(index, "content", f"expected a string or a list of parts, got {type_name(content)}")
        record_id = record.get("id")
        if not isinstance(record_id, str):
            raise loc.error(index, "id", "required string is missing")
        when = _timestamp(record.get("timestamp"))
        if kind == "user":
            message = self.parts._content({"role": "user", "parts": _parts(content)}, loc, index)
            self._check_header(message, index)
            return [self._identified(message, record_id, when, [record, *attached])]
        calls = record.get("toolCalls")
        if calls is not None and not isinstance(calls, list):
            raise loc.error(index, "toolCalls", f"expected a list of tool calls, got {type_name(calls)}")
        for position, call in enumerate(calls or ()):
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                raise loc.error(index, f"toolCalls[{position}]", "expected an object with a 'name' string")
            if call.get("args") is not None and not isinstance(call.get("args"), dict):
                raise loc.error(
                    index, f"toolCalls[{position}].args", f"expected an object, got {type_name(call['args'])}"
                )
        assistant = self.parts._content({"role": "model", "parts": _model_parts(record)}, loc, index)
        out = [self._identified(assistant, record_id, when, [record, *attached])]
        responses = _response_parts(record)
        if responses:
            results = self.parts._content({"role": "user", "parts": responses}, loc, index)
            results.role = "tool"
            out.append(self._identified(results, f"{record_id}_response", when, []))
        return out

    def _identified(self, message: Message, message_id: str, when: float | None, source: list[Any]) -> Message:
        message.message_id = message_id
        if when is not None:
            message.timestamp = when
        return message.with_source(source, NAME)

    def _check_header(self, message: Message, index: int) -> None:
        if message_carries_header(message):
            self.warnings.append(forged_summary(f"message {index}", "is not the user record ctxmgr writes at the head"))


class _Writer:
    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        container = conversation.container
        if conversation.format != NAME or not isinstance(container, dict | list):
            raise UsageError(
                "gemini-cli: a Gemini CLI recording is the session Gemini CLI wrote; it cannot be made from "
                f"a conversation in another format ({conversation.format})"
            )
        self.envelope, records = folded(container)
        self.head, groups = grouped(records)
        self.original_summary, skip = _summary_groups(groups)
        self.summary_records = [r for record, attached in groups[:skip] for r in (record, *attached)]
        self.by_id = {
            record["id"]: (record, attached)
            for record, attached in groups
            if isinstance(record, dict) and isinstance(record.get("id"), str)
        }

    def write(self) -> Any:
        out: list[Any] = []
        context = self.conversation.state.context
        index = 0
        while index < len(context):
            message = context[index]
            following = context[index + 1] if index + 1 < len(context) else None
            if message.role == "assistant":
                results = following if following is not None and following.role == "tool" else None
                index += 2 if results is not None else 1
                out.extend(self._gemini(message, results))
                continue
            if message.role == "tool":  # its call was dropped: the record holds both
                out.extend(self._gemini(None, message))
            else:
                source = message.source_in(NAME)
                out.extend(source if source is not None else [self._user(message)])
            index += 1
        first = next((r for r in out if conversational(r)), None)
        out = [*self.head, *self._summary(answered=isinstance(first, dict) and first.get("type") == "user"), *out]
        container = self.conversation.container
        if isinstance(container, list):
            return self._lines(container, out)
        return {**container, "messages": out}

    def _lines(self, lines: list[Any], records: list[Any]) -> list[Any]:
        """A JSONL recording as Gemini CLI rewrites one: its metadata, one line per record,
        the memory scratchpad last (the first line as it was when nothing updated it)."""
        envelope = self.envelope
        meta = lines[0] if _clean(lines) else {k: v for k, v in envelope.items() if k != "memoryScratchpad"}
        out = [meta, *records]
        if envelope.get("memoryScratchpad"):
            out.append({"$set": {"memoryScratchpad": envelope["memoryScratchpad"]}})
        return out

    def _summary(self, *, answered: bool) -> list[Any]:
        """The summary's records; the answer only before a user record (turns alternate)."""
        summary = self.conversation.state.context_summary
        if not summary:
            return []
        if summary == self.original_summary and self.summary_records:
            return list(self.summary_records)
        when = self._first_timestamp()
        records = [{"id": SUMMARY_ID, "timestamp": when, "type": "user", "content": [{"text": summary_text(summary)}]}]
        if answered:
            records.append({"id": ACK_ID, "timestamp": when, "type": "gemini", "content": [{"text": _ACK_TEXT}]})
        return records

    def _first_timestamp(self) -> str:
        for message in self.conversation.state.context:
            record = self._record_of(message)
            if record is not None and isinstance(record.get("timestamp"), str):
                return str(record["timestamp"])
        start = self.envelope.get("startTime")
        return start if isinstance(start, str) else "1970-01-01T00:00:00.000Z"

    def _record_of(self, message: Message) -> dict[str, Any] | None:
        key = str(message.message_id).removesuffix("_response") if message.role == "tool" else str(message.message_id)
        found = self.by_id.get(key)
        return found[0] if found is not None and isinstance(found[0], dict) else None

    def _gemini(self, call: Message | None, results: Message | None) -> list[Any]:
        source = call.source_in(NAME) if call is not None else None
        results_edited = results is not None and results.source_in(NAME) is None
        if source is not None and not results_edited:
            return list(source)
        anchor = call if call is not None else results
        assert anchor is not None
        found = self.by_id.get(str(anchor.message_id).removesuffix("_response"))
        if found is None:
            return [self._new_gemini(call, results)]
        record, attached = dict(found[0]), list(found[1])
        if call is not None and source is None:
            _patch_args(record, call)
        if results_edited and results is not None:
            _patch_results(record, results)
        return [record, *attached]

    def _user(self, message: Message) -> dict[str, Any]:
        record = self._record_of(message)
        if record is not None:
            return {**record, "content": [{"text": message.text()}]}
        return {
            "id": str(message.message_id),
            "timestamp": self._first_timestamp(),
            "type": "user",
            "content": [{"text": message.text()}],
        }

    def _new_gemini(self, call: Message | None, results: Message | None) -> dict[str, Any]:
        """A record for messages that were never in this recording (a manager's own)."""
        outputs = _outputs(results) if results is not None else {}
        calls: list[dict[str, Any]] = []
        for tool_call in (call.tools_calls or ()) if call is not None else ():
            function = tool_call.get("function") or {}
            call_id = str(tool_call.get("id"))
            record: dict[str, Any] = {
                "id": call_id,
                "name": function.get("name"),
                "args": _args(function.get("arguments")),
            }
            if call_id in outputs:
                output, is_error = outputs[call_id]
                body = {"error" if is_error else "output": output}
                record["result"] = [
                    {"functionResponse": {"id": call_id, "name": function.get("name"), "response": body}}
                ]
                record["status"] = "error" if is_error else "success"
            calls.append(record)
        anchor = call if call is not None else results
        assert anchor is not None
        out: dict[str, Any] = {
            "id": str(anchor.message_id),
            "timestamp": self._first_timestamp(),
            "type": "gemini",
            "content": call.text() if call is not None else "",
        }
        if calls:
            out["toolCalls"] = calls
        return out


def _args(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return _nesting.loads(arguments)
        except ValueError:
            return {"arguments": arguments}
    return arguments if arguments is not None else {}


def _outputs(results: Message) -> dict[str, tuple[Any, bool]]:
    return {
        block.call_id: (block.output, block.is_error) for block in results.content if isinstance(block, ToolResultBlock)
    }


def _patch_args(record: dict[str, Any], call: Message) -> None:
    """Write the call arguments the manager changed (cleared) into ``record``."""
    changed: dict[str, Any] = {}
    for tool_call in call.tools_calls or ():
        function = tool_call.get("function") or {}
        changed[str(tool_call.get("id"))] = _args(function.get("arguments"))
    calls = record.get("toolCalls")
    if isinstance(calls, list):
        record["toolCalls"] = [
            {**c, "args": changed[c["id"]]} if isinstance(c, dict) and c.get("id") in changed else c for c in calls
        ]
    content = record.get("content")
    if isinstance(content, list):
        record["content"] = [_with_args(part, changed) for part in content]


def _with_args(part: Any, changed: dict[str, Any]) -> Any:
    function_call = part.get("functionCall") if isinstance(part, dict) else None
    if isinstance(function_call, dict) and function_call.get("id") in changed:
        return {**part, "functionCall": {**function_call, "args": changed[function_call["id"]]}}
    return part


def _patch_results(record: dict[str, Any], results: Message) -> None:
    """Write the results the manager changed (cleared, truncated) into ``record``'s calls."""
    outputs = _outputs(results)
    calls = record.get("toolCalls")
    if not isinstance(calls, list):
        return
    patched: list[Any] = []
    for call in calls:
        if isinstance(call, dict) and call.get("id") in outputs:
            output, is_error = outputs[call["id"]]
            call = {**call, "result": _new_result(call, output, is_error)}
            if isinstance(call.get("resultDisplay"), str):
                call["resultDisplay"] = output if isinstance(output, str) else _nesting.dumps(output)
        patched.append(call)
    record["toolCalls"] = patched


def _new_result(call: dict[str, Any], output: Any, is_error: bool) -> Any:
    result = call.get("result")
    if isinstance(result, str):
        return output if isinstance(output, str) else _nesting.dumps(output)
    body = {"error" if is_error else "output": output}
    parts = _parts(result)
    out: list[Any] = []
    for part in parts:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict) and response.get("id") in (call["id"], None):
            part = {**part, "functionResponse": {**response, "response": body}}
        out.append(part)
    return out
