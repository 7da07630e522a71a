"""OpenHands event streams: ``openhands``.

A stream is a JSON list of events (or an evaluation record whose ``history`` holds it,
its other keys written back untouched). Each event is read as OpenHands' own
conversation memory sends it to the model:

* the ``system`` action is the system prompt (``args.content``);
* a ``message`` action is a user turn (``source`` ``user``) or an assistant turn
  (``args.content``, else ``message``); a ``finish`` action is the assistant's last turn
  (``message``, else ``args.thought``), as OpenHands replays it;
* an action with ``tool_call_metadata`` is an assistant tool call (``tool_call_id``,
  ``function_name``, the arguments of the matching call in ``model_response``, else
  ``args``); actions of one model response (the same ``model_response.id``) are one
  assistant message, its text the response's content (else ``args.thought``);
* an observation answering such a call (its ``tool_call_metadata``, else its ``cause``)
  is that call's tool result (``content``); an ``error`` or ``condense`` observation
  answering none is a user turn;
* a command the user ran (a ``run`` action from the user, without tool call metadata)
  is a user turn (``User executed the command:`` and the command), its output too;
* every other event (``recall``, state changes, ``null`` observations)
  is no message: it travels with the message before it (at the head, it is always
  kept), as do the events a ``condensation`` action forgot, which the model no longer
  sees.

The summary is where OpenHands' condensers put theirs: the ``summary`` of the latest
``condensation`` action, which OpenHands inserts into the view at ``summary_offset``.
Written back, kept events are their records, byte for byte; an edited one keeps its
record with ``content`` (a tool output) or the call's arguments in ``model_response``
replaced (``args`` stay: OpenHands rebuilds the action from them). An event whose
``cause`` names an event not written back is dropped with it, so every ``cause`` of the
file points to an event in it. A stream with a new summary, or one that lost events,
gets one ``condensation`` action at its end (the old ones dropped): ``summary``,
``summary_offset`` right after the leading system events, ``forgotten_event_ids`` the
forgotten events still in the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import Conversation, Layout, arguments_json
from ctxmgr.formats._detection.openhands import events_of, score
from ctxmgr.formats._interop import read_guarded
from ctxmgr.formats._openai_chat import json_type, model_calls
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import TextBlock, ToolResultBlock
from ctxmgr.state.message import Message

__all__ = ["OpenHandsFormat"]

NAME = "openhands"
_ID_PREFIX = "event-"
_USER_OBSERVATIONS = ("error", "condense")
_USER_RUN = "<a command the user ran>"
"""Stands, in ``call_of``, for the call id of a command the user ran (it has none)."""


@dataclass
class _Group:
    """One message: the events it was read from, and the events that travel with it."""

    role: str
    events: list[int] = field(default_factory=list)
    passengers: list[int] = field(default_factory=list)
    text: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    result_of: str | None = None
    response_id: str | None = None

    @property
    def message_id(self) -> str:
        return f"{_ID_PREFIX}{self.events[0]}"


@dataclass
class _Stream:
    """The events of a stream, grouped into messages."""

    events: list[Any]
    groups: list[_Group] = field(default_factory=list)
    head: list[int] = field(default_factory=list)
    condensations: list[int] = field(default_factory=list)
    forgotten: set[Any] = field(default_factory=set)
    summary: str | None = None


def _args(event: dict[str, Any]) -> dict[str, Any]:
    args = event.get("args")
    return args if isinstance(args, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _response_message(metadata: dict[str, Any]) -> dict[str, Any]:
    response = metadata.get("model_response")
    choices = response.get("choices") if isinstance(response, dict) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    message = first.get("message")
    return message if isinstance(message, dict) else {}


def _call(event: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    """The model's tool call that ``event`` carries out (OpenAI chat's shape)."""
    call_id = metadata["tool_call_id"]
    for call in _response_message(metadata).get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and call.get("id") == call_id:
            arguments = arguments_json(function.get("arguments", "{}"))
            return {
                "id": call_id,
                "type": "function",
                "function": {"name": str(function.get("name")), "arguments": arguments},
            }
    args = {k: v for k, v in _args(event).items() if k != "thought"}
    name = str(metadata.get("function_name") or event.get("action"))
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments_json(args)}}


def _forgotten_by(event: dict[str, Any]) -> list[Any]:
    args = _args(event)
    ids = args.get("forgotten_event_ids")
    if isinstance(ids, list):
        return ids
    start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    return list(range(start, end + 1)) if isinstance(start, int) and isinstance(end, int) else []


def _group(events: list[Any], source: str) -> _Stream:
    """Group ``events`` into messages (see the module docstring); deterministic, so the
    writer finds each message's events again from its id."""
    stream = _Stream(events)
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            raise InputError(f"[{index}]: expected an event object, got {json_type(event)}", source=source)
        if not isinstance(event.get("action"), str) and not isinstance(event.get("observation"), str):
            # Read as a stream, a record that is no event would vanish into a silent result.
            raise InputError(f"[{index}]: not an OpenHands event (no 'action' or 'observation' name)", source=source)
        if event.get("action") == "condensation":
            stream.condensations.append(index)
            stream.forgotten.update(_forgotten_by(event))
            if isinstance(_args(event).get("summary"), str):
                stream.summary = _args(event)["summary"]
    by_response: dict[str, _Group] = {}
    call_of: dict[Any, str] = {}  # action event id -> its call id
    calls: set[str] = set()
    for index, event in enumerate(events):
        if index in stream.condensations:
            continue
        group = None if event.get("id") in stream.forgotten else _message_group(event, by_response, call_of, calls)
        if group is None:
            (stream.groups[-1].passengers if stream.groups else stream.head).append(index)
        elif group.events:  # another action of a response already grouped
            group.events.append(index)
        else:
            group.events.append(index)
            stream.groups.append(group)
    return stream


