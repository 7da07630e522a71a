"""A span larger than one request is split, every part summarized, the summaries combined.

Nothing of the span is cut: every identifier reaches a request, every request fits the
input budget, and the run says it split (stderr, ``--json``, ``--dry-run``). Checked
with the real OpenAI and Gemini SDKs against the local server, in every format.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from llm_server import LLMServer, RecordedRequest, Reply
from typer.testing import CliRunner

from ctxmgr import formats
from ctxmgr.cli import app
from ctxmgr.errors import ProviderError
from ctxmgr.facts import find_facts
from ctxmgr.providers import ProviderOptions, SummarizerSettings, build_summarizer, get_summarizer
from ctxmgr.providers._budgets import CONSERVATIVE_INPUT_TOKENS, default_input_tokens, input_limit_of
from ctxmgr.state import AgentState, SummaryContextManager
from ctxmgr.state._report import collect_summary_reports
from ctxmgr.state._split import CONTINUED, CONTINUES, pack, split_item
from ctxmgr.state._tokens import CHARS_PER_TOKEN
from ctxmgr.state._transcript import render_transcript

runner = CliRunner()
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CODE = re.compile(r"\b[A-Z]{3}\d{3}\b")


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-split-0a1b2c")
    monkeypatch.setenv("GEMINI_API_KEY", "gm-test-split-0a1b2c")


def echo_codes(request: RecordedRequest) -> Reply:
    """A model that keeps every fact it is shown (and writes nothing else)."""
    facts = [fact.text for fact in find_facts(request.input_text or "")]
    return Reply.ok("Facts: " + ("; ".join(facts) or "none") + ".")


def booking(turns: int, codes_per_result: int = 3, *, told: bool = False) -> list[dict[str, Any]]:
    """An OpenAI chat conversation whose tool results hold ``turns * codes_per_result`` codes
    (``told``: the tool reserves them and the assistant confirms them to the user, which
    makes them required facts; the rows of a search it merely lists would be optional)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an airline agent."}]
    tool = "reserve_flights" if told else "search"
    for turn in range(turns):
        call_id = f"call_{turn:04d}"
        codes = [f"HAT{turn * codes_per_result + k:03d}" for k in range(codes_per_result)]
        messages += [
            {"role": "user", "content": f"Turn {turn}: which flights can I take? " + "please " * 30},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": {"name": tool, "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps({"flights": codes})},
            {
                "role": "assistant",
                "content": f"I found {', '.join(codes) if told else len(codes)} flights for turn {turn}.",
            },
        ]
    return messages


def summarize(path: Path, server: LLMServer, *options: str) -> Any:
    return runner.invoke(
        app,
        ["summarize", str(path), "--model", "gpt-4o-mini", "--base-url", server.openai_url, "--no-cache", *options],
    )


# -- the pieces ------------------------------------------------------------------------------


def _joined(pieces: list[str]) -> str:
    """The pieces with their markers taken off (only where split_item put them)."""
    last = len(pieces) - 1
    return "".join(
        piece.removeprefix(CONTINUED if i > 0 else "").removesuffix(CONTINUES if i < last else "")
        for i, piece in enumerate(pieces)
    )


@settings(max_examples=150, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=3000), st.integers(min_value=60, max_value=500))
def test_split_item_keeps_every_character_within_the_limit(text: str, limit: int) -> None:
    pieces = split_item(text, limit)
    assert all(len(piece) <= limit for piece in pieces)
    assert _joined(pieces) == text


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=400), max_size=30), st.integers(min_value=60, max_value=600))
def test_pack_keeps_items_whole_and_in_order(items: list[str], limit: int) -> None:
    parts = pack(items, limit)
    assert all(len(part) <= limit for part in parts)
    whole = [item for item in items if len(item) <= limit]
    joined = "\n".join(parts)
    position = 0
    for item in whole:  # every item that fits one part is in one part, in order
        found = joined.find(item, position)
        assert found >= 0
        position = found + len(item)
    if all(len(item) <= limit for item in items) and items:
        assert "\n".join(parts) == "\n".join(items)


def test_a_long_run_without_spaces_is_cut_only_where_it_must_be() -> None:
    text = "word " * 50 + "X" * 500
    pieces = split_item(text, 200)
    assert pieces[0].removesuffix(CONTINUES).endswith("word ")  # cut after a space, not inside a word
    assert _joined(pieces) == text


