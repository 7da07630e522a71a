"""The Gemini API's batch mode as a batch client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ctxmgr.providers._base import scrub
from ctxmgr.providers._batch.client import FIND_LIMIT, JobStatus, _scrubbed, sdk_errors
from ctxmgr.providers._batch.state import Answer, PendingRequest

__all__ = ["GEMINI_MAX_BYTES", "GEMINI_MAX_FILE_BYTES", "GEMINI_MAX_REQUESTS", "GeminiBatches"]

GEMINI_MAX_REQUESTS = 50_000
"""Requests ctxmgr puts in one Gemini batch job (kept to OpenAI's limit)."""
GEMINI_MAX_BYTES = 20_000_000
"""Bytes of inline requests one Gemini batch job may carry (the API's 20 MB request cap);
a larger job is uploaded as a JSONL file instead."""
GEMINI_MAX_FILE_BYTES = 2_000_000_000
"""Bytes one uploaded Gemini batch input file may hold (2 GB)."""
_GEMINI_PREFIX = "ctxmgr-summaries-"


_GEMINI_DONE = {
    "JOB_STATE_SUCCEEDED": True,
    "JOB_STATE_PARTIALLY_SUCCEEDED": True,
    "JOB_STATE_FAILED": False,
    "JOB_STATE_CANCELLED": False,
    "JOB_STATE_EXPIRED": False,
}


class GeminiBatches:
    """The Gemini API's batch mode through the ``google-genai`` SDK: inline requests, or
    an uploaded JSONL file past :data:`GEMINI_MAX_BYTES`."""

    provider = "google"

    def __init__(self, model: str, arguments: dict[str, Any], base_url: str | None, timeout: float, retries: int):
        from ctxmgr.providers._gemini import _import_sdk

        genai, self.types, _ = _import_sdk()
        self.model = model
        self.key = arguments.get("api_key")
        http_options = self.types.HttpOptions(
            base_url=base_url or None,
            timeout=max(1, round(timeout * 1000)),
            retry_options=self.types.HttpRetryOptions(attempts=retries + 1),
        )
        self.client = genai.Client(**arguments, http_options=http_options)
        self.max_requests, self.max_bytes = GEMINI_MAX_REQUESTS, GEMINI_MAX_FILE_BYTES
        self.inline_bytes = GEMINI_MAX_BYTES

    @classmethod
    def for_summarizer(cls, target: Any) -> GeminiBatches:
        """The client for a :class:`~ctxmgr.providers._gemini.GeminiSummarizer`'s model,
        credentials, address, timeout and retries."""
        options = target.options
        arguments = target.client_arguments()
        return cls(target.model, arguments, options.base_url, options.timeout, options.max_retries)

    def line(self, request: PendingRequest) -> bytes:
        """The request as one line of a batch input file (the Gemini API's REST form)."""
        body = {
            "contents": [{"role": "user", "parts": [{"text": request.text}]}],
            "systemInstruction": {"parts": [{"text": request.instructions}]},
            "generationConfig": {"maxOutputTokens": request.max_tokens},
        }
        return orjson.dumps({"key": request.key, "request": body}) + b"\n"

    def submit(self, requests: Sequence[PendingRequest], tag: str) -> tuple[str, str | None]:
        config = {"display_name": _GEMINI_PREFIX + tag}
        lines = [self.line(request) for request in requests]
        if sum(len(line) for line in lines) > self.inline_bytes:
            import io

            with sdk_errors(self.provider, self.key):
                uploaded = self.client.files.upload(
                    file=io.BytesIO(b"".join(lines)),
                    config={"mime_type": "jsonl", "display_name": f"ctxmgr-{tag}.jsonl"},
                )
                job = self.client.batches.create(model=self.model, src=str(uploaded.name), config=config)
            return scrub(str(job.name), self.key), scrub(str(uploaded.name), self.key)
        inlined = [
            self.types.InlinedRequest(
                contents=request.text,
                config=self.types.GenerateContentConfig(
                    system_instruction=request.instructions, max_output_tokens=request.max_tokens
                ),
                metadata={"key": request.key},
            )
            for request in requests
        ]
        with sdk_errors(self.provider, self.key):
            job = self.client.batches.create(model=self.model, src=inlined, config=config)
        return scrub(str(job.name), self.key), None

    def find(self, tag: str) -> str | None:
        with sdk_errors(self.provider, self.key):
            for seen, job in enumerate(self.client.batches.list(config={"page_size": 100})):
                if seen >= FIND_LIMIT:
                    break
                state = str(getattr(job.state, "value", job.state))
                if job.display_name == _GEMINI_PREFIX + tag and _GEMINI_DONE.get(state, True):
                    return scrub(str(job.name), self.key)
        return None

    def status(self, job_id: str) -> JobStatus:
        with sdk_errors(self.provider, self.key):
            job = self.client.batches.get(name=job_id)
        state = str(getattr(job.state, "value", job.state))
        done = state in _GEMINI_DONE
        reason = None
        if done and not _GEMINI_DONE[state]:
            error = getattr(job, "error", None)
            detail = getattr(error, "message", None) if error is not None else None
            words = {
                "JOB_STATE_FAILED": "the batch failed",
                "JOB_STATE_CANCELLED": "the batch was cancelled",
                "JOB_STATE_EXPIRED": "the batch expired before it finished (Gemini batches run for at most 48 hours)",
            }
            reason = words[state] + (f": {detail}" if detail else f" ({state})")
        responses = getattr(getattr(job, "dest", None), "inlined_responses", None)
        return JobStatus(
            state=scrub(state, self.key),
            done=done,
            succeeded=done and _GEMINI_DONE[state],
            total=len(responses) if responses is not None else None,
            completed=sum(1 for r in responses if r.error is None) if responses is not None else None,
            failed=sum(1 for r in responses if r.error is not None) if responses is not None else None,
            reason=None if reason is None else scrub(reason, self.key),  # a server's words, in --json too
        )

    def results(self, job_id: str, keys: Sequence[str] = ()) -> dict[str, Answer]:
        with sdk_errors(self.provider, self.key):
            job = self.client.batches.get(name=job_id)
            dest = getattr(job, "dest", None)
            output_file = getattr(dest, "file_name", None)
            content = self.client.files.download(file=output_file) if output_file else None
        answers: dict[str, Answer] = {}
        if content is not None:
            for raw in bytes(content).splitlines():
                try:
                    line = orjson.loads(raw) if raw.strip() else None
                except orjson.JSONDecodeError:
                    line = None  # a request with no answer is sent again
                if not isinstance(line, dict) or not isinstance(line.get("key"), str):
                    continue
                try:
                    item = self.types.InlinedResponse.model_validate(
                        {"response": line.get("response"), "error": line.get("error")}
                    )
                except Exception as exc:
                    answers[line["key"]] = Answer(error=f"unexpected answer: {type(exc).__name__}")
                    continue
                answers[line["key"]] = self._answer(item)
            return _scrubbed(answers, self.key)
        responses = getattr(dest, "inlined_responses", None) or []
        for index, item in enumerate(responses):
            metadata = item.metadata or {}
            key = metadata.get("key") or (keys[index] if index < len(keys) else None)
            if not isinstance(key, str):
                continue
            answers[key] = self._answer(item)
        return _scrubbed(answers, self.key)

    def _answer(self, item: Any) -> Answer:
        if item.error is not None:
            error = item.error
            message = getattr(error, "message", None) or (error.get("message") if isinstance(error, dict) else None)
            code = getattr(error, "code", None) or (error.get("code") if isinstance(error, dict) else None)
            return Answer(error=f"{'code ' + str(code) + ': ' if code else ''}{message or 'no answer'}")
        response = item.response
        if response is None:
            return Answer(error="no answer")
        candidates = response.candidates or []
        reason = candidates[0].finish_reason if candidates else None
        if str(getattr(reason, "value", reason)) == "MAX_TOKENS":
            return Answer(
                error="the summary was cut off at the output-token cap; raise --max-summary-tokens (max_summary_tokens)"
            )
        try:
            text = str(response.text or "")
        except Exception as exc:
            return Answer(error=f"unexpected answer: {type(exc).__name__}")
        if not text.strip():
            return Answer(error=f"the model {self.model} answered with no text")
        return Answer(summary=text)

    def cancel(self, job_id: str) -> None:
        with sdk_errors(self.provider, self.key):
            self.client.batches.cancel(name=job_id)

    def close(self) -> None:
        self.client.close()
