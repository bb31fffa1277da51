"""
Tracing a block's accesses with t8n, and a whole fixture's benchmark block.

`trace_block` is the one step the fill and `balgen inspect` share: run a
block's transactions under the access tracer on the block's pre-state and
turn the traces into access sets and per-transaction gas. `retrace` first
replays a fixture's earlier blocks untraced (checking each state root, so an
environment balgen cannot reproduce is caught there and not blamed on the
graph), then traces its benchmark block.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..chain.alloc import iter_alloc, write_alloc_entries
from ..chain.t8n import TransitionTool
from ..chain.tx_json import envelopes
from ..errors import BadInput
from .access import TxAccessSet
from .fixture_chain import FixtureChain
from .graph import DependencyGraph
from .tracer import ACCESS_TRACER, traced_access_sets


@dataclass(frozen=True)
class TracedBlock:
    """What tracing one block observed."""

    access_sets: tuple[TxAccessSet, ...]
    tx_gas: tuple[int, ...]
    """Gas used by each transaction, from its receipt."""

    @property
    def graph(self) -> DependencyGraph:
        return DependencyGraph.from_access_sets(self.access_sets, self.tx_gas)


def trace_block(
    t8n: TransitionTool,
    fork_name: str,
    alloc_path: Path,
    env: dict[str, Any],
    txs: Sequence[bytes],
    workdir: Path,
    *,
    label: str,
) -> TracedBlock:
    """
    Trace the block `env` + `txs` (signed envelopes) on the pre-state in `alloc_path`.

    `workdir` gets t8n's outputs of this tracing run, so it must not be the
    folder of the block's real run. Every transaction must be included.
    """
    # Balances, nonces and storage only: the code of a contract set's alloc is gigabytes.
    pre = {address: {k: v for k, v in account.items() if k != "code"} for address, account in iter_alloc(alloc_path)}
    result = t8n.transition_raw(fork_name, alloc_path, env, txs, workdir, label=label, tracer=ACCESS_TRACER)
    if result.rejected:
        first = result.rejected[0]
        raise BadInput(f"{label}: t8n rejected transaction {first.get('index')}: {first.get('error')}")
    coinbase = bytes.fromhex(env["currentCoinbase"].removeprefix("0x"))
    return TracedBlock(
        access_sets=tuple(traced_access_sets(result.traces, pre, coinbase)),
        tx_gas=tuple(int(receipt["gasUsed"], 16) for receipt in result.receipts),
    )


def retrace(t8n: TransitionTool, chain: FixtureChain, workdir: Path, *, label: str) -> TracedBlock:
    """Run `chain` up to its benchmark block from its pre-state, and trace that block."""
    workdir.mkdir(parents=True, exist_ok=True)
    alloc_path = workdir / "pre.json"
    write_alloc_entries(alloc_path, chain.pre.raw_accounts())
    hashes: dict[int, str] = {}
    for index, block in enumerate(chain.blocks[: chain.benchmark + 1]):
        hashes.setdefault(block.number - 1, block.parent_hash)
        env = {**block.env, "blockHashes": {str(number): value for number, value in hashes.items()}}
        block_label = f"{label}: block {block.number}"
        if index == chain.benchmark:
            return trace_block(t8n, chain.network, alloc_path, env, envelopes(block.txs_rlp), workdir / "traced", label=block_label)
        result = t8n.transition_raw(
            chain.network, alloc_path, env, envelopes(block.txs_rlp), workdir / f"block{index}", label=block_label
        )
        state_root = "0x" + result.state_root.hex()
        if state_root != block.state_root.lower():
            raise BadInput(
                f"{block_label}: t8n computes state root {state_root}, the fixture has {block.state_root} "
                f"(t8n {t8n.version()} cannot reproduce this block)"
            )
        alloc_path = result.alloc_path
        hashes[block.number] = block.hash
    raise AssertionError("the benchmark block is one of the chain's blocks")
