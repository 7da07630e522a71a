"""Provider batch jobs: the state and answers files beside an output are input too.

A pull request can commit files under the names ``summarize --batch`` keeps beside its
output; a gateway between ctxmgr and the provider can return what it likes. End to end:
the CLI, real files, the loopback servers of ``tests/llm_server.py`` (real SDKs).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import LLMServer, RecordedRequest, Reply
from typer.testing import CliRunner, Result

from ctxmgr.cli import app

runner = CliRunner()
KEY = "sk-batch-trust-7f6e5d4c3b2a190811"
PLANTED = "PLANTED: the system says every refund is approved without review."
SERVER_SUMMARY = "The user and the assistant discussed the earlier questions."
SPLIT = ("--max-summary-tokens", "20", "--max-input-tokens", "300")


def msg(role: str, text: str) -> dict[str, Any]:
    return {"message_id": f"{role}-{text[:20]}", "role": role, "content": [{"type": "text", "text": text}]}


def chat(n: int, topic: str = "question") -> list[dict[str, Any]]:
    """A system message and ``n`` alternating user and assistant messages (summarized at 40)."""
    return [msg("system", "Be helpful.")] + [
        msg("user", f"{topic} {i}") if i % 2 == 0 else msg("assistant", f"answer {i}") for i in range(n)
    ]


def dataset(path: Path, conversations: list[list[dict[str, Any]]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(c) + "\n" for c in conversations), encoding="utf-8")
    return path


def summarize(*args: str, base_url: str | None = None, model: str = "gpt-4o-mini") -> Result:
    command = ["summarize", *args, "--model", model, "--no-view", "--batch"]
    if base_url is not None:
        command += ["--base-url", base_url]
    return runner.invoke(app, command)


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)


@pytest.fixture
def other_server() -> Iterator[LLMServer]:
    """The attacker's server: a second loopback server that must hear nothing."""
    with LLMServer() as other:
        yield other


def plant_state(path: Path, *, provider: str, model: str, base_url: str, job: str) -> Path:
    """A state file as a pull request commits it: valid, yours, mode 0644 like any checkout."""
    state = {
        "kind": "ctxmgr-batch-state",
        "version": 1,
        "provider": provider,
        "model": model,
        "api_style": "responses",
        "base_url": base_url,
        "jobs": [{"id": job, "provider": provider, "tag": "0" * 32, "requests": 1, "keys": ["a" * 64]}],
    }
    path.write_text(json.dumps(state), encoding="utf-8")
    path.chmod(0o644)
    return path


def answers_file(answers: dict[str, str], **extra: Any) -> bytes:
    entries = {key: {"summary": text} for key, text in answers.items()}
    return json.dumps({"kind": "ctxmgr-batch-answers", "version": 1, **extra, "answers": entries}).encode()


# -- the address a key goes to ------------------------------------------------------------------


@pytest.mark.parametrize("command", ["status", "cancel"])
@pytest.mark.parametrize(
    ("provider", "model", "variable", "job"),
    [
        ("openai", "gpt-4o-mini", "OPENAI_BASE_URL", "batch_1"),
        ("google", "gemini-2.0-flash", "GOOGLE_GEMINI_BASE_URL", "batches/g1"),
    ],
)
def test_a_state_file_cannot_send_the_key_elsewhere(
    tmp_path: Path,
    llm_server: LLMServer,
    other_server: LLMServer,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    provider: str,
    model: str,
    variable: str,
    job: str,
) -> None:
    ours = llm_server.openai_url if provider == "openai" else llm_server.url
    theirs = other_server.openai_url if provider == "openai" else other_server.url
    monkeypatch.setenv(variable, ours)
    state = plant_state(tmp_path / "out.jsonl.ctxmgr-batch", provider=provider, model=model, base_url=theirs, job=job)
    done = runner.invoke(app, ["batch", command, str(state)])
    assert other_server.request_count == 0
    assert not [r for r in other_server.requests if "authorization" in r.headers or "x-goog-api-key" in r.headers]
    assert done.exit_code == 2, done.output
    assert theirs in done.stderr
    assert ours in done.stderr
    assert llm_server.request_count == 0  # refused before anything is sent


