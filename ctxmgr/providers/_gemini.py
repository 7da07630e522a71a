"""Google Gemini (Gemini API or Vertex AI) through the official ``google-genai`` SDK.

One ``generate_content`` call on the async client, with the summary prompt as
``system_instruction`` and the cap as ``max_output_tokens``. The SDK is imported, the key
looked up and the client built on the first :meth:`GeminiSummarizer.summarize` call.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from ctxmgr._summarizer import setting_up
from ctxmgr.errors import MissingKeyError, ProviderError, ProviderNotInstalledError, SummaryCutOffError
from ctxmgr.providers._answers import answer_limit, bounded_client, check_summary_length
from ctxmgr.providers._base import LOCAL_SERVER_KEY, LoopClients, ProviderOptions, env, env_key, scrub
from ctxmgr.providers._budgets import default_input_tokens, describe_default
from ctxmgr.providers._retry import (
    RETRYABLE_STATUS,
    Pacer,
    call_with_retries,
    describe_status,
    one_line,
    parse_retry_after,
    timeout_error,
)

__all__ = ["GeminiSummarizer"]

PROVIDER = "google"

_CREDENTIALS_HINT = (
    "no Google Cloud credentials for Vertex AI: run 'gcloud auth application-default login' "
    "or set GOOGLE_APPLICATION_CREDENTIALS (or set GOOGLE_API_KEY for Vertex AI express mode)"
)


def _import_sdk() -> tuple[Any, Any, Any]:
    try:
        from google import genai
        from google.genai import errors, types
    except ImportError:
        raise ProviderNotInstalledError(
            "the google-genai SDK is not installed; install it with: pip install 'google-genai>=1.0'",
            provider=PROVIDER,
        ) from None
    return genai, types, errors


def _transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeout classes, other transport classes) of the HTTP libraries the SDK loaded."""
    timeouts: list[type[BaseException]] = []
    transports: list[type[BaseException]] = []
    for name in ("httpx", "httpx2"):
        module = sys.modules.get(name)
        if module is not None:
            timeouts.append(module.TimeoutException)
            transports.append(module.TransportError)
    aiohttp = sys.modules.get("aiohttp")
    if aiohttp is not None:
        transports.append(aiohttp.ClientError)
    return tuple(timeouts), tuple(transports)


def _is_credentials_error(exc: BaseException) -> bool:
    return type(exc).__module__.startswith("google.auth") and type(exc).__name__ == "DefaultCredentialsError"


