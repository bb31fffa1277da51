"""
`compute_then_sload`: every transaction computes, then reads a run of cold slots from a shared cursor.

One contract keeps a cursor; each transaction loads it, runs an arithmetic
loop (`acc = acc * 3 + 7`, no state), then reads its run of consecutive
pre-filled slots from the cursor and stores the cursor past them. The reads
cannot start before the compute ends, and the cursor makes the block one
chain, so a client gains by loading the BAL's `storageReads` while the compute
runs. Variants set the compute's share of each read's gas (`compute_5pct` to
`compute_50pct`). As execution-specs'
`tests/benchmark/stateful/eip7928_block_level_access_lists/test_block_access_lists_compute_then_sload.py::test_bal_compute_then_sload`,
with the count of reads in calldata (the compute rounds per read in the code) rather than in
storage, so every fill level fills its gas.
"""

from __future__ import annotations

from itertools import accumulate

from ..ethereum.bytecode import (
    ADD, CALLDATALOAD, DUP1, ISZERO, JUMP, JUMPI, MUL, POP, PUSH0, SLOAD, SSTORE, STOP, SUB, SWAP1, Item, Label,
    PushLabel, assemble, push, push_fixed, static_gas,
)
from ..ethereum.forks import Fork
from ..model.workload import Regenerated, Workload, WorkloadParams
from ..model.family import Family
from .benchmark_calls import calls_to, checked_variant, fresh_sender_workload
from .counted_loop import CountedLoopGas, counted_capacity, counted_transactions, word
from .placement import place_contracts
from .schedule import block_size_note
from .slot_range import (
    BUILD, CURSOR_SLOT, DISPATCH, FIRST_SLOT, READ_LOOP, loop_exit_gas, range_accesses, read_iteration_gas,
    slot_range_contract,
)

VARIANTS = ("compute_5pct", "compute_10pct", "compute_25pct", "compute_50pct")



def prologue(rounds: int) -> list[Item]:
    """Stack: [acc = 1, count * `rounds` compute iterations, cursor]."""
    return [push(CURSOR_SLOT), SLOAD, PUSH0, CALLDATALOAD, push_fixed(rounds, 1), MUL, push(1)]


COMPUTE_HEAD: list[Item] = [Label("compute"), SWAP1, DUP1, ISZERO, PushLabel("computed"), JUMPI]
COMPUTE_BODY: list[Item] = [
    push(1), SWAP1, SUB, SWAP1,  # iterations -= 1
    push(3), MUL, push(7), ADD,  # acc = acc * 3 + 7
    PushLabel("compute"), JUMP,
]
COMPUTE_END: list[Item] = [Label("computed"), POP, POP, PUSH0, CALLDATALOAD]
"""Stack: [count, cursor], ready for the reads."""
STORE_CURSOR: list[Item] = [POP, push(CURSOR_SLOT), SSTORE, STOP]
"""The read loop leaves [0, cursor + count]: the cursor moves past the reads."""


def runtime(rounds: int) -> bytes:
    """The contract running `rounds` compute iterations per slot it reads."""
    return assemble(DISPATCH + prologue(rounds) + COMPUTE_HEAD + COMPUTE_BODY + COMPUTE_END + READ_LOOP + STORE_CURSOR + BUILD)


def compute_share(variant: str | None) -> int:
    """`compute_Npct` -> N."""
    return int(checked_variant("compute_then_sload", VARIANTS, variant).removeprefix("compute_").removesuffix("pct"))


def compute_iteration_gas() -> int:
    """One round of the compute loop."""
    return static_gas(COMPUTE_HEAD + COMPUTE_BODY)


def iterations_per_read(fork: Fork, share: int) -> int:
    """Compute rounds per cold read that give the compute `share` percent of their gas, to the nearest round."""
    return round(share * read_iteration_gas(fork) / ((100 - share) * compute_iteration_gas()))


def transaction_gas(fork: Fork, rounds: int) -> CountedLoopGas:
    """Gas of a transaction: the cursor load, `rounds` compute rounds and one cold read per unit, the cursor store."""
    return CountedLoopGas(
        prologue=static_gas(DISPATCH + prologue(rounds) + COMPUTE_HEAD + COMPUTE_END) + fork.gas.cold_sload,
        iteration=read_iteration_gas(fork) + rounds * compute_iteration_gas(),
        exit=loop_exit_gas(READ_LOOP) + static_gas(STORE_CURSOR) + fork.gas.sstore_update_warm,
    )


def compute_then_sload(params: WorkloadParams) -> Workload:
    """Compute, then a run of cold reads from the shared cursor, at `params`' gas value, fill level and variant."""
    fork = params.fork
    name = params.fixture_name("compute_then_sload")
    rounds = iterations_per_read(fork, compute_share(params.variant))

    def calldata(_index: int, units: int, _before: int) -> bytes:
        return word(units)

    planned = counted_transactions(fork, params.gas_benchmark_value, params.fill, transaction_gas(fork, rounds), calldata)
    counts = [tx.units for tx in planned]
    total = sum(counts)
    placed = place_contracts(name, [slot_range_contract(fork, "compute_then_sload", runtime(rounds), FIRST_SLOT, total)], params.placement, fork)
    (target,) = placed.addresses
    starts = list(accumulate(counts[:-1], initial=FIRST_SLOT))
    afters = [start + count for start, count in zip(starts, counts)]
    return fresh_sender_workload(
        "compute_then_sload",
        params,
        placed,
        calls_to(target, planned),
        Regenerated(len(planned), lambda: range_accesses(target, starts, counts, afters)),
        cold_reads=total,
        reads_per_tx=sorted(set(counts)),
        compute_rounds_per_read=rounds,
        **block_size_note(len(planned), counted_capacity(fork, calldata)),
    )


FAMILY = Family("compute_then_sload", compute_then_sload, VARIANTS, opt_in=True)