# -- budgets -----------------------------------------------------------------------------------


def test_default_budgets_by_family_and_for_base_url_servers() -> None:
    assert default_input_tokens("gpt-4o-mini") == 75_000
    assert default_input_tokens("gemini-2.0-flash") == 600_000
    assert default_input_tokens("llama3.1:8b") == CONSERVATIVE_INPUT_TOKENS
    remote = get_summarizer("gpt-4o-mini")
    local = get_summarizer("gpt-4o-mini", options=ProviderOptions(base_url="http://127.0.0.1:11434/v1"))
    assert input_limit_of(remote, "gpt-4o-mini")[0] == 75_000
    tokens, why = input_limit_of(local, "gpt-4o-mini")
    assert tokens == CONSERVATIVE_INPUT_TOKENS
    assert "base URL" in why
    assert input_limit_of(get_summarizer("offline"), "offline")[0] is None


def test_openai_base_url_variable_counts_as_a_custom_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    assert input_limit_of(get_summarizer("gpt-4o"), "gpt-4o")[0] == CONSERVATIVE_INPUT_TOKENS


def test_a_budget_too_small_to_combine_two_summaries_is_a_usage_error(tmp_path: Path, llm_server: LLMServer) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(booking(3)))
    before = path.read_bytes()
    result = summarize(path, llm_server, "--max-input-tokens", "500", "--max-messages", "2", "-i")
    assert result.exit_code == 2
    assert "--max-input-tokens" in result.output
    assert "--max-summary-tokens 600" in result.output
    assert llm_server.request_count == 0
    assert path.read_bytes() == before


# -- end to end --------------------------------------------------------------------------------


def test_a_span_larger_than_the_budget_is_split_and_every_code_reaches_a_request(
    tmp_path: Path, llm_server: LLMServer
) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(booking(60)))
    llm_server.responder = echo_codes
    result = summarize(path, llm_server, "--max-messages", "4", "--keep-recent", "2", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    (span,) = report["files"][0]["summaries"]
    requests = llm_server.requests
    assert span["parts"] > 1
    assert span["rounds"] >= 2
    assert span["calls"] == len(requests)
    assert span["input_limit"] == CONSERVATIVE_INPUT_TOKENS  # the default for a --base-url server
    for request in requests:  # every request within the budget, instructions included
        size = len(request.input_text or "") + len(request.instructions or "")
        assert size // CHARS_PER_TOKEN <= CONSERVATIVE_INPUT_TOKENS
    first_round = [r for r in requests if "Summarize part" in (r.input_text or "")]
    sent = set(CODE.findall(" ".join(r.input_text or "" for r in first_round)))
    assert sent >= {f"HAT{n:03d}" for n in range(58 * 3)}  # every code of the span
    # The summaries were combined, and the combined summary still holds every code.
    assert any("Combine into one summary" in (r.input_text or "") for r in requests)
    assert span["missing_facts"] == []
    assert span["facts"] >= 58 * 3
    assert "summarized in parts, then combined" in result.stderr


def test_one_tool_result_larger_than_the_budget_is_split_not_cut(tmp_path: Path, llm_server: LLMServer) -> None:
    codes = [f"ZQ{n:04d}X" for n in range(4000)]  # ~40 KB in one result
    messages = [
        {"role": "user", "content": "List every code."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_big", "type": "function", "function": {"name": "codes", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "call_big", "content": " ".join(codes)},
        {"role": "assistant", "content": "Here they are."},
        {"role": "user", "content": "Thanks."},
    ]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(messages))
    result = summarize(path, llm_server, "--max-messages", "2", "--keep-recent", "1", "--json")
    assert result.exit_code == 0, result.output
    (span,) = json.loads(result.stdout)["files"][0]["summaries"]
    assert span["split_items"] == 1
    assert span["parts"] > 5
    sent = " ".join(r.input_text or "" for r in llm_server.requests)
    assert set(re.findall(r"ZQ\d{4}X", sent)) == set(codes)
    assert "[continues in the next part]" in sent
    assert "[continued]" in sent


def test_dry_run_counts_the_calls_and_tokens_of_a_split(tmp_path: Path, llm_server: LLMServer) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(booking(60)))
    planned = runner.invoke(
        app,
        [
            "summarize",
            str(path),
            "--model",
            "gpt-4o-mini",
            "--base-url",
            llm_server.openai_url,
            "--max-messages",
            "4",
            "--keep-recent",
            "2",
            "--dry-run",
            "--json",
        ],
    )
    assert planned.exit_code == 0, planned.output
    plan = json.loads(planned.stdout)
    assert llm_server.request_count == 0
    assert plan["totals"]["split"] == 1
    assert plan["input_limit"] == CONSERVATIVE_INPUT_TOKENS
    done = summarize(path, llm_server, "--max-messages", "4", "--keep-recent", "2", "--json")
    (span,) = json.loads(done.stdout)["files"][0]["summaries"]
    # The plan counts later rounds at the longest a summary may be: never fewer calls.
    assert plan["totals"]["calls"] >= span["calls"]
    first_round_tokens = sum(
        (len(r.input_text or "") + len(r.instructions or "")) // CHARS_PER_TOKEN
        for r in llm_server.requests
        if "Summarize part" in (r.input_text or "")
    )
    assert plan["totals"]["input_tokens"] >= first_round_tokens


