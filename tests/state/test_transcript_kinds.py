"""Every documented kind of content, in every format: kept, and shown to the summarizer.

One table per format, one row per kind of content its provider documents. Each row is a
small file in that format; for each, reading and writing it back gives the file as it was,
the kind's text reaches :func:`render_transcript` (each part of a message on its own
line), no base64 payload does, and what has nothing readable in it is counted in
``left_out``. Where the model carries the kind, a row also names the piece that a trip
through native (``convert --to native`` and back) must write back unchanged.

These run in-process; ``test_transcript_content.py`` sends a few of the same kinds
through ``ctxmgr summarize`` to the local server.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _trajectory_support import Call, Turn, openhands_events, swe_agent_trajectory

from ctxmgr.formats import dump, load, load_value
from ctxmgr.state._transcript import render_transcript

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode()
"""1,032 bytes of image."""
PDF = base64.b64encode(b"%PDF-1.7\n" + b"0" * 2000).decode()
"""2,009 bytes of document."""
WAV = base64.b64encode(b"RIFF" + bytes(range(200)) * 5).decode()
"""1,004 bytes of audio."""

_PAYLOAD = re.compile(r"[A-Za-z0-9+/=]{120,}")
"""A run this long of base64 characters is a payload's bytes, never text worth sending."""


@dataclass(frozen=True)
class Kind:
    """One kind of content in a small file of its format."""

    name: str
    value: Any
    shows: tuple[str, ...]
    """Text the transcript must hold (a ``\\n  `` inside one is the part separator)."""
    kept: Any = None
    """A piece of ``value`` that a trip through native writes back unchanged."""
    left_out: dict[str, int] = field(default_factory=dict)


def _contains(value: Any, piece: Any) -> bool:
    if value == piece:
        return True
    if isinstance(value, dict):
        return any(_contains(v, piece) for v in value.values())
    if isinstance(value, list):
        return any(_contains(v, piece) for v in value)
    return False


# -- OpenAI Responses --------------------------------------------------------------------


def _responses(*items: Any) -> dict[str, Any]:
    return {"model": "gpt-5", "input": [{"role": "user", "content": "go"}, *items, {"role": "user", "content": "end"}]}


def _assistant_item(text: str = "ok") -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


_NEW_PART = {"type": "input_note", "text": "NOTE-77", "source": "clipboard"}
_FILE_PART = {"type": "input_file", "file_data": f"data:application/pdf;base64,{PDF}", "filename": "r.pdf"}
_IMAGE_PART = {"type": "input_image", "detail": "auto", "image_url": f"data:image/png;base64,{PNG}"}
_CITED_PART = {
    "type": "output_text",
    "text": "See the policy.",
    "annotations": [
        {
            "type": "url_citation",
            "url": "https://cite.example/p",
            "title": "CITE-TITLE",
            "start_index": 0,
            "end_index": 3,
        }
    ],
}
_REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "SUM-1"}, {"type": "summary_text", "text": "SUM-2"}],
    "content": [{"type": "reasoning_text", "text": "RAW-REASON"}],
    "encrypted_content": "gAAAAABoZ3VzZWNyZXQ",
}
_WEB_SEARCH = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "WS-QUERY", "sources": [{"type": "url", "url": "https://src.example/1"}]},
}
_FILE_SEARCH = {
    "type": "file_search_call",
    "id": "fs_1",
    "status": "completed",
    "queries": ["FS-QUERY"],
    "results": [{"file_id": "file-1", "filename": "policy.pdf", "text": "FS-TEXT", "score": 0.9}],
}
_CODE = {
    "type": "code_interpreter_call",
    "id": "ci_1",
    "status": "completed",
    "container_id": "cntr_1",
    "code": "print(6 * 7)",
    "outputs": [{"type": "logs", "logs": "LOG-42"}, {"type": "image", "url": "https://img.example/plot.png"}],
}
_IMAGE_GEN = {
    "type": "image_generation_call",
    "id": "ig_1",
    "status": "completed",
    "result": PNG,
    "revised_prompt": "REVISED-PROMPT",
}
_MCP = {
    "type": "mcp_call",
    "id": "mcp_1",
    "server_label": "crm",
    "name": "lookup",
    "arguments": '{"q": "MCP-ARG"}',
    "output": "MCP-OUT",
}
_MCP_TOOLS = {
    "type": "mcp_list_tools",
    "id": "ml_1",
    "server_label": "crm",
    "tools": [{"name": "lookup", "input_schema": {}, "description": "TOOL-DESC"}],
}
_PROGRAM = {"type": "program", "id": "pg_1", "call_id": "call_pg", "code": "PROGRAM-CODE", "fingerprint": "fp-1"}
_PROGRAM_OUT = {
    "type": "program_output",
    "id": "po_1",
    "call_id": "call_pg",
    "result": "PROGRAM-RESULT",
    "status": "completed",
}
_COMPACTION = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAABjb21wYWN0ZWQ"}

