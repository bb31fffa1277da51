"""
The transactions, receipts and state of a live chain, through its JSON-RPC URL only.

Blocks are read with their full transactions in the range asked for; the
rest (receipts, storage, code, traces) per transaction or account as the
checks need it. Every call goes to the one URL the user gave.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..plumbing.errors import BadInput
from ..clients.engine_client import RpcClient, RpcError


@dataclass(frozen=True)
class ChainTx:
    """A transaction as the chain holds it."""

    block: int
    position: int
    hash: str
    sender: bytes
    nonce: int
    to: bytes | None
    data: bytes
    gas: int
    value: int

    @property
    def where(self) -> str:
        return f"block {self.block} tx {self.position} ({self.hash})"


def address_of(text: str | None) -> bytes | None:
    return None if text is None else bytes.fromhex(text[2:])


def chain_tx(raw: dict) -> ChainTx:
    """One full transaction object of `eth_getBlockByNumber`."""
    return ChainTx(
        block=int(raw["blockNumber"], 16),
        position=int(raw["transactionIndex"], 16),
        hash=raw["hash"],
        sender=bytes.fromhex(raw["from"][2:]),
        nonce=int(raw["nonce"], 16),
        to=address_of(raw.get("to")),
        data=bytes.fromhex(raw.get("input", "0x")[2:]),
        gas=int(raw["gas"], 16),
        value=int(raw["value"], 16),
    )


def head_number(rpc: RpcClient) -> int:
    return int(rpc.call("eth_blockNumber").result, 16)


def block_range(rpc: RpcClient, first: int, last: int | None) -> tuple[int, int]:
    """[first, last] with `last` defaulting to the head; a range beyond the head is bad input."""
    head = head_number(rpc)
    last = head if last is None else last
    if first > last or last > head:
        raise BadInput(f"--blocks/--since: blocks {first}-{last} are not on the chain (head {head})")
    return first, last


def transactions_in(rpc: RpcClient, first: int, last: int) -> tuple[list[ChainTx], dict[int, bytes]]:
    """Every transaction of blocks first..last in chain order, and each block's fee recipient."""
    txs: list[ChainTx] = []
    miners: dict[int, bytes] = {}
    for number in range(first, last + 1):
        block = rpc.get_block_by_number(number, full_transactions=True).result
        if not isinstance(block, dict):
            raise BadInput(f"{rpc.url}: block {number} is missing")
        miners[number] = bytes.fromhex(block["miner"][2:])
        txs += [chain_tx(raw) for raw in block.get("transactions", [])]
    return txs, miners


def receipt_of(rpc: RpcClient, tx: ChainTx) -> dict:
    receipt = rpc.call("eth_getTransactionReceipt", [tx.hash]).result
    if not isinstance(receipt, dict):
        raise BadInput(f"{rpc.url}: no receipt for {tx.where}")
    return receipt


def storage_at(rpc: RpcClient, address: bytes, slot: int, block: int) -> int:
    return int(rpc.call("eth_getStorageAt", ["0x" + address.hex(), hex(slot), hex(block)]).result, 16)


def code_at(rpc: RpcClient, address: bytes, block: int) -> bytes:
    return bytes.fromhex(rpc.call("eth_getCode", ["0x" + address.hex(), hex(block)]).result[2:])


class NoTrace(Exception):
    """The RPC does not trace the transaction (no debug API, or no state to trace on); the message says why."""


def prestate_trace(rpc: RpcClient, tx: ChainTx, diff: bool) -> dict:
    """geth's prestateTracer of `tx` (its diff with `diff`); NoTrace when the RPC offers no such trace."""
    options = {"tracer": "prestateTracer", "tracerConfig": {"diffMode": diff}}
    try:
        return rpc.call("debug_traceTransaction", [tx.hash, options]).result
    except RpcError as error:
        raise NoTrace(error.message) from None
