"""A known fake key, every command, every failure: the key appears in nothing ctxmgr produces.

Searched: standard output and error of every run (``--verbose``, ``--json``, failures,
bad input), every log record of any logger, every file written (outputs, the summary
cache), and the tracebacks ``CTXMGR_DEBUG=1`` prints. The test server echoes the key it
received in its error messages (as some real APIs do), so the scrubbing is exercised,
not just the absence of a leak.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SAMPLES
from llm_server import LLMServer, RecordedRequest, Reply
from typer.testing import CliRunner

from ctxmgr.cli import app

OPENAI_KEY = "sk-test-SECRET-5f3a9c2e7b1d4068aa"
GEMINI_KEY = "AIzaTEST-SECRET-9d8c7b6a5f4e3210bb"
FILE_KEY = "sk-file-SECRET-0a1b2c3d4e5f6789cc"
KEYS = (OPENAI_KEY, GEMINI_KEY, FILE_KEY)
MANAGER = f"{SAMPLES / 'managers' / 'keep_last.py'}:KeepLastMessages"

runner = CliRunner()


def echo_key(request: RecordedRequest) -> Reply:
    """A 401 that quotes the credential it got, as some APIs do."""
    sent = request.headers.get("authorization") or request.headers.get("x-goog-api-key") or "none"
    return Reply.error(401, f"Incorrect API key provided: {sent}. Find your key in the dashboard.")


class Produced:
    """Everything the runs of one test produced, to be searched for the keys."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []

    def add(self, label: str, text: str | bytes) -> None:
        self.texts.append((label, text.decode("utf-8", "replace") if isinstance(text, bytes) else text))

    def assert_no_key(self) -> None:
        for label, text in self.texts:
            for key in KEYS:
                assert key not in text, f"{key} leaked in {label}: {text[:2000]}"


