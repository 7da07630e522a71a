"""Resources: a slow server, endless or binary input, deep nesting and odd numbers.

None of them may hold a run, exhaust memory, crash or silently change data:

* ``--timeout`` bounds each attempt as a whole: a server that answers one byte at a
  time (each read well within any per-read timeout) ends the run in about the timeout,
  for the OpenAI Responses API, Chat Completions and Gemini, through the real SDKs;
* input that cannot be a conversation (``/dev/zero``, a sparse 2 GB file of NULs, a
  valid start followed by NULs, a dataset line of 2 GB of NULs) is refused at the first
  chunk that shows it, with one line naming the file, line and column, by every command
  that reads, in bounded memory (each child's peak RSS is measured; its address space
  is capped so a regression fails instead of taking the machine's memory);
* values nested up to the parser's 1,024 levels (tool-call arguments, tool results)
  work in every format and every command; arguments held in a string nested deeper
  are kept as a string, with a warning;
* a number whose written form would change its value (``1e-400``,
  ``0.1000000000000000000001``) is refused like an integer beyond 64 bits, while forms
  that keep the value (``1E2``, ``-0.0``) are read and written back as the same number.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import SAMPLES
from llm_server import LLMServer, Reply
from typer.testing import CliRunner, Result

from ctxmgr import formats
from ctxmgr.cli import app
from ctxmgr.errors import ProviderError
from ctxmgr.providers._answers import answer_bytes
from ctxmgr.providers._base import ProviderOptions
from ctxmgr.providers._gemini import GeminiSummarizer
from ctxmgr.providers._openai import OpenAISummarizer

runner = CliRunner()
MANAGER = f"{SAMPLES / 'managers' / 'keep_last.py'}:KeepLastMessages"
FORMATS = ("native", "openai-chat", "openai-responses", "anthropic", "gemini", "langchain")
GIB = 1024**3


# -- running ctxmgr as a process, measured -----------------------------------------------------------


@dataclass
class Run:
    code: int
    stdout: bytes
    stderr: str
    seconds: float
    peak_rss: int  # bytes


_ADDRESS_SPACE = 1 * GIB


# A small launcher starts ctxmgr and reports that process's own peak RSS. Measured from
# the test process itself, the figure would include the test process: on Linux a child's
# peak starts at its parent's size at fork and survives the exec, and the test process
# can have grown to hundreds of MB by then. The launcher is small, so its child's peak is
# ctxmgr's. The address-space cap (inherited) is far above what ctxmgr needs (about
# 300 MB), far below reading 2 GB.
_LAUNCHER = """
import os, resource, subprocess, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
child = subprocess.Popen(sys.argv[3:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as report:
    report.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_ctxmgr(*args: str, stdin: Any = subprocess.DEVNULL, timeout: float = 30, cwd: Path | None = None) -> Run:
    """Run ``python -m ctxmgr ARGS``, with its own peak RSS (not the test process's)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as spot:
        peak_file = os.path.join(spot, "peak")
        start = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, peak_file, str(_ADDRESS_SPACE), sys.executable, "-m", "ctxmgr", *args],
            stdin=stdin,
            stdout=out,
            stderr=err,
            cwd=cwd,
            start_new_session=True,  # so a timeout ends the launcher and ctxmgr together
        )
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise AssertionError(f"ctxmgr {' '.join(args)} still running after {timeout} s") from None
        seconds = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        with open(peak_file) as report:
            peak = int(report.read()) * 1024
        return Run(process.returncode, out.read(), err.read().decode(), seconds, peak)


# -- 1. --timeout bounds a whole attempt -----------------------------------------------------------

KINDS = {
    "responses": ["--model", "gpt-4o-mini", "--api-style", "responses"],
    "chat": ["--model", "gpt-4o-mini", "--api-style", "chat"],
    "gemini": ["--model", "gemini-2.0-flash"],
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_dripping_server_cannot_hold_a_summary_past_the_timeout(
    kind: str, llm_server: LLMServer, tmp_path: Path
) -> None:
    """Headers at once, then a byte every 0.1 s: each read is quick, the answer endless."""
    llm_server.script(Reply.dripping(0.1, seconds=40))
    path = tmp_path / "chat.json"
    original = (SAMPLES / "short-chat.json").read_bytes()
    path.write_bytes(original)
    url = llm_server.url if kind == "gemini" else llm_server.openai_url
    result = run_ctxmgr(
        "summarize",
        *KINDS[kind],
        "--base-url",
        url,
        "--timeout",
        "0.5",
        "--max-retries",
        "0",
        "--max-messages",
        "2",
        "--keep-recent",
        "1",
        "-i",
        str(path),
        timeout=60,
    )
    # About the timeout plus start-up (well under a second or two), not the drip's 40 s;
    # the bound leaves room for a loaded machine.
    assert result.seconds < 15, result
    assert result.code == 3, result
    provider = "google" if kind == "gemini" else "openai"
    assert result.stderr == f"error: {path}: {provider}: no answer within 0.5 s (timeout)\n"
    assert path.read_bytes() == original
    assert llm_server.request_count == 1


@pytest.mark.parametrize("kind", KINDS)
def test_each_retry_of_a_dripping_answer_gets_the_timeout_again(kind: str, llm_server: LLMServer) -> None:
    llm_server.script(Reply.dripping(0.05, seconds=40), Reply.dripping(0.05, seconds=40))
    options = ProviderOptions(
        base_url=llm_server.url if kind == "gemini" else llm_server.openai_url,
        timeout=0.3,
        max_retries=1,
        backoff=0.01,
        api_key="test-key",
    )
    summarizer: OpenAISummarizer | GeminiSummarizer
    if kind == "gemini":
        summarizer = GeminiSummarizer("gemini-2.0-flash", options)
    else:
        summarizer = OpenAISummarizer("gpt-4o-mini", options, api_style=kind)  # type: ignore[arg-type]
    start = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        asyncio.run(summarizer.summarize("USER: hello", instructions="Summarize.", max_tokens=50))
    assert time.monotonic() - start < 15  # two 0.3 s attempts, not two 40 s drips
    assert caught.value.reason == "no answer within 0.3 s (timeout) (gave up after 2 attempts)"
    assert caught.value.retryable
    assert llm_server.request_count == 2


def test_the_dripping_reply_sends_headers_at_once_then_a_byte_per_interval(llm_server: LLMServer) -> None:
    import http.client

    llm_server.script(Reply.dripping(0.002, text="abc", seconds=10))
    host, port = llm_server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=2)
    try:
        connection.request("POST", "/v1/chat/completions", body=b'{"model": "m"}')
        start = time.monotonic()
        response = connection.getresponse()
        assert response.status == 200
        assert time.monotonic() - start < 2  # the headers come at once, the body does not
        body = response.read()
        assert json.loads(body)["choices"][0]["message"]["content"] == "abc"
        assert time.monotonic() - start > 0.002 * (len(body) - 1) * 0.9  # one byte per interval
    finally:
        connection.close()


# -- answers are read within a bound tied to the summary asked for --------------------------------

CAP = 600
OVERSIZED = {
    # 5 MB of text against a cap of 600 tokens: past the body's bound while it streams.
    "a 5 MB answer": (Reply.huge(5 * 1024**2), f"the answer exceeds the {answer_bytes(CAP):,} bytes read"),
    # 306 KB on the wire, 300 MB decoded: stopped within a megabyte past the bound.
    "a gzip bomb": (Reply.bomb(300 * 1024**2), f"the answer exceeds the {answer_bytes(CAP):,} bytes read"),
    # A redirect's body is read by the HTTP library before it follows: bounded the same.
    "a redirect carrying 5 MB": (
        Reply(307, "lorem ipsum " * (5 * 1024**2 // 12), headers={"Location": "/elsewhere"}),
        f"the answer exceeds the {answer_bytes(CAP):,} bytes read",
    ),
    # Within the body's bound, but 50,000 tokens of text for a 600-token summary.
    "a 200 KB text": (Reply.huge(200_000), "the answer's text is about 50,000 tokens, more than 4 times the 600"),
}


@pytest.mark.parametrize("answer", OVERSIZED)
@pytest.mark.parametrize("kind", KINDS)
def test_an_answer_far_past_the_cap_is_refused_in_bounded_memory(
    kind: str, answer: str, llm_server: LLMServer, tmp_path: Path
) -> None:
    reply, reason = OVERSIZED[answer]
    llm_server.script(reply)
    path = tmp_path / "chat.json"
    original = (SAMPLES / "short-chat.json").read_bytes()
    path.write_bytes(original)
    out = tmp_path / "out.json"
    url = llm_server.url if kind == "gemini" else llm_server.openai_url
    result = run_ctxmgr("summarize", *KINDS[kind], "--base-url", url, "--max-retries", "2", "--max-summary-tokens",
                        str(CAP), "--max-messages", "2", "--keep-recent", "1", "--no-cache", "-o", str(out), str(path),
                        timeout=120)
    assert result.peak_rss < 300 * 1024**2, (result.peak_rss, result.stderr)
    assert result.code == 3, result
    provider = "google" if kind == "gemini" else "openai"
    assert result.stderr.startswith(f"error: {path}: {provider}: {reason}"), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert llm_server.request_count == 1  # the same request would get the same answer: not retried
    assert out.read_bytes() == original  # the conversation, unchanged, where output was asked for
    assert path.read_bytes() == original


# -- 2. input that cannot be a conversation is refused before it is read whole ------------------------

NUL = "binary data (NUL byte), expected JSON text"
READING: dict[str, list[str]] = {
    "trim": ["trim", "-n", "1"],
    "summarize": ["summarize", "--model", "offline", "--max-messages", "1", "--keep-recent", "1"],
    "convert": ["convert", "--to", "gemini"],
    "validate": ["validate"],
    "stats": ["stats"],
    "run": ["run", "--manager", MANAGER, "--option", "count=1"],
}
LINE = b'{"messages": [{"role": "user", "content": "' + b"x" * 2000 + b'"}]}\n'


def _sparse(path: Path, start: bytes = b"", size: int = 2 * GIB) -> Path:
    """A 2 GB file: ``start``, then NULs (a hole: no disk used, read at memory speed)."""
    with open(path, "wb") as handle:
        handle.write(start)
        handle.truncate(size)
    return path


@pytest.fixture(scope="module")
def endless(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """Each 2 GB case with the position of its first NUL."""
    folder = tmp_path_factory.mktemp("endless")
    return {
        "all NULs": (_sparse(folder / "zeros.json"), ":1:1"),
        "a JSON start, then NULs": (_sparse(folder / "start.json", b'{"messages": ['), ":1:15"),
        "a dataset line of NULs": (_sparse(folder / "dataset.jsonl", LINE + b'{"messages": ['), ":2:15"),
        # Far past the first read (1 MB): met while streaming, in this process or a
        # worker (256 MB: the line-end search that splits the work scans the NULs).
        "a later dataset line of NULs": (
            _sparse(folder / "late.jsonl", LINE * 1200 + b'{"messages": [', 256 * 1024**2),
            ":1201:15",
        ),
    }


def assert_refused(result: Run, name: str, where: str, message: str = NUL) -> None:
    assert result.code == 2, result
    assert result.stderr == f"error: {name}{where}: {message}\n", result
    assert result.stdout == b""
    assert result.peak_rss < 200 * 1024**2, result.peak_rss


@pytest.mark.parametrize("command", READING)
def test_2_gb_files_of_nuls_are_refused_at_their_first_chunk(
    command: str, endless: dict[str, tuple[Path, str]], tmp_path: Path
) -> None:
    """All NULs, a JSON start then NULs, a dataset whose second line is NULs: one run."""
    cases = [endless[case] for case in ("all NULs", "a JSON start, then NULs", "a dataset line of NULs")]
    out = tmp_path / "out"
    writes = ["-o", f"{out}/"] if command in ("trim", "summarize", "convert", "run") else []
    result = run_ctxmgr(*READING[command], *writes, *(str(path) for path, _ in cases), timeout=20)
    assert result.code == 2, result
    closing = "3 files: 3 failed\n" if writes else ""  # the writing commands' closing line
    assert result.stderr == "".join(f"error: {path}{where}: {NUL}\n" for path, where in cases) + closing, result
    assert result.stdout == b""
    assert result.peak_rss < 200 * 1024**2, result.peak_rss
    assert result.seconds < 15, result  # refused at the first chunk, not after reading 6 GB
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("args", [["trim", "--jobs", "1"], ["trim", "--jobs", "2"], ["validate"]])
def test_a_dataset_line_of_nuls_far_into_the_file_is_refused_while_streaming(
    args: list[str], endless: dict[str, tuple[Path, str]]
) -> None:
    path, where = endless["a later dataset line of NULs"]
    result = run_ctxmgr(*args, str(path), timeout=30)
    assert_refused(result, str(path), where)


@pytest.mark.parametrize("command", ["trim", "stats"])
def test_dev_zero_named_as_input_or_piped_is_refused_at_once(command: str) -> None:
    assert_refused(run_ctxmgr(*READING[command], "/dev/zero", timeout=20), "/dev/zero", ":1:1")
    with open("/dev/zero", "rb") as zeros:
        assert_refused(run_ctxmgr(*READING[command], "-", stdin=zeros, timeout=20), "<stdin>", ":1:1")


def test_an_endless_line_that_starts_no_conversation_is_refused_after_one_read(tmp_path: Path) -> None:
    """No NUL, but its first byte starts no object or list: refused without reading on."""
    path = tmp_path / "letters.json"
    path.write_bytes(b"\n  " + b"a" * (64 * 1024**2))
    result = run_ctxmgr("trim", str(path))
    assert_refused(result, str(path), ":2:3", "invalid JSON: unexpected character")
    assert result.peak_rss < 64 * 1024**2 + 60 * 1024**2  # not the whole 64 MB plus copies


def test_a_nul_line_in_a_dataset_is_still_skipped_under_on_error_skip(tmp_path: Path) -> None:
    """A NUL in a line that ends is left to that line's reader: --on-error skip copies it."""
    path = tmp_path / "rows.jsonl"
    bad = b'{"messages": [{"role": "user", "content": "a\x00b"}]}'
    path.write_bytes(LINE + bad + b"\n" + LINE)
    result = runner.invoke(app, ["trim", "-n", "1", "--on-error", "skip", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stdout_bytes.split(b"\n")[1] == bad
    assert result.stderr.startswith(f"error: {path}:2: invalid JSON")


# -- the fact finder reads one long token in linear memory ------------------------------------------

TOKEN_CHARS = 200_000
# Codes and ids of one unbroken run each: letters and digits ("1a1a..."), words joined by
# "-" and "_". Their every prefix kept apart would be gigabytes.
LONG_TOKENS = ("1a" * (TOKEN_CHARS // 2), "a1-" * (TOKEN_CHARS // 3) + "z9", "x_7" * (TOKEN_CHARS // 3))
KEY_FREE_SUMMARIES = {
    "summarize --check": ["summarize", "--check"],
    "summarize --model offline": ["summarize", "--model", "offline", "--max-summary-tokens", "8192"],
}


@pytest.mark.parametrize("command", KEY_FREE_SUMMARIES)
def test_a_200_kb_token_is_summarized_in_bounded_memory(command: str, tmp_path: Path) -> None:
    messages = []
    for i, token in enumerate(LONG_TOKENS):
        messages += [{"role": "user", "content": f"booking {i}: {token}"}, {"role": "assistant", "content": "noted"}]
    messages += [{"role": "user", "content": "latest"}, {"role": "assistant", "content": "reply"}]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": messages}))
    before = path.read_bytes()
    out = tmp_path / "out.json"
    writes = [] if "--check" in KEY_FREE_SUMMARIES[command] else ["-o", str(out)]
    result = run_ctxmgr(*KEY_FREE_SUMMARIES[command], "--max-messages", "4", "--keep-recent", "2", *writes,
                        str(path), timeout=120)
    assert result.peak_rss < 300 * 1024**2, result.peak_rss
    assert result.code == (1 if "--check" in command else 0), result.stderr[:2000]
    assert path.read_bytes() == before
    if writes:
        summary = json.loads(out.read_text())["messages"][0]["content"]
        assert "Earlier conversation" in summary


# -- 3. nesting up to the parser's depth ------------------------------------------------------------


def _deep(depth: int) -> str:
    """JSON text nested ``depth`` levels (objects and lists in turn) around the number 1."""
    opening = "".join('{"k":' if level % 2 == 0 else "[" for level in range(depth))
    closing = "".join("}" if level % 2 == 0 else "]" for level in reversed(range(depth)))
    return f"{opening}1{closing}"


def _depth(value: Any) -> int:
    """Levels of nesting of ``value``, strings holding JSON included (OpenAI arguments)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, str) and item[:1] in ("{", "["):
            try:
                item = orjson.loads(item)
            except orjson.JSONDecodeError:
                continue
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
            deepest = max(deepest, level + 1)
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
            deepest = max(deepest, level + 1)
    return deepest


_CHAT = {
    "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "q1"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"a": "ARGS"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "RESULT"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"},
        {"role": "assistant", "content": "a2"},
        {"role": "user", "content": "q3"},
        {"role": "assistant", "content": "a3"},
    ]
}


def _deep_conversation(fmt: str, *, string_depth: int | None = None) -> tuple[bytes, int]:
    """A conversation in ``fmt`` whose tool-call arguments (and, where the format allows
    an object, tool result) are nested as deep as the parser allows; returns (bytes, depth
    of the deep value)."""
    shallow = formats.load(orjson.dumps(_CHAT), source="chat.json")
    text = formats.dump(shallow, to=fmt).decode()
    in_string = '\\"ARGS\\"' in text

    def build(depth: int) -> str:
        deep = _deep(depth)
        out = text.replace('\\"ARGS\\"', deep.replace('"', '\\"')).replace('"ARGS"', deep)
        return out.replace('"RESULT"', deep) if fmt in ("native", "gemini") else out

    if string_depth is not None:  # a fixed depth instead of the deepest the format holds
        return build(string_depth).encode(), string_depth
    depth = 1024
    while True:
        try:
            orjson.loads(build(depth))
        except orjson.JSONDecodeError:
            depth -= 1
            continue
        # Arguments held in a string are as deep as a converted file can hold them.
        return build(depth - 6 if in_string else depth).encode(), depth - 6 if in_string else depth


def _invoke(*args: str) -> Result:
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stderr, result.stderr
    assert "RecursionError" not in result.stderr, result.stderr
    return result


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_command_works_at_the_parsers_depth(fmt: str, tmp_path: Path) -> None:
    data, depth = _deep_conversation(fmt)
    assert depth > 1000
    path = tmp_path / f"deep-{fmt}.json"
    path.write_bytes(data)
    keep_all = _invoke("trim", "-n", "50", str(path))
    assert keep_all.exit_code == 0, keep_all.stderr
    assert keep_all.stdout_bytes == data  # nothing to trim: written back byte for byte
    for args in (
        ["trim", "-n", "2"],
        ["trim", "-n", "2", "--json"],
        ["trim", "-n", "2", "--view"],
        ["summarize", "--model", "offline", "--max-messages", "3", "--keep-recent", "2", "--view"],
        ["summarize", "--model", "offline", "--max-messages", "3", "--keep-recent", "2", "--json"],
        ["validate"],
        ["stats"],
        ["stats", "--json"],
    ):
        result = _invoke(*args, str(path))
        assert result.exit_code == 0, (args, result.stderr)
        assert result.stdout_bytes
    for args in (["run", "--manager", MANAGER, "--option", "count=9", "--view"], ["convert", "--to", fmt]):
        kept = _invoke(*args, str(path))
        assert kept.exit_code == 0, kept.stderr
        assert _depth(orjson.loads(kept.stdout_bytes)) >= depth


@pytest.mark.parametrize("fmt", FORMATS)
def test_deep_values_survive_conversion_to_every_format(fmt: str, tmp_path: Path) -> None:
    """Formats wrap a tool call in different numbers of levels (Gemini the most): a value
    a few levels short of the limit fits in all of them."""
    data, depth = _deep_conversation(fmt, string_depth=1005)
    path = tmp_path / f"deep-{fmt}.json"
    path.write_bytes(data)
    for to in FORMATS:
        converted = _invoke("convert", "--to", to, str(path))
        assert converted.exit_code == 0, (to, converted.stderr)
        assert "deeper" not in converted.stderr
        assert _depth(orjson.loads(converted.stdout_bytes)) >= depth, to


def test_a_conversion_that_would_nest_past_the_limit_is_refused(tmp_path: Path) -> None:
    """Anthropic holds arguments 5 levels down, Gemini 6: at Anthropic's limit, a Gemini
    file would be one no reader takes back."""
    data, _ = _deep_conversation("anthropic")
    path = tmp_path / "deep.json"
    path.write_bytes(data)
    out = tmp_path / "out.json"
    result = _invoke("convert", "--to", "gemini", "-o", str(out), str(path))
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {path}: the output would be nested deeper than 1024 levels, more than ctxmgr reads back; not written\n"
    )
    assert not out.exists()


@pytest.mark.parametrize("fmt", ["native", "openai-chat", "anthropic", "gemini"])
def test_a_dataset_line_at_the_parsers_depth(fmt: str, tmp_path: Path) -> None:
    data, _ = _deep_conversation(fmt)
    line = b" ".join(data.split())  # one line (JSON text has no newline inside strings)
    path = tmp_path / "deep.jsonl"
    path.write_bytes(line + b"\n" + line + b"\n")
    for args in (["trim", "-n", "2"], ["trim", "-n", "50"], ["convert", "--to", "openai-responses"], ["stats"]):
        result = _invoke(*args, str(path))
        assert result.exit_code == 0, (args, result.stderr)
    kept = _invoke("trim", "-n", "50", str(path))
    assert kept.stdout_bytes == path.read_bytes()


def test_a_real_provider_summarizes_a_deep_conversation(llm_server: LLMServer, tmp_path: Path) -> None:
    data, depth = _deep_conversation("anthropic")
    path = tmp_path / "deep.json"
    path.write_bytes(data)
    result = _invoke(
        "summarize",
        "--model",
        "gpt-4o-mini",
        "--base-url",
        llm_server.openai_url,
        "--max-messages",
        "3",
        "--keep-recent",
        "2",
        str(path),
    )
    assert result.exit_code == 0, result.stderr
    assert llm_server.request_count == 1
    sent = llm_server.last.input_text or ""
    assert "lookup(" in sent  # the call, rendered whole
    assert sent.count('{"k": [') == depth // 2  # each holds two levels: an object and a list


def test_arguments_nested_deeper_than_the_parser_allows_stay_a_string_with_a_warning(tmp_path: Path) -> None:
    data, _ = _deep_conversation("openai-chat", string_depth=1100)
    path = tmp_path / "chat.json"
    path.write_bytes(data)
    for command in (
        ["trim", "-n", "50"],
        ["validate"],
        ["stats"],
        ["summarize", "--model", "offline", "--max-messages", "3", "--keep-recent", "2"],
    ):
        assert _invoke(*command, str(path)).exit_code == 0
    result = _invoke("convert", "--to", "anthropic", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stderr == (
        f"warning: {path}: anthropic: arguments of call 'call_1' are nested deeper than 1024 levels; "
        "kept under 'arguments' (message 2)\n"
    )
    tool_use = orjson.loads(result.stdout_bytes)["messages"][1]["content"][0]
    raw = orjson.loads(data)["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert tool_use["input"] == {"arguments": raw}


def test_a_deep_file_with_long_digit_runs_in_strings_is_read(tmp_path: Path) -> None:
    """The number guards parse with the standard library when digits look suspicious:
    at 1,000 levels that parser must not overflow the stack either."""
    data, _ = _deep_conversation("anthropic")
    strings = b'"metadata": {"order": "12345678901234567890123", "ratio": "0.1000000000000000000001"}, '
    path = tmp_path / "deep.json"
    path.write_bytes(data[:1] + strings + data[1:])
    for args in (["trim", "-n", "50"], ["validate"]):
        result = _invoke(*args, str(path))
        assert result.exit_code == 0, result.stderr


# -- 4. numbers whose written form would change ------------------------------------------------------

CHANGED = {
    "1e-400": "0.0",
    "1E-400": "0.0",
    "0.1000000000000000000001": "0.1",
    "0.300000000000000011102": "0.3",
    "4.9e-324": "5e-324",
    "12345678.1234567891": "12345678.12345679",
}
KEPT = ["1E2", "1.0", "0.1", "1.5e3", "-0.0", "100.000", "0e-400", "1715800010.1234567", "5e-324", "1e-99"]


def _with_number(literal: str) -> bytes:
    return b'{"temperature": ' + literal.encode() + b', "messages": [{"role": "user", "content": "hi"}]}'


@pytest.mark.parametrize("literal", CHANGED)
def test_a_number_that_would_change_is_refused(literal: str, tmp_path: Path) -> None:
    document = tmp_path / "chat.json"
    document.write_bytes(_with_number(literal))
    dataset = tmp_path / "rows.jsonl"
    dataset.write_bytes(_with_number("1") + b"\n" + _with_number(literal) + b"\n")
    message = (
        f"number {literal} would be read as {CHANGED[literal]} (a 64-bit float cannot hold it exactly); "
        "store it as a string"
    )
    for path, where in ((document, ":1:17"), (dataset, ":2:17")):
        for args in READING.values():
            result = _invoke(*args, str(path))
            assert result.exit_code == 2, (args, result.stdout)
            assert result.stderr == f"error: {path}{where}: {message}\n"
            assert result.stdout_bytes == b""


@pytest.mark.parametrize("literal", KEPT)
def test_a_number_written_in_a_form_that_keeps_its_value_is_read(literal: str, tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(_with_number(literal))
    result = _invoke("convert", "--to", "openai-chat", str(path))
    assert result.exit_code == 0, result.stderr
    written = json.loads(result.stdout_bytes, parse_float=Decimal, parse_int=Decimal)["temperature"]
    assert written == Decimal(literal)
    assert str(written).startswith("-") == literal.startswith("-")  # -0.0 stays negative


# What C's "%.17g", numpy and R write to keep a double exactly: 17 significant digits that
# name the same double as a shorter form. The same double is the same value.
SAME_DOUBLE = ["0.69999999999999996", "0.30000000000000001", "12345678.123456789", "-1.0000000000000002"]


@pytest.mark.parametrize("literal", SAME_DOUBLE)
def test_seventeen_digits_naming_the_same_double_are_read(literal: str, tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(_with_number(literal))
    result = _invoke("convert", "--to", "openai-chat", str(path))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout_bytes)["temperature"] == float(literal)


def test_digits_inside_strings_are_not_numbers(tmp_path: Path) -> None:
    text = "1e-400 0.1000000000000000000001 18446744073709551616 -0.30000000000000001e-999"
    path = tmp_path / "chat.json"
    path.write_bytes(b'{"messages": [{"role": "user", "content": "' + text.encode() + b'"}], "n": 1e-99, "m": 0.5}')
    result = _invoke("trim", "-n", "5", str(path))
    assert result.exit_code == 0, result.stderr
    assert orjson.loads(result.stdout_bytes)["messages"][0]["content"] == text


def test_a_changed_number_after_the_same_digits_in_a_string_is_located_exactly(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    data = b'{"messages": [{"role": "user", "content": "1e-400"}], "x": 1e-400}'
    path.write_bytes(data)
    result = _invoke("validate", str(path))
    assert result.exit_code == 2
    column = data.rindex(b"1e-400") + 1
    assert result.stderr.startswith(f"error: {path}:1:{column}: number 1e-400 would be read as 0.0")
