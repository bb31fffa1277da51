"""
Fill-time checks: the filled blocks behave the way the workload is designed to.

A benchmark is only worth running if its block does what its name promises,
so each fill verifies, from what t8n computed: every transaction succeeded,
the benchmark block used at least 95% of its gas value, every block's access
list is exactly the one the generator predicts (`predicted_bal`), and the
benchmark block's per-transaction accesses, traced, are the designed ones.
The protocol limits a client enforces are checked by name: the EIP-7825
per-transaction gas cap (before t8n runs), EIP-7934's maximum RLP block size
for every block, and EIP-7928's bound on access-list items for the benchmark
block at its gas value (the chain's own gas limit is far higher, but a client
running the block at its gas value enforces it). The first problem found is
reported in one line.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..analysis import (
    AccessSetsDiffer, DependencyGraph, TracedBlock, compared_with_model, model_access_sets, traced_block, traced_sets,
    tx_gas,
)
from ..analysis.tracer import blockhash_reads, touched_addresses
from ..chain.alloc import iter_alloc_among, iter_alloc_texts_among, state_diff, system_called_addresses
from ..chain.bal import access_list_addresses, item_count
from ..chain.builder import FEE_RECIPIENT, BuiltBlock, BuiltChain
from ..chain.header import has_block_access_list
from ..plumbing.errors import FillCheckFailed
from ..ethereum.forks import Fork
from .predicted_bal import first_difference_in_order, predicted_in_order
from ..chain.system_calls import system_accesses
from ..model.workload import BlockSpec, Workload

MIN_GAS_USED_FRACTION = 0.95


def check_transaction_gas_caps(workload: Workload) -> None:
    """Every transaction's gas limit is within the fork's per-transaction cap (EIP-7825)."""
    cap = workload.fork.max_tx_gas_limit
    if cap is None:
        return
    for number, spec in enumerate(workload.blocks, start=1):
        for index, tx in enumerate(spec.txs):
            if tx.gas_limit > cap:
                raise FillCheckFailed(
                    f"block {number}: transaction {index} has gas limit {tx.gas_limit}, "
                    f"over the EIP-7825 per-transaction cap of {cap}"
                )


def check_chain(workload: Workload, chain: BuiltChain) -> None:
    """Run every fill-time check on `chain`, raising on the first failure."""
    for spec, block in zip(workload.blocks, chain.blocks):
        check_transactions_succeeded(block, spec)
        check_block_size(workload.fork, block)
        if has_block_access_list(workload.fork):
            check_access_list(workload.fork, spec, block)
    check_gas_used(chain.blocks[-1], workload.gas_benchmark_value)
    check_access_list_items(workload.fork, chain.blocks[-1], workload.gas_benchmark_value)


def check_block_size(fork: Fork, block: BuiltBlock) -> None:
    """The block's RLP is within EIP-7934's maximum block size, which clients enforce on import."""
    if fork.max_block_rlp_size is None:
        return
    size = block.rlp_size
    if size > fork.max_block_rlp_size:
        raise FillCheckFailed(
            f"block {block.header.number}: RLP size {size} bytes exceeds "
            f"EIP-7934's maximum block size of {fork.max_block_rlp_size} bytes"
        )


def access_list_items(block: BuiltBlock) -> int:
    """EIP-7928's item count: every address plus every storage key written or read."""
    return item_count(block.access_list_accounts())


def check_access_list_items(fork: Fork, block: BuiltBlock, gas_limit: int) -> None:
    """The block's access list holds no more items than EIP-7928 allows in a block of `gas_limit`."""
    limit = fork.max_bal_items(gas_limit)
    if limit is None:
        return
    items = access_list_items(block)
    if items > limit:
        raise FillCheckFailed(
            f"block {block.header.number}: access list has {items} items, over EIP-7928's bound of {limit} "
            f"for a block of {gas_limit} gas (one item per {fork.bal_item_cost} gas)"
        )


