"""The flag table's entries of the summary manager (when to summarize, what is kept, the
summary's size and the fact check), listed by :data:`ctxmgr.config._flags.COMMANDS`.

Each feeds :class:`ctxmgr.state.SummaryContextManager`'s keyword of its name.
"""

from __future__ import annotations

from ctxmgr.config._flag import FILE, make_flag as _flag, optional_count

__all__ = [
    "KEEP_RECENT",
    "MAX_INPUT_TOKENS",
    "MAX_SUMMARY_TOKENS",
    "REQUIRE_ALL_FACTS",
    "REQUIRE_FACTS",
    "SUMMARY_MAX_MESSAGES",
    "SUMMARY_SYSTEM_PROMPT",
    "TOKEN_BUDGET",
]

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
    "When a summary lacks required facts of its span (what the user said, arguments of calls that "
    "change something, what the user was told), ask once more for them; still missing: exit 3, unchanged.",
    scope=FILE,
    project=True,
    feeds="manager",
)
REQUIRE_ALL_FACTS = _flag(
    "require-all-facts",
    bool,
    False,
    "--require-facts for every fact of the span, optional ones too (postcodes, timestamps, rows "
    "looked up and never used).",
    scope=FILE,
    project=True,
    feeds="manager",
)
