"""The command-line interface (Typer + Rich). The library never imports this package."""

import gc

from ctxmgr.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    finally:
        # The interpreter's last garbage collections, at exit, walk every object left:
        # after a summary run (the SDK's hundreds of models and their schemas) that took
        # ~0.25 s, once the output was written. Frozen objects are skipped; what is
        # still referenced is freed as usual, and the outputs are closed by now.
        gc.freeze()
