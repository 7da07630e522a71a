"""The benchmark's LLM servers: the test server, configurable to be plainer.

``tests/llm_server.py`` answers like a good API front end: keep-alive, a listen backlog
of 128, no faults. Real servers and proxies are often plainer. :func:`server` builds the
test server with these knobs:

* ``keep_alive``: off answers HTTP/1.0 with ``Connection: close``, so every request opens
  a new connection;
* ``backlog``: the listen backlog (socketserver's own default is 5);
* ``reset_every``: every n-th request is answered with a status line and half a body,
  then a TCP reset (what a broken proxy or TLS session looks like); a client that
  retries connection errors recovers from it, one that does not fails.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def _llm_server() -> Any:
    if "llm_server" not in sys.modules:
        spec = importlib.util.spec_from_file_location("llm_server", REPO / "tests" / "llm_server.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["llm_server"] = module
        spec.loader.exec_module(module)
    return sys.modules["llm_server"]


def server(*, keep_alive: bool = True, backlog: int = 128, reset_every: int = 0, latency: float = 0.2) -> Any:
    """An unstarted LLMServer with these settings (use it as a context manager)."""
    module = _llm_server()

    class Server(module.LLMServer):  # type: ignore[misc,name-defined]
        def _handler_class(self) -> Any:
            handler = super()._handler_class()
            if not keep_alive:
                class Closing(handler):  # type: ignore[misc,valid-type]
                    protocol_version = "HTTP/1.0"

                    def end_headers(self) -> None:
                        self.send_header("Connection", "close")
                        super().end_headers()

                return Closing
            return handler

    instance = Server()
    instance._httpd.socket.listen(backlog)  # listen() again sets the backlog
    instance.latency = latency
    if reset_every:
        counter = itertools.count(1)
        lock = threading.Lock()

        def respond(request: Any) -> Any:
            with lock:
                serial = next(counter)
            return module.Reply.reset() if serial % reset_every == 0 else module.Reply.ok()

        instance.responder = respond
    return instance


SERVERS = {
    # name: settings; "plain" is a server without keep-alive, a small backlog and a reset
    # every 50th request.
    "keep-alive": {"keep_alive": True, "backlog": 128, "reset_every": 0},
    "plain": {"keep_alive": False, "backlog": 5, "reset_every": 50},
}
