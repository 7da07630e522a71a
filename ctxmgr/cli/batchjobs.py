"""``summarize --batch`` and ``ctxmgr batch status|cancel``: summaries through the providers' Batch APIs.

Each run of ``summarize --batch`` advances the work one step (see
:mod:`ctxmgr.providers._batch_jobs`): it fetches the answers of finished jobs, runs the
command without writing to find the requests still unanswered, sends those in new jobs
and exits 75 (``EX_TEMPFAIL``); once nothing is unanswered, it writes the output with
the same code, and so the same bytes, as an interactive run. ``--wait`` stays and polls
until the output is written.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ctxmgr import _provider_registry as provider_registry
from ctxmgr.cli.console import lazy_console, print_json, printable
from ctxmgr.cli.errors import EXIT_INPUT, EXIT_OK, EXIT_PENDING, EXIT_PROVIDER, handle_errors
from ctxmgr.cli.params import command
from ctxmgr.errors import ProviderError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from ctxmgr.cli.run import Options, Plans
    from ctxmgr.files import Settings
    from ctxmgr.providers._base import Summarizer
    from ctxmgr.providers._batch_jobs import BatchState, GeminiBatches, OpenAIBatches
    from ctxmgr.state import BaseContextManager

__all__ = ["BatchRun", "batch_app", "default_state_path"]

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
    import hashlib  # here: every command loads this module to register `ctxmgr batch`

    return Path(f".ctxmgr-batch-{hashlib.sha256(material.encode()).hexdigest()[:12]}")


class BatchRun:
    """One ``summarize --batch`` command: its collector, state and provider client.

    Built before the managers, so that they are handed :attr:`collector` as their
    summarizer; :meth:`run` then stands in for :func:`ctxmgr.cli.run.run_files`.
    """

    def __init__(self, shared: Summarizer, state_path: Path, *, wait: bool, poll_interval: float) -> None:
        from ctxmgr.cache import cache_identity, find_cache
        from ctxmgr.providers import settings_of
        from ctxmgr.providers._batch_jobs import (
            BatchAnswers,
            BatchCollector,
            BatchState,
            batch_address,
            check_batchable,
        )

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
        provider, _, model = shared.name.partition(":")
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
        self._client: OpenAIBatches | GeminiBatches | None = None
        self._payload: dict[str, Any] = {}
        self._messages: list[dict[str, str]] = []
        self._failed_jobs: list[dict[str, Any]] = []
        self.quiet = False

    @property
    def client(self) -> OpenAIBatches | GeminiBatches:
        if self._client is None:
            from ctxmgr.providers._batch_jobs import batch_client

            self._client = batch_client(self.shared)
        return self._client

    def run(
        self,
        files: Sequence[str],
        manager: BaseContextManager[Any],
        settings: Settings,
        options: Options,
        console: Console,
        *,
        plans: Plans | None,
    ) -> int:
        """Advance the batch: fetch, find what is unanswered, send it; or write the output."""
        from ctxmgr.cli.run import Options, check_destinations, run_files

        if options.check:
            raise UsageError("--batch sends requests; --check sends none: use one or the other")
        if options.engine is not None:
            # The requests are collected in this process; engine workers would send them one by one.
            raise UsageError("--batch collects the requests here; drop --engine")
        if not files or "-" in files:
            # Each run reads its inputs twice (to find the requests, then to write).
            raise UsageError("--batch needs files, not standard input: each run reads its inputs more than once")
        self.console = console
        self.quiet = options.quiet
        # Every check a write to the outputs makes, before a batch file is written beside
        # them or a paid request is sent: a planted link or FIFO stops the run here.
        check_destinations(files, manager, settings, options)
        self._bind_answers(files, options)
        try:
            while True:
                failed = self._fetch_finished()
                if failed:
                    if options.json_report:
                        payload = {"state_file": str(self.state.path), "failed_jobs": self._failed_jobs}
                        print_json({"batch": payload, "messages": self._messages, "exit_code": EXIT_PROVIDER})
                    return EXIT_PROVIDER
                self.collector.pending.clear()
                self.collector.waiting = 0
                self.collector.collecting = True
                muted = _muted_console()
                probe = Options(
                    output=options.output,
                    in_place=options.in_place,
                    check=True,
                    quiet=True,
                    follow_symlinks=options.follow_symlinks,
                    exclude=options.exclude,
                    include=options.include,
                )
                code = run_files(files, manager, settings, probe, muted, plans=plans)
                if code == EXIT_INPUT:
                    # Bad input is reported as an interactive run reports it; nothing is sent.
                    sys.stderr.write(muted.file.getvalue())  # type: ignore[attr-defined]
                    return EXIT_INPUT
                if not self.collector.pending:
                    return self._write(files, manager, settings, options, console, plans)
                self._send()
                self.state.save()
                self._report(options)
                if not self.wait:
                    return EXIT_PENDING
                self._wait_for_a_job()
        finally:
            if self._client is not None:
                self._client.close()

    # -- steps -------------------------------------------------------------------------------

    def _bind_answers(self, files: Sequence[str], options: Options) -> None:
        """Bind the state to this run's output and read the answers kept beside it, which
        are believed only when written with this state (see :class:`BatchAnswers`)."""
        from ctxmgr.providers._batch_jobs import output_identity

        self.state.check_output(output_identity(files, options.output, options.in_place))
        if self.foreign_state:
            from ctxmgr.providers._batch_jobs import state_records_folder

            self._warn(
                f"{self.state.path}: a batch state not made by you here (no record of it in "
                f"{state_records_folder()}): only its running jobs are used; the answers kept beside it are not "
                "believed, and the jobs of the requests they answer are found again by their tags"
            )
        ignored = self.answers.load(self.state)
        if ignored is not None:
            self._warn(f"{self.answers.path}: {ignored}")

    def _fetch_finished(self) -> bool:
        """Poll the recorded jobs; keep the answers of the finished ones. True when a job
        failed, expired or was cancelled (reported; the command then exits 3)."""
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
            returned = self._results(job)
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
            name = printable(job.id)
            if foreign:
                self._warn(
                    f"batch job {name}: {_count(foreign, 'answer')} for "
                    f"{'a request it was not sent with' if foreign == 1 else 'requests it was not sent with'}, "
                    "ignored (not used, kept or cached)"
                )
            if not status.succeeded:
                failed = True
                self._failed_jobs.append(
                    {"id": job.id, "state": status.state, "reason": status.reason, "unanswered": unanswered}
                )
                self._error(
                    f"batch job {name} ended {status.state}: {printable(status.reason or 'no reason given')}; "
                    f"{unanswered} of {len(job.keys)} requests unanswered, nothing written "
                    "(run the command again to send them in a new batch)"
                )
            elif unanswered:
                self._warn(
                    f"batch job {name}: {unanswered} of {len(job.keys)} requests came back with no answer; "
                    "they are sent again"
                )
            if errors:
                first = printable(next(iter(errors.values())) or "")
                self._warn(
                    f"batch job {name}: {len(errors)} of {len(job.keys)} requests failed ({first}); "
                    "their conversations are left as they were when the output is written"
                )
        if changed:
            self.answers.save()
            self.state.jobs = kept
            self.state.save()
        return failed

    def _results(self, job: Any) -> dict[str, Any]:
        from ctxmgr.providers._batch_jobs import GeminiBatches

        client = self.client
        if isinstance(client, GeminiBatches):
            return client.results(job.id, job.keys)
        return client.results(job.id)

    def _send(self) -> None:
        """Send the pending requests no recorded job holds, in as many jobs as the limits ask."""
        from ctxmgr.providers._batch_jobs import JobRecord, chunk_requests, job_tag, now, request_tokens

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
                self._note(f"found batch job {printable(found)} sent earlier for these requests")
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

    def _report(self, options: Options) -> None:
        pending = self.collector.pending
        jobs = [job for job in self.state.jobs if any(k in pending for k in job.keys)]
        tokens = sum(job.input_tokens for job in jobs)
        lines = [
            f"batch: {_count(len(pending), 'summary request')} (est. {tokens:,} input tokens) in "
            f"{_count(len(jobs), 'job')} at {printable(self.state.provider)}:",
            *(f"  {printable(job.id)}  {_count(len(job.keys), 'request')}" for job in jobs),
        ]
        if self.collector.waiting:
            lines.append(
                f"batch: {_count(self.collector.waiting, 'conversation')} "
                f"{'needs' if self.collector.waiting == 1 else 'need'} another round after these answers "
                "(combining the summaries of parts, asking again for missing facts): the run that fetches them sends it"
            )
        lines.append(
            f"batch: state in {printable(str(self.state.path))}; run the same command again to fetch the answers "
            "and write the output (exit code 75 until then)"
        )
        if not options.quiet:
            for line in lines:
                sys.stderr.write(line + "\n")
            sys.stderr.flush()
        self._payload = {
            "state_file": str(self.state.path),
            "provider": self.state.provider,
            "pending_requests": len(pending),
            "conversations_waiting": self.collector.waiting,
            "input_tokens": tokens,
            "jobs": [{"id": job.id, "requests": len(job.keys), "input_tokens": job.input_tokens} for job in jobs],
            "failed_requests": len(self.answers.failures()),
        }
        if options.json_report and not self.wait:
            print_json({"batch": self._payload, "messages": self._messages, "exit_code": EXIT_PENDING})

    def _wait_for_a_job(self) -> None:
        """Poll until one of the recorded jobs ends (``--wait``), showing their progress."""
        last = ""
        while True:
            time.sleep(self.poll_interval)
            states = [(job, self.client.status(job.id)) for job in self.state.jobs]
            shown = "; ".join(f"{job.id} {status.describe()}" for job, status in states)
            if shown != last:
                sys.stderr.write(f"batch: {printable(shown)}\n")
                sys.stderr.flush()
                last = shown
            if not states or any(status.done for _, status in states):
                return

    def _write(
        self,
        files: Sequence[str],
        manager: BaseContextManager[Any],
        settings: Settings,
        options: Options,
        console: Console,
        plans: Plans | None,
    ) -> int:
        """Every request answered: the run an interactive one would make, then tidy up."""
        from ctxmgr.cli.run import run_files

        self.collector.collecting = False
        if self.cache is not None:
            # The pass that found nothing pending counted its hits: the report counts this
            # run's (what was stored, ignored or evicted stays counted, to be reported).
            self.cache.stats.hits = self.cache.stats.misses = 0
        code = run_files(files, manager, settings, options, console, plans=plans)
        failures = self.answers.failures()
        if failures and code != EXIT_OK:
            # Kept for a retry: the next --batch run sends the failed requests again.
            self.answers.drop_failures()
            self.answers.save()
            self.state.jobs = []
            self.state.save()
            if not options.quiet:
                sys.stderr.write(
                    f"batch: {len(failures)} requests failed in the batch; run the command again with --batch to "
                    f"send them in a new batch (state kept in {printable(str(self.state.path))}), or without "
                    "--batch to ask them now\n"
                )
        else:
            self.state.remove()
            self.answers.remove()
        return code

    # Each message goes to standard error (warnings and notes not under --quiet) and to
    # the --json report: the batch's (exit 75 or 3), or the written run's "notes".

    def _error(self, text: str) -> None:
        self._record("error", text)
        self.console.print(f"[bold red]error:[/] {_escape(text)}", soft_wrap=True, highlight=False)

    def _warn(self, text: str) -> None:
        self._record("warning", text)
        if not self.quiet:
            self.console.print(f"[yellow]warning:[/] {_escape(text)}", soft_wrap=True, highlight=False)

    def _record(self, level: str, text: str) -> None:
        from ctxmgr.cli.console import record_note

        self._messages.append({"level": level, "message": text})
        record_note(level, text)

    def _note(self, text: str) -> None:
        self._record("note", text)
        if not self.quiet:
            self.console.print(f"note: {_escape(text)}", soft_wrap=True, highlight=False)


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _muted_console() -> Console:
    from rich.console import Console

    return Console(file=io.StringIO(), width=120, no_color=True, highlight=False, emoji=False)


# -- ctxmgr batch status|cancel ------------------------------------------------------------------

batch_app = typer.Typer(
    name="batch",
    help="Show or cancel the provider batch jobs of a 'summarize --batch' run.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    rich_markup_mode=None,
)

_err = lazy_console(stderr=True, highlight=False, emoji=False)

StateArg = Annotated[
    Path, typer.Argument(help="The batch state file (printed by 'summarize --batch').", metavar="STATE")
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        help=f"API address (default: the provider's variable, {provider_registry.help_url_variables()}, then "
        "summarize's base-url in your config, then the provider's own); it must be the one the state names.",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON report on standard output.")]


def _configured_address(ctx: typer.Context, provider: str) -> str | None:
    """``summarize``'s base URL from a config file you trust (your user config, or a
    project you trust), unless the provider's variable overrides it, as it does there."""
    from ctxmgr.cli.config import PROVIDER_ENV_OVERRIDES, Config

    config = ctx.find_root().meta.get("ctxmgr.config")
    if not isinstance(config, Config):
        return None
    if not config.trusted.get("summarize", {}).get("base_url"):
        return None
    if any(os.environ.get(v, "").strip() for v in PROVIDER_ENV_OVERRIDES["base_url"].get(provider, ())):
        return None
    value = config.defaults.get("summarize", {}).get("base_url")
    return value if isinstance(value, str) and value else None


