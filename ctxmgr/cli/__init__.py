"""The command-line interface (Typer + Rich). The library never imports this package."""

import gc
import os

from ctxmgr._summarizer import freeze_after_setup
from ctxmgr.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    # Pydantic loads the plugins every installed package declares (entry points) when it
    # builds its first validator: a scan of all installed distributions (1 to 4 ms of each
    # command's start) and code the user did not ask ctxmgr to run. The command line does
    # not use them; a user who wants them sets PYDANTIC_DISABLE_PLUGINS themselves (an
    # empty value loads them all), and that choice is kept. Set here, not on import, so a
    # program that embeds the app or imports the package keeps its own plugins.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # One command a process: once a provider's client is built, the collector leaves the
    # objects of the start-up alone (see ctxmgr._summarizer.setup_done). Here, not in the
    # command: an app run inside another program (Typer's CliRunner) leaves its collector be.
    freeze_after_setup()
    try:
        app(prog_name="ctxmgr")  # the same name however it is started (python -m ctxmgr too)
    except BrokenPipeError:
        # Standard output closed while Click flushed it, after the command's own handler.
        from ctxmgr.cli.errors import closed_pipe

        raise SystemExit(closed_pipe()) from None
    except Exception as error:
        # Past every command's own handler (ctxmgr.cli.errors.handle_errors): Python would
        # print a traceback and exit 1, which a CI job reads as "found something".
        from ctxmgr.cli.console import lazy_console
        from ctxmgr.cli.errors import report_unexpected

        if os.environ.get("CTXMGR_DEBUG"):
            raise
        raise SystemExit(report_unexpected(lazy_console(stderr=True), error)) from None
    finally:
        # The interpreter's last garbage collections, at exit, walk every object left:
        # after a summary run (the SDK's hundreds of models and their schemas) that took
        # ~0.25 s, once the output was written. Frozen objects are skipped; what is
        # still referenced is freed as usual, and the outputs are closed by now.
        gc.freeze()
