"""The ``ctxmgr`` command line. The only layer that knows Typer and Rich."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.console import Console

from ctxmgr import __version__, io
from ctxmgr.cli.diff import render_diff
from ctxmgr.cli.errors import EXIT_PROVIDER, handle_errors, report
from ctxmgr.errors import UsageError
from ctxmgr.pipeline import Outcome, acompact, compact
from ctxmgr.state import BaseContextManager, MessageContextManager

app = typer.Typer(
    name="ctxmgr",
    help="Compact saved LLM conversations offline: trim them or summarize their history.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # locals can hold API keys
    add_completion=False,
    rich_markup_mode=None,
)

err_console = Console(stderr=True, highlight=False)

FileArg = Annotated[
    str | None,
    typer.Argument(help="Conversation file (JSON or JSONL); '-' or nothing reads standard input.", show_default=False),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write here instead of standard output.", show_default=False),
]
InPlaceOpt = Annotated[bool, typer.Option("--in-place", "-i", help="Rewrite the input file.")]
DiffOpt = Annotated[
    bool | None,
    typer.Option("--diff/--no-diff", help="Show the diff view on standard error (default: when it is a terminal).", show_default=False),
]
FromOpt = Annotated[str | None, typer.Option("--from", help="Input format (default: detected).", show_default=False)]
RemoveToolOpt = Annotated[
    bool, typer.Option("--remove-tool-msgs", help="First drop completed tool-call sequences, keeping final answers.")
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ctxmgr {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """Compact saved LLM conversations offline: trim them or summarize their history."""


def _check_destination(file: str | None, output: Path | None, in_place: bool) -> Path | str | None:
    if in_place and output is not None:
        raise UsageError("--in-place and --output cannot be used together")
    if in_place:
        if io.is_stdio(file):
            raise UsageError("--in-place needs a file, not standard input")
        return file
    return output


def _show_diff(diff: bool | None) -> bool:
    return sys.stderr.isatty() if diff is None else diff


def _finish(outcome: Outcome, *, name: str, destination: Path | str | None, in_place: bool, diff: bool | None) -> None:
    if _show_diff(diff):
        render_diff(
            err_console,
            name=name,
            before=outcome.before,
            after=outcome.after,
            summary_before=outcome.summary_before,
            summary_after=outcome.summary_after,
        )
    for warning in outcome.conversation.warnings:
        err_console.print(f"[yellow]warning:[/] {name}: {warning}", soft_wrap=True)
    if in_place and not outcome.changed:
        return  # nothing to rewrite: leave the file (and its mtime) alone
    io.write_output(destination, outcome.output())


@app.command()
def trim(
    file: FileArg = None,
    max_messages: Annotated[int, typer.Option("--max-messages", "-n", min=0, help="User turns to keep.")] = 10,
    remove_tool_msgs: RemoveToolOpt = False,
    output: OutputOpt = None,
    in_place: InPlaceOpt = False,
    diff: DiffOpt = None,
    from_format: FromOpt = None,
) -> None:
    """Keep the system messages and the last N user turns."""
    with handle_errors(err_console):
        destination = _check_destination(file, output, in_place)
        data, name = io.read_bytes(file)
        manager: BaseContextManager[Any] = MessageContextManager(max_messages, remove_tool_msgs)
        outcome = compact(data, manager, source=name, fmt=from_format)
        _finish(outcome, name=name, destination=destination, in_place=in_place, diff=diff)


def _optional_count(value: str, flag: str) -> int | None:
    if value.lower() == "none":
        return None
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"{flag} must be a whole number or 'none', got {value!r}") from None
    if number < 0:
        raise UsageError(f"{flag} must be >= 0, got {number}")
    return number


@app.command()
def summarize(
    file: FileArg = None,
    model: Annotated[
        str, typer.Option("--model", "-m", help="Model: gpt-4o-mini, gemini-2.0-flash, openai/NAME, google/NAME, or 'offline'.")
    ] = "offline",
    max_messages: Annotated[
        str, typer.Option("--max-messages", help="Summarize when there are more messages than this ('none' disables).")
    ] = "30",
    token_budget: Annotated[
        str, typer.Option("--token-budget", help="Summarize when estimated tokens exceed this ('none' disables).")
    ] = "none",
    keep_recent: Annotated[int, typer.Option("--keep-recent", min=0, help="Newest non-system messages kept verbatim.")] = 8,
    remove_tool_msgs: RemoveToolOpt = False,
    summary_system_prompt: Annotated[
        str | None, typer.Option("--summary-system-prompt", help="Replace the summarization instruction.", show_default=False)
    ] = None,
    max_summary_tokens: Annotated[int, typer.Option("--max-summary-tokens", min=1, help="Output token cap of the summary.")] = 600,
    api_style: Annotated[str, typer.Option("--api-style", help="OpenAI API: 'responses' or 'chat'.")] = "responses",
    preserve_tool_pairs: Annotated[
        bool,
        typer.Option("--preserve-tool-pairs/--no-preserve-tool-pairs", help="Never split a tool call from its results."),
    ] = True,
    provider: Annotated[
        str | None, typer.Option("--provider", help="openai, google or offline (default: from the model name).", show_default=False)
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="API address, e.g. a local OpenAI-compatible server.", show_default=False)
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds per HTTP attempt.")] = 60.0,
    max_retries: Annotated[int, typer.Option("--max-retries", min=0, help="Retries on 429, 5xx and connection errors.")] = 2,
    output: OutputOpt = None,
    in_place: InPlaceOpt = False,
    diff: DiffOpt = None,
    from_format: FromOpt = None,
) -> None:
    """Replace older messages with an LLM-written summary, keeping the newest verbatim."""
    from ctxmgr.providers import ProviderOptions, get_summarizer
    from ctxmgr.state import SummaryContextManager

    with handle_errors(err_console):
        destination = _check_destination(file, output, in_place)
        if api_style not in ("responses", "chat"):
            raise UsageError(f"--api-style must be 'responses' or 'chat', got {api_style!r}")
        style: Literal["responses", "chat"] = "chat" if api_style == "chat" else "responses"
        data, name = io.read_bytes(file)
        options = ProviderOptions(base_url=base_url, timeout=timeout, max_retries=max_retries)
        # Building a summarizer is cheap: its SDK is imported and its key looked up on
        # the first call, so a file that needs no summary never needs a key.
        summarizer = get_summarizer(model, api_style=style, provider=provider, options=options)
        manager: BaseContextManager[Any] = SummaryContextManager(
            model,
            max_messages=_optional_count(max_messages, "--max-messages"),
            token_budget=_optional_count(token_budget, "--token-budget"),
            keep_recent=keep_recent,
            remove_tool_msgs=remove_tool_msgs,
            summary_system_prompt=summary_system_prompt,
            max_summary_tokens=max_summary_tokens,
            api_style=style,
            preserve_tool_pairs=preserve_tool_pairs,
            summarizer=summarizer,
            on_error="raise",
        )
        outcome = asyncio.run(acompact(data, manager, source=name, fmt=from_format))
        _finish(outcome, name=name, destination=destination, in_place=in_place, diff=diff)
        if outcome.error is not None:
            report(err_console, outcome.error)
            raise typer.Exit(EXIT_PROVIDER)
