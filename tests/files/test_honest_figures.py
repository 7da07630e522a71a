"""Figures "after" (and "before") count what the file holds, its summary included.

Each expected figure is computed here from the written file itself, with a small
format-aware reader of this test's plain shapes (one text per message), independent of
ctxmgr's readers: characters of every text the file holds (the summary as it is stored,
header included where the format writes one), one estimated token per four.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from ctxmgr.cli import app

runner = CliRunner()

SUMMARIZE = ["summarize", "--model", "offline", "--no-cache", "--max-messages", "5", "--keep-recent", "3"]
TOTALS = re.compile(r"messages (\d+) → (\d+)\s+est\. tokens (\d+) → (\d+)")


def invoke(args: list[str]) -> Result:
    return runner.invoke(app, args, catch_exceptions=False)


def report(args: list[str]) -> dict[str, Any]:
    """The ``--json`` report of ``args`` (which writes nothing), after a run that writes."""
    written = invoke(args)
    assert written.exit_code == 0, written.output
    result = invoke([*args, "--json"])
    assert result.exit_code == 0, result.output
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


def tokens(chars: int) -> int:
    return max(1, chars // 4)


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or text blocks/parts (one per message here)."""
    if isinstance(content, str):
        return content
    texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    assert len(texts) <= 1, content  # the shapes of this test: one text each
    return "".join(texts)


def held(value: Any, fmt: str) -> tuple[int, int]:
    """``(messages, estimated tokens)`` of one written conversation, from its JSON."""
    if fmt == "native":  # an AgentState: messages in 'context', the summary in its field
        texts = [text_of(m["content"]) for m in value["context"]]
        chars = sum(map(len, texts)) + len(value.get("context_summary") or "")
        return len(texts), tokens(chars)
    if fmt == "openai-chat":
        records = value["messages"] if isinstance(value, dict) else value
        texts = [text_of(m["content"]) for m in records]
        return len(texts), tokens(sum(map(len, texts)))
    assert fmt == "anthropic"  # the system prompt is read as one system message
    texts = [text_of(m["content"]) for m in value["messages"]]
    system = value.get("system")
    if system:
        texts.append(text_of(system))
    return len(texts), tokens(sum(map(len, texts)))


def held_file(path: Path, fmt: str) -> tuple[int, int]:
    """Figures of a whole file: summed over the lines of a JSONL dataset."""
    if path.suffix != ".jsonl":
        return held(json.loads(path.read_text(encoding="utf-8")), fmt)
    lines = [held(json.loads(line), fmt) for line in path.read_text(encoding="utf-8").splitlines()]
    return sum(m for m, _ in lines), sum(t for _, t in lines)


def openai_chat(n: int, tag: str = "") -> list[dict[str, str]]:
    return [{"role": "system", "content": "Be helpful."}] + [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{tag}message {i}: flight HAT{100 + i} at ${i}0.00"}
        for i in range(n)
    ]


def native_state(n: int, summary: str | None = None) -> dict[str, Any]:
    context = [
        {
            "message_id": f"m{i}",
            "role": "user" if i % 2 == 0 else "assistant",
            "content": [{"type": "text", "text": f"message {i}: reservation 4OG6T{i % 10}"}],
        }
        for i in range(n)
    ]
    return {"context": context, "context_summary": summary}


def anthropic_body(n: int) -> dict[str, Any]:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}: user mia_{i}"} for i in range(n)
    ]
    return {"model": "claude-3-5-haiku-latest", "max_tokens": 100, "system": "Be helpful.", "messages": messages}


def write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def check_summarized(source: Path, fmt: str, *extra: str) -> dict[str, Any]:
    """Summarize ``source`` to a file and check every figure against that file (and the input)."""
    out = source.with_name("out" + source.suffix)
    payload = report([*SUMMARIZE, *extra, str(source), "-o", str(out)])
    entry = payload["files"][0]
    assert entry["summaries_added"] >= 1
    messages_before, tokens_before = held_file(source, fmt)
    messages_after, tokens_after = held_file(out, fmt)
    assert (entry["messages_before"], entry["tokens_before"]) == (messages_before, tokens_before)
    assert (entry["messages_after"], entry["tokens_after"]) == (messages_after, tokens_after)
    totals = payload["totals"]
    assert (totals["messages_after"], totals["tokens_after"]) == (messages_after, tokens_after)
    # stats reads the written file: the same figures, the summary included.
    stats = report(["stats", str(out)])["files"][0]
    assert (stats["messages"], stats["estimated_tokens"]) == (messages_after, tokens_after)
    return entry