@pytest.fixture
def produced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Produced]:
    """Collects outputs during the test; afterwards adds every log record and file, and searches."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    monkeypatch.setenv("CTXMGR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    found = Produced()
    caplog.set_level(logging.DEBUG)  # every logger, SDKs and HTTP clients included
    yield found
    for record in caplog.records:
        found.add(f"log record {record.name}", f"{record.getMessage()} {record.args!r} {record.exc_text or ''}")
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name != "key.txt":
            found.add(str(path), path.read_bytes())
    assert (tmp_path / "cache").exists()  # the cache was written, and searched
    found.assert_no_key()


def run(found: Produced, *args: str) -> int:
    result = runner.invoke(app, list(args))
    label = " ".join(args)
    found.add(f"stdout of {label}", result.stdout_bytes)
    found.add(f"stderr of {label}", result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code


def test_no_command_ever_shows_the_key(tmp_path: Path, llm_server: LLMServer, produced: Produced) -> None:
    sample = tmp_path / "chat.json"
    shutil.copyfile(SAMPLES / "support-chat.json", sample)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"messages": [')
    (tmp_path / "key.txt").write_text(FILE_KEY + "\n")
    openai = ["--model", "gpt-4o-mini", "--base-url", llm_server.openai_url]
    gemini = ["--model", "gemini-2.0-flash", "--base-url", llm_server.url]
    small = ["--max-messages", "4", "--keep-recent", "2", "--max-retries", "1", "--timeout", "2"]

    # The commands that never call a provider, with the keys in the environment.
    for args in (["trim", "-n", "1"], ["convert", "--to", "anthropic"], ["validate"], ["stats"],
                 ["run", "--manager", MANAGER]):
        assert run(produced, *args, str(sample)) in (0, 1)
        assert run(produced, *args, str(bad)) == 2
        assert run(produced, *args, "--json", str(sample)) in (0, 1) or args[0] == "convert"
    assert run(produced, "config") == 0
    assert run(produced, "config", "--json") == 0

    # Summaries that work (and fill the cache), in every style; a dry run.
    for style in (["--api-style", "responses"], ["--api-style", "chat"]):
        assert run(produced, "summarize", str(sample), *openai, *style, *small, "--verbose", "-o", "out.json") == 0
    assert run(produced, "summarize", str(sample), *gemini, *small, "--verbose", "--json") == 0
    assert run(produced, "summarize", str(sample), *gemini, *small, "--dry-run") == 0
    assert run(produced, "summarize", str(sample), "--model", "offline", *small) == 0

    # Failures whose server messages quote the key: retried (--verbose logs each), then 401.
    llm_server.responder = echo_key
    before = llm_server.request_count
    for extra in ([], ["--verbose"], ["--json"], ["--verbose", "--json"], ["--api-style", "chat", "--verbose"]):
        llm_server.script(Reply.error(503, f"overloaded; key {OPENAI_KEY} is fine"))
        assert run(produced, "summarize", str(sample), *openai, *small, "--no-cache", *extra) == 3
    for extra in ([], ["--verbose", "--json"]):
        llm_server.script(Reply.error(503, f"overloaded; key {GEMINI_KEY} is fine"))
        assert run(produced, "summarize", str(sample), *gemini, *small, "--no-cache", *extra) == 3
    # The key from a file the user names, not from the environment.
    os.environ.pop("OPENAI_API_KEY")
    from_file = ["--api-key-file", "key.txt", "--no-cache", "--verbose"]
    assert run(produced, "summarize", str(sample), *openai, *small, *from_file) == 3
    assert run(produced, "summarize", str(bad), *openai, *small, *from_file) == 2

    # The keys did go to the server, and came back in its messages: the scrubbing did the work.
    sent = [r.headers.get("authorization") or r.headers.get("x-goog-api-key") for r in llm_server.requests]
    assert f"Bearer {OPENAI_KEY}" in sent
    assert GEMINI_KEY in sent
    assert f"Bearer {FILE_KEY}" in sent
    assert llm_server.request_count - before >= 14
    assert any("Incorrect API key provided: ***" in text for _, text in produced.texts)


def _debug_run(args: list[str], cwd: Path, **kwargs: object) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "CTXMGR_DEBUG": "1", "OPENAI_API_KEY": OPENAI_KEY, "GEMINI_API_KEY": GEMINI_KEY}
    return subprocess.run(
        [sys.executable, "-m", "ctxmgr", *args], cwd=cwd, env=env, timeout=60, check=False, **kwargs  # type: ignore[call-overload]
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_debug_tracebacks_never_show_the_key(tmp_path: Path, llm_server: LLMServer) -> None:
    sample = tmp_path / "chat.json"
    shutil.copyfile(SAMPLES / "support-chat.json", sample)
    (tmp_path / "key.txt").write_text(f"{FILE_KEY} and more\n")
    llm_server.responder = echo_key
    summarize = ["summarize", "chat.json", "--model", "gpt-4o-mini", "--base-url", llm_server.openai_url,
                 "--max-messages", "4", "--keep-recent", "2", "--max-retries", "1", "--no-cache", "--verbose"]
    llm_server.script(Reply.error(503, f"overloaded; key {OPENAI_KEY} is fine"))  # logged with --verbose
    runs = []
    with open("/dev/full", "wb") as full:  # a failed write: the traceback is printed
        runs.append(_debug_run(summarize, tmp_path, stdout=full, stderr=subprocess.PIPE))
    runs.append(_debug_run([*summarize, "--api-key-file", "key.txt"], tmp_path, capture_output=True))  # bad key file
    runs.append(_debug_run(["summarize", "no-match-*.json", "--model", "gemini-2.0-flash", "--base-url",
                            llm_server.url], tmp_path, capture_output=True))  # an input error
    for proc in runs:
        assert b"Traceback" in proc.stderr
        for key in KEYS:
            assert key.encode() not in proc.stderr, proc.stderr.decode()
            assert key.encode() not in (proc.stdout or b"")
    assert b"overloaded; key *** is fine; retry 1 of 1" in runs[0].stderr
    assert b"No space left on device" in runs[0].stderr
    assert b"expected one key on one line" in runs[1].stderr
    assert json.loads((SAMPLES / "support-chat.json").read_bytes()) == json.loads(sample.read_bytes())