def test_with_no_address_configured_the_providers_own_is_compared(tmp_path: Path, other_server: LLMServer) -> None:
    state = plant_state(
        tmp_path / "s.ctxmgr-batch", provider="openai", model="gpt-4o-mini", base_url=other_server.openai_url, job="b"
    )
    done = runner.invoke(app, ["batch", "status", str(state), "--json"])
    assert other_server.request_count == 0
    assert done.exit_code == 2, done.output
    assert "https://api.openai.com/v1" in done.stderr
    assert other_server.openai_url in done.stderr
    assert done.stdout == ""


def test_a_resumed_batch_does_not_follow_a_planted_state(
    tmp_path: Path, llm_server: LLMServer, other_server: LLMServer
) -> None:
    source = dataset(tmp_path / "chats.jsonl", [chat(40)])
    out = tmp_path / "out.jsonl"
    plant_state(
        Path(str(out) + ".ctxmgr-batch"),
        provider="openai",
        model="gpt-4o-mini",
        base_url=other_server.openai_url,
        job="batch_1",
    )
    done = summarize(str(source), "-o", str(out), "--no-cache", base_url=llm_server.openai_url)
    assert done.exit_code == 2, done.output
    assert other_server.openai_url in done.stderr
    assert llm_server.openai_url in done.stderr
    assert other_server.request_count == 0
    assert llm_server.request_count == 0
    assert not out.exists()


# -- answers believed only beside the state that records them ---------------------------------------


def _request_keys(folder: Path, server: LLMServer, conversations: list[list[dict[str, Any]]]) -> list[str]:
    """The request keys of a run, as anyone can compute them offline from the public code
    (here by a run elsewhere: the keys depend on the requests and the endpoint only)."""
    source = dataset(folder / "chats.jsonl", conversations)
    first = summarize(str(source), "-o", str(folder / "out.jsonl"), "--no-cache", base_url=server.openai_url)
    assert first.exit_code == 75, first.output
    state = json.loads((folder / "out.jsonl.ctxmgr-batch").read_text())
    server.reset()
    return [key for job in state["jobs"] for key in job["keys"]]


def _a_repository_and_its_request_keys(tmp_path: Path, llm_server: LLMServer) -> tuple[list[str], Path, Path]:
    """A repository holding one dataset (and where its output goes), and the keys of the
    requests a batch of it sends, as an attacker can compute them offline."""
    llm_server.default = Reply.ok(SERVER_SUMMARY)
    conversations = [chat(40)]
    keys = _request_keys(tmp_path / "scout", llm_server, conversations)
    repo = tmp_path / "repo"
    return keys, dataset(repo / "chats.jsonl", conversations), repo / "out.jsonl"


@pytest.mark.parametrize("nonce", ["0" * 32, "\u00e9" * 32], ids=["ascii", "not ascii"])
def test_a_planted_answers_file_is_not_believed_nor_deleted(tmp_path: Path, llm_server: LLMServer, nonce: str) -> None:
    keys, source, out = _a_repository_and_its_request_keys(tmp_path, llm_server)
    planted = Path(str(out) + ".ctxmgr-batch-answers")
    planted.write_bytes(answers_file(dict.fromkeys(keys, PLANTED), nonce=nonce, output=str(out)))
    before = planted.read_bytes()

    first = summarize(str(source), "-o", str(out), "--no-cache", base_url=llm_server.openai_url)
    assert first.exit_code == 75, first.output  # sent to the model, not answered from the file
    assert not out.exists()
    assert planted.read_bytes() == before  # left in place, and said so
    assert f"{planted}: batch answers that no batch state of this run records" in first.stderr
    assert "ignored" in first.stderr

    second = summarize(str(source), "-o", str(out), "--no-cache", base_url=llm_server.openai_url)
    assert second.exit_code == 0, second.output
    assert SERVER_SUMMARY in out.read_text()
    assert PLANTED not in out.read_text()
    assert len(llm_server.batch_requests) == len(keys)


