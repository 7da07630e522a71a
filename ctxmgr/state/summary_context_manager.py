"""The reference's ``summary_context_manager`` module: the manager, its helpers and its seam.

:class:`SummaryContextManager` lives in :mod:`ctxmgr.state._summary`. This module holds
what code written for the reference reaches here:

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

from collections.abc import Sequence
from typing import Literal

from ctxmgr import _nesting
from ctxmgr.state._agent import AgentState
from ctxmgr.state._managers import BaseContextManager, S
from ctxmgr.state._summary import SummaryContextManager
from ctxmgr.state._tokens import reference_estimate_tokens
from ctxmgr.state._transcript import DEFAULT_SUMMARY_PROMPT
from ctxmgr.state.message import Message
from ctxmgr.state.reducers import remove_tool_messages

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
    from ctxmgr.providers import detect_provider as provider_and_model

    if use_vertex_ai:
        return "google"
    return provider_and_model(model)[0]


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
