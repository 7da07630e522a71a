"""Plain command-line values converted without pydantic (ctxmgr.cli.params)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.cli.params import PlainCommand, plain_values
from ctxmgr.config._values import Plain, _convert

runner = CliRunner()


class _Info:
    def __init__(self, low: float | None = None, high: float | None = None) -> None:
        self.min, self.max = low, high


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    turns = [{"role": r, "content": f"{r}{i}"} for i in range(3) for r in ("user", "assistant")]
    path.write_bytes(orjson.dumps({"messages": turns}))
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["trim", "-n", "abc"], "Invalid value for '--max-messages' / '-n': 'abc' is not a valid integer."),
        (["trim", "-n", "1.5"], "'1.5' is not a valid integer."),
        (["trim", "-n", "-1"], "-1 is not in the range x>=0."),
        (["summarize", "--model", "offline", "--timeout", "soon"], "'soon' is not a valid number."),
        (["summarize", "--model", "offline", "--concurrency", "0"], "0 is not in the range x>=1."),
    ],
)
def test_bad_values_name_the_option_and_the_value(chat: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, [*args, str(chat)])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_good_values_reach_the_command(chat: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["trim", str(chat), "-n", " 2 ", "-o", str(out), "--no-view"])
    assert result.exit_code == 0, result.output
    assert [m["content"] for m in orjson.loads(out.read_bytes())["messages"]] == [
        "user1",
        "assistant1",
        "user2",
        "assistant2",
    ]


def test_configured_values_are_converted_too(chat: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ctxmgr.toml").write_text("[trim]\nmax-messages = 1\n")
    result = runner.invoke(app, ["trim", str(chat), "--no-view"])
    assert result.exit_code == 0, result.output
    assert [m["content"] for m in orjson.loads(result.stdout)["messages"]] == ["user2", "assistant2"]


@given(st.integers(min_value=0, max_value=10**30))
def test_whole_numbers_convert(number: int) -> None:
    assert _convert(int, str(number), _Info(0)) == number
    assert _convert(int, f"+{number}", _Info(0)) == number
    assert _convert(int, number, _Info(0)) == number


@given(st.text().filter(lambda s: not s.strip().lstrip("+-").isdigit() or not s.strip().isascii()))
def test_anything_else_is_not_an_integer(text: str) -> None:
    with pytest.raises(ValueError, match="is not a valid integer"):
        _convert(int, text, _Info())


@pytest.mark.parametrize(
    ("kind", "value", "expected"),
    [
        (float, "2.5", 2.5),
        (float, 3, 3.0),
        (bool, "yes", True),
        (bool, "Off", False),
        (bool, True, True),
        (bool, 1, True),
        (bool, "", False),
        (str, "x", "x"),
        (str, 6000, "6000"),
        (int, "1_000", 1000),
        (int, 6.0, 6),
    ],
)
def test_other_plain_kinds(kind: type, value: Any, expected: Any) -> None:
    assert _convert(kind, value, _Info()) == expected


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        (int, True),
        (float, False),
        (float, None),
        (float, "nan"),
        (float, float("nan")),
        (bool, "maybe"),
        (bool, 2),
        (str, None),
        (str, [1]),
        (int, 2.5),
        (int, "\u0663"),  # an Arabic-Indic 3: a digit to Unicode, not to the command line
    ],
)
def test_wrong_kinds_are_refused(kind: type, value: Any) -> None:
    with pytest.raises(ValueError, match="is not a valid"):
        _convert(kind, value, _Info())


def test_ranges_are_checked_at_both_ends() -> None:
    with pytest.raises(ValueError, match=r"11 is not in the range 1<=x<=10\."):
        _convert(int, "11", _Info(1, 10))
    with pytest.raises(ValueError, match=r"0.5 is not in the range x>=1\."):
        _convert(float, "0.5", _Info(1))
    assert _convert(int, "10", _Info(1, 10)) == 10


def test_paths_and_choices_stay_with_typer() -> None:
    from typer.main import get_command

    summarize = get_command(app).commands["summarize"]  # type: ignore[attr-defined]
    plain = plain_values(summarize)
    assert "api_key_file" not in plain  # a Path: Typer converts it
    assert "cache" not in plain
    assert plain["concurrency"] == Plain(int, min=1)
    assert plain["timeout"] == Plain(float, min=0.1)
    assert plain["exclude"] == Plain(str, many=True)
    assert plain["files"] == Plain(str, many=True)
    assert plain["view"] == Plain(bool)  # bool | None
    assert plain["max_messages"] == Plain(str)


def test_every_command_converts_its_plain_values_itself() -> None:
    """A command declared with Typer's own decorator would convert through pydantic."""
    from typer.core import TyperGroup
    from typer.main import get_command

    def commands(group: TyperGroup) -> list[object]:
        found: list[object] = []
        for sub in group.commands.values():
            found.extend(commands(sub) if isinstance(sub, TyperGroup) else [sub])
        return found

    root = get_command(app)
    assert isinstance(root, TyperGroup)
    every = commands(root)
    assert len(every) >= 10
    for sub in every:
        assert isinstance(sub, PlainCommand), sub
        assert plain_values(sub), sub  # its annotations were read (none hidden behind TYPE_CHECKING)
    trim = plain_values(root.commands["trim"])
    assert trim["max_messages"] == Plain(int, min=0)
    assert set(trim) >= {"files", "max_messages", "output", "in_place", "exclude", "jobs", "on_error"}


@pytest.mark.parametrize(
    ("toml", "args"),
    [
        ("[summarize]\ntoken-budget = 6000\n", ["summarize", "--model", "offline", "--dry-run"]),
        ("max-messages = 6\n", ["summarize", "--model", "offline", "--dry-run"]),
        ("max-messages = 6\n", ["trim", "--check"]),
        ("[trim]\nstrict = 1\n", ["trim", "--check"]),
    ],
)
def test_config_values_of_any_plain_toml_type_are_taken(
    chat: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, args: list[str]
) -> None:
    """The config examples of docs/configuration.md: a TOML integer for a string option, and so on."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ctxmgr.toml").write_text(toml)
    result = runner.invoke(app, [*args, str(chat)])
    assert result.exit_code in (0, 1), result.output
    assert "not a valid" not in result.output


@pytest.mark.parametrize(
    "args",
    [["--version"], ["-h"], ["trim", "--help"], ["summarize", "-h"], ["trim", "-n", "abc"], ["trim", "--bogus"]],
)
def test_help_version_and_usage_errors_need_no_pydantic(args: list[str]) -> None:
    """Start-up: Typer converts through pydantic; these convert nothing of Typer's."""
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: sys.stderr.write('\\nMODULES=' + ','.join(sorted(sys.modules)) + '\\n'))\n"
        f"sys.argv = ['ctxmgr', *{args!r}]\n"
        "runpy.run_module('ctxmgr', run_name='__main__')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False)
    assert proc.returncode in (0, 2), proc.stderr
    modules = set(proc.stderr.decode().splitlines()[-1].removeprefix("MODULES=").split(","))
    assert "typer._adapters" not in modules
    assert not {m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core", "rich")}


def test_extra_arguments_are_refused_as_click_refuses_them() -> None:
    """PlainCommand repeats click's loop: its end too, control characters shown escaped."""
    result = runner.invoke(app, ["cache", "info", "extra\x1b[31m", "two"])
    assert result.exit_code == 2
    assert "Error: Got unexpected extra argument(s) (extra\\x1b[31m two)" in result.output
    assert "\x1b" not in result.output

