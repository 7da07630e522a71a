"""The test server itself must not slow a client down more than a real API front end would."""

from __future__ import annotations

import http.client
import json
import select
import socket
from typing import Any

import pytest
from llm_server import DEFAULT_SUMMARY, LLMServer


def test_many_connections_opened_at_once_are_all_accepted() -> None:
    # Not started: nothing accepts, so every connection waits in the listen backlog.
    # socketserver's default backlog (5) dropped the handshakes beyond it; the client
    # then waited for TCP retransmissions (a second or more) or saw a reset.
    server = LLMServer()
    host, port = server._httpd.server_address[:2]
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(32)]
    try:
        for sock in sockets:
            sock.setblocking(False)
            sock.connect_ex((str(host), int(port)))
        _, writable, _ = select.select([], sockets, [], 2.0)
        connected = [s for s in writable if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0]
        assert len(connected) == len(sockets)
    finally:
        for sock in sockets:
            sock.close()
        server._httpd.server_close()


def test_answers_go_out_on_sockets_without_nagle(llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # Headers and body are two writes: with Nagle's algorithm the body waited for the
    # client's delayed ACK (~40 ms) on every answer, on top of the configured latency.
    handler = llm_server._httpd.RequestHandlerClass
    original = handler.setup
    nodelay: list[int] = []

    def setup(self: Any) -> None:
        original(self)
        nodelay.append(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    monkeypatch.setattr(handler, "setup", setup)
    host, port = llm_server._httpd.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=5)
    try:
        body = json.dumps({"model": "m", "input": "hi"})
        for _ in range(2):  # one connection, kept alive
            connection.request("POST", "/v1/responses", body=body, headers={"Content-Type": "application/json"})
            answer = json.loads(connection.getresponse().read())
            assert answer["output"][0]["content"][0]["text"] == DEFAULT_SUMMARY
    finally:
        connection.close()
    assert llm_server.request_count == 2
    assert len(nodelay) == 1
    assert nodelay[0] != 0


def test_the_log_holds_every_request_body(llm_server: LLMServer) -> None:
    import io

    log = io.StringIO()
    llm_server.log = log
    connection = http.client.HTTPConnection("127.0.0.1", int(llm_server.url.rsplit(":", 1)[1].strip("/")))
    body = {"model": "m", "input": "HAT268 on 2024-05-15", "instructions": "Summarize."}
    connection.request("POST", "/v1/responses", json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    connection.close()
    assert response.status == 200
    (line,) = log.getvalue().splitlines()
    assert json.loads(line) == {"path": "/v1/responses", "body": body}
