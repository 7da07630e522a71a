"""An edited record keeps its other keys: clearing or cutting a tool result (or clearing a
call's arguments) changes that value only, in every API format, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.formats._carry import carry_keys

BIG = "lorem ipsum dolor sit amet " * 80

CHAT = {
    "messages": [
        {"role": "user", "content": "look it up"},
        {
            "role": "assistant",
            "content": None,
            "refusal": None,
            "x_vendor": {"trace": "t-1"},
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "' + BIG + '"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "lookup", "content": BIG, "x_vendor": 7},
        {"role": "assistant", "content": "found it"},
        {"role": "user", "content": "thanks"},
    ]
}
RESPONSES = {
    "input": [
        {"role": "user", "content": "look it up"},
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "lookup",
            "arguments": "{}",
            "id": "fc_1",
            "status": "completed",
        },
        {"type": "function_call_output", "call_id": "c1", "output": BIG, "id": "fco_1", "status": "completed"},
        {"role": "user", "content": "thanks"},
    ]
}
ANTHROPIC = {
    "messages": [
        {"role": "user", "content": "look it up"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": BIG}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": BIG,
                    "cache_control": {"type": "ephemeral"},
                }
            ],
            "x_vendor": 2,
        },
        {"role": "assistant", "content": "found it"},
        {"role": "user", "content": "thanks"},
    ]
}
GEMINI = {
    "contents": [
        {"role": "user", "parts": [{"text": "look it up"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {"q": BIG}, "id": "c1"}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "lookup", "id": "c1", "response": {"output": BIG}}, "x_vendor": 1}],
        },
        {"role": "user", "parts": [{"text": "thanks"}]},
    ]
}
LANGCHAIN = [
    {"type": "human", "data": {"content": "look it up", "type": "human"}},
    {
        "type": "ai",
        "data": {
            "content": "",
            "type": "ai",
            "tool_calls": [{"name": "lookup", "args": {}, "id": "c1", "type": "tool_call"}],
        },
    },
    {
        "type": "tool",
        "data": {
            "content": BIG,
            "type": "tool",
            "tool_call_id": "c1",
            "name": "lookup",
            "id": "msg-3",
            "status": "success",
            "artifact": {"raw": [1, 2]},
            "additional_kwargs": {"k": 1},
        },
    },
    {"type": "ai", "data": {"content": "found it", "type": "ai"}},
    {"type": "human", "data": {"content": "thanks", "type": "human"}},
]

CASES: dict[str, tuple[Any, Any]] = {
    # format: (document, a function from the document to the record holding the result)
    "openai-chat": (CHAT, lambda d: d["messages"][2]),
    "openai-responses": (RESPONSES, lambda d: d["input"][2]),
    "anthropic": (ANTHROPIC, lambda d: d["messages"][2]),
    "gemini": (GEMINI, lambda d: d["contents"][2]),
    "langchain": (LANGCHAIN, lambda d: d[2]),
}


def _run(tmp_path: Path, fmt: str, *flags: str) -> tuple[Any, Any]:
    document, _ = CASES[fmt]
    source = tmp_path / "in.json"
    source.write_text(json.dumps(document))
    out = tmp_path / "out.json"
    result = CliRunner().invoke(app, ["trim", str(source), "--from", fmt, "-o", str(out), *flags])
    assert result.exit_code == 0, result.output
    return document, json.loads(out.read_text())


def _without(value: Any, edited: str) -> Any:
    """``value`` with the edited text replaced, wherever it is."""
    if isinstance(value, dict):
        return {k: _without(v, edited) for k, v in value.items()}
    if isinstance(value, list):
        return [_without(v, edited) for v in value]
    return "EDITED" if value == edited or (isinstance(value, str) and "by ctxmgr" in value) else value


@pytest.mark.parametrize("fmt", sorted(CASES))
@pytest.mark.parametrize("flags", [("--max-tool-output", "20"), ("--clear-tool-results", "--keep-tool-results", "0")])
def test_an_edited_result_keeps_every_other_key(tmp_path: Path, fmt: str, flags: tuple[str, ...]) -> None:
    document, written = _run(tmp_path, fmt, *flags)
    _, record_of = CASES[fmt]
    before, after = record_of(document), record_of(written)
    assert "by ctxmgr" in json.dumps(after)  # the result was edited
    assert BIG not in json.dumps(after)  # and nothing of it came back
    assert _without(after, BIG) == _without(before, BIG)  # every other key as it was, in order
    assert list(after) == list(before)


def test_cleared_arguments_keep_the_call_records_other_keys(tmp_path: Path) -> None:
    document, written = _run(
        tmp_path, "openai-chat", "--clear-tool-results", "--keep-tool-results", "0", "--clear-tool-inputs"
    )
    before, after = document["messages"][1], written["messages"][1]
    assert json.loads(after["tool_calls"][0]["function"]["arguments"]) == {
        "ctxmgr_cleared": f"{len(before['tool_calls'][0]['function']['arguments']):,} characters"
    }
    assert after["x_vendor"] == {"trace": "t-1"}
    assert "refusal" in after
    assert list(after) == list(before)


def test_a_cut_value_never_comes_back() -> None:
    """Under the keys an edit changes, the rendered value is taken whole: a JSON result
    shrunk to fewer keys does not regain the others."""
    original = {"functionResponse": {"name": "f", "response": {"a": BIG, "b": BIG}}, "x": 1}
    rendered = {"functionResponse": {"name": "f", "response": {"a": "cut"}}}
    assert carry_keys([original], [rendered]) == [{"functionResponse": {"name": "f", "response": {"a": "cut"}}, "x": 1}]


def test_records_that_do_not_line_up_are_written_as_rendered() -> None:
    rendered = [{"role": "tool", "content": "x"}, {"role": "user", "content": "y"}]
    assert carry_keys([{"role": "tool", "content": "z", "name": "f"}], rendered) == rendered
    assert carry_keys([{"role": "user", "content": "z", "k": 1}], rendered[:1]) == rendered[:1]
    assert carry_keys(None, rendered) == rendered


def test_empty_defaults_a_writer_adds_are_left_out_and_nulls_keep_the_original() -> None:
    original = {"type": "tool", "data": {"content": "old", "name": "get"}}
    rendered = {"type": "tool", "data": {"content": "new", "name": None, "additional_kwargs": {}, "status": "error"}}
    assert carry_keys([original], [rendered]) == [
        {"type": "tool", "data": {"content": "new", "name": "get", "status": "error"}}
    ]


@pytest.mark.parametrize("fmt", sorted(CASES))
@pytest.mark.parametrize(
    "flags", [("--max-tool-output", "20"), ("--clear-tool-results", "--keep-tool-results", "0", "--clear-tool-inputs")]
)
def test_a_native_file_edits_the_records_it_keeps_in_raw(tmp_path: Path, fmt: str, flags: tuple[str, ...]) -> None:
    """Converted to native, each message keeps its records in ``raw``: an edit goes into
    them too (nothing cut stays in the file), and converting back gives the format's
    records with every other key as it was, with no warning."""
    document, record_of = CASES[fmt]
    (tmp_path / "in.json").write_text(json.dumps(document))
    runner = CliRunner()
    path = {name: str(tmp_path / name) for name in ("in.json", "native.json", "edited.json", "back.json")}
    steps = [
        ["convert", path["in.json"], "--to", "native", "-o", path["native.json"]],
        ["trim", path["native.json"], "-o", path["edited.json"], *flags],
        ["convert", path["edited.json"], "--to", fmt, "-o", path["back.json"]],
    ]
    for step in steps:
        result = runner.invoke(app, step)
        assert result.exit_code == 0, result.output
        assert "warning" not in result.output
    edited = json.loads((tmp_path / "edited.json").read_text())
    context = edited["context"] if isinstance(edited, dict) else edited  # a list stays a list
    assert BIG not in json.dumps(context[2])  # the result, in the message and in its raw records
    back = json.loads((tmp_path / "back.json").read_text())
    before, after = record_of(document), record_of(back)
    assert "by ctxmgr" in json.dumps(after)
    assert _without(after, BIG) == _without(before, BIG)


def test_raw_records_an_edit_cannot_reach_are_left_out_with_a_warning(tmp_path: Path) -> None:
    """When the edited records would not read back as the edited message, ``raw`` goes
    (it would bring the cut text back on converting) and a warning says so."""
    document = json.loads(json.dumps(CHAT))
    other = "consectetur adipiscing elit " * 80
    document["messages"][2]["content"] = [
        {"type": "text", "text": other[:1000]},
        {"type": "text", "text": other[1000:]},
    ]
    (tmp_path / "in.json").write_text(json.dumps(document))
    runner = CliRunner()
    native, edited = tmp_path / "native.json", tmp_path / "edited.json"
    assert (
        runner.invoke(app, ["convert", str(tmp_path / "in.json"), "--to", "native", "-o", str(native)]).exit_code == 0
    )
    result = runner.invoke(app, ["trim", str(native), "--max-tool-output", "20", "-o", str(edited)])
    assert result.exit_code == 0, result.output
    message = json.loads(edited.read_text())["context"][2]
    if message["raw"] is None:
        assert "records in 'raw' were left out" in result.output
    else:
        assert other[:1000] not in json.dumps(message["raw"])
    assert other[:1000] not in edited.read_text()