RESPONSES = [
    Kind(
        "a content part of a type new to the reader",
        _responses({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "A1"}, _NEW_PART]}),
        ("USER: A1\n  [input_note: ", "NOTE-77", "clipboard"),
        kept=_NEW_PART,
    ),
    Kind(
        "input_file with inline data",
        _responses({"role": "user", "content": [_FILE_PART]}),
        ("[document application/pdf, 2009 bytes, name=r.pdf]",),
        kept=_FILE_PART,
    ),
    Kind(
        "input_image with inline data",
        _responses({"role": "user", "content": [{"type": "input_text", "text": "Look:"}, _IMAGE_PART]}),
        ("USER: Look:\n  [image image/png, 1032 bytes]",),
        kept=_IMAGE_PART,
    ),
    Kind(
        "refusal",
        _responses({"type": "message", "role": "assistant", "content": [{"type": "refusal", "refusal": "REFUSED-9"}]}),
        ("ASSISTANT: REFUSED-9",),
    ),
    Kind(
        "output_text with citations",
        _responses({"type": "message", "role": "assistant", "content": [_CITED_PART]}),
        ("See the policy. [citations: ", "CITE-TITLE", "https://cite.example/p"),
        kept=_CITED_PART,
    ),
    Kind(
        "reasoning: summary, reasoning text, encrypted content",
        _responses(_REASONING, _assistant_item()),
        ("[reasoning: SUM-1 SUM-2 RAW-REASON]\n  ok",),
        kept=_REASONING,
        left_out={"encrypted reasoning": 1},
    ),
    Kind(
        "web_search_call",
        _responses(_WEB_SEARCH, _assistant_item()),
        ("WS-QUERY", "https://src.example/1"),
        _WEB_SEARCH,
    ),
    Kind(
        "file_search_call results",
        _responses(_FILE_SEARCH, _assistant_item()),
        ("FS-QUERY", "FS-TEXT", "policy.pdf"),
        _FILE_SEARCH,
    ),
    Kind(
        "code_interpreter_call outputs",
        _responses(_CODE, _assistant_item()),
        ("print(6 * 7)", "LOG-42", "https://img.example/plot.png"),
        kept=_CODE,
    ),
    Kind(
        "image_generation_call",
        _responses(_IMAGE_GEN, _assistant_item()),
        ("REVISED-PROMPT", '"result": "[base64 1032 bytes]"'),
        kept=_IMAGE_GEN,
    ),
    Kind("mcp_call", _responses(_MCP, _assistant_item()), ("MCP-ARG", "MCP-OUT"), _MCP),
    Kind("mcp_list_tools", _responses(_MCP_TOOLS, _assistant_item()), ("TOOL-DESC",), _MCP_TOOLS),
    Kind(
        "program and program_output",
        _responses(_PROGRAM, _PROGRAM_OUT, _assistant_item()),
        ("PROGRAM-CODE", "PROGRAM-RESULT"),
        kept=_PROGRAM_OUT,
    ),
    Kind(
        "computer_call and its screenshot",
        _responses(
            {
                "type": "computer_call",
                "id": "cu_1",
                "call_id": "call_cu",
                "action": {"type": "type", "text": "TYPED-TEXT"},
                "pending_safety_checks": [],
                "status": "completed",
            },
            {
                "type": "computer_call_output",
                "call_id": "call_cu",
                "output": {"type": "computer_screenshot", "image_url": f"data:image/png;base64,{PNG}"},
            },
        ),
        ("TYPED-TEXT", "TOOL RESULT computer [call_cu]: ", "[base64 image/png, 1032 bytes]"),
    ),
    Kind(
        "local_shell_call and its output",
        _responses(
            {
                "type": "local_shell_call",
                "id": "ls_1",
                "call_id": "call_ls",
                "status": "completed",
                "action": {"type": "exec", "command": ["ls", "-la"], "env": {}},
            },
            {"type": "local_shell_call_output", "id": "call_ls", "output": "SHELL-OUT"},
        ),
        ('"command": ["ls", "-la"]', "TOOL RESULT local_shell [call_ls]: SHELL-OUT"),
    ),
    Kind(
        "shell_call and its output",
        _responses(
            {"type": "shell_call", "call_id": "call_sh", "status": "completed", "action": {"commands": ["make test"]}},
            {
                "type": "shell_call_output",
                "call_id": "call_sh",
                "output": [{"stdout": "STDOUT-1", "stderr": "STDERR-1", "outcome": {"type": "exit", "exit_code": 0}}],
            },
        ),
        ("make test", "STDOUT-1", "STDERR-1"),
    ),
    Kind(
        "custom_tool_call and its output",
        _responses(
            {"type": "custom_tool_call", "call_id": "call_x", "name": "grammar", "input": "CUSTOM-IN"},
            {"type": "custom_tool_call_output", "call_id": "call_x", "output": "CUSTOM-OUT"},
        ),
        ("grammar(CUSTOM-IN)", "TOOL RESULT grammar [call_x]: CUSTOM-OUT"),
    ),
    Kind(
        "function_call_output made of a text and a file",
        _responses(
            {"type": "function_call", "call_id": "call_f", "name": "report", "arguments": "{}"},
            {
                "type": "function_call_output",
                "call_id": "call_f",
                "output": [{"type": "input_text", "text": "F-OUT"}, {**_FILE_PART, "filename": "o.pdf"}],
            },
        ),
        ("TOOL RESULT report [call_f]: F-OUT | [input_file: ", "[base64 application/pdf, 2009 bytes]", "o.pdf"),
    ),
    Kind(
        "apply_patch_call and its output",
        _responses(
            {
                "type": "apply_patch_call",
                "call_id": "call_p",
                "status": "completed",
                "operation": {"type": "update_file", "path": "app.py", "diff": "PATCH-DIFF"},
            },
            {"type": "apply_patch_call_output", "call_id": "call_p", "status": "completed", "output": "PATCH-OUT"},
        ),
        ("PATCH-DIFF", "PATCH-OUT"),
    ),
    Kind(
        "tool_search_call and the tools it found",
        _responses(
            {
                "type": "tool_search_call",
                "call_id": "call_t",
                "arguments": {"query": "TS-QUERY"},
                "status": "completed",
            },
            {
                "type": "tool_search_output",
                "call_id": "call_t",
                "status": "completed",
                "tools": [{"type": "function", "name": "found_tool", "description": "TS-DESC"}],
            },
        ),
        ("TS-QUERY", "found_tool", "TS-DESC"),
    ),
    Kind(
        "compaction (encrypted only)",
        _responses(_COMPACTION, _assistant_item()),
        ("[compaction: ",),
        kept=_COMPACTION,
        left_out={"encrypted content": 1},
    ),
]


# -- OpenAI Chat Completions ---------------------------------------------------------------


