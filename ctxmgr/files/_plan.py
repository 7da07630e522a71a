"""What a summary run would send, file by file, without sending anything: the
conversations that would be summarized, the calls and their estimated input tokens."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxmgr.errors import InputError
from ctxmgr.files._loading import read_conversations
from ctxmgr.files._settings import Settings
from ctxmgr.files._walk import InputFile, is_not_a_conversation

__all__ = ["FilePlan", "plan_summaries"]


@dataclass
class FilePlan:
    """What summarizing one file would take.

    Attributes:
        entry: The input.
        conversations: Conversations read.
        calls: Requests that would be sent.
        messages_summarized: Messages the summaries would replace.
        input_tokens: Estimated input tokens of those requests.
        split: Spans over the input budget of a request (summarized in parts, then combined).
        warnings: What the reader noticed (``line N: ...`` for a dataset line).
        error: The error that stopped the reading of the file.
        not_a_conversation: A file a walk found that holds no conversation (skipped).
    """

    entry: InputFile
    conversations: int = 0
    calls: int = 0
    messages_summarized: int = 0
    input_tokens: int = 0
    split: int = 0
    warnings: list[str] = field(default_factory=list)
    error: InputError | None = None
    not_a_conversation: bool = False

    @property
    def name(self) -> str:
        """The input's name (``<stdin>`` for standard input)."""
        return self.entry.path or "<stdin>"

    def as_json(self) -> dict[str, Any]:
        """The file's entry of a ``--json`` report."""
        return {
            "path": self.name,
            "conversations": self.conversations,
            "calls": self.calls,
            "messages_summarized": self.messages_summarized,
            "input_tokens": self.input_tokens,
            "split": self.split,
            "warnings": list(self.warnings),
            "errors": [] if self.error is None else [str(self.error)],
        }


def plan_summaries(entries: Sequence[InputFile], chosen: Sequence[tuple[Any, Settings]]) -> Iterator[FilePlan]:
    """Each input's plan, in order, as it is read: ``chosen`` gives each input its
    summary manager and settings."""
    for entry, (manager, settings) in zip(entries, chosen, strict=True):
        plan = FilePlan(entry)
        try:
            for line, conversation in read_conversations(entry.path, fmt=settings.fmt):
                plan.conversations += 1
                plan.warnings += [w if line is None else f"line {line}: {w}" for w in conversation.warnings]
                state = conversation.state
                prepared = manager.prepare(state.model_copy(update={"context": list(state.context)}))
                if prepared is None:
                    continue
                old, _kept = prepared
                requests = manager.plan_requests(old)
                plan.calls += requests.calls
                plan.messages_summarized += len(old)
                plan.input_tokens += requests.input_tokens
                plan.split += requests.parts > 1
        except InputError as error:
            plan.not_a_conversation = is_not_a_conversation(entry, error)
            plan.error = error
        yield plan
