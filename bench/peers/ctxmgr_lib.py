"""ctxmgr as a library: ``ctxmgr.files.compact_file`` with a ``MessageContextManager``.

The same code path as the CLI without Typer, Rich and the argument handling. Prints
``{"seconds": ...}`` (work time, after imports) on stdout; exits 2 on an input error.

Usage: python ctxmgr_lib.py KEY N INPUT OUTPUT (KEY is unused: the format is detected)
"""

import asyncio
import sys
import time

import orjson

from ctxmgr.files import FileSink, Settings, compact_file
from ctxmgr.state import MessageContextManager


def main() -> None:
    keep, source, target = int(sys.argv[2]), sys.argv[3], sys.argv[4]
    started = time.perf_counter()
    result = asyncio.run(compact_file(source, MessageContextManager(keep), FileSink(target), Settings()))
    elapsed = time.perf_counter() - started
    if result.input_error is not None:
        print(f"ctxmgr: {result.input_error}", file=sys.stderr)
        sys.exit(2)
    print(orjson.dumps({"seconds": elapsed, "conversations": result.conversations}).decode())


if __name__ == "__main__":
    main()
