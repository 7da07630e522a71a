"""The reference's ``summary_context_manager`` module: the manager, its helpers and its seam.

:class:`SummaryContextManager` replaces older messages with an LLM-written summary. The
reference's hooks are here, for subclasses to override: :meth:`~SummaryContextManager._should_summarize`
(the trigger), :meth:`~SummaryContextManager._split_context` (where the cut falls) and
:meth:`~SummaryContextManager._summarize` (the summary of a span). What the requests say
is :mod:`ctxmgr.state._summary`'s. This module also holds what code written for the
reference reaches here:

* :func:`call_llm`, the seam every request of a manager built without ``summarizer=``
  goes through (looked up here at each call, so patching
  ``ctxmgr.state.summary_context_manager.call_llm`` replaces the provider);
* :func:`detect_provider`, which sets a new manager's ``_provider``;
* the reference's helpers, returning exactly what the reference's return:
  :func:`_estimate_tokens` (also the summary trigger's default estimate) and
  :func:`_messages_to_text` (the reference's transcript; ctxmgr's summaries are made
  from :func:`ctxmgr.state._transcript.render_transcript`, which shows more);
* ``_DEFAULT_SUMMARY_PROMPT``, the instruction a manager sends unless told otherwise
  (ctxmgr's own text, not the reference's).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from ctxmgr import _nesting, _provider_registry as provider_registry
from ctxmgr._provider_registry import ModelRef
from ctxmgr._summarizer import never_waits
from ctxmgr._text import one_line
from ctxmgr.errors import CtxmgrError, MissingFactsError, ProviderError, SummaryCutOffError, UsageError
from ctxmgr.providers._base import scrub
from ctxmgr.state._agent import AgentState
from ctxmgr.state._managers import BaseContextManager, M, S, check_count
from ctxmgr.state._report import SummaryReport, record_summary_report
from ctxmgr.state._span import SpanEdits, edit_span, span_managers, without_markers
from ctxmgr.state._split import pack
from ctxmgr.state._summary import (
    COMBINE_TASK,
    EXCERPT_CHARS,
    MAX_ROUNDS,
    REVISE_TASK,
    WHOLE_TASK,
    RequestPlan,
    continued,
    current_report,
    part_task,
    request_tokens,
)
from ctxmgr.state._tokens import CHARS_PER_TOKEN, reference_estimate_tokens
from ctxmgr.state._tools import find_safe_cut
from ctxmgr.state._transcript import DEFAULT_SUMMARY_PROMPT, Transcript, fence_transcript, render_transcript
from ctxmgr.state.message import Message
from ctxmgr.state.reducers import remove_tool_messages

if TYPE_CHECKING:
    from ctxmgr._summarizer import Summarizer
    from ctxmgr.facts import Fact
    from ctxmgr.providers._chain import SummarizerSettings

__all__ = [
    "AgentState",
    "BaseContextManager",
    "Message",
    "S",
    "SummaryContextManager",
    "call_llm",
    "detect_provider",
    "remove_tool_messages",
]

logger = logging.getLogger("ctxmgr.state")

_estimate_tokens = reference_estimate_tokens
_DEFAULT_SUMMARY_PROMPT = DEFAULT_SUMMARY_PROMPT


def detect_provider(model: str, use_vertex_ai: bool = False) -> str:
    """The provider ctxmgr sends ``model``'s requests to: ``"openai"``, ``"google"`` or ``"offline"``.

    The reference's rule for Google and OpenAI names (``gemini-…``, ``gpt-…``, a
    ``google/``, ``gemini/`` or ``openai/`` prefix); ``offline`` is ctxmgr's digest.
    ctxmgr has no Anthropic provider: Claude names, like any other name, go to OpenAI
    (an OpenAI-compatible server). ``use_vertex_ai`` picks Google, whose Vertex AI
    endpoint the ``GOOGLE_GENAI_USE_VERTEXAI`` environment variable selects.
    """
    if use_vertex_ai:
        return next(e.name for e in provider_registry.ENTRIES if e.vertex_variable)
    return provider_registry.detect(model).provider


async def call_llm(
    model: str,
    prompt: str,
    *,
    system_prompt: str | None = None,
    max_tokens: int = 1024,
    api_style: Literal["responses", "chat"] = "responses",
) -> tuple[str, int, int, int]:
    """One request to ``model``: ``(text, input_tokens, output_tokens, cached_tokens)``.

    The provider is picked from the model name (:func:`detect_provider`), its key read
    from the environment; failures raise :class:`~ctxmgr.errors.ProviderError`. The
    answer is stripped of surrounding white space. ctxmgr's providers do not report
    token usage, so the three counts are 0, the reference's value when a provider
    reports none (a summary's estimated input is in its
    :class:`~ctxmgr.state._report.SummaryReport`). The reference's ``temperature``,
    ``json_mode``, ``use_vertex_ai`` and provider keyword arguments are not accepted:
    ctxmgr's providers have no such settings.
    """
    from ctxmgr.providers import get_summarizer

    summarizer = get_summarizer(model, api_style=api_style)
    answer = await summarizer.summarize(prompt, instructions=system_prompt or "", max_tokens=max_tokens)
    # An answer carrying notes (a str subclass) stays itself when there is nothing to strip.
    text = answer if answer == answer.strip() else answer.strip()
    return text, 0, 0, 0


def _messages_to_text(messages: Sequence[Message]) -> str:
    """The reference's transcript: ``ROLE: text`` per message with something in it.

    A message's text is each block's non-empty ``text`` attribute (text blocks,
    documents' text), stripped and joined by spaces, then ``[Tool calls: …]`` with the
    string form of ``tools_calls`` when it has any; a message with neither has no line.
    Tool results, images and everything else are not shown.
    """
    lines: list[str] = []
    for message in messages:
        parts = [text.strip() for block in message.content if (text := getattr(block, "text", None))]
        if message.tools_calls:
            parts.append(f"[Tool calls: {_nesting.text(message.tools_calls)}]")
        if parts:
            lines.append(f"{message.role.upper()}: {' '.join(parts)}")
    return "\n".join(lines)


class SummaryContextManager(BaseContextManager[S]):
    """Replace older messages with an LLM-written summary, keeping the newest verbatim.

    Summarizes when the context holds more than ``max_messages`` messages or more than
    ``token_budget`` estimated tokens (``None`` disables a trigger; the estimate is the
    reference's, see :func:`~ctxmgr.state._tokens.reference_estimate_tokens`). The
    messages older than the ``keep_recent`` newest non-system messages are rendered and
    summarized; the summary is appended to ``state.context_summary`` and
    ``state.context`` becomes the system messages plus the kept recent ones. On an empty
    summary or a failed call the state is returned unchanged and the failure logged
    ("Summarisation LLM call failed"). A span with nothing readable in it (no text, no
    tool call, no result shown) is not sent at all: the state is left unchanged.

    :meth:`trim_context` runs :meth:`atrim_context` with ``asyncio.run`` and so raises
    ``RuntimeError`` inside a running event loop: there, ``await atrim_context(state)``.

    Args:
        model: Model name; ``provider/name`` or a known prefix picks the provider.
            Optional with ``summarizer`` or ``settings`` (ours), which name it.
        max_messages: Message-count trigger.
        token_budget: Estimated-token trigger.
        keep_recent: Newest non-system messages kept verbatim.
        remove_tool_msgs: Drop completed tool-call sequences first.
        summary_system_prompt: Replaces the default summarization instruction; the
            attribute holds the instruction sent (ctxmgr's own by default).
        max_summary_tokens: Output token cap of the summary call.
        api_style: ``"responses"`` or ``"chat"`` (OpenAI only); by default the
            ``settings``' (or those the ``summarizer`` was built from), else ``"responses"``.
        preserve_tool_pairs: Move the cut earlier so a tool call and its results are
            kept or summarized together (ours; ``False`` reproduces the reference).
        summarizer: A ready :class:`~ctxmgr.providers.Summarizer` to use instead of
            resolving ``model`` (ours; for local servers, caching and tests). It is
            called directly: ``call_llm`` is not. One built by
            :func:`~ctxmgr.providers.build_summarizer` (shareable by several managers)
            gives ``model`` and ``api_style`` when they are not passed; any other
            gives ``model`` from its ``name``.
        on_error: ``"log"`` (the reference: log and return the state unchanged) or
            ``"raise"`` (ours: leave the state unchanged and re-raise, unlogged, for the
            caller to report; the CLI uses it to exit with code 3).
        max_input_tokens: Estimated tokens one request may carry (ours); a longer span
            is summarized in parts whose summaries are combined. ``None``: the
            summarizer's own limit (:mod:`ctxmgr.providers._budgets`).
        require_facts: When the summary lacks required facts of the span (see
            :mod:`ctxmgr._fact_weight`), ask once more naming them, and fail
            (:class:`~ctxmgr.errors.MissingFactsError`, state unchanged) if some are
            still missing (ours).
        require_all_facts: ``require_facts`` for every fact of the span, required or
            optional (ours).
        include_tool_results: Show tool results to the summarizer (ours; ``False``
            leaves them out of the requests, as the reference does).
        token_estimate: What the ``token_budget`` trigger counts (ours); by default
            the reference's estimate, four characters a token.
            :func:`ctxmgr.state.script_aware_reference_tokens` counts the same text by
            script (a CJK character a token); :func:`ctxmgr.state.estimate_tokens`
            counts tool outputs too, by script, as ctxmgr's reports do.
        settings: The summarizer to build (ours): model, provider, address, cache,
            concurrency cap... (:class:`~ctxmgr.providers.SummarizerSettings`); the
            manager calls :func:`~ctxmgr.providers.build_summarizer` with them. Not
            together with ``summarizer``.
        clear_tool_results, keep_tool_results, exclude_tools, clear_tool_inputs: Clear
            tool results in the span sent to the summarizer, as
            :class:`~ctxmgr.state.ToolResultClearingManager` does (ours); the kept
            messages are untouched, and the requests say what was cleared.
        max_tool_output: Cut tool results over this many estimated tokens in the span
            sent to the summarizer, as :class:`~ctxmgr.state.ToolOutputTruncationManager`
            does (ours). What both did is counted in the summary's report.

    Without ``summarizer``, each request is one call of
    ``ctxmgr.state.summary_context_manager.call_llm(model, request,
    system_prompt=instructions, max_tokens=max_summary_tokens, api_style=api_style)``:
    once for a span that fits one request, once per part and per combining round for a
    span split to fit ``max_input_tokens``, and once more when ``require_facts`` asks
    again. Patch that name to stand in for the provider in tests.

    Every summary is checked against the identifiers of its span
    (:mod:`ctxmgr.facts`); the requests it took and the facts it lacks are reported
    through :func:`ctxmgr.state._report.collect_summary_reports`.

    Example::

        manager = SummaryContextManager("gpt-4o-mini", token_budget=6000, keep_recent=6)
        state = manager.trim_context(state)          # synchronous code
        state = await manager.atrim_context(state)   # inside async code

        # A local server, a cache and at most 4 calls at once (ctxmgr.providers.SummarizerSettings,
        # ctxmgr.cache.default_cache_dir):
        settings = SummarizerSettings(
            "llama3.2", api_style="chat", base_url="http://localhost:11434/v1",
            cache_dir=default_cache_dir(), concurrency=4,
        )
        manager = SummaryContextManager(settings=settings, token_budget=6000)
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        max_messages: int | None = 30,
        token_budget: int | None = None,
        keep_recent: int = 8,
        remove_tool_msgs: bool = False,
        summary_system_prompt: str | None = None,
        max_summary_tokens: int = 600,
        api_style: Literal["responses", "chat"] | None = None,
        preserve_tool_pairs: bool = True,
        summarizer: Summarizer | None = None,
        on_error: Literal["log", "raise"] = "log",
        max_input_tokens: int | None = None,
        require_facts: bool = False,
        require_all_facts: bool = False,
        include_tool_results: bool = True,
        token_estimate: Callable[[Sequence[Message]], int] | None = None,
        settings: SummarizerSettings | None = None,
        clear_tool_results: bool = False,
        keep_tool_results: int = 3,
        exclude_tools: Iterable[str] = (),
        clear_tool_inputs: bool = False,
        max_tool_output: int | None = None,
    ) -> None:
        check_count("max_messages", max_messages)
        check_count("token_budget", token_budget)
        check_count("keep_recent", keep_recent)
        check_count("max_summary_tokens", max_summary_tokens)
        check_count("max_input_tokens", max_input_tokens)
        if settings is not None or summarizer is not None:
            summarizer, model, api_style = _resolve_summarizer(settings, summarizer, model, api_style)
        if model is None:
            raise UsageError("SummaryContextManager needs a model, a summarizer or settings")
        if api_style is None:
            api_style = "responses"
        if api_style not in ("responses", "chat"):
            raise UsageError(f"api_style must be 'responses' or 'chat', got {api_style!r}")
        if on_error not in ("log", "raise"):
            raise UsageError(f"on_error must be 'log' or 'raise', got {on_error!r}")
        self.model = model
        self.max_messages = max_messages
        self.token_budget = token_budget
        self.keep_recent = keep_recent
        self.remove_tool_msgs = remove_tool_msgs
        self.summary_system_prompt = summary_system_prompt or DEFAULT_SUMMARY_PROMPT
        self.max_summary_tokens = max_summary_tokens
        self.api_style = api_style
        self.preserve_tool_pairs = preserve_tool_pairs
        self.on_error = on_error
        self.max_input_tokens = max_input_tokens
        self.require_facts = require_facts
        self.require_all_facts = require_all_facts
        self.include_tool_results = include_tool_results
        self.token_estimate = token_estimate or reference_estimate_tokens
        # Built now, so a value out of range is refused here, as the others are.
        self.span_managers = span_managers(
            clear_tool_results=clear_tool_results,
            keep_tool_results=keep_tool_results,
            exclude_tools=exclude_tools,
            clear_tool_inputs=clear_tool_inputs,
            max_tool_output=max_tool_output,
        )
        self._summarizer = summarizer
        # Which provider requests go to, a plain string as in the reference ("openai",
        # "google", "offline"; a given summarizer's own name).
        self._provider = ModelRef.parse(summarizer.name).provider if summarizer is not None else _provider_of(model)

    @property
    def instructions(self) -> str:
        """The instruction sent with every summary request."""
        return self.summary_system_prompt or DEFAULT_SUMMARY_PROMPT

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer given, else one that sends each request through ``call_llm``."""
        if self._summarizer is None:
            self._summarizer = _CallLLMSummarizer(self.model, self.api_style)
        return self._summarizer

    @property
    def never_waits(self) -> bool:
        """Whether summarizing never suspends: the summarizer given says so (the offline
        digest; see :func:`ctxmgr._summarizer.never_waits`). Asking builds no
        summarizer (``call_llm``'s, the default, may wait)."""
        return self._summarizer is not None and never_waits(self._summarizer)

    def _should_summarize(self, messages: list[M]) -> bool:
        """Whether a trigger fires: more than ``max_messages`` messages, or more than
        ``token_budget`` tokens by :attr:`token_estimate`."""
        if self.max_messages is not None and len(messages) > self.max_messages:
            return True
        return self.token_budget is not None and self.token_estimate(messages) > self.token_budget

    def split(self, messages: list[M]) -> tuple[list[M], list[M], list[M]]:
        """``(system, to_summarize, recent)`` for ``messages``: where the cut falls."""
        system = [m for m in messages if m.role == "system"]
        rest = [m for m in messages if m.role != "system"]
        cut = max(0, len(rest) - self.keep_recent)
        if self.preserve_tool_pairs:
            cut = find_safe_cut(rest, cut)
        return system, rest[:cut], rest[cut:]

    def _split_context(self, messages: list[M]) -> tuple[list[M], list[M]]:
        """``(messages to summarize, messages to keep)``, as the reference's hook returns them.

        The kept messages are the system messages followed by the recent ones; with
        nothing to summarize, ``([], messages)``.
        """
        system, old, recent = self.split(messages)
        if not old:
            return [], messages
        return old, system + recent

    def prepare(self, state: S) -> tuple[list[Message], list[Message]] | None:
        """Apply the pre-summary steps; return ``(to summarize, to keep)``, or ``None``
        when no summary is needed.

        With ``remove_tool_msgs`` and no trigger firing, the cleaned list is written back
        here (as the reference does). Goes through the hooks :meth:`_should_summarize`
        and :meth:`_split_context`. Exposed so batch runs can plan calls up front.
        """
        if not state.context:
            return None
        messages = state.context
        if self.remove_tool_msgs:
            messages = remove_tool_messages(messages)
        if not self._should_summarize(messages):
            if self.remove_tool_msgs:
                state.context = messages
            return None
        old, kept = self._split_context(messages)
        if not old:
            return None
        return old, kept

    def _render(self, old: list[Message]) -> tuple[Transcript, SpanEdits | None]:
        """The transcript of ``old`` as sent (tool output cleared and cut in a copy, when
        asked), and what was cleared and cut (``None``: nothing asked)."""
        if not self.span_managers:
            return render_transcript(old, include_tool_results=self.include_tool_results), None
        span, edits = edit_span(old, self.span_managers)
        return render_transcript(span, include_tool_results=self.include_tool_results), edits

    def input_budget(self) -> tuple[int | None, str]:
        """``(tokens one request may carry, why)``; ``None`` tokens means no limit.

        A budget too small to combine two summaries of ``max_summary_tokens`` is a
        :class:`UsageError` (the parts' summaries could never be merged).
        """
        if self.max_input_tokens is not None:
            tokens: int | None = self.max_input_tokens
            why = "--max-input-tokens"
        else:
            from ctxmgr.providers._budgets import input_limit_of

            tokens, why = input_limit_of(self.summarizer, self.model)
        if tokens is not None:
            smallest = self._smallest_budget()
            if tokens < smallest:
                raise UsageError(
                    f"an input budget of {tokens} tokens ({why}) cannot combine two summaries of "
                    f"--max-summary-tokens {self.max_summary_tokens}: use --max-input-tokens {smallest} or more"
                )
        return tokens, why

    def _smallest_budget(self) -> int:
        summary_chars = self.max_summary_tokens * CHARS_PER_TOKEN + len("PART 99: ")
        overhead = len(fence_transcript("", task=COMBINE_TASK)) + len(self.instructions)
        return -(-(overhead + 2 * summary_chars + 1) // CHARS_PER_TOKEN)

    def _room(self, tokens: int | None, task: str) -> int | None:
        """Characters of transcript a request for ``task`` may hold within ``tokens``."""
        if tokens is None:
            return None
        return tokens * CHARS_PER_TOKEN - len(fence_transcript("", task=task)) - len(self.instructions)

    def _first_round(self, transcript: Transcript, tokens: int | None, note: str = "") -> list[str]:
        """The requests of the first round: the whole span, or its parts, each after
        ``note`` (what was cleared and cut in the span) when there is one."""
        whole = transcript.text
        lead = f"{note}\n" if note else ""
        room = self._room(tokens, lead + WHOLE_TASK)
        if room is None or len(whole) <= room:
            return [fence_transcript(whole, task=lead + WHOLE_TASK)]
        # The longest task line of any part, so every part fits whatever its number.
        room = self._room(tokens, lead + part_task(999_999, 999_999))
        assert room is not None
        parts = pack(transcript.items, room)
        return [fence_transcript(part, task=lead + part_task(i, len(parts))) for i, part in enumerate(parts, 1)]

    def _combine_round(self, summaries: list[str], tokens: int | None) -> list[str]:
        items = [f"PART {i}: " + continued(summary) for i, summary in enumerate(summaries, 1)]
        room = self._room(tokens, COMBINE_TASK)
        parts = ["\n".join(items)] if room is None else pack(items, room)
        if len(parts) >= len(summaries):
            raise ProviderError(
                f"the summaries of {len(summaries)} parts are too long to combine within {tokens} input tokens: "
                f"raise --max-input-tokens or lower --max-summary-tokens",
                provider=ModelRef.parse(self.summarizer.name).provider,
            )
        return [fence_transcript(part, task=COMBINE_TASK) for part in parts]

    def request_text(self, old: list[Message]) -> str:
        """The text sent to the summarizer for the span ``old`` when it fits one request."""
        transcript, edits = self._render(old)
        note = edits.note() if edits is not None else ""
        return fence_transcript(transcript.text, task=f"{note}\n{WHOLE_TASK}" if note else WHOLE_TASK)

    def plan_requests(self, old: list[Message]) -> RequestPlan:
        """The calls and input tokens summarizing ``old`` takes (see :class:`RequestPlan`)."""
        tokens, _ = self.input_budget()
        transcript, edits = self._render(old)
        requests = self._first_round(transcript, tokens, edits.note() if edits is not None else "")
        parts = len(requests)
        calls = input_tokens = 0
        rounds = 1
        while True:
            calls += len(requests)
            input_tokens += sum(request_tokens(request, self.instructions) for request in requests)
            if len(requests) == 1:
                return RequestPlan(calls, input_tokens, parts, rounds)
            longest = "x" * (self.max_summary_tokens * CHARS_PER_TOKEN)
            requests = self._combine_round([longest] * len(requests), tokens)
            rounds += 1

    async def _ask(self, request: str, report: SummaryReport) -> str:
        report.calls += 1
        report.input_tokens += request_tokens(request, self.instructions)
        answer = await self.summarizer.summarize(
            request, instructions=self.instructions, max_tokens=self.max_summary_tokens
        )
        report.notes.extend(str(note) for note in getattr(answer, "notes", ()))
        return str(answer)

    async def _ask_all(self, requests: list[str], report: SummaryReport) -> list[str]:
        if len(requests) == 1:
            return [await self._ask(requests[0], report)]
        if never_waits(self.summarizer):
            return await self._ask_in_turn(requests, report)
        import asyncio

        # The summarizer caps how many calls run at once (a SummarizerChain with a concurrency).
        tasks = [asyncio.ensure_future(self._ask(request, report)) for request in requests]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            # One part failed: the summary is lost, so the other calls stop spending.
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _ask_in_turn(self, requests: list[str], report: SummaryReport) -> list[str]:
        """:meth:`_ask_all` for a summarizer that never waits, without an event loop:
        every request is asked, in order, as the tasks would run, and the first failure is
        raised once all are done, as ``gather`` raises it."""
        answers: list[str] = []
        failure: BaseException | None = None
        for request in requests:
            try:
                answers.append(await self._ask(request, report))
            except Exception as error:  # raised below, once all are asked, as gather would
                failure = failure or error
        if failure is not None:
            raise failure
        return answers

    async def summarize_span(self, old: list[Message], report: SummaryReport) -> str:
        """The summary of ``old``: one request, or parts summarized then combined.

        Fills ``report`` (requests, tokens, facts, what is missing); raises
        :class:`MissingFactsError` when ``require_facts`` is set and facts stay missing.
        An empty string means "no summary" (an empty answer, in any round).
        """
        from ctxmgr._fact_working import lacking
        from ctxmgr.facts import find_facts

        transcript, edits = self._render(old)
        report.messages = len(old)
        report.left_out.update(transcript.left_out)
        if edits is not None:
            report.edits = dict(edits.counts)
        if not transcript.items:
            # The reference sends nothing for a span with no text either.
            report.notes.append(
                f"the {len(old)} messages to summarize hold nothing to show the summarizer (no text, "
                "no tool call, no tool result shown): nothing was sent and they were kept"
            )
            return ""
        tokens, why = self.input_budget()
        report.input_limit, report.input_limit_reason = tokens, why
        note = edits.note() if edits is not None else ""
        requests = self._first_round(transcript, tokens, note)
        report.parts = len(requests)
        if len(requests) > 1:
            room = self._room(tokens, (f"{note}\n" if note else "") + part_task(999_999, 999_999))
            report.split_items = sum(1 for item in transcript.items if room is not None and len(item) > room)
        summaries = await self._ask_all(requests, report)
        while len(summaries) > 1:
            if not all(summary.strip() for summary in summaries):
                return ""
            if report.rounds >= MAX_ROUNDS:
                raise ProviderError(
                    f"the summaries did not get shorter after {MAX_ROUNDS} rounds of combining",
                    provider=ModelRef.parse(self.summarizer.name).provider,
                )
            report.rounds += 1
            summaries = await self._ask_all(self._combine_round(summaries, tokens), report)
        summary = summaries[0]
        if not summary.strip():
            return ""
        # ctxmgr's own placeholders and markers hold sizes, not facts of the conversation.
        facts_text = transcript.text if edits is None else without_markers(transcript.text)
        report.facts = find_facts(facts_text, ignore=transcript.call_ids)
        report.missing = lacking(report.facts, facts_text, summary)
        if report.missing:
            # Imported here: the weighing's rules are read only for a summary that lacks facts.
            from ctxmgr._fact_weight import weigh_facts

            kept = render_transcript(report.kept).text if report.kept else ""
            report.required = list(weigh_facts(report.facts, facts_text, kept))
        if self.require_all_facts or self.require_facts:
            summary = await self._require(summary, report, transcript, tokens)
        return summary

    def _demanded(self, report: SummaryReport) -> list[Fact]:
        """The missing facts the check demands: all of them, or the required ones."""
        return list(report.missing) if self.require_all_facts else report.missing_required()

    async def _require(self, summary: str, report: SummaryReport, transcript: Transcript, tokens: int | None) -> str:
        """Ask once more for the demanded facts the summary lacks; fail if some stay missing.

        The answer replaces the summary only when it is whole (not cut off at
        ``max_summary_tokens``) and lacks no more of the demanded facts than the first.
        """
        from ctxmgr._fact_working import lacking

        demanded = self._demanded(report)
        if not demanded:
            return summary
        report.retried = True
        try:
            revised = await self._ask(self._revise_request(summary, demanded, transcript, tokens), report)
        except SummaryCutOffError:
            revised = ""  # cut off at max_summary_tokens: the first summary is judged as it was
        if revised.strip():
            first = (report.missing, demanded)
            report.missing = lacking(report.facts, transcript.text, revised)
            if len(self._demanded(report)) <= len(demanded):
                summary = revised
            else:
                report.missing = first[0]
        demanded = self._demanded(report)
        if demanded:
            shown = ", ".join(fact.text for fact in demanded[:5])
            more = f" and {len(demanded) - 5} more" if len(demanded) > 5 else ""
            which = "facts" if self.require_all_facts else "required facts"
            raise MissingFactsError(
                f"the summary lacks {len(demanded)} {which} of the span ({len(report.facts)} facts) after "
                f"asking again: {shown}{more}",
                provider=ModelRef.parse(self.summarizer.name).provider,
            )
        return summary

    def _revise_request(self, summary: str, demanded: list[Fact], transcript: Transcript, tokens: int | None) -> str:
        """A request naming the demanded missing facts, with the summary, a short excerpt
        where each fact first occurs, and the summary's length limit."""
        text = transcript.text
        task = REVISE_TASK.format(limit=self.max_summary_tokens)
        missing = "; ".join(one_line(fact.text) for fact in demanded)
        head = f"SUMMARY: {continued(summary)}\nMISSING FACTS: {missing}"
        room = self._room(tokens, task)
        excerpts: list[str] = []
        used = len(head)
        covered_until = -1
        for at, fact in sorted(((text.find(fact.text), fact) for fact in demanded), key=lambda pair: pair[0]):
            if at < 0 or at < covered_until:
                continue
            start = max(0, at - EXCERPT_CHARS, covered_until)
            end = min(len(text), at + len(fact.text) + EXCERPT_CHARS)
            excerpt = "EXCERPT: " + one_line(text[start:end])
            if room is not None and used + 1 + len(excerpt) > room:
                break
            excerpts.append(excerpt)
            used += 1 + len(excerpt)
            covered_until = end
        return fence_transcript("\n".join([head, *excerpts]), task=task)

    async def _summarize(self, messages: list[Message]) -> str:
        """The summary of ``messages`` (``""``: none): the reference's override point.

        By default :meth:`summarize_span`, filling the report of the span
        :meth:`atrim_context` is summarizing. A subclass may return its own text: it is
        applied as the default one would be (an empty one leaves the state unchanged).
        """
        report = current_report.get()
        return await self.summarize_span(messages, report if report is not None else SummaryReport())

    async def atrim_context(self, state: S) -> S:
        """Summarize ``state``'s older messages if a trigger fires (see the class)."""
        plan = self.prepare(state)
        if plan is None:
            return state
        old, kept = plan
        report = SummaryReport(messages=len(old), kept=kept)
        token = current_report.set(report)
        try:
            summary = await self._summarize(old)
        except Exception as exc:  # a custom summarizer may raise anything
            report.failed = True
            record_summary_report(report)
            if self.on_error == "raise":
                raise  # the caller reports it (the CLI prints one line and exits 3)
            detail = str(exc) if isinstance(exc, CtxmgrError) else f"{type(exc).__name__}: {exc}"
            # Keys never reach a log: ProviderError messages are scrubbed already, a
            # custom summarizer's are scrubbed here.
            logger.warning("Summarisation LLM call failed; context left unchanged: %s", scrub(detail))
            return state
        finally:
            current_report.reset(token)
        summary = summary.strip()
        if not summary:
            if report.calls:
                report.failed = True
                logger.warning("Summarisation LLM call returned an empty summary; context kept")
            record_summary_report(report)
            return state
        record_summary_report(report)
        previous = state.context_summary
        state.context_summary = f"{previous}\n\n{summary}" if previous else summary
        state.context = kept
        return state

    def trim_context(self, state: S) -> S:
        """Synchronous :meth:`atrim_context`; ``RuntimeError`` inside a running event loop."""
        import asyncio

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
        from ctxmgr._summarizer import aopen_summarizer

        await aopen_summarizer(self.summarizer)

    async def aclose(self) -> None:
        """Close the client :meth:`aopen` kept for the running loop."""
        if self._summarizer is not None:
            from ctxmgr._summarizer import aclose_summarizer

            await aclose_summarizer(self._summarizer)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.model!r}, max_messages={self.max_messages}, "
            f"token_budget={self.token_budget}, keep_recent={self.keep_recent})"
        )


def _resolve_summarizer(
    settings: SummarizerSettings | None,
    summarizer: Summarizer | None,
    model: str | None,
    api_style: Literal["responses", "chat"] | None,
) -> tuple[Summarizer, str, Literal["responses", "chat"] | None]:
    """``(summarizer, model, api_style)`` of a manager given ``settings`` or a ``summarizer``:
    what is passed wins; the rest comes from the settings (given, or those the summarizer
    was built from), else the model from the summarizer's name."""
    from ctxmgr.providers._chain import build_summarizer, settings_of

    if settings is not None:
        if summarizer is not None:
            raise UsageError("pass settings or a summarizer, not both: build_summarizer(settings) builds one")
        summarizer = build_summarizer(settings)
    assert summarizer is not None
    built = settings if settings is not None else settings_of(summarizer)
    if built is not None:
        return (
            summarizer,
            model if model is not None else built.model,
            api_style if api_style is not None else built.api_style,
        )
    return summarizer, model if model is not None else ModelRef.parse(summarizer.name).shown, api_style


def _provider_of(model: str) -> str:
    # Looked up in this module at each call, where the reference's manager looks it up too.
    return detect_provider(model)


class _CallLLMSummarizer:
    """The default summarizer: each request is one call of the ``call_llm`` seam.

    ``call_llm`` is looked up in :mod:`ctxmgr.state.summary_context_manager` at every
    call, so a patched seam is the one called. ``inner`` is the provider's summarizer
    for ``model``, consulted for its name and input limit only (building it imports no
    SDK and reads no key).
    """

    def __init__(self, model: str, api_style: Literal["responses", "chat"]) -> None:
        from ctxmgr.providers import get_summarizer

        self.model = model
        self.api_style = api_style
        self.inner = get_summarizer(model, api_style=api_style)
        self.name = self.inner.name

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        answer, *_ = await call_llm(
            self.model, text, system_prompt=instructions, max_tokens=max_tokens, api_style=self.api_style
        )
        if answer is None:
            return ""
        if not isinstance(answer, str):
            raise ProviderError(
                f"call_llm answered {type(answer).__name__}, not text", provider=ModelRef.parse(self.name).provider
            )
        return answer
