"""
Shared shape of the chain families: one contract, one slot, every transaction on it.

`serial_chain` and `keccak_chain` differ only in where the shared-slot access
sits in each transaction (first or last); the schedule, the senders and the
placement are common and live here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..bytecode import Item, assemble
from ..keys import sender
from ..workload import BlockSpec, Phase, TxAccess, TxSpec, Workload, WorkloadParams, fixture_name
from .keccak_loop import KeccakLoop
from .placement import ContractSpec, funded, place_contracts
from .schedule import tx_schedule

SHARED_SLOT = 0
INITIAL_SLOT_VALUE = 1


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

    @property
    def runtime(self) -> bytes:
        """The contract's runtime code."""
        return assemble(self.before_loop + self.loop.items + self.after_loop)

    def min_execution_gas(self) -> int:
        """Least gas after intrinsic for one iteration and a successful finish."""
        return self.gas_before_loop + self.loop.minimum_entry_gas(self.gas_after_loop)

    def iterations(self, execution_gas: int) -> int:
        """Loop iterations a transaction with `execution_gas` runs."""
        return self.loop.iterations(execution_gas - self.gas_before_loop)


def chain_workload(
    params: WorkloadParams,
    family: str,
    contract: ChainContract,
    slot_value_after: Callable[[int, int], int | None],
) -> Workload:
    """
    Build a chain workload: every benchmark transaction calls `contract`.

    `slot_value_after(index, execution_gas)` gives the shared slot's value after
    transaction `index`, or None where only execution can tell.
    """
    fork = params.fork
    name = fixture_name(family, params.fill, params.variant, params.gas_benchmark_value)
    placed = place_contracts(
        name,
        [ContractSpec("chain", contract.runtime, {SHARED_SLOT: INITIAL_SLOT_VALUE})],
        params.placement,
        fork,
    )
    (target,) = placed.addresses
    intrinsic = fork.intrinsic_gas(b"")
    schedule = tx_schedule(
        params.gas_benchmark_value,
        intrinsic + contract.min_execution_gas(),
        fork.tx_gas_cap(params.gas_benchmark_value),
        params.fill,
    )
    senders = [sender(name, "sender", index) for index in range(len(schedule))]
    txs = tuple(
        TxSpec(sender=s, nonce=0, to=target, data=b"", gas_limit=gas)
        for s, gas in zip(senders, schedule)
    )
    accesses = tuple(
        TxAccess(writes={(target, SHARED_SLOT): slot_value_after(index, gas - intrinsic)})
        for index, gas in enumerate(schedule)
    )
    return Workload(
        family=family,
        fill=params.fill,
        variant=params.variant,
        gas_benchmark_value=params.gas_benchmark_value,
        fork=fork,
        pre={**placed.pre, **funded(senders)},
        setup_blocks=placed.setup_blocks,
        benchmark_block=BlockSpec(phase=Phase.TESTING, txs=txs, accesses=accesses),
        parameters={
            "family": family,
            "fill": params.fill.value,
            "variant": params.variant,
            "gas_benchmark_value": params.gas_benchmark_value,
            "placement": params.placement.value,
            "tx_count": len(txs),
            "tx_gas_limits": sorted(set(schedule)),
            "loop_reserve": contract.loop.reserve,
        },
    )