def _message_group(
    event: dict[str, Any], by_response: dict[str, _Group], call_of: dict[Any, str], calls: set[str]
) -> _Group | None:
    """The message ``event`` belongs to (a new group, or its response's), or ``None``."""
    action, observation = event.get("action"), event.get("observation")
    args = _args(event)
    metadata = event.get("tool_call_metadata")
    metadata = metadata if isinstance(metadata, dict) and isinstance(metadata.get("tool_call_id"), str) else None
    if action == "system":
        return _Group("system", text=_text(args.get("content")) or _text(event.get("message")))
    if action == "message":
        role = "user" if event.get("source") == "user" else "assistant"
        return _Group(role, text=_text(args.get("content")) or _text(event.get("message")))
    if action == "finish":
        return _Group("assistant", text=_text(event.get("message")) or _text(args.get("thought")))
    if action == "run" and event.get("source") == "user" and metadata is None:
        call_of[event.get("id")] = _USER_RUN  # its output is a user turn too
        return _Group("user", text=f"User executed the command:\n{_text(args.get('command'))}")
    if isinstance(action, str) and metadata is not None and event.get("source") == "agent":
        call = _call(event, metadata)
        if call["id"] in calls:
            return None  # the same call twice: OpenHands answers it once
        calls.add(call["id"])
        call_of[event.get("id")] = call["id"]
        response = metadata.get("model_response")
        response_id = response.get("id") if isinstance(response, dict) else None
        group = by_response.get(response_id) if isinstance(response_id, str) else None
        if group is None:
            text = _text(_response_message(metadata).get("content")).strip() or _text(args.get("thought"))
            group = _Group("assistant", text=text, response_id=response_id if isinstance(response_id, str) else None)
            if group.response_id is not None:
                by_response[group.response_id] = group
        group.calls.append(call)
        return group
    if isinstance(observation, str):
        answered = metadata["tool_call_id"] if metadata is not None else call_of.get(event.get("cause"))
        if answered in calls:
            calls.discard(answered)  # one result per call
            return _Group("tool", text=_text(event.get("content")), result_of=answered)
        if observation in _USER_OBSERVATIONS or answered == _USER_RUN:
            return _Group("user", text=_text(event.get("content")))
    return None


def _message(group: _Group) -> Message:
    if group.result_of is not None:
        content: list[Any] = [ToolResultBlock(call_id=group.result_of, output=group.text)]
    else:
        content = [TextBlock(text=group.text)] if group.text else []
    message = Message(message_id=group.message_id, role=group.role, content=content)  # type: ignore[arg-type]
    if group.calls:
        message.tools_calls = list(group.calls)
    return message


def _edited_event(event: dict[str, Any], message: Message) -> tuple[dict[str, Any], bool]:
    """``event`` with what a manager edited in ``message`` (a tool output, call arguments),
    and whether it holds all of it (``False``: call arguments with no ``model_response``
    to write them in).

    An action's ``args`` stay as they are: OpenHands builds the action from them, and the
    model is shown the call from ``model_response``.
    """
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    if results and "observation" in event:
        output = results[0].output
        content = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        return {**event, "content": content}, True
    metadata = event.get("tool_call_metadata")
    if not isinstance(metadata, dict) or "action" not in event:
        return event, True
    arguments = {call_id: args for call_id, _, args in model_calls(message)}
    call_id = metadata.get("tool_call_id")
    if call_id not in arguments or arguments[call_id] == _call(event, metadata)["function"]["arguments"]:
        return event, True
    response = _with_arguments(metadata.get("model_response"), call_id, arguments[call_id])
    if response == metadata.get("model_response"):
        return event, False
    return {**event, "tool_call_metadata": {**metadata, "model_response": response}}, True


