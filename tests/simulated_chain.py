"""
A chain simulated for `balgen devnet-check`: a JSON-RPC server on 127.0.0.1
that answers from a list of blocks, or answers one method as a test tells it
(a hostile chain), and the chain transactions a spamoor run of exported
payloads makes, as `devnet_sender` sends them to a real chain: fresh wallets
per payload, each wallet's transactions in nonce order, `$contract[N]` from
the deployer's nonces.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from balgen.devnet.chain_reader import ChainTx
from balgen.devnet.matching import expected_fields
from balgen.devnet.spamoor_wallets import child_wallet
from balgen.export.spamoor_payloads import DEPLOYER, GroupPayload
from balgen.model.keys import create_address, sender
from balgen.ethereum.keccak import keccak

Answer = Callable[[list[Any]], tuple[int, bytes, dict[str, str]] | Any]
"""A method's answer to its params: a result, or (HTTP status, body, headers) sent as they are."""


@dataclass
class SimulatedChain:
    """Blocks of transactions (each a list of ChainTx), served by number; `answers` override methods."""

    blocks: list[list[ChainTx]] = field(default_factory=lambda: [[]])
    head: int | None = None
    """The head eth_blockNumber reports (default: the last block)."""
    answers: dict[str, Answer] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def block(self, number: int, full: bool) -> dict[str, Any] | None:
        if number >= len(self.blocks) and self.head is None:
            return None
        txs = self.blocks[number] if number < len(self.blocks) else []
        return {
            "number": hex(number),
            "hash": "0x" + keccak(number.to_bytes(8, "big")).hex(),
            "miner": "0x" + "c0" * 20,
            "blockAccessListHash": "0x" + "00" * 32,  # an Amsterdam chain, as the default export needs
            "slotNumber": hex(number),
            "transactions": [tx_json(tx) if full else tx.hash for tx in txs],
        }

    def result(self, method: str, params: list[Any]) -> Any:
        head = len(self.blocks) - 1 if self.head is None else self.head
        if method == "eth_blockNumber":
            return hex(head)
        if method == "eth_getBlockByNumber":
            number = head if params[0] == "latest" else int(params[0], 16)
            return self.block(number, params[1])
        if method == "eth_getTransactionReceipt":
            return {"status": "0x1", "gasUsed": "0x5208"}
        raise LookupError(method)

    def reply(self, request: dict[str, Any]) -> tuple[int, bytes, dict[str, str]]:
        method, params = request["method"], request.get("params", [])
        self.calls.append(method)
        try:
            answer = self.answers[method](params) if method in self.answers else self.result(method, params)
        except LookupError:
            member = {"error": {"code": -32601, "message": f"the method {method} does not exist"}}
            return 200, json.dumps({"jsonrpc": "2.0", "id": request["id"], **member}).encode(), {}
        if isinstance(answer, tuple):
            return answer
        return 200, json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}).encode(), {}


def tx_json(tx: ChainTx) -> dict[str, Any]:
    """A full transaction object as `eth_getBlockByNumber` gives it."""
    return {
        "blockNumber": hex(tx.block), "transactionIndex": hex(tx.position), "hash": tx.hash,
        "from": "0x" + tx.sender.hex(), "nonce": hex(tx.nonce), "to": None if tx.to is None else "0x" + tx.to.hex(),
        "input": "0x" + tx.data.hex(), "gas": hex(tx.gas), "value": hex(tx.value),
    }  # fmt: skip


@contextlib.contextmanager
def served(chain: SimulatedChain) -> Iterator[str]:
    """The chain's JSON-RPC URL on 127.0.0.1 while the block runs."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, body, headers = chain.reply(request)
            self.send_response(status)
            for name, value in {"Content-Type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@dataclass
class SimulatedSender:
    """Sends payloads as spamoor's replay-eest would, into blocks of `per_block` transactions."""

    per_block: int = 50
    blocks: list[list[ChainTx]] = field(default_factory=lambda: [[]])
    nonces: dict[bytes, int] = field(default_factory=dict)

    def send(self, to: bytes | None, data: bytes, gas: int, value: int, wallet: bytes) -> ChainTx:
        if len(self.blocks[-1]) >= self.per_block or len(self.blocks) == 1:
            self.blocks.append([])
        nonce = self.nonces.get(wallet, 0)
        self.nonces[wallet] = nonce + 1
        number, position = len(self.blocks) - 1, len(self.blocks[-1])
        tx = ChainTx.model_construct(
            block=number, position=position, hash="0x" + keccak(wallet + nonce.to_bytes(8, "big")).hex(),
            sender=wallet, nonce=nonce, to=to, data=data, gas=gas, value=value,
        )  # fmt: skip
        self.blocks[-1].append(tx)
        return tx

    def send_payloads(
        self, payloads: Sequence[GroupPayload], seed: str, drop_last: int = 0, root: bytes | None = None
    ) -> list[ChainTx]:
        """
        Every payload on fresh wallets (derived from `seed`); `drop_last`
        transactions of the last one left unsent. With `root`, the wallets are
        spamoor's: its pool's children of the root key under the spammer's
        seed, each payload taking the next ones, as replay-eest locks them.
        """
        sent = []
        pool = 0
        for number, payload in enumerate(payloads):
            labels = list(dict.fromkeys(tx.sender for tx in payload.txs))
            if root is None:
                wallets = {label: sender(f"{seed}/{payload.name}", label).address for label in labels}
            else:
                wallets = {label: child_wallet(root, seed, pool + offset) for offset, label in enumerate(labels)}
                pool += len(labels)
            deployer = wallets[DEPLOYER]
            creations = sum(1 for tx in payload.txs if tx.sender == DEPLOYER and tx.to is None)
            start = self.nonces.get(deployer, 0)  # a spammer's wallets run again from where they are
            contracts = {n: create_address(deployer, start + n - 1) for n in range(1, creations + 1)}
            txs = payload.txs[: len(payload.txs) - drop_last] if number == len(payloads) - 1 else payload.txs
            for tx in txs:
                to, data, gas, value = expected_fields(tx, contracts)
                sent.append(self.send(to, data, gas, value, wallets[tx.sender]))
        return sent
