"""Output written without Rich is Rich's own, byte for byte.

:func:`ctxmgr.cli.console.print_line` and :func:`ctxmgr.cli.tables.print_rows` skip
importing Rich where it would write plain text (see :func:`ctxmgr.cli.console.plain_width`);
these tests print the same lines and tables both ways, on generated text and widths, and
compare. They pin Rich's rules (width, terminal detection, the ``SIMPLE_HEAD`` table): a
Rich that changes them fails here, not in a user's pipe.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from contextlib import redirect_stdout
from typing import Any
from unittest import mock

import pytest
from hypothesis import example, given, settings, strategies as st
from rich.console import Console

from ctxmgr.cli.console import escape, lazy_console, plain_width, print_line
from ctxmgr.cli.tables import print_rows


def _stdout_of(write: Callable[[Any], None], *, lazy: bool, tty: bool = False) -> bytes:
    """What ``write(console)`` puts on standard output, with a lazy console (plain where it
    can) or a Rich one."""

    class Stream(io.TextIOWrapper):
        def isatty(self) -> bool:
            return tty

    data = io.BytesIO()
    stream = Stream(data, encoding="utf-8", write_through=True)
    with redirect_stdout(stream):
        console = lazy_console(highlight=False, emoji=False) if lazy else Console(highlight=False, emoji=False)
        write(console)
    return data.getvalue()


ENVIRONMENTS = [
    {},
    {"COLUMNS": "100"},
    {"COLUMNS": "7"},
    {"COLUMNS": "0"},
    {"COLUMNS": "wide"},
    {"COLUMNS": "60", "LINES": "20"},
    {"FORCE_COLOR": "1"},
    {"FORCE_COLOR": ""},
    {"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"},
    {"TTY_COMPATIBLE": "1"},
    {"TTY_COMPATIBLE": "maybe", "COLUMNS": "90"},
    {"TERM": "dumb", "COLUMNS": "50"},
    {"NO_COLOR": "1", "COLUMNS": "100"},
]


@pytest.mark.parametrize("environment", ENVIRONMENTS, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items()) or "-")
@pytest.mark.parametrize("tty", [False, True])
@pytest.mark.parametrize("size", [None, (120, 30), (0, 0)], ids=["no-terminal", "terminal", "pseudo-terminal"])
def test_plain_width_is_richs_width_where_rich_writes_plain_text(
    environment: dict[str, str], tty: bool, size: tuple[int, int] | None
) -> None:
    def terminal_size(descriptor: int = 1) -> os.terminal_size:
        if size is None or descriptor == 0:  # standard input is no terminal: the next stream is asked
            raise OSError("not a terminal")
        return os.terminal_size(size)

    cleared = dict.fromkeys(("COLUMNS", "LINES", "FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR"), "")
    with mock.patch.dict(os.environ, cleared), mock.patch("os.get_terminal_size", terminal_size):
        for name in cleared:
            del os.environ[name]
        os.environ.update(environment)
        found: list[Any] = []
        _stdout_of(lambda console: found.append(plain_width(console)), lazy=True, tty=tty)
        rich: list[Console] = []
        _stdout_of(lambda console: rich.append(console), lazy=False, tty=tty)
        width = found[0]
        if width is not None:
            assert not rich[0].is_terminal
            assert rich[0].color_system is None
            assert width == rich[0].width
        else:
            assert rich[0].is_terminal or tty


def test_a_console_in_use_or_with_options_of_its_own_is_left_to_rich() -> None:
    console = lazy_console(highlight=False, emoji=False)
    assert plain_width(lazy_console(highlight=False, width=20)) is None
    assert plain_width(Console()) is None
    _stdout_of(lambda _: None, lazy=True)
    console.real()
    assert plain_width(console) is None


LINE_TEXT = st.one_of(
    st.text(st.characters(max_codepoint=0x7E, min_codepoint=0x20), max_size=40),
    st.text(max_size=20),
    st.sampled_from(["a.json: ok (1 conversation)", "[x] done", "a\\", "x\\[b]", "wide 漢字 text", "[bold]b[/]"]),
)


@settings(max_examples=300, deadline=None)
@given(text=LINE_TEXT, soft_wrap=st.booleans(), columns=st.sampled_from(["100", "30", "12", "1"]), dim=st.booleans())
def test_print_line_writes_what_rich_writes(text: str, soft_wrap: bool, columns: str, dim: bool) -> None:
    markup = (lambda: f"[dim]{escape(text)}[/]") if dim else None

    def write(console: Any) -> None:
        if isinstance(console, Console):  # what the Rich-only code printed
            console.print(markup() if markup else escape(text), soft_wrap=soft_wrap, highlight=False)
        else:
            print_line(console, text, markup=markup, soft_wrap=soft_wrap)

    with mock.patch.dict(os.environ, {"COLUMNS": columns}):
        assert _stdout_of(write, lazy=True) == _stdout_of(write, lazy=False)


CELL = st.one_of(
    st.text(st.characters(max_codepoint=0x7E, min_codepoint=0x20), max_size=9),
    st.sampled_from(["", "0", "1/2/3/4", "openai-chat", "yes", "[x]", "é", "a\\"]),
)


@settings(max_examples=300, deadline=None)
@given(
    columns=st.integers(1, 6).flatmap(
        lambda n: st.tuples(
            st.lists(CELL.filter(bool), min_size=n, max_size=n),
            st.lists(st.lists(CELL, min_size=n, max_size=n), max_size=3),
            st.one_of(st.none(), st.lists(CELL, min_size=n, max_size=n)),
            st.integers(0, n),
        )
    ),
    title=st.one_of(st.none(), st.sampled_from(["", "T", "Cache entries by kind", "a title wider than most tables"])),
    width=st.integers(8, 120),
)
# A right-aligned cell with a trailing space: Rich strips it before padding.
@example(columns=(["0 "], [["1 "]], None, 0), title=None, width=8)
def test_a_plain_table_is_richs_table(columns: tuple[Any, ...], title: str | None, width: int) -> None:
    headers, rows, footer, left = columns

    def write(console: Any) -> None:
        if isinstance(console, Console):
            from ctxmgr.cli.tables import _rich_rows

            _rich_rows(console, headers, rows, footer=footer, left=left, title=title)
        else:
            print_rows(console, headers, rows, footer=footer, left=left, title=title)

    with mock.patch.dict(os.environ, {"COLUMNS": str(width)}):
        assert _stdout_of(write, lazy=True) == _stdout_of(write, lazy=False)