def _with_arguments(response: Any, call_id: str, arguments: str) -> Any:
    """A copy of ``response`` whose call ``call_id`` has ``arguments``."""
    if not isinstance(response, dict) or not isinstance(response.get("choices"), list):
        return response
    choices = []
    for choice in response["choices"]:
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict) and isinstance(message.get("tool_calls"), list):
            calls = [
                {**c, "function": {**c["function"], "arguments": arguments}}
                if isinstance(c, dict) and c.get("id") == call_id and isinstance(c.get("function"), dict)
                else c
                for c in message["tool_calls"]
            ]
            choice = {**choice, "message": {**message, "tool_calls": calls}}
        choices.append(choice)
    return {**response, "choices": choices}


class OpenHandsFormat:
    """Reads and writes OpenHands event streams."""

    name = NAME
    list_key = "history"
    request = None
    user_turn_summary = False

    def detect(self, value: Any) -> int:
        return score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """An evaluation record's keys beside ``history`` (``{}`` for a bare stream)."""
        return {k: v for k, v in container.items() if k != "history"} if isinstance(container, dict) else {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: self._read(value, source, layout), source, "OpenHands event stream")

    def _read(self, value: Any, source: str, layout: Layout) -> Conversation:
        events = events_of(value)
        if events is None:
            raise InputError(f"expected a list of events, got {json_type(value)}", source=source)
        stream = _group(events, source)
        messages = [
            _message(group).with_source([events[i] for i in group.events], self.name) for group in stream.groups
        ]
        state = AgentState(context=messages, context_summary=stream.summary)
        return Conversation(state=state, format=self.name, container=value, layout=layout)

    def write(self, conversation: Conversation) -> Any:
        if conversation.summary_as not in (None, "message"):
            raise UsageError(
                f"--summary-as {conversation.summary_as}: an OpenHands event stream keeps its summary in a "
                "condensation action (--summary-as message)"
            )
        if conversation.format != self.name:
            raise UsageError("openhands: an event stream is written only from one read as openhands")
        events = events_of(conversation.container) or []
        stream = _group(events, "<container>")
        written = self._events(stream, conversation)
        container = conversation.container
        return {**container, "history": written} if isinstance(container, dict) else written

    def _events(self, stream: _Stream, conversation: Conversation) -> list[Any]:
        events = stream.events
        groups = {group.message_id: group for group in stream.groups}
        out: dict[int, Any] = {i: events[i] for i in stream.head}
        kept_inputs = 0
        for message in conversation.state.context:
            group = groups.get(str(message.message_id))
            if group is None:
                raise UsageError(
                    f"openhands: message {message.message_id} was not read from this event stream; "
                    "an event stream takes no invented events"
                )
            edited = message.source_in(self.name) is None
            for i in group.events:
                out[i], whole = _edited_event(events[i], message) if edited else (events[i], True)
                kept_inputs += not whole
            for i in group.passengers:
                out[i] = events[i]
        unchanged = (
            len(out) + len(stream.condensations) == len(events)
            and all(out[i] is events[i] for i in out)
            and conversation.state.context_summary == stream.summary
        )
        if unchanged:
            return events
        if kept_inputs:
            conversation.warnings.append(
                f"openhands: {kept_inputs} cleared call input(s) kept as they were (the action has no "
                "model_response to clear them in, and OpenHands builds the action from its args)"
            )
        kept = _follow_causes(out, events)
        if len(kept) < len(out):
            conversation.warnings.append(
                f"openhands: {len(out) - len(kept)} event(s) dropped with the event their cause names "
                "(every cause written points to an event in the file)"
            )
        written = [kept[i] for i in sorted(kept)]
        summary = conversation.state.context_summary
        if summary:
            written.append(_condensation(written, summary, stream.forgotten))
        return written


def _follow_causes(out: dict[int, Any], events: list[Any]) -> dict[int, Any]:
    """``out`` without the events whose ``cause`` names an event of ``events`` not in it."""
    ids = {e.get("id") for e in events if isinstance(e, dict)}
    while True:
        present = {e.get("id") for e in out.values()}
        gone = [i for i, e in out.items() if e.get("cause") in ids and e.get("cause") not in present]
        if not gone:
            return out
        out = {i: e for i, e in out.items() if i not in gone}


def _condensation(written: list[Any], summary: str, forgotten: set[Any]) -> dict[str, Any]:
    """The condensation action holding ``summary``, as OpenHands' condensers write one."""
    ids = [e.get("id") for e in written]
    numbers = [i for i in ids if isinstance(i, int)]
    offset = 0
    while offset < len(written) and written[offset].get("action") == "system":
        offset += 1
    visible = [e for e in written if e.get("id") not in forgotten]
    offset = min(offset, len(visible))
    stamp = next((e["timestamp"] for e in reversed(written) if isinstance(e.get("timestamp"), str)), None)
    return {
        "id": max(numbers) + 1 if numbers else 0,
        "timestamp": stamp,
        "source": "agent",
        "message": "Summary: " + summary,
        "action": "condensation",
        "args": {
            "forgotten_event_ids": [i for i in ids if i in forgotten],
            "forgotten_events_start_id": None,
            "forgotten_events_end_id": None,
            "summary": summary,
            "summary_offset": offset,
        },
    }
