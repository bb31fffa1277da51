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


class _Injector(BaseHTTPRequestHandler):
    """Forwards to `upstream` what `rule` does not answer; both class attributes are set per proxy."""

    upstream = ""
    rule: Rule = staticmethod(lambda request, headers: None)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = json.loads(body)
        headers = {"Content-Type": "application/json"}
        if self.headers.get("Authorization"):
            headers["Authorization"] = self.headers["Authorization"]
        decision = type(self).rule(request, headers)
        if isinstance(decision, tuple):
            status, reply = decision
            data = json.dumps(reply).encode()
        else:
            upstream = httpx.post(self.upstream, content=body, headers=decision or headers, timeout=30)
            status, data = upstream.status_code, upstream.content
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: object) -> None:
        pass


def proxy(upstream: str, rule: Rule) -> ThreadingHTTPServer:
    """The proxy, serving on a free port of 127.0.0.1 until its `shutdown()`."""
    handler = type("Handler", (_Injector,), {"upstream": upstream, "rule": staticmethod(rule)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