def _open(
    ctx: typer.Context, state_file: Path, base_url: str | None
) -> tuple[BatchState, OpenAIBatches | GeminiBatches]:
    """The state in ``state_file`` and a client for its provider, at the address your
    flag, environment or config names (the provider's own when none does), which must be
    the one the state names: the key goes nowhere a state file says."""
    from ctxmgr.providers import get_summarizer
    from ctxmgr.providers._base import ProviderOptions
    from ctxmgr.providers._batch_jobs import BatchState, batch_address, batch_client

    state = BatchState.load(state_file)
    if state is None:
        raise UsageError(f"{state_file}: no such batch state file")
    summarizer = get_summarizer(
        state.model,
        provider=state.provider,
        api_style="chat" if state.api_style == "chat" else "responses",
        options=ProviderOptions(base_url=base_url or _configured_address(ctx, state.provider)),
    )
    state.check_address(batch_address(summarizer))
    if not state.vouched:
        from ctxmgr.cli.console import note
        from ctxmgr.providers._batch_jobs import state_records_folder

        # Its jobs are still looked up at your address, with your key: say whose list it is.
        note(
            "warning",
            f"{state_file}: a batch state not made by you here (no record of it in {state_records_folder()}): "
            "the jobs are the ones it names",
        )
    return state, batch_client(summarizer)


