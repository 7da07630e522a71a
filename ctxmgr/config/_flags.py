"""The flag table: every option of the compacting commands, declared once.

Each :class:`Flag` says what the option is (its spelling, type, default and help), how far
it reaches (:data:`FILE`: how one file is compacted, so each file takes it from its
nearest configuration; :data:`RUN`: the run as a whole, from the current folder's), whether
a project's config file may set it and up to which bound, which environment variables
decide it when no flag is given, and which library argument it feeds. :data:`COMMANDS`
lists each command's options in the order its help shows them.

Everything else is derived from here: the command line's declarations
(:mod:`ctxmgr.cli.flags`), :data:`PER_FILE`, :data:`PROJECT_MAY_SET`,
:data:`PROJECT_LIMITS` and :data:`ENV_OVERRIDES`.

The trust rules (docs/threat-model.md, "Configuration"): a project file may set *how to
compact*, never where data, keys or writes go nor what code runs; the settings that spend
the user's resources (processes, parallel requests, time, tokens paid for) only up to a
bound. A flag is refused to a project unless its entry says ``project=True``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxmgr import _provider_registry as provider_registry
from ctxmgr._format_registry import CONVERTIBLE, TARGETS, names_text
from ctxmgr.config._compaction_flags import COMPACTION as _COMPACTION, SUMMARY_SPAN as _SUMMARY_SPAN
from ctxmgr.config._flag import FILE, Feeds, Flag, make_flag as _flag, optional_count, patterns, trigger_estimate

__all__ = [
    "COMMANDS",
    "ENV_OVERRIDES",
    "PER_FILE",
    "PROJECT_LIMITS",
    "PROJECT_MAY_SET",
    "arguments",
    "changed_arguments",
    "flag_named",
]

# -- what every compacting command shares -------------------------------------------------

_JOBS_HELP = "processes for a large dataset file (default: one per CPU, up to 8; 1: no parallelism)"

OUTPUT = _flag(
    "output",
    str,  # not Path: "-o out/" must keep its slash (a folder to create)
    None,
    "Write here instead of standard output (a folder for several inputs, or a name ending in /).",
    short="-o",
    optional=True,
    metavar="PATH",
    show_default=False,
    feeds="output",
)
IN_PLACE = _flag("in-place", bool, False, "Rewrite the input files.", short="-i", feeds="output")
BACKUP = _flag(
    "backup",
    bool,
    None,
    "Keep what each written file loses in NAME.ctxmgr-removed.jsonl beside it, for ctxmgr restore "
    "(default: with --in-place).",
    negative=True,
    optional=True,
    show_default=False,
    feeds="output",
)
FORCE = _flag(
    "force",
    bool,
    False,
    "Rewrite in place even a file another process has open for writing, or a session log changed in "
    "the last 3 seconds (this check only). Never read from a project's config file.",
    refused_because="whether a file still being written may be rewritten",
    feeds="format",
)
CHECK = _flag(
    "check",
    bool,
    False,
    "Write nothing; list files that would change; exit 1 if any would.",
    project=True,
    feeds="output",
)
JSON = _flag(
    "json",
    bool,
    False,
    "Print a JSON report on standard output instead of the data.",
    param="json_report",
    feeds="output",
)
VIEW = _flag(
    "view",
    bool,
    None,
    "Show the message-by-message view of what changed on standard error (default: on a terminal, unless --diff).",
    project=True,
    negative=True,
    optional=True,
    show_default=False,
    feeds="output",
)
DIFF = _flag(
    "diff",
    bool,
    False,
    "Print a unified diff of each file that would change on standard output (pretty-printed JSON, "
    "a record at a time) and write nothing, as black --diff does; with --check, exit 1 if any would.",
    feeds="output",
    arg="unified",
)
QUIET = _flag("quiet", bool, False, "Print nothing but errors.", short="-q", feeds="output")
FOLLOW = _flag(
    "follow-symlinks",
    bool,
    False,
    "Follow symbolic links out of searched folders, and write through a link to its target.",
    feeds="output",
)
EXCLUDE = _flag(
    "exclude",
    list[str],
    None,
    "Leave out of folder walks and patterns the paths matching this pattern (as in .gitignore: "
    "'build/', '*.log.json', 'fixtures/**/raw'), besides what git ignores; repeatable.",
    optional=True,
    show_default=False,
    metavar="PATTERN",
    feeds="output",
    parse=patterns,
)
INCLUDE = _flag(
    "include",
    list[str],
    None,
    "What folder walks pick up (default: '*.json', '*.jsonl' and '*.traj'); repeatable.",
    optional=True,
    show_default=False,
    metavar="PATTERN",
    feeds="output",
    parse=patterns,
)
FROM = _flag(
    "from",
    str,
    None,
    f"Input format: {names_text()} (default: detected).",
    param="from_format",
    scope=FILE,
    project=True,
    optional=True,
    show_default=False,
    metavar="FORMAT",
    feeds="format",
    arg="fmt",
)
TO = _flag(
    "to",
    str,
    None,
    f"Output format: {names_text(CONVERTIBLE)} (default: the input's).",
    param="to_format",
    scope=FILE,
    project=True,
    optional=True,
    show_default=False,
    metavar="FORMAT",
    feeds="format",
    arg="to",
)
SUMMARY_AS = _flag(
    "summary-as",
    str,
    None,
    "Where the summary goes (default: the format's slot).",
    scope=FILE,
    project=True,
    optional=True,
    show_default=False,
    metavar="[field|message|system]",
    feeds="format",
)
STRICT = _flag(
    "strict",
    bool,
    False,
    "Output that breaks provider rules (orphan tool results...) is an error.",
    scope=FILE,
    project=True,
    feeds="format",
)
FIX_CALL_IDS = _flag(
    "fix-call-ids",
    bool,
    False,
    "Renumber reused tool call ids, each with its results, so every provider takes them (Anthropic refuses them).",
    scope=FILE,
    project=True,
    feeds="format",
)
LOSSLESS = _flag(
    "lossless",
    bool,
    False,
    "Converting with --to, anything the target format has no place for is an error (exit 1, "
    "nothing written) instead of a warning.",
    scope=FILE,
    project=True,
    feeds="format",
)
ON_ERROR = _flag(
    "on-error",
    str,
    "fail",
    "Datasets: 'fail' (write nothing) or 'skip' (report and copy the bad line).",
    scope=FILE,
    project=True,
    metavar="[fail|skip]",
    feeds="format",
)
JOBS = _flag(
    "jobs",
    int,
    None,
    _JOBS_HELP[:1].upper() + _JOBS_HELP[1:] + ".",
    project=True,
    bound=8,
    short="-j",
    optional=True,
    min=1,
    metavar="N",
    show_default=False,
    feeds="format",
)
OFFLINE_JOBS = _flag(
    "jobs",
    int,
    None,
    f"With --model offline (or --check): {_JOBS_HELP}. A network model's calls are set by --concurrency.",
    project=True,
    bound=8,
    short="-j",
    optional=True,
    min=1,
    metavar="N",
    show_default=False,
    feeds="format",
)
ENGINE = _flag(
    "engine",
    str,
    None,
    "Datasets: where their lines are compacted. 'ray': as Ray Data tasks, on a local Ray or on the "
    "cluster RAY_ADDRESS names; inputs may be folders, s3:// or gs:// paths (pip install 'ctxmgr[ray]').",
    optional=True,
    metavar="ENGINE",
    show_default=False,
    feeds="output",
)
VERBOSE = _flag(
    "verbose",
    bool,
    False,
    "Print every warning (by default one line per kind per file); log retries and provider calls.",
    short="-v",
    project=True,
)
VERBOSE_WARNINGS = _flag(
    "verbose", bool, False, "Print every warning (by default one line per kind per file).", short="-v", project=True
)
REMOVE_TOOL_MSGS = _flag(
    "remove-tool-msgs",
    bool,
    False,
    "First drop completed tool-call sequences, keeping final answers.",
    scope=FILE,
    project=True,
    feeds="manager",
)
TRIGGER_ESTIMATE = _flag(
    "trigger-estimate",
    str,
    "reference",
    "What --token-budget compares with: 'reference', four characters a token whatever the script, "
    "as the reference SummaryContextManager counts; 'script', the same text counted by script as the "
    "reports count it (a CJK character a token, a Cyrillic or Greek one half, ASCII a quarter). Both leave "
    "tool outputs out.",
    scope=FILE,
    project=True,
    metavar="[reference|script]",
    feeds="manager",
    arg="token_estimate",
    parse=trigger_estimate,
)

# -- trim -----------------------------------------------------------------------------------

TRIM_MAX_MESSAGES = _flag(
    "max-messages",
    int,
    10,
    "USER TURNS to keep (a turn: a user message and what answers it; summarize's --max-messages "
    "counts messages of every role instead).",
    scope=FILE,
    project=True,
    short="-n",
    min=0,
    metavar="TURNS",
    feeds="manager",
)

# -- summarize ----------------------------------------------------------------------------

MODEL = _flag(
    "model",
    str,
    "offline",
    f"Model: {provider_registry.help_models()}.",
    short="-m",
    metavar="MODEL",
    feeds="summarizer",
)
SUMMARY_MAX_MESSAGES = _flag(
    "max-messages",
    str,
    "30",
    "Summarize when there are more MESSAGES than this, of every role (trim's --max-messages counts "
    "user turns instead; 'none' disables).",
    scope=FILE,
    project=True,
    metavar="MESSAGES|none",
    feeds="manager",
    parse=optional_count,
)
TOKEN_BUDGET = _flag(
    "token-budget",
    str,
    "none",
    "Summarize when estimated tokens (see --trigger-estimate) exceed this ('none' disables).",
    scope=FILE,
    project=True,
    metavar="TOKENS|none",
    feeds="manager",
    parse=optional_count,
)
KEEP_RECENT = _flag(
    "keep-recent",
    int,
    8,
    "Newest non-system messages kept verbatim.",
    scope=FILE,
    project=True,
    min=0,
    feeds="manager",
)
SUMMARY_SYSTEM_PROMPT = _flag(
    "summary-system-prompt",
    str,
    None,
    "Replace the summarization instruction.",
    # What the model is told to write into the system message of every conversation
    # compacted, the text with the most authority there is: from a pull request, it could
    # plant instructions in every fixture it compacts.
    scope=FILE,
    refused_because="what the model is told to write into a system message",
    optional=True,
    show_default=False,
    feeds="manager",
)
MAX_SUMMARY_TOKENS = _flag(
    "max-summary-tokens",
    int,
    600,
    "Output token cap of the summary.",
    scope=FILE,
    project=True,
    bound=8192,
    min=1,
    feeds="manager",
)
MAX_INPUT_TOKENS = _flag(
    "max-input-tokens",
    int,
    None,
    "Most estimated tokens one summary request carries; a longer span is summarized in parts, "
    "then combined (default: by model family; 60% of the window a --base-url server says, else 2000).",
    # The size of the model's window, like the model itself, is the run's: and a small
    # budget from a project multiplies the paid requests a span takes.
    optional=True,
    min=1,
    show_default=False,
    feeds="manager",
)
REQUIRE_FACTS = _flag(
    "require-facts",
    bool,
    False,
    "When a summary lacks identifiers of its span, ask once more; still missing: exit 3, unchanged.",
    scope=FILE,
    project=True,
    feeds="manager",
)
API_STYLE = _flag(
    "api-style", str, "responses", "OpenAI API to call.", project=True, metavar="[responses|chat]", feeds="summarizer"
)
PRESERVE_TOOL_PAIRS = _flag(
    "preserve-tool-pairs",
    bool,
    True,
    "Never split a tool call from its results.",
    scope=FILE,
    project=True,
    negative=True,
    feeds="manager",
)
TOOL_RESULTS = _flag(
    "tool-results",
    bool,
    True,
    "Show tool results to the summarizer.",
    scope=FILE,
    project=True,
    negative=True,
    feeds="manager",
    arg="include_tool_results",
)
PROVIDER = _flag(
    "provider",
    str,
    None,
    "Provider to call (default: from the model name).",
    optional=True,
    show_default=False,
    metavar=f"[{'|'.join(provider_registry.names())}]",
    feeds="summarizer",
)
BASE_URL = _flag(
    "base-url",
    str,
    None,
    "API address, e.g. a local OpenAI-compatible server.",
    optional=True,
    metavar="URL",
    show_default=False,
    feeds="summarizer",
)
API_KEY_FILE = _flag(
    "api-key-file",
    Path,
    None,
    f"Read the API key from this file (instead of {provider_registry.help_key_variables()}).",
    optional=True,
    metavar="FILE",
    show_default=False,
)
TIMEOUT = _flag(
    "timeout",
    float,
    60.0,
    "Seconds per attempt, the whole answer included.",
    project=True,
    bound=600,
    min=0.1,
    feeds="summarizer",
)
MAX_RETRIES = _flag(
    "max-retries",
    int,
    2,
    "Retries on 429, 5xx and connection errors.",
    project=True,
    bound=5,
    min=0,
    feeds="summarizer",
)
SUMMARY_CONCURRENCY = _flag(
    "concurrency",
    int,
    4,
    "Summaries requested at once (across files and lines).",
    project=True,
    bound=16,
    short="-c",
    min=1,
    metavar="N",
    feeds="summarizer",
)
CACHE = _flag(
    "cache",
    Path,
    None,
    "Summary cache folder (default: the user cache folder).",
    env=("CTXMGR_CACHE_DIR",),
    optional=True,
    metavar="DIR",
    show_default=False,
)
NO_CACHE = _flag("no-cache", bool, False, "Neither read nor write the summary cache.", project=True)
CACHE_MAX_SIZE = _flag(
    "cache-max-size",
    str,
    None,
    "Size cap of the summary cache (500MB, 1GiB...); the oldest entries are evicted after the run "
    "(default: CTXMGR_CACHE_MAX_SIZE, else 256MB).",
    env=("CTXMGR_CACHE_MAX_SIZE",),
    optional=True,
    show_default=False,
    metavar="SIZE",
    feeds="summarizer",
)
DRY_RUN = _flag(
    "dry-run", bool, False, "Show what would be summarized (calls, input tokens); call nothing.", project=True
)
BATCH = _flag(
    "batch",
    bool,
    False,
    "Send the summaries through the provider's Batch API (about half the price, answers within 24 "
    "hours): exits 75 while they are pending; run the same command again to write the output.",
)
WAIT = _flag("wait", bool, False, "With --batch: stay, polling, until the output is written.", feeds="batch")
POLL_INTERVAL = _flag(
    "poll-interval",
    float,
    30.0,
    "With --batch --wait: seconds between polls.",
    min=0.001,
    metavar="SECONDS",
    feeds="batch",
)
BATCH_STATE = _flag(
    "batch-state",
    Path,
    None,
    "With --batch: the state file (default: beside the output, NAME.ctxmgr-batch).",
    optional=True,
    metavar="FILE",
    show_default=False,
)

# -- run --------------------------------------------------------------------------------------

MANAGER = _flag(
    "manager",
    str,
    "",
    "Your BaseContextManager subclass: package.module:Class or file.py:Class. This runs that code.",
    param="manager_spec",
    metavar="MODULE:CLASS",
)
OPTION = _flag(
    "option",
    list[str],
    None,
    "key=value passed to the class (converted with its type hints); repeatable.",
    optional=True,
    metavar="KEY=VALUE",
    show_default=False,
)
RUN_CONCURRENCY = _flag(
    "concurrency", int, 1, "Files compacted at once.", project=True, bound=16, short="-c", min=1, metavar="N"
)

# -- stats --------------------------------------------------------------------------------------

STATS_MAX_MESSAGES = _flag(
    "max-messages",
    int,
    10,
    "Report whether trim would fire: above this many USER TURNS (trim's --max-messages).",
    scope=FILE,
    project=True,
    short="-n",
    min=0,
    metavar="TURNS",
    feeds="triggers",
    arg="trim_max_messages",
)
STATS_SUMMARY_MAX_MESSAGES = _flag(
    "summary-max-messages",
    str,
    "30",
    "Report whether summarize would fire: above this many MESSAGES of every role (summarize's --max-messages).",
    scope=FILE,
    project=True,
    metavar="MESSAGES|none",
    feeds="triggers",
    parse=optional_count,
)
STATS_TOKEN_BUDGET = _flag(
    "token-budget",
    str,
    "none",
    "Report whether summarize would fire above this many estimated tokens (see --trigger-estimate).",
    scope=FILE,
    project=True,
    metavar="TOKENS|none",
    feeds="triggers",
    parse=optional_count,
)
STATS_TRIGGER_ESTIMATE = replace(TRIGGER_ESTIMATE, feeds="triggers")
TOP = _flag("top", int, 3, "How many of the largest messages to list.", project=True, min=0)

# -- convert and validate -----------------------------------------------------------------------

CONVERT_TO = _flag(
    "to",
    str,
    None,
    f"Output format (required): {names_text(CONVERTIBLE)}.",
    param="to_format",
    scope=FILE,
    project=True,
    optional=True,
    show_default=False,
    metavar="FORMAT",
    feeds="format",
    arg="to",
)
FOR = _flag(
    "for",
    str,
    None,
    f"Also check one provider's rules: {names_text(TARGETS, last=', ')}.",
    param="target",
    scope=FILE,
    project=True,
    optional=True,
    show_default=False,
    metavar="FORMAT",
    feeds="validation",
)

RESTORE_JSON = replace(JSON, help="Print a JSON report on standard output: the files restored, those refused and why.")

_OUTPUTS = (OUTPUT, IN_PLACE, BACKUP, FORCE, CHECK, JSON, VIEW, DIFF, QUIET, FOLLOW, EXCLUDE, INCLUDE)

COMMANDS: dict[str, tuple[Flag, ...]] = {
    "trim": (
        TRIM_MAX_MESSAGES,
        REMOVE_TOOL_MSGS,
        *_COMPACTION,
        *_OUTPUTS,
        FROM,
        TO,
        STRICT,
        FIX_CALL_IDS,
        LOSSLESS,
        ON_ERROR,
        JOBS,
        ENGINE,
        VERBOSE_WARNINGS,
    ),
    "summarize": (
        MODEL,
        SUMMARY_MAX_MESSAGES,
        TOKEN_BUDGET,
        TRIGGER_ESTIMATE,
        KEEP_RECENT,
        REMOVE_TOOL_MSGS,
        SUMMARY_SYSTEM_PROMPT,
        MAX_SUMMARY_TOKENS,
        MAX_INPUT_TOKENS,
        REQUIRE_FACTS,
        API_STYLE,
        PRESERVE_TOOL_PAIRS,
        TOOL_RESULTS,
        *_SUMMARY_SPAN,
        PROVIDER,
        BASE_URL,
        API_KEY_FILE,
        TIMEOUT,
        MAX_RETRIES,
        SUMMARY_CONCURRENCY,
        CACHE,
        NO_CACHE,
        CACHE_MAX_SIZE,
        DRY_RUN,
        *_OUTPUTS,
        VERBOSE,
        FROM,
        TO,
        SUMMARY_AS,
        STRICT,
        FIX_CALL_IDS,
        LOSSLESS,
        ON_ERROR,
        BATCH,
        WAIT,
        POLL_INTERVAL,
        BATCH_STATE,
        OFFLINE_JOBS,
        ENGINE,
    ),
    "run": (
        MANAGER,
        OPTION,
        *_COMPACTION,
        *_OUTPUTS,
        FROM,
        TO,
        SUMMARY_AS,
        STRICT,
        FIX_CALL_IDS,
        LOSSLESS,
        ON_ERROR,
        RUN_CONCURRENCY,
        VERBOSE,
    ),
    "stats": (
        STATS_MAX_MESSAGES,
        STATS_SUMMARY_MAX_MESSAGES,
        STATS_TOKEN_BUDGET,
        STATS_TRIGGER_ESTIMATE,
        TOP,
        FROM,
        JSON,
        FOLLOW,
        EXCLUDE,
        INCLUDE,
        VERBOSE_WARNINGS,
    ),
    "convert": (
        CONVERT_TO,
        FROM,
        SUMMARY_AS,
        OUTPUT,
        IN_PLACE,
        BACKUP,
        FORCE,
        QUIET,
        FOLLOW,
        JSON,
        EXCLUDE,
        INCLUDE,
        STRICT,
        FIX_CALL_IDS,
        LOSSLESS,
        ON_ERROR,
        JOBS,
        ENGINE,
        VERBOSE_WARNINGS,
    ),
    "validate": (FOR, FROM, JSON, QUIET, FOLLOW, EXCLUDE, INCLUDE, VERBOSE_WARNINGS),
    "restore": (RESTORE_JSON,),
    # Command groups: their subcommands' flags are not configured.
    "cache": (),
    "batch": (),
}
"""Each command's options, in the order its help lists them."""