def test_native_state_counts_its_summary_field(tmp_path: Path) -> None:
    source = write(tmp_path / "state.json", native_state(20))
    entry = check_summarized(source, "native")
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    summary = written["context_summary"]
    assert summary
    # The summary is a field: no message for it, and its text is in the tokens.
    assert entry["messages_after"] == len(written["context"]) == 3
    without = tokens(sum(len(m["content"][0]["text"]) for m in written["context"]))
    assert entry["tokens_after"] > without


def test_native_state_already_summarized_counts_it_before(tmp_path: Path) -> None:
    summary = "Earlier: the user booked HAT001 for $120.00 under reservation 4OG6T3. " * 5
    source = write(tmp_path / "state.json", native_state(20, summary))
    entry = check_summarized(source, "native")
    assert entry["tokens_before"] == tokens(
        sum(len(f"message {i}: reservation 4OG6T{i % 10}") for i in range(20)) + len(summary)
    )


def test_openai_chat_summary_message_counts_as_a_message(tmp_path: Path) -> None:
    source = write(tmp_path / "chat.json", openai_chat(20))
    entry = check_summarized(source, "openai-chat")
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert written[1]["content"].startswith("[ctxmgr: summary of the earlier conversation]\n")
    assert entry["messages_after"] == 5  # system, summary, the three kept


def test_openai_chat_summary_in_the_system_prompt_adds_no_message(tmp_path: Path) -> None:
    source = write(tmp_path / "chat.json", openai_chat(20))
    entry = check_summarized(source, "openai-chat", "--summary-as", "system")
    assert entry["messages_after"] == 4  # system (summary inside), the three kept


def test_anthropic_summary_as_system(tmp_path: Path) -> None:
    source = write(tmp_path / "body.json", anthropic_body(20))
    entry = check_summarized(source, "anthropic", "--summary-as", "system")
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert "[ctxmgr: summary of the earlier conversation]" in written["system"]
    assert entry["messages_after"] == 1 + len(written["messages"])


def test_jsonl_dataset_totals_and_summary_line(tmp_path: Path) -> None:
    source = tmp_path / "data.jsonl"
    source.write_text("".join(json.dumps({"messages": openai_chat(12, f"line {k} ")}) + "\n" for k in range(3)))
    entry = check_summarized(source, "openai-chat")
    assert entry["conversations"] == 3
    # The dataset's summary line shows the same figures.
    result = invoke([*SUMMARIZE, str(source), "-o", str(tmp_path / "again.jsonl"), "--view"])
    assert result.exit_code == 0, result.output
    expected = (
        f"messages {entry['messages_before']} → {entry['messages_after']}; "
        f"est. tokens {entry['tokens_before']} → {entry['tokens_after']}"
    )
    assert expected in result.stderr


def test_second_summary_counts_the_first_before(tmp_path: Path) -> None:
    first = write(tmp_path / "chat.json", openai_chat(20))
    check_summarized(first, "openai-chat")
    second = tmp_path / "second.json"
    second.write_text(json.dumps(json.loads((tmp_path / "out.json").read_text()) + openai_chat(10)[1:]))
    entry = check_summarized(second, "openai-chat")
    assert entry["messages_before"] == held_file(second, "openai-chat")[0] == 5 + 10


def test_diff_view_totals_match_the_report(tmp_path: Path) -> None:
    source = write(tmp_path / "chat.json", openai_chat(20))
    entry = check_summarized(source, "openai-chat")
    result = invoke([*SUMMARIZE, str(source), "-o", str(tmp_path / "again.json"), "--view"])
    assert result.exit_code == 0, result.output
    found = TOTALS.search(result.stderr)
    assert found is not None, result.stderr
    shown = tuple(int(g) for g in found.groups())
    assert shown == (entry["messages_before"], entry["messages_after"], entry["tokens_before"], entry["tokens_after"])


def test_trim_figures_unchanged(tmp_path: Path) -> None:
    source = write(tmp_path / "chat.json", openai_chat(20))
    out = tmp_path / "out.json"
    entry = report(["trim", str(source), "--max-messages", "3", "-o", str(out)])["files"][0]
    assert (entry["messages_before"], entry["tokens_before"]) == held_file(source, "openai-chat")
    assert (entry["messages_after"], entry["tokens_after"]) == held_file(out, "openai-chat")
    assert entry["messages_after"] < entry["messages_before"]


