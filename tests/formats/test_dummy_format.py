"""A format added through the registry alone (``ctxmgr._format_registry.register``) works
end to end: ``trim`` and ``summarize --model offline`` read a file of it and write it back
in its shape, through the command line.

The format is defined here, in full: its light half (``score``, ``clue``, ``outline``,
``DECLARATION``) is this module's, its adapter :class:`DummyFormat`. A conversation is
``{"dummy_chat": [{"who": "human" | "bot" | "boss", "said": "..."}], ...}``; ctxmgr's
summary is a record ``{"who": "summary", "said": "..."}`` at its head.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from _fast_paths import trim_document_both_ways
from typer.testing import CliRunner

from ctxmgr import _format_registry as format_registry, formats
from ctxmgr.cli import app
from ctxmgr.errors import InputError
from ctxmgr.formats._base import CERTAIN, NO, Conversation, Layout, Outline
from ctxmgr.formats._declaration import Declaration
from ctxmgr.state import AgentState, Message, MessageContextManager, TextBlock
from ctxmgr.state._tokens import text_units

NAME = "dummy"

DECLARATION = Declaration(
    name=NAME,
    roles={"human": "user", "bot": "assistant", "boss": "system"},
    marker_texts=(("said",),),
    marker_names=((("who",), "summary"),),
)
BACK = {role: who for who, role in DECLARATION.roles.items()}


def score(value: Any) -> int:
    return CERTAIN if isinstance(value, dict) and isinstance(value.get("dummy_chat"), list) else NO


def clue(value: Any) -> int:
    return 0


def outline(value: Any) -> Outline | None:
    """Roles of a plain dummy conversation (no summary, no marker: the full reader's)."""
    records = value.get("dummy_chat") if isinstance(value, dict) else None
    if not isinstance(records, list):
        return None
    roles: list[str] = []
    for record in records:
        role = DECLARATION.roles.get(record.get("who")) if isinstance(record, dict) else None
        if role is None or not isinstance(record.get("said"), str) or DECLARATION.marked(record):
            return None
        roles.append(role)
    return Outline(
        roles,
        [()] * len(roles),
        [()] * len(roles),
        lambda kept: {**value, "dummy_chat": [records[i] for i in kept]},
        lambda: [text_units(record["said"]) for record in records],
    )


class DummyFormat:
    name = NAME
    list_key = "dummy_chat"
    request = None
    user_turn_summary = False

    def detect(self, value: Any) -> int:
        return score(value)

    def container_keys(self, container: Any) -> dict[str, Any]:
        return {k: v for k, v in container.items() if k != "dummy_chat"} if isinstance(container, dict) else {}

    def read(self, value: Any, *, source: str, layout: Layout) -> Conversation:
        summary: str | None = None
        messages: list[Message] = []
        for index, record in enumerate(value["dummy_chat"]):
            said = record.get("said") if isinstance(record, dict) else None
            if not isinstance(said, str):
                raise InputError(f"dummy_chat[{index}].said: required string is missing", source=source)
            if DECLARATION.marked(record) and record.get("who") == "summary":
                summary = said
                continue
            role = DECLARATION.roles.get(record.get("who"))
            if role is None:
                raise InputError(f"dummy_chat[{index}].who: unknown speaker", source=source)
            message = Message(role=role, content=[TextBlock(text=said)])  # type: ignore[arg-type]
            messages.append(message.with_source([record], NAME))
        state = AgentState(context=messages, context_summary=summary)
        return Conversation(state=state, format=NAME, container=value, layout=layout)

    def write(self, conversation: Conversation) -> Any:
        records: list[Any] = []
        summary = conversation.state.context_summary
        if summary:
            records.append({"who": "summary", "said": summary})
        for message in conversation.state.context:
            source = message.source_in(NAME)
            records.extend(source if source is not None else [{"who": BACK[message.role], "said": message.text()}])
        container = conversation.container if isinstance(conversation.container, dict) else {}
        return {**container, "dummy_chat": records}


@pytest.fixture
def dummy() -> Iterator[None]:
    format_registry.register(
        format_registry.FormatEntry(name=NAME, light=__name__, adapter=f"{__name__}:DummyFormat", outline=True)
    )
    try:
        yield
    finally:
        format_registry.unregister(NAME)


CONVERSATION = {
    "title": "kept as it is",
    "dummy_chat": [
        {"who": "boss", "said": "Answer in one line."},
        *(
            record
            for turn in range(1, 6)
            for record in (
                {"who": "human", "said": f"Question {turn}: where is order A-{turn}00?"},
                {"who": "bot", "said": f"Order A-{turn}00 ships on day {turn}."},
            )
        ),
    ],
}


def test_a_registered_format_is_known_and_then_forgotten(dummy: None) -> None:
    assert format_registry.NAMES[-1] == NAME
    assert "dummy_chat" not in format_registry.CONVERSATION_KEYS  # its entry names none
    format_registry.unregister(NAME)
    assert NAME not in format_registry.NAMES
    format_registry.register(
        format_registry.FormatEntry(name=NAME, light=__name__, adapter=f"{__name__}:DummyFormat", outline=True)
    )
    with pytest.raises(ValueError, match="already registered"):
        format_registry.register(format_registry.FormatEntry(name=NAME, light=__name__, adapter="x:y"))


def test_trim_writes_a_dummy_file_back_in_its_shape(dummy: None, tmp_path: Path) -> None:
    source, out = tmp_path / "chat.json", tmp_path / "out.json"
    source.write_bytes(orjson.dumps(CONVERSATION))
    result = CliRunner().invoke(app, ["trim", "-n", "2", "--no-view", "-o", str(out), str(source)])
    assert result.exit_code == 0, result.output
    written = orjson.loads(out.read_bytes())
    records = CONVERSATION["dummy_chat"]
    assert written == {"title": "kept as it is", "dummy_chat": [records[0], *records[-4:]]}


def test_trim_reads_a_dummy_file_alike_on_both_paths(dummy: None, tmp_path: Path) -> None:
    fast, _ = trim_document_both_ways(tmp_path, CONVERSATION, MessageContextManager(max_messages=2), pretty=True)
    assert (fast.format, fast.messages_before, fast.messages_after) == (NAME, 11, 5)


def test_summarize_offline_writes_a_dummy_file_back_in_its_shape(dummy: None, tmp_path: Path) -> None:
    source, out = tmp_path / "chat.json", tmp_path / "out.json"
    source.write_bytes(orjson.dumps(CONVERSATION))
    arguments = ["summarize", "--model", "offline", "--max-messages", "6", "--keep-recent", "2", "--no-view"]
    result = CliRunner().invoke(app, [*arguments, "-o", str(out), str(source)])
    assert result.exit_code == 0, result.output
    written = orjson.loads(out.read_bytes())
    assert list(written) == ["title", "dummy_chat"]
    records = written["dummy_chat"]
    assert all(set(record) == {"who", "said"} for record in records)
    summary = [record for record in records if record["who"] == "summary"]
    assert len(summary) == 1
    assert summary[0]["said"]
    assert records[-2:] == CONVERSATION["dummy_chat"][-2:]  # the newest kept as they were
    assert {"who": "boss", "said": "Answer in one line."} in records
    assert len(records) < len(CONVERSATION["dummy_chat"])
    # Read back, the summary is the conversation's (a second run appends to it).
    assert formats.load(out.read_bytes(), source="out.json").state.context_summary == summary[0]["said"]
