"""OpenAI Agents SDK run states (``RunState.to_json()``): ``agents-runstate``.

The conversation is what a resumed run sends the model: ``original_input`` (a string, or
Responses input items) followed by the raw Responses items of ``generated_items`` (run
items ``{type, raw_item, agent, ...}``). Both are read by the ``openai-responses`` reader,
so each message keeps its Responses items as its source (a conversion to Responses
writes them as they are) and a message's id says where it came from (``input-<n>``,
``item-<n>``).

Run items that are not conversation (a ``tool_approval_item`` repeating a pending call,
MCP listings and approval records, and any type the reader does not know) are not
messages: each stays with the run item before it (written after it, dropped with it);
those before the first message item stay at the head.

Written back, ``original_input`` and ``generated_items`` hold what the manager kept, each
kept run item as it was read; an edited item (a cleared or cut result, cleared arguments)
keeps its run item's fields with the new raw item (and its ``output``). The lists that
must agree with them are kept consistent: ``generated_session_item_indexes`` (parallel to
``generated_items``) loses the dropped positions and maps an edited item to nothing;
``model_responses`` loses the responses none of whose output items is kept. Everything
else (``current_turn``, ``current_step``, ``last_model_response``,
``last_processed_response``, ``session_items``, ``context``) is written as it was: it
describes the turn in progress, which every manager keeps. The summary is a ``developer``
message after the leading system and developer items of ``original_input`` (a string
input becomes a list: the summary, then the string as a user message).
"""

from __future__ import annotations

from typing import Any

from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._base import Conversation, Layout
from ctxmgr.formats._detection.agents_runstate import score as detection_score
from ctxmgr.formats._interop import read_guarded, type_name
from ctxmgr.formats._openai_responses import OpenAIResponsesFormat
from ctxmgr.state._agent import AgentState
from ctxmgr.state.message import Message

__all__ = ["MESSAGE_ITEM_TYPES", "AgentsRunStateFormat"]

NAME = "agents-runstate"
_RESPONSES = "openai-responses"

MESSAGE_ITEM_TYPES = {
    "message_output_item": "message",
    "tool_call_item": "function_call",
    "tool_call_output_item": "function_call_output",
    "reasoning_item": "reasoning",
    "handoff_call_item": "function_call",
    "handoff_output_item": "function_call_output",
}
"""The run item types that are conversation, and the raw item type a new one gets."""

_OUTPUT_ITEMS = ("tool_call_output_item", "handoff_output_item")


def _raw_type_item(raw: dict[str, Any]) -> str:
    kind = str(raw.get("type"))
    if kind.endswith("_output"):
        return "tool_call_output_item"
    if kind == "message":
        return "message_output_item"
    if kind == "reasoning":
        return "reasoning_item"
    return "tool_call_item"


def _key(raw: Any) -> tuple[Any, Any] | None:
    if not isinstance(raw, dict):
        return None
    return raw.get("type"), raw.get("call_id") or raw.get("id")


def grouped(items: list[Any]) -> tuple[list[Any], list[tuple[Any, list[Any]]]]:
    """``(head, groups)``: the run items before the first message item, and each message
    item with the items that follow it up to the next one."""
    head: list[Any] = []
    groups: list[tuple[Any, list[Any]]] = []
    for item in items:
        if isinstance(item, dict) and item.get("type") in MESSAGE_ITEM_TYPES:
            groups.append((item, []))
        elif groups:
            groups[-1][1].append(item)
        else:
            head.append(item)
    return head, groups


class AgentsRunStateFormat:
    """Reads and writes Agents SDK run states (``RunState.to_json()``)."""

    name = NAME
    list_key = "generated_items"
    request = None
    user_turn_summary = False

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """None: a run's bookkeeping (turns, agent, usage, approvals) means nothing to a request."""
        return {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: _read(value, source, layout), source, "Agents SDK RunState")

    def write(self, conversation: Conversation) -> Any:
        return _Writer(conversation).write()


def _read(value: Any, source: str, layout: Layout) -> Conversation:
    if not isinstance(value, dict):
        raise InputError(f"expected a RunState object, got {type_name(value)}", source=source)
    original = value.get("original_input")
    if not isinstance(original, str | list):
        raise InputError(
            f"original_input: expected a string or a list of input items, got {type_name(original)}", source=source
        )
    items = value.get("generated_items")
    if not isinstance(items, list):
        raise InputError(f"generated_items: expected a list of run items, got {type_name(items)}", source=source)
    responses = OpenAIResponsesFormat()
    # A string input is the user message the SDK makes of it (so a conversion writes an item).
    given_input = [{"role": "user", "content": original}] if isinstance(original, str) else original
    given = responses.read({"input": given_input}, source=source, layout="document")
    _, groups = grouped(items)
    raws: list[Any] = []
    for item, _attached in groups:
        raw = item.get("raw_item")
        if not isinstance(raw, dict):
            where = items.index(item)
            raise InputError(
                f"generated_items[{where}].raw_item: expected a Responses item, got {type_name(raw)}", source=source
            )
        raws.append(raw)
    generated = responses.read(raws, source=source, layout="document") if raws else None
    context: list[Message] = []
    for index, message in enumerate(given.state.context, start=1):
        message.message_id = f"input-{index}"
        context.append(message)
    for index, message in enumerate(generated.state.context if generated else (), start=1):
        message.message_id = f"item-{index}"
        context.append(message)
    warnings = [*given.warnings, *(generated.warnings if generated else ())]
    if generated is not None and generated.state.context_summary:
        warnings.append("generated_items: a summary marker in the run's own items marks nothing; kept as they are")
    state = AgentState(context=context, context_summary=given.state.context_summary)
    return Conversation(state=state, format=NAME, container=value, layout=layout, warnings=warnings)


