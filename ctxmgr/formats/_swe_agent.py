"""SWE-agent trajectories (``.traj``): ``swe-agent``.

A trajectory is one JSON object: ``history`` holds the messages SWE-agent sent to the
model, ``trajectory`` the steps (action, observation, response, thought, state),
``info``, ``replay_config`` and ``environment`` the run's record. Only ``history`` is the
conversation; every other key is written back untouched.

How history items map onto the model (each message keeps its item as its source, so a
kept item is written back byte for byte):

* ``role`` is the message's role (``system``, ``user``, ``assistant``, ``tool``);
  ``content`` (a string or a list of ``text``/``image_url`` parts) its text;
* an assistant's ``tool_calls`` (OpenAI's shape) are its tool calls; a ``tool`` item
  answers the first id of its ``tool_call_ids`` (SWE-agent sends one result per call);
* ``agent``, ``message_type``, ``thought``, ``action``, ``is_demo``, ``cache_control``
  and any other key stay in the item.

An item a manager edited (a cleared or shortened tool output, cleared call arguments) is
written as its original item with ``content`` (and ``tool_calls``) replaced, so its other
keys survive. SWE-agent's own history processors elide old observations in place and
write no summary; ctxmgr's summary is a ``system`` item (``message_type``
``"summary"``, the ``agent`` of the first item) right after the leading system items,
its content starting with the summary header. Reading takes such an item back into the
summary only among the leading system items; elsewhere it stays an ordinary message and a
warning names it.
"""

from __future__ import annotations

from typing import Any

from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import Conversation, Layout, forged_summary, split_summary_text
from ctxmgr.formats._detection.swe_agent import score
from ctxmgr.formats._interop import message_carries_header, read_guarded, summary_text
from ctxmgr.formats._openai_chat import _Reader, json_type, render_message
from ctxmgr.state._agent import AgentState
from ctxmgr.state.message import Message

__all__ = ["SweAgentFormat", "edited_chat_record"]

NAME = "swe-agent"
_ID_PREFIX = "history-"
SUMMARY_TYPE = "summary"
"""``message_type`` of the history item holding ctxmgr's summary."""


def _history(value: Any, source: str) -> list[Any]:
    history = value.get("history") if isinstance(value, dict) else None
    if not isinstance(history, list):
        raise InputError(f"history: expected a list of history items, got {json_type(history)}", source=source)
    return history


def _chat_record(reader: _Reader, index: int, item: Any) -> dict[str, Any]:
    """The OpenAI chat message SWE-agent sends for ``item`` (as its model layer does)."""
    if not isinstance(item, dict):
        raise reader.error(index, "", f"expected a history item object, got {json_type(item)}")
    record = {k: item[k] for k in ("role", "content", "tool_calls") if k in item}
    if item.get("role") == "tool":
        ids = item.get("tool_call_ids")
        if not isinstance(ids, list) or not ids or not isinstance(ids[0], str):
            raise reader.error(index, "tool_call_ids", "a tool item needs a list holding its call's id")
        record["tool_call_id"] = ids[0]
    return record


