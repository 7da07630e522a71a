"""What every provider's batch client offers (:class:`BatchClient`), and the client of a
run's provider (:func:`batch_client`), found through the provider registry."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ctxmgr import _provider_registry as provider_registry
from ctxmgr._provider_registry import ModelRef
from ctxmgr.errors import ProviderError, UsageError
from ctxmgr.providers._base import hide_url_credentials, scrub
from ctxmgr.providers._batch.state import Answer, PendingRequest

__all__ = [
    "FIND_LIMIT",
    "TAG_KEY",
    "BatchClient",
    "JobStatus",
    "batch_address",
    "batch_client",
    "check_batchable",
    "now",
]

TAG_KEY = "ctxmgr_batch"
"""The metadata key of a job's tag (where the provider keeps metadata)."""
FIND_LIMIT = 500
"""Jobs listed at most when looking for a lost state file's jobs by their tags."""


@dataclass
class JobStatus:
    """What a provider says of one job.

    ``state`` is the provider's word (``in_progress``, ``JOB_STATE_RUNNING``...);
    ``done`` whether it will change no more; ``succeeded`` whether its answers are
    there; ``reason`` why it failed, expired or was cancelled.
    """

    state: str
    done: bool
    succeeded: bool
    total: int | None = None
    completed: int | None = None
    failed: int | None = None
    reason: str | None = None

    def describe(self) -> str:
        counts = ""
        if self.total is not None:
            counts = f", {self.completed or 0}/{self.total} done" + (f", {self.failed} failed" if self.failed else "")
        return f"{self.state}{counts}"


def _sdk_error(provider: str, exc: BaseException, key: str | None) -> ProviderError:
    """An SDK failure of a batch call as a :class:`ProviderError`, scrubbed of the key."""
    from ctxmgr.providers._retry import describe_status, one_line

    status = getattr(exc, "status_code", None)
    if status is None and isinstance(getattr(exc, "code", None), int):
        status = exc.code  # type: ignore[attr-defined]
    message = getattr(exc, "message", None) or str(exc)
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict) and body["error"].get("message"):
        message = body["error"]["message"]
    text = scrub(one_line(str(message)), key)
    if isinstance(status, int):
        return ProviderError(f"{describe_status(status)}: {text}", provider=provider, status_code=status)
    return ProviderError(f"{type(exc).__name__}: {text}", provider=provider)


@contextlib.contextmanager
def sdk_errors(provider: str, key: str | None) -> Iterator[None]:
    """A batch client's SDK calls: a failure comes out as a :class:`ProviderError`,
    scrubbed of ``key`` (ctxmgr's own errors pass as they are)."""
    try:
        yield
    except ProviderError:
        raise
    except Exception as exc:
        raise _sdk_error(provider, exc, key) from None


class BatchClient(Protocol):
    """A provider's batch API, as a batch run uses it (the registry's ``batches`` class).

    Built from the provider's own summarizer (:meth:`for_summarizer`): its key, timeout,
    retries and address. Every failure is a :class:`ProviderError`, scrubbed of the key.
    """

    provider: str
    max_requests: int
    max_bytes: int

    def endpoint(self) -> str:
        """The address the jobs go to."""
        ...

    def line(self, request: PendingRequest) -> bytes:
        """``request`` as one line of the batch input file."""
        ...

    def submit(self, requests: Sequence[PendingRequest], tag: str) -> tuple[str, str | None]:
        """Send a job of ``requests`` tagged ``tag``: ``(job id, input file id or None)``."""
        ...

    def find(self, tag: str) -> str | None:
        """The id of a recent job tagged ``tag`` that did not fail, if there is one."""
        ...

    def status(self, job_id: str) -> JobStatus:
        """What the provider says of the job."""
        ...

    def results(self, job_id: str, keys: Sequence[str] = ()) -> dict[str, Answer]:
        """The answers of a finished job (``keys``: the requests it was sent with)."""
        ...

    def cancel(self, job_id: str) -> None:
        """Cancel the job."""
        ...

    def close(self) -> None:
        """Close the SDK's client."""
        ...


def _scrubbed(answers: dict[str, Answer], key: str | None) -> dict[str, Answer]:
    """``answers`` with every credential removed: a server's words are kept in files
    and printed, and a server may quote the key it was sent."""
    return {
        name: Answer(
            None if answer.summary is None else scrub(answer.summary, key),
            None if answer.error is None else scrub(answer.error, key),
        )
        for name, answer in answers.items()
    }


def batch_address(summarizer: object) -> str:
    """The address a batch of ``summarizer``'s provider goes to (flag, environment or
    config, else the provider's own), without any password in it."""
    check_batchable(summarizer)
    return hide_url_credentials(str(_provider_summarizer(summarizer).endpoint()))


def _provider_summarizer(summarizer: object) -> Any:
    """The summarizer, in a chain of wrappers (each with ``inner``), of a provider with a batch API."""
    classes = tuple(provider_registry.resolve(e.summarizer) for e in provider_registry.batch_entries())
    for _ in range(16):
        if isinstance(summarizer, classes):
            return summarizer
        summarizer = getattr(summarizer, "inner", None)
        if summarizer is None:
            break
    return None


def check_batchable(summarizer: object) -> None:
    """Refuse, before anything is read, a summarizer no batch API can serve."""
    target = _provider_summarizer(summarizer)
    if target is None:
        raise UsageError("--batch needs an OpenAI or Gemini model (the offline digest answers at once)")
    entry = provider_registry.entry(ModelRef.parse(target.name).provider)
    if entry is not None and entry.vertex_selected():
        raise UsageError(
            "--batch does not support Vertex AI: its batch prediction reads requests from Cloud Storage or "
            f"BigQuery, which ctxmgr does not use; unset {entry.vertex_variable} to use the Gemini API's "
            "batch mode, or run without --batch"
        )


def batch_client(summarizer: object) -> BatchClient:
    """The batch API client for the provider behind ``summarizer``: its key, timeout,
    retries and address (:func:`batch_address`: the flag, the environment or the user
    config, else the provider's own; never a state file's)."""
    check_batchable(summarizer)
    target = _provider_summarizer(summarizer)
    entry = provider_registry.entry(ModelRef.parse(target.name).provider)
    # check_batchable found the summarizer of a provider with a batch API.
    assert entry is not None
    assert entry.batches is not None
    client: BatchClient = provider_registry.resolve(entry.batches).for_summarizer(target)
    return client


def now() -> float:
    """The time a job is recorded as created."""
    return time.time()
