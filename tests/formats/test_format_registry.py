"""The format registry: each entry's parts are where it says, and the lookups built on it
(detection order, closest format, outline readers, carried fields, container keys, help)
answer as each format's entry says."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from ctxmgr import _format_registry as format_registry
from ctxmgr._format_registry import CONVERSATION_KEYS, ENTRIES, NAMES, TARGETS, Carried, entry, names_text
from ctxmgr.formats import FORMATS, adapter, closest_format
from ctxmgr.formats._base import Conversation
from ctxmgr.formats._outlines import OUTLINES
from ctxmgr.state import AgentState


@pytest.mark.parametrize("name", NAMES)
def test_every_part_of_an_entry_is_where_it_says(name: str) -> None:
    found = entry(name)
    assert found.adapter_class()().name == name == FORMATS[name].name == adapter(name).name
    assert found.score([]) in (0, 1, 2)
    assert found.clue_strength({}) == 0
    carried = found.carried()
    assert (carried is None) == (name == "native")  # native's model is the reference's: nothing to lose
    assert carried is None or isinstance(carried, Carried)
    assert (format_registry.outline_reader(name) is not None) == (name in OUTLINES)
    # A format with an outline reader declares the rules both readers follow.
    declared = found.declaration()
    assert (declared is not None) == (name in OUTLINES)
    assert declared is None or (declared.name == name and declared.marker_texts)


def test_the_lookups_follow_the_entries() -> None:
    assert list(FORMATS) == list(NAMES) == [e.name for e in ENTRIES]
    # The six API formats first, in detection order; formats added later follow them.
    assert NAMES[:6] == ("native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain")
    later = {"sharegpt", "gemini-cli", "agents-runstate", "claude-code", "swe-agent", "openhands", "codex"}
    assert later <= set(NAMES[6:])
    assert TARGETS == ("openai-chat", "openai-responses", "anthropic", "gemini")
    assert sorted(OUTLINES) == ["anthropic", "gemini", "langchain", "native", "openai-chat", "openai-responses"]
    assert {"contents", "context", "conversations", "input", "messages"} <= set(CONVERSATION_KEYS)
    assert names_text().startswith("native, openai-chat, openai-responses, anthropic, gemini, langchain")
    assert names_text(TARGETS, last=", ") == "openai-chat, openai-responses, anthropic, gemini"


def test_the_registry_imports_no_format() -> None:
    """The command line builds its help from the registry: loading it loads no format."""
    code = (
        "import sys, ctxmgr._format_registry as r; r.names_text(); "
        "print(sorted(m for m in sys.modules if m.startswith(('ctxmgr.formats', 'pydantic'))))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=True)
    assert proc.stdout.strip() == b"[]"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"messages": [], "system": "s"}, "anthropic"),
        ({"messages": [], "contents": []}, "openai-chat"),
        ({"messages": "x", "contents": []}, "gemini"),
        ({"contents": 1, "input": 1, "context": 1}, "gemini"),
        ({"input": 1, "context": 1}, "openai-responses"),
        ({"context": 1}, "native"),
        ({"other": 1}, None),
        ([1, {"parts": 1, "lc": 1, "role": 1}], "gemini"),
        ([{"lc": 1, "type": 1}], "langchain"),
        ([{"data": 1}], "langchain"),
        ([{"type": 1}], "openai-responses"),
        ([{"type": 1, "role": 1}], "openai-chat"),
        ([{"content": 1}], None),
        ([1, 2], None),
        ("text", None),
    ],
)
def test_the_strongest_clue_names_the_closest_format(value: Any, expected: str | None) -> None:
    assert closest_format(value) == expected


@pytest.mark.parametrize(
    ("container", "one"),
    [
        ({"output": [], "type": ""}, True),  # a Responses item whose output is a list
        ({"output": None, "type": "function_call_output"}, True),
        ({"object": "response", "output": []}, False),  # a stored response
        ({"input": "hi"}, False),  # a request with a string input
        ({"messages": []}, False),
        ({"role": "user", "content": "x"}, True),
    ],
)
def test_one_record_is_what_no_format_holds_records_in(container: dict[str, Any], one: bool) -> None:
    conversation = Conversation(state=AgentState(), format="openai-responses", container=container, layout="document")
    assert conversation.one_record is one
