"""What every session-log format shares, on a format registered here (``tests/_session_dummy.py``):
a session log is read, compacted and written back, never written from another format;
and a file read under a named ``--from`` must mean something in that format.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from _session_dummy import NAME, registered, session
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from ctxmgr import _format_registry as format_registry, formats
from ctxmgr.cli import app
from ctxmgr.errors import UsageError
from ctxmgr.formats import _interop, _meaning

RUNNER = CliRunner()


@pytest.fixture
def dummy_log() -> Iterator[None]:
    with registered():
        yield


def _old(path: Path) -> None:
    """Make ``path`` look written a minute ago (a session log changed just now is live)."""
    then = time.time() - 60
    os.utime(path, (then, then))


CHAT = {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is A-100?"}]}


def test_a_session_log_is_no_conversion_target(dummy_log: None) -> None:
    assert NAME in format_registry.NAMES
    assert NAME not in format_registry.CONVERTIBLE
    assert "openai-chat" in format_registry.CONVERTIBLE
    with pytest.raises(ValueError, match="dummy-log is a session log its tool writes; converting openai-chat"):
        format_registry.refuse_conversion("openai-chat", NAME)
    format_registry.refuse_conversion(NAME, NAME)  # its own format: written back, not converted
    format_registry.refuse_conversion(NAME, "openai-chat")  # out of a session log: allowed


def test_convert_into_a_session_log_is_refused_and_writes_nothing(dummy_log: None, tmp_path: Path) -> None:
    source, out = tmp_path / "chat.json", tmp_path / "out.json"
    source.write_bytes(orjson.dumps(CHAT))
    result = RUNNER.invoke(app, ["convert", "--to", NAME, "-o", str(out), str(source)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: dummy-log is a session log its tool writes; converting another format into it")
    assert "would need an invented session" in lines[0]
    assert not out.exists()


def test_trim_to_a_session_log_from_another_format_is_refused(dummy_log: None, tmp_path: Path) -> None:
    source, out = tmp_path / "chat.json", tmp_path / "out.json"
    source.write_bytes(orjson.dumps(CHAT))
    # Detected as OpenAI chat: the writer refuses it as it is read.
    result = RUNNER.invoke(app, ["trim", "--to", NAME, "--no-view", "-o", str(out), str(source)])
    assert result.exit_code == 2, result.output
    assert "dummy-log is a session log its tool writes; converting openai-chat into it" in result.stderr
    assert not out.exists()
    # Named with --from: refused before anything is read.
    result = RUNNER.invoke(app, ["trim", "--from", "openai-chat", "--to", NAME, "-o", str(out), str(source)])
    assert result.exit_code == 2
    assert "converting openai-chat into it would need an invented session" in result.stderr
    assert not out.exists()


def test_a_session_log_converts_out_and_trims_into_itself(dummy_log: None, tmp_path: Path) -> None:
    source, out, back = tmp_path / "s.json", tmp_path / "out.json", tmp_path / "back.json"
    source.write_bytes(orjson.dumps(session(4)))
    _old(source)
    result = RUNNER.invoke(app, ["convert", "--to", "openai-chat", "-o", str(out), str(source)])
    assert result.exit_code == 0, result.output
    assert [m["role"] for m in orjson.loads(out.read_bytes())["messages"]][:3] == ["system", "user", "assistant"]
    result = RUNNER.invoke(app, ["trim", "-n", "1", "--to", NAME, "--no-view", "-o", str(back), str(source)])
    assert result.exit_code == 0, result.output
    assert orjson.loads(back.read_bytes())["log"] == session(4)["log"][:1] + session(4)["log"][-2:]


def test_help_lists_only_the_formats_a_conversion_may_write(dummy_log: None) -> None:
    from ctxmgr.config._flags import CONVERT_TO

    # The flag table is read at import, before the test registered its format: the
    # derivation is what is checked, on the registry as it is now.
    assert NAME in format_registry.names_text()
    assert NAME not in format_registry.names_text(format_registry.CONVERTIBLE)
    assert "(required): native, openai-chat" in CONVERT_TO.help
    from ctxmgr.cli.flags import format_settings

    with pytest.raises(UsageError, match="converting another format into it"):
        format_settings("convert", _convert_params(NAME))


def _convert_params(to: str) -> dict[str, Any]:
    from ctxmgr.config import COMMANDS

    params = {flag.param: flag.default for flag in COMMANDS["convert"]}
    params["to_format"] = to
    return params


def test_dump_refuses_to_write_a_session_log_from_another_format(dummy_log: None) -> None:
    conversation = formats.load(orjson.dumps(CHAT), source="chat.json")
    with pytest.raises(UsageError, match="converting openai-chat into it"):
        formats.dump(conversation, to=NAME)
    assert orjson.loads(formats.dump(conversation, to="anthropic"))["system"] == "Be brief."


# -- a named --from under which the file means nothing ------------------------------------

CODEX_LIKE = b"\n".join(
    orjson.dumps(record)
    for record in (
        {"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x", "cwd": "/"}},
        {"timestamp": "2025-01-01T00:00:01Z", "type": "turn_context", "payload": {"model": "m"}},
        {"timestamp": "2025-01-01T00:00:02Z", "type": "event_msg", "payload": {"type": "agent_message"}},
    )
)
PASSTHROUGH = {
    "type": "data",
    "mime_type": "application/vnd.ctxmgr.passthrough+json",
    "format": "openai-responses",
    "block": {"type": "session_meta"},
}

MEANINGLESS: dict[str, bytes] = {
    # One blank assistant message of three records Responses has no reading for.
    "openai-responses": CODEX_LIKE,
    # Messages whose every part is of a type the format does not know.
    "openai-chat": orjson.dumps({"messages": [{"role": "user", "content": [{"type": "foo"}]}]}),
    "anthropic": orjson.dumps(
        {
            "messages": [
                {"role": "user", "content": [{"type": "foo"}]},
                {"role": "assistant", "content": [{"type": "x"}]},
            ]
        }
    ),
    "gemini": orjson.dumps({"contents": [{"role": "user", "parts": [{"foo": 1}]}]}),
    "langchain": orjson.dumps([{"type": "human", "data": {"content": [{"type": "foo"}]}}]),
    # Native holding nothing but another format's records carried whole.
    "native": orjson.dumps({"context": [{"role": "assistant", "content": [PASSTHROUGH]}]}),
}


@pytest.mark.parametrize("fmt", sorted(MEANINGLESS))
@pytest.mark.parametrize("command", [["stats"], ["trim", "-n", "1", "--no-view"], ["convert", "--to", "native"]])
def test_a_file_that_means_nothing_under_from_is_an_error(tmp_path: Path, fmt: str, command: list[str]) -> None:
    source = tmp_path / ("log.jsonl" if fmt == "openai-responses" else "log.json")
    source.write_bytes(MEANINGLESS[fmt])
    result = RUNNER.invoke(app, [*command, "--from", fmt, str(source)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {source}: reads as nothing meaningful as {fmt}: ")
    assert result.stdout == ""


def test_the_rule_counts_read_unread_and_empty_messages() -> None:
    def judged(messages: list[Any]) -> tuple[int, int] | None:
        conversation = formats.load(orjson.dumps({"messages": messages}), source="x.json", fmt="openai-chat")
        return _meaning.unread_records(conversation)

    text, unknown, empty = (
        {"role": "user", "content": "hi"},
        {"role": "user", "content": [{"type": "foo"}]},
        {"role": "assistant", "content": ""},
    )
    assert judged([]) is None  # an empty conversation is no wrong format
    assert judged([text]) is None
    assert judged([text, unknown]) is None  # as many read as unread
    assert judged([text, unknown, unknown]) == (2, 1)  # most unread
    assert judged([text, empty, empty, unknown]) is None  # empty messages count for neither
    assert judged([empty]) == (0, 0)  # nothing but an empty message: meaningless by the rule...
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    assert judged([call, unknown]) is None  # a tool call is read


def test_the_light_passthrough_mark_is_the_readers() -> None:
    assert _meaning.PASSTHROUGH_MIME == _interop.PASSTHROUGH_MIME


def test_a_file_that_means_something_under_from_still_reads(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    unknown = {"role": "user", "content": [{"type": "foo"}]}
    source.write_bytes(orjson.dumps({"messages": [{"role": "user", "content": "hi"}, unknown]}))
    for command in (["stats"], ["trim", "-n", "1", "--no-view"]):
        result = RUNNER.invoke(app, [*command, "--from", "openai-chat", str(source)])
        assert result.exit_code == 0, result.output


def test_a_wrong_from_names_what_the_file_looks_like(tmp_path: Path) -> None:
    source = tmp_path / "chat.json"
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    source.write_bytes(orjson.dumps({"messages": [{"role": "user", "content": [image]}]}))
    result = RUNNER.invoke(app, ["stats", "--from", "anthropic", str(source)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: {source}: reads as nothing meaningful as anthropic: none of its 1 message holds text or tool "
        "calls; it looks like an openai-chat file (leave --from out, or use --from openai-chat)"
    )
    assert RUNNER.invoke(app, ["stats", str(source)]).exit_code == 0


def test_an_unrecognised_file_names_the_kind_it_looks_like(tmp_path: Path) -> None:
    source = tmp_path / "bad.json"
    source.write_bytes(orjson.dumps({"contents": [{"role": "user", "parts": "x"}]}))
    result = RUNNER.invoke(app, ["stats", str(source)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: {source}: looks like a gemini file: contents[0].parts: expected a list of parts, got string "
        "(use --from to name another format)"
    )


# The light twin never lets through what the full rule refuses: an outline it calls clear
# is a conversation the full reader reads as meaningful.
_KINDS = {
    "text": {"role": "user", "content": "Where is A-100?"},
    "blank": {"role": "user", "content": " "},
    "empty": {"role": "assistant", "content": ""},
    "unknown": {"role": "user", "content": [{"type": "foo"}]},
    "call": {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    },
    "result": {"role": "tool", "tool_call_id": "c1", "content": ""},
    "system": {"role": "system", "content": "Be brief."},
}


@given(st.lists(st.sampled_from(sorted(_KINDS)), max_size=8))
def test_an_outline_called_clear_is_meaningful_to_the_full_reader(kinds: list[str]) -> None:
    from ctxmgr.formats._outlines import OUTLINES

    value = {"messages": [_KINDS[kind] for kind in kinds]}
    conversation = formats.load_value(value, source="x.json", layout="document", fmt="openai-chat")
    outline = OUTLINES["openai-chat"](value)
    if outline is not None and not _meaning.may_mean_nothing(outline):
        assert _meaning.unread_records(conversation) is None
    # The rule itself: meaningless exactly when nothing is read, or more is unread than read.
    read = sum(kind not in ("empty", "unknown") for kind in kinds)
    unread = kinds.count("unknown")
    expected = None if not kinds or (read and unread <= read) else (unread, read)
    assert _meaning.unread_records(conversation) == expected


def test_dataset_lines_are_not_judged_by_the_rule(tmp_path: Path) -> None:
    source = tmp_path / "data.jsonl"
    lines = [{"messages": [{"role": "user", "content": ""}]}, {"messages": [{"role": "user", "content": "hi"}]}]
    source.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    for command in (["stats"], ["trim", "-n", "1", "--check"], ["convert", "--to", "anthropic"]):
        result = RUNNER.invoke(app, [*command, "--from", "openai-chat", str(source)])
        assert result.exit_code == 0, (command, result.output)


def test_empty_messages_of_the_format_detection_finds_are_no_error(tmp_path: Path) -> None:
    # ...but no wrong --from when detection finds the format named too (an empty conversation).
    source = tmp_path / "chat.json"
    source.write_bytes(orjson.dumps({"messages": [{"role": "user", "content": ""}]}))
    assert RUNNER.invoke(app, ["stats", "--from", "openai-chat", str(source)]).exit_code == 0
    assert formats.load(source.read_bytes(), source="chat.json", fmt="openai-chat", whole_file=True).state.context
    # Under a format detection does not find, the same file means nothing.
    result = RUNNER.invoke(app, ["stats", "--from", "openai-responses", str(source)])
    assert result.exit_code == 2


def test_the_help_of_to_lists_no_session_log() -> None:
    # The help is built when the command line is imported: register first, in a fresh process.
    tests = Path(__file__).resolve().parents[1]
    code = (
        f"import sys; sys.path.insert(0, {str(tests)!r})\n"
        "from ctxmgr import _format_registry as r\n"
        f"r.register(r.FormatEntry(name={NAME!r}, light='_session_dummy', adapter='_session_dummy:DummyLogFormat', "
        "carries=False, session_log=True))\n"
        "from typer.testing import CliRunner; from ctxmgr.cli import app\n"
        "print(' '.join(CliRunner().invoke(app, ['convert', '--help']).output.split()))\n"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    to_help = output.split("--to FORMAT", 1)[1].split("--", 1)[0]
    from_help = output.split("--from FORMAT", 1)[1].split("--", 1)[0]
    assert "Output format (required): native, openai-chat" in to_help
    assert NAME not in to_help
    assert NAME in from_help  # read, compacted, converted from: never converted into
