"""The flag table's entries of the compaction managers (``trim``'s ``--max-tokens`` and the
tool-output options), listed by :data:`ctxmgr.config._flags.COMMANDS`.

They say how to compact, so a project file may set them; the pins only come from the
user (command line, environment, user config): a pull request must not make CI run its
regular expression. Each feeds :func:`ctxmgr.state.compact_messages`' keyword of its name.
"""

from __future__ import annotations

from dataclasses import replace

from ctxmgr.config._flag import FILE, make_flag as _flag, patterns, positions, start_on

__all__ = ["COMPACTION", "SUMMARY_SPAN"]

MAX_TOKENS = _flag(
    "max-tokens",
    int,
    None,
    "Keep the newest messages within this many estimated TOKENS (as stats counts them, tool output "
    "included), whole tool-call/result pairs only; the rules, the last user request and pins always "
    "kept. Replaces the user-turn limit unless -n is given too (then both hold).",
    scope=FILE,
    project=True,
    optional=True,
    min=1,
    metavar="TOKENS",
    show_default=False,
    feeds="compaction",
)
START_ON = _flag(
    "start-on",
    str,
    None,
    "With --max-tokens: begin the kept messages on a user message when one fits.",
    scope=FILE,
    project=True,
    optional=True,
    metavar="[user]",
    show_default=False,
    feeds="compaction",
    parse=start_on,
)
CLEAR_TOOL_RESULTS = _flag(
    "clear-tool-results",
    bool,
    False,
    "Replace the results of all but the --keep-tool-results most recent tool calls by a placeholder "
    "naming the tool, the call and what was removed (with --max-tokens: oldest first, only while over it).",
    scope=FILE,
    project=True,
    feeds="compaction",
)
KEEP_TOOL_RESULTS = _flag(
    "keep-tool-results",
    int,
    3,
    "Most recent tool calls whose results --clear-tool-results keeps.",
    scope=FILE,
    project=True,
    min=0,
    metavar="N",
    feeds="compaction",
)
EXCLUDE_TOOL = _flag(
    "exclude-tool",
    list[str],
    None,
    "A tool whose results --clear-tool-results never clears; repeatable.",
    key="exclude-tools",
    scope=FILE,
    project=True,
    optional=True,
    metavar="NAME",
    show_default=False,
    feeds="compaction",
    arg="exclude_tools",
    parse=patterns,
)
CLEAR_TOOL_INPUTS = _flag(
    "clear-tool-inputs",
    bool,
    False,
    'With --clear-tool-results: also replace the cleared calls\' arguments by {"ctxmgr_cleared": "N characters"}.',
    scope=FILE,
    project=True,
    feeds="compaction",
)
MAX_TOOL_OUTPUT = _flag(
    "max-tool-output",
    int,
    None,
    "Cut every tool result over this many estimated TOKENS to its head and tail, with a marker naming "
    "the cut (JSON kept parseable where it can be; image and file parts replaced, never cut in half).",
    scope=FILE,
    project=True,
    optional=True,
    min=1,
    metavar="TOKENS",
    show_default=False,
    feeds="compaction",
)
PIN_INDEX = _flag(
    "pin-index",
    list[str],
    None,
    "With --max-tokens: never cut the message at this 0-based position of the input; repeatable.",
    scope=FILE,
    optional=True,
    metavar="N",
    show_default=False,
    feeds="compaction",
    parse=positions,
)
PIN_MATCH = _flag(
    "pin-match",
    list[str],
    None,
    "With --max-tokens: never cut a message whose text matches this regular expression; repeatable.",
    scope=FILE,
    optional=True,
    metavar="REGEX",
    show_default=False,
    feeds="compaction",
    parse=patterns,
)
COMPACTION = (
    MAX_TOKENS,
    START_ON,
    CLEAR_TOOL_RESULTS,
    KEEP_TOOL_RESULTS,
    EXCLUDE_TOOL,
    CLEAR_TOOL_INPUTS,
    MAX_TOOL_OUTPUT,
    PIN_INDEX,
    PIN_MATCH,
)

SUMMARY_SPAN = (
    replace(
        CLEAR_TOOL_RESULTS,
        help="In the messages sent to the model only (the kept ones are untouched): replace the results of "
        "all but the --keep-tool-results most recent tool calls by a placeholder naming the tool, the call and "
        "what was removed; the request says what was cleared.",
        feeds="manager",
    ),
    replace(KEEP_TOOL_RESULTS, feeds="manager"),
    replace(EXCLUDE_TOOL, feeds="manager"),
    replace(CLEAR_TOOL_INPUTS, feeds="manager"),
    replace(
        MAX_TOOL_OUTPUT,
        help="In the messages sent to the model only (the kept ones are untouched): cut every tool result "
        "over this many estimated TOKENS to its head and tail, with a marker naming the cut.",
        feeds="manager",
    ),
)
"""``summarize``'s tool-output options: the same flags, feeding the summary manager, which
applies them to the span it sends (:mod:`ctxmgr.state._span`)."""
