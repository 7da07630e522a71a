"""Claude Code session logs: read the conversation, write it back in the tool's shape.

The conversation is the one :func:`ctxmgr.formats._claude_code_chain.analyse` finds on the
``uuid``/``parentUuid`` chain; each message (an assistant message's sibling records
merged, a run of tool results joined) is read as the Anthropic message it is and keeps
its records as its source. The summary of Claude Code's own compaction (the
``isCompactSummary`` user message right after the ``compact_boundary``) is the
conversation's summary, with a user turn's authority (a file can forge it).

Written back, the file keeps its records in their order: a kept message's records are
written as they were (a message a manager edited has its blocks rewritten in the same
records, and its ``toolUseResult`` dropped where a result changed), the records of a
dropped message go with it, and a kept record whose ``parentUuid`` named a dropped
record names the nearest kept record above it instead. A new summary is written the way
Claude Code compacts: a ``compact_boundary`` system record and an ``isCompactSummary``
user message, which the first kept message then hangs on; the session's previous
boundary and summary are replaced. Nothing is ever converted into a session log.
"""

from __future__ import annotations

import uuid as uuid_module
from typing import Any

import orjson

from ctxmgr.errors import InputError, UsageError
from ctxmgr.formats._anthropic import _Reader as _AnthropicReader
from ctxmgr.formats._base import Conversation, Layout, forged_summary, record_name
from ctxmgr.formats._claude_code_chain import Session, analyse, is_message
from ctxmgr.formats._detection.claude_code import score as detection_score
from ctxmgr.formats._interop import Locator, read_guarded, type_name
from ctxmgr.state._agent import AgentState
from ctxmgr.state._blocks import TextBlock, ToolResultBlock
from ctxmgr.state._compaction import tokens_of
from ctxmgr.state.message import Message

__all__ = ["SUMMARY_PREFIX", "ClaudeCodeFormat"]

NAME = "claude-code"

SUMMARY_PREFIX = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n"
)
"""How Claude Code opens its compaction summary; ctxmgr's summaries open the same way."""

_OLDER_PREFIX = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\n"
)

_ENVELOPE = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "agentId", "slug", "entrypoint")
"""Keys a written summary takes from the session's records, in Claude Code's order."""


