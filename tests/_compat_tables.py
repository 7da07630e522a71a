"""The tenxgraph compatibility lists of docs/tenxgraph.md, read as data (tests hold the code to them)."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = (Path(__file__).resolve().parent.parent / "docs" / "tenxgraph.md").read_text(encoding="utf-8")

TABLES = ("reference module", "reference class", "absent from ctxmgr")
"""The first header cell of each list: names per module, members per class, what is absent."""


def compat_tables() -> dict[str, dict[str, set[str]]]:
    """Per table (see :data:`TABLES`): the first cell's backticked name -> the second cell's names.

    A row of the absent table may name several things in its first cell; each maps to
    the reason's backticked names (usually none).
    """
    section = re.search(r"^## tenxgraph compatibility\n(.*?)(?=^## |\Z)", PAGE, flags=re.S | re.M)
    assert section, "docs/tenxgraph.md has no '## tenxgraph compatibility' section"
    tables: dict[str, dict[str, set[str]]] = {name: {} for name in TABLES}
    current: dict[str, set[str]] | None = None
    header = False
    for line in section.group(1).splitlines():
        if not line.startswith("|"):
            current, header = None, False
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if current is None and not header:
            current, header = tables.get(cells[0]), True
            continue
        if current is None or set(cells[0]) <= {"-", " ", ":"}:
            continue
        heads = re.findall(r"`([^`]+)`", cells[0])
        names = set(re.findall(r"`([^`]+)`", cells[1])) if len(cells) > 1 else set()
        for head in heads:
            current[head] = names
    return tables
