"""The flag table (ctxmgr.config): what it decides, what is derived from it, and that each
file takes exactly the per-file flags from its nearest configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer

from ctxmgr.cli import app
from ctxmgr.config import (
    COMMANDS,
    ENV_OVERRIDES,
    FILE,
    PER_FILE,
    PROJECT_LIMITS,
    PROJECT_MAY_SET,
    Flag,
    NearestConfigs,
    load_config,
)

_FORMATS = {"from_format", "to_format", "summary_as", "strict", "lossless", "on_error", "fix_call_ids"}
_COMPACTION = {
    "max_tokens",
    "start_on",
    "clear_tool_results",
    "keep_tool_results",
    "exclude_tool",
    "clear_tool_inputs",
    "max_tool_output",
}
_PINS = {"pin_index", "pin_match"}
# summarize's: cleared and cut in the span sent to the model.
_SPAN = {"clear_tool_results", "keep_tool_results", "exclude_tool", "clear_tool_inputs", "max_tool_output"}

# Written out, so that a change of scope or of trust is a visible change of this file.
EXPECTED_PER_FILE = {
    "trim": _FORMATS - {"summary_as"} | {"max_messages", "remove_tool_msgs", "session"} | _COMPACTION | _PINS,
    "summarize": _FORMATS
    | {
        "max_messages",
        "token_budget",
        "trigger_estimate",
        "keep_recent",
        "remove_tool_msgs",
        "summary_system_prompt",
        "max_summary_tokens",
        "require_facts",
        "require_all_facts",
        "preserve_tool_pairs",
        "tool_results",
        "session",
    }
    | _SPAN,
    "run": _FORMATS | _COMPACTION | _PINS | {"session"},
    "convert": _FORMATS | {"session"},
    "stats": {"max_messages", "summary_max_messages", "token_budget", "trigger_estimate", "from_format"},
    "validate": {"target", "from_format"},
    "restore": set(),
}

_COMMON = {"check", "view", "from", "to", "summary-as", "strict", "lossless", "on-error", "fix-call-ids", "verbose"}
_COMMON |= {"session"}  # which session of an Agents SDK session database: how to select
EXPECTED_PROJECT_MAY_SET = {
    "trim": _COMMON - {"summary-as"}
    | {"max-messages", "remove-tool-msgs", "jobs"}
    # How to compact; the pins (a regular expression CI would run) are the user's only.
    | {"max-tokens", "start-on", "clear-tool-results", "keep-tool-results", "exclude-tools", "clear-tool-inputs"}
    | {"max-tool-output"},
    "summarize": _COMMON
    | {
        "max-messages",
        "token-budget",
        "trigger-estimate",
        "keep-recent",
        "remove-tool-msgs",
        "max-summary-tokens",
        "require-facts",
        "require-all-facts",
        "api-style",
        "preserve-tool-pairs",
        "tool-results",
        "timeout",
        "max-retries",
        "concurrency",
        "jobs",
        "no-cache",
        "dry-run",
        "verbose",
    }
    | {"clear-tool-results", "keep-tool-results", "exclude-tools", "clear-tool-inputs", "max-tool-output"},
    "run": _COMMON
    | {"concurrency"}
    | {"max-tokens", "start-on", "clear-tool-results", "keep-tool-results", "exclude-tools", "clear-tool-inputs"}
    | {"max-tool-output"},
    "stats": {"max-messages", "summary-max-messages", "token-budget", "trigger-estimate", "top", "from", "verbose"},
    "convert": {"to", "from", "summary-as", "strict", "lossless", "on-error", "jobs", "fix-call-ids", "verbose"}
    | {"session"},
    "validate": {"for", "from", "verbose"},
    "restore": set(),
}

# Where data, keys or writes go, what code runs, what the model writes into a system
# message, and the size of the model's window (docs/threat-model.md, "Configuration").
USER_ONLY = {
    "model",
    "provider",
    "base-url",
    "api-key-file",
    "cache",
    "cache-max-size",
    "output",
    "in-place",
    "backup",
    "force",
    "follow-symlinks",
    "manager",
    "option",
    "summary-system-prompt",
    "max-input-tokens",
    "quiet",
    "json",
    "diff",
    "pin-index",
    "pin-match",
}

ALL_FLAGS = [(name, flag) for name, flags in COMMANDS.items() for flag in flags]


def test_per_file_is_what_the_table_says() -> None:
    assert {name: set(params) for name, params in PER_FILE.items()} == EXPECTED_PER_FILE


def test_project_may_set_is_what_the_table_says() -> None:
    assert {name: set(flags) for name, flags in PROJECT_MAY_SET.items()} == EXPECTED_PROJECT_MAY_SET


def test_bounds_and_environment_are_what_the_table_says() -> None:
    assert PROJECT_LIMITS == {
        "jobs": 8,
        "concurrency": 16,
        "max-retries": 5,
        "timeout": 600,
        "max-summary-tokens": 8192,
    }
    assert ENV_OVERRIDES == {"cache": ("CTXMGR_CACHE_DIR",), "cache_max_size": ("CTXMGR_CACHE_MAX_SIZE",)}


@pytest.mark.parametrize(("command", "flag"), ALL_FLAGS, ids=[f"{c}-{f.name}" for c, f in ALL_FLAGS])
def test_the_derived_sets_follow_each_entry(command: str, flag: Flag) -> None:
    assert (flag.param in PER_FILE[command]) is (flag.scope == FILE)
    assert (flag.config_key in PROJECT_MAY_SET[command]) is flag.project
    assert (PROJECT_LIMITS.get(flag.name) == flag.bound) or flag.bound is None
    assert ENV_OVERRIDES.get(flag.param, ()) == flag.env


@pytest.mark.parametrize(("command", "flag"), ALL_FLAGS, ids=[f"{c}-{f.name}" for c, f in ALL_FLAGS])
def test_each_entry_keeps_the_trust_rules(command: str, flag: Flag) -> None:
    # What a file takes from its own config is how it is compacted, never the run's outputs or model.
    if flag.scope == FILE:
        assert flag.feeds in ("manager", "compaction", "format", "triggers", "validation"), flag.name
    assert not (flag.project and flag.name in USER_ONLY), flag.name
    assert flag.bound is None or flag.project, flag.name  # a bound is what a project may set up to
    assert not (flag.env and flag.project), flag.name  # what the environment decides is the user's


def _long(param: Any) -> str:
    return str(param.opts[0])


def test_the_command_line_declares_exactly_the_table() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    for name, flags in COMMANDS.items():
        command = group.commands[name]
        if isinstance(command, typer.core.TyperGroup):
            assert flags == ()
            continue
        options = [p for p in command.params if isinstance(p, typer.core.TyperOption)]
        declared = [(_long(p), p.name, p.default, p.help, p.secondary_opts) for p in options]
        table = [
            (flag.flag, flag.param, flag.default, flag.help, [f"--no-{flag.name}"] if flag.negative else [])
            for flag in flags
        ]
        assert declared == table, name


# -- each file's nearest configuration ----------------------------------------------------


def _other_value(flag: Flag) -> Any:
    """A value of ``flag``'s type that is not its default (within its bound)."""
    if flag.kind is bool:
        return not flag.default
    if flag.kind in (int, float):
        return flag.kind((flag.default or 0) + 2)
    if flag.kind == list[str]:
        return ["elsewhere/*.json"]
    if flag.kind is str and str(flag.default).isdigit():
        return str(int(flag.default) + 1)
    return "elsewhere"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return f'"{value}"' if isinstance(value, str) else repr(value)