@command(batch_app, "status")
def batch_status(
    ctx: typer.Context, state_file: StateArg, base_url: BaseUrlOpt = None, json_report: JsonOpt = False
) -> None:
    """Show each job of a batch state file: its state, its counts, why it failed.

    Exits 0 while every job runs or succeeded, 3 when one failed, expired or was cancelled.
    """
    code = EXIT_OK
    with handle_errors(_err):
        state, client = _open(ctx, state_file, base_url)
        rows = []
        try:
            for job in state.jobs:
                status = client.status(job.id)
                if status.done and not status.succeeded:
                    code = EXIT_PROVIDER
                rows.append((job, status))
        finally:
            client.close()
        if json_report:
            print_json(
                {
                    "state_file": str(state_file),
                    "jobs": [
                        {
                            "id": job.id,
                            "state": status.state,
                            "done": status.done,
                            "succeeded": status.succeeded,
                            "requests": len(job.keys),
                            "completed": status.completed,
                            "failed": status.failed,
                            "reason": status.reason,
                        }
                        for job, status in rows
                    ],
                    "exit_code": code,
                }
            )
        else:
            out = lazy_console(highlight=False, emoji=False)
            if not rows:
                out.print("no jobs left in this state file", soft_wrap=True, markup=False)
            for job, status in rows:
                reason = f"  ({status.reason})" if status.reason else ""
                out.print(
                    f"{printable(job.id)}  {printable(status.describe())}{printable(reason)}",
                    soft_wrap=True,
                    markup=False,
                )
    raise typer.Exit(code)


@command(batch_app, "cancel")
def batch_cancel(ctx: typer.Context, state_file: StateArg, base_url: BaseUrlOpt = None) -> None:
    """Cancel every job of a batch state file (the next 'summarize --batch' reports them cancelled)."""
    with handle_errors(_err):
        state, client = _open(ctx, state_file, base_url)
        try:
            for job in state.jobs:
                client.cancel(job.id)
                _err.print(f"cancelled {printable(job.id)}", soft_wrap=True, markup=False)
        except ProviderError:
            raise
        finally:
            client.close()
    raise typer.Exit(EXIT_OK)
