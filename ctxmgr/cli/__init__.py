"""The command-line interface (Typer + Rich). The library never imports this package."""

from ctxmgr.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """Console-script entry point."""
    app()