def test_a_split_through_the_gemini_sdk(tmp_path: Path, llm_server: LLMServer) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(booking(40)))
    llm_server.responder = echo_codes
    result = runner.invoke(
        app,
        [
            "summarize",
            str(path),
            "--model",
            "gemini-2.0-flash",
            "--base-url",
            llm_server.url,
            "--no-cache",
            "--max-messages",
            "4",
            "--keep-recent",
            "2",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    (span,) = json.loads(result.stdout)["files"][0]["summaries"]
    assert span["parts"] > 1
    assert all(r.kind == "gemini" for r in llm_server.requests)
    assert span["missing_facts"] == []


@pytest.mark.parametrize(
    "sample", ["openai-chat.json", "openai-responses.json", "anthropic.json", "gemini.json", "langchain.json"]
)
def test_every_format_sends_every_fact_of_its_span(tmp_path: Path, llm_server: LLMServer, sample: str) -> None:
    data = (SAMPLES / sample).read_bytes()
    conversation = formats.load(data, source=sample)
    manager: SummaryContextManager[Any] = SummaryContextManager("gpt-4o-mini", max_messages=2, keep_recent=1)
    plan = manager.prepare(conversation.state.model_copy(update={"context": list(conversation.state.context)}))
    assert plan is not None
    transcript = render_transcript(plan[0])
    facts = find_facts(transcript.text, ignore=transcript.call_ids)
    path = tmp_path / sample
    path.write_bytes(data)
    result = summarize(path, llm_server, "--max-messages", "2", "--keep-recent", "1", "--max-input-tokens", "1500")
    assert result.exit_code == 0, result.output
    sent = "\n".join(r.input_text or "" for r in llm_server.requests)
    assert facts
    assert [fact.text for fact in facts if fact.text not in sent] == []


# -- the library -----------------------------------------------------------------------------


def test_the_library_reports_each_summary(llm_server: LLMServer) -> None:
    summarizer = get_summarizer("gpt-4o-mini", options=ProviderOptions(base_url=llm_server.openai_url))
    manager: SummaryContextManager[AgentState] = SummaryContextManager(
        "gpt-4o-mini", max_messages=2, keep_recent=1, summarizer=summarizer, max_input_tokens=1500
    )
    state = formats.load(json.dumps(booking(30)).encode(), source="chat.json").state
    llm_server.responder = echo_codes
    with collect_summary_reports() as reports:
        state = manager.trim_context(state)
    (report,) = reports
    assert report.calls == llm_server.request_count > 2
    assert report.input_limit == 1500
    assert report.input_limit_reason == "--max-input-tokens"
    assert state.context_summary is not None
    assert "HAT000" in state.context_summary


# -- the fact check --------------------------------------------------------------------------


def _three_turns(tmp_path: Path) -> Path:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(booking(3, told=True)))
    return path


def test_missing_facts_are_named_on_stderr_and_all_listed_in_json(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _three_turns(tmp_path)
    llm_server.script(Reply.ok("The user asked about flights HAT000 and HAT001."))
    result = summarize(path, llm_server, "--max-messages", "4", "--keep-recent", "1", "--json")
    assert result.exit_code == 0, result.output
    (span,) = json.loads(result.stdout)["files"][0]["summaries"]
    missing = {fact["text"] for fact in span["missing_facts"]}
    assert {"HAT002", "HAT003", "HAT004", "HAT005"} <= missing
    assert not {"HAT000", "HAT001"} & missing
    required = {fact["text"] for fact in span["missing_facts"] if fact["required"]}
    # What the assistant told the user is required, unless the kept message says it again.
    assert required == {"HAT002", "HAT003", "HAT004", "HAT005"}
    assert f"lacks {len(required)} required of {span['facts']} facts" in result.stderr
    assert f"; {len(missing) - len(required)} optional facts left out" in result.stderr
    totals = json.loads(result.stdout)["totals"]
    assert (totals["missing_required"], totals["missing_optional"]) == (4, len(missing) - 4)
    assert "HAT002" in result.stderr
    assert json.loads(result.stdout)["totals"]["missing_facts"] == len(missing)


def test_require_facts_asks_once_more_naming_what_is_missing(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _three_turns(tmp_path)
    llm_server.script(
        Reply.ok("The user asked about flights."),
        Reply.ok("The user asked about 3 flights: " + ", ".join(f"HAT{n:03d}" for n in range(9)) + "."),
    )
    result = summarize(path, llm_server, "--max-messages", "4", "--keep-recent", "1", "--require-facts", "-i")
    assert result.exit_code == 0, result.output
    _first, second = llm_server.requests
    asked = second.input_text or ""
    assert "MISSING FACTS: " in asked
    assert all(f"HAT{n:03d}" in asked for n in range(6))  # every missing code, with an excerpt
    assert "EXCERPT: " in asked
    assert "The user asked about flights." in asked  # the summary to revise
    assert "HAT008" in json.loads(path.read_text())[0]["content"] or "HAT008" in path.read_text()


def test_require_facts_fails_the_conversation_when_facts_stay_missing(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _three_turns(tmp_path)
    before = path.read_bytes()
    llm_server.default = Reply.ok("The user asked about flights.")
    result = summarize(path, llm_server, "--max-messages", "4", "--keep-recent", "1", "--require-facts", "-i")
    assert result.exit_code == 3
    assert llm_server.request_count == 2  # asked once more, not in a loop
    assert "after asking again" in result.stderr
    assert "HAT000" in result.stderr
    assert path.read_bytes() == before


def test_without_require_facts_a_summary_lacking_facts_is_kept(tmp_path: Path, llm_server: LLMServer) -> None:
    path = _three_turns(tmp_path)
    llm_server.default = Reply.ok("The user asked about flights.")
    result = summarize(path, llm_server, "--max-messages", "4", "--keep-recent", "1", "-i")
    assert result.exit_code == 0
    assert llm_server.request_count == 1
    assert "The user asked about flights." in path.read_text()


def test_content_left_out_of_the_requests_is_counted_in_json_and_named_on_stderr(
    tmp_path: Path, llm_server: LLMServer
) -> None:
    items = [
        {"role": "user", "content": "Find flight HAT100."},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB" + "x" * 200},
        {"role": "assistant", "content": [{"type": "output_text", "text": "HAT100 leaves at 9."}]},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": [{"type": "output_text", "text": "You are welcome."}]},
    ]
    path = tmp_path / "responses.json"
    path.write_text(json.dumps({"input": items}))
    result = summarize(path, llm_server, "--max-messages", "2", "--keep-recent", "1", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["files"][0]["left_out"] == {"encrypted reasoning": 1}
    assert report["totals"]["left_out"] == {"encrypted reasoning": 1}
    assert "1 encrypted reasoning" in result.stderr
    assert "gAAAAB" not in (llm_server.last.input_text or "")


def test_a_failed_part_stops_the_other_calls(llm_server: LLMServer) -> None:
    import asyncio

    from ctxmgr.providers import SummarizerChain, SummarizerSettings

    inner = get_summarizer("gpt-4o-mini", options=ProviderOptions(base_url=llm_server.openai_url, max_retries=0))
    chain = SummarizerChain(inner, SummarizerSettings("gpt-4o-mini", concurrency=2))
    manager: SummaryContextManager[AgentState] = SummaryContextManager(
        "gpt-4o-mini", max_messages=2, keep_recent=1, summarizer=chain, on_error="raise"
    )
    state = formats.load(json.dumps(booking(200)).encode(), source="chat.json").state
    assert manager.plan_requests(manager.prepare(state.model_copy())[0]).parts >= 12  # type: ignore[index]
    llm_server.script(Reply.error(401, "bad key"))
    llm_server.default = Reply.ok("A part.", delay=0.1)

    async def run() -> None:
        with pytest.raises(Exception, match=r"401|bad key"):
            await manager.atrim_context(state)
        await asyncio.sleep(0.5)  # time for calls left running to reach the server

    asyncio.run(run())
    assert llm_server.request_count <= 3  # the remaining parts were never sent


REAL = Path(__file__).resolve().parents[1] / "data" / "tau-airline-sample.jsonl"


def test_real_conversations_split_small_send_every_fact_and_the_digest_keeps_them(
    tmp_path: Path, llm_server: LLMServer
) -> None:
    data = REAL.read_bytes()
    path = tmp_path / "real.jsonl"
    path.write_bytes(data)
    llm_server.responder = echo_codes
    result = summarize(path, llm_server, "--max-messages", "0", "--keep-recent", "3", "--json")
    assert result.exit_code == 0, result.output
    spans = json.loads(result.stdout)["files"][0]["summaries"]
    assert len(spans) == len(data.splitlines())
    assert any(span["parts"] > 1 for span in spans)
    # A model keeping all it is shown keeps every fact but those its context makes: numbers
    # under money keys ("amount": 204), labels ("membership": "gold"), choices and places'
    # codes ("to JFK") are facts of a span, not of a part's summary that lists them bare
    # ("204", "gold", "JFK" alone are none), so this echoing model drops them when
    # combining parts. Each still reached it.
    missing = [fact for span in spans for fact in span["missing_facts"]]
    assert all(_marked_by_context(fact) for fact in missing), [f for f in missing if not _marked_by_context(f)]
    sent = "\n".join(request.input_text or "" for request in llm_server.requests)
    assert all(fact["text"] in sent for fact in missing)
    offline = runner.invoke(app, ["summarize", str(path), "--max-messages", "0", "--keep-recent", "3", "--json"])
    (report,) = json.loads(offline.stdout)["files"]
    assert sum(s["facts"] for s in report["summaries"]) > 100
    assert report["summaries"]
    assert all(s["missing_facts"] == [] for s in report["summaries"])


def _marked_by_context(fact: dict[str, Any]) -> bool:
    place = fact["kind"] == "code" and fact["text"].isalpha() and len(fact["text"]) <= 4
    return fact["kind"] in ("amount", "label", "choice", "category") or place


@pytest.mark.parametrize("model", ["gemini-2.0-flash", "gpt-4o-mini"])
def test_require_facts_through_each_sdk(tmp_path: Path, llm_server: LLMServer, model: str) -> None:
    path = _three_turns(tmp_path)
    llm_server.script(Reply.ok("Flights were discussed."), Reply.ok("Still vague."))
    base = llm_server.url if model.startswith("gemini") else llm_server.openai_url
    result = runner.invoke(
        app,
        [
            *("summarize", str(path), "--model", model, "--base-url", base, "--no-cache"),
            *("--max-messages", "4", "--keep-recent", "1", "--require-facts", "--json"),
        ],
    )
    assert result.exit_code == 3
    (span,) = json.loads(result.stdout)["files"][0]["summaries"]
    assert span["retried"] is True
    assert span["failed"] is True
    assert "MISSING FACTS" in (llm_server.last.input_text or "")


def test_what_the_offline_digest_shortened_is_one_note_per_file_and_each_in_json(tmp_path: Path) -> None:
    path = tmp_path / "real.jsonl"
    path.write_bytes(REAL.read_bytes())
    options = ["--max-messages", "0", "--keep-recent", "1", "--max-summary-tokens", "150"]
    result = runner.invoke(app, ["summarize", str(path), *options, "--json"])
    assert result.exit_code == 0, result.output
    spans = json.loads(result.stdout)["files"][0]["summaries"]
    shortened = [span for span in spans if span["notes"]]
    assert len(shortened) >= 2
    assert all("the offline digest left out" in span["notes"][0] for span in shortened)
    notes = [line for line in result.stderr.splitlines() if "the summarizer shortened" in line]
    assert len(notes) == 1
    assert f"the summarizer shortened {len(shortened)} summaries" in notes[0]


class _Recording:
    """A summarizer that answers at once (without declaring it) and fails the requests
    numbered in ``fail_at``."""

    name = "recording"

    def __init__(self, fail_at: frozenset[int]) -> None:
        self.fail_at = fail_at
        self.asked: list[str] = []

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        self.asked.append(text)
        if len(self.asked) in self.fail_at:
            raise ProviderError(f"request {len(self.asked)} failed", provider="recording")
        return f"Part {len(self.asked)}: " + "; ".join(fact.text for fact in find_facts(text))


class _RecordingAtOnce(_Recording):
    """The same, declaring that it never waits."""

    never_waits = True

    async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
        return await super().summarize(text, instructions=instructions, max_tokens=max_tokens)


def test_only_a_class_that_answers_at_once_says_it_never_waits() -> None:
    """The declaration belongs to the class defining ``summarize``: a subclass that
    overrides it, or a wrapper forwarding attributes, is taken to wait."""
    from ctxmgr._summarizer import never_waits
    from ctxmgr.providers import get_summarizer
    from ctxmgr.providers._offline import OfflineSummarizer

    class Slower(OfflineSummarizer):
        async def summarize(self, text: str, *, instructions: str, max_tokens: int) -> str:
            return await super().summarize(text, instructions=instructions, max_tokens=max_tokens)

    class Forwarding:
        def __init__(self, inner: object) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> object:
            return getattr(self.inner, name)

    offline = get_summarizer("offline")
    assert never_waits(offline)
    assert never_waits(build_summarizer(SummarizerSettings("offline", concurrency=4)))
    assert never_waits(_RecordingAtOnce(frozenset()))
    assert not never_waits(_Recording(frozenset()))
    assert not never_waits(Slower())
    assert not never_waits(Forwarding(offline))
    assert not never_waits(build_summarizer(SummarizerSettings("gpt-4o-mini", concurrency=4)))


@pytest.mark.parametrize("fail_at", [frozenset(), frozenset({1}), frozenset({2}), frozenset({3, 5}), frozenset({99})])
def test_parts_of_a_summarizer_that_never_waits_are_asked_as_the_tasks_would_be(fail_at: frozenset[int]) -> None:
    """Without an event loop, the parts are asked one after the other: the same requests in
    the same order, the same summary, and the same first failure as the tasks under
    ``asyncio.gather`` give a summarizer that answers at once."""
    import asyncio

    from ctxmgr.files._coroutines import run_without_loop

    state = formats.load(json.dumps(booking(40)).encode(), source="chat.json").state
    runs: list[tuple[list[str], str]] = []
    for declared in (False, True):
        summarizer = _RecordingAtOnce(fail_at) if declared else _Recording(fail_at)
        manager: SummaryContextManager[AgentState] = SummaryContextManager(
            "recording", max_messages=2, keep_recent=1, summarizer=summarizer, on_error="raise", max_input_tokens=1500
        )
        work = manager.atrim_context(state.model_copy(deep=True))
        try:
            done = run_without_loop(work) if declared else asyncio.run(work)
            outcome = done.context_summary or ""
        except ProviderError as error:
            outcome = f"failed: {error}"
        runs.append((summarizer.asked, outcome))
    (waited, waited_outcome), (in_turn, in_turn_outcome) = runs
    assert len(waited) > 3  # split in parts, then combined
    assert in_turn == waited
    assert in_turn_outcome == waited_outcome
    if fail_at & set(range(1, len(waited) + 1)):
        assert in_turn_outcome.startswith("failed: recording: request ")


def test_asking_whether_a_manager_waits_builds_no_summarizer() -> None:
    """A manager without a summarizer sends through ``call_llm`` (which may wait), built
    when the first summary is asked for: an unknown model is no error before that."""
    from ctxmgr.files._settings import never_waits

    manager: SummaryContextManager[AgentState] = SummaryContextManager("some-local-model", max_messages=100)
    assert not never_waits(manager)
    assert manager._summarizer is None
    offline = SummaryContextManager("offline", summarizer=get_summarizer("offline"))
    assert never_waits(offline)
