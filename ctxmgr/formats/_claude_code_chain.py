"""The structure of a Claude Code session: its chain, its messages and what hangs on them.

A session file is a tree of records linked by ``parentUuid``; the conversation is the
path from the leaf (the last user or assistant record, in file order) up to a root or
to Claude Code's own ``compact_boundary``. :func:`analyse` finds it and groups its
records into messages:

* assistant records sharing ``message.id`` are one message (Claude Code writes one
  record per content block, and a parallel call's record may hang off its sibling,
  beside the path: siblings are gathered from the whole file);
* user records holding ``tool_result`` blocks for the calls of an assistant message are
  one tool message after it (a result may also hang beside the path);
* every other user record is a message of its own.

A chain that breaks (a ``parentUuid`` naming no record of the file: a fragment, such as
one message's records kept in a native file's ``raw``) is not followed: every message
record of the file is then taken, in file order.

Records that are not messages belong to one (:attr:`Session.owner`): a record on the
tree (progress, system notes, attachments) to the nearest message above it, reached
through records that are not messages; a ``file-history-snapshot`` to the message its
``messageId`` names. The others (queue operations, titles, records before the first
message, dead branches, sidechains) belong to none and are always kept.

This module reads plain records only: both the reader and the writer run it, so they
agree on every group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Group", "Session", "analyse", "is_message", "tool_result_ids"]


def is_message(record: Any) -> bool:
    """Whether ``record`` is a user or assistant record holding a message object."""
    if not isinstance(record, dict):
        return False
    return record.get("type") in ("user", "assistant") and isinstance(record.get("message"), dict)


def _content(record: dict[str, Any]) -> Any:
    return record["message"].get("content")


def tool_result_ids(record: dict[str, Any]) -> list[str]:
    """The ``tool_use_id`` of each ``tool_result`` block of a user record."""
    content = _content(record)
    if not isinstance(content, list):
        return []
    return [
        block["tool_use_id"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str)
    ]


def _tool_use_ids(record: dict[str, Any]) -> list[str]:
    content = _content(record)
    if not isinstance(content, list):
        return []
    return [
        block["id"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str)
    ]


def _message_id(record: dict[str, Any]) -> str | None:
    value = record["message"].get("id")
    return value if isinstance(value, str) and value else None


@dataclass
class Group:
    """One message of the conversation: its kind and its records (indices, file order)."""

    kind: str  # "user", "assistant" or "tool"
    members: list[int]
    message_id: str | None = None


@dataclass
class Session:
    """What :func:`analyse` found in a session's records."""

    records: list[Any]
    sidechain: bool
    """The conversation is a sidechain's (a subagent file, whose records all are)."""
    by_uuid: dict[str, int]
    path: list[int]
    """The chain from its root (or the boundary) down to the leaf, as record indices."""
    groups: list[Group]
    boundary: int | None = None
    """The ``compact_boundary`` at the path's root, if the session was compacted."""
    summary: int | None = None
    """The ``isCompactSummary`` user record right after :attr:`boundary`."""
    owner: dict[int, int] = field(default_factory=dict)
    """Record index -> the group it belongs to (records of no group are absent)."""
    forged: list[int] = field(default_factory=list)
    """``isCompactSummary`` records that are not right after the boundary."""
    broken_link: int | None = None
    """A path record whose ``parentUuid`` names no record of the file."""

    def group_of_uuid(self) -> dict[str, int]:
        """The uuid of each group's first record -> the group (how messages are named)."""
        return {self.records[g.members[0]]["uuid"]: n for n, g in enumerate(self.groups)}


def _index(records: list[Any]) -> dict[str, int]:
    by_uuid: dict[str, int] = {}
    for index, record in enumerate(records):
        uuid = record.get("uuid") if isinstance(record, dict) else None
        if isinstance(uuid, str):
            by_uuid.setdefault(uuid, index)  # a duplicated line: the first one counts
    return by_uuid


def _path(records: list[Any], by_uuid: dict[str, int], leaf: int) -> tuple[list[int], int | None]:
    path: list[int] = []
    seen: set[int] = set()
    index: int | None = leaf
    broken: int | None = None
    while index is not None and index not in seen:
        seen.add(index)
        path.append(index)
        parent = records[index].get("parentUuid")
        if not isinstance(parent, str):
            break
        index = by_uuid.get(parent)
        if index is None:
            broken = path[-1]
    path.reverse()
    return path, broken


def _on_side(record: Any, sidechain: bool) -> bool:
    return is_message(record) and bool(record.get("isSidechain")) == sidechain


def _repeated(session: Session, index: int) -> bool:
    """Whether record ``index`` repeats the uuid of an earlier line (Claude Code sometimes
    writes a record twice): the first one is the record, the repeat belongs to nothing."""
    return session.by_uuid.get(session.records[index]["uuid"], index) != index


