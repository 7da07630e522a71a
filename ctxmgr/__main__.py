"""``python -m ctxmgr``."""

from ctxmgr.cli import main

main()
