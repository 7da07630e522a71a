"""What ``convert`` writes, ctxmgr reads back unasked: every real conversation file of
the test corpus and the samples, converted to every format, is detected as that format."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr.cli import app
from ctxmgr.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(
    [
        *(ROOT / "tests" / "conversations").glob("*/*.json"),
        *(ROOT / "samples").glob("*.json"),
    ]
)
TARGETS = ["openai-chat", "openai-responses", "anthropic", "gemini", "langchain", "native", "sharegpt"]


def _converted(path: Path, target: str) -> bytes | None:
    try:
        conversation = formats.load(path.read_bytes(), source=str(path))
        return formats.dump(conversation, to=target)
    except InputError:
        return None  # a file that does not read, or a conversion refused: not this test's


@pytest.mark.parametrize("target", TARGETS)
def test_every_conversion_reads_back_unasked(target: str) -> None:
    assert len(FILES) >= 28
    converted = 0
    for path in FILES:
        output = _converted(path, target)
        if output is None:
            continue
        converted += 1
        back = formats.load(output, source=f"{path.name} as {target}")
        assert back.format == target or target in back.also_reads_as, path.name
    assert converted >= 20


ANTHROPIC = ROOT / "tests" / "conversations" / "anthropic"


@pytest.mark.parametrize("name", ["anthropic_cache_real_api.json", "anthropic_web_search_tool.json"])
def test_a_claude_conversation_converted_to_chat_is_read_by_stats(name: str, tmp_path: Path) -> None:
    out = tmp_path / "chat.json"
    runner = CliRunner()
    done = runner.invoke(app, ["convert", "--to", "openai-chat", str(ANTHROPIC / name), "-o", str(out)])
    assert done.exit_code == 0, done.stderr
    assert b"claude" in out.read_bytes()  # the model is kept: it no longer names Anthropic
    stats = runner.invoke(app, ["stats", "--json", str(out)])
    assert stats.exit_code == 0, stats.stderr
    assert '"format": "openai-chat"' in stats.stdout


def test_anthropics_list_of_chat_only_keys_is_within_chats() -> None:
    from ctxmgr.formats._detection import anthropic, openai_chat

    assert anthropic.CHAT_REQUEST_KEYS <= openai_chat.REQUEST_KEYS


@pytest.mark.parametrize("target", TARGETS)
def test_a_jsonl_file_converted_reads_back_unasked(target: str, tmp_path: Path) -> None:
    """A JSONL message list (and a dataset) converted keeps one record a line, even where
    the target's conversation is an object (ShareGPT), so ``stats`` reads it unasked."""
    import orjson

    runner = CliRunner()
    for source in sorted((ROOT / "samples").glob("*.jsonl")):
        out = tmp_path / f"{source.stem}-{target}.jsonl"
        done = runner.invoke(app, ["convert", "--to", target, str(source), "-o", str(out)])
        if done.exit_code != 0:
            continue  # a conversion refused (a session log, reused ids): not this test's
        stats = runner.invoke(app, ["stats", "--json", str(out)])
        assert stats.exit_code == 0, (source.name, stats.stderr)
        assert orjson.loads(stats.stdout)["files"][0]["format"] == target, source.name