def analyse(records: list[Any]) -> Session:
    """The conversation of a session's ``records`` (see the module docstring)."""
    by_uuid = _index(records)
    sidechain = not any(_on_side(record, False) for record in records)
    leaf = next((i for i in range(len(records) - 1, -1, -1) if _on_side(records[i], sidechain)), None)
    if leaf is None:
        return Session(records, sidechain, by_uuid, [], [])
    leaf = by_uuid.get(records[leaf]["uuid"], leaf)  # a repeated last line: its first writing
    path, broken = _path(records, by_uuid, leaf)
    session = Session(records, sidechain, by_uuid, path, [], broken_link=broken)
    start = 0
    root = records[path[0]]
    if root.get("type") == "system" and root.get("subtype") == "compact_boundary":
        session.boundary = path[0]
        start = 1
        if len(path) > 1 and is_message(records[path[1]]) and records[path[1]].get("isCompactSummary") is True:
            session.summary = path[1]
            start = 2
    chosen = [i for i in path[start:] if is_message(records[i])]
    if broken is not None:
        # A fragment (a message's records alone, as native keeps them, or a file cut at
        # its start): no chain to follow past the break, so every message record counts.
        chosen = [i for i, r in enumerate(records) if _on_side(r, sidechain) and not _repeated(session, i)]
    _gather(session, chosen)
    _own(session)
    session.forged = [i for g in session.groups for i in g.members if records[i].get("isCompactSummary") is True]
    return session


def _gather(session: Session, chosen: list[int]) -> None:
    """Add the path's siblings and tool results beside the path, then group them."""
    records = session.records
    floor = session.path[0]
    taken = set(chosen)
    ids = {_message_id(records[i]) for i in chosen if records[i]["type"] == "assistant"} - {None}
    calls = {call for i in chosen if records[i]["type"] == "assistant" for call in _tool_use_ids(records[i])}
    answered = {call for i in chosen if records[i]["type"] == "user" for call in tool_result_ids(records[i])}
    for index in range(floor, len(records)):
        record = records[index]
        if index in taken or not _on_side(record, session.sidechain) or _repeated(session, index):
            continue
        if record["type"] == "assistant" and _message_id(record) in ids:
            taken.add(index)
            calls.update(_tool_use_ids(record))
    for index in range(floor, len(records)):
        record = records[index]
        if index in taken or not _on_side(record, session.sidechain) or record["type"] != "user":
            continue
        if _repeated(session, index):
            continue
        results = tool_result_ids(record)
        if results and all(call in calls and call not in answered for call in results):
            taken.add(index)
            answered.update(results)
    session.groups = _groups(records, sorted(taken))


def _groups(records: list[Any], indices: list[int]) -> list[Group]:
    groups: list[Group] = []
    assistant: Group | None = None
    tool: Group | None = None
    for index in indices:
        record = records[index]
        if record["type"] == "assistant":
            message_id = _message_id(record)
            if assistant is not None and message_id is not None and assistant.message_id == message_id:
                assistant.members.append(index)
                continue
            assistant = Group("assistant", [index], message_id)
            tool = None
            groups.append(assistant)
        elif tool_result_ids(record):
            if tool is not None:
                tool.members.append(index)
                continue
            tool = Group("tool", [index])
            groups.append(tool)
        else:
            assistant = tool = None
            groups.append(Group("user", [index]))
    return groups


def _own(session: Session) -> None:
    """Give each record that is not a message the group it hangs on (see the docstring)."""
    records = session.records
    owner = session.owner
    for number, group in enumerate(session.groups):
        for index in group.members:
            owner[index] = number
    resolved: dict[int, int | None] = {}
    for index, record in enumerate(records):
        if index in owner or not isinstance(record, dict) or is_message(record):
            continue
        if record.get("type") == "file-history-snapshot":
            target = session.by_uuid.get(record.get("messageId"))  # type: ignore[arg-type]
            if target is not None and target in owner and is_message(records[target]):
                owner[index] = owner[target]
            continue
        if index in (session.boundary, session.summary) or not isinstance(record.get("uuid"), str):
            continue
        found = _hangs_on(records, session.by_uuid, index, owner, resolved)
        if found is not None:
            owner[index] = found


def _hangs_on(
    records: list[Any], by_uuid: dict[str, int], index: int, owner: dict[int, int], resolved: dict[int, int | None]
) -> int | None:
    """The group of the nearest message above record ``index``, through records that are
    not messages (``None``: it reaches a message of no group, a root, or a loop)."""
    trail: list[int] = []
    on_trail: set[int] = set()  # a loop is found in constant time per step, however long the chain
    found: int | None = None
    current: int | None = index
    while current is not None:
        if current in resolved:
            found = resolved[current]
            break
        record = records[current]
        if current != index and is_message(record):
            found = owner.get(current)
            break
        if current in on_trail:
            break
        trail.append(current)
        on_trail.add(current)
        parent = record.get("parentUuid") if isinstance(record, dict) else None
        current = by_uuid.get(parent) if isinstance(parent, str) else None
    for step in trail:
        resolved[step] = found
    return found
