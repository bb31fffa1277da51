"""
Chains of transactions on shared slots: one chain, or independent groups of chains.

`serial_chain` and `keccak_chain` are one chain (every transaction on one
contract's slot); `mixed_dep` splits the same transactions into groups, each
group a chain on a contract of its own, with the groups interleaved in the
block. They differ only in the contract and the group size, so the schedule,
the grouping, the senders and the placement are common and live here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterator

from ..ethereum.bytecode import Item, assemble
from ..model.keys import sender
from ..model.workload import Regenerated, TxAccess, TxSpec, Workload, WorkloadParams, benchmark_workload
from .keccak_loop import KeccakLoop
from .placement import ContractSpec, funded, place_contracts
from .schedule import block_size_note, calls_capacity, tx_schedule

SHARED_SLOT = 0
INITIAL_SLOT_VALUE = 1

NextSlotValue = Callable[[int, int], int]
"""(slot value before, the transaction's loop iterations) -> slot value after."""


@dataclass(frozen=True)
class ChainContract:
    """A chain family's contract: code before the loop, the loop, code after it."""

    before_loop: list[Item]
    loop: KeccakLoop
    after_loop: list[Item]
    gas_before_loop: int
    """Gas of `before_loop`, dynamic costs (storage, memory) included."""
    gas_after_loop: int
    """Gas of `after_loop`, dynamic costs included."""
    next_slot_value: NextSlotValue
    """What one transaction leaves in the shared slot."""

    @cached_property
    def runtime(self) -> bytes:
        """The contract's runtime code (asked for by every transaction that calls it)."""
        return assemble(self.before_loop + self.loop.items + self.after_loop)

    def min_execution_gas(self) -> int:
        """Least gas after intrinsic for one iteration and a successful finish."""
        return self.gas_before_loop + self.loop.minimum_entry_gas(self.gas_after_loop)

    def iterations(self, execution_gas: int) -> int:
        """Loop iterations a transaction with `execution_gas` runs."""
        return self.loop.iterations(execution_gas - self.gas_before_loop)


def group_sizes(tx_count: int, group_size: int | None) -> list[int]:
    """
    Sizes of the dependency groups of `tx_count` transactions.

    Full groups of `group_size`, then one group of the remainder; when fewer
    transactions than one group fit (group5 at greedy fill), they form a single
    smaller group rather than the combination being skipped.
    """
    if group_size is None or group_size >= tx_count:
        return [tx_count]
    full, remainder = divmod(tx_count, group_size)
    return [group_size] * full + ([remainder] if remainder else [])


def interleaved_order(sizes: list[int]) -> Iterator[tuple[int, int]]:
    """(group, position in group) in block order: g0.0, g1.0, ..., g0.1, g1.1, ..."""
    return ((group, position) for position in range(max(sizes)) for group, size in enumerate(sizes) if position < size)


def chain_workload(
    params: WorkloadParams, family: str, contract: ChainContract, group_size: int | None = None
) -> Workload:
    """
    Build a chain workload: every benchmark transaction calls its group's contract.

    `group_size` None makes the whole block one chain.
    """
    fork = params.fork
    name = params.fixture_name(family)
    intrinsic = fork.intrinsic_gas(b"")
    capacity = calls_capacity(fork, b"")
    schedule = tx_schedule(
        params.gas_benchmark_value,
        intrinsic + contract.min_execution_gas(),
        fork.tx_gas_cap(params.gas_benchmark_value),
        params.fill,
        capacity,
    )
    sizes = group_sizes(len(schedule), group_size)
    placed = place_contracts(
        name,
        [ContractSpec("chain", contract.runtime, {SHARED_SLOT: INITIAL_SLOT_VALUE}) for _ in sizes],
        params.placement,
        fork,
    )
    targets = placed.addresses
    senders = [sender(name, "sender", index).address for index in range(len(schedule))]

    def txs() -> Iterator[TxSpec]:
        for index, ((group, _), gas) in enumerate(zip(interleaved_order(sizes), schedule)):
            yield TxSpec(sender=sender(name, "sender", index), nonce=0, to=targets[group], data=b"", gas_limit=gas)

    def accesses() -> Iterator[TxAccess]:
        slot_values = [INITIAL_SLOT_VALUE] * len(sizes)
        for (group, _), gas in zip(interleaved_order(sizes), schedule):
            slot_values[group] = contract.next_slot_value(slot_values[group], contract.iterations(gas - intrinsic))
            yield TxAccess(writes={(targets[group], SHARED_SLOT): slot_values[group]})

    groups: dict[str, object] = {}
    if group_size is not None:
        groups = {
            "group_size": group_size,
            "effective_group_sizes": {str(size): count for size, count in sorted(Counter(sizes).items())},
        }
    return benchmark_workload(
        family,
        params,
        {**placed.pre, **funded(senders)},
        placed.setup_blocks,
        Regenerated(len(schedule), txs),
        Regenerated(len(schedule), accesses),
        tx_gas_limits=sorted(set(schedule)),
        loop_reserve=contract.loop.reserve,
        **groups,
        **block_size_note(len(schedule), capacity),
    )
