"""``summarize --batch`` and ``ctxmgr batch status|cancel``: summaries through the providers' Batch APIs.

Each run of ``summarize --batch`` advances the work one step (the library's
:class:`ctxmgr.providers._batch.run.BatchRun`): it fetches the answers of finished jobs,
runs the command without writing to find the requests still unanswered, sends those in
new jobs and exits 75 (``EX_TEMPFAIL``); once nothing is unanswered, it writes the output
with the same code, and so the same bytes, as an interactive run. ``--wait`` stays and
polls until the output is written. This module renders what the run tells.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ctxmgr import _provider_registry as provider_registry
from ctxmgr._exits import EXIT_INPUT, EXIT_OK, EXIT_PENDING, EXIT_PROVIDER
from ctxmgr.cli.console import lazy_console, print_json, printable
from ctxmgr.cli.errors import handle_errors
from ctxmgr.cli.params import command
from ctxmgr.errors import ProviderError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from ctxmgr.cli.run import Options
    from ctxmgr.files import Plans, Settings
    from ctxmgr.providers._batch.client import BatchClient
    from ctxmgr.providers._batch.run import BatchEvent, BatchRun
    from ctxmgr.providers._batch.state import BatchState
    from ctxmgr.state import BaseContextManager

__all__ = ["batch_app", "run_batch"]


def run_batch(
    batch: BatchRun,
    files: Sequence[str],
    manager: BaseContextManager[Any],
    settings: Settings,
    options: Options,
    console: Console,
    *,
    plans: Plans | None,
) -> int:
    """Advance ``batch`` (in place of :func:`ctxmgr.cli.run.run_files`), render what it
    tells, and return the exit code."""
    from ctxmgr.cli.run import Options, check_destinations, run_files

    batch.check_request(files, check=options.check, engine=options.engine)
    # Every check a write to the outputs makes, before a batch file is written beside
    # them or a paid request is sent: a planted link or FIFO stops the run here.
    check_destinations(files, manager, settings, options)

    def probe() -> bool:
        muted = _muted_console()
        quiet = Options(
            output=options.output,
            in_place=options.in_place,
            check=True,
            quiet=True,
            follow_symlinks=options.follow_symlinks,
            exclude=options.exclude,
            include=options.include,
        )
        if run_files(files, manager, settings, quiet, muted, plans=plans) == EXIT_INPUT:
            # Bad input is reported as an interactive run reports it; nothing is sent.
            sys.stderr.write(muted.file.getvalue())  # type: ignore[attr-defined]
            return False
        return True

    def write() -> int:
        return run_files(files, manager, settings, options, console, plans=plans)

    def render(event: BatchEvent) -> None:
        _render(event, console, quiet=options.quiet)

    outcome = batch.advance(
        files, output=options.output, in_place=options.in_place, probe=probe, write=write, on_event=render
    )
    if outcome.kind == "bad_input":
        return EXIT_INPUT
    if outcome.kind == "written":
        return outcome.code
    code = EXIT_PROVIDER if outcome.kind == "failed" else EXIT_PENDING
    if options.json_report:
        print_json({"batch": outcome.report, "messages": batch.messages, "exit_code": code})
    return code


def _render(event: BatchEvent, console: Console, *, quiet: bool) -> None:
    """One thing a batch run says: errors, warnings and notes on standard error (the
    last two not under ``--quiet``) and in the ``--json`` report; the report of what was
    sent (not under ``--quiet``) and the jobs' progress on standard error."""
    from ctxmgr.cli.console import record_note

    if event.level in ("error", "warning", "note"):
        record_note(event.level, event.text)
        if event.level == "error":
            console.print(f"[bold red]error:[/] {_escape(event.text)}", soft_wrap=True, highlight=False)
        elif not quiet:
            label = "[yellow]warning:[/]" if event.level == "warning" else "note:"
            console.print(f"{label} {_escape(event.text)}", soft_wrap=True, highlight=False)
    elif event.level == "progress" or not quiet:
        sys.stderr.write(event.text + "\n")
        sys.stderr.flush()


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
    from ctxmgr.config import PROVIDER_ENV_OVERRIDES, Config

    config = ctx.find_root().meta.get("ctxmgr.config")
    if not isinstance(config, Config):
        return None
    if not config.trusted.get("summarize", {}).get("base_url"):
        return None
    if any(os.environ.get(v, "").strip() for v in PROVIDER_ENV_OVERRIDES["base_url"].get(provider, ())):
        return None
    value = config.defaults.get("summarize", {}).get("base_url")
    return value if isinstance(value, str) and value else None


def _open(ctx: typer.Context, state_file: Path, base_url: str | None) -> tuple[BatchState, BatchClient]:
    """The state in ``state_file`` and a client for its provider, at the address your
    flag, environment or config names (the provider's own when none does), which must be
    the one the state names: the key goes nowhere a state file says."""
    from ctxmgr.providers import get_summarizer
    from ctxmgr.providers._base import ProviderOptions
    from ctxmgr.providers._batch.client import batch_address, batch_client
    from ctxmgr.providers._batch.state import BatchState

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
        from ctxmgr.providers._batch.state import state_records_folder

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