def test_trim_of_a_summarized_state_fast_and_full_paths_agree(tmp_path: Path) -> None:
    summary = "Earlier: reservation 4OG6T3, flight HAT268, $412.00. " * 8
    source = write(tmp_path / "state.json", native_state(20, summary))
    out = tmp_path / "out.json"
    fast = report(["trim", str(source), "--max-messages", "3", "-o", str(out)])["files"][0]
    assert (fast["messages_before"], fast["tokens_before"]) == held_file(source, "native")
    assert (fast["messages_after"], fast["tokens_after"]) == held_file(out, "native")
    # --view keeps the outcome, so the full path runs: its totals line says the same.
    result = invoke(["trim", str(source), "--max-messages", "3", "-o", str(tmp_path / "full.json"), "--view"])
    assert result.exit_code == 0, result.output
    found = TOTALS.search(result.stderr)
    assert found is not None, result.stderr
    shown = tuple(int(g) for g in found.groups())
    assert shown == (fast["messages_before"], fast["messages_after"], fast["tokens_before"], fast["tokens_after"])
    # A dataset of such states, line by line through the outline, agrees too.
    lines = tmp_path / "states.jsonl"
    lines.write_text("".join(json.dumps(native_state(20, summary if k else None)) + "\n" for k in range(2)))
    dataset = report(["trim", str(lines), "--max-messages", "3", "-o", str(tmp_path / "states-out.jsonl")])
    entry = dataset["files"][0]
    assert (entry["messages_after"], entry["tokens_after"]) == held_file(tmp_path / "states-out.jsonl", "native")


def test_summary_field_written_as_a_message_in_another_format(tmp_path: Path) -> None:
    source = write(tmp_path / "state.json", native_state(20))
    out = tmp_path / "out.json"
    entry = report([*SUMMARIZE, str(source), "--to", "openai-chat", "-o", str(out)])["files"][0]
    assert (entry["messages_before"], entry["tokens_before"]) == held_file(source, "native")
    assert (entry["messages_after"], entry["tokens_after"]) == held_file(out, "openai-chat")
    assert entry["messages_after"] == 4  # the summary, now a message, and the three kept


def test_trim_of_lines_holding_a_summary_message_or_system_summary(tmp_path: Path) -> None:
    header = "[ctxmgr: summary of the earlier conversation]\n"
    lines = []
    for k in range(4):
        chat = openai_chat(12, f"line {k} ")
        if k % 2:  # a summary message after the system prompt
            chat.insert(1, {"role": "system", "content": f"{header}Booked HAT{k}00 for ${k}5.00."})
        else:  # a summary appended to the system prompt
            chat[0]["content"] += f"\n\n{header}Reservation 4OG6T{k}, user mia_{k}."
        lines.append(json.dumps({"messages": chat}) + "\n")
    source = tmp_path / "data.jsonl"
    source.write_text("".join(lines))
    out = tmp_path / "out.jsonl"
    entry = report(["trim", str(source), "--max-messages", "2", "--jobs", "1", "-o", str(out)])["files"][0]
    assert (entry["messages_before"], entry["tokens_before"]) == held_file(source, "openai-chat")
    assert (entry["messages_after"], entry["tokens_after"]) == held_file(out, "openai-chat")
    assert entry["messages_after"] < entry["messages_before"]


def test_trim_of_a_native_list_with_its_marked_summary(tmp_path: Path) -> None:
    records = [
        {"role": "system", "content": [{"type": "text", "text": "Be helpful."}]},
        {
            "role": "system",
            "content": [{"type": "text", "text": "Earlier: flight HAT268, $412.00."}],
            "metadata": {"ctxmgr_summary": True},
        },
        *native_state(10)["context"],
    ]
    source = write(tmp_path / "list.json", records)
    out = tmp_path / "out.json"
    entry = report(["trim", str(source), "--max-messages", "2", "-o", str(out), "--view"])["files"][0]
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written[1]["metadata"] == {"ctxmgr_summary": True}
    assert (entry["messages_before"], entry["tokens_before"]) == held({"context": records}, "native")
    assert (entry["messages_after"], entry["tokens_after"]) == held({"context": written}, "native")
