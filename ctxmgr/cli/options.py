"""The output-side options every compacting command shares, and what they imply."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Options", "show_diff"]


@dataclass
class Options:
    """Output-side options shared by every compacting command.

    ``follow_symlinks``: folder walks and patterns follow symbolic links out of the tree,
    and writes go through a symbolic link to its target (both refused otherwise).
    """

    output: Path | str | None = None
    in_place: bool = False
    backup: bool | None = None
    """Keep a sidecar of what each written file loses (``None``: with ``in_place``)."""
    check: bool = False
    json_report: bool = False
    view: bool | None = None
    unified: bool = False
    quiet: bool = False
    follow_symlinks: bool = False
    exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    engine: str | None = None
    """Where dataset lines are compacted: ``None`` here, ``"ray"`` Ray Data tasks."""


def show_diff(options: Options) -> bool:
    """Whether the message-by-message view is shown (on a terminal unless asked otherwise).

    ``--diff`` is a view of its own: it shows the view box only when ``--view`` asks."""
    if options.quiet or options.json_report:
        return False
    if options.view is None:
        return not options.unified and sys.stderr.isatty()
    return options.view