def check_same_execution(fork: Fork, own: BuiltChain, shared: BuiltChain) -> None:
    """
    The same blocks on the shared group genesis executed exactly as on their own one.

    The own chain is checked against the design; this makes the engine_x
    fixtures inherit that proof at the cost of a comparison: same receipts and
    the same access lists, apart from the system calls' entries (the history
    contract stores a different parent hash).
    """
    for mine, theirs in zip(own.blocks, shared.blocks):
        number = mine.header.number
        if [_outcome(r) for r in mine.t8n.receipts] != [_outcome(r) for r in theirs.t8n.receipts]:
            raise FillCheckFailed(f"block {number}: receipts on the shared genesis differ from the own genesis")
        system = set(system_accesses(fork, mine.header)) | set(system_accesses(fork, theirs.header))
        if [e for e in mine.access_list_accounts() if e.address not in system] != [
            e for e in theirs.access_list_accounts() if e.address not in system
        ]:
            raise FillCheckFailed(f"block {number}: access list on the shared genesis differs from the own genesis")


@dataclass
class BlockTouches:
    """
    What the shared chain's proof (`genesis_dependence`) needs of one block's
    traces: every account its transactions touched, and the first one that
    asked BLOCKHASH or touched one of the contracts the fork's system calls run (`system`). Gathered
    from each trace as it is read (`observed_traces`), so that the benchmark
    block's traces, read for the traced check, are not read again for it.
    """

    system: frozenset[str]
    accounts: set[str] = field(default_factory=set)
    dependence: str | None = None
    """The first transaction's reason to depend on the genesis, e.g. `transaction 3 reads BLOCKHASH [0]`."""
    seen: int = 0
    """How many transactions' traces, from the first on, were gathered."""

    def add(self, trace: Mapping[str, Any]) -> None:
        """Gather the next transaction's trace."""
        index, self.seen = self.seen, self.seen + 1
        touched = touched_addresses(trace)
        if self.dependence is None:
            if asked := blockhash_reads(trace):
                self.dependence = f"transaction {index} reads BLOCKHASH {asked}"
            elif touched & self.system:
                self.dependence = f"transaction {index} touches system contract {min(touched & self.system)}"
        self.accounts |= touched


class ObservedTraces(Sequence[Any]):
    """A block's traces, each first read in order also gathered into `touches`."""

    def __init__(self, traces: Sequence[Any], touches: BlockTouches) -> None:
        self._traces, self._touches = traces, touches

    def __len__(self) -> int:
        return len(self._traces)

    def __getitem__(self, index: Any) -> Any:
        trace = self._traces[index]
        if index == self._touches.seen:
            self._touches.add(trace)
        return trace


def block_touches(traces: Sequence[Any], system: frozenset[str]) -> BlockTouches:
    """`BlockTouches` of a block's traces, read now."""
    touches = BlockTouches(system)
    for trace in traces:
        touches.add(trace)
    return touches


def genesis_dependence(
    fork: Fork, own: BuiltChain, other_genesis_alloc: Path, gathered: Mapping[int, BlockTouches] | None = None
) -> str | None:
    """
    Why the blocks of `own` might execute differently on the genesis allocation
    `other_genesis_alloc`, or None when they provably execute the same.

    A transaction's inputs are the state it touches, its block's header and
    BLOCKHASH. The headers agree but for the parent hash, which only the
    history system contract stores; so the blocks execute the same when no
    transaction asks BLOCKHASH or touches a contract the system calls run
    (a predeploy such as EIP-7997's proxy is state like any other), and every account
    a transaction touched (traced) or the block accessed (its access list) has
    the same genesis state in both allocations. `gathered` has, by block
    position, what an earlier check gathered of a block's traces as it read them.
    """
    system = system_called_addresses(fork)
    accessed: set[str] = set()
    for position, block in enumerate(own.blocks):
        number = block.header.number
        if len(block.t8n.traces) != len(block.txs):
            return f"block {number} was not traced"
        touches = (gathered or {}).get(position)
        if touches is None or touches.seen != len(block.txs):
            touches = block_touches(block.t8n.traces, system)
        if touches.dependence is not None:
            return f"block {number}: {touches.dependence}"
        accessed |= touches.accounts
        if block.block_access_list is not None:
            accessed.update("0x" + address.hex() for address in access_list_addresses(block.block_access_list))
    # Both genesis allocations are written sorted by address (`genesis_entries`, `alloc_json`), in one
    # spelling, so the accessed accounts are compared side by side as they are read: by their text,
    # and only those whose texts differ again as parsed JSON.
    suspects = {
        address
        for address, _ in state_diff(
            iter_alloc_texts_among(own.genesis_alloc_path, accessed), iter_alloc_texts_among(other_genesis_alloc, accessed), accessed
        )
    }
    own_state = iter_alloc_among(own.genesis_alloc_path, suspects)
    other_state = iter_alloc_among(other_genesis_alloc, suspects)
    differing = [address for address, _ in state_diff(own_state, other_state, suspects)] if suspects else []
    if differing:
        return f"accessed account {differing[0]} differs between the genesis states ({len(differing)} such accounts)"
    return None