class GeminiSummarizer:
    """Summaries from a Gemini model.

    Args:
        model: The model name as the API knows it (``gemini-2.0-flash``...).
        options: Base URL, timeout, retries and an explicit key.

    Credentials, in order: ``options.api_key``; else ``GOOGLE_API_KEY`` or
    ``GEMINI_API_KEY`` (the SDK's order: ``GOOGLE_API_KEY`` wins when both are set).
    With ``GOOGLE_GENAI_USE_VERTEXAI=true`` the call goes to Vertex AI: express mode with
    a key, else ``GOOGLE_CLOUD_PROJECT`` and ``GOOGLE_CLOUD_LOCATION`` (default
    ``global``) with Application Default Credentials. The base URL is
    ``options.base_url``, else the SDK's ``GOOGLE_GEMINI_BASE_URL`` /
    ``GOOGLE_VERTEX_BASE_URL``; with a base URL and no key a placeholder key is sent.
    """

    def __init__(self, model: str, options: ProviderOptions | None = None, *, api_style: str = "responses") -> None:
        # api_style is OpenAI's choice of API; the registry passes it to every provider.
        self.model = model
        self.options = options or ProviderOptions()
        self.name = f"{PROVIDER}:{model}"
        self._clients = LoopClients()
        self._pacer = Pacer()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, options={self.options!r})"

    def client_arguments(self) -> dict[str, Any]:
        """Keyword arguments for ``genai.Client`` (without ``http_options``).

        Raises :class:`MissingKeyError` naming the variable to set.
        """
        vertex = (env("GOOGLE_GENAI_USE_VERTEXAI") or "").lower() in ("1", "true")
        key = self.options.api_key or env_key("GOOGLE_API_KEY", PROVIDER) or env_key("GEMINI_API_KEY", PROVIDER)
        base_url = self.options.base_url or env("GOOGLE_VERTEX_BASE_URL" if vertex else "GOOGLE_GEMINI_BASE_URL")
        if vertex:
            if key is not None:
                return {"vertexai": True, "api_key": key}
            project = env("GOOGLE_CLOUD_PROJECT")
            if project is None:
                raise MissingKeyError(
                    "Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT (and GOOGLE_CLOUD_LOCATION), "
                    "or GOOGLE_API_KEY for express mode",
                    provider=PROVIDER,
                )
            return {"vertexai": True, "project": project, "location": env("GOOGLE_CLOUD_LOCATION") or "global"}
        if key is None:
            if base_url is None:
                raise MissingKeyError("no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY)", provider=PROVIDER)
            key = LOCAL_SERVER_KEY
        return {"vertexai": False, "api_key": key}

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        with setting_up():  # the SDK's import: the collector paused (and for the client, below)
            genai, types, errors = _import_sdk()
        arguments = self.client_arguments()
        key = arguments.get("api_key")

        def make() -> _Clients:
            http_client = bounded_client(_http_client_class())()
            http_options = types.HttpOptions(
                # Unset, the SDK reads GOOGLE_GEMINI_BASE_URL / GOOGLE_VERTEX_BASE_URL itself.
                base_url=self.options.base_url or None,
                timeout=max(1, round(self.options.timeout * 1000)),  # milliseconds
                # One attempt per call: our retry loop does the retrying (ctxmgr.providers._retry).
                retry_options=types.HttpRetryOptions(attempts=1),
                # Answers are read within their bound (ctxmgr.providers._answers).
                httpx_async_client=http_client,
            )
            # A client that never sent a request holds no connection: nothing to close
            # when genai.Client refuses its arguments.
            return _Clients(genai.Client(**arguments, http_options=http_options), http_client)

        try:
            with setting_up():
                clients, temporary = self._clients.acquire(make)
        except Exception as exc:
            if _is_credentials_error(exc):
                raise MissingKeyError(_CREDENTIALS_HINT, provider=PROVIDER) from None
            raise ProviderError(
                f"cannot configure the client: {scrub(one_line(str(exc)), key)}", provider=PROVIDER, every_call=True
            ) from None
        config = types.GenerateContentConfig(system_instruction=instructions, max_output_tokens=max_tokens)
        try:
            return await call_with_retries(
                lambda: self._attempt(errors, clients.sdk, key, text, config),
                options=self.options,
                provider=PROVIDER,
                pacer=self._pacer,
            )
        finally:
            if temporary:
                await _close(clients)

    async def aopen(self) -> None:
        """Reuse one client for every call in the running loop until :meth:`aclose`."""
        self._clients.keep()

    async def aclose(self) -> None:
        """Close the client kept for this event loop (call before the loop ends)."""
        await self._clients.aclose(_close)

    def endpoint(self) -> str:
        """The address requests go to, worked out as the SDK does, without importing it.

        The base URL option, else ``GOOGLE_GEMINI_BASE_URL`` (``GOOGLE_VERTEX_BASE_URL``
        for Vertex AI), else the SDK's default: the Gemini API's address; for Vertex AI
        the global one with a key (express mode), else the location's, followed by the
        project and location. The summary cache's key includes it.
        """
        vertex = (env("GOOGLE_GENAI_USE_VERTEXAI") or "").lower() in ("1", "true")
        base_url = self.options.base_url or env("GOOGLE_VERTEX_BASE_URL" if vertex else "GOOGLE_GEMINI_BASE_URL")
        if not vertex:
            return base_url or "https://generativelanguage.googleapis.com/"
        if self.options.api_key or env("GOOGLE_API_KEY") or env("GEMINI_API_KEY"):
            return base_url or "https://aiplatform.googleapis.com/"
        location = env("GOOGLE_CLOUD_LOCATION") or "global"
        if base_url is None:
            if location == "global":
                base_url = "https://aiplatform.googleapis.com/"
            elif location in ("us", "eu"):  # the SDK's multi-regional locations
                base_url = f"https://aiplatform.{location}.rep.googleapis.com/"
            else:
                base_url = f"https://{location}-aiplatform.googleapis.com/"
        return f"{base_url.rstrip('/')}/projects/{env('GOOGLE_CLOUD_PROJECT') or ''}/locations/{location}"

    def input_limit(self) -> tuple[int, str]:
        """Input tokens one request may carry (see :mod:`ctxmgr.providers._budgets`), and why."""
        vertex = (env("GOOGLE_GENAI_USE_VERTEXAI") or "").lower() in ("1", "true")
        custom = bool(self.options.base_url or env("GOOGLE_VERTEX_BASE_URL" if vertex else "GOOGLE_GEMINI_BASE_URL"))
        return default_input_tokens(self.model, custom_server=custom), describe_default(
            self.model, custom_server=custom
        )

    def _address(self) -> str:
        """Where requests go, for error messages."""
        vertex = (env("GOOGLE_GENAI_USE_VERTEXAI") or "").lower() in ("1", "true")
        variable = "GOOGLE_VERTEX_BASE_URL" if vertex else "GOOGLE_GEMINI_BASE_URL"
        return self.options.base_url or env(variable) or ("Vertex AI" if vertex else "the Gemini API")

    async def _attempt(self, errors: Any, client: Any, key: str | None, text: str, config: Any) -> str:
        timeouts, transports = _transport_errors()
        max_tokens = int(config.max_output_tokens)
        try:
            with answer_limit(max_tokens, PROVIDER):
                response = await client.aio.models.generate_content(model=self.model, contents=text, config=config)
            candidates = response.candidates or []
            reason = candidates[0].finish_reason if candidates else None
            if str(getattr(reason, "value", reason)) == "MAX_TOKENS":
                # A summary cut off at the cap would silently lose facts: no summary.
                raise SummaryCutOffError(
                    f"the summary was cut off at the output-token cap ({config.max_output_tokens} tokens); "
                    "raise --max-summary-tokens (max_summary_tokens)",
                    provider=PROVIDER,
                )
            return check_summary_length(str(response.text or ""), max_tokens, PROVIDER)
        except ProviderError:
            raise
        # Every SDK failure becomes a ProviderError here, scrubbed of the key.
        except errors.APIError as exc:
            status = int(exc.code) if isinstance(exc.code, int) else None
            message = exc.message or exc.status or str(exc)
            headers = getattr(getattr(exc, "response", None), "headers", None)
            raise ProviderError(
                f"{describe_status(status) if status else 'API error'}: {scrub(one_line(str(message)), key)}",
                provider=PROVIDER,
                retryable=status in RETRYABLE_STATUS,
                status_code=status,
                retry_after=parse_retry_after(headers),
            ) from None
        except timeouts:
            raise timeout_error(self.options.timeout, PROVIDER) from None
        except transports as exc:
            detail = scrub(one_line(str(exc), 160), key)
            raise ProviderError(
                f"connection to {scrub(self._address(), key)} failed: "
                f"{type(exc).__name__}{': ' + detail if detail else ''}",
                provider=PROVIDER,
                retryable=True,
                every_call=True,  # refused, unknown host: retried, then no other call gets through
            ) from None
        except Exception as exc:
            if _is_credentials_error(exc):
                raise MissingKeyError(_CREDENTIALS_HINT, provider=PROVIDER) from None
            if isinstance(exc, json.JSONDecodeError):
                reason = "malformed answer, not JSON; is the base URL a Gemini API?"
            else:
                reason = f"{type(exc).__name__}: {scrub(one_line(str(exc)), key)}"
            raise ProviderError(reason, provider=PROVIDER) from None


@dataclass(frozen=True)
class _Clients:
    """The SDK's client and the HTTP client it was handed (which the SDK does not close)."""

    sdk: Any
    http: Any


def _http_client_class() -> type[Any]:
    """The async client class of the HTTP library the SDK would use: the one
    ``GOOGLE_GENAI_HTTP_CLIENT`` names, else ``httpx2`` when installed, else ``httpx``."""
    chosen = (env("GOOGLE_GENAI_HTTP_CLIENT") or "").strip().lower()
    if chosen != "httpx":
        try:
            import httpx2
        except ImportError:
            if chosen == "httpx2":
                raise
        else:
            return httpx2.AsyncClient
    import httpx

    return httpx.AsyncClient


async def _close(clients: _Clients) -> None:
    # The HTTP client is ours (the bounded one): closed however the SDK's own close ends.
    try:
        await clients.sdk.aio.aclose()
        clients.sdk.close()
    finally:
        await clients.http.aclose()