PER_FILE: dict[str, frozenset[str]] = {
    name: frozenset(flag.param for flag in flags if flag.scope == FILE) for name, flags in COMMANDS.items() if flags
}
"""Per command, the parameters each file takes from its nearest configuration."""

PROJECT_MAY_SET: dict[str, frozenset[str]] = {
    name: frozenset(flag.config_key for flag in flags if flag.project) for name, flags in COMMANDS.items() if flags
}
"""Per command, the config keys (long flag names, or :attr:`Flag.key`) an untrusted
project file may set (default-deny)."""

PROJECT_LIMITS: dict[str, float] = {
    flag.name: flag.bound for flags in COMMANDS.values() for flag in flags if flag.bound is not None
}
"""The highest value a project file may set, by long flag name."""

ENV_OVERRIDES: dict[str, tuple[str, ...]] = {
    flag.param: flag.env for flags in COMMANDS.values() for flag in flags if flag.env
}
"""Parameters the user's environment decides when no flag is given, whatever file sets them."""


def flag_named(command: str, param: str) -> Flag:
    """``command``'s flag whose parameter is ``param``."""
    return next(flag for flag in COMMANDS[command] if flag.param == param)


def arguments(command: str, feeds: Feeds, params: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of the library object ``feeds`` names, from ``command``'s
    parameters: each flag that feeds it, by its keyword, parsed as its entry says."""
    found: dict[str, Any] = {}
    for flag in COMMANDS[command]:
        if flag.feeds == feeds:
            value = params[flag.param]
            found[flag.keyword] = flag.parse(value, flag.flag) if flag.parse is not None else value
    return found


def changed_arguments(command: str, feeds: Feeds, params: dict[str, Any]) -> dict[str, Any]:
    """:func:`arguments`, but only of the flags whose value is not their default."""
    found: dict[str, Any] = {}
    for flag in COMMANDS[command]:
        value = params[flag.param]
        # A repeatable option given no value arrives as an empty list.
        if flag.feeds == feeds and value != flag.default and not (flag.default is None and value in ([], ())):
            found[flag.keyword] = flag.parse(value, flag.flag) if flag.parse is not None else value
    return found
