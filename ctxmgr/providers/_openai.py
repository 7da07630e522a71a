"""OpenAI (and OpenAI-compatible servers) through the official ``openai`` SDK's async client.

``api_style="responses"`` calls the Responses API (``instructions`` = the summary prompt,
``input`` = the fenced transcript, ``max_output_tokens`` = the cap); ``"chat"`` calls
Chat Completions (a system and a user message, and the cap). The SDK is imported, the
key looked up and the client built on the first :meth:`OpenAISummarizer.summarize`
call, never before: a file that needs no summary needs no key.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import orjson

from ctxmgr._summarizer import setting_up
from ctxmgr.errors import MissingKeyError, ProviderError, ProviderNotInstalledError, SummaryCutOffError, UsageError
from ctxmgr.providers._answers import answer_limit, bounded_client, check_summary_length, response_class
from ctxmgr.providers._base import LOCAL_SERVER_KEY, LoopClients, ProviderOptions, env, env_key, scrub
from ctxmgr.providers._budgets import (
    WINDOW_SHARE,
    default_input_tokens,
    describe_default,
    known_family,
    server_window,
    window_share,
)
from ctxmgr.providers._retry import (
    RETRYABLE_STATUS,
    Pacer,
    call_with_retries,
    describe_status,
    one_line,
    parse_retry_after,
    timeout_error,
)

__all__ = ["OpenAISummarizer"]

PROVIDER = "openai"

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where the SDK sends requests when neither a base URL nor ``OPENAI_BASE_URL`` is set."""

# Reasoning models reject ``max_tokens`` in Chat Completions and want
# ``max_completion_tokens``; many OpenAI-compatible servers know only ``max_tokens``.
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5)", re.IGNORECASE)


def _import_sdk() -> Any:
    try:
        import openai
    except ImportError:
        raise ProviderNotInstalledError(
            "the openai SDK is not installed; install it with: pip install 'openai>=1.66'",
            provider=PROVIDER,
        ) from None
    return openai


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        inner: dict[str, Any] = error if isinstance(error, dict) else body
        message = inner.get("message")
        if isinstance(message, str) and message:
            return message
    return str(getattr(exc, "message", "") or exc)


def _stopped(reason: str, max_tokens: int) -> None:
    """An answer the model did not finish is no summary: a cut one would lose facts."""
    if reason in ("max_output_tokens", "length"):
        raise SummaryCutOffError(
            f"the summary was cut off at the output-token cap ({max_tokens} tokens); "
            "raise --max-summary-tokens (max_summary_tokens)",
            provider=PROVIDER,
        )
    raise ProviderError(f"the model stopped before finishing its answer ({reason})", provider=PROVIDER)


