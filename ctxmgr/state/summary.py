"""``SummaryContextManager``: older messages replaced by an LLM-written summary."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Literal

from ctxmgr.errors import CtxmgrError, UsageError
from ctxmgr.providers.base import scrub
from ctxmgr.state.managers import BaseContextManager, M, S, check_count
from ctxmgr.state.message import Message
from ctxmgr.state.tokens import estimate_tokens
from ctxmgr.state.tools import find_safe_cut, remove_completed_tool_sequences
from ctxmgr.state.transcript import DEFAULT_SUMMARY_PROMPT, fence_transcript, render_messages

if TYPE_CHECKING:
    from ctxmgr.providers.base import Summarizer

__all__ = ["SummaryContextManager"]

logger = logging.getLogger("ctxmgr.state")


class SummaryContextManager(BaseContextManager[S]):
    """Replace older messages with an LLM-written summary, keeping the newest verbatim.

    Summarizes when the context holds more than ``max_messages`` messages or more than
    ``token_budget`` estimated tokens (``None`` disables a trigger). The messages older
    than the ``keep_recent`` newest non-system messages are rendered and summarized; the
    summary is appended to ``state.context_summary`` and ``state.context`` becomes the
    system messages plus the kept recent ones. On an empty summary or a failed call the
    state is returned unchanged and the failure logged ("Summarisation LLM call failed").

    :meth:`trim_context` runs :meth:`atrim_context` with ``asyncio.run`` and so raises
    ``RuntimeError`` inside a running event loop: there, ``await atrim_context(state)``.

    Args:
        model: Model name; ``provider/name`` or a known prefix picks the provider.
        max_messages: Message-count trigger.
        token_budget: Estimated-token trigger.
        keep_recent: Newest non-system messages kept verbatim.
        remove_tool_msgs: Drop completed tool-call sequences first.
        summary_system_prompt: Replaces the default summarization instruction.
        max_summary_tokens: Output token cap of the summary call.
        api_style: ``"responses"`` or ``"chat"`` (OpenAI only).
        preserve_tool_pairs: Move the cut earlier so a tool call and its results are
            kept or summarized together (ours; ``False`` reproduces the reference).
        summarizer: A ready :class:`~ctxmgr.providers.base.Summarizer` to use instead of
            resolving ``model`` (ours; for local servers, caching and tests).
        on_error: ``"log"`` (the reference: log and return the state unchanged) or
            ``"raise"`` (ours: leave the state unchanged and re-raise, unlogged, for the
            caller to report; the CLI uses it to exit with code 3).

    Example::

        manager = SummaryContextManager("gpt-4o-mini", token_budget=6000, keep_recent=6)
        state = manager.trim_context(state)          # synchronous code
        state = await manager.atrim_context(state)   # inside async code
    """

    def __init__(
        self,
        model: str,
        *,
        max_messages: int | None = 30,
        token_budget: int | None = None,
        keep_recent: int = 8,
        remove_tool_msgs: bool = False,
        summary_system_prompt: str | None = None,
        max_summary_tokens: int = 600,
        api_style: Literal["responses", "chat"] = "responses",
        preserve_tool_pairs: bool = True,
        summarizer: Summarizer | None = None,
        on_error: Literal["log", "raise"] = "log",
    ) -> None:
        check_count("max_messages", max_messages)
        check_count("token_budget", token_budget)
        check_count("keep_recent", keep_recent)
        check_count("max_summary_tokens", max_summary_tokens)
        if api_style not in ("responses", "chat"):
            raise UsageError(f"api_style must be 'responses' or 'chat', got {api_style!r}")
        if on_error not in ("log", "raise"):
            raise UsageError(f"on_error must be 'log' or 'raise', got {on_error!r}")
        self.model = model
        self.max_messages = max_messages
        self.token_budget = token_budget
        self.keep_recent = keep_recent
        self.remove_tool_msgs = remove_tool_msgs
        self.summary_system_prompt = summary_system_prompt
        self.max_summary_tokens = max_summary_tokens
        self.api_style = api_style
        self.preserve_tool_pairs = preserve_tool_pairs
        self.on_error = on_error
        self._summarizer = summarizer

    @property
    def instructions(self) -> str:
        """The instruction sent with every summary request."""
        return self.summary_system_prompt or DEFAULT_SUMMARY_PROMPT

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer for ``model``, resolved (and its SDK imported) on first use."""
        if self._summarizer is None:
            from ctxmgr.providers import get_summarizer

            self._summarizer = get_summarizer(self.model, api_style=self.api_style)
        return self._summarizer

    def should_summarize(self, messages: list[M]) -> bool:
        """Whether a trigger fires: too many messages, or too many estimated tokens."""
        if self.max_messages is not None and len(messages) > self.max_messages:
            return True
        return self.token_budget is not None and estimate_tokens(messages) > self.token_budget

    def split(self, messages: list[M]) -> tuple[list[M], list[M], list[M]]:
        """``(system, to_summarize, recent)`` for ``messages``: where the cut falls."""
        system = [m for m in messages if m.role == "system"]
        rest = [m for m in messages if m.role != "system"]
        cut = max(0, len(rest) - self.keep_recent)
        if self.preserve_tool_pairs:
            cut = find_safe_cut(rest, cut)
        return system, rest[:cut], rest[cut:]

    def prepare(self, state: S) -> tuple[list[Message], list[Message], list[Message]] | None:
        """Apply the pre-summary steps; return the split, or ``None`` if no call is needed.

        With ``remove_tool_msgs`` and no trigger firing, the cleaned list is written back
        here (as the reference does). Exposed so batch runs can plan calls up front.
        """
        if not state.context:
            return None
        messages = state.context
        if self.remove_tool_msgs:
            messages = remove_completed_tool_sequences(messages)
        if not self.should_summarize(messages):
            if self.remove_tool_msgs:
                state.context = messages
            return None
        system, old, recent = self.split(messages)
        if not old:
            return None
        return system, old, recent

    def request_text(self, old: list[Message]) -> str:
        """The exact text sent to the summarizer for the span ``old``."""
        return fence_transcript(render_messages(old))

    async def atrim_context(self, state: S) -> S:
        plan = self.prepare(state)
        if plan is None:
            return state
        system, old, recent = plan
        try:
            summary = await self.summarizer.summarize(
                self.request_text(old),
                instructions=self.instructions,
                max_tokens=self.max_summary_tokens,
            )
        except Exception as exc:  # a custom summarizer may raise anything
            if self.on_error == "raise":
                raise  # the caller reports it (the CLI prints one line and exits 3)
            detail = str(exc) if isinstance(exc, CtxmgrError) else f"{type(exc).__name__}: {exc}"
            # Keys never reach a log: ProviderError messages are scrubbed already, a
            # custom summarizer's are scrubbed here.
            logger.warning("Summarisation LLM call failed; context left unchanged: %s", scrub(detail))
            return state
        summary = summary.strip()
        if not summary:
            logger.warning("Summarisation LLM call returned an empty summary; context kept")
            return state
        previous = state.context_summary
        state.context_summary = f"{previous}\n\n{summary}" if previous else summary
        state.context = system + recent
        return state

    def trim_context(self, state: S) -> S:
        """Synchronous :meth:`atrim_context`; ``RuntimeError`` inside a running event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.atrim_context(state))
        # Checked before creating the coroutine, so none is left never-awaited.
        raise RuntimeError(
            "SummaryContextManager.trim_context cannot run inside a running event loop; "
            "use 'await manager.atrim_context(state)' there"
        )

    async def aopen(self) -> None:
        """Keep one HTTP client for all :meth:`atrim_context` calls in the running loop.

        For batches: building a client per call cost more than a local model's answer.
        Await :meth:`aclose` before the loop ends. Without it, each call uses (and
        closes) its own client.
        """
        from ctxmgr.providers.base import aopen_summarizer

        await aopen_summarizer(self.summarizer)

    async def aclose(self) -> None:
        """Close the client :meth:`aopen` kept for the running loop."""
        if self._summarizer is not None:
            from ctxmgr.providers.base import aclose_summarizer

            await aclose_summarizer(self._summarizer)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.model!r}, max_messages={self.max_messages}, "
            f"token_budget={self.token_budget}, keep_recent={self.keep_recent})"
        )
