"""
`state_root`: disjoint storage writes, so execution parallelises and the state root dominates.

Every transaction overwrites its own run of pre-existing storage slots (value
1 -> 2^256-1, the heaviest RLP change) counting down from 2^256-1, and no two
transactions touch a common slot. Variant `single_contract` puts every run in
one contract (one deep storage trie to rehash); `contract_per_tx` gives each
transaction a contract of its own (a wide account trie, many small storage
tries). As execution-spec-tests' `test_state_root_computation`; the slots are
pre-populated (in genesis, or by setup calls to the same contract), so the
benchmark block grows no state.
"""

from __future__ import annotations

from ..ethereum.bytecode import (
    CALLDATALOAD, DUP2, DUP3, ISZERO, JUMP, JUMPI, PUSH0, SSTORE, STOP, SUB, SWAP1, Item, Label, PushLabel,
    assemble, push, static_gas,
)
from ..ethereum.forks import Fork
from ..model.workload import TxAccess, Workload, WorkloadParams
from ..model.family import Family
from ..model.invalid_access_list import Corruption
from .benchmark_calls import BenchmarkCall, checked_variant, fresh_sender_workload
from .counted_loop import CountedLoopGas, counted_capacity, counted_transactions, word
from .schedule import block_size_note
from .placement import ContractSpec, SetupCall, place_contracts, setup_calls

VARIANTS = ("single_contract", "contract_per_tx")
TOP_SLOT = 2**256 - 1
PRE_VALUE = 1
WRITTEN_VALUE = 2**256 - 1
INIT_CODE_SLOTS = 64
"""Contracts with at most this many slots get them from their init code, the rest by setup calls."""

PROLOGUE: list[Item] = [push(64), CALLDATALOAD, push(32), CALLDATALOAD, PUSH0, CALLDATALOAD]
"""Stack: [slot, count, value] from calldata (start slot, count, value)."""
LOOP_HEAD: list[Item] = [Label("loop"), DUP2, ISZERO, PushLabel("end"), JUMPI]
LOOP_BODY: list[Item] = [
    DUP3, DUP2, SSTORE,  # storage[slot] = value
    push(1), SWAP1, SUB,  # slot -= 1
    SWAP1, push(1), SWAP1, SUB, SWAP1,  # count -= 1
    PushLabel("loop"), JUMP,
]
END: list[Item] = [Label("end"), STOP]
RUNTIME = assemble(PROLOGUE + LOOP_HEAD + LOOP_BODY + END)


def write_loop_gas(fork: Fork, sstore: int) -> CountedLoopGas:
    """Gas of the write loop when each SSTORE costs `sstore`."""
    return CountedLoopGas(
        prologue=static_gas(PROLOGUE),
        iteration=static_gas(LOOP_HEAD + LOOP_BODY) + sstore,
        exit=static_gas(LOOP_HEAD + END),
    )


def populate_calls(fork: Fork, slots: list[int]) -> tuple[SetupCall, ...]:
    """Setup calls that write PRE_VALUE into descending runs of `slots`, in chunks a transaction can hold."""
    gas = fork.gas
    loop = write_loop_gas(fork, gas.sstore_set_cold)

    def write(chunk: list[int]) -> SetupCall:
        data = word(chunk[0]) + word(len(chunk)) + word(PRE_VALUE)
        limit = fork.intrinsic_gas(data) + loop.execution_gas(len(chunk)) + len(chunk) * gas.sstore_set_state
        return SetupCall(data, limit, {slot: PRE_VALUE for slot in chunk})

    return setup_calls(slots, loop.iteration + gas.sstore_set_state, write)


def contract_with_slots(fork: Fork, slots: list[int]) -> ContractSpec:
    """The write contract with `slots` pre-populated."""
    storage = {slot: PRE_VALUE for slot in slots}
    if len(slots) <= INIT_CODE_SLOTS:
        return ContractSpec("state_root", RUNTIME, storage)
    return ContractSpec("state_root", RUNTIME, storage, populate_calls(fork, slots))


def state_root(params: WorkloadParams) -> Workload:
    """Disjoint slot overwrites at `params`' gas value and fill level, per the variant."""
    per_tx = checked_variant("state_root", VARIANTS, params.variant) == "contract_per_tx"
    fork = params.fork
    name = params.fixture_name("state_root")

    def calldata(_index: int, units: int, units_before: int) -> bytes:
        start = TOP_SLOT if per_tx else TOP_SLOT - units_before
        return word(start) + word(units) + word(WRITTEN_VALUE)

    loop = write_loop_gas(fork, fork.gas.sstore_update_cold)
    planned = counted_transactions(fork, params.gas_benchmark_value, params.fill, loop, calldata)
    runs = [_slots_written(tx.data) for tx in planned]
    if per_tx:
        contracts = [contract_with_slots(fork, run) for run in runs]
    else:
        contracts = [contract_with_slots(fork, [slot for run in runs for slot in run])]
    placed = place_contracts(name, contracts, params.placement, fork)
    calls = []
    accesses = []
    for index, (tx, run) in enumerate(zip(planned, runs)):
        target = placed.addresses[index if per_tx else 0]
        calls.append(BenchmarkCall(target, tx.data, tx.gas_limit))
        accesses.append(TxAccess(writes={(target, slot): WRITTEN_VALUE for slot in run}))
    return fresh_sender_workload(
        "state_root",
        params,
        placed,
        calls,
        accesses,
        contracts=len(contracts),
        slots_written=sum(len(run) for run in runs),
        slots_per_tx=sorted({len(run) for run in runs}),
        **block_size_note(len(planned), counted_capacity(fork, calldata)),
    )


def _slots_written(data: bytes) -> list[int]:
    """The descending run of slots a call with `data` writes."""
    start = int.from_bytes(data[:32], "big")
    count = int.from_bytes(data[32:64], "big")
    return [start - offset for offset in range(count)]


FAMILY = Family(
    "state_root",
    state_root,
    VARIANTS,
    predicted_counts=(("writes.storage_slots", "slots_written"),),
    # Every slot it reads, it writes: an access list cannot miss a read of it.
    lies_it_cannot_tell=frozenset({Corruption.MISSING_READ}),
)
