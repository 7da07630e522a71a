"""One ``summarize --batch`` command, step by step (see the package for how a run goes).

:class:`BatchRun` holds the command's collector, state and provider client. It is built
before the managers, so that they are handed :attr:`BatchRun.collector` as their
summarizer; :meth:`BatchRun.advance` then fetches, finds what is unanswered (through a
``probe`` of the files that writes nothing), sends it, and writes the output (through
``write``) once nothing is. It prints nothing: what happens is told to ``on_event`` as it
happens (:class:`BatchEvent`) and returned (:class:`BatchOutcome`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ctxmgr._provider_registry import ModelRef
from ctxmgr._redact import scrub
from ctxmgr._terminal import escape_text
from ctxmgr.errors import UsageError

if TYPE_CHECKING:
    from ctxmgr._summarizer import Summarizer
    from ctxmgr.providers._batch.client import BatchClient

__all__ = ["STATE_SUFFIX", "BatchEvent", "BatchOutcome", "BatchRun", "default_state_path"]

STATE_SUFFIX = ".ctxmgr-batch"


def default_state_path(files: Sequence[str], output: Path | str | None, in_place: bool, model: str) -> Path:
    """Where the batch state goes when ``--batch-state`` is not given: beside the output.

    ``-o FILE``: ``FILE.ctxmgr-batch``; ``-o DIR``: ``DIR/.ctxmgr-batch``; ``--in-place``
    on one file: beside it; otherwise (standard output, several files in place) in the
    current folder, named by a hash of the inputs and the model.
    """
    if output is not None and str(output) != "-":
        text = str(output)
        if text.endswith(("/", os.sep)) or Path(text).is_dir():
            return Path(text) / STATE_SUFFIX
        return Path(text + STATE_SUFFIX)
    if in_place and len(files) == 1 and Path(files[0]).is_file():
        return Path(files[0] + STATE_SUFFIX)
    material = "\0".join([model, *(os.path.abspath(f) for f in files)])
    import hashlib

    return Path(f".ctxmgr-batch-{hashlib.sha256(material.encode()).hexdigest()[:12]}")


@dataclass(frozen=True)
class BatchEvent:
    """Something a batch run has to say, as it happens.

    ``level`` is ``"error"``, ``"warning"`` or ``"note"`` (also kept in
    :attr:`BatchRun.messages`, for a report), ``"report"`` (a line of what was sent, or
    of what to do next) or ``"progress"`` (the jobs' states while waiting). The text is
    plain: what came from a file, a job or a server is already made printable.
    """

    level: Literal["error", "warning", "note", "report", "progress"]
    text: str


@dataclass
class BatchOutcome:
    """How :meth:`BatchRun.advance` ended.

    ``kind``: ``"failed"`` (a job failed, expired or was cancelled; nothing written),
    ``"bad_input"`` (the probe could not read the inputs; nothing sent), ``"pending"``
    (requests were sent; run again to fetch them) or ``"written"`` (the output was
    written; ``code`` is what ``write`` returned). ``report`` is the batch's part of a
    JSON report: the failed jobs, or what was sent.
    """

    kind: Literal["failed", "bad_input", "pending", "written"]
    code: int = 0
    report: dict[str, Any] = field(default_factory=dict)


def _shown(text: object) -> str:
    """``text`` as it may be shown: no credentials, no control characters."""
    return escape_text(scrub(str(text)))


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


class BatchRun:
    """One ``summarize --batch`` command: its collector, state and provider client."""

    def __init__(self, shared: Summarizer, state_path: Path, *, wait: bool, poll_interval: float) -> None:
        from ctxmgr.cache import cache_identity, find_cache
        from ctxmgr.providers._batch.client import batch_address, check_batchable
        from ctxmgr.providers._batch.collector import BatchCollector
        from ctxmgr.providers._batch.state import BatchAnswers, BatchState
        from ctxmgr.providers._chain import settings_of

        check_batchable(shared)
        if poll_interval <= 0:
            raise UsageError(f"--poll-interval must be > 0 seconds, got {poll_interval!r}")
        settings = settings_of(shared)
        assert settings is not None  # built by build_summarizer
        self.shared = shared
        self.wait = wait
        self.poll_interval = poll_interval
        self.cache = find_cache(shared)
        self.identity = (
            self.cache.identity if self.cache is not None else cache_identity(shared, api_style=settings.api_style)
        )
        ref = ModelRef.parse(shared.name)
        provider, model = ref.provider, ref.model
        address = batch_address(shared)
        loaded = BatchState.load(state_path)
        # A state you did not make here is used for its running jobs only: the jobs of
        # requests it says were answered are found again by their tags, as for a lost one.
        self.found_state = loaded is not None and loaded.vouched
        self.foreign_state = loaded is not None and not loaded.vouched
        if loaded is not None:
            # Before anything is sent: a state file may have been planted beside the output.
            loaded.check_address(address)
            if (loaded.provider, loaded.model, loaded.api_style) != (provider, model, settings.api_style):
                raise UsageError(
                    f"{state_path}: the batch state is for {loaded.provider}:{loaded.model} ({loaded.api_style}), "
                    f"not {provider}:{model} ({settings.api_style}): pass the options it was made with, "
                    "another --batch-state, or cancel its jobs ('ctxmgr batch cancel') and remove it"
                )
        self.state: BatchState = loaded or BatchState(
            path=state_path, provider=provider, model=model, api_style=settings.api_style, base_url=address
        )
        self.answers = BatchAnswers(self.state.answers_path)
        self.collector = BatchCollector(shared, self.answers, self.identity, self.cache)
        self.messages: list[dict[str, str]] = []
        """The errors, warnings and notes so far (each ``{"level", "message"}``)."""
        self._client: BatchClient | None = None
        self._failed_jobs: list[dict[str, Any]] = []
        self._on_event: Callable[[BatchEvent], None] = lambda event: None

    @property
    def client(self) -> BatchClient:
        """The batch API client of the run's provider, made on first use."""
        if self._client is None:
            from ctxmgr.providers._batch.client import batch_client

            self._client = batch_client(self.shared)
        return self._client

    @staticmethod
    def check_request(files: Sequence[str], *, check: bool, engine: object) -> None:
        """Refuse what a batch cannot do: a check, an engine, standard input."""
        if check:
            raise UsageError("--batch sends requests; --check sends none: use one or the other")
        if engine is not None:
            # The requests are collected in this process; engine workers would send them one by one.
            raise UsageError("--batch collects the requests here; drop --engine")
        if not files or "-" in files:
            # Each run reads its inputs twice (to find the requests, then to write).
            raise UsageError("--batch needs files, not standard input: each run reads its inputs more than once")

    def advance(
        self,
        files: Sequence[str],
        *,
        output: Path | str | None,
        in_place: bool,
        probe: Callable[[], bool],
        write: Callable[[], int],
        on_event: Callable[[BatchEvent], None],
    ) -> BatchOutcome:
        """Advance the batch: fetch, find what is unanswered, send it; or write the output.

        ``probe`` runs the files through the managers without writing anything (``False``:
        the inputs could not be read); ``write`` runs them for real and returns the exit
        code. With ``wait``, polls until the output is written.
        """
        self._on_event = on_event
        self._bind_answers(files, output, in_place)
        try:
            while True:
                if self._fetch_finished():
                    return BatchOutcome(
                        "failed", report={"state_file": str(self.state.path), "failed_jobs": self._failed_jobs}
                    )
                self.collector.pending.clear()
                self.collector.waiting = 0
                self.collector.collecting = True
                if not probe():
                    return BatchOutcome("bad_input")
                if not self.collector.pending:
                    return self._write(write)
                self._send()
                self.state.save()
                report = self._report()
                if not self.wait:
                    return BatchOutcome("pending", report=report)
                self._wait_for_a_job()
        finally:
            if self._client is not None:
                self._client.close()

    # -- steps -------------------------------------------------------------------------------

    def _bind_answers(self, files: Sequence[str], output: Path | str | None, in_place: bool) -> None:
        """Bind the state to this run's output and read the answers kept beside it, which
        are believed only when written with this state (see :class:`BatchAnswers`)."""
        from ctxmgr.providers._batch.state import output_identity, state_records_folder

        self.state.check_output(output_identity(files, output, in_place))
        if self.foreign_state:
            self._say(
                "warning",
                f"{self.state.path}: a batch state not made by you here (no record of it in "
                f"{state_records_folder()}): only its running jobs are used; the answers kept beside it are not "
                "believed, and the jobs of the requests they answer are found again by their tags",
            )
        ignored = self.answers.load(self.state)
        if ignored is not None:
            self._say("warning", f"{self.answers.path}: {ignored}")

    def _fetch_finished(self) -> bool:
        """Poll the recorded jobs; keep the answers of the finished ones. True when a job
        failed, expired or was cancelled (reported)."""
        if not self.state.jobs:
            return False
        failed = False
        kept = []
        changed = False
        for job in self.state.jobs:
            status = self.client.status(job.id)
            if not status.done:
                kept.append(job)
                continue
            changed = True
            self.state.fetched.append(job)
            returned = self.client.results(job.id, job.keys)
            # Only the requests the job was sent with: an answer keyed for another request
            # (another endpoint's, say, from a gateway) would be served to it from the cache.
            own = set(job.keys)
            got = {key: answer for key, answer in returned.items() if key in own}
            foreign = len(returned) - len(got)
            for key, answer in got.items():
                self.answers.add(key, answer)
                if answer.summary is not None and self.cache is not None:
                    self.cache.store(key, answer.summary)
            errors = {k: a.error for k, a in got.items() if a.error is not None}
            unanswered = sum(1 for k in job.keys if k not in got)
            name = _shown(job.id)
            if foreign:
                self._say(
                    "warning",
                    f"batch job {name}: {_count(foreign, 'answer')} for "
                    f"{'a request it was not sent with' if foreign == 1 else 'requests it was not sent with'}, "
                    "ignored (not used, kept or cached)",
                )
            if not status.succeeded:
                failed = True
                self._failed_jobs.append(
                    {"id": job.id, "state": status.state, "reason": status.reason, "unanswered": unanswered}
                )
                self._say(
                    "error",
                    f"batch job {name} ended {status.state}: {_shown(status.reason or 'no reason given')}; "
                    f"{unanswered} of {len(job.keys)} requests unanswered, nothing written "
                    "(run the command again to send them in a new batch)",
                )
            elif unanswered:
                self._say(
                    "warning",
                    f"batch job {name}: {unanswered} of {len(job.keys)} requests came back with no answer; "
                    "they are sent again",
                )
            if errors:
                first = _shown(next(iter(errors.values())) or "")
                self._say(
                    "warning",
                    f"batch job {name}: {len(errors)} of {len(job.keys)} requests failed ({first}); "
                    "their conversations are left as they were when the output is written",
                )
        if changed:
            self.answers.save()
            self.state.jobs = kept
            self.state.save()
        return failed

    def _send(self) -> None:
        """Send the pending requests no recorded job holds, in as many jobs as the limits ask."""
        from ctxmgr.providers._batch.client import now
        from ctxmgr.providers._batch.collector import chunk_requests, job_tag
        from ctxmgr.providers._batch.state import JobRecord, request_tokens

        held = {key for job in self.state.jobs for key in job.keys}
        new = [r for k, r in self.collector.pending.items() if k not in held]
        if not new:
            return
        client = self.client
        self.state.record()  # before anything is paid for: a later run believes what it fetches
        for chunk in chunk_requests(
            new, max_requests=client.max_requests, max_bytes=client.max_bytes, size=lambda r: len(client.line(r))
        ):
            keys = [r.key for r in chunk]
            tag = job_tag(self.identity, keys)
            tokens = sum(request_tokens(r) for r in chunk)
            # A state file lost after the jobs were sent: the jobs are found by their tags.
            found = None if self.found_state else client.find(tag)
            if found is not None:
                job_id, input_file = found, None
                self._say("note", f"found batch job {_shown(found)} sent earlier for these requests")
            else:
                job_id, input_file = client.submit(chunk, tag)
            self.state.jobs.append(
                JobRecord(
                    id=job_id,
                    provider=client.provider,
                    tag=tag,
                    keys=keys,
                    input_tokens=tokens,
                    created=now(),
                    input_file=input_file,
                )
            )
            # Recorded at once: a failure sending the next job must not lose this one's id.
            self.state.save()

    def _report(self) -> dict[str, Any]:
        """Say what was sent and what to do next; the batch's part of a JSON report."""
        pending = self.collector.pending
        jobs = [job for job in self.state.jobs if any(k in pending for k in job.keys)]
        tokens = sum(job.input_tokens for job in jobs)
        lines = [
            f"batch: {_count(len(pending), 'summary request')} (est. {tokens:,} input tokens) in "
            f"{_count(len(jobs), 'job')} at {_shown(self.state.provider)}:",
            *(f"  {_shown(job.id)}  {_count(len(job.keys), 'request')}" for job in jobs),
        ]
        if self.collector.waiting:
            lines.append(
                f"batch: {_count(self.collector.waiting, 'conversation')} "
                f"{'needs' if self.collector.waiting == 1 else 'need'} another round after these answers "
                "(combining the summaries of parts, asking again for missing facts): the run that fetches them sends it"
            )
        lines.append(
            f"batch: state in {_shown(str(self.state.path))}; run the same command again to fetch the answers "
            "and write the output (exit code 75 until then)"
        )
        for line in lines:
            self._on_event(BatchEvent("report", line))
        return {
            "state_file": str(self.state.path),
            "provider": self.state.provider,
            "pending_requests": len(pending),
            "conversations_waiting": self.collector.waiting,
            "input_tokens": tokens,
            "jobs": [{"id": job.id, "requests": len(job.keys), "input_tokens": job.input_tokens} for job in jobs],
            "failed_requests": len(self.answers.failures()),
        }

    def _wait_for_a_job(self) -> None:
        """Poll until one of the recorded jobs ends (``wait``), telling their progress."""
        last = ""
        while True:
            time.sleep(self.poll_interval)
            states = [(job, self.client.status(job.id)) for job in self.state.jobs]
            shown = "; ".join(f"{job.id} {status.describe()}" for job, status in states)
            if shown != last:
                self._on_event(BatchEvent("progress", f"batch: {_shown(shown)}"))
                last = shown
            if not states or any(status.done for _, status in states):
                return

    def _write(self, write: Callable[[], int]) -> BatchOutcome:
        """Every request answered: the run an interactive one would make, then tidy up."""
        self.collector.collecting = False
        if self.cache is not None:
            # The pass that found nothing pending counted its hits: the report counts this
            # run's (what was stored, ignored or evicted stays counted, to be reported).
            self.cache.stats.hits = self.cache.stats.misses = 0
        code = write()
        failures = self.answers.failures()
        if failures and code != 0:
            # Kept for a retry: the next --batch run sends the failed requests again.
            self.answers.drop_failures()
            self.answers.save()
            self.state.jobs = []
            self.state.save()
            self._on_event(
                BatchEvent(
                    "report",
                    f"batch: {len(failures)} requests failed in the batch; run the command again with --batch to "
                    f"send them in a new batch (state kept in {_shown(str(self.state.path))}), or without "
                    "--batch to ask them now",
                )
            )
        else:
            self.state.remove()
            self.answers.remove()
        return BatchOutcome("written", code=code)

    def _say(self, level: Literal["error", "warning", "note"], text: str) -> None:
        self.messages.append({"level": level, "message": text})
        self._on_event(BatchEvent(level, text))
