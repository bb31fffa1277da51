"""
`devnet-check`'s tracing on a simulated chain of blocks holding several
transactions (a `geth --dev` chain mines one a block): each block traced once
per mode for the run's transactions in it, in the model's order, and each
transaction's own trace where the block's answer cannot stand for it.
"""

from __future__ import annotations

from typing import Any

from balgen.clients.engine_client import RpcClient
from balgen.devnet.chain_reader import ChainTx
from balgen.devnet.workload_check import Sent, traced_in_turn
from balgen.ethereum.keccak import keccak
from simulated_chain import SimulatedChain, served

CONTRACT = "0x" + "ab" * 20


def chain_tx(block: int, position: int) -> ChainTx:
    return ChainTx.model_construct(
        block=block, position=position, hash="0x" + keccak(bytes([block, position])).hex(), sender=bytes(20), nonce=0,
        to=None, data=b"", gas=21_000, value=0,
    )  # fmt: skip


def slot_of(tx: ChainTx) -> str:
    """A storage slot no other transaction of the chain touches: the traces tell each transaction's own."""
    return hex(tx.block * 100 + tx.position)


def trace_of(tx: ChainTx, options: dict[str, Any]) -> dict[str, Any]:
    """What geth's prestateTracer says of `tx`: it reads one slot, and in diff mode writes it."""
    entry = {CONTRACT: {"balance": "0x0", "storage": {slot_of(tx): "0x" + "00" * 32}}}
    if not options["tracerConfig"]["diffMode"]:
        return entry
    return {"pre": entry, "post": {CONTRACT: {"storage": {slot_of(tx): "0x" + "00" * 31 + "01"}}}}


BLOCKS = [[], [chain_tx(1, 0), chain_tx(1, 1), chain_tx(1, 2)], [chain_tx(2, 0), chain_tx(2, 1)]]
"""Block 1's first and block 2's last transactions are another sender's: not the run's."""
RUN = [BLOCKS[1][2], BLOCKS[2][0], BLOCKS[1][1]]
"""The run in the model's order, which is not the chain's."""


def traced_chain(block_answer: Any) -> SimulatedChain:
    """BLOCKS, tracing each transaction, and each block as `block_answer(block's txs, options)` says."""
    by_hash = {tx.hash: tx for txs in BLOCKS for tx in txs}
    return SimulatedChain(
        blocks=BLOCKS,
        answers={
            "debug_traceTransaction": lambda params: trace_of(by_hash[params[0]], params[1]),
            "debug_traceBlockByNumber": lambda params: block_answer(BLOCKS[int(params[0], 16)], params[1]),
        },
    )


def geth_block_trace(txs: list[ChainTx], options: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"txHash": tx.hash, "result": trace_of(tx, options)} for tx in txs]


def traced_run(chain: SimulatedChain) -> tuple[dict[str, set[tuple[bytes, int]]], list[tuple[Any, ...]]]:
    """Each run transaction's written slots by hash, and what the progress was told."""
    told: list[tuple[Any, ...]] = []
    with served(chain) as url, RpcClient(url) as rpc:
        sent = [Sent(None, tx) for tx in RUN]  # type: ignore[arg-type] - tracing reads the chain side only
        written = {item.live.hash: set(traced.storage_written) for item, traced in traced_in_turn(rpc, sent, lambda *told_now: told.append(told_now))}
    return written, told


OWN_SLOTS = {tx.hash: {(bytes.fromhex(CONTRACT[2:]), int(slot_of(tx), 16))} for tx in RUN}


def test_each_block_is_traced_once_per_mode_for_the_run_s_transactions_in_it() -> None:
    chain = traced_chain(geth_block_trace)
    written, told = traced_run(chain)
    assert written == OWN_SLOTS and list(written) == [tx.hash for tx in RUN]
    assert chain.calls.count("debug_traceBlockByNumber") == 4 and "debug_traceTransaction" not in chain.calls
    assert told == [("tracing", 0, 2, "blocks"), ("tracing", 1, 2, "blocks")]


def test_a_block_answer_of_other_transactions_is_left_for_each_transaction_s_own_trace() -> None:
    """Block 2's answer in another order (a reorg, or a client's own): the rest is traced transaction by transaction."""

    def reordered(txs: list[ChainTx], options: dict[str, Any]) -> list[dict[str, Any]]:
        return geth_block_trace(txs[::-1] if txs[0].block == 2 else txs, options)

    chain = traced_chain(reordered)
    written, told = traced_run(chain)
    assert written == OWN_SLOTS
    assert chain.calls.count("debug_traceTransaction") == 2, "block 2's one run transaction, in both modes"
    fallback = (
        f"tracing transaction by transaction (debug_traceBlockByNumber of block 2 names {BLOCKS[2][1].hash} at position 0, "
        f"not {BLOCKS[2][0].hash})"
    )
    assert told[-1] == (fallback, 1, 3)


def test_a_refused_block_trace_or_one_without_the_transaction_s_trace_falls_back() -> None:
    """A client without the method, one answering a shorter list, and one with an error in the transaction's place."""
    refusing = traced_chain(lambda txs, options: None)
    refusing.answers.pop("debug_traceBlockByNumber")
    shorter = traced_chain(lambda txs, options: geth_block_trace(txs[:1], options))
    failed = traced_chain(lambda txs, options: [{"txHash": tx.hash, "error": "execution timeout"} for tx in txs])
    for chain, reason in (
        (refusing, "debug_traceBlockByNumber of block 1: the method debug_traceBlockByNumber does not exist"),
        (shorter, f"debug_traceBlockByNumber of block 1 answered 1 transaction, without block 1 tx 2 ({RUN[0].hash})"),
        (failed, f"debug_traceBlockByNumber of block 1 has the error 'execution timeout' for block 1 tx 2 ({RUN[0].hash})"),
    ):
        written, told = traced_run(chain)
        assert written == OWN_SLOTS
        assert chain.calls.count("debug_traceBlockByNumber") <= 2 and chain.calls.count("debug_traceTransaction") == 6
        assert told[1:] == [(f"tracing transaction by transaction ({reason})", done, 3) for done in range(3)]
