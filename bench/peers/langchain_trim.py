"""LangChain: ``trim_messages`` with the messages converted in and out.

Each record's messages become LangChain messages (``convert_to_messages``), are trimmed
to the last N human turns (a token counter that counts human messages, ``start_on``
human, system kept), and are converted back with ``convert_to_openai_messages``. Native
ctxmgr rows (the fallback dataset) are first mapped to OpenAI dicts. Prints
``{"seconds": ...}`` on stdout.

Usage: python langchain_trim.py KEY N INPUT OUTPUT
"""

import sys
import time

import orjson
from langchain_core.messages import BaseMessage, convert_to_messages, convert_to_openai_messages, trim_messages


def count_user(message: BaseMessage) -> int:  # annotated: LangChain then counts per message
    return 1 if message.type == "human" else 0


def native_to_openai(message: dict) -> dict:
    role = message["role"]
    text = "".join(b.get("text", "") for b in message.get("content", []) if b.get("type") == "text")
    if role == "tool":
        result = next(b for b in message["content"] if b.get("type") == "tool_result")
        output = result.get("output")
        return {"role": "tool", "tool_call_id": result["call_id"],
                "content": output if isinstance(output, str) else orjson.dumps(output).decode()}
    out = {"role": role, "content": text}
    if message.get("tools_calls"):
        out["tool_calls"] = message["tools_calls"]
    return out


def trim(messages: list, keep: int, native: bool) -> list:
    if native:
        messages = [native_to_openai(m) for m in messages]
    kept = trim_messages(
        convert_to_messages(messages),
        max_tokens=keep,
        token_counter=count_user,
        strategy="last",
        start_on="human",
        include_system=True,
    )
    return convert_to_openai_messages(kept)


def main() -> None:
    key, keep, source, target = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    native = key == "context"
    started = time.perf_counter()
    with open(source, "rb") as infile, open(target, "wb") as outfile:
        if source.endswith(".jsonl"):
            for line in infile:
                if not line.strip():
                    continue
                record = orjson.loads(line)
                record[key] = trim(record[key], keep, native)
                outfile.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
        else:
            record = orjson.loads(infile.read())
            record[key] = trim(record[key], keep, native)
            outfile.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
    print(orjson.dumps({"seconds": time.perf_counter() - started}).decode())


if __name__ == "__main__":
    main()