@pytest.mark.parametrize(("command", "flag"), ALL_FLAGS, ids=[f"{c}-{f.name}" for c, f in ALL_FLAGS])
def test_a_file_takes_exactly_the_per_file_flags_from_its_nearest_config(
    tmp_path: Path, command: str, flag: Flag
) -> None:
    here, nested = tmp_path / "here", tmp_path / "nested"
    here.mkdir()
    nested.mkdir()
    value = _other_value(flag)
    (nested / "ctxmgr.toml").write_text(f"[{command}]\n{flag.name} = {_toml(value)}\n", encoding="utf-8")
    configs = NearestConfigs(command, load_config(here), trust_flag=True)
    config = configs.config_for(str(nested / "chat.json"))
    assert config.path == nested / "ctxmgr.toml"
    run = {option.param: option.default for option in COMMANDS[command]}

    params, notes = configs.params(config, run, given=set())
    if flag.param in PER_FILE[command]:
        assert params[flag.param] == value
        assert notes == []
    else:
        assert params[flag.param] == flag.default
        assert len(notes) == 1
        assert f" {flag.name} is not used: it applies to the whole run" in notes[0]
    assert {k: v for k, v in params.items() if k != flag.param} == {k: v for k, v in run.items() if k != flag.param}

    # A flag the user gave stays as given, whatever the nearest file says.
    assert configs.params(config, run, given={flag.param}) == (run, [])
    # Standard input and the current folder's own file: the run's parameters as they are.
    assert configs.params(configs.config_for(None), run, given=set()) == (run, [])


# -- a new flag is one entry -----------------------------------------------------------------

_NEW_FLAG = """
import sys
from ctxmgr.config import COMMANDS, Flag

# The entry a new flag needs: here, the file Settings' `fast` (the trim fast path), per file.
fast = Flag("fast", "fast", bool, True, "Let plain trims skip building messages.", scope="file",
            project=True, negative=True, feeds="format")
COMMANDS["trim"] = (*COMMANDS["trim"], fast)

import ctxmgr.cli.run as run
from ctxmgr.cli import main

def seen(files, manager, settings, options, console, plans):
    print("fast:", settings.fast, [s.fast for _, s in plans([])], file=sys.stderr)
    return 0

run.run_files = seen
sys.argv = ["ctxmgr", *sys.argv[1:]]
main()
"""


def test_a_new_flag_is_one_entry_in_the_table(tmp_path: Path) -> None:
    import subprocess
    import sys

    def ctxmgr(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _NEW_FLAG, *args], cwd=tmp_path, capture_output=True, text=True, check=False
        )

    shown = ctxmgr("trim", "--help")
    assert shown.returncode == 0, shown.stderr
    assert "--fast / --no-fast" in shown.stdout
    assert "Let plain trims skip building messages." in shown.stdout
    assert "fast: False" in ctxmgr("trim", "--no-fast", "chat.json").stderr
    (tmp_path / "ctxmgr.toml").write_text("[trim]\nfast = false\n", encoding="utf-8")
    configured = ctxmgr("trim", "chat.json")
    assert "fast: False" in configured.stderr, configured.stderr
    assert "fast: True" in ctxmgr("trim", "--fast", "chat.json").stderr
