"""A small local LLM API server for tests and benchmarks: no internet, real SDKs.

It speaks just enough of three wire formats for the official clients pointed at it
through their base-URL settings:

* OpenAI Responses ``POST /v1/responses`` (``AsyncOpenAI(base_url=server.openai_url)``),
* OpenAI Chat Completions ``POST /v1/chat/completions``,
* Gemini ``POST /v1beta/models/{model}:generateContent`` (any path ending in
  ``/models/{model}:generateContent``, so Vertex-style paths work too;
  ``genai.Client(http_options=HttpOptions(base_url=server.url))``).

Every request is recorded (:attr:`LLMServer.requests`: path, lower-cased headers, JSON
body), counted (:attr:`LLMServer.request_count`) and tracked while it is being answered
(:attr:`LLMServer.in_flight`, :attr:`LLMServer.max_in_flight`), so tests can assert what
was sent, how many attempts were made and how many ran at once.

Answers are scripted with :class:`Reply`::

    server.script(Reply.error(429, retry_after=0), Reply.error(503), Reply.ok("done"))

Scripted replies are used one per request, in order; after that every request gets
:attr:`LLMServer.default` (a summary text), or whatever :attr:`LLMServer.responder`
returns when it is set. :attr:`LLMServer.latency` delays every answer.

Slow answers: :meth:`Reply.hang` answers late, :meth:`Reply.dripping` answers at once
but one byte at a time (headers first, then the body a byte per interval).

Oversized answers: :meth:`Reply.huge` answers a text of any length, :meth:`Reply.bomb`
a gzip-compressed one whose decoded size is a thousand times what goes over the wire.

Transport faults: :meth:`Reply.reset` starts an answer and drops the connection with a
TCP reset halfway (what a broken TLS session or proxy looks like to the client),
:meth:`Reply.garbage` answers bytes that are not HTTP, and :meth:`LLMServer.die_after`
makes the whole server go away after some requests (listener closed, open connections
reset), like a crashed process.

Batch APIs, through the same SDKs: OpenAI's files (``POST /v1/files`` multipart upload,
``GET /v1/files/{id}/content``) and batches (``POST /v1/batches``, ``GET /v1/batches``,
``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``), and the Gemini API's batch
mode with inline requests or an uploaded JSONL file (the resumable ``POST
/upload/{version}/files`` then its session URL, ``GET .../files/{id}:download``;
``POST .../models/{model}:batchGenerateContent``,
``GET .../batches``, ``GET .../batches/{id}``, ``POST .../batches/{id}:cancel``). A job
is answered after :attr:`LLMServer.batch_polls` status checks: each of its requests
gets the reply the script, the responder or the default gives an interactive request
with the same body (so a batch and an interactive run can be given the same answers),
recorded in :attr:`LLMServer.batch_requests`. :attr:`LLMServer.batch_outcome` makes
jobs end ``failed`` (with :attr:`LLMServer.batch_reason`) or ``expired`` instead.

In pytest, the ``llm_server`` fixture (``tests/conftest.py``) gives a fresh one per test.
A benchmark imports it with ``sys.path.insert(0, "tests")`` then
``from llm_server import LLMServer`` (tests/ is not a package), or runs
``python tests/llm_server.py --port 8765 [--latency 0.2] [--log requests.jsonl]`` (the
log holds every request body, for a benchmark to read what was sent) and points
``ctxmgr summarize --base-url http://127.0.0.1:8765/v1`` at it.
"""

from __future__ import annotations

import argparse
import email.parser
import email.policy
import functools
import json
import re
import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["DEFAULT_SUMMARY", "LLMServer", "RecordedRequest", "Reply", "serving"]

DEFAULT_SUMMARY = "The user and the assistant discussed the earlier topic."

