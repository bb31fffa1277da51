"""
A fake execution client: a block tree answering the Engine API and the JSON-RPC calls a replay makes,
served in the test process (`served`) or run as a process balgen starts and stops like a node
(`python fake_client.py --datadir D --rpc-port P --engine-port Q --genesis-hash H`). For tests whose
subject is balgen (fuzzed inputs, a client killed, replaced, signalled) and not the client: a geth
start is about 3 CPU-s, this process's a twentieth of one. Standard library only, so that its start
stays cheap.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class FakeClient:
    """
    An Engine API client that keeps a block tree: `newPayload` accepts any
    block whose parent it has, `forkchoiceUpdated` moves the head,
    `debug_setHead` rewinds it and forgets the blocks above, as geth does.
    `misbehave` makes the n-th call get a bad answer.
    """

    def __init__(self, payload_seconds: float = 0.0) -> None:
        self.lock = threading.Lock()
        self.payload_seconds = payload_seconds
        """How long each `engine_newPayload` takes, as if it executed the block."""
        self.reset("0x" + "00" * 32)

    def reset(self, genesis_hash: str, misbehave: tuple[int, str, Any] | None = None) -> None:
        with self.lock:
            self.blocks = {genesis_hash: {"hash": genesis_hash, "number": "0x0", "parentHash": "0x" + "00" * 32}}
            self.head = genesis_hash
            self.calls = 0
            self.misbehave = misbehave

    def canonical(self) -> dict[int, str]:
        chain, block_hash = {}, self.head
        while block_hash in self.blocks:
            block = self.blocks[block_hash]
            chain[int(block["number"], 16)] = block_hash
            block_hash = block["parentHash"]
        return chain

    def answer(self, request: Any) -> tuple[int, bytes | None]:
        """(HTTP status, body) for a request; body None closes the connection unanswered."""
        with self.lock:
            self.calls += 1
            if self.misbehave is not None and self.calls == self.misbehave[0]:
                return _bad_answer(request, *self.misbehave[1:])
            method, params = request.get("method", ""), request.get("params") or []
            try:
                return 200, _reply(request, result=self.result(method, params))
            except LookupError as error:
                return 200, _reply(request, error={"code": -32000, "message": str(error)})

    def result(self, method: str, params: list[Any]) -> Any:
        if method == "engine_exchangeCapabilities":
            return []
        if method == "web3_clientVersion":
            return "Fake/v0.0.0"
        if method == "eth_getBlockByHash":
            return self.blocks.get(str(params[0]).lower())
        if method == "eth_getBlockByNumber":
            block_hash = self.head if params[0] == "latest" else self.canonical().get(int(params[0], 16))
            return self.blocks.get(block_hash) if block_hash else None
        if method == "debug_setHead":
            number, chain = int(params[0], 16), self.canonical()
            if number >= int(self.blocks[self.head]["number"], 16):
                raise LookupError("not allowed to rewind to a future block")
            for above in range(number + 1, max(chain) + 1):  # deleted, as geth's SetHead does
                self.blocks.pop(chain[above])
            self.head = chain[number]
            return None
        if method.startswith("engine_newPayload"):
            time.sleep(self.payload_seconds)
            payload = params[0]
            parent = self.blocks.get(str(payload.get("parentHash")).lower())
            if parent is None:
                return {"status": "SYNCING", "latestValidHash": None, "validationError": None}
            block_hash = str(payload.get("blockHash")).lower()
            self.blocks[block_hash] = {"hash": block_hash, "number": hex(int(parent["number"], 16) + 1), "parentHash": parent["hash"]}
            return {"status": "VALID", "latestValidHash": block_hash, "validationError": None}
        if method.startswith("engine_forkchoiceUpdated"):
            head = str(params[0].get("headBlockHash")).lower()
            if head not in self.blocks:
                return {"payloadStatus": {"status": "SYNCING"}, "payloadId": None}
            self.head = head
            return {"payloadStatus": {"status": "VALID", "latestValidHash": head}, "payloadId": None}
        raise LookupError(f"method {method} not found")


def _reply(request: Any, **member: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request.get("id") if isinstance(request, dict) else None, **member}).encode()


BAD_ANSWERS = ["rpc error", "error not an object", "junk result", "HTTP 500", "HTTP 401", "not JSON", "JSON list", "no result", "hang up"]


def _bad_answer(request: Any, kind: str, junk: Any) -> tuple[int, bytes | None]:
    return {
        "rpc error": (200, _reply(request, error={"code": -32603, "message": "injected"})),
        "error not an object": (200, _reply(request, error="injected")),
        "junk result": (200, _reply(request, result=junk)),
        "HTTP 500": (500, b"internal error"),
        "HTTP 401": (401, b"signature is invalid"),
        "not JSON": (200, b"<html>gateway</html>"),
        "JSON list": (200, b"[1, 2]"),
        "no result": (200, _reply(request)),
        "hang up": (200, None),
    }[kind]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeClient

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status, reply = self.fake.answer(json.loads(body))
        if reply is None:
            self.close_connection = True
            return
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *_args: object) -> None:
        pass


def served(fake: FakeClient, port: int = 0) -> ThreadingHTTPServer:
    """`fake` answering on 127.0.0.1:`port` (0: a free one) from a thread of this process, until `shutdown()`."""
    server = ThreadingHTTPServer(("127.0.0.1", port), type("Handler", (_Handler,), {"fake": fake}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


CHAIN_FILE = "chain.json"
"""What the node process keeps in its datadir across a clean stop: its blocks and head. A killed one
keeps nothing, as a node that loses what it held in memory."""


def _run_node(arguments: list[str]) -> None:
    """
    The fake as a node: its chain read from the datadir, both endpoints served, the chain written back
    when SIGINT asks it to stop (exit code 0). Each `engine_newPayload` takes `--payload-seconds`, so
    that a signal can land in the middle of a run as it does with a real client.
    """
    parser = argparse.ArgumentParser(prog="fake_client")
    parser.add_argument("--datadir", type=Path, required=True)
    parser.add_argument("--rpc-port", type=int, required=True)
    parser.add_argument("--engine-port", type=int, required=True)
    parser.add_argument("--genesis-hash", required=True)
    parser.add_argument("--payload-seconds", type=float, default=0.0)
    options, _mode_flags = parser.parse_known_args(arguments)
    fake = FakeClient(payload_seconds=options.payload_seconds)
    fake.reset(options.genesis_hash.lower())
    chain = options.datadir / CHAIN_FILE
    if chain.exists():
        fake.blocks, fake.head = json.loads(chain.read_text())
    try:
        servers = [served(fake, options.rpc_port), served(fake, options.engine_port)]
    except OSError as error:
        sys.exit(f"fake client: {error.strerror}".lower())  # "address already in use": balgen picks other ports
    print(f"fake client serving {options.genesis_hash} on ports {options.rpc_port} and {options.engine_port}", flush=True)
    try:
        signal.sigwait({signal.SIGINT})
    finally:
        for server in servers:
            server.shutdown()
    with fake.lock:
        chain.write_text(json.dumps([fake.blocks, fake.head]))
    print("fake client stopped", flush=True)


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # before the server threads start: sigwait takes it
    _run_node(sys.argv[1:])
