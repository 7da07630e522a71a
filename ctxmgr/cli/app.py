"""The ``ctxmgr`` command line. The only layer that knows Typer and Rich.

Each compacting command's options are declared once, in the flag table
(:data:`ctxmgr.config.COMMANDS`): ``@command(app)`` gives the function those parameters,
and the function receives them in ``**flags``, builds the library's objects from them by
the table's entries (:mod:`ctxmgr.cli.flags`) and makes one library call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from ctxmgr import __version__
from ctxmgr._format_registry import names_text
from ctxmgr.cli.batchjobs import batch_app
from ctxmgr.cli.cache import cache_app
from ctxmgr.cli.console import lazy_console
from ctxmgr.cli.errors import handle_errors
from ctxmgr.cli.flags import Values, check_jobs, format_settings, output_options, walk_rules
from ctxmgr.cli.params import command
from ctxmgr.config import arguments
from ctxmgr.config._flags import JSON
from ctxmgr.errors import UsageError

if TYPE_CHECKING:
    from ctxmgr.cli.options import Options
    from ctxmgr.files import Settings
    from ctxmgr.state import BaseContextManager

# The library (pydantic, the formats, the batch runner) is imported inside the commands
# that use it, so `ctxmgr --help` and `ctxmgr config` start without it.

app = typer.Typer(
    name="ctxmgr",
    help="Compact saved LLM conversations offline: trim them or summarize their history.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # locals can hold API keys
    rich_markup_mode=None,
    context_settings={
        "help_option_names": ["-h", "--help"],
        # The group's own flags are Typer's to convert, and Typer converts None (the
        # default of the help and completion flags) through pydantic; a flag's False is
        # taken as it is (see ctxmgr.cli.params). The callback then sets the config's map.
        "default_map": {"help": False, "install_completion": False, "show_completion": False},
    },
)

err_console = lazy_console(stderr=True, highlight=False, emoji=False)

FilesArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Conversation files, folders (searched for .json/.jsonl/.traj) or glob patterns; "
        "'-' or nothing reads standard input.",
        show_default=False,
        metavar="FILES",
    ),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ctxmgr {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
    trust_project_config: Annotated[
        bool,
        typer.Option(
            "--trust-project-config",
            help="Let this project's config file also set where data, keys and writes go and what code runs "
            "(model, provider, base-url, api-key-file, cache, output, in-place, manager, option...).",
        ),
    ] = False,
) -> None:
    """Compact saved LLM conversations offline: trim them or summarize their history."""
    from ctxmgr.cli.console import note, reset_notes
    from ctxmgr.config import load_config

    reset_notes()
    ctx.meta["ctxmgr.trust_flag"] = trust_project_config
    with handle_errors(err_console):
        config = load_config(trust_flag=trust_project_config)
        # `ctxmgr config` shows the problems; every other command stops on them before
        # it reads, sends or writes anything.
        if config.problems and ctx.invoked_subcommand != "config":
            from ctxmgr.cli.errors import report

            for problem in config.problems[:-1]:
                report(err_console, problem)
            raise UsageError(config.problems[-1])
    if ctx.invoked_subcommand != "config":
        for line in config.notes(ctx.invoked_subcommand):
            note("note", line)

    # Configured values become the commands' defaults, so flags given on the command
    # line still win (click's default_map).
    ctx.default_map = config.defaults
    ctx.meta["ctxmgr.config"] = config


def _run_fixed(
    ctx: typer.Context,
    files: list[str] | None,
    manager: BaseContextManager[Any],
    options: Options,
    concurrency: int = 1,
) -> int:
    """Run one manager built once (``run``, ``convert``) over ``files``; each file's
    nearest config decides its format settings, and for ``run`` the compaction managers
    applied after it (``--max-tokens`` and its kind)."""
    from ctxmgr.cli.nearest import NearestConfig
    from ctxmgr.cli.run import run_files
    from ctxmgr.config._flags import changed_arguments

    name = ctx.info_name or ""

    def build(params: dict[str, Any]) -> tuple[BaseContextManager[Any], Settings]:
        compaction = changed_arguments(name, "compaction", params)
        if not compaction:
            return manager, format_settings(name, params, concurrency)
        from ctxmgr.state import ChainContextManager
        from ctxmgr.state._compose import compaction_chain

        chained = ChainContextManager(manager, *compaction_chain(**compaction).managers)
        return chained, format_settings(name, params, concurrency)

    first, settings = build(ctx.params)
    return run_files(files or [], first, settings, options, err_console, plans=NearestConfig(ctx, build).plans)


@contextmanager
def _logging(verbose: bool) -> Iterator[None]:
    """Route ctxmgr's own log records for the length of one command, then restore.

    ``--verbose`` shows retries and provider calls on standard error. Otherwise the
    library's warnings are muted: the CLI reports each failure itself, once. Only the
    ``ctxmgr`` logger is touched, and only while the command runs.
    """
    import logging  # here: the commands that never log (trim, validate...) start without it

    logger = logging.getLogger("ctxmgr")
    saved = (logger.level, logger.propagate, list(logger.handlers))
    if verbose:
        from rich.logging import RichHandler

        from ctxmgr.cli.console import printable

        def shown(record: logging.LogRecord) -> bool:
            # Log records quote servers' messages and URLs: shown like every other line.
            record.msg, record.args = printable(record.getMessage()), None
            return True

        handler = RichHandler(console=err_console, show_time=False, show_path=False, markup=False)
        handler.addFilter(shown)
        logger.handlers = [handler]
        logger.setLevel(logging.INFO)
        logger.propagate = False
    else:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
        logger.handlers = saved[2]


# -- commands ----------------------------------------------------------------------


@command(app)  # plain values are converted without pydantic (ctxmgr.cli.params)
def trim(ctx: typer.Context, files: FilesArg = None, **flags: Any) -> None:
    """Keep the system messages and the last N user turns (or, with --max-tokens, the newest
    messages within N tokens); optionally clear or cut old tool output."""
    from ctxmgr.cli.nearest import NearestConfig, given
    from ctxmgr.cli.run import run_files
    from ctxmgr.config._flags import changed_arguments
    from ctxmgr.state import MessageContextManager

    typed = given(ctx)

    def build(params: dict[str, Any]) -> tuple[BaseContextManager[Any], Settings]:
        settings = format_settings("trim", params)
        own = arguments("trim", "manager", params)
        compaction = changed_arguments("trim", "compaction", params)
        if not compaction:
            return MessageContextManager(**own), settings
        from ctxmgr.state._compose import trim_manager  # the model: only when compacting so

        if "max_messages" not in typed and "max_messages" not in changed_arguments("trim", "manager", params):
            own["max_messages"] = None  # --max-tokens replaces the default user-turn limit
        return trim_manager(**own, **compaction), settings

    with handle_errors(err_console):
        manager, settings = build(ctx.params)
        options = output_options("trim", ctx.params)
        check_jobs(settings.jobs, options.engine)
        nearest = NearestConfig(ctx, build)
        code = run_files(files or [], manager, settings, options, err_console, plans=nearest.plans)
    raise typer.Exit(code)


@command(app)
def summarize(ctx: typer.Context, files: FilesArg = None, **flags: Any) -> None:
    """Replace older messages with an LLM-written summary, keeping the newest verbatim."""
    from ctxmgr.cli.summarize import batch_run, jobs_note, summarizer

    values = Values(ctx.params)
    with handle_errors(err_console), _logging(values.verbose):
        shared = summarizer(ctx, values)
        batch = batch_run(shared, values, files or [])
        if batch is not None:
            shared = batch.collector
        check_jobs(values.jobs, values.engine)
        jobs_note(ctx, values, shared)
        code = _summarize_files(ctx, files or [], values, shared, batch)
    raise typer.Exit(code)


def _summarize_files(ctx: typer.Context, files: list[str], values: Values, shared: Any, batch: Any) -> int:
    """``summarize``'s run once its chain is built: each file's manager from its nearest
    config, then a plan (``--dry-run``), a provider batch (``--batch``) or the run."""
    from ctxmgr.cli.nearest import NearestConfig
    from ctxmgr.cli.run import run_files
    from ctxmgr.state import SummaryContextManager

    def build(params: dict[str, Any]) -> tuple[SummaryContextManager[Any], Settings]:
        per_file = format_settings("summarize", params, values.concurrency)
        manager: SummaryContextManager[Any] = SummaryContextManager(
            **arguments("summarize", "manager", params),
            summarizer=shared,  # the model and API style come with it
            on_error="raise",
        )
        manager.input_budget()  # a budget too small to combine two summaries: exit 2 now
        return manager, per_file

    manager, settings = build(ctx.params)
    nearest = NearestConfig(ctx, build)
    options = output_options("summarize", ctx.params)
    if values.dry_run and values.engine is not None:
        raise UsageError("--dry-run plans here and calls nothing; drop --engine")
    if values.dry_run:
        from ctxmgr.cli.plan import plan_files

        return plan_files(
            files,
            manager,
            settings,
            json_report=values.json_report,
            console=err_console,
            rules=walk_rules(options),
            plans=nearest.plans,
        )
    if batch is not None:
        from ctxmgr.cli.batchjobs import run_batch

        return run_batch(batch, files, manager, settings, options, err_console, plans=nearest.plans)
    return run_files(files, manager, settings, options, err_console, plans=nearest.plans)


@command(app, "run")
def run_manager(ctx: typer.Context, files: FilesArg = None, **flags: Any) -> None:
    """Apply your own context manager class, with all the I/O, diff, check and batch behaviour."""
    from ctxmgr._custom import build_manager, load_manager_class, parse_options

    values = Values(ctx.params)
    with handle_errors(err_console):
        if not values.manager_spec:
            raise UsageError("--manager is required: package.module:ClassName or path/to/file.py:ClassName")
        manager = build_manager(load_manager_class(values.manager_spec), parse_options(values.option or []))
        options = output_options("run", ctx.params)
        code = _run_fixed(ctx, files, manager, options, values.concurrency)
    raise typer.Exit(code)


@command(app)
def stats(ctx: typer.Context, files: FilesArg = None, **flags: Any) -> None:
    """Messages by role, tool calls, estimated tokens and which triggers would fire."""
    from ctxmgr._stats import Triggers
    from ctxmgr.cli.nearest import NearestConfig
    from ctxmgr.cli.stats import stats_files

    def build(params: dict[str, Any]) -> tuple[Triggers, str | None]:
        return Triggers(**arguments("stats", "triggers", params)), arguments("stats", "format", params)["fmt"]

    values = Values(ctx.params)
    with handle_errors(err_console):
        triggers, fmt = build(ctx.params)
        code = stats_files(
            files or [],
            triggers=triggers,
            fmt=fmt,
            json_report=values.json_report,
            top=values.top,
            console=err_console,
            out=lazy_console(highlight=False, emoji=False),
            rules=walk_rules(output_options("stats", ctx.params)),
            plans=NearestConfig(ctx, build).plans,
        )
    raise typer.Exit(code)


@command(app)
def convert(ctx: typer.Context, files: FilesArg = None, **flags: Any) -> None:
    """Convert conversations to another format without compacting them.

    What the target has no place for is named on standard error (one line per file, by
    kind and count) and in --json; --lossless makes it an error.
    """
    values = Values(ctx.params)
    with handle_errors(err_console):
        if values.to_format is None:
            # Converting to a format chosen silently would surprise more than it helps.
            raise UsageError(f"convert needs --to FORMAT: {names_text()}")
        check_jobs(values.jobs, values.engine)
        from ctxmgr.state._managers import UnchangedContextManager

        options = output_options("convert", ctx.params, view=False)
        code = _run_fixed(ctx, files, UnchangedContextManager(), options)
    raise typer.Exit(code)


@command(app)
def validate(ctx: typer.Context, files: FilesArg = None, **flags: Any) -> None:
    """Check conversations for what provider APIs reject; exit 1 if a problem is found."""
    from ctxmgr.cli.nearest import NearestConfig
    from ctxmgr.cli.validate import validate_files

    def build(params: dict[str, Any]) -> tuple[str | None, str | None]:
        return arguments("validate", "validation", params)["target"], arguments("validate", "format", params)["fmt"]

    values = Values(ctx.params)
    with handle_errors(err_console):
        code = validate_files(
            files or [],
            target=values.target,
            fmt=values.from_format,
            json_report=values.json_report,
            quiet=values.quiet,
            console=err_console,
            walk=walk_rules(output_options("validate", ctx.params)),
            plans=NearestConfig(ctx, build).plans,
        )
    raise typer.Exit(code)


@command(app)
def restore(
    ctx: typer.Context,
    files: Annotated[list[str], typer.Argument(help="Files ctxmgr wrote with --backup.", metavar="FILES")],
    **flags: Any,
) -> None:
    """Rewrite files exactly as they were before ctxmgr wrote them, from their NAME.ctxmgr-removed.jsonl.

    A file that changed since, or a backup that is a link, not yours alone or not intact,
    is refused (exit 2) and left as it is; a restored file's backup is removed.
    """
    from ctxmgr.cli.errors import report
    from ctxmgr.errors import CtxmgrError
    from ctxmgr.files import restore as restore_file

    json_report = Values(ctx.params).json_report
    done: list[dict[str, Any]] = []
    refused: list[dict[str, str]] = []
    with handle_errors(err_console):
        for name in files:
            try:
                restored = restore_file(name)
            except CtxmgrError as error:
                report(err_console, error)
                refused.append({"path": name, "error": str(error)})
                continue
            done.append(restored.as_json())
            if not json_report:
                err_console.print(f"restored {restored.path} ({restored.size} bytes)", markup=False, soft_wrap=True)
    if json_report:
        from ctxmgr.cli.console import print_json

        print_json({"restored": done, "refused": refused})
    raise typer.Exit(2 if refused else 0)


app.add_typer(cache_app, name="cache")
app.add_typer(batch_app, name="batch")


@command(app, "config")
def show_config(
    ctx: typer.Context,
    command: Annotated[str | None, typer.Argument(help="Only this command's settings.", show_default=False)] = None,
    json_report: Annotated[bool, typer.Option(JSON.flag, help=JSON.help)] = False,
) -> None:
    """Print the effective settings of each command, where each came from and whether it was trusted.

    Exits 2 after the report when a config file is refused (the error lines say why).
    """
    from ctxmgr.cli.config import render
    from ctxmgr.config import Config, describe

    config: Config = ctx.meta.get("ctxmgr.config") or Config()
    group = ctx.parent.command if ctx.parent is not None else None
    assert isinstance(group, TyperGroup)
    with handle_errors(err_console):
        # Command groups (`cache`) have no flags of their own to configure.
        configurable = [n for n, c in group.commands.items() if n != "config" and not isinstance(c, TyperGroup)]
        description = describe(config, [command] if command else configurable)
    if json_report:
        from ctxmgr.cli.console import print_json

        print_json(description)
    else:
        out = lazy_console(highlight=False, emoji=False)
        for line in render(description):
            out.print(line, soft_wrap=True)
    if config.problems:
        from ctxmgr.cli.errors import report

        for problem in config.problems:
            report(err_console, problem)
        raise typer.Exit(2)