class ClaudeCodeFormat:
    """Reads and writes Claude Code session logs (JSONL)."""

    name = NAME
    list_key = "records"
    request = None
    user_turn_summary = True

    def detect(self, value: Any) -> int:
        return detection_score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        return {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        return read_guarded(lambda: _read(value, source, layout), source, "Claude Code")

    def write(self, conversation: Conversation) -> Any:
        if conversation.format != NAME:
            raise UsageError(
                f"cannot convert {conversation.format} into a Claude Code session: it would need an invented session"
            )
        return _Writer(conversation).write()


def summary_of(text: str) -> str:
    """The summary inside Claude Code's compaction message (its opening line removed)."""
    for prefix in (SUMMARY_PREFIX, _OLDER_PREFIX):
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


def _text_of(record: dict[str, Any]) -> str:
    content = record["message"].get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def merged_message(records: list[Any], members: list[int]) -> dict[str, Any]:
    """The Anthropic message of a group: its records' content blocks, in order."""
    first = records[members[0]]["message"]
    if len(members) == 1:
        return dict(first)
    content: list[Any] = []
    for index in members:
        part = records[index]["message"].get("content")
        if isinstance(part, str):
            content.extend([{"type": "text", "text": part}] if part else [])
        elif isinstance(part, list):
            content.extend(part)
        else:
            raise InputError(f"message.content: expected a string or a list of blocks, got {type_name(part)}")
    return {**first, "content": content}


def read_messages(session: Session, source: str) -> list[Message]:
    """The model's messages of a session, each keeping its records as its source."""
    records = session.records
    reader = _AnthropicReader(source)
    merged = [merged_message(records, group.members) for group in session.groups]
    locator = Locator(source, merged, "")
    messages: list[Message] = []
    for number, (group, message) in enumerate(zip(session.groups, merged, strict=True)):
        line = _line(records, group.members[0])
        try:
            model = reader._message(message, locator, number)  # the Anthropic reading, shared
        except InputError as error:
            raise InputError(error.message, source=source, line=line) from None
        model.message_id = records[group.members[0]]["uuid"]
        messages.append(model.with_source([records[i] for i in group.members], NAME))
    return messages


def _line(records: list[Any], index: int) -> int | None:
    numbers = getattr(records, "line_numbers", None)
    return numbers[index] if numbers is not None and index < len(numbers) else None


def _read(value: Any, source: str, layout: Layout) -> Conversation:
    if not isinstance(value, list):
        raise InputError(f"expected the JSONL records of a session, got {type_name(value)}", source=source)
    session = analyse(value)
    warnings: list[str] = []
    # A subagent's first record names a record of its main session, in another file.
    if session.broken_link is not None and not session.sidechain:
        warnings.append(
            f"{record_name(value, session.broken_link)}: its parentUuid names no record of the file; "
            "every message record of the file is read, in file order"
        )
    warnings.extend(
        forged_summary(record_name(value, i), "is not right after a compact_boundary") for i in session.forged
    )
    summary = summary_of(_text_of(value[session.summary])) if session.summary is not None else None
    state = AgentState(context=read_messages(session, source), context_summary=summary)
    return Conversation(
        state=state,
        format=NAME,
        container=value,
        layout=layout,
        warnings=warnings,
        summary_from_user_turn=summary is not None,
    )


class _Writer:
    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.records: list[Any] = conversation.container
        self.session = analyse(self.records)

    def write(self) -> list[Any]:
        session, records = self.session, self.records
        if session.groups and not self.conversation.state.context and not self.conversation.state.context_summary:
            raise InputError("nothing of the session would be kept (no message, no summary); not written")
        kept, replaced = self._kept_groups()
        dropped = {index for index, group in session.owner.items() if group not in kept}
        summary = self.conversation.state.context_summary
        # With no message left, the summary is the conversation: written last, it is the leaf.
        changed = summary != self.conversation.original_summary or (not kept and bool(summary))
        if changed or summary is None:
            dropped.update(i for i in (session.boundary, session.summary) if i is not None)
        if session.summary is None and session.boundary is not None and not changed:
            dropped.discard(session.boundary)  # a boundary whose summary is not on the path stays
        parents = self._relinked(dropped)
        top = self._top(kept, dropped)
        pair: list[dict[str, Any]] = []
        at = len(records)
        if changed and summary:
            if self.conversation.summary_as not in (None, "message"):
                self.conversation.warnings.append(
                    f"claude-code: --summary-as {self.conversation.summary_as} is not used; a session's summary is "
                    "written as Claude Code's own compaction (a compact_boundary and its summary message)"
                )
            pair = self._summary_pair(summary, top, parents)
            if top is not None:
                parents[top] = pair[1]["uuid"]
                # Before the first kept record of a kept message (its snapshot included).
                at = min(i for i, group in session.owner.items() if group in kept and i not in dropped)
        out: list[Any] = []
        for index, record in enumerate(records):
            if index in dropped:
                continue
            if index == at:
                out.extend(pair)
            record = replaced.get(index, record)
            if index in parents and isinstance(record, dict) and record.get("parentUuid") != parents[index]:
                record = {**record, "parentUuid": parents[index]}
            out.append(record)
        if at == len(records):
            out.extend(pair)
        return out

    def _kept_groups(self) -> tuple[set[int], dict[int, dict[str, Any]]]:
        """The groups the conversation keeps, and the records of those a manager edited."""
        by_uuid = self.session.group_of_uuid()
        kept: set[int] = set()
        replaced: dict[int, dict[str, Any]] = {}
        for position, message in enumerate(self.conversation.state.context):
            group = by_uuid.get(message.message_id) if isinstance(message.message_id, str) else None
            if group is None or group in kept:
                raise InputError(
                    f"message {position} is not a message of this session; a Claude Code session is written "
                    "back only with its own messages"
                )
            kept.add(group)
            if message.source_in(NAME) is None:
                replaced.update(self._edited(group, message))
        return kept, replaced

    def _edited(self, group: int, message: Message) -> dict[int, dict[str, Any]]:
        """The records of ``group`` with the blocks a manager changed in ``message``."""
        original = read_messages(_one_group(self.session, group), "")[0]
        texts = [b for b in message.content if isinstance(b, TextBlock)]
        old_texts = [b for b in original.content if isinstance(b, TextBlock)]
        if len(texts) != len(old_texts):
            raise InputError("a manager changed the text blocks of a Claude Code message; not written")
        edits = _Edits(
            results={b.call_id: b.output for b in message.content if isinstance(b, ToolResultBlock)},
            before={b.call_id: b.output for b in original.content if isinstance(b, ToolResultBlock)},
            arguments={call["id"]: call["function"]["arguments"] for call in message.tools_calls or []},
            texts=iter(zip(old_texts, texts, strict=True)),
        )
        out: dict[int, dict[str, Any]] = {}
        for index in self.session.groups[group].members:
            record = self.records[index]
            edited = edits.record(record)
            if edited is not record:
                out[index] = edited
        return out

    def _relinked(self, dropped: set[int]) -> dict[int, str | None]:
        """New ``parentUuid`` of kept records whose parent is dropped: the nearest kept
        record above (``None``: none)."""
        records, by_uuid = self.records, self.session.by_uuid
        parents: dict[int, str | None] = {}
        nearest: dict[int, str | None] = {}
        for index, record in enumerate(records):
            if index in dropped or not isinstance(record, dict):
                continue
            parent = record.get("parentUuid")
            target = by_uuid.get(parent) if isinstance(parent, str) else None
            if target is None or target not in dropped:
                continue
            parents[index] = self._kept_above(target, dropped, nearest)
        return parents

    def _kept_above(self, start: int, dropped: set[int], nearest: dict[int, str | None]) -> str | None:
        """The uuid of the nearest kept record at or above dropped record ``start``
        (remembered in ``nearest`` for every dropped record passed, so that many records
        hanging on one long dropped chain cost one walk of it)."""
        records, by_uuid = self.records, self.session.by_uuid
        trail: list[int] = []
        seen: set[int] = set()
        target: int | None = start
        found: str | None = None
        while target is not None and target in dropped and target not in seen:
            if target in nearest:
                found = nearest[target]
                break
            seen.add(target)
            trail.append(target)
            above = records[target].get("parentUuid")
            target = by_uuid.get(above) if isinstance(above, str) else None
        else:
            found = None if target is None or target in dropped else records[target]["uuid"]
        for step in trail:
            nearest[step] = found
        return found

    def _top(self, kept: set[int], dropped: set[int]) -> int | None:
        """The first kept record of a kept message on the path (the conversation's head)."""
        for index in self.session.path:
            if index not in dropped and self.session.owner.get(index) in kept and is_message(self.records[index]):
                return index
        return None

    def _summary_pair(self, summary: str, top: int | None, parents: dict[int, str | None]) -> list[dict[str, Any]]:
        """A ``compact_boundary`` record and the ``isCompactSummary`` message after it."""
        path = self.session.path
        template = self.records[top if top is not None else path[-1]] if path else {}
        envelope = {key: template[key] for key in _ENVELOPE if key in template}
        seed = f"{template.get('sessionId')}\n{template.get('uuid')}\n{summary}"
        boundary_id = str(uuid_module.uuid5(uuid_module.NAMESPACE_URL, "ctxmgr-boundary\n" + seed))
        summary_id = str(uuid_module.uuid5(uuid_module.NAMESPACE_URL, "ctxmgr-summary\n" + seed))
        timestamp = template.get("timestamp")
        logical = parents.get(top, template.get("parentUuid")) if top is not None else None
        boundary = {
            "parentUuid": None,
            "logicalParentUuid": logical if isinstance(logical, str) else None,
            **envelope,
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "timestamp": timestamp,
            "uuid": boundary_id,
            "level": "info",
            # Claude Code reads this object on every later compaction; the estimate is ctxmgr's.
            "compactMetadata": {"trigger": "manual", "preTokens": tokens_of(read_messages(self.session, ""))},
        }
        message = {
            "parentUuid": boundary_id,
            **envelope,
            "type": "user",
            "message": {"role": "user", "content": SUMMARY_PREFIX + summary},
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
            "uuid": summary_id,
            "timestamp": timestamp,
        }
        return [boundary, message]


class _Edits:
    """What a manager changed in one message, applied to its records' blocks in order."""

    def __init__(self, *, results: dict[str, Any], before: dict[str, Any], arguments: dict[str, str], texts: Any):
        self.results, self.before, self.arguments, self.texts = results, before, arguments, texts

    def _text(self) -> str | None:
        old, new = next(self.texts, (None, None))
        return new.text if old is not None and new is not None and old.text != new.text else None

    def record(self, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` with its changed blocks (``record`` itself when none changed)."""
        content = record["message"].get("content")
        if isinstance(content, str):
            text = self._text() if content else None
            return record if text is None else {**record, "message": {**record["message"], "content": text}}
        if not isinstance(content, list):
            return record
        blocks = [self._block(block) for block in content]
        if blocks == content:
            return record
        edited = {**record, "message": {**record["message"], "content": blocks}}
        if any(new is not old and new.get("type") == "tool_result" for new, old in zip(blocks, content, strict=True)):
            edited.pop("toolUseResult", None)  # the tool's own copy of the output it no longer holds
        return edited

    def _block(self, block: Any) -> Any:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_result" and block.get("tool_use_id") in self.results:
            call = block["tool_use_id"]
            if self.results[call] != self.before.get(call):
                return {**block, "content": _result_content(self.results[call])}
        elif kind == "tool_use" and block.get("id") in self.arguments:
            new_input = orjson.loads(self.arguments[block["id"]])
            if new_input != block.get("input"):
                return {**block, "input": new_input}
        elif kind == "text":
            text = self._text()
            if text is not None:
                return {**block, "text": text}
        return block


def _one_group(session: Session, group: int) -> Session:
    return Session(session.records, session.sidechain, session.by_uuid, [], [session.groups[group]])


def _result_content(output: Any) -> Any:
    if isinstance(output, str) or (isinstance(output, list) and all(isinstance(p, dict) for p in output)):
        return output
    return orjson.dumps(output).decode()