class OpenAISummarizer:
    """Summaries from an OpenAI model, or any server speaking the OpenAI API.

    Args:
        model: The model name as the API knows it (``gpt-4o-mini``, ``llama3.2``...).
        options: Base URL, timeout, retries and an explicit key.
        api_style: ``"responses"`` (Responses API) or ``"chat"`` (Chat Completions; what
            most local servers speak).

    The key is ``options.api_key``, else ``OPENAI_API_KEY``. With a base URL
    (``options.base_url`` or ``OPENAI_BASE_URL``) and no key, the placeholder
    ``"not-needed"`` is sent, so local servers that need no key work.
    """

    def __init__(
        self,
        model: str,
        options: ProviderOptions | None = None,
        *,
        api_style: Literal["responses", "chat"] = "responses",
    ) -> None:
        if api_style not in ("responses", "chat"):
            raise UsageError(f"api_style must be 'responses' or 'chat', got {api_style!r}")
        self.model = model
        self.options = options or ProviderOptions()
        self.api_style = api_style
        self.name = f"{PROVIDER}:{model}"
        self._clients = LoopClients()
        self._pacer = Pacer()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, api_style={self.api_style!r}, options={self.options!r})"

    def credentials(self) -> tuple[str, str | None]:
        """``(api key, base URL or None)``; :class:`MissingKeyError` names the variable."""
        base_url = self.options.base_url or env("OPENAI_BASE_URL")
        key = self.options.api_key or env_key("OPENAI_API_KEY", PROVIDER)
        if key is None:
            if base_url is None:
                raise MissingKeyError(
                    "no API key: set OPENAI_API_KEY (or pass --base-url for a local server that needs none)",
                    provider=PROVIDER,
                )
            key = LOCAL_SERVER_KEY
        return key, base_url

    def endpoint(self) -> str:
        """The address requests go to: the base URL option, else ``OPENAI_BASE_URL``, else OpenAI's.

        Read without importing the SDK (the summary cache's key includes it).
        """
        return self.options.base_url or env("OPENAI_BASE_URL") or DEFAULT_BASE_URL

    def input_limit(self) -> tuple[int, str]:
        """Input tokens one request may carry (see :mod:`ctxmgr.providers._budgets`), and why.

        A server given by a base URL serving a model of no known family is asked its
        window (once per run); one that does not say, or serves a known family's model
        (a proxy), gets the conservative default.
        """
        endpoint = self.endpoint()
        custom = endpoint != DEFAULT_BASE_URL
        if custom and not known_family(self.model):
            said = server_window(endpoint, self.model, timeout=min(5.0, self.options.timeout or 5.0))
            if said is not None:
                return window_share(said[0]), f"{WINDOW_SHARE:.0%} of a {said[0]:,}-token window ({said[1]})"
            tokens = default_input_tokens(self.model, custom_server=True)
            # The split note adds "--max-input-tokens changes it" (ctxmgr.files._summaries).
            return tokens, f"{describe_default(self.model, custom_server=True)}, which did not say its window"
        return default_input_tokens(self.model, custom_server=custom), describe_default(
            self.model, custom_server=custom
        )

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        with setting_up():  # the SDK's import and the run's client: the collector paused
            sdk, client, key, temporary = self._client()
        try:
            return await call_with_retries(
                lambda: self._attempt(sdk, client, key, text, instructions, max_tokens),
                options=self.options,
                provider=PROVIDER,
                pacer=self._pacer,
            )
        finally:
            if temporary:
                await _close(client)

    def _client(self) -> tuple[Any, Any, str, bool]:
        """``(sdk, client, key, temporary)``: the SDK imported, the key looked up, the
        loop's kept client (built on first use) or a temporary one."""
        sdk = _import_sdk()
        key, base_url = self.credentials()

        def make() -> Any:
            # Our retry loop does the retrying (see ctxmgr.providers._retry): max_retries=0.
            # The SDK's own client class, reading answers within their bound (_answers).
            http_client = bounded_client(sdk.DefaultAsyncHttpxClient)(timeout=self.options.timeout)
            # Requests go through the client's public ``post`` (see _ask): the API's
            # resource module, which the SDK imports on first use, is never loaded.
            return sdk.AsyncOpenAI(
                api_key=key, base_url=base_url, timeout=self.options.timeout, max_retries=0, http_client=http_client
            )

        try:
            client, temporary = self._clients.acquire(make)
        except sdk.OpenAIError as exc:
            reason = f"cannot configure the client: {scrub(one_line(str(exc)), key)}"
            raise ProviderError(reason, provider=PROVIDER, every_call=True) from None
        return sdk, client, key, temporary

    async def aopen(self) -> None:
        """Reuse one HTTP client for every call in the running loop until :meth:`aclose`."""
        self._clients.keep()

    async def aclose(self) -> None:
        """Close the client kept for this event loop (call before the loop ends)."""
        await self._clients.aclose(_close)

    async def _attempt(self, sdk: Any, client: Any, key: str, text: str, instructions: str, max_tokens: int) -> str:
        try:
            with answer_limit(max_tokens, PROVIDER):
                answer = await self._ask(sdk, client, text, instructions, max_tokens)
            return check_summary_length(answer, max_tokens, PROVIDER)
        except ProviderError:
            raise
        # Every SDK failure becomes a ProviderError here, scrubbed of the key; `from None`
        # so no SDK object (requests carry the Authorization header) rides along.
        except sdk.APIStatusError as exc:
            status = int(exc.status_code)
            raise ProviderError(
                f"{describe_status(status)}: {scrub(one_line(_server_message(exc)), key)}",
                provider=PROVIDER,
                retryable=status in RETRYABLE_STATUS,
                status_code=status,
                retry_after=parse_retry_after(exc.response.headers),
            ) from None
        except sdk.APITimeoutError:
            raise timeout_error(self.options.timeout, PROVIDER) from None
        except sdk.APIConnectionError as exc:
            # Refused, unknown host, reset halfway, not HTTP: the transport's exception
            # type says which, its message (sometimes empty) the details.
            cause = exc.__cause__ or exc
            detail = scrub(one_line(str(cause), 160), key)
            raise ProviderError(
                f"connection to {scrub(str(client.base_url), key)} failed: "
                f"{type(cause).__name__}{': ' + detail if detail else ''}",
                provider=PROVIDER,
                retryable=True,
                every_call=True,  # refused, unknown host: retried, then no other call gets through
            ) from None
        except sdk.APIResponseValidationError as exc:
            raise ProviderError(
                f"unexpected answer: {scrub(one_line(str(exc)), key)}", provider=PROVIDER, status_code=exc.status_code
            ) from None
        except ValueError as exc:  # a body that is not JSON (json.JSONDecodeError)
            raise ProviderError(
                f"malformed answer, not JSON ({scrub(one_line(str(exc), 120), key)}); "
                "is the base URL an OpenAI-compatible API?",
                provider=PROVIDER,
            ) from None
        except Exception as exc:
            raise ProviderError(f"{type(exc).__name__}: {scrub(one_line(str(exc)), key)}", provider=PROVIDER) from None

    async def _ask(self, sdk: Any, client: Any, text: str, instructions: str, max_tokens: int) -> str:
        """The answer's text; an unfinished answer is a :class:`ProviderError`.

        The request is the one ``responses.create`` (``chat.completions.create``) sends,
        made through the client's public ``post`` with the body written out, and the answer
        comes back raw: its text is taken from the JSON when it has the plain shape of a
        finished answer (:func:`_plain_responses_text`, :func:`_plain_chat_text`); any
        other answer is read into the SDK's own answer type as its raw-response parse
        does (:func:`_sdk_answer`). The SDK would build a model object for every part of
        an answer, of which a summary reads one string, and before the request, load the
        API's resource module (its request and answer types, about 60 ms once) and walk
        the request's parameters against their declared types (about 0.3 ms a call, the
        values here being plain text and numbers it leaves as they are).
        """
        answer_class = response_class(sdk.DefaultAsyncHttpxClient)
        if self.api_style == "responses":
            # The keys in the order responses.create writes them.
            body: dict[str, Any] = {
                "model": self.model,
                "input": text,
                "instructions": instructions,
                "max_output_tokens": max_tokens,
            }
            answer = await client.post("/responses", cast_to=answer_class, body=body, options=_request_options())
            plain = _plain_responses_text(answer.content)
            if plain is not None:
                return plain
            response = _sdk_answer(answer, sdk.types.responses.Response)
            if response.status == "incomplete":
                details = getattr(response, "incomplete_details", None)
                _stopped(str(getattr(details, "reason", None) or "unknown"), max_tokens)
            return str(response.output_text or "")
        cap = "max_completion_tokens" if _REASONING_MODEL.match(self.model) else "max_tokens"
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": instructions},
                {"role": "user", "content": text},
            ],
            cap: max_tokens,
        }
        answer = await client.post("/chat/completions", cast_to=answer_class, body=body, options=_request_options())
        plain = _plain_chat_text(answer.content)
        if plain is not None:
            return plain
        completion = _sdk_answer(answer, sdk.types.chat.ChatCompletion)
        if not completion.choices:
            return ""
        choice = completion.choices[0]
        if choice.finish_reason in ("length", "content_filter"):
            _stopped(str(choice.finish_reason), max_tokens)
        return str(choice.message.content or "")


