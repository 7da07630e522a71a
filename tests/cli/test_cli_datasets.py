"""Training sets through the command line, as a user runs it: the real ShareGPT and
LLaMA-Factory records of ``tests/conversations/datasets/``, JSON arrays of conversations in
every format (a dataset, compacted record by record, written back as an array), and JSON
arrays of messages (one conversation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr._validate import check_messages
from ctxmgr.cli import app

runner = CliRunner()
CONVERSATIONS = Path(__file__).resolve().parents[1] / "conversations"
GLAIVE = CONVERSATIONS / "datasets" / "sharegpt" / "glaive_toolcall_en_demo.json"
V1 = CONVERSATIONS / "datasets" / "llamafactory-v1" / "reason_tool_use_demo.jsonl"
FASTCHAT = CONVERSATIONS / "datasets" / "fastchat" / "dummy_conversation_with_system.json"
REAL = [GLAIVE, V1, FASTCHAT]
REAL_IDS = ["llamafactory-sharegpt-array", "llamafactory-v1-jsonl", "fastchat-sharegpt-array"]
TAU = CONVERSATIONS / "openai-chat" / "tau-airline-gpt4o.jsonl"
THINKING = CONVERSATIONS / "anthropic" / "anthropic_tool_with_thinking.json"
SIX = ["native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain"]
MANAGERS = [
    ["trim", "-n", "1"],
    ["trim", "--max-tokens", "150"],
    ["trim", "--clear-tool-results", "--keep-tool-results", "0"],
    ["trim", "--max-tool-output", "8"],
    ["summarize", "--model", "offline", "--max-messages", "4", "--keep-recent", "2"],
]


def _records(path: Path) -> list[Any]:
    data = path.read_bytes()
    value = orjson.loads(data) if data.lstrip().startswith(b"[") else None
    return value if isinstance(value, list) else [orjson.loads(line) for line in data.splitlines() if line.strip()]


def _in_order(kept: list[Any], whole: list[Any]) -> bool:
    """Whether ``kept`` is ``whole`` with some items left out (the order unchanged)."""
    rest = iter(whole)
    return all(any(item == other for other in rest) for item in kept)


def _problems(record: Any, fmt: str | None = None) -> list[str]:
    conversation = formats.load_value(record, source="record", layout="document", fmt=fmt)
    return [str(problem) for problem in check_messages(conversation.state.context)]


def _stats_line(path: Path) -> str:
    result = runner.invoke(app, ["stats", str(path)])
    assert result.exit_code == 0, result.stderr
    return result.stdout.splitlines()[0]


@pytest.mark.parametrize("path", REAL, ids=REAL_IDS)
def test_validate_and_stats_read_the_real_files(path: Path) -> None:
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.stderr
    assert " ".join(result.stdout.split()) == f"{path}: ok ({len(_records(path))} conversations)"
    assert _stats_line(path).startswith(f"{path}, sharegpt: conv {len(_records(path))}; ")


def test_stats_counts_the_calls_and_results_shareGPT_pairs_by_order() -> None:
    line = _stats_line(GLAIVE)
    turns = [turn for record in _records(GLAIVE) for turn in record["conversations"]]
    results = sum(turn["from"] == "observation" for turn in turns)
    assert results == 4
    assert f"calls {results};" in line  # one call per function_call turn here
    assert f"/{results}; calls" in line  # each observation is a tool message


@pytest.mark.parametrize("path", REAL, ids=REAL_IDS)
@pytest.mark.parametrize("command", MANAGERS, ids=lambda c: " ".join(c[:2]))
def test_every_manager_writes_the_real_files_back_in_their_shape(
    path: Path, command: list[str], tmp_path: Path
) -> None:
    out = tmp_path / f"out{path.suffix}"
    result = runner.invoke(app, [*command, "--no-view", "-o", str(out), str(path)])
    assert result.exit_code == 0, result.stderr
    before, after = _records(path), _records(out)
    assert len(after) == len(before)
    key = "messages" if path == V1 else "conversations"
    for old, new in zip(before, after, strict=True):
        assert set(new) | {"system"} == set(old) | {"system"}  # the columns stay; a summary may add "system"
        if "system" in old:
            assert new["system"].startswith(old["system"])  # the prompt is never cut; a summary follows it
        assert new.get("tools") == old.get("tools")
        assert new.get("id") == old.get("id")
        assert len(new[key]) <= len(old[key])
        assert _problems(new) == []
        # What was kept of the records is as it was (a cut tool output or a summary aside).
        kept = [r for r in new[key] if r in old[key]]
        assert _in_order(kept, old[key])
    if path != V1:
        assert out.read_bytes().startswith(b"[\n  {\n")  # indented, as read
    assert runner.invoke(app, ["validate", str(out)]).exit_code == 0


def test_summarize_puts_the_summary_in_the_system_column_and_reads_it_back(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    command = ["summarize", "--model", "offline", "--max-messages", "4", "--keep-recent", "2", "--no-view"]
    result = runner.invoke(app, [*command, "-o", str(out), str(GLAIVE)])
    assert result.exit_code == 0, result.stderr
    written = _records(out)
    summarized = [record for record in written if "system" in record]
    assert summarized
    for record in summarized:
        assert record["system"].startswith("[ctxmgr: summary of the earlier conversation]\n")
        assert all(turn["from"] != "system" for turn in record["conversations"])
        conversation = formats.load_value(record, source="out", layout="document")
        assert conversation.format == "sharegpt"
        assert conversation.state.context_summary
        assert all(message.role != "system" for message in conversation.state.context)
    assert "summ 4;" in _stats_line(out) or f"summ {len(summarized)};" in _stats_line(out)


def test_a_summary_joins_a_leading_system_turn(tmp_path: Path) -> None:
    record = _records(GLAIVE)[0]
    record = {**record, "conversations": [{"from": "system", "value": "Be brief."}, *record["conversations"]]}
    source, out = tmp_path / "in.json", tmp_path / "out.json"
    source.write_bytes(orjson.dumps(record))
    command = ["summarize", "--model", "offline", "--max-messages", "4", "--keep-recent", "2", "--no-view"]
    assert runner.invoke(app, [*command, "-o", str(out), str(source)]).exit_code == 0
    written = orjson.loads(out.read_bytes())
    assert "system" not in written  # LLaMA-Factory reads a leading system turn before the column
    first = written["conversations"][0]
    assert first["from"] == "system"
    assert first["value"].startswith("Be brief.\n\n[ctxmgr: summary of the earlier conversation]\n")
    back = formats.load(out.read_bytes(), source="out.json")
    assert back.state.context_summary
    assert back.state.context[0].text() == "Be brief."
    # A second run finds the summary and appends to it: one header, the prompt once.
    again = tmp_path / "again.json"
    assert runner.invoke(app, [*command, "--max-messages", "2", "-o", str(again), str(out)]).exit_code == 0
    value = orjson.loads(again.read_bytes())["conversations"][0]["value"]
    assert value.count("[ctxmgr: summary of the earlier conversation]") == 1
    assert value.count("Be brief.") == 1
    assert value.startswith(first["value"])  # the first summary kept, the new one after it


@pytest.mark.parametrize("path", REAL, ids=REAL_IDS)
@pytest.mark.parametrize("target", SIX)
def test_convert_to_the_six_formats_validates_and_comes_back(path: Path, target: str, tmp_path: Path) -> None:
    out = tmp_path / f"out{path.suffix}"
    result = runner.invoke(app, ["convert", "--to", target, "-o", str(out), str(path)])
    assert result.exit_code == 0, result.stderr
    if path == V1 and target not in ("native", "langchain", "gemini"):
        assert "reasoning text (" in result.stderr  # named, not dropped silently
    converted = _records(out)
    assert len(converted) == len(_records(path))
    for record in converted:
        assert _problems(record, target) == []
    assert runner.invoke(app, ["validate", str(out)]).exit_code == 0  # read back unasked
    back = tmp_path / f"back{path.suffix}"
    result = runner.invoke(app, ["convert", "--to", "sharegpt", "-o", str(back), str(out)])
    assert result.exit_code == 0, result.stderr
    if path == V1:
        return
    expected = _records(path)
    if path == FASTCHAT and target in ("openai-responses", "langchain"):
        # "id" is a Responses request key (a response's id), so from Responses, or from
        # LangChain whose keys are read by their names, it is not taken for a column: named.
        assert "request key 'id' (3)" in result.stderr
        expected = [{k: v for k, v in record.items() if k != "id"} for record in expected]
    assert _records(back) == expected  # ShareGPT -> any -> ShareGPT: the same records


# -- a JSON array of conversations is a dataset, in every format -------------------------


def _tau_array(tmp_path: Path, fmt: str) -> Path:
    """The three tau conversations converted to ``fmt``, as one indented JSON array."""
    lines = tmp_path / f"tau.{fmt}.jsonl"
    # Anthropic refuses tau's reused call ids: they are renumbered on the way there.
    fix = ["--fix-call-ids"] if fmt == "anthropic" else []
    result = runner.invoke(app, ["convert", "--to", fmt, *fix, "-o", str(lines), str(TAU)])
    assert result.exit_code == 0, result.stderr
    array = tmp_path / f"tau.{fmt}.json"
    array.write_text(json.dumps(_records(lines), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return array


@pytest.mark.parametrize("fmt", [*SIX, "sharegpt"])
def test_a_json_array_of_conversations_is_a_dataset(fmt: str, tmp_path: Path) -> None:
    array = _tau_array(tmp_path, fmt)
    assert _stats_line(array).startswith(f"{array}, {fmt}: conv 3; ")
    # validate finds what it finds in the JSONL lines, each record numbered as its line.
    lines = array.with_suffix(".jsonl")
    validated, per_line = (runner.invoke(app, ["validate", str(path)]) for path in (array, lines))
    assert validated.exit_code == per_line.exit_code
    assert validated.stdout.replace(str(array), "F") == per_line.stdout.replace(str(lines), "F")
    # tau reuses call ids (renumbered for Anthropic); ShareGPT has none, its calls and results pair by order.
    assert ("F:1: message" in validated.stdout.replace(str(array), "F")) == (fmt not in ("sharegpt", "anthropic"))
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["trim", "-n", "2", "--no-view", "--json", "-o", str(out), str(array)])
    assert result.exit_code == 0, result.stderr
    (report,) = json.loads(result.stdout)["files"]
    assert report["conversations"] == 3
    written = orjson.loads(out.read_bytes())
    assert isinstance(written, list)
    assert len(written) == 3
    assert out.read_bytes().startswith(b"[\n  {")  # indented, as read
    for before, after in zip(orjson.loads(array.read_bytes()), written, strict=True):
        assert formats.detect_candidates(after, source="out")[0] in (fmt, "openai-chat")
        assert set(after) == set(before)  # the columns stay
    assert " ".join(runner.invoke(app, ["validate", str(out)]).stdout.split()).endswith("(3 conversations)")


@pytest.mark.parametrize("fmt", SIX)
def test_an_array_dataset_converts_into_sharegpt_and_back_unasked(fmt: str, tmp_path: Path) -> None:
    array = _tau_array(tmp_path, fmt)
    shared = tmp_path / "sharegpt.json"
    result = runner.invoke(app, ["convert", "--to", "sharegpt", "-o", str(shared), str(array)])
    assert result.exit_code == 0, result.stderr
    records = orjson.loads(shared.read_bytes())
    # The columns follow; the system prompt is the system column.
    assert [sorted(r) for r in records] == [["conversations", "reward", "system", "task_id", "trial"]] * 3
    paired = []
    for record in records:
        assert record["system"].startswith("# Airline Agent Policy")
        assert _problems(record) == []
        observations = sum(turn["from"] == "observation" for turn in record["conversations"])
        calls = sum(
            len(v) if isinstance(v := json.loads(turn["value"]), list) else 1
            for turn in record["conversations"]
            if turn["from"] == "function_call"
        )
        assert observations == calls
        paired.append(calls)
        # LLaMA-Factory's alternation: human or observation, then gpt or function_call.
        speakers = [turn["from"] for turn in record["conversations"]]
        assert all(s in ("human", "observation") for s in speakers[0::2])
        assert all(s in ("gpt", "function_call") for s in speakers[1::2])
    assert paired == [8, 0, 7]  # the tau calls, each with its result
    again = tmp_path / "again.json"
    result = runner.invoke(app, ["convert", "--to", fmt, "-o", str(again), str(shared)])
    assert result.exit_code == 0, result.stderr
    assert _stats_line(again).startswith(f"{again}, {fmt}: conv 3; ")


def test_what_sharegpt_has_no_place_for_is_counted(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["convert", "--to", "sharegpt", "--json", "-o", str(out), str(V1)])
    assert result.exit_code == 0, result.stderr
    (report,) = json.loads(result.stdout)["files"]
    assert report["dropped"] == {}  # the same format: nothing converted
    # Through native, the records ride in raw and come back whole, reasoning included.
    native, back = tmp_path / "v1.native.jsonl", tmp_path / "back.jsonl"
    assert runner.invoke(app, ["convert", "--to", "native", "-o", str(native), str(V1)]).exit_code == 0
    result = runner.invoke(app, ["convert", "--to", "sharegpt", "--json", "-o", str(back), str(native)])
    assert json.loads(result.stdout)["files"][0]["dropped"] == {}
    assert _records(back) == _records(V1)
    # From Anthropic: thinking, its signature and the request settings have no place.
    result = runner.invoke(app, ["convert", "--to", "sharegpt", "--json", "-o", str(out), str(THINKING)])
    (report,) = json.loads(result.stdout)["files"]
    assert report["dropped"] == {
        "assistant text beside tool calls": 1,  # a gpt turn then a function_call turn: not LLaMA-Factory's
        "content-part field 'signature'": 1,
        "reasoning block": 1,
        "request key 'model'": 1,
        "request key 'thinking'": 1,
        "request setting 'max_tokens'": 1,
        "request setting 'tool_choice'": 1,
    }
    tools = json.loads(orjson.loads(out.read_bytes())["tools"])
    assert [tool["name"] for tool in tools] == ["get_user_country"]
    lossless = runner.invoke(app, ["convert", "--to", "sharegpt", "--lossless", "-o", str(out), str(THINKING)])
    assert lossless.exit_code == 1


# -- a JSON array of messages stays one conversation --------------------------------------


@pytest.mark.parametrize(
    ("value", "fmt"),
    [
        (
            [
                {"role": "user", "content": "Where is my order?"},
                {"role": "assistant", "content": "It ships today."},
                {"role": "user", "content": "Thanks."},
            ],
            "openai-chat",
        ),
        (
            [
                {"from": "human", "value": "Where is my order?"},
                {"from": "gpt", "value": "It ships today."},
                {"from": "human", "value": "Thanks."},
            ],
            "sharegpt",
        ),
    ],
    ids=["openai-chat-messages", "sharegpt-turns"],
)
def test_a_json_array_of_messages_stays_one_conversation(value: list[Any], fmt: str, tmp_path: Path) -> None:
    source, out = tmp_path / "chat.json", tmp_path / "out.json"
    source.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2))
    assert _stats_line(source).startswith(f"{source}, {fmt}: conv 1; msgs 3;")
    result = runner.invoke(app, ["trim", "-n", "1", "--no-view", "-o", str(out), str(source)])
    assert result.exit_code == 0, result.stderr
    assert orjson.loads(out.read_bytes()) == value[-1:]


@pytest.mark.parametrize("fmt", [*SIX, "sharegpt"])
@pytest.mark.parametrize(
    "command",
    [
        ["trim", "--max-tokens", "3000"],
        ["summarize", "--model", "offline", "--max-messages", "6", "--keep-recent", "2"],
    ],
    ids=["trim", "summarize"],
)
def test_an_array_is_compacted_as_its_jsonl_lines_are(fmt: str, command: list[str], tmp_path: Path) -> None:
    """The same records, report, warnings and exit code as the JSONL dataset of the same
    lines read ``--from`` the array's format: an array's format is decided once, for the
    file (a text-only line of JSONL reads as OpenAI chat and Anthropic alike, and its
    summary is then written where both take it, with a warning)."""
    array = _tau_array(tmp_path, fmt)
    lines = array.with_suffix(".jsonl")
    runs = {}
    for path, named in ((array, []), (lines, ["--from", fmt])):
        out = tmp_path / f"out{path.suffix}"
        result = runner.invoke(app, [*command, *named, "--json", "--no-view", "-o", str(out), str(path)])
        (report,) = json.loads(result.stdout)["files"]
        assert report.pop("path") == str(path)
        assert report.pop("destination") == str(out)
        runs[path.suffix] = (result.exit_code, report, result.stderr.replace(str(path), "F"), _records(out))
    assert runs[".json"] == runs[".jsonl"]
    assert runs[".json"][1]["kind"] == "dataset"
    assert runs[".json"][1]["conversations"] == 3


def test_a_summary_follows_the_system_column_and_a_second_run_appends_to_it(tmp_path: Path) -> None:
    command = ["summarize", "--model", "offline", "--max-messages", "2", "--keep-recent", "2", "--no-view"]
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    assert runner.invoke(app, [*command, "-o", str(first), str(FASTCHAT)]).exit_code == 0
    assert runner.invoke(app, [*command, "--max-messages", "1", "-o", str(second), str(first)]).exit_code == 0
    for before, once, twice in zip(_records(FASTCHAT), _records(first), _records(second), strict=True):
        header = "[ctxmgr: summary of the earlier conversation]\n"
        prompt = f"{before['system']}\n\n" if "system" in before else ""
        assert once["system"].startswith(prompt + header)
        assert twice["system"].count(header) == 1
        assert twice["system"].startswith(once["system"])


def test_a_bad_record_of_an_array_is_reported_by_its_number(tmp_path: Path) -> None:
    records = _records(GLAIVE)
    records.insert(1, {"conversations": [{"from": "narrator", "value": "Once upon a time"}]})
    source, out = tmp_path / "bad.json", tmp_path / "out.json"
    source.write_text(json.dumps(records, indent=2), encoding="utf-8")
    failed = runner.invoke(app, ["trim", "-n", "1", "--no-view", "-o", str(out), str(source)])
    assert failed.exit_code == 2
    assert failed.stderr.startswith(f"error: {source}:2: message 0: from: unknown speaker 'narrator'")
    assert not out.exists()  # --on-error fail (the default) writes nothing
    skipped = runner.invoke(app, ["trim", "-n", "1", "--no-view", "--on-error", "skip", "-o", str(out), str(source)])
    assert skipped.exit_code == 2
    written = orjson.loads(out.read_bytes())
    assert len(written) == len(records)
    assert written[1] == records[1]  # copied as it was
    assert all(len(r["conversations"]) < len(o["conversations"]) for r, o in zip(written[2:], records[2:], strict=True))
