"""The raw openai SDK: COUNT summaries requested at CONCURRENCY, one AsyncOpenAI client.

What a hand-written summarizer does at its simplest: one client with the SDK's defaults
(its connection pool, two retries on connection errors and 429/5xx), a semaphore, one
``responses.create`` per conversation with the conversation's text. Reads the same
dataset ctxmgr summarizes (OpenAI chat lines). Prints ``{"seconds": ..., "failed": n}``
(work time, after imports); exits 1 if any request failed.

Usage: python openai_sdk.py BASE_URL CONCURRENCY DATASET
"""

import asyncio
import sys
import time

import orjson
from openai import AsyncOpenAI

INSTRUCTIONS = "Summarize the conversation so far for the assistant that continues it."


def texts(path: str) -> list[str]:
    out = []
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                messages = orjson.loads(line)["messages"]
                out.append("\n".join(f"{m['role']}: {m.get('content') or ''}" for m in messages))
    return out


async def run(base_url: str, concurrency: int, items: list[str]) -> int:
    client = AsyncOpenAI(base_url=base_url, api_key="dummy")
    gate = asyncio.Semaphore(concurrency)
    failed = 0

    async def one(text: str) -> None:
        nonlocal failed
        async with gate:
            try:
                await client.responses.create(model="gpt-4o-mini", instructions=INSTRUCTIONS, input=text,
                                              max_output_tokens=600)
            except Exception as error:  # counted and reported: the run then exits 1
                failed += 1
                print(f"failed: {error!r}", file=sys.stderr)

    await asyncio.gather(*(one(t) for t in items))
    await client.close()
    return failed


def main() -> None:
    base_url, concurrency, dataset = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    items = texts(dataset)
    started = time.perf_counter()
    failed = asyncio.run(run(base_url, concurrency, items))
    print(orjson.dumps({"seconds": time.perf_counter() - started, "failed": failed}).decode())
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