def _chat(*messages: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": "go"}, *messages]}


_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "snap", "arguments": "{}"}}],
}
_TOOL_IMAGE = {
    "role": "tool",
    "tool_call_id": "call_1",
    "content": [
        {"type": "text", "text": "TOOL-TEXT"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ],
}
_TOOL_FILE = {
    "role": "tool",
    "tool_call_id": "call_1",
    "content": [
        {"type": "text", "text": "Attached."},
        {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "t.pdf"}},
    ],
}
_CHAT_NEW_PART = {"type": "note", "note": "NOTE-5"}
_CHAT_AUDIO = {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}
_CHAT_FILE_ID = {"type": "file", "file": {"file_id": "file-9", "filename": "a.pdf"}}
_SPOKEN = {"role": "assistant", "content": None, "audio": {"id": "audio_abc"}}

CHAT = [
    Kind(
        "an image inside a tool message",
        _chat(_CALL, _TOOL_IMAGE),
        ("TOOL RESULT snap [call_1]: TOOL-TEXT\nTOOL: [image image/png, 1032 bytes]",),
        kept=_TOOL_IMAGE,
    ),
    Kind(
        "a file inside a tool message",
        _chat(_CALL, _TOOL_FILE),
        ("TOOL RESULT snap [call_1]: Attached.\nTOOL: [document application/pdf, 2009 bytes, name=t.pdf]",),
        kept=_TOOL_FILE,
    ),
    Kind(
        "tool message text parts",
        _chat(
            _CALL, {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": t} for t in "AB"]}
        ),
        ("TOOL RESULT snap [call_1]: A B",),
    ),
    Kind(
        "a content part of a type new to the reader",
        _chat({"role": "user", "content": [{"type": "text", "text": "A1"}, _CHAT_NEW_PART]}),
        ("USER: A1\n  [note: ", "NOTE-5"),
        kept=_CHAT_NEW_PART,
    ),
    Kind(
        "input_audio",
        _chat({"role": "user", "content": [_CHAT_AUDIO]}),
        ("[audio audio/wav, 1004 bytes]",),
        _CHAT_AUDIO,
    ),
    Kind(
        "file by id",
        _chat({"role": "user", "content": [_CHAT_FILE_ID]}),
        ("[document name=a.pdf, at=file-9]",),
        _CHAT_FILE_ID,
    ),
    Kind(
        "refusal part",
        _chat({"role": "assistant", "content": [{"type": "refusal", "refusal": "REFUSED-1"}]}),
        ("REFUSED-1",),
    ),
    Kind("refusal field", _chat({"role": "assistant", "content": None, "refusal": "REFUSED-2"}), ("REFUSED-2",)),
    Kind("the model's spoken answer, by id", _chat(_SPOKEN), ("ASSISTANT: [audio at=audio_abc]",), _SPOKEN),
    Kind(
        "custom tool call",
        _chat(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_c", "type": "custom", "custom": {"name": "grammar", "input": "CUSTOM-IN"}}],
            },
            {"role": "tool", "tool_call_id": "call_c", "content": "CUSTOM-OUT"},
        ),
        ("grammar(CUSTOM-IN)", "TOOL RESULT grammar [call_c]: CUSTOM-OUT"),
    ),
    Kind(
        "legacy function call",
        _chat(
            {"role": "assistant", "content": None, "function_call": {"name": "fare", "arguments": '{"a": "F-ARG"}'}},
            {"role": "function", "name": "fare", "content": "F-OUT"},
        ),
        ("F-ARG", "TOOL RESULT fare [call_fn_1]: F-OUT"),
    ),
    Kind(
        "reasoning_content of compatible servers",
        _chat({"role": "assistant", "content": "Answer.", "reasoning_content": "THINK-RC"}),
        ("ASSISTANT: [reasoning: THINK-RC]\n  Answer.",),
    ),
    Kind(
        "developer text parts",
        {
            "messages": [
                {"role": "developer", "content": [{"type": "text", "text": "D1"}, {"type": "text", "text": "D2"}]}
            ]
        },
        ("SYSTEM: D1\n  D2",),
    ),
]


# -- Anthropic Messages ------------------------------------------------------------------------


def _anthropic(*messages: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "go"}, *messages],
    }


