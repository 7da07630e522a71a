"""Baseline: orjson alone. Load each record, slice its message list, dump it.

The same rule as ``ctxmgr trim --max-messages N``, written for each format: when more
than N messages are user turns, keep the system messages (first, in order) and the
non-system messages from the N-th user turn from the end onward. A user turn is a user
message that is not only tool results (Anthropic and Gemini carry tool results in user
messages). Formats whose system prompt sits beside the list (Anthropic ``system``,
Gemini ``systemInstruction``) keep it there untouched. Unchanged records are copied byte
for byte, as ctxmgr does. Prints ``{"seconds": ...}`` (work time, after imports).

Usage: python orjson_trim.py FORMAT N INPUT OUTPUT (FORMAT: native, openai-chat,
openai-responses, anthropic, gemini, langchain; INPUT ending in .jsonl: one record a line)
"""

import sys
import time

import orjson


def _chat_user(m: dict) -> bool:
    return m.get("role") == "user"


def _chat_system(m: dict) -> bool:
    return m.get("role") in ("system", "developer")


def _responses_user(m: dict) -> bool:
    return m.get("type", "message") == "message" and m.get("role") == "user"


def _responses_system(m: dict) -> bool:
    return m.get("type", "message") == "message" and m.get("role") in ("system", "developer")


def _anthropic_user(m: dict) -> bool:
    if m.get("role") != "user":
        return False
    content = m.get("content")
    return not (isinstance(content, list) and content and all(b.get("type") == "tool_result" for b in content))


def _gemini_user(m: dict) -> bool:
    if m.get("role") != "user":
        return False
    parts = m.get("parts") or []
    return not (parts and all("functionResponse" in p for p in parts))


def _never(m: dict) -> bool:
    return False


def _langchain_kind(m: dict) -> object:
    data = m.get("data")
    return m.get("type") if isinstance(data, dict) else m.get("type", m.get("id"))


FORMATS = {
    # format: (list key, is a user turn, is a system message)
    "native": ("context", _chat_user, _chat_system),
    "openai-chat": ("messages", _chat_user, _chat_system),
    "openai-responses": ("input", _responses_user, _responses_system),
    "anthropic": ("messages", _anthropic_user, _never),
    "gemini": ("contents", _gemini_user, _never),
    "langchain": ("messages", lambda m: _langchain_kind(m) == "human", lambda m: _langchain_kind(m) == "system"),
}


def trim(messages: list, keep: int, is_user, is_system) -> list | None:
    users = [i for i, m in enumerate(messages) if is_user(m)]
    if len(users) <= keep:
        return None
    start = users[-keep] if keep else len(messages)
    system = [m for m in messages if is_system(m)]
    return system + [m for m in messages[start:] if not is_system(m)]


def main() -> None:
    fmt, keep, source, target = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    key, is_user, is_system = FORMATS[fmt]
    started = time.perf_counter()
    with open(source, "rb") as infile, open(target, "wb") as outfile:
        if source.endswith(".jsonl"):
            for line in infile:
                if not line.strip():
                    outfile.write(line)
                    continue
                record = orjson.loads(line)
                kept = trim(record[key], keep, is_user, is_system)
                if kept is None:
                    outfile.write(line if line.endswith(b"\n") else line + b"\n")
                else:
                    record[key] = kept
                    outfile.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
        else:
            record = orjson.loads(infile.read())
            kept = trim(record[key], keep, is_user, is_system)
            if kept is not None:
                record[key] = kept
            outfile.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
    print(orjson.dumps({"seconds": time.perf_counter() - started}).decode())


if __name__ == "__main__":
    main()