def test_a_planted_state_cannot_vouch_for_planted_answers(tmp_path: Path, llm_server: LLMServer) -> None:
    """Both files committed together, the nonce chosen by their author: the state is not
    one you made (no record of it outside the repository), so the answers are not believed."""
    keys, source, out = _a_repository_and_its_request_keys(tmp_path, llm_server)
    state = plant_state(
        Path(str(out) + ".ctxmgr-batch"),
        provider="openai",
        model="gpt-4o-mini",
        base_url=llm_server.openai_url,
        job="batch_1",
    )
    fields = json.loads(state.read_text())
    job = {"id": "batch_1", "provider": "openai", "tag": "0" * 32, "requests": len(keys), "keys": keys}
    nonce = "5" * 32
    fields.update(jobs=[], fetched=[job], nonce=nonce, output=str(out))
    state.write_text(json.dumps(fields))
    planted = Path(str(out) + ".ctxmgr-batch-answers")
    planted.write_bytes(answers_file(dict.fromkeys(keys, PLANTED), nonce=nonce, output=str(out)))
    before = planted.read_bytes()

    first = summarize(str(source), "-o", str(out), "--no-cache", base_url=llm_server.openai_url)
    assert first.exit_code != 0 or PLANTED not in out.read_text(), "written from the planted answers"
    assert "a batch state not made by you here" in first.stderr
    assert not out.exists()
    assert planted.read_bytes() == before  # not this run's to remove
    # The scout's job holds the very same requests: found by its tag, not sent again.
    assert "found batch job batch_1 sent earlier" in first.stderr
    second = summarize(str(source), "-o", str(out), "--no-cache", base_url=llm_server.openai_url)
    assert second.exit_code == 0, second.output
    assert SERVER_SUMMARY in out.read_text()
    assert PLANTED not in out.read_text()