def _user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def _model(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


_TEXT_DOC = {
    "type": "document",
    "source": {"type": "text", "media_type": "text/plain", "data": "DOC-TEXT"},
    "title": "DOC-TITLE",
    "context": "DOC-CONTEXT",
}
_CHUNKED_DOC = {
    "type": "document",
    "source": {
        "type": "content",
        "content": [{"type": "text", "text": "CHUNK-1"}, {"type": "text", "text": "CHUNK-2"}],
    },
    "title": "Chunks",
}
_URL_DOC = {"type": "document", "source": {"type": "url", "url": "https://docs.example/d.pdf"}, "title": "URL-DOC"}
_PDF_DOC = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}}
_SEARCH_RESULT = {
    "type": "search_result",
    "source": "https://kb.example/1",
    "title": "SR-TITLE",
    "content": [{"type": "text", "text": "SR-TEXT"}],
}
_CITED = {
    "type": "text",
    "text": "The gate is C17.",
    "citations": [
        {
            "type": "web_search_result_location",
            "url": "https://cite.example/1",
            "title": "CITE-T",
            "cited_text": "CITED-TEXT",
            "encrypted_index": "Eo8B",
        }
    ],
}
_SERVER_USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "WS-QUERY"}}
_WEB_RESULTS = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://results.example/1",
            "title": "WSR-TITLE",
            "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5",
            "page_age": "1 day ago",
        }
    ],
}
_WEB_FETCH = {
    "type": "web_fetch_tool_result",
    "tool_use_id": "srvtoolu_2",
    "content": {
        "type": "web_fetch_result",
        "url": "https://fetched.example/a",
        "retrieved_at": "2026-01-05T10:00:00Z",
        "content": {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "FETCHED-TEXT"}},
    },
}
_WEB_FETCH_PDF = {
    "type": "web_fetch_tool_result",
    "tool_use_id": "srvtoolu_3",
    "content": {"type": "web_fetch_result", "url": "https://fetched.example/b.pdf", "content": _PDF_DOC},
}
_CODE_RESULT = {
    "type": "code_execution_tool_result",
    "tool_use_id": "srvtoolu_4",
    "content": {"type": "code_execution_result", "stdout": "STDOUT-42", "stderr": "", "return_code": 0, "content": []},
}
_BASH_RESULT = {
    "type": "bash_code_execution_tool_result",
    "tool_use_id": "srvtoolu_5",
    "content": {
        "type": "bash_code_execution_result",
        "stdout": "BASH-OUT",
        "stderr": "BASH-ERR",
        "return_code": 1,
        "content": [{"type": "bash_code_execution_output", "file_id": "file_out1"}],
    },
}
_EDITOR_RESULT = {
    "type": "text_editor_code_execution_tool_result",
    "tool_use_id": "srvtoolu_6",
    "content": {
        "type": "text_editor_code_execution_view_result",
        "content": "FILE-VIEW",
        "file_type": "text",
        "num_lines": 1,
        "start_line": 1,
        "total_lines": 1,
    },
}
_MCP_USE = {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "lookup", "server_name": "crm", "input": {"q": "MCP-Q"}}
_MCP_RESULT = {
    "type": "mcp_tool_result",
    "tool_use_id": "mcptoolu_1",
    "is_error": False,
    "content": [{"type": "text", "text": "MCP-RESULT"}],
}
_UPLOAD = {"type": "container_upload", "file_id": "file_up1"}
_TOOL_SEARCH = {
    "type": "tool_search_tool_result",
    "tool_use_id": "srvtoolu_7",
    "content": {
        "type": "tool_search_tool_search_result",
        "tool_references": [{"type": "tool_reference", "tool_name": "TOOL-REF"}],
    },
}
_THINKING = {"type": "thinking", "thinking": "THINK-1", "signature": "c2lnbmF0dXJlLW9mLXRoaW5raW5n"}
_REDACTED = {"type": "redacted_thinking", "data": "RW5jcnlwdGVkIHRoaW5raW5n"}
_RESULT_PARTS = {
    "type": "tool_result",
    "tool_use_id": "toolu_1",
    "content": [
        {
            "type": "search_result",
            "source": "kb://1",
            "title": "KB-TITLE",
            "content": [{"type": "text", "text": "KB-TEXT"}],
        },
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "RESULT-DOC"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
    ],
}
_USE = {"type": "tool_use", "id": "toolu_1", "name": "kb", "input": {}}

ANTHROPIC = [
    Kind(
        "document with a text source",
        _anthropic(_user(_TEXT_DOC)),
        ("[document title=DOC-TITLE, context=DOC-CONTEXT] DOC-TEXT",),
        _TEXT_DOC,
    ),
    Kind(
        "document with a content source",
        _anthropic(_user(_CHUNKED_DOC)),
        ("CHUNK-1", "CHUNK-2", "Chunks"),
        _CHUNKED_DOC,
    ),
    Kind(
        "document by URL",
        _anthropic(_user(_URL_DOC)),
        ("[document at=https://docs.example/d.pdf, title=URL-DOC]",),
        _URL_DOC,
    ),
    Kind(
        "PDF document",
        _anthropic(_user({"type": "text", "text": "Read:"}, _PDF_DOC)),
        ("USER: Read:\n  [document application/pdf, 2009 bytes]",),
        _PDF_DOC,
    ),
    Kind(
        "search_result",
        _anthropic(_user(_SEARCH_RESULT)),
        ("SR-TITLE", "SR-TEXT", "https://kb.example/1"),
        _SEARCH_RESULT,
    ),
    Kind(
        "text with citations",
        _anthropic(_model(_CITED)),
        ("The gate is C17. [citations: ", "CITE-T", "CITED-TEXT", "https://cite.example/1"),
        _CITED,
    ),
    Kind(
        "server_tool_use and web_search_tool_result",
        _anthropic(_model(_SERVER_USE, _WEB_RESULTS)),
        ("[server_tool_use: ", "WS-QUERY", "\n  [web_search_tool_result: ", "WSR-TITLE", "https://results.example/1"),
        kept=_WEB_RESULTS,
        left_out={"encrypted content": 1},
    ),
    Kind(
        "web_fetch_tool_result",
        _anthropic(_model(_WEB_FETCH)),
        ("FETCHED-TEXT", "https://fetched.example/a"),
        _WEB_FETCH,
    ),
    Kind(
        "web_fetch_tool_result of a PDF",
        _anthropic(_model(_WEB_FETCH_PDF)),
        ("[base64 application/pdf, 2009 bytes]", "https://fetched.example/b.pdf"),
        _WEB_FETCH_PDF,
    ),
    Kind("code_execution_tool_result", _anthropic(_model(_CODE_RESULT)), ("STDOUT-42",), _CODE_RESULT),
    Kind(
        "bash_code_execution_tool_result",
        _anthropic(_model(_BASH_RESULT)),
        ("BASH-OUT", "BASH-ERR", "file_out1"),
        _BASH_RESULT,
    ),
    Kind("text_editor_code_execution_tool_result", _anthropic(_model(_EDITOR_RESULT)), ("FILE-VIEW",), _EDITOR_RESULT),
    Kind(
        "mcp_tool_use and mcp_tool_result",
        _anthropic(_model(_MCP_USE, _MCP_RESULT)),
        ("MCP-Q", "MCP-RESULT"),
        _MCP_RESULT,
    ),
    Kind("container_upload", _anthropic(_user(_UPLOAD)), ("[container_upload: ", "file_up1"), _UPLOAD),
    Kind("tool_search_tool_result", _anthropic(_model(_TOOL_SEARCH)), ("TOOL-REF",), _TOOL_SEARCH),
    Kind(
        "thinking and redacted thinking",
        _anthropic(_model(_THINKING, _REDACTED, {"type": "text", "text": "ok"})),
        ("ASSISTANT: [reasoning: THINK-1]\n  ok",),
        kept=_THINKING,
        left_out={"redacted thinking": 1},
    ),
    Kind(
        "tool_result of a search result, a document and an image",
        _anthropic(_model(_USE), _user(_RESULT_PARTS)),
        (
            "TOOL RESULT kb [toolu_1]: [search_result: ",
            "KB-TEXT",
            " | [document] RESULT-DOC | [image image/png, 1032 bytes]",
        ),
        kept=_RESULT_PARTS,
    ),
]


