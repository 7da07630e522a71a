"""Summaries through the providers' Batch APIs: sent together, answered later, at about half the price.

Not :mod:`ctxmgr.files` (which compacts many files in one run): this module hands the
summary requests of a run to OpenAI's Batch API or the Gemini API's batch mode and
brings their answers back.

How a run goes (``ctxmgr summarize --batch``, see :mod:`ctxmgr.cli.batchjobs`):

1. The run is made once without writing anything, through a :class:`BatchCollector`
   in place of the model: every request is answered from the batch answers already
   fetched (:class:`BatchAnswers`) or the summary cache, and every other one is
   recorded as pending and answered with a placeholder. A request built from a
   placeholder (combining the summaries of parts, asking again for missing facts)
   waits for the next round: it is not sent.
2. Pending requests not already in a job are sent as new jobs (split past the
   provider's limits, :data:`OPENAI_MAX_REQUESTS`...) and recorded in the state file
   (:class:`BatchState`); the command exits 75 (``EX_TEMPFAIL``).
3. A later run polls the jobs; the answers of the finished ones go to
   :class:`BatchAnswers` (beside the state file, kept until the output is written) and
   to the summary cache. Once a run finds nothing pending, the output is written by
   the same code as an interactive run, with the answers coming from there.

The state and answers files are input (a repository can carry files under their
names): the address a key goes to comes from the run's own settings, never from the
state (:meth:`BatchState.check_address`); the answers are believed only beside a state
made here, for the same output and the requests of its jobs (:class:`BatchAnswers`,
:func:`state_records_folder`); and only a job's own requests' answers, scrubbed of
credentials, are kept or cached.

Each job carries a tag (OpenAI metadata ``ctxmgr_batch``, Gemini display name
``ctxmgr-summaries-TAG``): a hash of the requests it holds and of what answers them.
A lost state file costs a lookup: the next run builds the same requests, groups them
alike (:func:`chunk_requests`) and finds each job by its tag among the provider's most
recent :data:`_FIND_LIMIT` jobs; a job not found there is sent again.

Gemini jobs carry their requests inline up to :data:`GEMINI_MAX_BYTES`, and as an
uploaded JSONL file (``files.upload``, answers through ``files.download``) past it.

Vertex AI's batch prediction reads its input from Cloud Storage or BigQuery, which
ctxmgr does not use: batch mode with ``GOOGLE_GENAI_USE_VERTEXAI`` is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ctxmgr._units import UNITS_PER_TOKEN, text_units
from ctxmgr.errors import InputError, OutputError, ProviderError, UsageError
from ctxmgr.providers._answers import check_summary_length
from ctxmgr.providers._base import (
    Summarizer,
    SummaryText,
    aclose_summarizer,
    aopen_summarizer,
    hide_url_credentials,
    scrub,
)

__all__ = [
    "GEMINI_MAX_BYTES",
    "GEMINI_MAX_FILE_BYTES",
    "OPENAI_MAX_BYTES",
    "OPENAI_MAX_REQUESTS",
    "Answer",
    "BatchAnswers",
    "BatchCollector",
    "BatchState",
    "JobRecord",
    "JobStatus",
    "PendingRequest",
    "PendingSummaryError",
    "batch_address",
    "batch_client",
    "chunk_requests",
    "output_identity",
    "request_tokens",
    "state_records_folder",
]

OPENAI_MAX_REQUESTS = 50_000
"""Requests one OpenAI batch may hold."""
OPENAI_MAX_BYTES = 200_000_000
"""Bytes one OpenAI batch input file may hold (200 MB)."""
GEMINI_MAX_REQUESTS = 50_000
"""Requests ctxmgr puts in one Gemini batch job (kept to OpenAI's limit)."""
GEMINI_MAX_BYTES = 20_000_000
"""Bytes of inline requests one Gemini batch job may carry (the API's 20 MB request cap);
a larger job is uploaded as a JSONL file instead."""
GEMINI_MAX_FILE_BYTES = 2_000_000_000
"""Bytes one uploaded Gemini batch input file may hold (2 GB)."""

_STATE_KIND = "ctxmgr-batch-state"
_ANSWERS_KIND = "ctxmgr-batch-answers"
_VERSION = 1
_TAG_KEY = "ctxmgr_batch"
_GEMINI_PREFIX = "ctxmgr-summaries-"
_FIND_LIMIT = 500
"""Jobs listed at most when looking for a lost state file's jobs by their tags."""
_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]{0,199}")
"""What a job id from a state file may look like: a resource name (``batch_abc``, ``batches/xyz``)."""


