"""`summarize --batch`: provider Batch APIs through the real SDKs against the local server.

Each test compares what matters with an interactive run given the same answers (the
server answers a batch's request as it would the same request sent alone), so the
batch path is held to the bytes the interactive path writes.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from llm_server import LLMServer, RecordedRequest, Reply
from test_cli_summarize import chat, write
from typer.testing import CliRunner, Result

from ctxmgr.cli import app
from ctxmgr.errors import UsageError
from ctxmgr.providers._batch import collector, gemini_jobs, openai_jobs, state as batch_state

runner = CliRunner()
KEY = "sk-test-5a4b3c2d1e0f99887766"


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)


def answer(request: RecordedRequest) -> Reply:
    """The same answer for the same request, whichever way it is sent."""
    text = request.input_text or ""
    if "FAIL-ME" in text and "Combine" not in text:
        return Reply.error(400, "scripted refusal of this request")
    return Reply.ok("Summary " + hashlib.sha256(text.encode()).hexdigest()[:12])


def dataset(path: Path, conversations: list[list[dict[str, Any]]]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in conversations), encoding="utf-8")
    return path


def conversations() -> list[list[dict[str, Any]]]:
    long_one = chat(60)
    long_one[3]["content"][0]["text"] = "a longer question " + "x" * 600  # split into parts
    return [chat(40), long_one, chat(10), chat(36)]


def run(server: LLMServer, *args: str, model: str = "gpt-4o-mini", extra: tuple[str, ...] = ()) -> Result:
    base = server.url if model.startswith("gemini") else server.openai_url
    command = ["summarize", *args, "--model", model, "--base-url", base, "--no-view", *extra]
    return runner.invoke(app, command)


def interactive(server: LLMServer, source: Path, out: Path, model: str, *extra: str) -> bytes:
    done = run(server, str(source), "-o", str(out), "--no-cache", model=model, extra=extra)
    assert done.exit_code == 0, done.stderr
    return out.read_bytes()


SPLIT = ("--max-summary-tokens", "20", "--max-input-tokens", "300")


@pytest.mark.parametrize(
    ("model", "extra"),
    [
        ("gpt-4o-mini", ()),
        ("gpt-4o-mini", ("--api-style", "chat")),
        ("gemini-2.0-flash", ()),
    ],
)
def test_batch_rounds_write_the_bytes_an_interactive_run_writes(
    tmp_path: Path, llm_server: LLMServer, model: str, extra: tuple[str, ...]
) -> None:
    llm_server.responder = answer
    source = dataset(tmp_path / "chats.jsonl", conversations())
    expected = interactive(llm_server, source, tmp_path / "interactive.jsonl", model, *SPLIT, *extra)
    sent_alone = {r.input_text or "" for r in llm_server.requests}
    llm_server.reset()

    out = tmp_path / "batch.jsonl"
    args = (str(source), "-o", str(out), "--no-cache", "--batch", *SPLIT, *extra)
    first = run(llm_server, *args, model=model)
    assert first.exit_code == 75, first.stderr
    assert "est. " in first.stderr
    assert "input tokens" in first.stderr
    assert "3 conversations need another round" in first.stderr  # the split span's combining round
    state = tmp_path / "batch.jsonl.ctxmgr-batch"
    assert state.exists()
    assert not out.exists()
    assert oct(state.stat().st_mode & 0o777) == "0o600"
    job_id = json.loads(state.read_text())["jobs"][0]["id"]
    assert job_id in first.stderr

    second = run(llm_server, *args, model=model)  # round 1 answered; the combining round sent
    assert second.exit_code == 75, second.stderr
    assert not out.exists()
    third = run(llm_server, *args, model=model)
    assert third.exit_code == 0, third.stderr
    assert out.read_bytes() == expected
    # Every request the interactive run made went in a batch, once (the same request made
    # for two conversations is sent once); nothing was sent alone.
    in_batches = [r.input_text or "" for r in llm_server.batch_requests]
    assert len(in_batches) == len(set(in_batches))
    assert set(in_batches) == sent_alone
    assert not [r for r in llm_server.requests if r.kind in ("responses", "chat", "gemini")]
    assert not state.exists()
    assert not Path(str(state) + "-answers").exists()


def test_gemini_jobs_past_the_inline_cap_go_as_an_uploaded_file(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gemini_jobs, "GEMINI_MAX_BYTES", 1000)
    llm_server.responder = answer
    source = dataset(tmp_path / "chats.jsonl", conversations())
    expected = interactive(llm_server, source, tmp_path / "interactive.jsonl", "gemini-2.0-flash", *SPLIT)
    llm_server.reset()
    out = tmp_path / "batch.jsonl"
    args = (str(source), "-o", str(out), "--no-cache", "--batch", "--wait", "--poll-interval", "0.01", *SPLIT)
    done = run(llm_server, *args, model="gemini-2.0-flash")
    assert done.exit_code == 0, done.stderr
    assert out.read_bytes() == expected
    paths = [r.path for r in llm_server.requests]
    assert sum(1 for p in paths if p.startswith("/upload/")) == 2  # one file a round
    assert sum(1 for p in paths if ":download" in p) == 2
    assert all(job.get("_from_file") for job in llm_server.batches.values())


def test_wait_polls_until_the_output_is_written(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.responder = answer
    llm_server.batch_polls = 3
    source = dataset(tmp_path / "chats.jsonl", conversations())
    expected = interactive(llm_server, source, tmp_path / "interactive.jsonl", "gpt-4o-mini", *SPLIT)
    out = tmp_path / "batch.jsonl"
    done = run(
        llm_server, str(source), "-o", str(out), "--no-cache", "--batch", "--wait", "--poll-interval", "0.01", *SPLIT
    )
    assert done.exit_code == 0, done.stderr
    assert out.read_bytes() == expected
    assert "in_progress" in done.stderr  # progress shown while the jobs run


def test_answers_go_to_the_cache_and_an_interactive_run_then_sends_nothing(
    tmp_path: Path, llm_server: LLMServer
) -> None:
    llm_server.responder = answer
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    cache = tmp_path / "cache"
    out = tmp_path / "batch.jsonl"
    args = (str(source), "-o", str(out), "--cache", str(cache), "--batch")
    assert run(llm_server, *args).exit_code == 75
    assert run(llm_server, *args).exit_code == 0
    again = run(llm_server, str(source), "-o", str(tmp_path / "again.jsonl"), "--cache", str(cache), "--json")
    assert again.exit_code == 0
    assert json.loads(again.stdout)["cache"]["hits"] == 1
    assert not [r for r in llm_server.requests if r.kind == "responses"]
    assert (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()


def test_answers_are_kept_until_written_whatever_the_cache_cap(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.responder = answer
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    expected = interactive(llm_server, source, tmp_path / "interactive.jsonl", "gpt-4o-mini")
    cache = tmp_path / "cache"
    out = tmp_path / "batch.jsonl"
    args = (str(source), "-o", str(out), "--cache", str(cache), "--cache-max-size", "1", "--batch", "--json")
    assert run(llm_server, *args).exit_code == 75
    done = run(llm_server, *args)
    assert done.exit_code == 0, done.stderr
    assert out.read_bytes() == expected
    assert not list(cache.glob("*/*.json"))  # the 1-byte cap evicted the answer the output was written from


def test_pending_json_report(tmp_path: Path, llm_server: LLMServer) -> None:
    source = dataset(tmp_path / "chats.jsonl", conversations()[:2])
    done = run(llm_server, str(source), "-o", str(tmp_path / "o.jsonl"), "--no-cache", "--batch", "--json", *SPLIT)
    assert done.exit_code == 75
    report = json.loads(done.stdout)
    assert report["exit_code"] == 75
    batch = report["batch"]
    assert batch["jobs"][0]["id"] == "batch_1"
    assert batch["pending_requests"] == batch["jobs"][0]["requests"] > 1
    assert batch["input_tokens"] > 0
    assert batch["conversations_waiting"] == 2  # two spans split: their parts' summaries to combine


def test_require_facts_asks_again_in_the_next_batch(tmp_path: Path, llm_server: LLMServer) -> None:
    def forgetful(request: RecordedRequest) -> Reply:
        text = request.input_text or ""
        if "MISSING FACTS" in text:
            return Reply.ok("The user booked flight HAT268 for order 4OG6T3.")
        return Reply.ok("The user booked a flight.")

    llm_server.responder = forgetful
    conversation = chat(40)
    conversation[2]["content"][0]["text"] = "book flight HAT268 for order 4OG6T3"
    source = dataset(tmp_path / "chats.jsonl", [conversation])
    expected = interactive(llm_server, source, tmp_path / "interactive.jsonl", "gpt-4o-mini", "--require-facts")
    assert b"HAT268" in expected
    args = (str(source), "-o", str(tmp_path / "batch.jsonl"), "--no-cache", "--batch", "--require-facts")
    first = run(llm_server, *args)
    assert first.exit_code == 75
    assert "1 conversation needs another round" in first.stderr
    assert run(llm_server, *args).exit_code == 75  # the summary lacked the facts: asked again
    assert run(llm_server, *args).exit_code == 0
    assert (tmp_path / "batch.jsonl").read_bytes() == expected


def test_jobs_are_split_past_the_provider_limits(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(openai_jobs, "OPENAI_MAX_REQUESTS", 2)
    llm_server.responder = answer
    source = dataset(tmp_path / "chats.jsonl", [chat(40 + i) for i in range(5)])
    out = tmp_path / "batch.jsonl"
    first = run(llm_server, str(source), "-o", str(out), "--no-cache", "--batch")
    assert first.exit_code == 75
    jobs = json.loads((tmp_path / "batch.jsonl.ctxmgr-batch").read_text())["jobs"]
    assert [job["requests"] for job in jobs] == [2, 2, 1]
    assert "5 summary requests" in first.stderr
    assert "in 3 jobs" in first.stderr
    assert run(llm_server, str(source), "-o", str(out), "--no-cache", "--batch").exit_code == 0


@pytest.mark.parametrize(
    ("model", "job", "upload"),
    [("gpt-4o-mini", "batch_1", "/v1/files"), ("gemini-2.0-flash", "batches/g1", ":batchGenerateContent")],
)
def test_a_lost_state_file_finds_the_job_again_by_its_tag(
    tmp_path: Path, llm_server: LLMServer, model: str, job: str, upload: str
) -> None:
    llm_server.responder = answer
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    out = tmp_path / "batch.jsonl"
    args = (str(source), "-o", str(out), "--no-cache", "--batch")
    assert run(llm_server, *args, model=model).exit_code == 75
    (tmp_path / "batch.jsonl.ctxmgr-batch").unlink()
    again = run(llm_server, *args, model=model)
    assert again.exit_code == 75
    assert f"found batch job {job} sent earlier" in again.stderr
    assert len([r for r in llm_server.requests if r.path.endswith(upload)]) == 1  # not sent twice
    assert run(llm_server, *args, model=model).exit_code == 0
    assert len(llm_server.batch_requests) == 1


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gemini-2.0-flash"])
@pytest.mark.parametrize("outcome", ["failed", "expired"])
def test_a_failed_or_expired_job_is_reported_and_nothing_is_written(
    tmp_path: Path, llm_server: LLMServer, model: str, outcome: str
) -> None:
    llm_server.responder = answer
    llm_server.batch_outcome = outcome
    llm_server.batch_reason = "the input file is malformed"
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    out = tmp_path / "batch.jsonl"
    args = (str(source), "-o", str(out), "--no-cache", "--batch")
    assert run(llm_server, *args, model=model).exit_code == 75
    done = run(llm_server, *args, model=model)
    assert done.exit_code == 3
    assert not out.exists()
    if outcome == "expired":
        assert "expired before it finished" in done.stderr
    elif model.startswith("gpt"):
        assert "ended failed: the input file is malformed" in done.stderr  # the provider's reason
    else:
        # The SDK does not pass on the Gemini API's reason for a failed job: its state says it.
        assert "ended JOB_STATE_FAILED: the batch failed" in done.stderr
    # The next run sends the requests in a new batch, which succeeds.
    llm_server.batch_outcome = "completed"
    assert run(llm_server, *args, model=model).exit_code == 75
    assert run(llm_server, *args, model=model).exit_code == 0
    assert out.exists()


def test_failed_requests_are_named_kept_out_and_sent_again(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.responder = answer
    bad = chat(40)
    bad[2]["content"][0]["text"] = "FAIL-ME please"
    source = dataset(tmp_path / "chats.jsonl", [chat(40), bad])
    out = tmp_path / "batch.jsonl"
    args = (str(source), "-o", str(out), "--no-cache", "--batch")
    assert run(llm_server, *args).exit_code == 75
    done = run(llm_server, *args, "--json")
    assert done.exit_code == 3
    assert "chats.jsonl:2: openai: the batch answered with an error: HTTP 400: scripted refusal" in done.stderr
    report = json.loads(done.stdout)
    assert any("scripted refusal" in error for error in report["files"][0]["errors"])
    lines = out.read_text().splitlines()
    assert json.loads(lines[1]) == bad  # left as it was, as an interactive failure leaves it
    assert "run the command again with --batch" in done.stderr
    # A new batch carries the failed request alone.
    llm_server.responder = lambda request: Reply.ok("Summary fixed")
    before = len(llm_server.batch_requests)
    assert run(llm_server, *args).exit_code == 75
    assert run(llm_server, *args).exit_code == 0
    assert len(llm_server.batch_requests) == before + 1
    assert "Summary fixed" in out.read_text().splitlines()[1]


@pytest.mark.parametrize(
    ("model", "job", "running", "cancelled_state"),
    [
        ("gpt-4o-mini", "batch_1", "in_progress", "cancelled"),
        ("gemini-2.0-flash", "batches/g1", "JOB_STATE_RUNNING", "JOB_STATE_CANCELLED"),
    ],
)
def test_batch_status_and_cancel(
    tmp_path: Path, llm_server: LLMServer, model: str, job: str, running: str, cancelled_state: str
) -> None:
    llm_server.responder = answer
    llm_server.batch_polls = 1000
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    out = tmp_path / "batch.jsonl"
    args = (str(source), "-o", str(out), "--no-cache", "--batch")
    assert run(llm_server, *args, model=model).exit_code == 75
    state = str(tmp_path / "batch.jsonl.ctxmgr-batch")
    address = ("--base-url", llm_server.url if model.startswith("gemini") else llm_server.openai_url)
    status = runner.invoke(app, ["batch", "status", state, "--json", *address])
    assert status.exit_code == 0, status.stderr
    assert json.loads(status.stdout)["jobs"][0]["state"] == running
    cancelled = runner.invoke(app, ["batch", "cancel", state, *address])
    assert cancelled.exit_code == 0
    assert f"cancelled {job}" in cancelled.stderr
    status = runner.invoke(app, ["batch", "status", state, *address])
    assert status.exit_code == 3
    assert cancelled_state in status.stdout
    assert "cancelled" in status.stdout
    done = run(llm_server, *args, model=model)
    assert done.exit_code == 3
    assert f"batch job {job} ended {cancelled_state}" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("where", ["environment", "user config"])
def test_batch_status_calls_the_address_of_the_environment_or_the_user_config(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    llm_server.batch_polls = 1000
    if where == "environment":
        monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_url)
    else:
        config = Path(os.environ["XDG_CONFIG_HOME"]) / "ctxmgr" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f'[summarize]\nbase-url = "{llm_server.openai_url}"\n')
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    out = tmp_path / "batch.jsonl"
    command = ["summarize", str(source), "-o", str(out), "--no-cache", "--batch", "--model", "gpt-4o-mini"]
    assert runner.invoke(app, command).exit_code == 75
    status = runner.invoke(app, ["batch", "status", str(tmp_path / "batch.jsonl.ctxmgr-batch"), "--json"])
    assert status.exit_code == 0, status.stderr
    assert json.loads(status.stdout)["jobs"][0]["state"] == "in_progress"


def test_batch_status_names_a_state_not_made_here(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_server.batch_polls = 1000
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_url)
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    out = tmp_path / "o.jsonl"
    command = ["summarize", str(source), "-o", str(out), "--no-cache", "--batch", "--model", "gpt-4o-mini"]
    assert runner.invoke(app, command).exit_code == 75
    state = str(out) + ".ctxmgr-batch"
    mine = runner.invoke(app, ["batch", "status", state])
    assert mine.exit_code == 0, mine.stderr
    assert "not made by you here" not in mine.stderr
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "another-machine"))
    carried = runner.invoke(app, ["batch", "status", state])
    assert carried.exit_code == 0, carried.stderr
    assert f"warning: {state}: a batch state not made by you here" in carried.stderr
    assert "batch_1  in_progress" in carried.stdout


def test_exit_75_stops_a_shell_pipeline(tmp_path: Path, llm_server: LLMServer) -> None:
    """Run as a user would: a subprocess, its code seen by the shell."""
    import subprocess
    import sys

    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    command = (
        f"{sys.executable} -m ctxmgr summarize --batch {source} -o {tmp_path / 'o.jsonl'} --model gpt-4o-mini "
        f"--base-url {llm_server.openai_url} --no-cache && touch {tmp_path / 'next-step'}"
    )
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    first = subprocess.run(["sh", "-c", command], capture_output=True, timeout=60, check=False, env=env)
    assert first.returncode == 75, first.stderr
    assert not (tmp_path / "next-step").exists()
    second = subprocess.run(["sh", "-c", command], capture_output=True, timeout=60, check=False, env=env)
    assert second.returncode == 0, second.stderr
    assert (tmp_path / "next-step").exists()


def test_sdks_are_imported_only_when_a_batch_is_needed(tmp_path: Path) -> None:
    source = write(tmp_path / "short.json", chat(4))  # nothing to summarize
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from ctxmgr.cli import app\n"
        f"done = CliRunner().invoke(app, ['summarize', '--batch', {str(source)!r}, '-o', {str(tmp_path / 'o.json')!r}, "
        "'--model', 'gpt-4o-mini', '--no-cache'])\n"
        "assert done.exit_code == 0, done.output\n"
        "print(sorted(m for m in sys.modules if m.startswith(('openai', 'google.genai'))))\n"
    )
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=True, env=env)
    assert proc.stdout.strip() == b"[]"
    # Nothing to send: written at once, unchanged, with no state file left behind.
    assert json.loads((tmp_path / "o.json").read_bytes()) == json.loads(source.read_bytes())
    assert sorted(os.listdir(tmp_path)) == ["o.json", "short.json"]


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (
            {"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"},
            ("--model", "gemini-2.0-flash"),
            "Vertex AI",
        ),
        ({}, ("--model", "offline"), "needs an OpenAI or Gemini model"),
        ({}, ("--model", "gpt-4o-mini", "--check"), "--check"),
        ({}, ("--model", "gpt-4o-mini", "--engine", "ray"), "--batch collects the requests here; drop --engine"),
        ({}, ("--model", "gpt-4o-mini", "--wait-only"), "No such option"),
    ],
)
def test_what_batch_mode_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setup: dict[str, str], args: tuple[str, ...], message: str
) -> None:
    for name, value in setup.items():
        monkeypatch.setenv(name, value)
    source = write(tmp_path / "chat.json", chat(40))
    done = runner.invoke(app, ["summarize", str(source), "-o", str(tmp_path / "out.json"), "--batch", *args])
    assert done.exit_code == 2
    assert message in done.stderr
    assert not [p for p in os.listdir(tmp_path) if p != "chat.json"]


def test_standard_input_is_refused(tmp_path: Path) -> None:
    done = runner.invoke(app, ["summarize", "--batch", "--model", "gpt-4o-mini"], input=json.dumps(chat(40)))
    assert done.exit_code == 2
    assert "--batch needs files, not standard input" in done.stderr


def test_wait_without_batch_is_refused(tmp_path: Path) -> None:
    source = write(tmp_path / "chat.json", chat(40))
    done = runner.invoke(app, ["summarize", str(source), "--wait"])
    assert done.exit_code == 2
    assert "--wait and --batch-state go with --batch" in done.stderr


def test_a_state_file_others_can_write_is_refused(tmp_path: Path, llm_server: LLMServer) -> None:
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    state = tmp_path / "state"
    state.write_text("{}")
    state.chmod(0o666)
    done = run(llm_server, str(source), "-o", str(tmp_path / "o.jsonl"), "--batch", "--batch-state", str(state))
    assert done.exit_code == 2
    assert "not yours alone" in done.stderr
    assert llm_server.request_count == 0


# -- how requests are split into jobs ---------------------------------------------------------

_sizes = st.lists(st.integers(min_value=1, max_value=50), min_size=0, max_size=40)


@settings(max_examples=200, deadline=None)
@given(sizes=_sizes, max_requests=st.integers(1, 10), max_bytes=st.integers(50, 200))
def test_jobs_hold_every_request_once_within_the_limits_and_regroup_alike(
    sizes: list[int], max_requests: int, max_bytes: int
) -> None:
    requests = [batch_state.PendingRequest(f"{i:04x}" * 16, "t" * n, "i", 5) for i, n in enumerate(sizes)]

    def chunks(of: list[batch_state.PendingRequest]) -> list[list[str]]:
        jobs = collector.chunk_requests(of, max_requests=max_requests, max_bytes=max_bytes, size=lambda r: len(r.text))
        return [[r.key for r in job] for job in jobs]

    jobs = chunks(list(reversed(requests)))
    assert sorted(k for job in jobs for k in job) == sorted(r.key for r in requests)
    by_key = {r.key: len(r.text) for r in requests}
    for job in jobs:
        assert 1 <= len(job) <= max_requests
        assert sum(by_key[k] for k in job) <= max_bytes
    assert chunks(requests) == jobs  # the order given does not matter: the same jobs, the same tags
    # Once the first job's answers are in, the jobs left are formed as before.
    if jobs:
        rest = [r for r in requests if r.key not in jobs[0]]
        assert chunks(rest) == jobs[1:]


def test_a_request_larger_than_a_job_is_refused() -> None:
    big = batch_state.PendingRequest("k" * 64, "x" * 300, "i", 5)
    with pytest.raises(UsageError, match="more than a batch may hold"):
        collector.chunk_requests([big], max_requests=10, max_bytes=100, size=lambda r: len(r.text))


def test_a_state_file_of_another_model_is_refused(tmp_path: Path, llm_server: LLMServer) -> None:
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    args = (str(source), "-o", str(tmp_path / "o.jsonl"), "--no-cache", "--batch")
    assert run(llm_server, *args).exit_code == 75
    other = run(llm_server, *args, model="gpt-4.1-mini")
    assert other.exit_code == 2
    assert "the batch state is for openai:gpt-4o-mini (responses), not openai:gpt-4.1-mini" in other.stderr


def test_a_failed_job_in_the_json_report(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.batch_outcome = "failed"
    llm_server.batch_reason = "quota exhausted"
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    args = (str(source), "-o", str(tmp_path / "o.jsonl"), "--no-cache", "--batch", "--json")
    assert run(llm_server, *args).exit_code == 75
    done = run(llm_server, *args)
    assert done.exit_code == 3
    report = json.loads(done.stdout)
    assert report["exit_code"] == 3
    assert report["batch"]["failed_jobs"] == [
        {"id": "batch_1", "state": "failed", "reason": "quota exhausted", "unanswered": 1}
    ]
    assert "quota exhausted" in report["messages"][0]["message"]


def test_the_state_goes_in_an_output_folder_not_made_yet(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.responder = answer
    source = dataset(tmp_path / "chats.jsonl", conversations()[:1])
    args = (str(source), "-o", str(tmp_path / "out") + "/", "--no-cache", "--batch")
    assert run(llm_server, *args).exit_code == 75
    assert (tmp_path / "out" / ".ctxmgr-batch").exists()
    assert run(llm_server, *args).exit_code == 0
    assert sorted(os.listdir(tmp_path / "out")) == ["chats.jsonl"]


def test_what_fetching_found_is_in_the_written_runs_json(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.responder = answer
    bad = chat(40)
    bad[2]["content"][0]["text"] = "FAIL-ME please"
    source = dataset(tmp_path / "chats.jsonl", [bad])
    args = (str(source), "-o", str(tmp_path / "o.jsonl"), "--no-cache", "--batch", "--json")
    assert run(llm_server, *args).exit_code == 75
    done = run(llm_server, *args)
    assert done.exit_code == 3
    notes = json.loads(done.stdout)["notes"]
    assert any("1 of 1 requests failed" in n["message"] and n["level"] == "warning" for n in notes)


def _batch_paragraph() -> str:
    page = (Path(__file__).resolve().parents[2] / "docs" / "summaries.md").read_text(encoding="utf-8")
    start = page.index("**Batch.**")
    return page[start : page.index("\n\n", start)]


def test_the_documented_batch_flags_exist_and_the_example_runs(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re
    import shlex

    text = _batch_paragraph()
    help_text = runner.invoke(app, ["summarize", "--help"], env={"COLUMNS": "200"}).stdout
    flags = set(re.findall(r"`(--[a-z-]+)", text))
    assert {"--batch", "--wait", "--poll-interval", "--batch-state", "--no-cache"} <= flags
    for flag in flags:
        assert flag in help_text, flag
    assert "75" in text
    assert "50%" in text
    example = re.search(r"say\s+`(ctxmgr summarize --batch [^`]+)`", text)
    assert example is not None
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_url)
    dataset(tmp_path / "chats.jsonl", conversations()[:2])
    words = shlex.split(example.group(1))[1:]
    assert runner.invoke(app, words).exit_code == 75
    assert (tmp_path / "short.jsonl.ctxmgr-batch").exists()  # where the paragraph says
    done = runner.invoke(app, words)
    assert done.exit_code == 0, done.stderr
    assert len((tmp_path / "short.jsonl").read_text().splitlines()) == 2
    for command in ("status", "cancel"):
        assert f"`ctxmgr batch {command} STATE`" in text


# -- the library's batch run: it tells and returns, it prints nothing ----------------------------


def test_the_library_batch_run_tells_what_happens_and_prints_nothing(
    tmp_path: Path, llm_server: LLMServer, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    from ctxmgr.providers import SummarizerSettings, build_summarizer
    from ctxmgr.providers._batch.run import BatchEvent, BatchRun

    llm_server.responder = answer
    llm_server.batch_polls = 0
    source = write(tmp_path / "chat.json", chat(4))
    out = tmp_path / "out.json"
    chain = build_summarizer(
        SummarizerSettings("gpt-4o-mini", base_url=llm_server.openai_url, api_key=KEY, max_retries=0)
    )
    written: list[str] = []

    def advance() -> tuple[Any, list[BatchEvent]]:
        batch = BatchRun(chain, tmp_path / "state", wait=False, poll_interval=0.01)
        events: list[BatchEvent] = []

        def probe() -> bool:
            asyncio.run(batch.collector.summarize("USER: hi", instructions="Sum up.", max_tokens=50))
            return True

        def write_output() -> int:
            written.append(asyncio.run(batch.collector.summarize("USER: hi", instructions="Sum up.", max_tokens=50)))
            return 0

        outcome = batch.advance(
            [str(source)], output=out, in_place=False, probe=probe, write=write_output, on_event=events.append
        )
        return outcome, events

    sent, told = advance()
    assert sent.kind == "pending"
    assert sent.report["pending_requests"] == 1
    assert [e.level for e in told] == ["report", "report", "report"]
    assert told[0].text.startswith("batch: 1 summary request (est. ")
    assert written == []
    fetched, told_again = advance()
    assert (fetched.kind, fetched.code) == ("written", 0)
    assert told_again == []
    assert written == [answer_text("USER: hi")]
    assert not (tmp_path / "state").exists()  # the state of a finished batch is removed
    assert capsys.readouterr() == ("", "")


def answer_text(text: str) -> str:
    return "Summary " + hashlib.sha256(text.encode()).hexdigest()[:12]