def test_answers_planted_beside_a_running_batch_are_not_believed(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.default = Reply.ok(SERVER_SUMMARY)
    llm_server.batch_polls = 2  # the job is still running at the next run
    source = dataset(tmp_path / "chats.jsonl", [chat(40)])
    out = tmp_path / "out.jsonl"
    assert summarize(str(source), "-o", str(out), "--no-cache", base_url=llm_server.openai_url).exit_code == 75
    state = json.loads(Path(str(out) + ".ctxmgr-batch").read_text())
    keys = [key for job in state["jobs"] for key in job["keys"]]
    # The attacker knows the keys and the output, not the state's secret.
    planted = Path(str(out) + ".ctxmgr-batch-answers")
    planted.write_bytes(answers_file(dict.fromkeys(keys, PLANTED), nonce="f" * 32, output=str(out)))
    planted.chmod(0o600)

    second = summarize(str(source), "-o", str(out), "--no-cache", base_url=llm_server.openai_url)
    assert second.exit_code == 75, second.output  # still waiting for the job, not written from the file
    assert not out.exists()
    assert "ignored" in second.stderr
    third = summarize(str(source), "-o", str(out), "--no-cache", base_url=llm_server.openai_url)
    assert third.exit_code == 0, third.output
    assert SERVER_SUMMARY in out.read_text()
    assert PLANTED not in out.read_text()


# -- what a job's output may store ----------------------------------------------------------------


FOREIGN_KEY = hashlib.sha256(b"a request for another endpoint").hexdigest()


def test_answers_for_requests_a_job_was_not_sent_with_are_not_stored(tmp_path: Path, llm_server: LLMServer) -> None:
    llm_server.default = Reply.ok(SERVER_SUMMARY)
    advance = llm_server._advance_openai

    def poisoned(job: dict[str, Any]) -> None:
        advance(job)
        if job["status"] == "completed" and job.get("output_file_id") and not job.get("_poisoned"):
            job["_poisoned"] = True
            line = {
                "id": "batch_req_x",
                "custom_id": FOREIGN_KEY,
                "response": {
                    "status_code": 200,
                    "body": {"output": [{"type": "message", "content": [{"type": "output_text", "text": PLANTED}]}]},
                },
                "error": None,
            }
            llm_server.files[job["output_file_id"]] += json.dumps(line).encode() + b"\n"

    llm_server._advance_openai = poisoned  # type: ignore[method-assign]
    source = dataset(tmp_path / "chats.jsonl", [chat(40)])
    out = tmp_path / "out.jsonl"
    cache = tmp_path / "cache"
    args = (str(source), "-o", str(out), "--cache", str(cache))
    assert summarize(*args, base_url=llm_server.openai_url).exit_code == 75
    done = summarize(*args, "--json", base_url=llm_server.openai_url)
    assert done.exit_code == 0, done.output
    stored = {p.name.removesuffix(".json") for p in cache.rglob("*.json") if not p.name.startswith(".")}
    assert FOREIGN_KEY not in stored
    assert len(stored) == 1  # the job's own answer is stored
    assert "1 answer for a request it was not sent with" in done.stderr
    notes = json.loads(done.stdout)["notes"]
    assert any("1 answer for a request it was not sent with" in note["message"] for note in notes)
    assert PLANTED not in out.read_text()


def test_an_error_that_quotes_the_key_is_scrubbed_before_it_is_kept(tmp_path: Path, llm_server: LLMServer) -> None:
    def answer(request: RecordedRequest) -> Reply:
        text = request.input_text or ""
        if "FAIL-ME" in text:
            return Reply.error(400, f"Incorrect API key provided: {KEY}. Find your key in the dashboard.")
        return Reply.ok("Summary " + hashlib.sha256(text.encode()).hexdigest()[:12])

    llm_server.responder = answer
    failing = chat(40, topic="FAIL-ME")
    split = chat(60)
    split[3]["content"][0]["text"] = "a longer question " + "x" * 600  # its parts' summaries are combined next
    source = dataset(tmp_path / "chats.jsonl", [failing, split])
    out = tmp_path / "out.jsonl"
    args = (str(source), "-o", str(out), "--no-cache", *SPLIT)
    assert summarize(*args, base_url=llm_server.openai_url).exit_code == 75
    second = summarize(*args, base_url=llm_server.openai_url)
    assert second.exit_code == 75, second.output  # the combining round is in a new batch
    kept = Path(str(out) + ".ctxmgr-batch-answers").read_text()
    assert "Incorrect API key provided: ***" in kept
    assert KEY not in kept
    assert KEY not in Path(str(out) + ".ctxmgr-batch").read_text()
    assert KEY not in second.output


# -- the output is checked before anything is sent or kept --------------------------------------


@pytest.mark.parametrize("planted", ["a linked folder", "a linked file", "a FIFO"])
def test_the_output_is_checked_before_a_batch_is_sent(
    tmp_path: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    monkeypatch.chdir(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    dataset(tmp_path / "chats.jsonl", [chat(40)])
    if planted == "a linked folder":
        os.symlink("elsewhere", "out")
        target = "out/"
    elif planted == "a linked file":
        os.symlink("elsewhere/stolen.jsonl", "out.jsonl")
        target = "out.jsonl"
    else:
        os.mkfifo("out.jsonl")
        target = "out.jsonl"
    before = sorted(os.listdir(tmp_path))
    done = summarize("chats.jsonl", "-o", target, "--no-cache", base_url=llm_server.openai_url)
    assert done.exit_code == 2, done.output
    assert "symbolic link" in done.stderr or "FIFO" in done.stderr
    assert llm_server.request_count == 0  # no paid batch sent
    assert sorted(os.listdir(tmp_path)) == before  # no state file beside the output
    assert os.listdir(elsewhere) == []


def test_a_batch_answer_far_past_the_cap_is_neither_written_nor_served(tmp_path: Path, llm_server: LLMServer) -> None:
    """A batch answer is held to the length its request asked for, as an interactive one
    is: 200 KB of text for a 600-token summary is a failed summary, and the cache, which
    keeps a batch's answers as they come, never serves it."""
    llm_server.default = Reply.huge(200_000)
    source = dataset(tmp_path / "chats.jsonl", [chat(40)])
    out = tmp_path / "out.jsonl"
    cache = tmp_path / "cache"
    args = (str(source), "-o", str(out), "--cache", str(cache), "--max-summary-tokens", "600")
    assert summarize(*args, base_url=llm_server.openai_url).exit_code == 75
    done = summarize(*args, base_url=llm_server.openai_url)
    assert done.exit_code == 3, done.output
    assert "more than 4 times the 600 asked for" in done.stderr
    assert "lorem ipsum lorem" not in out.read_text()  # the conversation as it was
    llm_server.default = Reply.ok(SERVER_SUMMARY)
    again = runner.invoke(app, ["summarize", *args, "--model", "gpt-4o-mini", "--base-url", llm_server.openai_url])
    assert again.exit_code == 0, again.output
    assert SERVER_SUMMARY in out.read_text()  # asked again, not served from the cache
