"""``summarize``'s run-wide parts: the summarizer chain its flags describe, the key file,
the provider batch, and how they combine into one run (see :func:`summarize_files`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ctxmgr import _provider_registry as provider_registry
from ctxmgr.cli.console import note
from ctxmgr.config import arguments
from ctxmgr.errors import UsageError

if TYPE_CHECKING:
    from ctxmgr.cli.flags import Values
    from ctxmgr.providers import Summarizer
    from ctxmgr.providers._batch.run import BatchRun

__all__ = ["batch_run", "jobs_note", "read_key_file", "summarizer"]

_KEY_FILE_LIMIT = 64 * 1024  # far beyond any key; a bigger file is the wrong file


def read_key_file(path: Path | None) -> str | None:
    """The key in ``path`` (surrounding whitespace removed); errors never quote the file.

    A regular file that other users can read gets a warning (the key is a credential);
    a pipe (``--api-key-file <(pass show openai)``) is read as it comes.
    """
    if path is None:
        return None
    import os
    import stat

    from ctxmgr._redact import check_key_text, remember_secret

    try:
        with open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            data = handle.read(_KEY_FILE_LIMIT + 1)
    except OSError as exc:
        raise UsageError(f"--api-key-file {path}: {exc.strerror or 'cannot read'}") from None
    if len(data) > _KEY_FILE_LIMIT:
        raise UsageError(f"--api-key-file {path}: larger than {_KEY_FILE_LIMIT // 1024} KiB, not a key file")
    try:
        key = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise UsageError(f"--api-key-file {path}: not UTF-8 text (is it saved as UTF-16?)") from None
    if not key or len(key.split()) != 1:
        raise UsageError(f"--api-key-file {path}: expected one key on one line")
    problem = check_key_text(key)
    if problem is not None:
        raise UsageError(f"--api-key-file {path}: {problem}")
    remember_secret(key)
    if stat.S_ISREG(mode) and mode & 0o077:
        shown_mode = f"{stat.S_IMODE(mode):03o}"
        note("warning", f"--api-key-file {path}: readable by other users (mode {shown_mode}); 'chmod 600' it")
    return key


def _provider_environment(
    ctx: typer.Context, model: str, provider: str | None, base_url: str | None, api_key_file: Path | None
) -> tuple[str | None, Path | None]:
    """``base_url`` and ``api_key_file``, less a configured one that the environment of
    the provider this run calls overrides (said in a note): the user's environment beats
    config files, and only the variables of that provider count."""
    from ctxmgr.config import Config, provider_overrides

    config = ctx.find_root().meta.get("ctxmgr.config")
    if not isinstance(config, Config):
        return base_url, api_key_file
    configured = {
        param: (source := ctx.get_parameter_source(param)) is not None and source.name == "DEFAULT_MAP"
        for param in ("base_url", "api_key_file")
    }
    notes = provider_overrides(config, provider or provider_registry.detect(model).provider, configured)
    for line in notes.values():
        note("note", line)
    return (None if "base_url" in notes else base_url), (None if "api_key_file" in notes else api_key_file)


def summarizer(ctx: typer.Context, flags: Values) -> Summarizer:
    """One chain for the whole run (its cache, its cap on calls in flight), shared by every
    file's manager. Building it is cheap: its SDK is imported and its key looked up on the
    first call, so a file that needs no summary never needs a key."""
    from ctxmgr.providers import SummarizerSettings, build_summarizer

    if flags.api_style not in ("responses", "chat"):
        raise UsageError(f"--api-style must be 'responses' or 'chat', got {flags.api_style!r}")
    chosen = arguments("summarize", "summarizer", flags.params)
    chosen["base_url"], api_key_file = _provider_environment(
        ctx, flags.model, flags.provider, flags.base_url, flags.api_key_file
    )
    cache_dir = None
    if not flags.no_cache:
        from ctxmgr.cache import default_cache_dir

        cache_dir = flags.cache or default_cache_dir()
    return build_summarizer(
        SummarizerSettings(
            **chosen,
            api_key=read_key_file(api_key_file),
            cache_dir=cache_dir,
            # Whether a summary would be made needs no model (the triggers decide):
            # the offline digest stands in, so a check needs no key and sends nothing.
            check=flags.check,
        )
    )


def batch_run(shared: Summarizer, flags: Values, files: list[str]) -> BatchRun | None:
    """``--batch``'s run over ``shared`` (the managers are handed its collector in place of
    the model), or ``None`` without ``--batch``; the batch flags without it are refused."""
    if not flags.batch:
        if flags.wait or flags.batch_state is not None:
            raise UsageError("--wait and --batch-state go with --batch")
        return None
    from ctxmgr.providers._batch.run import BatchRun, default_state_path

    if flags.check or flags.dry_run:
        raise UsageError("--batch sends requests; --check and --dry-run send none: use one or the other")
    state_path = flags.batch_state or default_state_path(files, flags.output, flags.in_place, flags.model)
    return BatchRun(shared, state_path, **arguments("summarize", "batch", flags.params))


def jobs_note(ctx: typer.Context, flags: Values, shared: Any) -> None:
    """Say that ``--jobs``, typed, does not apply to a network model's summaries. A
    config's jobs (for trims and the offline digest) is not repeated on every run."""
    from ctxmgr._summarizer import never_waits

    typed = (source := ctx.get_parameter_source("jobs")) is not None and source.name == "COMMANDLINE"
    jobs = flags.jobs
    if typed and jobs is not None and jobs > 1 and not (flags.quiet or flags.dry_run) and not never_waits(shared):
        note(
            "note",
            f"--jobs {jobs} is for --model offline: {shared.name}'s summaries run in one process, "
            "--concurrency calls at once",
        )