# -- Gemini ----------------------------------------------------------------------------------


def _gemini(*contents: Any) -> dict[str, Any]:
    return {"contents": [{"role": "user", "parts": [{"text": "go"}]}, *contents]}


def _parts(role: str, *parts: Any) -> dict[str, Any]:
    return {"role": role, "parts": list(parts)}


_EXECUTED = {"executableCode": {"language": "PYTHON", "code": "print(6 * 7)"}}
_EXECUTED_RESULT = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "CODE-OUT"}}
_RESPONSE_WITH_PARTS = {
    "functionResponse": {
        "name": "snap",
        "id": "fc1",
        "response": {"output": "FR-OUT"},
        "parts": [
            {"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "shot.png"}},
            {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://bucket/r.pdf", "displayName": "REPORT"}},
        ],
    }
}
_FILE_DATA = {"fileData": {"mimeType": "application/pdf", "fileUri": "https://files.example/abc"}}
_INLINE = {"inlineData": {"mimeType": "image/png", "data": PNG}}
_THOUGHT = {"text": "THOUGHT-1", "thought": True, "thoughtSignature": "c2lnbmF0dXJl"}
_SERVER_CALL = {"toolCall": {"id": "tc1", "toolType": "GOOGLE_SEARCH", "args": {"query": "TC-QUERY"}}}
_SERVER_RESPONSE = {"toolResponse": {"id": "tc1", "toolType": "GOOGLE_SEARCH", "response": {"results": "TR-RESULT"}}}

GEMINI = [
    Kind(
        "executableCode and codeExecutionResult",
        _gemini(_parts("model", _EXECUTED, _EXECUTED_RESULT)),
        ("[executableCode: ", "print(6 * 7)", "\n  [codeExecutionResult: ", "CODE-OUT", "OUTCOME_OK"),
        kept=_EXECUTED_RESULT,
    ),
    Kind(
        "executable_code in the Python SDK's spelling",
        _gemini(_parts("model", {"executable_code": {"language": "PYTHON", "code": "print(1)"}})),
        ("[executable_code: ", "print(1)"),
    ),
    Kind(
        "functionResponse with parts",
        _gemini(
            _parts("model", {"functionCall": {"name": "snap", "args": {}, "id": "fc1"}}),
            _parts("user", _RESPONSE_WITH_PARTS),
        ),
        (
            "TOOL RESULT snap [fc1]: FR-OUT\nTOOL: [image image/png, 1032 bytes, name=shot.png]\n"
            "  [document application/pdf, name=REPORT, at=gs://bucket/r.pdf]",
        ),
        kept=_RESPONSE_WITH_PARTS,
    ),
    Kind(
        "functionResponse with an error",
        _gemini(
            _parts("model", {"functionCall": {"name": "fare", "args": {}}}),
            _parts("user", {"functionResponse": {"name": "fare", "response": {"error": "ERR-X"}}}),
        ),
        ("TOOL RESULT fare [gemini_fare_0] (error): ERR-X",),
    ),
    Kind(
        "fileData",
        _gemini(_parts("user", {"text": "Read:"}, _FILE_DATA)),
        ("USER: Read:\n  [document application/pdf, at=https://files.example/abc]",),
        _FILE_DATA,
    ),
    Kind("inlineData", _gemini(_parts("user", _INLINE)), ("[image image/png, 1032 bytes]",), _INLINE),
    Kind(
        "inlineData and fileData with display names",
        _gemini(
            _parts(
                "user",
                {"inlineData": {"mimeType": "image/png", "data": PNG, "displayName": "ID-NAME"}},
                {
                    "fileData": {
                        "mimeType": "application/pdf",
                        "fileUri": "https://f.example/1",
                        "displayName": "FD-NAME",
                    }
                },
            )
        ),
        (
            "[image image/png, 1032 bytes, name=ID-NAME]\n  [document application/pdf, name=FD-NAME, at=https://f.example/1]",
        ),
    ),
    Kind(
        "audio with its transcription",
        _gemini(
            _parts(
                "user",
                {"inlineData": {"mimeType": "audio/wav", "data": WAV}, "audioTranscription": {"text": "SPOKEN-WORDS"}},
            )
        ),
        ("[audio audio/wav, 1004 bytes] SPOKEN-WORDS",),
    ),
    Kind(
        "thought part",
        _gemini(_parts("model", _THOUGHT, {"text": "ok"})),
        ("ASSISTANT: [reasoning: THOUGHT-1]\n  ok",),
        _THOUGHT,
    ),
    Kind(
        "server-side toolCall and toolResponse",
        _gemini(_parts("model", _SERVER_CALL, _SERVER_RESPONSE)),
        ("[toolCall: ", "TC-QUERY", "\n  [toolResponse: ", "TR-RESULT"),
        kept=_SERVER_RESPONSE,
    ),
]


# -- LangChain -------------------------------------------------------------------------------


def _langchain(*messages: Any) -> list[Any]:
    return [{"type": "human", "data": {"content": "go"}}, *messages]


def _ai(content: Any, **fields: Any) -> dict[str, Any]:
    return {"type": "ai", "data": {"content": content, **fields}}


def _human(content: Any) -> dict[str, Any]:
    return {"type": "human", "data": {"content": content}}


_LC_REASONING = {"type": "reasoning", "reasoning": "REASON-V1", "id": "rs_1"}
_LC_SUMMARY = {
    "type": "reasoning",
    "id": "rs_2",
    "summary": [{"type": "summary_text", "text": "SUMMARY-1"}],
    "encrypted_content": "gAAAAABlbmNyeXB0ZWQ",
}
_LC_CITED = {
    "type": "text",
    "text": "Answer.",
    "annotations": [
        {"type": "citation", "url": "https://cite.example/lc", "title": "LC-CITE", "cited_text": "LC-CITED"}
    ],
}
_LC_ANTHROPIC_CITED = {
    "type": "text",
    "text": "Answer.",
    "citations": [
        {
            "type": "char_location",
            "cited_text": "CHAR-CITED",
            "document_index": 0,
            "start_char_index": 0,
            "end_char_index": 9,
        }
    ],
}
_LC_NON_STANDARD = {"type": "non_standard", "value": {"type": "vendor_block", "note": "NS-VALUE"}}
_LC_PLAIN = {"type": "text-plain", "text": "PLAIN-TEXT", "mime_type": "text/plain", "title": "PT"}
_LC_IMAGE = {"type": "image", "base64": PNG, "mime_type": "image/png"}
_LC_SERVER_CALL = {"type": "server_tool_call", "id": "st1", "name": "web_search", "args": {"query": "ST-QUERY"}}
_LC_SERVER_RESULT = {"type": "server_tool_result", "tool_call_id": "st1", "status": "success", "output": "ST-OUT"}
_LC_CHUNK = {"type": "server_tool_call_chunk", "id": "stc1", "name": "web_search", "args": '{"query": "CHUNK-Q"}'}
_LC_TOOL_CONTENT = [{"type": "text", "text": "TOOL-TEXT"}, _LC_IMAGE]
_LC_CALL = _ai("", tool_calls=[{"name": "snap", "args": {}, "id": "call_1", "type": "tool_call"}])

LANGCHAIN = [
    Kind(
        "v1 reasoning block",
        _langchain(_ai([_LC_REASONING, {"type": "text", "text": "ok"}])),
        ("ASSISTANT: [reasoning: REASON-V1]\n  ok",),
        _LC_REASONING,
    ),
    Kind(
        "reasoning summary with encrypted content",
        _langchain(_ai([_LC_SUMMARY, {"type": "text", "text": "ok"}])),
        ("[reasoning: SUMMARY-1]",),
        kept=_LC_SUMMARY,
        left_out={"encrypted reasoning": 1},
    ),
    Kind(
        "v1 citations",
        _langchain(_ai([_LC_CITED])),
        ("Answer. [citations: [citation: ", "LC-CITE", "LC-CITED"),
        _LC_CITED,
    ),
    Kind(
        "ChatAnthropic citations",
        _langchain(_ai([_LC_ANTHROPIC_CITED])),
        ("Answer. [citations: ", "CHAR-CITED"),
        _LC_ANTHROPIC_CITED,
    ),
    Kind("non_standard block", _langchain(_ai([_LC_NON_STANDARD])), ("[non_standard: ", "NS-VALUE"), _LC_NON_STANDARD),
    Kind("text-plain block", _langchain(_human([_LC_PLAIN])), ("[text-plain: ", "PLAIN-TEXT"), _LC_PLAIN),
    Kind(
        "v1 image block",
        _langchain(_human([{"type": "text", "text": "See:"}, _LC_IMAGE])),
        ("USER: See:\n  [image image/png, 1032 bytes]",),
    ),
    Kind(
        "server_tool_call and server_tool_result",
        _langchain(_ai([_LC_SERVER_CALL, _LC_SERVER_RESULT, {"type": "text", "text": "ok"}])),
        ("[server_tool_call: ", "ST-QUERY", "\n  [server_tool_result: ", "ST-OUT", "\n  ok"),
        kept=_LC_SERVER_RESULT,
    ),
    Kind("server_tool_call_chunk", _langchain(_ai([_LC_CHUNK])), ("[server_tool_call_chunk: ", "CHUNK-Q"), _LC_CHUNK),
    Kind(
        "tool message with an image",
        _langchain(_LC_CALL, {"type": "tool", "data": {"content": _LC_TOOL_CONTENT, "tool_call_id": "call_1"}}),
        ("TOOL RESULT snap [call_1]: TOOL-TEXT | [image: ", '"base64": "[base64 image/png, 1032 bytes]"'),
        kept=_LC_TOOL_CONTENT,
    ),
    Kind("refusal block", _langchain(_ai([{"type": "refusal", "refusal": "REFUSED-LC"}])), ("REFUSED-LC",)),
    Kind(
        "reasoning_content in additional_kwargs",
        _langchain(_ai("done", additional_kwargs={"reasoning_content": "KWARGS-REASON"})),
        ("ASSISTANT: [reasoning: KWARGS-REASON]\n  done",),
    ),
]


# -- native ----------------------------------------------------------------------------------


def _native(role: str, *blocks: Any, **fields: Any) -> dict[str, Any]:
    return {"message_id": f"m-{role}", "role": role, "content": list(blocks), **fields}


NATIVE = [
    Kind(
        "media described, their text kept",
        [
            _native(
                "user",
                {
                    "type": "image",
                    "media": {"kind": "data", "data_base64": PNG, "mime_type": "image/png"},
                    "alt_text": "ALT-1",
                },
                {
                    "type": "audio",
                    "media": {"kind": "url", "url": "https://a.example/1.wav"},
                    "transcript": "AUDIO-WORDS",
                },
                {"type": "video", "media": {"kind": "file_id", "file_id": "vid-1", "mime_type": "video/mp4"}},
                {"type": "document", "excerpt": "EXCERPT-1", "media": {"kind": "url", "url": "https://d.example/1"}},
                {"type": "data", "mime_type": "text/csv", "data_base64": PDF},
            )
        ],
        (
            "USER: [image image/png, 1032 bytes, alt=ALT-1]\n  [audio at=https://a.example/1.wav] AUDIO-WORDS\n"
            "  [video video/mp4, at=vid-1]\n  [document at=https://d.example/1] EXCERPT-1\n"
            "  [data text/csv, 2009 bytes]",
        ),
    ),
    Kind(
        "text with annotations",
        [
            _native(
                "assistant",
                {
                    "type": "text",
                    "text": "Cited.",
                    "annotations": [{"type": "url_citation", "url": "https://n.example", "title": "NAT-CITE"}],
                },
            )
        ],
        ("Cited. [citations: [url_citation: ", "NAT-CITE"),
    ),
    Kind(
        "reasoning, annotation and error blocks",
        [
            _native(
                "assistant",
                {"type": "reasoning", "summary": "BLOCK-REASON"},
                {"type": "annotation", "kind": "citation", "refs": [{"url": "https://ann.example/1"}]},
                {"type": "error", "message": "ERR-MSG", "code": 500, "data": {"detail": "ERR-DATA"}},
                reasoning="MESSAGE-REASON",
            )
        ],
        (
            "[reasoning: MESSAGE-REASON]\n  [reasoning: BLOCK-REASON]\n  [citation: ",
            "https://ann.example/1",
            "[error 500: ERR-MSG ",
            "ERR-DATA",
        ),
    ),
    Kind(
        "remote tool call and its result",
        [
            _native("assistant", {"type": "remote_tool_call", "id": "r1", "name": "remote", "args": {"q": "REMOTE-Q"}}),
            _native("tool", {"type": "tool_result", "call_id": "r1", "output": {"answer": "REMOTE-A"}}),
        ],
        ("remote(", "REMOTE-Q", "TOOL RESULT remote [r1]: ", "REMOTE-A"),
    ),
]


def _claude_code(kind: Kind) -> Kind:
    """An Anthropic kind as a Claude Code session: a record per message, an assistant
    message written one record per content block (siblings share ``message.id``)."""
    records: list[dict[str, Any]] = []
    parent: str | None = None
    for n, message in enumerate(kind.value["messages"]):
        role, content = message["role"], message["content"]
        pieces = [[block] for block in content] if role == "assistant" and isinstance(content, list) else [content]
        for m, piece in enumerate(pieces):
            uuid = f"00000000-0000-4000-8000-{n:06d}{m:06d}"
            body = {"id": f"msg_{n}", "role": role, "content": piece} if role == "assistant" else {**message}
            record = {"parentUuid": parent, "isSidechain": False, "sessionId": "s", "type": role, "uuid": uuid}
            records.append({**record, "message": body})
            parent = uuid
    return Kind(kind.name, records, kind.shows, None, kind.left_out)


CLAUDE_CODE = [_claude_code(kind) for kind in ANTHROPIC]


# -- Gemini CLI recordings and ShareGPT training sets: a call and its result each --------------

_GEMINI_CLI_CALL = {
    "id": "g1",
    "timestamp": "2025-10-18T14:57:31.684Z",
    "type": "gemini",
    "content": "",
    "toolCalls": [
        {
            "id": "ls-1",
            "name": "list_directory",
            "args": {"path": "CLI-PATH"},
            "result": [
                {"functionResponse": {"id": "ls-1", "name": "list_directory", "response": {"output": "CLI-OUT"}}}
            ],
            "status": "success",
        }
    ],
}
GEMINI_CLI = [
    Kind(
        "a tool call with its result in one record",
        {
            "sessionId": "s",
            "projectHash": "p",
            "startTime": "2025-10-18T14:57:28.974Z",
            "lastUpdated": "2025-10-18T14:58:07.161Z",
            "messages": [
                {"id": "u1", "timestamp": "2025-10-18T14:57:28.974Z", "type": "user", "content": "list them"},
                _GEMINI_CLI_CALL,
            ],
        },
        ("list_directory(", "CLI-PATH", "TOOL RESULT list_directory [ls-1]: ", "CLI-OUT"),
    ),
]
SHAREGPT = [
    Kind(
        "a function_call turn and its observation",
        {
            "conversations": [
                {"from": "human", "value": "weather?"},
                {"from": "function_call", "value": '{"name": "weather", "arguments": {"city": "SG-CITY"}}'},
                {"from": "observation", "value": "SG-OUT"},
                {"from": "gpt", "value": "sunny"},
            ],
            "tools": "[]",
        },
        ("weather(", "SG-CITY", "TOOL RESULT weather [", "SG-OUT"),
    ),
]

# A run state the Agents SDK's own tests hold (vendored with its source).
_RUNSTATE = Path(__file__).resolve().parents[1] / "conversations" / "agents" / "agents-sdk" / "custom-tool-call.json"
AGENTS_RUNSTATE = [
    Kind(
        "a custom tool call and its output in the generated items",
        json.loads(_RUNSTATE.read_text(encoding="utf-8")),
        ("USER: historical input", "custom_lookup(", "TOOL RESULT custom_lookup [custom-call-1]: custom result"),
    ),
]


# -- SWE-agent and OpenHands (session logs: read and written back, never a conversion's target) --

_SWE_RUN = swe_agent_trajectory(
    "SWE-SYS", "SWE-TASK", [Turn("calls", "SWE-THINK", [Call("call_1", "bash", {"command": "SWE-CMD"}, "SWE-OUT")])]
)
_SWE_IMAGE = {
    "history": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "SWE-SCREEN"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            ],
            "agent": "main",
            "message_type": "observation",
        }
    ],
    "trajectory": [],
}
SWE_AGENT = [
    Kind(
        "history items: a function call and its tool item",
        _SWE_RUN,
        (
            "SYSTEM: SWE-SYS",
            "USER: SWE-TASK",
            'SWE-THINK [calls tool bash({"command": "SWE-CMD"}) id=call_1]',
            "SWE-OUT",
        ),
    ),
    Kind("an image part", _SWE_IMAGE, ("USER: SWE-SCREEN\n  [image image/png",)),
]