_GEMINI_PATH = re.compile(r"/models/(?P<model>[^/:]+):generateContent$")
_GEMINI_BATCH_CREATE = re.compile(r"/models/(?P<model>[^/:]+):batchGenerateContent$")
_GEMINI_BATCH = re.compile(r"/batches(?:/(?P<id>[^/:]+)(?P<cancel>:cancel)?)?$")
_OPENAI_BATCH = re.compile(r"/v1/batches(?:/(?P<id>[^/:]+)(?P<cancel>/cancel)?)?$")
_GEMINI_UPLOAD = re.compile(r"/upload/[^/]+/files$")
_GEMINI_SESSION = re.compile(r"/upload-session/(?P<id>\d+)$")
_GEMINI_DOWNLOAD = re.compile(r"/files/(?P<id>[^/:]+):download$")
_OPENAI_FILE = re.compile(r"/v1/files(?:/(?P<id>[^/]+)(?P<content>/content)?)?$")
_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    Attributes:
        status: HTTP status code.
        text: The model's answer (for a 200), or the error message (otherwise).
        headers: Extra response headers (``Retry-After``...).
        raw: Bytes sent instead of a JSON body (a malformed answer).
        delay: Seconds to wait before answering (longer than the client's timeout: a hang).
        truncated: The answer stopped at the output-token cap (Responses
            ``status: "incomplete"``, Chat ``finish_reason: "length"``, Gemini
            ``finishReason: "MAX_TOKENS"``), with ``text`` as the partial output.
        abort: ``"reset"``: drop the connection with a TCP reset in the middle of the
            answer; ``"garbage"``: send bytes that are not HTTP, then close.
        drip: Seconds between bytes: the status line and headers go out at once, then
            the body one byte per ``drip`` seconds (each read the client makes gets a
            byte well within any per-read timeout), for at most ``drip_for`` seconds,
            after which the connection is dropped.
        drip_for: The longest a dripping answer goes on (bounds a test that fails).
        gzip_bomb: When set, a valid answer whose text is this many ``a`` characters,
            sent gzip-compressed (``Content-Encoding: gzip``): about a thousandth of its
            decoded size on the wire.
    """

    status: int = 200
    text: str = DEFAULT_SUMMARY
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    delay: float = 0.0
    truncated: bool = False
    abort: str | None = None
    drip: float | None = None
    drip_for: float = 30.0
    gzip_bomb: int = 0

    @classmethod
    def ok(cls, text: str = DEFAULT_SUMMARY, *, delay: float = 0.0) -> Reply:
        """A successful answer whose output text is ``text``."""
        return cls(200, text, delay=delay)

    @classmethod
    def empty(cls) -> Reply:
        """A successful answer with an empty output text."""
        return cls(200, "")

    @classmethod
    def error(cls, status: int, message: str | None = None, *, retry_after: float | str | None = None) -> Reply:
        """An error answer in the API's own error shape; ``retry_after`` sets the header."""
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        return cls(status, message or f"scripted error {status}", headers=headers)

    @classmethod
    def malformed(cls, status: int = 200) -> Reply:
        """A body that is not JSON."""
        return cls(status, "", headers={"Content-Type": "application/json"}, raw=b"<html>not json")

    @classmethod
    def hang(cls, seconds: float) -> Reply:
        """Answer only after ``seconds`` (use more than the client's timeout)."""
        return cls(200, DEFAULT_SUMMARY, delay=seconds)

    @classmethod
    def dripping(cls, interval: float = 0.1, *, text: str = DEFAULT_SUMMARY, seconds: float = 30.0) -> Reply:
        """A valid answer sent one byte per ``interval`` seconds, for at most ``seconds``.

        What a slow-loris server (or a stalled proxy) looks like: the client never waits
        long for the next byte, so only a deadline on the whole answer ends the call.
        """
        return cls(200, text, drip=interval, drip_for=seconds)

    @classmethod
    def huge(cls, size: int) -> Reply:
        """A valid answer whose text is ``size`` characters of words (far past any cap)."""
        return cls(200, ("lorem ipsum " * (size // 12 + 1))[:size])

    @classmethod
    def bomb(cls, decoded: int) -> Reply:
        """A valid answer of ``decoded`` bytes of text, gzip-compressed on the wire."""
        return cls(200, "", gzip_bomb=decoded)

    @classmethod
    def truncated_answer(cls, text: str = "The user asked about") -> Reply:
        """A well-formed answer the model stopped at its output-token cap."""
        return cls(200, text, truncated=True)

    @classmethod
    def reset(cls) -> Reply:
        """Send the status line and part of the body, then reset the connection."""
        return cls(200, DEFAULT_SUMMARY, abort="reset")

    @classmethod
    def garbage(cls) -> Reply:
        """Answer bytes that are not HTTP at all (a TLS record, say), then close."""
        return cls(200, "", abort="garbage")


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    received_at: float

    @property
    def kind(self) -> str:
        """``responses``, ``chat``, ``gemini`` or ``unknown``."""
        return _kind(self.path)

    @property
    def model(self) -> str | None:
        """The model named in the body (OpenAI) or in the path (Gemini)."""
        match = _GEMINI_PATH.search(self.path.split("?", 1)[0])
        if match:
            return match.group("model")
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def instructions(self) -> str | None:
        """The system instruction, whichever format carried it."""
        body = self.body if isinstance(self.body, dict) else {}
        if self.kind == "responses":
            return body.get("instructions")
        if self.kind == "chat":
            system = [m.get("content") for m in body.get("messages", []) if m.get("role") in ("system", "developer")]
            return system[0] if system else None
        if self.kind == "gemini":
            instruction = body.get("systemInstruction") or {}
            return "".join(p.get("text", "") for p in instruction.get("parts", [])) or None
        return None

    @property
    def input_text(self) -> str | None:
        """The user content sent (the fenced transcript)."""
        body = self.body if isinstance(self.body, dict) else {}
        if self.kind == "responses":
            value = body.get("input")
            return value if isinstance(value, str) else json.dumps(value)
        if self.kind == "chat":
            users = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
            return users[0] if users else None
        if self.kind == "gemini":
            texts = [p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", [])]
            return "".join(texts) or None
        return None

    @property
    def max_tokens(self) -> int | None:
        """The output-token cap, whichever field carried it."""
        body = self.body if isinstance(self.body, dict) else {}
        if self.kind == "gemini":
            value = (body.get("generationConfig") or {}).get("maxOutputTokens")
            return int(value) if value is not None else None
        for key in ("max_output_tokens", "max_completion_tokens", "max_tokens"):
            if key in body:
                return int(body[key])
        return None


INFO_PATHS = frozenset({"/v1/models", "/props", "/api/show"})
"""Where local servers say their context window (see :attr:`LLMServer.info`)."""


def _kind(path: str) -> str:
    path = path.split("?", 1)[0]
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/chat/completions"):
        return "chat"
    if _GEMINI_PATH.search(path):
        return "gemini"
    return "unknown"


def _success_body(kind: str, model: str, text: str, serial: int, truncated: bool = False) -> dict[str, Any]:
    if kind == "responses":
        content = [{"type": "output_text", "text": text, "annotations": []}] if text else []
        status = "incomplete" if truncated else "completed"
        return {
            "id": f"resp_{serial}",
            "object": "response",
            "created_at": 1_700_000_000,
            "model": model,
            "status": status,
            "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
            "output": [
                {
                    "type": "message",
                    "id": f"msg_{serial}",
                    "role": "assistant",
                    "status": status,
                    "content": content,
                }
            ],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": 10,
                "output_tokens": max(1, len(text) // 4),
                "total_tokens": 10 + max(1, len(text) // 4),
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
    if kind == "chat":
        return {
            "id": f"chatcmpl-{serial}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "length" if truncated else "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
    parts = [{"text": text}] if text else []
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "MAX_TOKENS" if truncated else "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": model,
    }


def _gzip_bomb(kind: str, model: str, decoded: int) -> bytes:
    """A success body of ``kind`` whose text is ``decoded`` ``a`` characters, gzipped.

    The long run is compressed once per size (:func:`_deflated_run`) and shared by every
    kind: the JSON before and after it are deflated apart, each stretch ending with a full
    flush, so no stretch refers back to another and their concatenation is one valid
    deflate stream; the gzip trailer's CRC covers the whole decoded body.
    """
    marker = "@@TEXT@@"
    before, after = json.dumps(_success_body(kind, model, marker, 1)).encode().split(marker.encode())
    run, run_crc = _deflated_run(decoded)
    crc = zlib.crc32(after, _crc32_combine(zlib.crc32(before), run_crc, decoded))
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # gzip, deflate, no name, no time
    trailer = struct.pack("<II", crc, (len(before) + decoded + len(after)) & 0xFFFFFFFF)
    return header + _deflated(before, zlib.Z_FULL_FLUSH) + run + _deflated(after, zlib.Z_FINISH) + trailer


def _deflated(data: bytes, mode: int) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush(mode)


@functools.lru_cache(maxsize=2)
def _deflated_run(size: int) -> tuple[bytes, int]:
    """``size`` ``a`` characters as raw deflate ending in a full flush, and their CRC-32:
    made a megabyte at a time, never held decoded."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = b"a" * (1 << 20)
    pieces, crc = [], 0
    for start in range(0, size, len(block)):
        piece = block[: size - start]
        pieces.append(compressor.compress(piece))
        crc = zlib.crc32(piece, crc)
    pieces.append(compressor.flush(zlib.Z_FULL_FLUSH))
    return b"".join(pieces), crc


def _crc32_combine(crc1: int, crc2: int, length2: int) -> int:
    """The CRC-32 of two byte strings one after the other, from their CRCs (zlib's
    ``crc32_combine``, which Python does not expose): GF(2) matrix squaring."""

    def times(matrix: list[int], vector: int) -> int:
        total, row = 0, 0
        while vector:
            if vector & 1:
                total ^= matrix[row]
            vector >>= 1
            row += 1
        return total

    def square(matrix: list[int]) -> list[int]:
        return [times(matrix, matrix[n]) for n in range(32)]

    odd = [0xEDB88320] + [1 << n for n in range(31)]  # the operator for one zero bit
    even = square(odd)  # two zero bits
    odd = square(even)  # four zero bits
    while length2:
        even = square(odd)  # first pass: one zero byte
        if length2 & 1:
            crc1 = times(even, crc1)
        length2 >>= 1
        if not length2:
            break
        odd = square(even)
        if length2 & 1:
            crc1 = times(odd, crc1)
        length2 >>= 1
    return crc1 ^ crc2


def _error_body(kind: str, status: int, message: str) -> dict[str, Any]:
    if kind == "gemini":
        return {"error": {"code": status, "message": message, "status": _GEMINI_STATUS.get(status, "UNKNOWN")}}
    return {"error": {"message": message, "type": "scripted_error", "param": None, "code": str(status)}}


class _HTTPServer(ThreadingHTTPServer):
    # socketserver listens with a backlog of 5: a client opening 16 connections at once
    # overflowed it, and the connections beyond it waited for TCP retransmissions (and
    # some were reset). API servers listen with a backlog in the hundreds.
    request_queue_size = 128


class LLMServer:
    """A threaded HTTP server on 127.0.0.1 answering like the OpenAI and Gemini APIs.

    Use it as a context manager (or :meth:`start` / :meth:`stop`). Thread-safe: the
    recorded requests and counters may be read while requests are being served.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.default = Reply.ok()
        """The answer once the script is used up."""
        self.responder: Callable[[RecordedRequest], Reply] | None = None
        self.log: Any = None
        """A text file each request is appended to, as one JSON line (path and body)."""
        """When set, called for every unscripted request instead of using :attr:`default`."""
        self.latency = 0.0
        """Seconds added before every answer."""
        self._lock = threading.Lock()
        self._script: list[Reply] = []
        self._requests: list[RecordedRequest] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._closing = threading.Event()
        self._die_at: int | None = None
        self._dead = threading.Event()
        self._httpd = _HTTPServer((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None
        self.batch_polls = 1
        """Status checks of a batch job before it ends (1: the first check finds it done)."""
        self.batch_outcome = "completed"
        """How jobs end: ``completed``, ``failed`` or ``expired``."""
        self.batch_reason = "scripted batch failure"
        """The provider's reason for a ``failed`` job."""
        self.files: dict[str, bytes] = {}
        """Uploaded and produced files (OpenAI), by id."""
        self.batches: dict[str, dict[str, Any]] = {}
        """Batch jobs of both APIs, by id (their wire form, plus private ``_`` fields)."""
        self._batch_requests: list[RecordedRequest] = []
        self._uploads: dict[str, bytes] = {}
        self.info: dict[str, Any] = {}
        """What the information endpoints answer (:data:`INFO_PATHS`: vLLM's
        ``/v1/models``, llama.cpp's ``/props``, Ollama's ``/api/show``), by path; a path
        not here is answered 404."""

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> LLMServer:
        """Serve in a background thread; returns self."""
        # A short poll interval: shutdown() waits up to one interval, once per test.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests still waiting (hangs, latency) are released."""
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses -----------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the Gemini base URL."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: the OpenAI base URL."""
        return f"{self.url}/v1"

    # -- scripting -----------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue ``replies``: each answers one request, in order, before the default."""
        with self._lock:
            self._script.extend(replies)

    def fail(self, status: int, times: int = 1, *, retry_after: float | str | None = None) -> None:
        """Queue ``times`` error answers with ``status``."""
        self.script(*[Reply.error(status, retry_after=retry_after)] * times)

    def die_after(self, requests: int) -> None:
        """Crash once ``requests`` more requests were answered: the listening socket is
        closed (new connections are refused) and later requests on open connections
        are dropped with a reset, unanswered (and not recorded)."""
        with self._lock:
            self._die_at = len(self._requests) + requests
        if requests <= 0:
            self._die()

    @property
    def dead(self) -> bool:
        """Whether :meth:`die_after` has taken effect."""
        return self._dead.is_set()

    def _die(self) -> None:
        if self._dead.is_set():
            return
        self._dead.set()
        # shutdown() waits for serve_forever to return, so not from a handler thread.
        threading.Thread(target=self._close_listener, daemon=True).start()

    def _close_listener(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def reset(self) -> None:
        """Forget the script, the recorded requests and the counters."""
        with self._lock:
            self._script.clear()
            self._requests.clear()
            self._max_in_flight = self._in_flight

    # -- observations --------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        """How many requests were received (attempts, retries included)."""
        with self._lock:
            return len(self._requests)

    @property
    def last(self) -> RecordedRequest:
        """The most recent request (``IndexError`` when there is none)."""
        with self._lock:
            return self._requests[-1]

    @property
    def batch_requests(self) -> list[RecordedRequest]:
        """Every request answered inside a batch job, as if it had been sent alone."""
        with self._lock:
            return list(self._batch_requests)

    @property
    def in_flight(self) -> int:
        """Requests being answered right now."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most requests that were being answered at the same time."""
        with self._lock:
            return self._max_in_flight

    # -- serving -------------------------------------------------------------------

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            if self._script:
                return self._script.pop(0)
        if self.responder is not None:
            return self.responder(request)
        return self.default

    def _begin(self, request: RecordedRequest) -> int:
        with self._lock:
            if self.log is not None:
                self.log.write(json.dumps({"path": request.path, "body": request.body}) + "\n")
                self.log.flush()
            self._requests.append(request)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
            return len(self._requests)

    def _end(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs expect
            # TCP_NODELAY, as real API front ends set it: the headers and the body go out
            # in two writes, and with Nagle's algorithm the body waited for the client's
            # delayed ACK of the headers (~40 ms on Linux) before it was sent, adding that
            # to every answer on top of `latency`.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                pass

            def do_POST(self) -> None:
                server._serve(self)

            def do_GET(self) -> None:
                server._serve(self)

        return Handler

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        if self._dead.is_set():
            _drop(handler)
            return
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = RecordedRequest(
            method=handler.command,
            path=handler.path,
            headers={k.lower(): v for k, v in handler.headers.items()},
            body=body,
            raw=raw,
            received_at=time.monotonic(),
        )
        serial = self._begin(request)
        try:
            if self._batch_api(handler, request):
                return
            reply = self._next_reply(request)
            wait = self.latency + reply.delay
            if wait > 0 and self._closing.wait(wait):
                return  # shutting down: drop the request
            kind = request.kind
            if reply.abort is not None:
                _abort(handler, reply.abort)
                return
            extra: dict[str, str] = {}
            if reply.gzip_bomb:
                payload = _gzip_bomb(kind, request.model or "model", reply.gzip_bomb)
                extra = {"Content-Encoding": "gzip"}
            elif reply.raw is not None:
                payload = reply.raw
            elif kind == "unknown":
                reply = Reply.error(404, f"no such endpoint: {request.method} {request.path}")
                payload = json.dumps(_error_body(kind, 404, reply.text)).encode()
            elif reply.status == 200:
                body = _success_body(kind, request.model or "model", reply.text, serial, reply.truncated)
                payload = json.dumps(body).encode()
            else:
                payload = json.dumps(_error_body(kind, reply.status, reply.text)).encode()
            try:
                handler.send_response(reply.status)
                headers = {"Content-Type": "application/json", **extra, **reply.headers}
                for name, value in headers.items():
                    handler.send_header(name, value)
                handler.send_header("Content-Length", str(len(payload)))
                handler.end_headers()
                if reply.drip is not None:
                    self._drip(handler, payload, reply.drip, reply.drip_for)
                else:
                    handler.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout): nothing to answer
        finally:
            self._end()
            with self._lock:
                dying = self._die_at is not None and len(self._requests) >= self._die_at
            if dying:
                self._die()

    # -- batch APIs ----------------------------------------------------------------

    def _batch_api(self, handler: BaseHTTPRequestHandler, request: RecordedRequest) -> bool:
        """Answer a files or batches request; ``False`` for any other path."""
        path = request.path.split("?", 1)[0]
        method = request.method
        answer: tuple[int, Any] | None = None
        # Both APIs have a /v1/batches; the Gemini SDK sends its key in x-goog-api-key.
        gemini = "x-goog-api-key" in request.headers
        headers: dict[str, str] = {}
        if path in INFO_PATHS:  # a server's information endpoints: what it was told to say, else 404
            said = self.info.get(path)
            answer = (200, said) if said is not None else (404, {"error": "not found"})
        elif _GEMINI_UPLOAD.search(path):
            with self._lock:
                session = str(len(self._uploads) + 1)
                self._uploads[session] = b""
            headers["X-Goog-Upload-URL"] = f"{self.url}/upload-session/{session}"
            answer = (200, {})
        elif match := _GEMINI_SESSION.search(path):
            answer = self._gemini_upload(request, match.group("id"), headers)
        elif gemini and (match := _GEMINI_DOWNLOAD.search(path)):
            data = self.files.get(f"files/{match.group('id')}")
            answer = (200, data) if data is not None else (404, _error_body("gemini", 404, "no such file"))
        elif match := _GEMINI_BATCH_CREATE.search(path):
            answer = self._gemini_create(request, match.group("model"))
        elif gemini and (match := _GEMINI_BATCH.search(path)):
            answer = self._gemini_batch(method, match)
        elif match := _OPENAI_FILE.search(path):
            answer = self._openai_file(request, match)
        elif match := _OPENAI_BATCH.search(path):
            answer = self._openai_batch(method, request, match)
        if answer is None:
            return False
        status, payload = answer
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        try:
            handler.send_response(status)
            handler.send_header(
                "Content-Type", "application/octet-stream" if isinstance(payload, bytes) else "application/json"
            )
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return True

    def _gemini_upload(self, request: RecordedRequest, session: str, headers: dict[str, str]) -> tuple[int, Any]:
        """One chunk of a resumable upload; the last one (``finalize``) makes the file."""
        if session not in self._uploads:
            return 404, _error_body("gemini", 404, "no such upload session")
        self._uploads[session] += request.raw
        if "finalize" not in request.headers.get("x-goog-upload-command", ""):
            headers["x-goog-upload-status"] = "active"
            return 200, {}
        headers["x-goog-upload-status"] = "final"
        with self._lock:
            name = f"files/u{session}"
            self.files[name] = self._uploads.pop(session)
        size = str(len(self.files[name]))
        return 200, {"file": {"name": name, "mimeType": "application/jsonl", "sizeBytes": size, "state": "ACTIVE"}}

    def _answer_alone(self, path: str, body: Any) -> tuple[int, Any]:
        """``(status, body)`` an interactive request with ``body`` to ``path`` would get."""
        request = RecordedRequest("POST", path, {}, body, json.dumps(body).encode(), time.monotonic())
        with self._lock:
            self._batch_requests.append(request)
            serial = len(self._batch_requests)
        reply = self._next_reply(request)
        kind = request.kind
        if reply.status == 200:
            return 200, _success_body(kind, request.model or "model", reply.text, serial, reply.truncated)
        return reply.status, _error_body(kind, reply.status, reply.text)

    def _openai_file(self, request: RecordedRequest, match: re.Match[str]) -> tuple[int, Any]:
        file_id = match.group("id")
        if request.method == "POST" and file_id is None:
            content_type = request.headers.get("content-type", "")
            message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + request.raw
            )
            data, name, purpose = b"", "upload", ""
            for part in message.iter_parts():
                field_name = part.get_param("name", header="content-disposition")
                content = part.get_payload(decode=True) or b""
                if field_name == "file":
                    data, name = content, part.get_filename() or name
                elif field_name == "purpose":
                    purpose = content.decode()
            with self._lock:
                new_id = f"file-{len(self.files) + 1}"
                self.files[new_id] = data
            return 200, _file_object(new_id, name, purpose, len(data))
        if file_id is None or file_id not in self.files:
            return 404, _error_body("responses", 404, f"no such file: {file_id}")
        if match.group("content"):
            return 200, self.files[file_id]
        return 200, _file_object(file_id, file_id, "batch", len(self.files[file_id]))

    def _openai_batch(self, method: str, request: RecordedRequest, match: re.Match[str]) -> tuple[int, Any]:
        batch_id = match.group("id")
        if batch_id is None:
            if method == "POST":
                body = request.body or {}
                if body.get("input_file_id") not in self.files:
                    return 400, _error_body("responses", 400, "input_file_id names no uploaded file")
                with self._lock:
                    new_id = f"batch_{len(self.batches) + 1}"
                    lines = self.files[body["input_file_id"]].decode().splitlines()
                    self.batches[new_id] = {
                        "id": new_id,
                        "object": "batch",
                        "endpoint": body.get("endpoint"),
                        "input_file_id": body["input_file_id"],
                        "completion_window": body.get("completion_window", "24h"),
                        "status": "validating",
                        "created_at": 1_700_000_000,
                        "metadata": body.get("metadata"),
                        "output_file_id": None,
                        "error_file_id": None,
                        "errors": None,
                        "request_counts": {"total": len([x for x in lines if x.strip()]), "completed": 0, "failed": 0},
                        "_polls": 0,
                    }
                return 200, _public(self.batches[new_id])
            jobs = [_public(job) for job in reversed(list(self.batches.values())) if "endpoint" in job]
            return 200, {
                "object": "list",
                "data": jobs,
                "has_more": False,
                "first_id": jobs[0]["id"] if jobs else None,
                "last_id": jobs[-1]["id"] if jobs else None,
            }
        job = self.batches.get(batch_id)
        if job is None:
            return 404, _error_body("responses", 404, f"no such batch: {batch_id}")
        if match.group("cancel"):
            if job["status"] in ("validating", "in_progress"):
                job["status"] = "cancelling"
            return 200, _public(job)
        self._advance_openai(job)
        return 200, _public(job)

    def _advance_openai(self, job: dict[str, Any]) -> None:
        if job["status"] == "cancelling":
            job["status"] = "cancelled"
            return
        if job["status"] not in ("validating", "in_progress"):
            return
        job["_polls"] += 1
        if job["_polls"] < self.batch_polls:
            job["status"] = "in_progress"
            return
        if self.batch_outcome == "failed":
            job["status"] = "failed"
            job["errors"] = {
                "object": "list",
                "data": [{"code": "invalid_request", "message": self.batch_reason, "line": 1}],
            }
            return
        if self.batch_outcome == "expired":
            job["status"] = "expired"
            return
        outputs, errors = [], []
        for number, raw in enumerate(self.files[job["input_file_id"]].decode().splitlines(), 1):
            if not raw.strip():
                continue
            line = json.loads(raw)
            status, body = self._answer_alone(line["url"], line["body"])
            record = {
                "id": f"batch_req_{number}",
                "custom_id": line["custom_id"],
                "response": {"status_code": status, "request_id": f"req_{number}", "body": body},
                "error": None,
            }
            (outputs if status == 200 else errors).append(json.dumps(record))
        with self._lock:
            if outputs:
                job["output_file_id"] = f"file-{len(self.files) + 1}"
                self.files[job["output_file_id"]] = ("\n".join(outputs) + "\n").encode()
            if errors:
                job["error_file_id"] = f"file-{len(self.files) + 1}"
                self.files[job["error_file_id"]] = ("\n".join(errors) + "\n").encode()
        job["request_counts"] = {"total": len(outputs) + len(errors), "completed": len(outputs), "failed": len(errors)}
        job["status"] = "completed"

    def _gemini_create(self, request: RecordedRequest, model: str) -> tuple[int, Any]:
        batch = (request.body or {}).get("batch") or {}
        source = batch.get("inputConfig") or {}
        requests = ((source.get("requests") or {}).get("requests")) or []
        if source.get("fileName"):
            data = self.files.get(source["fileName"])
            if data is None:
                return 400, _error_body("gemini", 400, f"no such file: {source['fileName']}")
            requests = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        with self._lock:
            new_id = f"g{len(self.batches) + 1}"
            self.batches[new_id] = {
                "name": f"batches/{new_id}",
                "metadata": {
                    "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
                    "name": f"batches/{new_id}",
                    "displayName": batch.get("displayName"),
                    "model": f"models/{model}",
                    "state": "BATCH_STATE_PENDING",
                    "createTime": "2026-01-01T00:00:00Z",
                },
                "_requests": requests,
                "_from_file": bool(source.get("fileName")),
                "_model": model,
                "_polls": 0,
            }
        return 200, _public(self.batches[new_id])

    def _gemini_batch(self, method: str, match: re.Match[str]) -> tuple[int, Any]:
        batch_id = match.group("id")
        if batch_id is None:
            jobs = [_public(job) for job in reversed(list(self.batches.values())) if "_model" in job]
            return 200, {"operations": jobs}
        job = self.batches.get(batch_id)
        if job is None:
            return 404, _error_body("gemini", 404, f"no such batch: {batch_id}")
        meta = job["metadata"]
        if match.group("cancel"):
            if meta["state"] in ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING"):
                meta["state"] = "BATCH_STATE_CANCELLED"
                job["done"] = True
            return 200, {}
        if meta["state"] in ("BATCH_STATE_PENDING", "BATCH_STATE_RUNNING"):
            job["_polls"] += 1
            if job["_polls"] < self.batch_polls:
                meta["state"] = "BATCH_STATE_RUNNING"
            elif self.batch_outcome in ("failed", "expired"):
                meta["state"] = "BATCH_STATE_FAILED" if self.batch_outcome == "failed" else "BATCH_STATE_EXPIRED"
                job["done"] = True
                job["error"] = {"code": 3, "message": self.batch_reason}
            else:
                responses = []
                for item in job["_requests"]:
                    status, body = self._answer_alone(
                        f"/v1beta/models/{job['_model']}:generateContent", item.get("request")
                    )
                    entry: dict[str, Any] = (
                        {"key": item["key"]} if job["_from_file"] else {"metadata": item.get("metadata")}
                    )
                    if status == 200:
                        entry["response"] = body
                    else:
                        entry["error"] = body["error"]
                    responses.append(entry)
                meta["state"] = "BATCH_STATE_SUCCEEDED"
                if job["_from_file"]:
                    name = f"files/out-{batch_id}"
                    self.files[name] = "".join(json.dumps(entry) + "\n" for entry in responses).encode()
                    meta["output"] = {"responsesFile": name}
                else:
                    meta["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
                job["done"] = True
        return 200, _public(job)

    def _drip(self, handler: BaseHTTPRequestHandler, payload: bytes, interval: float, limit: float) -> None:
        """Send ``payload`` one byte per ``interval`` until it is sent, the client goes
        away (the write fails), the server stops, or ``limit`` seconds have passed."""
        handler.wfile.flush()
        deadline = time.monotonic() + limit
        for index in range(len(payload)):
            handler.wfile.write(payload[index : index + 1])
            handler.wfile.flush()
            if time.monotonic() >= deadline or self._closing.wait(interval):
                _drop(handler)
                return


def _public(job: dict[str, Any]) -> dict[str, Any]:
    """A job's wire form: without the server's own ``_`` fields."""
    return {key: value for key, value in job.items() if not key.startswith("_")}


def _file_object(file_id: str, name: str, purpose: str, size: int) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": 1_700_000_000,
        "filename": name,
        "purpose": purpose or "batch",
        "status": "processed",
    }


def _drop(handler: BaseHTTPRequestHandler) -> None:
    """Close the connection with a TCP reset (SO_LINGER 0), answering nothing."""
    handler.close_connection = True
    connection: socket.socket = handler.connection  # type: ignore[attr-defined]
    try:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.close()
    except OSError:
        pass


def _abort(handler: BaseHTTPRequestHandler, how: str) -> None:
    """Break the answer the way ``how`` says (see :attr:`Reply.abort`)."""
    try:
        if how == "garbage":
            handler.wfile.write(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not HTTP at all\r\n\r\n")
            handler.wfile.flush()
        else:  # "reset": a promising start, then the connection is gone
            handler.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
                b'{"id": "resp_cut", "output": ['
            )
            handler.wfile.flush()
    except OSError:
        pass
    _drop(handler)


@contextmanager
def serving() -> Iterator[LLMServer]:
    """An :class:`LLMServer` running for the duration of the ``with`` block."""
    with LLMServer() as server:
        yield server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0, help="Seconds before every answer.")
    parser.add_argument("--log", help="Append every request (path and JSON body) to this file, one per line.")
    args = parser.parse_args()
    server = LLMServer(port=args.port)
    server.latency = args.latency
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115 (open for the server's life)
    server.log = log
    with server:
        print(f"OpenAI base URL: {server.openai_url}\nGemini base URL: {server.url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
