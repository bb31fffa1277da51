"""
`coinbase_serialization`: every transaction reads the fee recipient's balance, which every fee before it changed.

Each transaction pays its priority fee to the coinbase, an implicit credit a
client applies after the transaction, and clients that execute in parallel
apply those credits in any order. Here every transaction's first opcodes ask
for the coinbase's balance (`BALANCE(COINBASE)`), an explicit read that
must see every credit before it: so every transaction depends on the one
before it through nothing but the fee credit, a chain no storage shows. The
balance seeds a keccak loop that burns the rest of the transaction's gas, so
the work after the read depends on it too. The contract names no address (it
asks the block for its coinbase), so the workload runs unchanged on a live
chain whatever its fee recipient. The serialization pattern of
execution-specs' coinbase tests (`tests/amsterdam/eip7928_block_level_access_lists/`
`test_block_access_lists.py`, the `BALANCE(COINBASE)` reporters of
`tests/amsterdam/eip8037_state_creation_gas_cost_increase/`) made into a
benchmark block: no stateful benchmark of execution-specs has one yet.
"""

from __future__ import annotations

from functools import cached_property

from ..ethereum.bytecode import BALANCE, COINBASE, MSTORE, PUSH0, STOP, Item, assemble, static_gas
from ..model.workload import Regenerated, TxAccess, Workload, WorkloadParams
from ..model.family import Family
from .benchmark_calls import BenchmarkCall, fresh_sender_workload
from .keccak_loop import KeccakLoop, reserve_for
from .placement import ContractSpec, place_contracts
from .schedule import block_size_note, calls_capacity, tx_schedule

READ_FEE_RECIPIENT: list[Item] = [COINBASE, BALANCE, PUSH0, MSTORE]
"""mem[0] = the coinbase's balance: every fee credited so far, the keccak loop's seed."""
END: list[Item] = [STOP]
READ = TxAccess(reads_fee_recipient=True)
"""Every transaction's designed access: the coinbase's balance, no storage."""


class CoinbaseReader:
    """The contract and its gas: the balance read, then a keccak loop down to the gas `END` needs."""

    def __init__(self, params: WorkloadParams) -> None:
        self.gas = params.fork.gas
        self.loop = KeccakLoop(reserve_for(static_gas(END), self.gas.keccak_word), self.gas.keccak_word)

    @cached_property
    def runtime(self) -> bytes:
        return assemble(READ_FEE_RECIPIENT + self.loop.items + END)

    def min_execution_gas(self) -> int:
        """The read (the coinbase is warm, EIP-3651), a word of memory, one round of the loop and the stop."""
        read = static_gas(READ_FEE_RECIPIENT) + self.gas.warm_sload + self.gas.memory_word
        return read + self.loop.minimum_entry_gas(static_gas(END))


def coinbase_serialization(params: WorkloadParams) -> Workload:
    """The coinbase-balance chain at `params`' gas value and fill level."""
    fork = params.fork
    name = params.fixture_name("coinbase_serialization")
    contract = CoinbaseReader(params)
    capacity = calls_capacity(fork, b"")
    schedule = tx_schedule(
        params.gas_benchmark_value,
        fork.intrinsic_gas(b"") + contract.min_execution_gas(),
        fork.tx_gas_cap(params.gas_benchmark_value),
        params.fill,
        capacity,
    )
    placed = place_contracts(name, [ContractSpec("coinbase_reader", contract.runtime)], params.placement, fork)
    (target,) = placed.addresses
    return fresh_sender_workload(
        "coinbase_serialization",
        params,
        placed,
        [BenchmarkCall(target, b"", gas) for gas in schedule],
        Regenerated(len(schedule), lambda: (READ for _ in range(len(schedule)))),
        tx_gas_limits=sorted(set(schedule)),
        loop_reserve=contract.loop.reserve,
        **block_size_note(len(schedule), capacity),
    )


FAMILY = Family("coinbase_serialization", coinbase_serialization, opt_in=True)