_OH_RUN = openhands_events(
    "OH-SYS",
    "OH-TASK",
    [
        Turn(
            "calls",
            "OH-THINK",
            [
                Call("call_1", "execute_bash", {"command": "OH-1"}, "OUT-1"),
                Call("call_2", "bash", {"command": "OH-2"}, "OUT-2"),
            ],
        ),
        Turn("say", "OH-DONE", []),
    ],
)
OPENHANDS = [
    Kind(
        "events: the system prompt, the task, parallel calls of one response and their observations",
        _OH_RUN,
        (
            "SYSTEM: OH-SYS",
            "USER: OH-TASK",
            "OH-THINK [calls tool execute_bash(",
            "id=call_1] [calls tool bash(",
            "TOOL RESULT execute_bash [call_1]: OUT-1",
            "TOOL RESULT bash [call_2]: OUT-2",
            "ASSISTANT: OH-DONE",
        ),
    ),
    Kind(
        "a finish action",
        [{"id": 0, "source": "agent", "message": "OH-FINISH", "action": "finish", "args": {"thought": ""}}],
        ("ASSISTANT: OH-FINISH",),
    ),
]


# -- Codex rollouts: Responses items inside the rollout's records ------------------------------


def _codex(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    meta = {"id": "s", "timestamp": "2026-02-23T11:40:23Z", "cwd": "/w", "base_instructions": {"text": "CX-RULES"}}
    records = [{"timestamp": "2026-02-23T11:40:29.275Z", "type": "session_meta", "payload": meta}]
    return records + [{"timestamp": "2026-02-23T11:40:30Z", "type": "response_item", "payload": p} for p in payloads]


CODEX = [
    Kind(
        "a function call and its output",
        _codex(
            [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "CX-ASK"}]},
                {"type": "function_call", "name": "shell", "arguments": '{"cmd": "CX-CMD"}', "call_id": "c1"},
                {"type": "function_call_output", "call_id": "c1", "output": "CX-OUT"},
            ]
        ),
        ("CX-ASK", "shell(", "CX-CMD", "TOOL RESULT shell [c1]: ", "CX-OUT"),
    ),
]