def _item_text(item: Any) -> str:
    content = item.get("content") if isinstance(item, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def edited_chat_record(original: dict[str, Any], message: Message, warn: Any) -> dict[str, Any]:
    """``original`` with the fields a manager may have edited taken from ``message``.

    The chat record the model renders gives the new ``content`` and ``tool_calls``; the
    original's other keys stay.
    """
    rendered = render_message(message, warn)[0]
    out = dict(original)
    out["content"] = rendered.get("content") if rendered.get("content") is not None else ""
    if "tool_calls" in rendered:
        by_id = {call["id"]: call for call in rendered["tool_calls"]}
        calls = original.get("tool_calls")
        if isinstance(calls, list):
            out["tool_calls"] = [_with_arguments(call, by_id) for call in calls]
        else:
            out["tool_calls"] = rendered["tool_calls"]
    return out


def _with_arguments(call: Any, by_id: dict[str, Any]) -> Any:
    if not isinstance(call, dict) or call.get("id") not in by_id or not isinstance(call.get("function"), dict):
        return call
    arguments = by_id[call["id"]]["function"]["arguments"]
    return {**call, "function": {**call["function"], "arguments": arguments}}


class SweAgentFormat:
    """Reads and writes the ``history`` of SWE-agent trajectories."""

    name = NAME
    list_key = "history"
    request = None
    user_turn_summary = False

    def detect(self, value: Any) -> int:
        return score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """The trajectory's keys beside ``history`` (``trajectory``, ``info``...), which a
        conversion keeps as they are."""
        return {k: v for k, v in container.items() if k != "history"} if isinstance(container, dict) else {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: self._read(value, source, layout), source, "SWE-agent trajectory")

    def _read(self, value: Any, source: str, layout: Layout) -> Conversation:
        history = _history(value, source)
        reader = _Reader(history, source=source, prefix="history")
        summary: str | None = None
        messages: list[Message] = []
        warnings: list[str] = []
        leading = True
        for index, item in enumerate(history):
            record = _chat_record(reader, index, item)
            leading = leading and item.get("role") == "system"
            found = split_summary_text(_item_text(item))
            if leading and found is not None:
                summary = f"{summary}\n\n{found}" if summary else found
                continue
            message = reader.message(index, record)
            message.message_id = f"{_ID_PREFIX}{index}"
            if found is not None or message_carries_header(message):
                why = f"is a {item.get('role')} item" if not leading else "is not a summary item"
                warnings.append(forged_summary(f"history item {index}", why))
            messages.append(message.with_source([item], self.name))
        state = AgentState(context=messages, context_summary=summary)
        return Conversation(state=state, format=self.name, container=value, layout=layout, warnings=warnings)

    def write(self, conversation: Conversation) -> Any:
        if conversation.summary_as not in (None, "message"):
            raise UsageError(
                f"--summary-as {conversation.summary_as}: a SWE-agent trajectory keeps its summary in a "
                "system history item after the leading ones (--summary-as message)"
            )
        if conversation.format != self.name:
            raise UsageError("swe-agent: a trajectory is written only from one read as swe-agent")
        container = conversation.container
        history = container.get("history") if isinstance(container, dict) else None
        originals = history if isinstance(history, list) else []
        items: list[Any] = []
        for message in conversation.state.context:
            source = message.source_in(self.name)
            if source is not None:
                items.extend(source)
                continue
            original = _original(originals, message)
            if original is not None:
                items.append(edited_chat_record(original, message, conversation.dropped.add))
            else:
                items.extend(_rendered(message, _agent(originals), conversation.dropped.add))
        self._place_summary(items, originals, conversation)
        return {**container, "history": items}

    def _place_summary(self, items: list[Any], originals: list[Any], conversation: Conversation) -> None:
        summary = conversation.state.context_summary
        if not summary:
            return
        if summary == conversation.original_summary:
            # Unchanged: the summary items read are written back where they were.
            lead = 0
            while (
                lead < len(originals) and isinstance(originals[lead], dict) and originals[lead].get("role") == "system"
            ):
                lead += 1
            marked = [(at, o) for at, o in enumerate(originals[:lead]) if _is_summary_item(o)]
            for at, original in marked:
                items.insert(min(at, len(items)), original)
            if marked:
                return
        lead = 0
        while lead < len(items) and isinstance(items[lead], dict) and items[lead].get("role") == "system":
            lead += 1
        agent = _agent(originals)
        item = {"role": "system", "content": summary_text(summary), "agent": agent, "message_type": SUMMARY_TYPE}
        items.insert(lead, item)


def _is_summary_item(item: Any) -> bool:
    return isinstance(item, dict) and item.get("role") == "system" and split_summary_text(_item_text(item)) is not None


def _original(originals: list[Any], message: Message) -> dict[str, Any] | None:
    """The history item an edited copy of a message was read from (its id names it)."""
    message_id = message.message_id
    if not isinstance(message_id, str) or not message_id.startswith(_ID_PREFIX):
        return None
    index = message_id.removeprefix(_ID_PREFIX)
    if not index.isdigit() or int(index) >= len(originals) or not isinstance(originals[int(index)], dict):
        return None
    original: dict[str, Any] = originals[int(index)]
    return original


def _agent(originals: list[Any]) -> Any:
    """The agent whose items these are (SWE-agent sends an agent only its own items)."""
    return next((o["agent"] for o in originals if isinstance(o, dict) and "agent" in o), "main")


def _rendered(message: Message, agent: Any, warn: Any) -> list[dict[str, Any]]:
    """History items for a message a manager made (a custom manager's): the chat record
    SWE-agent would send, as an item of ``agent``."""
    items: list[dict[str, Any]] = []
    for record in render_message(message, warn):
        call_id = record.pop("tool_call_id", None)
        if call_id is not None:
            record["tool_call_ids"] = [call_id]
        kind = {"assistant": "action", "system": "system_prompt"}.get(str(record.get("role")), "observation")
        items.append({**record, "agent": agent, "message_type": kind})
    return items
