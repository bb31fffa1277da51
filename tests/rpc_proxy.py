"""
A JSON-RPC proxy on 127.0.0.1 in front of a real client: forwards each call
(Engine API or HTTP endpoint, headers kept) except those a test's rule
answers itself, as a client that errs, or lacks a method, would.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

Rule = Callable[[dict[str, Any], dict[str, str]], tuple[int, dict[str, Any]] | dict[str, str] | None]
"""(request, headers) -> (HTTP status, reply) answered instead, headers to forward with, or None: forwarded as it is."""


class ProxyServer(ThreadingHTTPServer):
    """The proxy's server, with the one HTTP client it forwards through (a client a call costs a TLS context each)."""

    def __init__(self, upstream: str, rule: Rule) -> None:
        super().__init__(("127.0.0.1", 0), _Injector)
        self.upstream = upstream
        self.rule = rule
        self.client = httpx.Client(timeout=30)

    def shutdown(self) -> None:
        super().shutdown()
        self.client.close()


class _Injector(BaseHTTPRequestHandler):
    """Forwards to the server's upstream what its rule does not answer."""

    server: ProxyServer

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = json.loads(body)
        headers = {"Content-Type": "application/json"}
        if self.headers.get("Authorization"):
            headers["Authorization"] = self.headers["Authorization"]
        decision = self.server.rule(request, headers)
        if isinstance(decision, tuple):
            status, reply = decision
            data = json.dumps(reply).encode()
        else:
            upstream = self.server.client.post(self.server.upstream, content=body, headers=decision or headers)
            status, data = upstream.status_code, upstream.content
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: object) -> None:
        pass


def proxy(upstream: str, rule: Rule) -> ProxyServer:
    """The proxy, serving on a free port of 127.0.0.1 until its `shutdown()`."""
    server = ProxyServer(upstream, rule)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