class _Writer:
    def __init__(self, conversation: Conversation) -> None:
        container = conversation.container
        if conversation.format != NAME or not isinstance(container, dict):
            raise UsageError(
                "agents-runstate: a RunState is a paused run of the Agents SDK; it cannot be made from "
                f"a conversation in another format ({conversation.format})"
            )
        self.conversation = conversation
        self.container: dict[str, Any] = container
        items = container.get("generated_items")
        self.items: list[Any] = items if isinstance(items, list) else []
        self.head, self.groups = grouped(self.items)
        self.by_raw = {id(item.get("raw_item")): (item, attached) for item, attached in self.groups}
        self.by_key = {_key(item.get("raw_item")): (item, attached) for item, attached in self.groups}

    def write(self) -> Any:
        given: list[Message] = []
        generated: list[Message] = []
        for message in self.conversation.state.context:
            (given if str(message.message_id).startswith("input-") else generated).append(message)
        out = dict(self.container)
        out["original_input"] = self._input(given)
        kept = self._generated(generated)
        out["generated_items"] = [item for item, _ in kept]
        if isinstance(self.container.get("generated_session_item_indexes"), list):
            out["generated_session_item_indexes"] = self._session_indexes(kept)
        if isinstance(self.container.get("model_responses"), list):
            out["model_responses"] = self._responses(out["generated_items"])
        changed = _changed_calls(kept)
        if changed:
            out["context"] = _forget_invocations(self.container.get("context"), changed)
        return out

    def _input(self, messages: list[Message]) -> Any:
        conversation = self.conversation
        original = self.container.get("original_input")
        summary = conversation.state.context_summary
        if isinstance(original, str) and not summary and len(messages) == 1 and messages[0].source_in(_RESPONSES):
            return original  # the string input, kept as it was
        sub = Conversation(
            state=AgentState(context=messages, context_summary=summary),
            format=_RESPONSES,
            container={"input": original if isinstance(original, list) else []},
            summary_as="message",
            warnings=conversation.warnings,
            dropped=conversation.dropped,
        )
        sub.original_summary = conversation.original_summary
        written = OpenAIResponsesFormat().write(sub)
        return written["input"] if isinstance(written, dict) else written

    def _generated(self, messages: list[Message]) -> list[tuple[Any, Any]]:
        """``(run item, original run item or None)`` for each item written, in order."""
        sub = Conversation(
            state=AgentState(context=messages),
            format=_RESPONSES,
            container=[item.get("raw_item") for item, _ in self.groups],
            warnings=self.conversation.warnings,
            dropped=self.conversation.dropped,
        )
        raws = OpenAIResponsesFormat().write(sub)
        out: list[tuple[Any, Any]] = [(item, item) for item in self.head]
        for raw in raws if isinstance(raws, list) else [raws]:
            found = self.by_raw.get(id(raw))
            if found is not None:
                item, attached = found
                out.append((item, item))
                out.extend((extra, extra) for extra in attached)
                continue
            found = self.by_key.get(_key(raw))
            if found is not None:
                item, attached = found
                new_raw = {**item["raw_item"], **raw} if isinstance(item.get("raw_item"), dict) else raw
                edited = {**item, "raw_item": new_raw}
                if item.get("type") in _OUTPUT_ITEMS and "output" in item and "output" in new_raw:
                    edited["output"] = new_raw["output"]
                out.append((edited, None))
                out.extend((extra, extra) for extra in attached)
                continue
            agent = self.container.get("current_agent")
            out.append(({"type": _raw_type_item(raw), "raw_item": raw, "agent": agent}, None))
        return out

    def _session_indexes(self, kept: list[tuple[Any, Any]]) -> list[Any]:
        indexes = self.container["generated_session_item_indexes"]
        if len(indexes) != len(self.items):
            return list(indexes)  # already out of step: the SDK ignores it; left as it was
        position = {id(item): index for index, item in enumerate(self.items)}
        return [indexes[position[id(original)]] if original is not None else None for _, original in kept]

    def _responses(self, items: list[Any]) -> list[Any]:
        keys = {_key(item.get("raw_item")) for item in items if isinstance(item, dict)}
        kept: list[Any] = []
        for response in self.container["model_responses"]:
            output = response.get("output") if isinstance(response, dict) else None
            if not isinstance(output, list) or not output or any(_key(raw) in keys for raw in output):
                kept.append(response)
        return kept


def _changed_calls(kept: list[tuple[Any, Any]]) -> set[str]:
    """The call ids of the edited run items whose call changed (cleared arguments)."""
    changed: set[str] = set()
    for item, original in kept:
        raw = item.get("raw_item") if original is None and isinstance(item, dict) else None
        if isinstance(raw, dict) and "arguments" in raw and isinstance(raw.get("call_id"), str):
            changed.add(raw["call_id"])
    return changed


def _forget_invocations(context: Any, call_ids: set[str]) -> Any:
    """``context`` without the invocation records of ``call_ids``: a record holds its
    call's fingerprint, which an edited call no longer matches (the SDK then refuses the
    state); without one, the call is restored as any call of an older schema is."""
    invocations = context.get("tool_invocations") if isinstance(context, dict) else None
    if not isinstance(invocations, dict) or not call_ids & invocations.keys():
        return context
    kept = {call_id: record for call_id, record in invocations.items() if call_id not in call_ids}
    return {**context, "tool_invocations": kept}
