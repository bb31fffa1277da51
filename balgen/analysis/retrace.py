"""
Tracing a block's accesses with t8n, and a whole fixture's benchmark block.

`traced_block` is the one step the fill and `balgen inspect` share: turn the
access tracer's results of a block's t8n run into access sets and
per-transaction gas. `trace_block` runs a block under the tracer. `retrace` first
replays a fixture's earlier blocks untraced (checking each state root, so an
environment balgen cannot reproduce is caught there and not blamed on the
graph), then traces its benchmark block.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..chain.alloc import iter_alloc_packing, write_alloc_entries
from ..chain.t8n import T8nResult, TransitionTool
from ..chain.tx_json import envelopes
from ..plumbing.errors import BadInput
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
    Run the block `env` + `txs` (signed envelopes) on the pre-state in `alloc_path` under the access tracer.

    Every transaction must be included.
    """
    result = t8n.transition_raw(fork_name, alloc_path, env, txs, workdir, label=label, tracer=ACCESS_TRACER)
    if result.rejected:
        first = result.rejected[0]
        raise BadInput(f"{label}: t8n rejected transaction {first.get('index')}: {first.get('error')}")
    return traced_block(result, alloc_path, bytes.fromhex(env["currentCoinbase"].removeprefix("0x")), label=label)


def traced_block(result: T8nResult, alloc_path: Path, coinbase: bytes, *, label: str) -> TracedBlock:
    """What the access tracer saw in the t8n run `result` of a block applied to the state in `alloc_path`."""
    return TracedBlock(access_sets=tuple(traced_sets(result, alloc_path, coinbase, label=label)), tx_gas=tx_gas(result))


def traced_sets(result: T8nResult, alloc_path: Path, coinbase: bytes, *, label: str) -> Iterator[TxAccessSet]:
    """The access set of each transaction the tracer saw in `result`, made one at a time as its trace is read."""
    if len(result.traces) != len(result.receipts):
        raise BadInput(f"{label}: t8n ran without the access tracer")
    # Read one account at a time, `PreState` keeping balances, nonces and storage only: the code of a
    # contract set's alloc is gigabytes, a prefetch list's storage hundreds of thousands of slots (held packed).
    return traced_access_sets(result.traces, iter_alloc_packing(alloc_path), coinbase)


def tx_gas(result: T8nResult) -> tuple[int, ...]:
    """Gas used by each transaction of a t8n run, from its receipts."""
    return tuple(int(receipt["gasUsed"], 16) for receipt in result.receipts)


def retrace(t8n: TransitionTool, chain: FixtureChain, workdir: Path, *, label: str) -> TracedBlock:
    """Run `chain` up to its benchmark block from its pre-state, and trace that block."""
    workdir.mkdir(parents=True, exist_ok=True)
    alloc_path = workdir / "pre.json"
    write_alloc_entries(alloc_path, chain.pre.checked_raw_accounts(label))
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
