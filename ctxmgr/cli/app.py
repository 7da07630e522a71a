"""The ``ctxmgr`` command line. The only layer that knows Typer and Rich."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from ctxmgr import __version__, _provider_registry as provider_registry
from ctxmgr._format_registry import TARGETS, names_text
from ctxmgr.cli.batchjobs import batch_app
from ctxmgr.cli.cache import cache_app
from ctxmgr.cli.console import lazy_console
from ctxmgr.cli.errors import handle_errors
from ctxmgr.cli.params import command
from ctxmgr.errors import UsageError

if TYPE_CHECKING:
    from ctxmgr.cli.run import Options
    from ctxmgr.files import Settings
    from ctxmgr.formats._base import SummaryPlacement
    from ctxmgr.providers import Summarizer
    from ctxmgr.state import BaseContextManager, Message

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

# -- options shared by the commands ------------------------------------------------

FilesArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Conversation files, folders (searched for .json/.jsonl) or glob patterns; "
        "'-' or nothing reads standard input.",
        show_default=False,
        metavar="FILES",
    ),
]
OutputOpt = Annotated[
    str | None,  # not Path: "-o out/" must keep its slash (a folder to create)
    typer.Option(
        "--output",
        "-o",
        metavar="PATH",
        help="Write here instead of standard output (a folder for several inputs, or a name ending in /).",
        show_default=False,
    ),
]
InPlaceOpt = Annotated[bool, typer.Option("--in-place", "-i", help="Rewrite the input files.")]
CheckOpt = Annotated[
    bool, typer.Option("--check", help="Write nothing; list files that would change; exit 1 if any would.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON report on standard output instead of the data.")]
ViewOpt = Annotated[
    bool | None,
    typer.Option(
        "--view/--no-view",
        help="Show the message-by-message view of what changed on standard error (default: when it is a terminal).",
        show_default=False,
    ),
]
DiffOpt = Annotated[
    bool,
    typer.Option(
        "--diff",
        help="Print a unified diff of each file that would change on standard output (pretty-printed JSON, "
        "a record at a time) and write nothing, as black --diff does; with --check, exit 1 if any would.",
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing but errors.")]
FollowOpt = Annotated[
    bool,
    typer.Option(
        "--follow-symlinks",
        help="Follow symbolic links out of searched folders, and write through a link to its target.",
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        help="Leave out of folder walks and patterns the paths matching this pattern (as in .gitignore: "
        "'build/', '*.log.json', 'fixtures/**/raw'), besides what git ignores; repeatable.",
        show_default=False,
        metavar="PATTERN",
    ),
]
IncludeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--include",
        help="What folder walks pick up (default: '*.json' and '*.jsonl'); repeatable.",
        show_default=False,
        metavar="PATTERN",
    ),
]
FromOpt = Annotated[
    str | None,
    typer.Option(
        "--from",
        help=f"Input format: {names_text()} (default: detected).",
        show_default=False,
        metavar="FORMAT",
    ),
]
ToOpt = Annotated[
    str | None,
    typer.Option(
        "--to", help="Output format, one of --from's (default: the input's).", show_default=False, metavar="FORMAT"
    ),
]
SummaryAsOpt = Annotated[
    str | None,
    typer.Option(
        "--summary-as",
        help="Where the summary goes (default: the format's slot).",
        show_default=False,
        metavar="[field|message|system]",
    ),
]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Output that breaks provider rules (orphan tool results...) is an error.")
]
LosslessOpt = Annotated[
    bool,
    typer.Option(
        "--lossless",
        help="Converting with --to, anything the target format has no place for is an error (exit 1, "
        "nothing written) instead of a warning.",
    ),
]
OnErrorOpt = Annotated[
    str,
    typer.Option(
        "--on-error",
        help="Datasets: 'fail' (write nothing) or 'skip' (report and copy the bad line).",
        metavar="[fail|skip]",
    ),
]
EngineOpt = Annotated[
    str | None,
    typer.Option(
        "--engine",
        metavar="ENGINE",
        help="Datasets: where their lines are compacted. 'ray': as Ray Data tasks, on a local Ray or on the "
        "cluster RAY_ADDRESS names; inputs may be folders, s3:// or gs:// paths (pip install 'ctxmgr[ray]').",
        show_default=False,
    ),
]
_JOBS_HELP = "processes for a large dataset file (default: one per CPU, up to 8; 1: no parallelism)"


def _jobs_option(help_text: str) -> Any:
    return typer.Option("--jobs", "-j", min=1, metavar="N", help=help_text, show_default=False)


JobsOpt = Annotated[int | None, _jobs_option(_JOBS_HELP[:1].upper() + _JOBS_HELP[1:] + ".")]
OfflineJobsOpt = Annotated[
    int | None,
    _jobs_option(
        f"With --model offline (or --check): {_JOBS_HELP}. A network model's calls are set by --concurrency."
    ),
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Log retries and provider calls on standard error.")]
RemoveToolOpt = Annotated[
    bool, typer.Option("--remove-tool-msgs", help="First drop completed tool-call sequences, keeping final answers.")
]
TriggerEstimateOpt = Annotated[
    str,
    typer.Option(
        "--trigger-estimate",
        metavar="[reference|script]",
        help="What --token-budget compares with: 'reference', four characters a token whatever the script, "
        "as the reference SummaryContextManager counts; 'script', the same text counted by script as the "
        "reports count it (a CJK character a token, a Cyrillic or Greek one half, ASCII a quarter). Both leave "
        "tool outputs out.",
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
    from ctxmgr.cli.config import load_config
    from ctxmgr.cli.console import note, reset_notes

    reset_notes()
    ctx.meta["ctxmgr.trust_flag"] = trust_project_config
    with handle_errors(err_console):
        group = ctx.command
        assert isinstance(group, TyperGroup)
        config = load_config(group, trust_flag=trust_project_config)
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


def _settings(
    from_format: str | None,
    to_format: str | None,
    summary_as: str | None,
    strict: bool,
    on_error: str,
    concurrency: int = 1,
    *,
    lossless: bool = False,
) -> Settings:
    from ctxmgr.files import Settings
    from ctxmgr.formats import adapter

    if from_format is not None:
        adapter(from_format)
    if to_format is not None:
        adapter(to_format)
    if summary_as is not None and summary_as not in ("field", "message", "system"):
        raise UsageError(f"--summary-as must be field, message or system, got {summary_as!r}")
    if on_error not in ("fail", "skip"):
        raise UsageError(f"--on-error must be 'fail' or 'skip', got {on_error!r}")
    if concurrency < 1:
        raise UsageError(f"--concurrency must be >= 1, got {concurrency}")
    placement: SummaryPlacement | None = summary_as  # type: ignore[assignment]
    return Settings(
        fmt=from_format,
        to=to_format,
        summary_as=placement,
        strict=strict,
        lossless=lossless,
        on_error="skip" if on_error == "skip" else "fail",
        concurrency=concurrency,
    )


def _format_settings(params: dict[str, Any], concurrency: int = 1) -> Settings:
    """:func:`_settings` from a command's parameters (``run``, ``convert``, ``summarize``),
    with its ``--jobs`` where it has one."""
    formats = params["from_format"], params["to_format"], params["summary_as"]
    settings = _settings(
        *formats, params["strict"], params["on_error"], concurrency, lossless=params.get("lossless", False)
    )
    settings.jobs = params.get("jobs")
    return settings


def _check_jobs(jobs: int | None, engine: str | None) -> None:
    if engine is not None and jobs is not None:
        raise UsageError("--jobs sets the processes of the one-machine path; drop it with --engine")


def _run_fixed(
    ctx: typer.Context,
    files: list[str] | None,
    manager: BaseContextManager[Any],
    options: Options,
    concurrency: int = 1,
) -> int:
    """Run one manager built once (``run``, ``convert``) over ``files``; each file's
    nearest config decides only its format settings."""
    from ctxmgr.cli.nearest import NearestConfig
    from ctxmgr.cli.run import run_files

    def build(params: dict[str, Any]) -> tuple[BaseContextManager[Any], Settings]:
        return manager, _format_settings(params, concurrency)

    settings = build(ctx.params)[1]
    return run_files(files or [], manager, settings, options, err_console, plans=NearestConfig(ctx, build).plans)


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
def trim(
    ctx: typer.Context,
    files: FilesArg = None,
    max_messages: Annotated[
        int,
        typer.Option(
            "--max-messages",
            "-n",
            min=0,
            metavar="TURNS",
            help="USER TURNS to keep (a turn: a user message and what answers it; summarize's --max-messages "
            "counts messages of every role instead).",
        ),
    ] = 10,
    remove_tool_msgs: RemoveToolOpt = False,
    output: OutputOpt = None,
    in_place: InPlaceOpt = False,
    check: CheckOpt = False,
    json_report: JsonOpt = False,
    view: ViewOpt = None,
    diff: DiffOpt = False,
    quiet: QuietOpt = False,
    follow_symlinks: FollowOpt = False,
    exclude: ExcludeOpt = None,
    include: IncludeOpt = None,
    from_format: FromOpt = None,
    to_format: ToOpt = None,
    strict: StrictOpt = False,
    lossless: LosslessOpt = False,
    on_error: OnErrorOpt = "fail",
    jobs: JobsOpt = None,
    engine: EngineOpt = None,
) -> None:
    """Keep the system messages and the last N user turns."""
    from ctxmgr.cli.nearest import NearestConfig
    from ctxmgr.cli.run import Options, run_files
    from ctxmgr.state import MessageContextManager

    def build(params: dict[str, Any]) -> tuple[BaseContextManager[Any], Settings]:
        settings = _settings(
            params["from_format"],
            params["to_format"],
            None,
            params["strict"],
            params["on_error"],
            lossless=params["lossless"],
        )
        settings.jobs = jobs
        return MessageContextManager(params["max_messages"], params["remove_tool_msgs"]), settings

    with handle_errors(err_console):
        manager, settings = build(ctx.params)
        options = Options(
            output=output,
            in_place=in_place,
            check=check,
            json_report=json_report,
            view=view,
            unified=diff,
            quiet=quiet,
            follow_symlinks=follow_symlinks,
            exclude=tuple(exclude or ()),
            include=tuple(include or ()),
            engine=engine,
        )
        _check_jobs(jobs, engine)
        nearest = NearestConfig(ctx, build)
        code = run_files(files or [], manager, settings, options, err_console, plans=nearest.plans)
    raise typer.Exit(code)


_KEY_FILE_LIMIT = 64 * 1024  # far beyond any key; a bigger file is the wrong file


def _read_key_file(path: Path | None) -> str | None:
    """The key in ``path`` (surrounding whitespace removed); errors never quote the file.

    A regular file that other users can read gets a warning (the key is a credential);
    a pipe (``--api-key-file <(pass show openai)``) is read as it comes.
    """
    if path is None:
        return None
    import os
    import stat

    from ctxmgr._redact import check_key_text, remember_secret

    try:
        with open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            data = handle.read(_KEY_FILE_LIMIT + 1)
    except OSError as exc:
        raise UsageError(f"--api-key-file {path}: {exc.strerror or 'cannot read'}") from None
    if len(data) > _KEY_FILE_LIMIT:
        raise UsageError(f"--api-key-file {path}: larger than {_KEY_FILE_LIMIT // 1024} KiB, not a key file")
    try:
        key = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise UsageError(f"--api-key-file {path}: not UTF-8 text (is it saved as UTF-16?)") from None
    if not key or len(key.split()) != 1:
        raise UsageError(f"--api-key-file {path}: expected one key on one line")
    problem = check_key_text(key)
    if problem is not None:
        raise UsageError(f"--api-key-file {path}: {problem}")
    remember_secret(key)
    if stat.S_ISREG(mode) and mode & 0o077:
        from ctxmgr.cli.console import note

        shown_mode = f"{stat.S_IMODE(mode):03o}"
        note("warning", f"--api-key-file {path}: readable by other users (mode {shown_mode}); 'chmod 600' it")
    return key


def _provider_environment(
    ctx: typer.Context, model: str, provider: str | None, base_url: str | None, api_key_file: Path | None
) -> tuple[str | None, Path | None]:
    """``base_url`` and ``api_key_file``, less a configured one that the environment of
    the provider this run calls overrides (said in a note): the user's environment beats
    config files, and only the variables of that provider count."""
    from ctxmgr.cli.config import Config, provider_overrides

    config = ctx.find_root().meta.get("ctxmgr.config")
    if not isinstance(config, Config):
        return base_url, api_key_file
    configured = {
        param: (source := ctx.get_parameter_source(param)) is not None and source.name == "DEFAULT_MAP"
        for param in ("base_url", "api_key_file")
    }
    notes = provider_overrides(config, provider or provider_registry.detect(model).provider, configured)
    from ctxmgr.cli.console import note

    for line in notes.values():
        note("note", line)
    return (None if "base_url" in notes else base_url), (None if "api_key_file" in notes else api_key_file)


def _trigger_estimate(value: str) -> Callable[[Sequence[Message]], int]:
    from ctxmgr.state._tokens import TRIGGER_ESTIMATES

    estimate = TRIGGER_ESTIMATES.get(value)
    if estimate is None:
        raise UsageError(f"--trigger-estimate must be 'reference' or 'script', got {value!r}")
    return estimate


def _optional_count(value: str, flag: str) -> int | None:
    if value.lower() == "none":
        return None
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"{flag} must be a whole number or 'none', got {value!r}") from None
    if number < 0:
        raise UsageError(f"{flag} must be >= 0, got {number}")
    return number


@command(app)
def summarize(
    ctx: typer.Context,
    files: FilesArg = None,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            metavar="MODEL",
            help=f"Model: {provider_registry.help_models()}.",
        ),
    ] = "offline",
    max_messages: Annotated[
        str,
        typer.Option(
            "--max-messages",
            metavar="MESSAGES|none",
            help="Summarize when there are more MESSAGES than this, of every role (trim's --max-messages counts "
            "user turns instead; 'none' disables).",
        ),
    ] = "30",
    token_budget: Annotated[
        str,
        typer.Option(
            "--token-budget",
            metavar="TOKENS|none",
            help="Summarize when estimated tokens (see --trigger-estimate) exceed this ('none' disables).",
        ),
    ] = "none",
    trigger_estimate: TriggerEstimateOpt = "reference",
    keep_recent: Annotated[
        int, typer.Option("--keep-recent", min=0, help="Newest non-system messages kept verbatim.")
    ] = 8,
    remove_tool_msgs: RemoveToolOpt = False,
    summary_system_prompt: Annotated[
        str | None,
        typer.Option("--summary-system-prompt", help="Replace the summarization instruction.", show_default=False),
    ] = None,
    max_summary_tokens: Annotated[
        int, typer.Option("--max-summary-tokens", min=1, help="Output token cap of the summary.")
    ] = 600,
    max_input_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-input-tokens",
            min=1,
            help="Most estimated tokens one summary request carries; a longer span is summarized in parts, "
            "then combined (default: by model family; 2000 for --base-url servers and unknown models).",
            show_default=False,
        ),
    ] = None,
    require_facts: Annotated[
        bool,
        typer.Option(
            "--require-facts",
            help="When a summary lacks identifiers of its span, ask once more; still missing: exit 3, unchanged.",
        ),
    ] = False,
    api_style: Annotated[
        str, typer.Option("--api-style", help="OpenAI API to call.", metavar="[responses|chat]")
    ] = "responses",
    preserve_tool_pairs: Annotated[
        bool,
        typer.Option(
            "--preserve-tool-pairs/--no-preserve-tool-pairs", help="Never split a tool call from its results."
        ),
    ] = True,
    tool_results: Annotated[
        bool,
        typer.Option("--tool-results/--no-tool-results", help="Show tool results to the summarizer."),
    ] = True,
    provider: Annotated[
        str | None,
        typer.Option(
            "--provider",
            help="Provider to call (default: from the model name).",
            show_default=False,
            metavar=f"[{'|'.join(provider_registry.names())}]",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", metavar="URL", help="API address, e.g. a local OpenAI-compatible server.", show_default=False
        ),
    ] = None,
    api_key_file: Annotated[
        Path | None,
        typer.Option(
            "--api-key-file",
            metavar="FILE",
            help=f"Read the API key from this file (instead of {provider_registry.help_key_variables()}).",
            show_default=False,
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds per attempt, the whole answer included.")
    ] = 60.0,
    max_retries: Annotated[
        int, typer.Option("--max-retries", min=0, help="Retries on 429, 5xx and connection errors.")
    ] = 2,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", "-c", min=1, metavar="N", help="Summaries requested at once (across files and lines)."
        ),
    ] = 4,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache", metavar="DIR", help="Summary cache folder (default: the user cache folder).", show_default=False
        ),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the summary cache.")] = False,
    cache_max_size: Annotated[
        str | None,
        typer.Option(
            "--cache-max-size",
            help="Size cap of the summary cache (500MB, 1GiB...); the oldest entries are evicted after the run "
            "(default: CTXMGR_CACHE_MAX_SIZE, else 256MB).",
            show_default=False,
            metavar="SIZE",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be summarized (calls, input tokens); call nothing.")
    ] = False,
    output: OutputOpt = None,
    in_place: InPlaceOpt = False,
    check: CheckOpt = False,
    json_report: JsonOpt = False,
    view: ViewOpt = None,
    diff: DiffOpt = False,
    quiet: QuietOpt = False,
    follow_symlinks: FollowOpt = False,
    exclude: ExcludeOpt = None,
    include: IncludeOpt = None,
    verbose: VerboseOpt = False,
    from_format: FromOpt = None,
    to_format: ToOpt = None,
    summary_as: SummaryAsOpt = None,
    strict: StrictOpt = False,
    lossless: LosslessOpt = False,
    on_error: OnErrorOpt = "fail",
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="Send the summaries through the provider's Batch API (about half the price, answers within 24 "
            "hours): exits 75 while they are pending; run the same command again to write the output.",
        ),
    ] = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="With --batch: stay, polling, until the output is written.")
    ] = False,
    poll_interval: Annotated[
        float,
        typer.Option(
            "--poll-interval", min=0.001, metavar="SECONDS", help="With --batch --wait: seconds between polls."
        ),
    ] = 30.0,
    batch_state: Annotated[
        Path | None,
        typer.Option(
            "--batch-state",
            metavar="FILE",
            help="With --batch: the state file (default: beside the output, NAME.ctxmgr-batch).",
            show_default=False,
        ),
    ] = None,
    jobs: OfflineJobsOpt = None,
    engine: EngineOpt = None,
) -> None:
    """Replace older messages with an LLM-written summary, keeping the newest verbatim."""
    from ctxmgr._summarizer import never_waits
    from ctxmgr.cli.console import note
    from ctxmgr.cli.inputs import WalkRules
    from ctxmgr.cli.nearest import NearestConfig
    from ctxmgr.cli.run import Options, run_files
    from ctxmgr.providers import SummarizerSettings, build_summarizer
    from ctxmgr.state import SummaryContextManager

    with handle_errors(err_console), _logging(verbose):
        if api_style not in ("responses", "chat"):
            raise UsageError(f"--api-style must be 'responses' or 'chat', got {api_style!r}")
        base_url, api_key_file = _provider_environment(ctx, model, provider, base_url, api_key_file)
        cache_dir = None
        if not no_cache:
            from ctxmgr.cache import default_cache_dir

            cache_dir = cache or default_cache_dir()
        # One chain for the whole run (its cache, its cap on calls in flight), shared by
        # every file's manager. Building it is cheap: its SDK is imported and its key
        # looked up on the first call, so a file that needs no summary never needs a key.
        shared: Summarizer = build_summarizer(
            SummarizerSettings(
                model,
                api_style="chat" if api_style == "chat" else "responses",
                provider=provider,
                base_url=base_url,
                timeout=timeout,
                max_retries=max_retries,
                api_key=_read_key_file(api_key_file),
                concurrency=concurrency,
                cache_dir=cache_dir,
                cache_max_size=cache_max_size,
                # Whether a summary would be made needs no model (the triggers decide):
                # the offline digest stands in, so a check needs no key and sends nothing.
                check=check,
            )
        )

        batch_run = None
        if batch:
            # The managers are handed the batch's collector in place of the model.
            from ctxmgr.providers._batch.run import BatchRun, default_state_path

            if check or dry_run:
                raise UsageError("--batch sends requests; --check and --dry-run send none: use one or the other")
            state_path = batch_state or default_state_path(files or [], output, in_place, model)
            batch_run = BatchRun(shared, state_path, wait=wait, poll_interval=poll_interval)
            shared = batch_run.collector
        elif wait or batch_state is not None:
            raise UsageError("--wait and --batch-state go with --batch")
        _check_jobs(jobs, engine)
        typed = (source := ctx.get_parameter_source("jobs")) is not None and source.name == "COMMANDLINE"
        # A config's jobs (for trims and the offline digest) is not repeated on every run.
        if typed and jobs is not None and jobs > 1 and not (quiet or dry_run) and not never_waits(shared):
            note(
                "note",
                f"--jobs {jobs} is for --model offline: {shared.name}'s summaries run in one process, "
                "--concurrency calls at once",
            )

        def build(params: dict[str, Any]) -> tuple[SummaryContextManager[Any], Settings]:
            per_file = _format_settings(params, concurrency)
            manager: SummaryContextManager[Any] = SummaryContextManager(
                max_messages=_optional_count(params["max_messages"], "--max-messages"),
                token_budget=_optional_count(params["token_budget"], "--token-budget"),
                token_estimate=_trigger_estimate(params["trigger_estimate"]),
                keep_recent=params["keep_recent"],
                remove_tool_msgs=params["remove_tool_msgs"],
                summary_system_prompt=params["summary_system_prompt"],
                max_summary_tokens=params["max_summary_tokens"],
                preserve_tool_pairs=params["preserve_tool_pairs"],
                include_tool_results=params["tool_results"],
                summarizer=shared,  # the model and API style come with it
                on_error="raise",
                max_input_tokens=params["max_input_tokens"],
                require_facts=params["require_facts"],
            )
            manager.input_budget()  # a budget too small to combine two summaries: exit 2 now
            return manager, per_file

        manager, settings = build(ctx.params)
        nearest = NearestConfig(ctx, build)
        rules = WalkRules(follow_symlinks, tuple(exclude or ()), tuple(include or ()))
        if dry_run and engine is not None:
            raise UsageError("--dry-run plans here and calls nothing; drop --engine")
        if dry_run:
            from ctxmgr.cli.plan import plan_files

            code = plan_files(
                files or [],
                manager,
                settings,
                json_report=json_report,
                console=err_console,
                rules=rules,
                plans=nearest.plans,
            )
        else:
            run_options = Options(
                output=output,
                in_place=in_place,
                check=check,
                json_report=json_report,
                view=view,
                unified=diff,
                quiet=quiet,
                follow_symlinks=follow_symlinks,
                exclude=rules.exclude,
                include=rules.include,
                engine=engine,
            )
            if batch_run is not None:
                from ctxmgr.cli.batchjobs import run_batch

                code = run_batch(
                    batch_run, files or [], manager, settings, run_options, err_console, plans=nearest.plans
                )
            else:
                code = run_files(files or [], manager, settings, run_options, err_console, plans=nearest.plans)
    raise typer.Exit(code)


@command(app, "run")
def run_manager(
    ctx: typer.Context,
    files: FilesArg = None,
    manager_spec: Annotated[
        str,
        typer.Option(
            "--manager",
            metavar="MODULE:CLASS",
            help="Your BaseContextManager subclass: package.module:Class or file.py:Class. This runs that code.",
        ),
    ] = "",
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            metavar="KEY=VALUE",
            help="key=value passed to the class (converted with its type hints); repeatable.",
            show_default=False,
        ),
    ] = None,
    output: OutputOpt = None,
    in_place: InPlaceOpt = False,
    check: CheckOpt = False,
    json_report: JsonOpt = False,
    view: ViewOpt = None,
    diff: DiffOpt = False,
    quiet: QuietOpt = False,
    follow_symlinks: FollowOpt = False,
    exclude: ExcludeOpt = None,
    include: IncludeOpt = None,
    from_format: FromOpt = None,
    to_format: ToOpt = None,
    summary_as: SummaryAsOpt = None,
    strict: StrictOpt = False,
    lossless: LosslessOpt = False,
    on_error: OnErrorOpt = "fail",
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", min=1, metavar="N", help="Files compacted at once.")
    ] = 1,
) -> None:
    """Apply your own context manager class, with all the I/O, diff, check and batch behaviour."""
    from ctxmgr._custom import build_manager, load_manager_class, parse_options
    from ctxmgr.cli.run import Options

    with handle_errors(err_console):
        if not manager_spec:
            raise UsageError("--manager is required: package.module:ClassName or path/to/file.py:ClassName")
        manager = build_manager(load_manager_class(manager_spec), parse_options(option or []))
        options = Options(
            output=output,
            in_place=in_place,
            check=check,
            json_report=json_report,
            view=view,
            unified=diff,
            quiet=quiet,
            follow_symlinks=follow_symlinks,
            exclude=tuple(exclude or ()),
            include=tuple(include or ()),
        )
        code = _run_fixed(ctx, files, manager, options, concurrency)
    raise typer.Exit(code)


@command(app)
def stats(
    ctx: typer.Context,
    files: FilesArg = None,
    max_messages: Annotated[
        int,
        typer.Option(
            "--max-messages",
            "-n",
            min=0,
            metavar="TURNS",
            help="Report whether trim would fire: above this many USER TURNS (trim's --max-messages).",
        ),
    ] = 10,
    summary_max_messages: Annotated[
        str,
        typer.Option(
            "--summary-max-messages",
            metavar="MESSAGES|none",
            help="Report whether summarize would fire: above this many MESSAGES of every role "
            "(summarize's --max-messages).",
        ),
    ] = "30",
    token_budget: Annotated[
        str,
        typer.Option(
            "--token-budget",
            metavar="TOKENS|none",
            help="Report whether summarize would fire above this many estimated tokens (see --trigger-estimate).",
        ),
    ] = "none",
    trigger_estimate: TriggerEstimateOpt = "reference",
    top: Annotated[int, typer.Option("--top", min=0, help="How many of the largest messages to list.")] = 3,
    from_format: FromOpt = None,
    json_report: JsonOpt = False,
    follow_symlinks: FollowOpt = False,
    exclude: ExcludeOpt = None,
    include: IncludeOpt = None,
) -> None:
    """Messages by role, tool calls, estimated tokens and which triggers would fire."""
    from ctxmgr._stats import Triggers
    from ctxmgr.cli.inputs import WalkRules
    from ctxmgr.cli.nearest import NearestConfig
    from ctxmgr.cli.stats import stats_files

    def build(params: dict[str, Any]) -> tuple[Triggers, str | None]:
        triggers = Triggers(
            trim_max_messages=params["max_messages"],
            summary_max_messages=_optional_count(params["summary_max_messages"], "--summary-max-messages"),
            token_budget=_optional_count(params["token_budget"], "--token-budget"),
            token_estimate=_trigger_estimate(params["trigger_estimate"]),
        )
        return triggers, params["from_format"]

    with handle_errors(err_console):
        triggers, fmt = build(ctx.params)
        code = stats_files(
            files or [],
            triggers=triggers,
            fmt=fmt,
            json_report=json_report,
            top=top,
            console=err_console,
            out=lazy_console(highlight=False, emoji=False),
            rules=WalkRules(follow_symlinks, tuple(exclude or ()), tuple(include or ())),
            plans=NearestConfig(ctx, build).plans,
        )
    raise typer.Exit(code)


@command(app)
def convert(
    ctx: typer.Context,
    files: FilesArg = None,
    to_format: Annotated[
        str | None,
        typer.Option(
            "--to",
            help=f"Output format (required): {names_text()}.",
            show_default=False,
            metavar="FORMAT",
        ),
    ] = None,
    from_format: FromOpt = None,
    summary_as: SummaryAsOpt = None,
    output: OutputOpt = None,
    in_place: InPlaceOpt = False,
    quiet: QuietOpt = False,
    follow_symlinks: FollowOpt = False,
    json_report: JsonOpt = False,
    exclude: ExcludeOpt = None,
    include: IncludeOpt = None,
    strict: StrictOpt = False,
    lossless: LosslessOpt = False,
    on_error: OnErrorOpt = "fail",
    jobs: JobsOpt = None,
    engine: EngineOpt = None,
) -> None:
    """Convert conversations to another format without compacting them.

    What the target has no place for is named on standard error (one line per file, by
    kind and count) and in --json; --lossless makes it an error.
    """
    from ctxmgr.cli.run import Options

    with handle_errors(err_console):
        if to_format is None:
            # Converting to a format chosen silently would surprise more than it helps.
            raise UsageError(f"convert needs --to FORMAT: {names_text()}")
        _check_jobs(jobs, engine)
        from ctxmgr.state._managers import UnchangedContextManager

        manager = UnchangedContextManager()
        options = Options(
            output=output,
            in_place=in_place,
            json_report=json_report,
            view=False,
            quiet=quiet,
            follow_symlinks=follow_symlinks,
            exclude=tuple(exclude or ()),
            include=tuple(include or ()),
            engine=engine,
        )
        code = _run_fixed(ctx, files, manager, options)
    raise typer.Exit(code)


@command(app)
def validate(
    ctx: typer.Context,
    files: FilesArg = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--for",
            help=f"Also check one provider's rules: {names_text(TARGETS, last=', ')}.",
            show_default=False,
            metavar="FORMAT",
        ),
    ] = None,
    from_format: FromOpt = None,
    json_report: JsonOpt = False,
    quiet: QuietOpt = False,
    follow_symlinks: FollowOpt = False,
    exclude: ExcludeOpt = None,
    include: IncludeOpt = None,
) -> None:
    """Check conversations for what provider APIs reject; exit 1 if a problem is found."""
    from ctxmgr.cli.inputs import WalkRules
    from ctxmgr.cli.nearest import NearestConfig
    from ctxmgr.cli.validate import validate_files

    def build(params: dict[str, Any]) -> tuple[str | None, str | None]:
        return params["target"], params["from_format"]

    with handle_errors(err_console):
        code = validate_files(
            files or [],
            target=target,
            fmt=from_format,
            json_report=json_report,
            quiet=quiet,
            console=err_console,
            walk=WalkRules(follow_symlinks, tuple(exclude or ()), tuple(include or ())),
            plans=NearestConfig(ctx, build).plans,
        )
    raise typer.Exit(code)


app.add_typer(cache_app, name="cache")
app.add_typer(batch_app, name="batch")


@command(app, "config")
def show_config(
    ctx: typer.Context,
    command: Annotated[str | None, typer.Argument(help="Only this command's settings.", show_default=False)] = None,
    json_report: JsonOpt = False,
) -> None:
    """Print the effective settings of each command, where each came from and whether it was trusted.

    Exits 2 after the report when a config file is refused (the error lines say why).
    """
    from ctxmgr.cli.config import Config, describe, render

    config: Config = ctx.meta.get("ctxmgr.config") or Config()
    group = ctx.parent.command if ctx.parent is not None else None
    assert isinstance(group, TyperGroup)
    with handle_errors(err_console):
        # Command groups (`cache`) have no flags of their own to configure.
        configurable = [n for n, c in group.commands.items() if n != "config" and not isinstance(c, TyperGroup)]
        description = describe(config, group, [command] if command else configurable)
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