def _outcome(receipt: dict) -> tuple[str, str]:
    return receipt.get("status", "0x0"), receipt.get("gasUsed", "0x0")


def benchmark_block_trace(workload: Workload, chain: BuiltChain) -> TracedBlock:
    """The access sets of `chain`'s benchmark block, traced in the t8n run that built it."""
    return traced_block(
        chain.blocks[-1].t8n,
        chain.alloc_path_before_last_block,
        FEE_RECIPIENT,
        label=f"{workload.name} traced benchmark block",
    )


def traced_dependency_graph(workload: Workload, chain: BuiltChain, touches: BlockTouches | None = None) -> DependencyGraph:
    """
    The benchmark block's dependency graph, after checking the design against a trace.

    A BAL records writes per transaction but reads only per block, so the
    per-transaction read sets a dependency graph needs are checked here: the
    traced read and write sets of every transaction must equal the model's.
    Both are made one transaction at a time, compared, and passed on to the
    graph, so a billion-gas block's sets are never held. `touches` gathers
    what the shared chain's proof needs of the traces as they are read.
    """
    result = chain.blocks[-1].t8n
    if touches is not None:
        result = replace(result, traces=ObservedTraces(result.traces, touches))
    traced = traced_sets(
        result, chain.alloc_path_before_last_block, FEE_RECIPIENT, label=f"{workload.name} traced benchmark block"
    )
    checked = compared_with_model(model_access_sets(workload.benchmark_block, FEE_RECIPIENT), traced)
    try:
        return DependencyGraph.from_access_sets(checked, tx_gas(result))
    except AccessSetsDiffer as difference:
        raise FillCheckFailed(f"benchmark block: traced accesses differ from the design: {difference}") from None


def check_transactions_succeeded(block: BuiltBlock, spec: BlockSpec) -> None:
    """Every transaction of the block was included and did not fail."""
    if block.t8n.rejected:
        first = block.t8n.rejected[0]
        raise FillCheckFailed(
            f"block {block.header.number}: transaction {first.get('index')} rejected: {first.get('error')}"
        )
    receipts = block.t8n.receipts
    if len(receipts) != len(spec.txs):
        raise FillCheckFailed(
            f"block {block.header.number}: {len(receipts)} receipts for {len(spec.txs)} transactions"
        )
    for index, receipt in enumerate(receipts):
        if int(receipt.get("status", "0x0"), 16) != 1:
            raise FillCheckFailed(
                f"block {block.header.number}: transaction {index} failed "
                f"(gas used {int(receipt['gasUsed'], 16)} of {spec.txs[index].gas_limit})"
            )


def check_gas_used(block: BuiltBlock, gas_benchmark_value: int) -> None:
    """The benchmark block used at least 95% of the gas value it is named after."""
    if block.header.gas_used < MIN_GAS_USED_FRACTION * gas_benchmark_value:
        raise FillCheckFailed(
            f"benchmark block used {block.header.gas_used} gas, "
            f"{block.header.gas_used / gas_benchmark_value:.1%} of the {gas_benchmark_value} gas value (needs 95%)"
        )


def check_access_list(fork: Fork, spec: BlockSpec, block: BuiltBlock) -> None:
    """
    The BAL t8n computed equals the predicted one, entry by entry (balance
    values aside), both walked in address order so that a billion-gas
    block's lists are never held whole.
    """
    with tempfile.TemporaryDirectory(prefix="balgen-predicted-bal-") as folder:
        difference = first_difference_in_order(
            predicted_in_order(fork, spec, block.header, Path(folder)), block.access_list_accounts()
        )
    if difference:
        raise FillCheckFailed(f"block {block.header.number}: access list differs from the design: {difference}")
