"""Deterministic synthetic conversations for the benchmark.

Every conversation is drawn from ``random.Random(f"{SEED}-{kind}-{index}")``, so the same
index always gives the same bytes on any machine, and a smaller dataset is a prefix of a
larger one. Text comes from a fixed pool of sentences built from a fixed word list.

Two renderings of the same conversations:

* ``openai``: OpenAI chat, fine-tuning style: ``{"messages": [...], "tools": [...],
  "parallel_tool_calls": ...}`` with system prompts, user turns, assistant tool calls
  (sometimes parallel) and ``tool`` results;
* ``native``: ctxmgr's native ``{"context": [...]}`` rows (used until the OpenAI chat
  adapter exists).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

SEED = 20250101
GEN_VERSION = 1
"""Bump when the generator changes so stale files in bench/data are not reused."""

FORMATS = ("openai", "native")
LIST_KEY = {"openai": "messages", "native": "context"}

_WORD_TEXT = """
order account refund ticket flight booking seat baggage invoice payment card address delivery parcel
status update customer agent policy request change cancel confirm reservation passenger upgrade
cabin economy business insurance membership tier gold silver regular date time today tomorrow
morning evening please thanks sure check database record number identifier email phone profile city
airport origin destination return one way round trip price total amount balance certificate gift
voucher credit the a an of to for with on in at by from and or but not is are was were will would
could should can may might must have has had do does did be been being this that these those it its
we you they he she them us our your their my me I what which who when where why how all any some
each every many much more most few less least new old first last next previous same other such only
own very just also again still already
"""
_WORDS = _WORD_TEXT.split()
_TOOLS = ("get_order", "get_user_details", "search_flights", "update_reservation", "cancel_booking", "list_invoices")
_TOOL_SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name.replace('_', ' ').capitalize()} in the booking database.",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "string", "description": "The record identifier."}},
                "required": ["id"],
            },
        },
    }
    for name in _TOOLS
]


def _sentence_pool(size: int = 4096) -> list[str]:
    rng = random.Random(f"{SEED}-pool")
    pool = []
    for _ in range(size):
        words = rng.choices(_WORDS, k=rng.randint(6, 18))
        pool.append(" ".join(words).capitalize() + rng.choice((".", ".", ".", "?", "!")))
    return pool


_POOL = _sentence_pool()


def _text(rng: random.Random, low: int, high: int) -> str:
    """About ``low``-``high`` characters of text (whole sentences)."""
    target = rng.randint(low, high)
    parts: list[str] = []
    length = 0
    while length < target:
        sentence = rng.choice(_POOL)
        parts.append(sentence)
        length += len(sentence) + 1
    return " ".join(parts)


# A conversation is first drawn as neutral turns, then rendered in a format:
#   ("system", text) | ("user", text) | ("assistant", text)
#   | ("calls", [(id, name, arguments_json), ...]) | ("result", id, text)


def _turns(rng: random.Random, prefix: str, user_turns: int) -> Iterator[tuple[Any, ...]]:
    call = 0
    for _ in range(user_turns):
        yield ("user", _text(rng, 60, 500))
        if rng.random() < 0.55:
            calls = []
            for _ in range(1 if rng.random() < 0.7 else 2):
                call += 1
                arguments = json.dumps({"id": f"{rng.randint(10000, 99999)}", "detail": rng.choice(_WORDS)})
                calls.append((f"call_{prefix}_{call}", rng.choice(_TOOLS), arguments))
            yield ("calls", calls)
            for call_id, _name, _arguments in calls:
                payload = {"status": rng.choice(("ok", "pending", "shipped")), "note": _text(rng, 150, 1200)}
                yield ("result", call_id, json.dumps(payload))
        yield ("assistant", _text(rng, 100, 900))


def conversation_turns(index: int, *, kind: str = "dataset") -> list[tuple[Any, ...]]:
    """The turns of dataset conversation ``index``: a system prompt and 3-8 user turns."""
    rng = random.Random(f"{SEED}-{kind}-{index}")
    return [("system", _text(rng, 600, 2500)), *_turns(rng, f"{index}", rng.randint(3, 8))]


def long_conversation_turns(messages: int) -> list[tuple[Any, ...]]:
    """One conversation of exactly ``messages`` messages (a system prompt, then turns)."""
    rng = random.Random(f"{SEED}-long")
    turns: list[tuple[Any, ...]] = [("system", _text(rng, 600, 2500))]
    count = 1
    block = 0
    while count < messages:
        block += 1
        for turn in _turns(rng, f"b{block}", 4):
            # A ("calls", ...) turn is one message; every other turn is one message too.
            turns.append(turn)
            count += 1
            if count >= messages:
                break
    return turns[:messages]


def render(turns: list[tuple[Any, ...]], fmt: str, *, index: int = 0) -> dict[str, Any]:
    """The conversation record (one dataset line, or a whole document) in ``fmt``."""
    if fmt == "openai":
        return {"messages": [_openai(t) for t in turns], "tools": _TOOL_SCHEMAS, "parallel_tool_calls": True}
    if fmt == "native":
        return {
            "context": [_native(t, f"m{index}-{i}") for i, t in enumerate(turns)],
            "execution_meta": {"thread_id": f"thread-{index}"},
        }
    raise ValueError(f"unknown format {fmt!r}")


def _openai(turn: tuple[Any, ...]) -> dict[str, Any]:
    kind = turn[0]
    if kind == "calls":
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in turn[1]
            ],
        }
    if kind == "result":
        return {"role": "tool", "tool_call_id": turn[1], "content": turn[2]}
    return {"role": kind, "content": turn[1]}


def _native(turn: tuple[Any, ...], message_id: str) -> dict[str, Any]:
    kind = turn[0]
    if kind == "calls":
        return {
            "message_id": message_id,
            "role": "assistant",
            "content": [],
            "tools_calls": [
                {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in turn[1]
            ],
        }
    if kind == "result":
        return {
            "message_id": message_id,
            "role": "tool",
            "content": [{"type": "tool_result", "call_id": turn[1], "output": turn[2]}],
        }
    return {"message_id": message_id, "role": kind, "content": [{"type": "text", "text": turn[1]}]}


# -- files ---------------------------------------------------------------------------


def _write_atomic(path: Path, chunks: Iterator[bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as handle:
        for chunk in chunks:
            handle.write(chunk)
    partial.replace(path)


def conversation_file(folder: Path, fmt: str, messages: int) -> Path:
    """A single-conversation JSON document of ``messages`` messages (created once)."""
    path = folder / f"v{GEN_VERSION}-{fmt}-conversation-{messages}.json"
    if not path.exists():
        record = render(long_conversation_turns(messages), fmt)
        _write_atomic(path, iter([orjson.dumps(record) + b"\n"]))
    return path


def dataset_file(folder: Path, fmt: str, megabytes: float) -> tuple[Path, int]:
    """A JSONL dataset of at least ``megabytes`` MB; returns ``(path, line count)``."""
    path = folder / f"v{GEN_VERSION}-{fmt}-dataset-{megabytes:g}mb.jsonl"
    if not path.exists():
        target = int(megabytes * 1_000_000)

        def lines() -> Iterator[bytes]:
            written = 0
            index = 0
            while written < target:
                line = orjson.dumps(render(conversation_turns(index), fmt, index=index)) + b"\n"
                written += len(line)
                index += 1
                yield line

        _write_atomic(path, lines())
    with open(path, "rb") as handle:
        count = sum(1 for _ in handle)
    return path, count


def summarize_file(folder: Path, fmt: str, conversations: int) -> Path:
    """A dataset of ``conversations`` shortish conversations, each needing a summary."""
    path = folder / f"v{GEN_VERSION}-{fmt}-summarize-{conversations}.jsonl"
    if not path.exists():

        def lines() -> Iterator[bytes]:
            for index in range(conversations):
                rng = random.Random(f"{SEED}-summarize-{index}")
                turns = [("system", _text(rng, 200, 600)), *_turns(rng, f"s{index}", 8)]
                yield orjson.dumps(render(turns, fmt, index=index)) + b"\n"

        _write_atomic(path, lines())
    return path


# -- the real conversations, in every format ----------------------------------------------

TAU = Path(__file__).resolve().parent / "tau" / "tau-airline-gpt4o.jsonl"
CTXMGR_FORMATS = ("openai-chat", "native", "langchain", "anthropic", "openai-responses", "gemini")
TAU_VERSION = 1
"""Bump when the way the tau datasets are built changes (or a converter's output does)."""


def tau_dataset(folder: Path, fmt: str, megabytes: float, convert: list[str]) -> tuple[Path, int]:
    """The 200 tau-bench conversations repeated to at least ``megabytes`` MB in ``fmt``.

    The 200 lines are converted once with ``ctxmgr convert`` (``convert`` is the command
    before its arguments) and the converted lines repeated, which gives the bytes
    converting the repeated file would give, in a fraction of the time. Returns
    ``(path, line count)``.
    """
    path = folder / f"tau{TAU_VERSION}-{fmt}-{megabytes:g}mb.jsonl"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        converted = folder / f"tau{TAU_VERSION}-{fmt}-200.jsonl"
        if not converted.exists():
            if fmt == "openai-chat":
                converted.write_bytes(TAU.read_bytes())
            else:
                import subprocess

                partial = converted.with_name(converted.name + ".partial")
                # Anthropic refuses the tool-call ids tau-bench reuses: renumbered, each with its results.
                fix = ["--fix-call-ids"] if fmt == "anthropic" else []
                subprocess.run([*convert, str(TAU), "--to", fmt, *fix, "-o", str(partial), "--quiet"], check=True)
                partial.replace(converted)
        lines = [line if line.endswith(b"\n") else line + b"\n" for line in converted.read_bytes().splitlines()]
        target = int(megabytes * 1_000_000)

        def repeated() -> Iterator[bytes]:
            written = 0
            while written < target:
                for line in lines:
                    yield line
                    written += len(line)
                    if written >= target:
                        break

        _write_atomic(path, repeated())
    with open(path, "rb") as handle:
        count = sum(1 for _ in handle)
    return path, count