# -- Framework shapes: real files of the MCP spec and of the Vercel AI SDK's tests (vendored) --

_FRAMEWORKS = Path(__file__).resolve().parents[1] / "conversations" / "frameworks"


def _vendored(path: str) -> Any:
    return json.loads((_FRAMEWORKS / path).read_text(encoding="utf-8"))


MCP_SAMPLING = [
    Kind(
        "tool_use and tool_result content",
        _vendored("mcp-sampling/params-follow-up-with-tool-results.json"),
        ("get_weather(", "TOOL RESULT get_weather [call_abc123]: Weather in Paris: 18°C, partly cloudy"),
    ),
]
VERCEL_AI = [
    Kind(
        "tool-call and tool-result parts beside text",
        _vendored("vercel-ai/model-messages-mix-of-tools-and-text.json"),
        ("i am gonna use tool1", "screenshot(", "TOOL RESULT screenshot [call-1]: result-1"),
    ),
]


TABLES = {
    "swe-agent": SWE_AGENT,
    "openhands": OPENHANDS,
    "openai-responses": RESPONSES,
    "openai-chat": CHAT,
    "anthropic": ANTHROPIC,
    "gemini": GEMINI,
    "langchain": LANGCHAIN,
    "native": NATIVE,
    "claude-code": CLAUDE_CODE,
    "gemini-cli": GEMINI_CLI,
    "sharegpt": SHAREGPT,
    "agents-runstate": AGENTS_RUNSTATE,
    "codex": CODEX,
    "mcp-sampling": MCP_SAMPLING,
    "vercel-ai": VERCEL_AI,
}
CASES = [pytest.param(fmt, kind, id=f"{fmt}: {kind.name}") for fmt, kinds in TABLES.items() for kind in kinds]


