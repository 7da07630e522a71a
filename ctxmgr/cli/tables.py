"""Tables that stay readable at any width, on a terminal or in a pipe.

A table is printed when every cell fits whole in the console's width; otherwise each row
becomes one line of ``header value`` pairs (soft-wrapped by the terminal, one line in a
pipe, so ``grep`` still finds a file's row). Nothing is cut to ``co…`` and no column is
folded one letter a line.

Rich draws the table; where it would write plain text (see
:func:`ctxmgr.cli.console.plain_width`) and every cell is printable ASCII,
:func:`plain_rows` writes the same lines without importing it. The two sit side by side
here, and ``tests/cli/test_plain_output.py`` holds them to the same bytes.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxmgr.cli.console import plain_text, plain_width

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["plain_rows", "print_rows"]


def print_rows(
    out: Console,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    footer: Sequence[str] | None = None,
    left: int = 1,
    title: str | None = None,
) -> None:
    """Print ``rows`` under ``headers`` (the first ``left`` columns left-aligned, the
    rest numbers, right-aligned), with an optional ``footer`` row of totals."""
    width = plain_width(out)
    lines = None if width is None else plain_rows(headers, rows, footer=footer, left=left, title=title, width=width)
    if lines is not None:
        sys.stdout.write("".join(line + "\n" for line in lines))
        sys.stdout.flush()
        return
    _rich_rows(out, headers, rows, footer=footer, left=left, title=title)


def _rich_rows(
    out: Console,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    footer: Sequence[str] | None,
    left: int,
    title: str | None,
) -> None:
    from rich import box
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, show_footer=footer is not None, pad_edge=False, expand=False)
    table.title = title
    table.title_justify = "left"
    for column, header in enumerate(headers):
        table.add_column(
            header,
            justify="left" if column < left else "right",
            no_wrap=True,
            footer=footer[column] if footer is not None else "",
        )
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    # Measured without the console's limit (which would clamp the answer to it).
    if Measurement.get(out, out.options.update_width(1 << 16), table).maximum <= out.width:
        out.print(table)
        return
    # Too narrow for a table: a row a line.
    if title:
        out.print(Text(title), soft_wrap=True)
    for line in _row_lines(headers, rows, footer, left):
        out.print(Text(line), soft_wrap=True)


def _row_lines(
    headers: Sequence[str], rows: Sequence[Sequence[str]], footer: Sequence[str] | None, left: int
) -> list[str]:
    """The rows as ``label: header value; ...`` lines, for a console too narrow for the table."""
    lines = []
    for row in [*rows, *([footer] if footer is not None else [])]:
        label = ", ".join(cell for cell in row[:left] if cell)
        pairs = "; ".join(f"{header} {cell}" for header, cell in zip(headers[left:], row[left:], strict=True))
        lines.append(f"{label}: {pairs}")
    return lines


def plain_rows(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    footer: Sequence[str] | None = None,
    left: int = 1,
    title: str | None = None,
    width: int,
) -> list[str] | None:
    """The lines :func:`print_rows` writes on a plain console ``width`` wide; ``None``
    when only Rich can tell (a cell that is not printable ASCII, markup in a header or the
    footer, a title wider than the table).

    Rich's ``box.SIMPLE_HEAD`` table without edge padding: a blank line, the headers, a
    rule, the rows, a blank line and the footer if any, a blank line; each line a space,
    the cells (one space of padding between columns, two with the rule's column gap) and
    a space.
    """
    cells = [*headers, *(cell for row in rows for cell in row), *(footer or ())]
    if not all(cell.isascii() and plain_text(cell) for cell in cells) or (
        title is not None and not (title.isascii() and plain_text(title))
    ):
        return None
    count = len(headers)
    widths = [
        max(len(headers[column]), *(len(row[column]) for row in rows), len(footer[column]) if footer else 0)
        for column in range(count)
    ]
    total = sum(widths) + 3 * count - 1
    if total > width:
        return ([title] if title else []) + _row_lines(headers, rows, footer, left)

    def line(row: Sequence[str]) -> str:
        return (
            " "
            + "   ".join(
                # Rich strips a right-aligned cell's trailing spaces before padding it.
                cell.ljust(size) if column < left else cell.rstrip().rjust(size)
                for column, (cell, size) in enumerate(zip(row, widths, strict=True))
            )
            + " "
        )

    blank = " " * total
    lines = [blank, line(headers), " " + "\u2500" * (total - 2) + " ", *(line(row) for row in rows), blank]
    if footer is not None:
        lines += [line(footer), blank]
    if title:
        if len(title) > total:
            return None  # Rich wraps it
        lines.insert(0, title.ljust(total))
    return lines
