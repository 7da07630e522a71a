"""Training records: ``sharegpt`` (ShareGPT turns, and LLaMA-Factory's part-typed chat records).

How records map onto the model (each message keeps its record as its source, so a kept
message is written back untouched):

* ShareGPT turns: ``human`` (or ``user``) is a user message, ``gpt`` (``assistant``,
  ``chatgpt``) an assistant message, ``system`` a system message; a ``function_call`` turn
  is an assistant message whose value, a JSON string ``{"name", "arguments"}`` (or a list
  of them, parallel calls), holds its tool calls; an ``observation`` turn is the result of
  the oldest call not answered yet (ShareGPT has no call ids: calls and results pair by
  order, each call named ``call_<turn>`` or ``call_<turn>_<k>``). The record's ``system``
  column is a system message at the head, written back to the column.
* Part-typed chat records (``{"messages": [{"role", "content": [{"type", "value"}]}]}``):
  ``text`` parts are text, ``reasoning`` parts the message's reasoning, ``tool_call``
  parts its tool calls (the same JSON as a ``function_call`` turn); a ``tool`` message
  answers the oldest call not answered yet. Other parts are carried whole.

The summary goes where a trainer reads the system prompt: appended, after a blank line
and ctxmgr's header, to the leading ``system`` turn when the conversation starts with one
(LLaMA-Factory then ignores the column), else to the ``system`` column (made if missing);
in a part-typed record, a system message right after the leading ones. ``--summary-as``
has no other slot here. Converted into this format, a conversation is written as ShareGPT.
"""

from __future__ import annotations

import contextlib
from typing import Any

import orjson

from ctxmgr import _nesting
from ctxmgr.errors import InputError
from ctxmgr.formats._base import (
    Conversation,
    Layout,
    forged_summary,
    record_error,
    record_name,
    split_summary_text,
    split_system_prompt,
)
from ctxmgr.formats._detection.sharegpt import FROM_ROLES, PART_TYPES, ROLES, parts_shape, score, turns_of
from ctxmgr.formats._interop import (
    SystemSlot,
    describe_block,
    message_carries_header,
    passthrough,
    passthrough_value,
    read_guarded,
    summary_text,
)
from ctxmgr.formats._sharegpt_request import REQUEST
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import ContentBlock, DataBlock, TextBlock, ToolResultBlock
from ctxmgr.state.message import Message

__all__ = ["ShareGPTFormat"]

NAME = "sharegpt"


def _with_summary(prompt: str, summary: str) -> str:
    return f"{prompt}\n\n{summary_text(summary)}" if prompt else summary_text(summary)


def _calls(value: Any, where: str, source: str, index: int, records: Any) -> list[dict[str, Any]]:
    """The calls a ``function_call`` value or ``tool_call`` part holds."""
    parsed = value
    if isinstance(value, str):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise record_error(source, records, index, where, "expected a JSON object {name, arguments}") from None
    items = parsed if isinstance(parsed, list) else [parsed]
    calls = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise record_error(source, records, index, where, "a tool call needs a string 'name'")
        arguments = item.get("arguments", {})
        text = arguments if isinstance(arguments, str) else _nesting.dumps(arguments, ensure_ascii=False)
        calls.append({"name": item["name"], "arguments": text})
    return calls


