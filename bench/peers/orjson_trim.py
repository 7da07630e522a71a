"""Baseline: orjson alone. Load each record, slice its message list, dump it.

The same rule as ``ctxmgr trim --max-messages N``: when more than N messages have role
``user``, keep the system messages (first, in order) and the non-system messages from the
N-th user message from the end onward. Unchanged records are copied byte for byte, as
ctxmgr does. Prints ``{"seconds": ...}`` (work time, after imports) on stdout.

Usage: python orjson_trim.py KEY N INPUT OUTPUT (INPUT ending in .jsonl: one record a line)
"""

import sys
import time

import orjson


def trim(messages: list, keep: int) -> list | None:
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if len(users) <= keep:
        return None
    start = users[-keep] if keep else len(messages)
    system = [m for m in messages if m.get("role") == "system"]
    return system + [m for m in messages[start:] if m.get("role") != "system"]


def main() -> None:
    key, keep, source, target = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    started = time.perf_counter()
    with open(source, "rb") as infile, open(target, "wb") as outfile:
        if source.endswith(".jsonl"):
            for line in infile:
                if not line.strip():
                    outfile.write(line)
                    continue
                record = orjson.loads(line)
                kept = trim(record[key], keep)
                if kept is None:
                    outfile.write(line if line.endswith(b"\n") else line + b"\n")
                else:
                    record[key] = kept
                    outfile.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
        else:
            record = orjson.loads(infile.read())
            kept = trim(record[key], keep)
            if kept is not None:
                record[key] = kept
            outfile.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
    print(orjson.dumps({"seconds": time.perf_counter() - started}).decode())


if __name__ == "__main__":
    main()
