"""Tables that stay readable at any width, on a terminal or in a pipe.

A table is printed when every cell fits whole in the console's width; otherwise each row
becomes one line of ``header value`` pairs (soft-wrapped by the terminal, one line in a
pipe, so ``grep`` still finds a file's row). Nothing is cut to ``co…`` and no column is
folded one letter a line.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

__all__ = ["print_rows"]

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
    for row in [*rows, *([footer] if footer is not None else [])]:
        label = ", ".join(cell for cell in row[:left] if cell)
        pairs = "; ".join(f"{header} {cell}" for header, cell in zip(headers[left:], row[left:], strict=True))
        out.print(Text(f"{label}: {pairs}"), soft_wrap=True)
