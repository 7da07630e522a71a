"""A session-log format registered by the tests alone (``session_log=True``), for the
machinery every agent session format shares: the conversion refusal, live-file checks and
companion files.

A session is ``{"session": "<id>", "log": [{"who": "human" | "bot" | "boss", "said": "..."}]}``;
ctxmgr's summary is a record ``{"who": "summary", "said": "..."}`` at the head of ``log``.
Its subagent files sit under ``<stem>/agents/*.json`` beside it (the entry's companions).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ctxmgr import _format_registry as format_registry
from ctxmgr.errors import InputError
from ctxmgr.formats._base import CERTAIN, NO, Conversation, Layout
from ctxmgr.state import AgentState, Message, TextBlock

NAME = "dummy-log"
ROLES = {"human": "user", "bot": "assistant", "boss": "system"}
BACK = {role: who for who, role in ROLES.items()}
COMPANIONS = "{stem}/agents/*.json"


def score(value: Any) -> int:
    if isinstance(value, dict) and isinstance(value.get("session"), str) and isinstance(value.get("log"), list):
        return CERTAIN
    return NO


def clue(value: Any) -> int:
    return 1 if isinstance(value, dict) and "log" in value else 0


class DummyLogFormat:
    name = NAME
    list_key = "log"
    request = None
    user_turn_summary = False

    def detect(self, value: Any) -> int:
        return score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        return {k: v for k, v in container.items() if k != "log"} if isinstance(container, dict) else {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        summary: str | None = None
        messages: list[Message] = []
        records = value.get("log") if isinstance(value, dict) else None
        if not isinstance(records, list):
            raise InputError("log: required list is missing", source=source)
        for index, record in enumerate(records):
            said = record.get("said") if isinstance(record, dict) else None
            if not isinstance(said, str):
                raise InputError(f"log[{index}].said: required string is missing", source=source)
            if record.get("who") == "summary":
                summary = said
                continue
            role = ROLES.get(record.get("who"))
            if role is None:
                raise InputError(f"log[{index}].who: unknown speaker", source=source)
            message = Message(role=role, content=[TextBlock(text=said)])  # type: ignore[arg-type]
            messages.append(message.with_source([record], NAME))
        state = AgentState(context=messages, context_summary=summary)
        return Conversation(state=state, format=NAME, container=value, layout=layout)

    def write(self, conversation: Conversation) -> Any:
        records: list[Any] = []
        if conversation.state.context_summary:
            records.append({"who": "summary", "said": conversation.state.context_summary})
        for message in conversation.state.context:
            source = message.source_in(NAME)
            records.extend(source if source is not None else [{"who": BACK[message.role], "said": message.text()}])
        container = conversation.container if isinstance(conversation.container, dict) else {"session": "new"}
        return {**container, "log": records}


@contextmanager
def registered() -> Iterator[None]:
    """The dummy session log in the registry for the duration."""
    format_registry.register(
        format_registry.FormatEntry(
            name=NAME,
            light=__name__,
            adapter=f"{__name__}:DummyLogFormat",
            carries=False,
            session_log=True,
            companions=COMPANIONS,
        )
    )
    try:
        yield
    finally:
        format_registry.unregister(NAME)


def session(turns: int = 4, session_id: str = "s-1") -> dict[str, Any]:
    """A dummy session of ``turns`` user turns after one system record."""
    log: list[dict[str, str]] = [{"who": "boss", "said": "Answer in one line."}]
    for turn in range(1, turns + 1):
        log.append({"who": "human", "said": f"Question {turn}: where is order A-{turn}00?"})
        log.append({"who": "bot", "said": f"Order A-{turn}00 ships on day {turn}."})
    return {"session": session_id, "log": log}