class _Pairing:
    """Calls waiting for their results, oldest turn first (ShareGPT pairs by order).

    LLaMA-Factory alternates strictly: the calls of one turn are answered by the one
    result turn after it, whose value is a JSON list with one item per call when there
    are several. A dataset that gives each of a turn's calls a result turn of its own
    (as many result turns in a row as calls) is paired one by one.
    """

    def __init__(self, records: list[Any], is_result: Any) -> None:
        self.records = records
        self.is_result = is_result
        self.waiting: list[tuple[list[str], bool]] = []  # (ids, one result turn per call)

    def calls(self, index: int, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        ids = [f"call_{index}" if len(calls) == 1 else f"call_{index}_{k}" for k in range(len(calls))]
        following = 0
        while index + 1 + following < len(self.records) and self.is_result(self.records[index + 1 + following]):
            following += 1
        self.waiting.append((ids, len(ids) > 1 and following == len(ids)))
        return [{"id": i, "type": "function", "function": call} for i, call in zip(ids, calls, strict=True)]

    def results(self, index: int, text: str) -> list[ToolResultBlock]:
        """The results a result turn holding ``text`` gives (one per call it answers)."""
        if not self.waiting:
            if len(self.records) == 1:
                # A result record read alone (a native file's raw keeps each message's
                # records): the calls it answers are not here; a JSON list of several
                # items is taken for the results of parallel calls, one each.
                items = _list_items(text)
                if items is not None and len(items) > 1:
                    return [ToolResultBlock(call_id=f"observation_{index}_{k}", output=o) for k, o in enumerate(items)]
            return [ToolResultBlock(call_id=f"observation_{index}", output=text)]
        ids, one_each = self.waiting[0]
        if one_each:
            if len(ids) == 1:
                self.waiting.pop(0)
            return [ToolResultBlock(call_id=ids.pop(0), output=text)]
        self.waiting.pop(0)
        return [ToolResultBlock(call_id=i, output=o) for i, o in zip(ids, _split_results(text, len(ids)), strict=True)]


def _forged(messages: list[Message], records: list[Any], *, leading: int | None) -> list[str]:
    """A warning for each message holding ctxmgr's summary header outside the slots it is
    read from (the system prompt: the column, the first turn, the leading system messages):
    text any file can hold, kept as an ordinary message."""
    warnings = []
    at = {id(record): index for index, record in enumerate(records)}
    first = True
    for message in messages:
        source = message.source_in(NAME) or ()
        record = source[0] if source else None
        index = at.get(id(record))
        if index is None:
            continue
        lifted = message.role == "system" and (index == leading if leading is not None else first)
        first = first and message.role == "system"
        if not lifted and message_carries_header(message):
            why = (
                "is not the system prompt"
                if message.role != "system"
                else "is a system turn after the conversation began"
            )
            warnings.append(forged_summary(record_name(records, index), why))
    return warnings


def _list_items(text: str) -> list[str] | None:
    """The items of ``text`` if it is a JSON list (each a string, or its JSON), else None."""
    try:
        items = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(items, list):
        return None
    return [item if isinstance(item, str) else _nesting.dumps(item, ensure_ascii=False) for item in items]


def _split_results(text: str, count: int) -> list[str]:
    """``count`` outputs from one result value: the items of a JSON list of that many,
    else the whole value for the first call and nothing for the others."""
    if count == 1:
        return [text]
    items = _list_items(text)
    if items is not None and len(items) == count:
        return items
    return [text] + [""] * (count - 1)


def _results_value(results: list[ToolResultBlock]) -> str:
    """One result turn's value for ``results``: the output, or a JSON list of outputs."""
    outputs = [_output_text(b.output) for b in results]
    return outputs[0] if len(outputs) == 1 else _nesting.dumps(outputs, ensure_ascii=False)


def _is_observation(turn: Any) -> bool:
    return isinstance(turn, dict) and turn.get("from") == "observation"


def _is_tool(record: Any) -> bool:
    return isinstance(record, dict) and record.get("role") == "tool"


class ShareGPTFormat:
    """Reads and writes ShareGPT records and part-typed chat records."""

    name = NAME
    list_key = "conversations"
    request = REQUEST
    user_turn_summary = False

    def detect(self, value: Any) -> int:
        return score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        """A record's columns beside its turns and its ``system`` column (read as a message)."""
        if not isinstance(container, dict):
            return {}
        skip = ("conversations", "system") if "conversations" in container else ("messages",)
        return {k: v for k, v in container.items() if k not in skip}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        if turns_of(value) is not None:
            return read_guarded(lambda: self._read_turns(value, source, layout), source, "ShareGPT")
        return read_guarded(lambda: self._read_parts(value, source, layout), source, "ShareGPT")

    # -- ShareGPT turns ------------------------------------------------------------------

    def _read_turns(self, value: Any, source: str, layout: Layout) -> Conversation:
        turns = turns_of(value) or []
        messages: list[Message] = []
        summary: str | None = None
        column = value.get("system") if isinstance(value, dict) else None
        if isinstance(column, str) and column:
            prompt, summary = split_system_prompt(column)
            if prompt:
                message = Message(role="system", content=[TextBlock(text=prompt)])
                messages.append(message.with_source([SystemSlot(prompt, ("system",))], NAME))
        pairing = _Pairing(turns, _is_observation)
        for index, turn in enumerate(turns):
            if not isinstance(turn, dict):
                raise record_error(source, turns, index, "", "expected a turn object {from, value}")
            speaker = turn.get("from")
            role = FROM_ROLES.get(speaker) if isinstance(speaker, str) else None
            if role is None:
                known = ", ".join(FROM_ROLES)
                raise record_error(
                    source, turns, index, "from", f"unknown speaker {speaker!r} (expected one of: {known})"
                )
            text = turn.get("value")
            if speaker == "function_call":
                calls = pairing.calls(index, _calls(text, "value", source, index, turns))
                message = Message(role="assistant", content=[], tools_calls=calls)
            elif not isinstance(text, str):
                raise record_error(source, turns, index, "value", "required string is missing")
            elif role == "tool":
                message = Message(role="tool", content=list(pairing.results(index, text)))
            else:
                if role == "system" and index == 0:
                    prompt, found = split_system_prompt(text)
                    if found is not None:
                        summary = found if summary is None else f"{summary}\n\n{found}"
                        if not prompt:
                            continue
                        text = prompt
                        turn = {**turn, "value": prompt}  # the summary is written back from the state
                message = Message(role=role, content=[TextBlock(text=text)])  # type: ignore[arg-type]
            messages.append(message.with_source([turn], NAME))
        state = AgentState(context=messages, context_summary=summary)
        warnings = _forged(messages, turns, leading=0)
        return Conversation(state=state, format=NAME, container=value, layout=layout, warnings=warnings)

    # -- part-typed chat records ---------------------------------------------------------

    def _read_parts(self, value: Any, source: str, layout: Layout) -> Conversation:
        records = parts_shape(value)
        if records is None:
            raise InputError("not a ShareGPT record (no 'conversations' turns, no parts with 'value')", source=source)
        messages: list[Message] = []
        summary: str | None = None
        pairing = _Pairing(records, _is_tool)
        leading = True
        for index, record in enumerate(records):
            role = record.get("role")
            if not isinstance(role, str) or role not in ROLES:
                known = ", ".join(sorted(ROLES))
                raise record_error(source, records, index, "role", f"unknown role {role!r} (expected one of: {known})")
            leading = leading and role == "system"
            content = record.get("content")
            parts = [{"type": "text", "value": content}] if isinstance(content, str) else content
            if not isinstance(parts, list):
                raise record_error(source, records, index, "content", "expected a list of parts")
            if leading and len(parts) == 1 and isinstance(parts[0], dict):
                first = parts[0].get("value")
                found = split_summary_text(first) if isinstance(first, str) else None
                if found is not None:
                    summary = found if summary is None else f"{summary}\n\n{found}"
                    continue
            messages.append(self._part_message(index, record, parts, pairing, source, records))
        state = AgentState(context=messages, context_summary=summary)
        warnings = _forged(messages, records, leading=None)
        return Conversation(state=state, format=NAME, container=value, layout=layout, warnings=warnings)

    def _part_message(
        self, index: int, record: dict[str, Any], parts: list[Any], pairing: _Pairing, source: str, records: Any
    ) -> Message:
        blocks: list[ContentBlock] = []
        reasoning: list[str] = []
        calls: list[dict[str, Any]] = []
        for k, part in enumerate(parts):
            where = f"content[{k}]"
            kind = part.get("type") if isinstance(part, dict) else None
            text = part.get("value") if isinstance(part, dict) else None
            if kind not in PART_TYPES:
                blocks.append(passthrough(part, NAME, part=True))
            elif kind == "tool_call":
                calls.extend(_calls(text, f"{where}.value", source, index, records))
            elif not isinstance(text, str):
                raise record_error(source, records, index, f"{where}.value", "required string is missing")
            elif kind == "reasoning":
                reasoning.append(text)
            else:
                blocks.append(TextBlock(text=text))
        role = record["role"]
        if role == "tool":
            output = "".join(b.text for b in blocks if isinstance(b, TextBlock))
            others = [b for b in blocks if not isinstance(b, TextBlock)]
            message = Message(role="tool", content=[*pairing.results(index, output), *others])
        else:
            message = Message(role=role, content=blocks)
            if calls:
                message.tools_calls = pairing.calls(index, calls)
            if reasoning:
                message.reasoning = "\n\n".join(reasoning)
        return message.with_source([record], NAME)

    # -- writing -------------------------------------------------------------------------

    def write(self, conversation: Conversation) -> Any:
        if _parts_shaped(conversation):
            return self._write_parts(conversation)
        return self._write_turns(conversation)

    def _write_turns(self, conversation: Conversation) -> Any:
        turns: list[Any] = []
        column: str | None = None
        pending: dict[str, Any] | None = None  # the observation turn results join
        results: list[ToolResultBlock] = []
        for message in conversation.state.context:
            source = message.source_in(NAME)
            if source is not None and isinstance(source[0], SystemSlot):
                column = source[0].value
            elif source is not None:
                turns.extend(source)
            elif message.role == "system" and not turns:
                text = message.text()
                column = f"{column}\n\n{text}" if column else text
            elif message.role == "tool" and pending is not None and turns and turns[-1] is pending:
                # Results of one calling turn: one observation turn, as LLaMA-Factory alternates.
                results.extend(b for b in message.content if isinstance(b, ToolResultBlock))
                _texts_and_losses(message, conversation.dropped.add)
                pending["value"] = _results_value(results)
            else:
                rendered = _render_turns(message, conversation.dropped.add)
                turns.extend(rendered)
                if message.role == "tool" and rendered:
                    pending = rendered[-1]
                    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
        summary = conversation.state.context_summary
        if summary and turns and isinstance(turns[0], dict) and turns[0].get("from") == "system":
            turns[0] = {**turns[0], "value": _with_summary(str(turns[0].get("value") or ""), summary)}
        elif summary:
            column = _with_summary(column or "", summary)
        return _turns_container(conversation, turns, column)

    def _write_parts(self, conversation: Conversation) -> Any:
        records: list[Any] = []
        for message in conversation.state.context:
            source = message.source_in(NAME)
            if source is not None:
                records.extend(source)
            else:
                records.append(_render_part_record(message, conversation.dropped.add))
        summary = conversation.state.context_summary
        if summary:
            leading = (i for i, r in enumerate(records) if not (isinstance(r, dict) and r.get("role") == "system"))
            at = next(leading, len(records))
            records.insert(at, {"role": "system", "content": [{"type": "text", "value": summary_text(summary)}]})
        container = conversation.container if conversation.format == NAME else _tools_column(conversation) or {}
        return {**container, "messages": records} if isinstance(container, dict) else records


def _parts_shaped(conversation: Conversation) -> bool:
    """Whether to write part-typed records: read from one (directly, or its records kept
    in a native file's ``raw``); every other conversation is written as ShareGPT."""
    if conversation.format == NAME:
        return parts_shape(conversation.container) is not None
    for message in conversation.state.context:
        source = message.source_in(NAME)
        if source:
            return isinstance(source[0], dict) and "role" in source[0]
    return False


def _tools_column(conversation: Conversation) -> dict[str, Any] | None:
    """A ``tools`` JSON string kept as it is by a format with no request of its own
    (LangChain, native) from a ShareGPT record: the column again, not a lost key."""
    from ctxmgr.formats import FORMATS

    tools = FORMATS[conversation.format].container_keys(conversation.container).get("tools")
    return {"tools": tools} if isinstance(tools, str) else None


def _output_text(output: Any) -> str:
    return output if isinstance(output, str) else _nesting.dumps(output, ensure_ascii=False)


def _call_value(message: Message) -> list[dict[str, Any]]:
    """``{"name", "arguments"}`` of each call, its arguments as an object where they parse."""
    values = []
    for call in message.tools_calls or ():
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            continue
        arguments = function.get("arguments", "{}")
        if isinstance(arguments, str):
            with contextlib.suppress(orjson.JSONDecodeError):
                arguments = orjson.loads(arguments) if arguments.strip() else {}
        values.append({"name": str(function.get("name") or ""), "arguments": arguments})
    return values


def _texts_and_losses(message: Message, drop: Any) -> str:
    texts = []
    for block in message.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif not isinstance(block, ToolResultBlock):
            drop(f"{describe_block(block)} block")
    if message.reasoning:
        drop("reasoning text")
    return "".join(texts)


def _render_turns(message: Message, drop: Any) -> list[dict[str, Any]]:
    """ShareGPT turns for a message with no ShareGPT source (converted, or ctxmgr-made)."""
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    if message.role == "tool" or results:
        _texts_and_losses(message, drop)
        return [{"from": "observation", "value": _results_value(results)}] if results else []
    text = _texts_and_losses(message, drop)
    if message.role == "system":
        return [{"from": "system", "value": text}]
    if message.role == "user":
        return [{"from": "human", "value": text}]
    calls = _call_value(message)
    if not calls:
        return [{"from": "gpt", "value": text}]
    if text:
        # A gpt turn and a function_call turn in a row break LLaMA-Factory's alternation.
        drop("assistant text beside tool calls")
    value = calls[0] if len(calls) == 1 else calls
    return [{"from": "function_call", "value": _nesting.dumps(value, ensure_ascii=False)}]


def _render_part_record(message: Message, drop: Any) -> dict[str, Any]:
    """A part-typed record for a message ctxmgr made (no conversion writes this shape)."""
    parts: list[dict[str, Any]] = []
    if message.reasoning:
        parts.append({"type": "reasoning", "value": message.reasoning})
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "value": block.text})
        elif isinstance(block, ToolResultBlock):
            pass  # all of the message's results, in one text part, below
        elif isinstance(block, DataBlock) and (inner := passthrough_value(block, NAME, part=True)) is not None:
            parts.append(inner)
        else:
            drop(f"{describe_block(block)} block")
    results = [b for b in message.content if isinstance(b, ToolResultBlock)]
    if results:
        parts.insert(0, {"type": "text", "value": _results_value(results)})
    for value in _call_value(message):
        parts.append({"type": "tool_call", "value": _nesting.dumps(value, ensure_ascii=False)})
    return {"role": message.role, "content": parts}


def _turns_container(conversation: Conversation, turns: list[Any], column: str | None) -> Any:
    """The record holding ``turns`` and the ``system`` column (or the bare list of turns)."""
    container = conversation.container if conversation.format == NAME else _tools_column(conversation)
    if isinstance(container, list) or (container is None and column is None):
        if column is not None:
            turns.insert(0, {"from": "system", "value": column})
        return turns
    out = dict(container) if isinstance(container, dict) else {}
    out["conversations"] = turns
    if column is not None:
        out["system"] = column
    elif isinstance(out.get("system"), str) and out["system"]:
        del out["system"]  # the system message was removed (a user's own manager)
    return out
