"""The figures of a summarized conversation as written, counted from its outline, are the
full reader's (``ctxmgr._stats.held_figures`` reads the written file from its outline
where the format has one that reads it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxmgr import _stats, formats
from ctxmgr.files import read_conversations
from ctxmgr.state import SummaryContextManager
from ctxmgr.state._tokens import message_units, tokens_from_units

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "tau-airline-sample.jsonl"


def full_figures(conversation: formats.Conversation, to: str) -> tuple[int, int]:
    messages, field_units = _stats.held_messages(conversation, to=to)
    if not messages and not field_units:
        return 0, 0
    return len(messages), tokens_from_units([*(message_units(m) for m in messages), field_units])


@pytest.mark.parametrize("to", sorted(formats.FORMATS))
def test_outline_figures_of_a_written_summary_are_the_full_readers(to: str, monkeypatch: pytest.MonkeyPatch) -> None:
    answered: list[bool] = []
    outline_figures = _stats._outline_figures

    def recorded(value: object, fmt: str) -> tuple[int, int] | None:
        figures = outline_figures(value, fmt)
        answered.append(figures is not None)
        return figures

    monkeypatch.setattr(_stats, "_outline_figures", recorded)
    for _line, conversation in list(read_conversations(str(SAMPLE)))[:12]:
        manager = SummaryContextManager(model="offline", max_messages=4, keep_recent=2)
        conversation.state = manager.trim_context(conversation.state)
        assert conversation.state.context_summary
        try:
            expected = full_figures(conversation, to)
        except Exception:  # a conversation this format cannot hold: not this test's concern
            continue
        assert _stats.held_figures(conversation, to=to) == expected
    if to in ("anthropic", "gemini", "langchain", "native", "openai-chat", "openai-responses"):
        assert answered, to  # the six API formats: counted from the outline
        assert all(answered), to


@pytest.mark.parametrize("to", sorted(formats.FORMATS))
def test_figures_from_the_bytes_written_are_those_of_a_write_of_their_own(
    to: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dataset line's figures are read from the line it wrote (``written``): the same
    figures as from held_figures' own write, and no second write."""
    dump = formats.dump
    writes: list[object] = []

    def counted(*args: object, **kwargs: object) -> bytes:
        writes.append(args)
        return dump(*args, **kwargs)  # type: ignore[arg-type]

    for _line, conversation in list(read_conversations(str(SAMPLE)))[:12]:
        manager = SummaryContextManager(model="offline", max_messages=4, keep_recent=2)
        conversation.state = manager.trim_context(conversation.state)
        try:
            written = dump(conversation, to=to)
        except Exception:  # a conversation this format cannot hold: not this test's concern
            continue
        expected = _stats.held_figures(conversation, to=to)
        assert expected[0] > 0
        writes.clear()
        monkeypatch.setattr(formats, "dump", counted)
        assert _stats.held_figures(conversation, to=to, written=written) == expected
        assert writes == []
        monkeypatch.setattr(formats, "dump", dump)
