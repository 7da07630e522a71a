"""``ctxmgr cache``: what the summary cache holds, and removing entries from it.

Data (``info``, ``--json``) goes to standard output, messages to standard error. The
library (:mod:`ctxmgr.cache`) is imported inside the commands.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ctxmgr.cli.console import lazy_console, print_json, printable
from ctxmgr.cli.errors import handle_errors
from ctxmgr.cli.params import command

if TYPE_CHECKING:
    from ctxmgr.cache import ClearResult

__all__ = ["cache_app"]

cache_app = typer.Typer(
    name="cache",
    help="Show, prune or clear the summary cache.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    rich_markup_mode=None,
)

_err = lazy_console(stderr=True, highlight=False, emoji=False)

CacheDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="The cache folder (default: CTXMGR_CACHE_DIR, else the user cache folder).",
        show_default=False,
        metavar="DIR",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON report on standard output.")]
MaxSizeOpt = Annotated[
    str | None,
    typer.Option(
        "--max-size",
        help="The cache's size cap, e.g. 500MB or 1GiB (default: summarize's, else CTXMGR_CACHE_MAX_SIZE, else 256MB).",
        show_default=False,
        metavar="SIZE",
    ),
]


def _configured(ctx: typer.Context, param: str) -> tuple[Any, str] | None:
    """``summarize``'s configured ``param`` (``cache``, ``cache_max_size``) and its
    source: the folder and cap ``summarize`` itself would use (the user config, or a
    project trusted for it; the environment has already had its say)."""
    from ctxmgr.config import Config

    config = ctx.find_root().meta.get("ctxmgr.config")
    if not isinstance(config, Config) or param not in config.defaults.get("summarize", {}):
        return None
    return config.defaults["summarize"][param], config.sources["summarize"][param]


def _folder(ctx: typer.Context, cache: Path | None) -> Path:
    """``--cache``, else the folder ``summarize`` would use (configured, else
    ``CTXMGR_CACHE_DIR``, else the user cache folder)."""
    from ctxmgr.cache import default_cache_dir

    configured = _configured(ctx, "cache")
    return cache or (Path(configured[0]) if configured else default_cache_dir())


def _cap(ctx: typer.Context, max_size: str | None) -> tuple[int, str]:
    """``--max-size``, else the cap ``summarize`` would use, with where it came from."""
    from ctxmgr.cache import resolve_max_size

    configured = _configured(ctx, "cache_max_size") if max_size is None else None
    if configured is not None:
        return resolve_max_size(str(configured[0]), flag_name=configured[1])
    return resolve_max_size(max_size, flag_name="--max-size")


def _say(kind: str, text: str) -> None:
    # markup=False: paths and reasons are printed literally (a name with "[" stays).
    _err.print(f"{kind}{printable(text)}", markup=False, soft_wrap=True)


def _time(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    from datetime import datetime  # only when a time is shown: not on every command's start-up

    return datetime.fromtimestamp(timestamp).astimezone().isoformat(timespec="seconds")


def _write_json(payload: dict[str, Any]) -> None:
    print_json(payload)


@command(cache_app)
def info(
    ctx: typer.Context,
    cache: CacheDirOpt = None,
    max_size: MaxSizeOpt = None,
    json_report: JsonOpt = False,
) -> None:
    """Show the cache folder, its entries, their total size, the oldest and newest, and the cap."""
    from ctxmgr.cache import format_size, scan_cache

    with handle_errors(_err):
        folder = _folder(ctx, cache)
        cap, cap_source = _cap(ctx, max_size)
        contents = scan_cache(folder)
    oldest = contents.entries[0].mtime if contents.entries else None
    newest = contents.entries[-1].mtime if contents.entries else None
    if json_report:
        _write_json(
            {
                "folder": str(folder),
                "exists": contents.exists,
                "trusted": contents.untrusted is None,
                "untrusted_reason": contents.untrusted,
                "entries": len(contents.entries),
                "bytes": contents.size,
                "oldest": _time(oldest),
                "newest": _time(newest),
                "max_size": cap,
                "max_size_source": cap_source,
                "temporaries": len(contents.temporaries),
                "ignored": [{"path": path, "reason": reason} for path, reason in contents.ignored],
                "other_files": contents.other,
            }
        )
    else:
        lines = [
            f"folder:      {folder}" + ("" if contents.exists else " (does not exist yet)"),
            f"entries:     {len(contents.entries)} ({format_size(contents.size)})",
            f"oldest:      {_time(oldest) or '-'}",
            f"newest:      {_time(newest) or '-'}",
            f"max size:    {format_size(cap)} ({cap_source})",
        ]
        if contents.temporaries:
            lines.append(f"temporaries: {len(contents.temporaries)} (left by interrupted runs; 'clear' removes them)")
        if contents.other:
            lines.append(f"other files: {contents.other} (not the cache's; left alone)")
        sys.stdout.write("".join(printable(line) + "\n" for line in lines))
        sys.stdout.flush()
    if contents.untrusted is not None:
        _say("warning: ", f"{folder}: {contents.untrusted}")
    for path, reason in contents.ignored:
        _say("warning: ", f"{path}: {reason}; not trusted, summarize ignores it ('clear' removes entries)")


def _report_removal(result: ClearResult, folder: Path, what: str, json_report: bool, extra: dict[str, Any]) -> None:
    from ctxmgr.cache import format_size

    if json_report:
        _write_json(
            {
                "folder": str(folder),
                "removed": result.removed,
                "removed_bytes": result.removed_bytes,
                "left": [{"path": path, "reason": reason} for path, reason in result.left],
                **extra,
            }
        )
    else:
        _say(
            "",
            f"{what} {result.removed} {'entry' if result.removed == 1 else 'entries'} "
            f"({format_size(result.removed_bytes)}) from {folder}",
        )
    for path, reason in result.left:
        _say("warning: ", f"left {path}: {reason}; ctxmgr removes nothing it does not own")


@command(cache_app)
def clear(ctx: typer.Context, cache: CacheDirOpt = None, json_report: JsonOpt = False) -> None:
    """Remove every entry (and leftover temporary file) from the cache folder.

    Only the cache's own file names, inside subfolders you own that nobody else may
    write, never through a link. A folder you do not own, or that others may write, is
    refused (exit 2).
    """
    from ctxmgr.cache import clear_cache

    with handle_errors(_err):
        folder = _folder(ctx, cache)
        result = clear_cache(folder)
    _report_removal(result, folder, "removed", json_report, {})


@command(cache_app)
def prune(
    ctx: typer.Context,
    cache: CacheDirOpt = None,
    max_size: MaxSizeOpt = None,
    json_report: JsonOpt = False,
) -> None:
    """Evict the least recently used entries until the cache fits its size cap."""
    from ctxmgr.cache import prune_cache

    with handle_errors(_err):
        folder = _folder(ctx, cache)
        cap, _ = _cap(ctx, max_size)
        result = prune_cache(folder, cap)
    _report_removal(result, folder, "evicted", json_report, {"max_size": cap})
