"""OpenAI's Batch API (``/v1/files``, ``/v1/batches``) as a batch client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ctxmgr.errors import ProviderError
from ctxmgr.providers._base import scrub
from ctxmgr.providers._batch.client import FIND_LIMIT, TAG_KEY, JobStatus, _scrubbed, sdk_errors
from ctxmgr.providers._batch.state import Answer, PendingRequest

__all__ = ["OPENAI_MAX_BYTES", "OPENAI_MAX_REQUESTS", "OpenAIBatches"]

OPENAI_MAX_REQUESTS = 50_000
"""Requests one OpenAI batch may hold."""
OPENAI_MAX_BYTES = 200_000_000
"""Bytes one OpenAI batch input file may hold (200 MB)."""


class OpenAIBatches:
    """OpenAI's Batch API (``/v1/files``, ``/v1/batches``) through the ``openai`` SDK."""

    provider = "openai"

    def __init__(self, model: str, api_style: str, key: str, base_url: str | None, timeout: float, retries: int):
        from ctxmgr.providers._openai import _import_sdk

        self.sdk = _import_sdk()
        self.model = model
        self.api_style = api_style
        self.key = key
        self.client = self.sdk.OpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=retries)
        self.max_requests, self.max_bytes = OPENAI_MAX_REQUESTS, OPENAI_MAX_BYTES

    @classmethod
    def for_summarizer(cls, target: Any) -> OpenAIBatches:
        """The client for an :class:`~ctxmgr.providers._openai.OpenAISummarizer`'s model,
        API style, key, address, timeout and retries."""
        options = target.options
        key, found_url = target.credentials()
        return cls(target.model, target.api_style, key, found_url, options.timeout, options.max_retries)

    @property
    def endpoint(self) -> str:
        return "/v1/responses" if self.api_style == "responses" else "/v1/chat/completions"

    def line(self, request: PendingRequest) -> bytes:
        """The request as one line of the batch input file: the interactive call's body."""
        if self.api_style == "responses":
            body: dict[str, Any] = {
                "model": self.model,
                "instructions": request.instructions,
                "input": request.text,
                "max_output_tokens": request.max_tokens,
            }
        else:
            from ctxmgr.providers._openai import _REASONING_MODEL

            cap = "max_completion_tokens" if _REASONING_MODEL.match(self.model) else "max_tokens"
            body = {
                "model": self.model,
                "messages": [
                    {"role": "system", "content": request.instructions},
                    {"role": "user", "content": request.text},
                ],
                cap: request.max_tokens,
            }
        line = {"custom_id": request.key, "method": "POST", "url": self.endpoint, "body": body}
        return orjson.dumps(line) + b"\n"

    def submit(self, requests: Sequence[PendingRequest], tag: str) -> tuple[str, str | None]:
        """Upload ``requests`` and start a job; ``(job id, input file id)``."""
        data = b"".join(self.line(request) for request in requests)
        with sdk_errors(self.provider, self.key):
            uploaded = self.client.files.create(file=(f"ctxmgr-{tag}.jsonl", data), purpose="batch")
            job = self.client.batches.create(
                input_file_id=uploaded.id,
                endpoint=self.endpoint,
                completion_window="24h",
                metadata={"ctxmgr": "summaries", TAG_KEY: tag},
            )
        return scrub(str(job.id), self.key), scrub(str(uploaded.id), self.key)

    def find(self, tag: str) -> str | None:
        """The id of a job with ``tag`` that can still answer, if the provider lists one."""
        with sdk_errors(self.provider, self.key):
            for seen, job in enumerate(self.client.batches.list(limit=100)):
                if seen >= FIND_LIMIT:
                    break
                metadata = job.metadata or {}
                if metadata.get(TAG_KEY) == tag and job.status not in ("failed", "expired", "cancelled", "cancelling"):
                    return scrub(str(job.id), self.key)
        return None

    def status(self, job_id: str) -> JobStatus:
        with sdk_errors(self.provider, self.key):
            job = self.client.batches.retrieve(job_id)
        counts = job.request_counts
        state = str(job.status)
        reason = None
        if state == "failed":
            errors = getattr(getattr(job, "errors", None), "data", None) or []
            reason = "; ".join(str(e.message or e.code) for e in errors[:3]) or "the provider gave no reason"
        elif state == "expired":
            reason = "the batch expired before it finished (its 24-hour completion window ran out)"
        elif state == "cancelled":
            reason = "the batch was cancelled"
        return JobStatus(
            state=scrub(state, self.key),
            done=state in ("completed", "failed", "expired", "cancelled"),
            succeeded=state == "completed",
            total=getattr(counts, "total", None),
            completed=getattr(counts, "completed", None),
            failed=getattr(counts, "failed", None),
            reason=None if reason is None else scrub(reason, self.key),  # a server's words, in --json too
        )

    def results(self, job_id: str, keys: Sequence[str] = ()) -> dict[str, Answer]:
        """The answers of a finished job (a part of them for an expired or cancelled one)."""
        with sdk_errors(self.provider, self.key):
            job = self.client.batches.retrieve(job_id)
            files = [job.output_file_id, job.error_file_id]
            contents = [self.client.files.content(f).read() for f in files if f]
        answers: dict[str, Answer] = {}
        for content in contents:
            for raw in content.splitlines():
                if not raw.strip():
                    continue
                try:
                    line = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue  # counted below: a request with no answer is sent again
                key = line.get("custom_id") if isinstance(line, dict) else None
                if isinstance(key, str):
                    answers[key] = self._answer(line)
        return _scrubbed(answers, self.key)

    def _answer(self, line: dict[str, Any]) -> Answer:
        from ctxmgr.providers._openai import _stopped

        error = line.get("error")
        response = line.get("response") or {}
        body = response.get("body") if isinstance(response, dict) else None
        status = response.get("status_code") if isinstance(response, dict) else None
        if error or status != 200 or not isinstance(body, dict):
            message = None
            if isinstance(error, dict):
                message = error.get("message") or error.get("code")
            if message is None and isinstance(body, dict) and isinstance(body.get("error"), dict):
                message = body["error"].get("message")
            prefix = f"HTTP {status}: " if isinstance(status, int) and status != 200 else ""
            return Answer(error=prefix + str(message or "no answer"))
        try:
            if self.api_style == "responses":
                # Leniently, as the SDK reads an interactive answer (a field it does not know
                # yet, or one a compatible server leaves out, is no failure).
                parsed = self.sdk.types.responses.Response.construct(**body)
                if parsed.status == "incomplete":
                    details = getattr(parsed, "incomplete_details", None)
                    _stopped(
                        str(getattr(details, "reason", None) or "unknown"), int(body.get("max_output_tokens") or 0)
                    )
                text = str(parsed.output_text or "")
            else:
                completion = self.sdk.types.chat.ChatCompletion.construct(**body)
                if not completion.choices:
                    text = ""
                else:
                    choice = completion.choices[0]
                    if choice.finish_reason in ("length", "content_filter"):
                        _stopped(str(choice.finish_reason), 0)
                    text = str(choice.message.content or "")
        except ProviderError as exc:
            return Answer(error=exc.reason)
        except Exception as exc:
            return Answer(error=f"unexpected answer: {type(exc).__name__}")
        if not text.strip():
            return Answer(error=f"the model {self.model} answered with no text")
        return Answer(summary=text)

    def cancel(self, job_id: str) -> None:
        with sdk_errors(self.provider, self.key):
            self.client.batches.cancel(job_id)

    def close(self) -> None:
        self.client.close()