class PendingSummaryError(ProviderError):
    """A request that needs an answer still pending in a batch (it is built from one)."""


@dataclass(frozen=True)
class PendingRequest:
    """One summary request to send in a batch; ``key`` names it (its cache key)."""

    key: str
    text: str
    instructions: str
    max_tokens: int


def request_tokens(request: PendingRequest) -> int:
    """Estimated input tokens of ``request``, counted as the reports count them."""
    return max(1, (text_units(request.text) + text_units(request.instructions)) // UNITS_PER_TOKEN)


@dataclass(frozen=True)
class Answer:
    """A batch's answer to one request: a summary, or why there is none."""

    summary: str | None = None
    error: str | None = None


# -- files beside the output ------------------------------------------------------------------


def _read_private(path: Path, what: str) -> Any | None:
    """The JSON in ``path`` (``None`` when there is none), refusing a file someone else
    could have written: a link, another user's, or writable by others."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"cannot read the batch {what}: {exc.strerror}", source=str(path)) from None
    with open(fd, "rb") as handle:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise InputError(f"the batch {what} is not a regular file", source=str(path))
        if status.st_uid != os.geteuid() or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise InputError(
                f"the batch {what} is not yours alone (another owner, or writable by others); "
                "ctxmgr does not trust it: remove it (the jobs are found again by their tags)",
                source=str(path),
            )
        try:
            return orjson.loads(handle.read())
        except orjson.JSONDecodeError as exc:
            raise InputError(f"the batch {what} is not JSON ({exc}); remove it", source=str(path)) from None


def _write_private(path: Path, payload: object) -> None:
    """Write ``payload`` as JSON to ``path`` atomically, readable by the user alone (its
    folder is made when missing: ``-o DIR/`` before the output is written)."""
    data = orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write the batch state: {exc.strerror or exc}") from None
    try:
        with open(fd, "wb") as handle:
            os.fchmod(fd, 0o600)
            handle.write(data)
            handle.flush()
            os.fsync(fd)
        os.replace(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise OutputError(f"{path}: cannot write the batch state: {exc.strerror or exc}") from None
        raise


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


@dataclass
class JobRecord:
    """One provider job as the state file records it."""

    id: str
    provider: str
    tag: str
    keys: list[str]
    input_tokens: int = 0
    created: float = 0.0
    input_file: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "provider": self.provider,
            "tag": self.tag,
            "requests": len(self.keys),
            "input_tokens": self.input_tokens,
            "created": self.created,
            "input_file": self.input_file,
            "keys": self.keys,
        }


def _job_from_json(value: Any, source: str) -> JobRecord:
    if not isinstance(value, dict):
        raise InputError("a job of the batch state is not an object; remove the file", source=source)
    try:
        keys = value["keys"]
        if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
            raise TypeError("keys")
        record = JobRecord(
            id=str(value["id"]),
            provider=str(value["provider"]),
            tag=str(value["tag"]),
            keys=keys,
            input_tokens=int(value.get("input_tokens") or 0),
            created=float(value.get("created") or 0.0),
            input_file=None if value.get("input_file") is None else str(value["input_file"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"a job of the batch state lacks or mistypes {exc}; remove the file", source=source) from None
    if record.provider not in ("openai", "google"):
        raise InputError(f"a job of the batch state names an unknown provider {record.provider!r}", source=source)
    if not _JOB_ID.fullmatch(record.id) or ".." in record.id:
        # An id goes into the path of a request that carries the key: a resource name only.
        raise InputError("a job of the batch state has an id that is not a job's name; remove the file", source=source)
    return record


def state_records_folder() -> Path:
    """Where the states you made are recorded, outside any repository:
    ``platformdirs.user_state_path("ctxmgr") / "batch-states"`` (on Linux
    ``$XDG_STATE_HOME/ctxmgr/batch-states``, else ``~/.local/state/ctxmgr/batch-states``)."""
    import platformdirs  # only here: a batch run needs nothing else of it

    return platformdirs.user_state_path("ctxmgr", appauthor=False) / "batch-states"


def _record_path(nonce: str) -> Path:
    return state_records_folder() / hashlib.sha256(nonce.encode()).hexdigest()


def _is_recorded(nonce: str, state_path: Path) -> bool:
    """Whether ``nonce`` is recorded, for the state at ``state_path``, in a folder and a
    file only you can write."""
    folder = state_records_folder()
    try:
        status = os.stat(folder)
    except OSError:
        return False
    if status.st_uid != os.geteuid() or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    try:
        record = _read_private(_record_path(nonce), "state record")
    except InputError:
        return False
    return isinstance(record, dict) and record.get("state") == os.path.abspath(state_path)


def _same_address(one: str, other: str) -> bool:
    """Whether two base URLs name the same address (a trailing slash aside, as the SDKs read them)."""
    return one.rstrip("/") == other.rstrip("/")


@dataclass
class BatchState:
    """The jobs a command started, in a file beside its output (safe to lose).

    The file is input like any other beside an output: a repository can carry one. What
    it says is believed only as far as it cannot send a key or a summary anywhere: its
    address is compared with the one the run calls (:meth:`check_address`), never used;
    its job ids are polled at that address; and the answers file beside it is believed
    only when it carries the state's :attr:`nonce` and names the same output.

    Attributes:
        path: The state file; the answers fetched so far are in ``path`` + ``-answers``.
        provider: ``openai`` or ``google``.
        model: The model the requests name.
        api_style: The OpenAI API the requests call.
        base_url: The address the jobs were sent to, without any password in it.
        jobs: The jobs not finished (or not yet fetched).
        fetched: The finished jobs whose answers are in the answers file: only their
            requests' answers are believed from it.
        nonce: A secret made with the state, written in it and in the answers file, so
            an answers file is believed only beside the state it was written with.
        output: The output the jobs' answers are for (see :func:`output_identity`).
    """

    path: Path
    provider: str
    model: str
    api_style: str = "responses"
    base_url: str | None = None
    jobs: list[JobRecord] = field(default_factory=list)
    fetched: list[JobRecord] = field(default_factory=list)
    nonce: str = field(default_factory=lambda: secrets.token_hex(16))
    output: str | None = None
    vouched: bool = True
    """Whether you made this state here: a new one, or one whose nonce is recorded under
    :func:`state_records_folder`, where a repository cannot write."""
    _recorded: bool = field(default=False, init=False, repr=False)

    @property
    def answers_path(self) -> Path:
        """Where the answers fetched so far are kept until the output is written."""
        return self.path.with_name(self.path.name + "-answers")

    @property
    def recorded_keys(self) -> set[str]:
        """The requests of every job this state records, running or fetched."""
        return {key for job in (*self.jobs, *self.fetched) for key in job.keys}

    @classmethod
    def load(cls, path: Path) -> BatchState | None:
        """The state in ``path``, ``None`` when there is none. Raises :class:`InputError`."""
        data = _read_private(path, "state file")
        if data is None:
            return None
        source = str(path)
        if not isinstance(data, dict) or data.get("kind") != _STATE_KIND:
            raise InputError("not a ctxmgr batch state file; remove it or pass another --batch-state", source=source)
        if data.get("version") != _VERSION:
            raise InputError(f"batch state version {data.get('version')!r} is not {_VERSION}", source=source)
        jobs = data.get("jobs")
        fetched = data.get("fetched") or []
        if not isinstance(jobs, list) or not isinstance(fetched, list):
            raise InputError("the batch state has no job list; remove the file", source=source)
        base_url, nonce, output = data.get("base_url"), data.get("nonce"), data.get("output")
        state = cls(
            path=path,
            provider=str(data.get("provider")),
            model=str(data.get("model")),
            api_style=str(data.get("api_style") or "responses"),
            base_url=base_url if isinstance(base_url, str) else None,
            jobs=[_job_from_json(job, source) for job in jobs],
            fetched=[_job_from_json(job, source) for job in fetched],
            output=output if isinstance(output, str) else None,
        )
        if isinstance(nonce, str) and len(nonce) >= 32 and _is_recorded(nonce, path):
            state.nonce = nonce
            state._recorded = True
        else:
            # A state file anyone could have written (a repository's, or one copied from
            # another machine): a nonce of its own is known to its author, so its answers
            # file is never believed; its finished jobs' answers are fetched again.
            state.vouched = False
            state.fetched = []
        return state

    def record(self) -> None:
        """Record the state's nonce where only you can write (:func:`state_records_folder`),
        so a later run believes the answers kept beside it. Raises :class:`OutputError`."""
        if self._recorded:
            return
        folder = state_records_folder()
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{folder}: cannot record the batch state: {exc.strerror or exc}") from None
        _write_private(_record_path(self.nonce), {"state": os.path.abspath(self.path)})
        self._recorded = True

    def check_address(self, address: str) -> None:
        """Refuse to go on when the state names another address than ``address``, the one
        this run's flag, environment or user config chose (or the provider's own).

        The address a key is sent to never comes from the state: a state file committed
        to a repository would otherwise send the key in the environment to its author.
        """
        if self.base_url is not None and not _same_address(self.base_url, address):
            raise UsageError(
                f"{self.path}: the batch state names the address {self.base_url}, but this command calls "
                f"{hide_url_credentials(address)} (from --base-url, the environment or your user config, else the "
                "provider's own); an address is never taken from a state file: pass the address its jobs were "
                "sent to, or remove the file"
            )

    def check_output(self, output: str) -> None:
        """Bind the state to ``output``; refuse a state made for another output."""
        if self.output is not None and self.output != output:
            raise UsageError(
                f"{self.path}: the batch state is for the output {self.output}, not {output}: pass the options "
                "it was made with, another --batch-state, or cancel its jobs ('ctxmgr batch cancel') and remove it"
            )
        self.output = output

    def save(self) -> None:
        """Write the state atomically (mode 0o600), recorded first (see :meth:`record`)."""
        self.record()
        payload = {
            "kind": _STATE_KIND,
            "version": _VERSION,
            "provider": self.provider,
            "model": self.model,
            "api_style": self.api_style,
            "base_url": self.base_url,
            "output": self.output,
            "nonce": self.nonce,
            "jobs": [job.as_json() for job in self.jobs],
            "fetched": [job.as_json() for job in self.fetched],
        }
        _write_private(self.path, payload)

    def remove(self) -> None:
        """Remove the state file and its record (the output is written), when it is yours:
        one that was not made here and that this run did not write stays where it is."""
        if self._recorded:
            _remove(self.path)
            _remove(_record_path(self.nonce))


class BatchAnswers:
    """The batch answers fetched so far, by request key, kept beside the state file.

    Kept until the output is written, whatever the summary cache's size cap (the cache
    gets them too, for later runs); never holds conversation text, only the keys and
    the answers. An answers file is believed only beside the state it was written with
    (the same nonce), for the same output, and only for the requests of that state's
    jobs (see :meth:`load`): anything else beside an output may have been planted.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.answers: dict[str, Answer] = {}
        self.nonce: str | None = None
        self.output: str | None = None
        self.ours = False
        """Whether the file at :attr:`path` was written with this run's state (believed or saved)."""

    def load(self, state: BatchState) -> str | None:
        """Read the answers kept beside ``state``; why the file was ignored, if it was.

        A file that does not carry ``state``'s nonce and output is ignored whole and left
        where it is (it is no one's to remove); answers to requests no job of ``state``
        holds are dropped. Raises :class:`InputError` for a file that cannot be read.
        """
        self.nonce, self.output = state.nonce, state.output
        data = _read_private(self.path, "answers file")
        if data is None:
            self.ours = True
            return None
        entries = data.get("answers") if isinstance(data, dict) and data.get("kind") == _ANSWERS_KIND else None
        if not isinstance(entries, dict):
            raise InputError("not a ctxmgr batch answers file; remove it", source=str(self.path))
        nonce, output = data.get("nonce"), data.get("output")
        # Compared as bytes: compare_digest refuses a str that is not ASCII, which a planted file may hold.
        matches = isinstance(nonce, str) and secrets.compare_digest(nonce.encode(), state.nonce.encode())
        if not (matches and output == state.output):
            return (
                "batch answers that no batch state of this run records (no state file beside them, or another "
                "state's or output's); ignored: not used, and replaced only when this run keeps answers of its own "
                "there"
            )
        self.ours = True
        recorded = state.recorded_keys
        unrecorded = 0
        for key, value in entries.items():
            if not isinstance(value, dict):
                raise InputError(f"answer {key[:12]}... is not an object; remove the file", source=str(self.path))
            summary, error = value.get("summary"), value.get("error")
            if not (isinstance(summary, str) or isinstance(error, str)):
                raise InputError(f"answer {key[:12]}... has neither summary nor error", source=str(self.path))
            if key not in recorded:
                unrecorded += 1
                continue
            self.answers[key] = Answer(
                summary if isinstance(summary, str) else None, error if isinstance(error, str) else None
            )
        if unrecorded:
            return (
                f"{unrecorded} batch answer{'s' if unrecorded > 1 else ''} for requests no job of the batch state "
                "holds; ignored"
            )
        return None

    def get(self, key: str) -> Answer | None:
        return self.answers.get(key)

    def add(self, key: str, answer: Answer) -> None:
        self.answers[key] = answer

    def failures(self) -> dict[str, str]:
        """``{key: reason}`` of the requests the batches answered with an error."""
        return {key: a.error for key, a in self.answers.items() if a.error is not None}

    def drop_failures(self) -> None:
        """Forget the failed requests, so the next run sends them again."""
        self.answers = {key: a for key, a in self.answers.items() if a.error is None}

    def save(self) -> None:
        entries = {
            key: ({"summary": a.summary} if a.error is None else {"error": a.error}) for key, a in self.answers.items()
        }
        payload = {
            "kind": _ANSWERS_KIND,
            "version": _VERSION,
            "nonce": self.nonce,
            "output": self.output,
            "answers": entries,
        }
        _write_private(self.path, payload)
        self.ours = True

    def remove(self) -> None:
        """Remove the file, when it is this run's (one it ignored stays where it is)."""
        if self.ours:
            _remove(self.path)


