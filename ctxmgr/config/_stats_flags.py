"""The flag table's entries of ``stats``' trigger report (which manager would fire),
listed by :data:`ctxmgr.config._flags.COMMANDS`.

They mirror the managers' limits under ``stats``' own defaults and feed
:class:`ctxmgr._stats.Triggers`; a project file may set them.
"""

from __future__ import annotations

from ctxmgr.config._flag import FILE, make_flag as _flag, optional_count

__all__ = ["STATS_MAX_MESSAGES", "STATS_SUMMARY_MAX_MESSAGES", "STATS_TOKEN_BUDGET"]

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