def _parsed(data: bytes) -> Any:
    """A written file's value: one document, or the records of a format written as JSONL (Codex)."""
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        return [json.loads(line) for line in data.splitlines() if line.strip()]


@pytest.mark.parametrize(("fmt", "kind"), CASES)
def test_each_kind_is_kept_and_reaches_the_transcript(fmt: str, kind: Kind) -> None:
    conversation = load_value(copy.deepcopy(kind.value), source="test", layout="document", fmt=fmt)
    # Written back in its own format, the file is what it was.
    assert _parsed(dump(conversation)) == kind.value
    transcript = render_transcript(conversation.state.context)
    for shown in kind.shows:
        assert shown in transcript.text, f"{shown!r} not in:\n{transcript.text}"
    assert _PAYLOAD.search(transcript.text) is None, transcript.text
    assert dict(transcript.left_out) == kind.left_out
    if kind.kept is not None:
        native = load(dump(conversation, to="native"), source="native", fmt="native")
        back = json.loads(dump(native, to=fmt))
        assert _contains(back, kind.kept), json.dumps(back)[:2000]


def test_every_format_has_a_table() -> None:
    from ctxmgr.formats import FORMATS

    assert set(TABLES) == set(FORMATS)


def test_chat_sends_tool_media_back_only_to_chat() -> None:
    # The official Chat API takes text alone in a tool message: an image read from a
    # Gemini function response is named as not carried, not written where it is refused.
    value = _gemini(
        _parts("model", {"functionCall": {"name": "snap", "args": {}, "id": "fc1"}}),
        _parts("user", _RESPONSE_WITH_PARTS),
    )
    conversation = load_value(value, source="test", layout="document", fmt="gemini")
    chat = json.loads(dump(conversation, to="openai-chat"))
    assert chat["messages"][-1] == {"role": "tool", "tool_call_id": "fc1", "content": "FR-OUT"}
    assert conversation.dropped == {"image block in a tool message": 1, "document block in a tool message": 1}


def test_anthropic_nests_media_read_from_inside_a_result() -> None:
    conversation = load_value(_chat(_CALL, _TOOL_IMAGE), source="test", layout="document", fmt="openai-chat")
    result = json.loads(dump(conversation, to="anthropic"))["messages"][-1]["content"][0]
    assert result == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": [
            {"type": "text", "text": "TOOL-TEXT"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        ],
    }


def test_a_new_part_type_does_not_stop_detection() -> None:
    value = _responses(
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "A1"}, _NEW_PART]}
    )
    assert load(json.dumps(value).encode(), source="test").format == "openai-responses"
