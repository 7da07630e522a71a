"""The files a batch keeps beside its output: the jobs sent (:class:`BatchState`) and the
answers fetched (:class:`BatchAnswers`), both input to be distrusted (see the package)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ctxmgr import _provider_registry as provider_registry
from ctxmgr._units import UNITS_PER_TOKEN, text_units
from ctxmgr.errors import InputError, OutputError, ProviderError, UsageError
from ctxmgr.providers._base import hide_url_credentials

__all__ = [
    "Answer",
    "BatchAnswers",
    "BatchState",
    "JobRecord",
    "PendingRequest",
    "PendingSummaryError",
    "output_identity",
    "request_tokens",
    "state_records_folder",
]

_STATE_KIND = "ctxmgr-batch-state"
_ANSWERS_KIND = "ctxmgr-batch-answers"
_VERSION = 1
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
    if record.provider not in {e.name for e in provider_registry.batch_entries()}:
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