def output_identity(files: Sequence[str], output: Path | str | None, in_place: bool) -> str:
    """What a batch's answers are for, in the state and answers files: ``-o`` as an
    absolute path, else the inputs' (rewritten in place, or printed)."""
    if output is not None and str(output) != "-":
        return os.path.abspath(output)  # "out/" and "out" are one folder
    how = "in place" if in_place else "standard output"
    return f"{how}: " + orjson.dumps(sorted(os.path.abspath(f) for f in files)).decode()


def batch_address(summarizer: object) -> str:
    """The address a batch of ``summarizer``'s provider goes to (flag, environment or
    config, else the provider's own), without any password in it."""
    check_batchable(summarizer)
    return hide_url_credentials(str(_provider_summarizer(summarizer).endpoint()))


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


# -- the collecting summarizer ---------------------------------------------------------------------


class BatchCollector:
    """Answers from the batches' answers or the cache; records every other request.

    Stands outermost in a run's summarizer chain (``inner`` is the chain, consulted for
    its name, settings, input limit and cache, never called). While :attr:`collecting`,
    a request with no answer is recorded in :attr:`pending` and answered with a
    placeholder, so every independent request of the run is found in one pass; a
    request built from a placeholder raises :class:`PendingSummaryError` (it waits for
    the next round). Not collecting, such a request is a :class:`ProviderError`.
    """

    def __init__(self, inner: Summarizer, answers: BatchAnswers, identity: str, cache: Any | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.answers = answers
        self.identity = identity
        self.cache = cache
        self.collecting = True
        self.pending: dict[str, PendingRequest] = {}
        self.waiting = 0
        """Summaries that need another round: a request of theirs is built from a pending answer."""
        self._marker = f"ctxmgr-batch-pending-{secrets.token_hex(8)}"
        self._provider = inner.name.partition(":")[0]

    def key(self, text: str, *, instructions: str, max_tokens: int) -> str:
        from ctxmgr.cache import entry_key

        return entry_key(self.identity, text, instructions=instructions, max_tokens=max_tokens)

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        key = self.key(text, instructions=instructions, max_tokens=max_tokens)
        answer = self.answers.get(key)
        if answer is not None:
            if answer.error is not None:
                raise ProviderError(f"the batch answered with an error: {answer.error}", provider=self._provider)
            # Held to the length asked for, as an interactive answer is.
            return check_summary_length(answer.summary or "", max_tokens, self._provider)
        if self.cache is not None:
            cached = self.cache.lookup(key)
            if cached is not None:
                self.cache.stats.hits += 1
                return str(cached)
        if self._marker in text or self._marker in instructions:
            self.waiting += 1
            raise PendingSummaryError(
                "this request needs the answer of another, still in a batch", provider=self._provider
            )
        if not self.collecting:
            raise ProviderError(
                "no batch answer for this request (the inputs changed since the batch was sent?); "
                "run the command again to send it",
                provider=self._provider,
            )
        self.pending.setdefault(key, PendingRequest(key, text, instructions, max_tokens))
        return SummaryText(f"[{self._marker}]")

    async def aopen(self) -> None:
        await aopen_summarizer(self.inner)

    async def aclose(self) -> None:
        await aclose_summarizer(self.inner)


# -- splitting into jobs ---------------------------------------------------------------------------


def chunk_requests(
    requests: Sequence[PendingRequest], *, max_requests: int, max_bytes: int, size: Any
) -> list[list[PendingRequest]]:
    """``requests`` (sorted by key) in consecutive jobs of at most ``max_requests``
    requests and ``max_bytes`` bytes (``size(request)`` is a request's bytes in the
    upload). Sorted and greedy, so the same requests always make the same jobs (their
    tags find them again). A single request past ``max_bytes`` is a :class:`UsageError`."""
    jobs: list[list[PendingRequest]] = []
    current: list[PendingRequest] = []
    used = 0
    for request in sorted(requests, key=lambda r: r.key):
        nbytes = int(size(request))
        if nbytes > max_bytes:
            raise UsageError(
                f"one summary request takes {nbytes:,} bytes, more than a batch may hold ({max_bytes:,}); "
                "lower --max-input-tokens or run without --batch"
            )
        if current and (len(current) >= max_requests or used + nbytes > max_bytes):
            jobs.append(current)
            current, used = [], 0
        current.append(request)
        used += nbytes
    if current:
        jobs.append(current)
    return jobs


def job_tag(identity: str, keys: Sequence[str]) -> str:
    """The tag of a job holding the requests ``keys`` for the summarizer ``identity``."""
    material = orjson.dumps([_VERSION, identity, sorted(keys)])
    return hashlib.sha256(material).hexdigest()[:32]


# -- the providers' batch APIs ---------------------------------------------------------------------


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

    @contextlib.contextmanager
    def _calls(self) -> Iterator[None]:
        try:
            yield
        except ProviderError:
            raise
        except Exception as exc:
            raise _sdk_error(self.provider, exc, self.key) from None

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
        with self._calls():
            uploaded = self.client.files.create(file=(f"ctxmgr-{tag}.jsonl", data), purpose="batch")
            job = self.client.batches.create(
                input_file_id=uploaded.id,
                endpoint=self.endpoint,
                completion_window="24h",
                metadata={"ctxmgr": "summaries", _TAG_KEY: tag},
            )
        return scrub(str(job.id), self.key), scrub(str(uploaded.id), self.key)

    def find(self, tag: str) -> str | None:
        """The id of a job with ``tag`` that can still answer, if the provider lists one."""
        with self._calls():
            for seen, job in enumerate(self.client.batches.list(limit=100)):
                if seen >= _FIND_LIMIT:
                    break
                metadata = job.metadata or {}
                if metadata.get(_TAG_KEY) == tag and job.status not in ("failed", "expired", "cancelled", "cancelling"):
                    return scrub(str(job.id), self.key)
        return None

    def status(self, job_id: str) -> JobStatus:
        with self._calls():
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

    def results(self, job_id: str) -> dict[str, Answer]:
        """The answers of a finished job (a part of them for an expired or cancelled one)."""
        with self._calls():
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
        with self._calls():
            self.client.batches.cancel(job_id)

    def close(self) -> None:
        self.client.close()


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

    @contextlib.contextmanager
    def _calls(self) -> Iterator[None]:
        try:
            yield
        except ProviderError:
            raise
        except Exception as exc:
            raise _sdk_error(self.provider, exc, self.key) from None

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

            with self._calls():
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
        with self._calls():
            job = self.client.batches.create(model=self.model, src=inlined, config=config)
        return scrub(str(job.name), self.key), None

    def find(self, tag: str) -> str | None:
        with self._calls():
            for seen, job in enumerate(self.client.batches.list(config={"page_size": 100})):
                if seen >= _FIND_LIMIT:
                    break
                state = str(getattr(job.state, "value", job.state))
                if job.display_name == _GEMINI_PREFIX + tag and _GEMINI_DONE.get(state, True):
                    return scrub(str(job.name), self.key)
        return None

    def status(self, job_id: str) -> JobStatus:
        with self._calls():
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
        with self._calls():
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
        with self._calls():
            self.client.batches.cancel(name=job_id)

    def close(self) -> None:
        self.client.close()


def _provider_summarizer(summarizer: object) -> Any:
    """The provider's own summarizer in a chain of wrappers (each with ``inner``)."""
    from ctxmgr.providers._gemini import GeminiSummarizer
    from ctxmgr.providers._openai import OpenAISummarizer

    for _ in range(16):
        if isinstance(summarizer, OpenAISummarizer | GeminiSummarizer):
            return summarizer
        summarizer = getattr(summarizer, "inner", None)
        if summarizer is None:
            break
    return None


def check_batchable(summarizer: object) -> None:
    """Refuse, before anything is read, a summarizer no batch API can serve."""
    from ctxmgr.providers._base import env

    target = _provider_summarizer(summarizer)
    if target is None:
        raise UsageError("--batch needs an OpenAI or Gemini model (the offline digest answers at once)")
    if target.name.startswith("google:") and (env("GOOGLE_GENAI_USE_VERTEXAI") or "").lower() in ("1", "true"):
        raise UsageError(
            "--batch does not support Vertex AI: its batch prediction reads requests from Cloud Storage or "
            "BigQuery, which ctxmgr does not use; unset GOOGLE_GENAI_USE_VERTEXAI to use the Gemini API's "
            "batch mode, or run without --batch"
        )


def batch_client(summarizer: object) -> OpenAIBatches | GeminiBatches:
    """The batch API client for the provider behind ``summarizer``: its key, timeout,
    retries and address (:func:`batch_address`: the flag, the environment or the user
    config, else the provider's own; never a state file's)."""
    from ctxmgr.providers._gemini import GeminiSummarizer

    check_batchable(summarizer)
    target = _provider_summarizer(summarizer)
    options = target.options
    if isinstance(target, GeminiSummarizer):
        arguments = target.client_arguments()
        return GeminiBatches(target.model, arguments, options.base_url, options.timeout, options.max_retries)
    key, found_url = target.credentials()
    return OpenAIBatches(target.model, target.api_style, key, found_url, options.timeout, options.max_retries)


def now() -> float:
    """The time a job is recorded as created."""
    return time.time()
