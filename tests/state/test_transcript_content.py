"""Every kind of content that carries text reaches the summarizer, in every format.

Each test writes a small conversation in a format's documented shape, runs
``ctxmgr summarize`` with the real OpenAI SDK against the local server, and reads the
request the server received. Binary parts must arrive as their description, never as
their bytes; what has nothing readable in it is counted by :func:`render_transcript`.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from llm_server import LLMServer, Reply
from typer.testing import CliRunner

from ctxmgr.cli import app
from ctxmgr.formats import load_value
from ctxmgr.formats._interop import PASSTHROUGH_MIME
from ctxmgr.state import _transcript as transcript
from ctxmgr.state._transcript import render_transcript

runner = CliRunner()
FAKE_KEY = "sk-test-content-5a4b3c2d1e"

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode()
"""1,032 bytes of image: its base64 must never reach the request."""
PDF = base64.b64encode(b"%PDF-1.7\n" + b"0" * 2000).decode()


@pytest.fixture(autouse=True)
def openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)


def sent(server: LLMServer, path: Path, value: Any, *options: str) -> str:
    """Summarize ``value`` (written to ``path``) down to its last message; the transcript sent."""
    path.write_text(json.dumps(value), encoding="utf-8")
    server.script(Reply.ok("A summary."))
    result = runner.invoke(
        app,
        [
            "summarize",
            str(path),
            "--model",
            "gpt-4o-mini",
            "--base-url",
            server.openai_url,
            "--max-messages",
            "1",
            "--keep-recent",
            "1",
            "--no-cache",
            "--no-view",
            *options,
        ],
    )
    assert result.exit_code == 0, result.output
    text = server.last.input_text
    assert text is not None
    return text


def left_out(value: Any, fmt: str) -> dict[str, int]:
    conversation = load_value(value, source="test", layout="document", fmt=fmt)
    return dict(render_transcript(conversation.state.context).left_out)


# -- Anthropic Messages ----------------------------------------------------------------------

ANTHROPIC = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "ABC123"},
                {"type": "text", "text": "HAT456"},
                {
                    "type": "document",
                    "source": {
                        "type": "text",
                        "media_type": "text/plain",
                        "data": "Fare rule: refund in 24 hours.",
                    },
                    "title": "Fare rules",
                },
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "The user wants flight UA881 checked.", "signature": "c2lnbmF0dXJl"},
                {"type": "redacted_thinking", "data": "RW5jcnlwdGVkIHRoaW5raW5n"},
                {
                    "type": "server_tool_use",
                    "id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
                    "name": "web_search",
                    "input": {"query": "UA881 status 2026-11-30"},
                },
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
                    "content": [
                        {
                            "type": "web_search_result",
                            "url": "https://flights.example.com/UA881",
                            "title": "UA881 departs gate C17",
                            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y2ESDA",
                            "page_age": "2 hours ago",
                        }
                    ],
                },
                {"type": "tool_use", "id": "toolu_01A", "name": "get_chart", "input": {"flight": "UA881"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A",
                    "content": [
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                        {"type": "text", "text": "Seat map for UA881: 14C free."},
                    ],
                }
            ],
        },
        {"role": "assistant", "content": "Seat 14C is free."},
        {"role": "user", "content": "Book it."},
    ],
}


def test_anthropic_documents_server_tools_thinking_and_image_results(tmp_path: Path, llm_server: LLMServer) -> None:
    text = sent(llm_server, tmp_path / "messages.json", ANTHROPIC)
    # Two text blocks of one message are separate lines, not one run-together code.
    assert "USER: ABC123\n  HAT456\n" in text
    assert "ABC123HAT456" not in text
    assert "[document title=Fare rules] Fare rule: refund in 24 hours." in text
    assert "[document application/pdf, 2009 bytes]" in text
    assert "[reasoning: The user wants flight UA881 checked.]" in text
    assert '"query": "UA881 status 2026-11-30"' in text
    assert "server_tool_use" in text
    assert "UA881 departs gate C17" in text
    assert "https://flights.example.com/UA881" in text
    # The image of a tool result is described; its text part is sent whole.
    assert "TOOL RESULT get_chart [toolu_01A]: [image image/png, 1032 bytes] | Seat map for UA881: 14C free." in text
    for payload in (PNG[:40], PDF[:40], "EqgfCioIARgB", "RW5jcnlwdGVk", "c2lnbmF0dXJl"):
        assert payload not in text


def test_anthropic_counts_what_has_nothing_readable() -> None:
    assert left_out(ANTHROPIC, "anthropic") == {"redacted thinking": 1, "encrypted content": 1}


# -- Gemini --------------------------------------------------------------------------------

GEMINI = {
    "contents": [
        {
            "role": "user",
            "parts": [{"text": "Plot fares for HAT268."}, {"inlineData": {"mimeType": "image/jpeg", "data": PNG}}],
        },
        {
            "role": "model",
            "parts": [
                {"text": "Comparing the two fares.", "thought": True},
                {"executableCode": {"language": "PYTHON", "code": "print(sum([129, 348]))"}},
                {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "477\n"}},
                {"text": "The total is $477."},
            ],
        },
        {"role": "user", "parts": [{"text": "Thanks."}]},
    ]
}


def test_gemini_executed_code_its_result_and_thoughts(tmp_path: Path, llm_server: LLMServer) -> None:
    text = sent(llm_server, tmp_path / "gemini.json", GEMINI)
    assert "USER: Plot fares for HAT268.\n  [image image/jpeg, 1032 bytes]\n" in text
    assert "[reasoning: Comparing the two fares.]" in text
    assert "[executableCode: " in text
    assert "print(sum([129, 348]))" in text
    assert "[codeExecutionResult: " in text
    assert "477" in text
    assert "OUTCOME_OK" in text
    assert "\n  The total is $477.\n" in text
    assert PNG[:40] not in text


# -- OpenAI Responses ------------------------------------------------------------------------

RESPONSES = {
    "input": [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Find the baggage policy."},
                {"type": "input_image", "image_url": "data:image/png;base64," + PNG},
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_68a1",
            "summary": [{"type": "summary_text", "text": "Searching the policy files for baggage."}],
            "encrypted_content": "gAAAAABoZ3VzZWNyZXQ",
        },
        {
            "type": "file_search_call",
            "id": "fs_68a2",
            "status": "completed",
            "queries": ["baggage allowance"],
            "results": [
                {
                    "file_id": "file-9XkV",
                    "filename": "policy.pdf",
                    "score": 0.93,
                    "text": "Two checked bags up to 23 kg each.",
                    "attributes": {},
                }
            ],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Two bags of 23 kg.", "annotations": []}],
        },
        {"role": "user", "content": "ok"},
    ]
}


def test_responses_reasoning_summary_and_file_search_results(tmp_path: Path, llm_server: LLMServer) -> None:
    text = sent(llm_server, tmp_path / "responses.json", RESPONSES)
    assert "USER: Find the baggage policy.\n  [image image/png, 1032 bytes]\n" in text
    assert "[reasoning: Searching the policy files for baggage.]" in text
    assert "[file_search_call: " in text
    assert "Two checked bags up to 23 kg each." in text
    assert "policy.pdf" in text
    assert "baggage allowance" in text
    assert PNG[:40] not in text
    assert "gAAAAABo" not in text
    assert left_out(RESPONSES, "openai-responses") == {"encrypted reasoning": 1}


# -- OpenAI Chat Completions -------------------------------------------------------------------


def test_chat_parts_are_separated_and_files_described(tmp_path: Path, llm_server: LLMServer) -> None:
    chat = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "ABC123"},
                    {"type": "text", "text": "HAT456"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG}},
                    {
                        "type": "file",
                        "file": {"filename": "receipt.pdf", "file_data": "data:application/pdf;base64," + PDF},
                    },
                ],
            },
            {"role": "assistant", "content": "Noted both codes."},
            {"role": "user", "content": "Next."},
        ]
    }
    text = sent(llm_server, tmp_path / "chat.json", chat)
    assert (
        "USER: ABC123\n  HAT456\n  [image image/png, 1032 bytes]\n"
        "  [document application/pdf, 2009 bytes, name=receipt.pdf]\nASSISTANT: Noted both codes." in text
    )
    assert PNG[:40] not in text
    assert PDF[:40] not in text


# -- native (the 10xGraph reference's model) -----------------------------------------------------


def test_native_document_with_text_is_sent(tmp_path: Path, llm_server: LLMServer) -> None:
    native = [
        {
            "message_id": "m1",
            "role": "user",
            "content": [
                {"type": "text", "text": "See the attached invoice."},
                {
                    "type": "document",
                    "text": "Invoice INV-7731, total EUR 412.50, due 2026-12-15.",
                    "media": {
                        "kind": "data",
                        "data_base64": PDF,
                        "mime_type": "application/pdf",
                        "filename": "inv.pdf",
                    },
                },
                {
                    "type": "image",
                    "media": {"kind": "url", "url": "https://cdn.example.com/gate.jpg"},
                    "alt_text": "Gate C17",
                },
            ],
        },
        {"message_id": "m2", "role": "assistant", "content": [{"type": "text", "text": "Invoice noted."}]},
        {"message_id": "m3", "role": "user", "content": [{"type": "text", "text": "Pay it."}]},
    ]
    text = sent(llm_server, tmp_path / "native.json", native, "--from", "native")
    assert (
        "[document application/pdf, 2009 bytes, name=inv.pdf] Invoice INV-7731, total EUR 412.50, due 2026-12-15."
        in text
    )
    assert "[image at=https://cdn.example.com/gate.jpg, alt=Gate C17]" in text
    assert PDF[:40] not in text


# -- LangChain -----------------------------------------------------------------------------------


def test_langchain_text_parts_are_separated(tmp_path: Path, llm_server: LLMServer) -> None:
    messages = [
        {
            "type": "human",
            "data": {"content": [{"type": "text", "text": "ABC123"}, {"type": "text", "text": "HAT456"}]},
        },
        {"type": "ai", "data": {"content": "Both codes noted."}},
        {"type": "human", "data": {"content": "Next."}},
    ]
    text = sent(llm_server, tmp_path / "langchain.json", messages)
    assert "HUMAN" in text or "USER: ABC123\n  HAT456\n" in text
    assert "ABC123HAT456" not in text


# -- tool outputs made of several parts ---------------------------------------------------------


def test_tool_output_parts_are_separated(tmp_path: Path, llm_server: LLMServer) -> None:
    call = {"id": "call_7", "type": "function", "function": {"name": "fares", "arguments": "{}"}}
    chat = {
        "messages": [
            {"role": "user", "content": "Fares?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {
                "role": "tool",
                "tool_call_id": "call_7",
                "content": [{"type": "text", "text": t} for t in ("HAT268", "$129")],
            },
            {"role": "user", "content": "Book it."},
        ]
    }
    text = sent(llm_server, tmp_path / "chat.json", chat)
    assert "TOOL RESULT fares [call_7]: HAT268 $129" in text


def test_responses_tool_output_with_an_image_keeps_its_text(tmp_path: Path, llm_server: LLMServer) -> None:
    responses = {
        "input": [
            {"role": "user", "content": "Show the seat map."},
            {"type": "function_call", "call_id": "call_9", "name": "seat_map", "arguments": '{"flight": "UA881"}'},
            {
                "type": "function_call_output",
                "call_id": "call_9",
                "output": [
                    {"type": "input_image", "image_url": "data:image/png;base64," + PNG},
                    {"type": "input_text", "text": "Seat 14C is free on UA881."},
                ],
            },
            {"role": "user", "content": "Book 14C."},
        ]
    }
    text = sent(llm_server, tmp_path / "responses.json", responses)
    assert "TOOL RESULT seat_map [call_9]: " in text
    assert "[base64 image/png, 1032 bytes]" in text
    assert "Seat 14C is free on UA881." in text
    assert PNG[:40] not in text


def test_chat_tool_message_image_is_described(tmp_path: Path, llm_server: LLMServer) -> None:
    call = {"id": "call_3", "type": "function", "function": {"name": "seat_map", "arguments": "{}"}}
    tool = {
        "role": "tool",
        "tool_call_id": "call_3",
        "content": [
            {"type": "text", "text": "Seat 14C is free."},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG}},
        ],
    }
    chat = {
        "messages": [
            {"role": "user", "content": "Seats?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            tool,
            {"role": "user", "content": "Book it."},
        ]
    }
    text = sent(llm_server, tmp_path / "chat.json", chat)
    assert "TOOL RESULT seat_map [call_3]: Seat 14C is free.\nTOOL: [image image/png, 1032 bytes]" in text
    assert PNG[:40] not in text


def test_responses_part_of_a_new_type_is_sent_and_written_back(tmp_path: Path, llm_server: LLMServer) -> None:
    part = {"type": "input_note", "text": "Gate changed to C17.", "source": "crew"}
    responses = {
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Status?"}, part]},
            {"role": "user", "content": "Thanks."},
        ]
    }
    text = sent(llm_server, tmp_path / "responses.json", responses)
    assert "USER: Status?\n  [input_note: " in text
    assert "Gate changed to C17." in text
    # Converted to native and back, the part is written as it was read.
    native = runner.invoke(app, ["convert", str(tmp_path / "responses.json"), "--to", "native"])
    assert native.exit_code == 0, native.output
    (tmp_path / "native.json").write_text(native.stdout, encoding="utf-8")
    back = runner.invoke(app, ["convert", str(tmp_path / "native.json"), "--to", "openai-responses"])
    assert back.exit_code == 0, back.output
    assert json.loads(back.stdout)["input"][0]["content"][1] == part


def test_the_transcript_knows_the_adapters_passthrough_type() -> None:
    # state/ does not import formats/, so the MIME type is spelled twice: bound here.
    assert transcript._PASSTHROUGH_MIME == PASSTHROUGH_MIME


def test_ids_and_digests_under_payload_keys_are_kept() -> None:
    digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" * 5
    response = {"data": digest, "result": "HAT268-4OG6T3", "image": {"mimeType": "image/png", "data": PNG}}
    value = {
        "contents": [
            {"role": "user", "parts": [{"text": "Check."}]},
            {"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "lookup", "response": response}}]},
            {"role": "user", "parts": [{"text": "Next."}]},
        ]
    }
    conversation = load_value(value, source="test", layout="document", fmt="gemini")
    text = render_transcript(conversation.state.context).text
    # A hex digest and a booking code are facts, kept whole; the image's bytes are not.
    assert f'"data": "{digest}"' in text
    assert '"result": "HAT268-4OG6T3"' in text
    assert '"data": "[base64 image/png, 1032 bytes]"' in text
    assert PNG[:40] not in text