def _request_options() -> dict[str, Any]:
    """The request options ``create`` passes: the key sent as a bearer token (a new
    mapping each call: the SDK is handed nothing shared)."""
    return {"security": {"bearer_auth": True}}


def _sdk_answer(answer: Any, answer_type: Any) -> Any:
    """``answer`` as the SDK's raw-response ``parse()`` gives it for ``answer_type`` (its
    client validating no answer strictly, the default): a body declared JSON is read as
    JSON (a ``ValueError`` if it is not); another body too, else its text is returned;
    an object becomes ``answer_type.construct(**object)`` (the SDK's lenient building,
    nested parts included), a list each of its objects so, anything else stays as read.
    ``tests/providers/test_answer_reading.py`` serves answers both ways and compares."""
    content_type = answer.headers.get("content-type", "*").split(";")[0]
    if content_type.endswith("json"):
        data = answer.json()
    else:
        try:
            data = answer.json()
        except Exception:
            return answer.text
    if isinstance(data, dict):
        return answer_type.construct(**data)
    if isinstance(data, list):
        return [answer_type.construct(**item) if isinstance(item, dict) else item for item in data]
    return data


def _json(body: bytes) -> Any:
    """``body`` as JSON, or ``None`` where orjson does not read it (the SDK then parses it,
    with its own JSON reader and its own errors). Where orjson reads a body, it reads the
    value the SDK's reader does."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


_OUTPUT_ITEMS = frozenset({"message", "reasoning"})
"""The Responses output items read here: the answer's message, and the reasoning before it."""

