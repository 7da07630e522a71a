"""How much transcript one summary request may carry (``--max-input-tokens``).

A request past a model's context window fails, or worse, is cut by the server without a
word (Ollama keeps only the end of a prompt longer than its window). So a span whose
request would exceed the budget is summarized in parts (:mod:`ctxmgr.state._split`).

The budget is in the project's estimated tokens (four characters a token). Real
tokenizers count JSON, ids and non-English text at fewer characters a token, so each
default is about 60% of the model family's context window: room for the
underestimate, the instruction and the summary itself.

Known families get their window's share. A server reached through a base URL
(``--base-url``, ``OPENAI_BASE_URL``: local servers and proxies) serving a model of no
known family is asked its window once per run (:func:`server_window`: vLLM's
``/v1/models`` ``max_model_len``, llama.cpp's ``/props`` per-slot ``n_ctx``, Ollama's
``/api/show`` ``num_ctx``, else Ollama's default of 4,096) and gets the same share of it.
Any other name, and a server that says nothing, gets :data:`CONSERVATIVE_INPUT_TOKENS`,
which fits a 4,096-token window with a 600-token summary.

>>> default_input_tokens("gpt-4o-mini")
75000
>>> default_input_tokens("gpt-4o-mini", custom_server=True)
2000
>>> default_input_tokens("llama3.1")
2000
"""

from __future__ import annotations

import json
import re
from typing import Any

from ctxmgr import _provider_registry as registry

__all__ = [
    "CONSERVATIVE_INPUT_TOKENS",
    "OLLAMA_DEFAULT_WINDOW",
    "WINDOW_SHARE",
    "FAMILY_INPUT_TOKENS",
    "default_input_tokens",
    "describe_default",
    "input_limit_of",
    "known_family",
    "server_window",
    "window_share",
]

WINDOW_SHARE = 0.6
"""The share of a context window one request's transcript may take (the known families'
budgets are about this share of their windows)."""

OLLAMA_DEFAULT_WINDOW = 4096
"""Ollama's window when the model's parameters set no ``num_ctx`` (past it, Ollama drops
the start of the prompt without a word)."""

_INFO_BYTES = 1 << 20
"""The most of a server's information answer read (it is untrusted input)."""

_WINDOWS: dict[tuple[str, str], tuple[int, str] | None] = {}
"""What each server said of each model's window, asked once per run."""

CONSERVATIVE_INPUT_TOKENS = 2000
"""Unknown models and base-URL servers (Ollama's default window is 2,048 to 4,096)."""

FAMILY_INPUT_TOKENS: tuple[tuple[str, int], ...] = registry.family_input_tokens()
"""``(model name prefix, input tokens)`` of the known model families (the provider
registry's ``budgets``); the first match wins."""


def _family(model: str) -> tuple[str, int] | None:
    name = model.lower().rsplit("/", 1)[-1]
    for prefix, tokens in FAMILY_INPUT_TOKENS:
        if name.startswith(prefix):
            return prefix, tokens
    return None


def known_family(model: str) -> bool:
    """Whether ``model`` belongs to a model family of known window."""
    return _family(model) is not None


def default_input_tokens(model: str, *, custom_server: bool = False) -> int:
    """The input budget of one summary request to ``model`` when none is given."""
    family = _family(model)
    if custom_server or family is None:
        return CONSERVATIVE_INPUT_TOKENS
    return family[1]


def describe_default(model: str, *, custom_server: bool = False) -> str:
    """Why :func:`default_input_tokens` chose its value, for notes and ``--dry-run``."""
    family = _family(model)
    if custom_server:
        return "the default for a server given by a base URL"
    if family is None:
        return f"the default for a model of unknown context ({model})"
    return f"the default for {family[0]}* models"


def input_limit_of(summarizer: Any, model: str) -> tuple[int | None, str]:
    """``(input tokens or None for no limit, why)`` of one request to ``summarizer``.

    A summarizer states its own limit with an ``input_limit()`` method (the network
    providers know their address; the offline digest has none); wrappers (cache,
    concurrency cap) are seen through by their ``inner``. Anything else gets the
    default for ``model``.
    """
    seen = 0
    while summarizer is not None and seen < 16:  # a cycle of wrappers must not hang
        limit = getattr(summarizer, "input_limit", None)
        if callable(limit):
            tokens, why = limit()
            return tokens, why
        summarizer = getattr(summarizer, "inner", None)
        seen += 1
    return default_input_tokens(model), describe_default(model)


def window_share(window: int) -> int:
    """The input budget for a context window of ``window`` tokens."""
    return max(1, int(window * WINDOW_SHARE))


def server_window(base_url: str, model: str, *, timeout: float = 5.0) -> tuple[int, str] | None:
    """``(window, where it was said)`` of ``model`` on the server at ``base_url``, asked
    once per run; ``None`` when the server says nothing ctxmgr understands."""
    key = (base_url, model)
    if key not in _WINDOWS:
        _WINDOWS[key] = _ask_window(base_url.rstrip("/"), model, timeout)
    return _WINDOWS[key]


def _ask_window(base: str, model: str, timeout: float) -> tuple[int, str] | None:
    root = re.sub(r"/v1$", "", base)
    models = _get_json(f"{base}/models" if base.endswith("/v1") else f"{base}/v1/models", None, timeout)
    if isinstance(models, dict) and isinstance(models.get("data"), list):
        for entry in models["data"]:
            if isinstance(entry, dict) and entry.get("id") == model and _count(entry.get("max_model_len")):
                return entry["max_model_len"], "vLLM's /v1/models max_model_len"
    props = _get_json(f"{root}/props", None, timeout)
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    if isinstance(settings, dict) and _count(settings.get("n_ctx")):
        return settings["n_ctx"], "llama.cpp's /props n_ctx"
    shown = _get_json(f"{root}/api/show", {"model": model}, timeout)
    if isinstance(shown, dict):
        parameters = shown.get("parameters")
        found = re.search(r"(?m)^\s*num_ctx\s+(\d{1,9})\s*$", parameters) if isinstance(parameters, str) else None
        if found is not None and _count(int(found[1])):
            return int(found[1]), "Ollama's /api/show num_ctx"
        return OLLAMA_DEFAULT_WINDOW, "Ollama's default num_ctx (the model's parameters set none)"
    return None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 100_000_000


def _get_json(url: str, body: Any, timeout: float) -> Any:
    """The JSON a server answers at ``url`` (POST ``body`` if given), or ``None``."""
    if not url.startswith(("http://", "https://")):
        return None
    # Here, not at the top: urllib.request loads ssl and http.client (about 10 ms), which
    # only a run asking a --base-url server its window needs.
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            raw = answer.read(_INFO_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError):
        return None
    if len(raw) > _INFO_BYTES:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None
