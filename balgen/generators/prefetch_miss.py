"""
`prefetch_miss`: every transaction reads cold slots from where its predecessor moved the cursor.

One contract keeps a cursor. Each transaction loads it, at once overwrites it
with the offset in its own calldata, then reads its run of consecutive cold
slots from the offset it loaded. A small first transaction reads nothing and
only moves the cursor, inside the benchmark block, past every run a
transaction could read from the cursor the block starts with; each following
transaction moves it past its own run. So a prefetcher that predicts a
transaction's reads from the state before the block (or from the transaction
alone) warms slots nobody reads, every time: only the BAL's `storageReads`
(or executing in order) gives the right ones. The block is one chain.
Variants read slots filled before the block (`existing_slots`) or empty ones
(`empty_slots`). As execution-specs'
`tests/benchmark/stateful/bloatnet/test_single_opcode.py::test_sload_bloated_prefetch_miss`
(PR #2657), with a contract rather than an EIP-7702-delegated account, a
count of reads in calldata rather than a gas threshold, and a sender per
transaction (its `distinct_senders`).
"""

from __future__ import annotations

from itertools import accumulate

from ..ethereum.bytecode import CALLDATALOAD, PUSH0, SLOAD, SSTORE, Item, assemble, push, static_gas
from ..ethereum.forks import Fork
from ..model.workload import Regenerated, Workload, WorkloadParams
from ..model.family import Family
from .benchmark_calls import BenchmarkCall, calls_to, checked_variant, fresh_sender_workload
from .counted_loop import CountedLoopGas, counted_capacity, counted_transactions, word
from .placement import place_contracts
from .schedule import block_size_note
from .slot_range import (
    BUILD, CURSOR_SLOT, DISPATCH, END, FIRST_SLOT, READ_LOOP, loop_exit_gas, range_accesses, read_iteration_gas,
    slot_range_contract,
)

VARIANTS = ("existing_slots", "empty_slots")

PROLOGUE: list[Item] = [
    push(CURSOR_SLOT), SLOAD,  # [offset this transaction reads from]
    push(32), CALLDATALOAD, push(CURSOR_SLOT), SSTORE,  # the next transaction's offset, from calldata
    PUSH0, CALLDATALOAD,  # [count, offset]
]
RUNTIME = assemble(DISPATCH + PROLOGUE + READ_LOOP + END + BUILD)


def transaction_gas(fork: Fork) -> CountedLoopGas:
    """The cursor's load and overwrite, one cold read per unit, the stop."""
    return CountedLoopGas(
        prologue=static_gas(DISPATCH + PROLOGUE) + fork.gas.cold_sload + fork.gas.sstore_update_warm,
        iteration=read_iteration_gas(fork),
        exit=loop_exit_gas(READ_LOOP) + static_gas(END),
    )


def most_reads(fork: Fork, gas_value: int) -> int:
    """More reads than one transaction can make under the per-transaction gas cap (its calldata priced
    at nothing): the first offset is this far past the block's starting cursor, so no run starts where
    the state before the block points."""
    loop = transaction_gas(fork)
    fixed = fork.intrinsic_gas(b"") + loop.prologue + loop.exit
    return (fork.tx_gas_cap(gas_value) - fixed) // loop.iteration


def prefetch_miss(params: WorkloadParams) -> Workload:
    """The moving-cursor reads at `params`' gas value and fill level, on filled or empty slots per the variant."""
    variant = checked_variant("prefetch_miss", VARIANTS, params.variant)
    fork = params.fork
    name = params.fixture_name("prefetch_miss")
    loop = transaction_gas(fork)
    first_offset = FIRST_SLOT + most_reads(fork, params.gas_benchmark_value)
    plant_data = word(0) + word(first_offset)
    plant_gas = fork.intrinsic_gas(plant_data) + loop.execution_gas(0)

    def calldata(_index: int, units: int, before: int) -> bytes:
        return word(units) + word(first_offset + before + units)

    planned = counted_transactions(fork, params.gas_benchmark_value - plant_gas, params.fill, loop, calldata)
    counts = [0, *(tx.units for tx in planned)]
    total = sum(counts)
    filled = total if variant == "existing_slots" else 0
    contract = slot_range_contract(fork, "prefetch_miss", RUNTIME, first_offset, filled)
    placed = place_contracts(name, [contract], params.placement, fork)
    (target,) = placed.addresses
    calls = [BenchmarkCall(target, plant_data, plant_gas), *calls_to(target, planned)]
    starts = [FIRST_SLOT, *accumulate(counts[1:-1], initial=first_offset)]
    afters = list(accumulate(counts[1:], initial=first_offset))
    return fresh_sender_workload(
        "prefetch_miss",
        params,
        placed,
        calls,
        Regenerated(len(calls), lambda: range_accesses(target, starts, counts, afters)),
        cold_reads=total,
        reads_per_tx=sorted(set(counts[1:])),
        first_offset=first_offset,
        slots_filled=filled,
        **block_size_note(len(calls), counted_capacity(fork, calldata)),
    )


FAMILY = Family("prefetch_miss", prefetch_miss, VARIANTS, opt_in=True)