_MESSAGE_PARTS = frozenset({"output_text", "refusal"})


def _plain_responses_text(body: bytes) -> str | None:
    """A finished Responses answer's ``output_text`` (the texts of its messages'
    ``output_text`` parts, joined) read from its JSON ``body``, as the SDK's
    ``Response.output_text`` gives it; ``None`` for any other answer (unfinished, not
    JSON, another item or part type, a field of another type): the SDK parses those."""
    data = _json(body)
    if not isinstance(data, dict):
        return None
    status, output = data.get("status"), data.get("output")
    if not isinstance(status, str) or status == "incomplete" or not isinstance(output, list):
        return None
    texts: list[str] = []
    for item in output:
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(kind, str) or kind not in _OUTPUT_ITEMS:
            return None
        if kind != "message":
            continue
        content = item.get("content")
        if not isinstance(content, list):
            return None
        for part in content:
            part_kind = part.get("type") if isinstance(part, dict) else None
            if not isinstance(part_kind, str) or part_kind not in _MESSAGE_PARTS:
                return None
            if part_kind == "output_text":
                text = part.get("text")
                if not isinstance(text, str):
                    return None
                texts.append(text)
    return "".join(texts)


def _plain_chat_text(body: bytes) -> str | None:
    """A finished Chat Completions answer's text (the first choice's message content, or
    ``""`` without a choice) read from its JSON ``body``, as the SDK's objects give it;
    ``None`` for any other answer (cut off, filtered, not JSON, a field of another
    type): the SDK parses those."""
    data = _json(body)
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list):
        return None
    if not choices:
        return ""
    choice = choices[0]
    if not isinstance(choice, dict) or "finish_reason" not in choice:
        return None
    reason, message = choice["finish_reason"], choice.get("message")
    if not (reason is None or isinstance(reason, str)) or reason in ("length", "content_filter"):
        return None
    if not isinstance(message, dict) or "content" not in message:
        return None
    content = message["content"]
    if content is None:
        return ""
    return content if isinstance(content, str) else None


async def _close(client: Any) -> None:
    await client.close()
