"""
A contract that reads a run of consecutive storage slots from a cursor it keeps, and fills its own slots.

`compute_then_sload` and `prefetch_miss` both read, per transaction, `count`
consecutive slots of one contract starting at a cursor held in the contract's
`CURSOR_SLOT`, and both move the cursor, so every transaction depends on the
one before it. They differ in what comes before the reads (a compute loop, or
the new cursor written first) and in where the cursor goes, so this module
holds what they share: the read loop and its gas, the build loop that writes
the slots before the benchmark block (`storage[slot] = slot`, by setup calls
under `blocks` placement), and the accesses a run of reads makes.

Every runtime starts with `DISPATCH`: a third calldata word (a count of slots
to write) selects the build loop, which benchmark transactions (two words)
never reach.
"""

from __future__ import annotations

from itertools import chain
from typing import Iterator

from ..ethereum.bytecode import (
    ADD, CALLDATALOAD, DUP1, DUP2, ISZERO, JUMP, JUMPI, POP, SLOAD, SSTORE, STOP, SUB, SWAP1, Item, Label,
    PushLabel, push, static_gas,
)
from ..ethereum.forks import Fork
from ..model.workload import Address, RegeneratedMapping, TxAccess
from .counted_loop import word
from .placement import ContractSpec, SetupCall, setup_call_gas, setup_calls

CURSOR_SLOT = 2**256 - 1
"""Where the contract keeps the cursor: far from the slots it reads, which start at 1."""
FIRST_SLOT = 1
"""The first slot read, and the cursor's value before the block: never zero, so moving it is an update."""

DISPATCH: list[Item] = [push(64), CALLDATALOAD, PushLabel("build"), JUMPI]
"""A third calldata word selects the build loop."""


def slot_loop(name: str, body: list[Item]) -> list[Item]:
    """
    A loop over consecutive slots with stack [count, slot]: `body` runs
    `count` times with the stack as it found it, the slot growing by one.
    Falls through with [0, slot after the last].
    """
    return [
        Label(name), DUP1, ISZERO, PushLabel(f"{name}_done"), JUMPI,
        *body,
        SWAP1, push(1), ADD, SWAP1,  # slot += 1
        push(1), SWAP1, SUB,  # count -= 1
        PushLabel(name), JUMP,
        Label(f"{name}_done"),
    ]


READ_LOOP = slot_loop("read", [DUP2, SLOAD, POP])
"""[count, slot] -> reads storage[slot .. slot + count)."""
END: list[Item] = [STOP]
BUILD: list[Item] = [
    Label("build"), push(64), CALLDATALOAD, push(32), CALLDATALOAD,  # [count, first slot]
    *slot_loop("write", [DUP2, DUP1, SSTORE]),  # storage[slot] = slot
    STOP,
]


def loop_exit_gas(loop: list[Item]) -> int:
    """Gas of a `slot_loop`'s last check, the one that leaves it: its head and the label it jumps to."""
    return static_gas(loop[:5]) + static_gas(loop[-1:])


def read_iteration_gas(fork: Fork) -> int:
    """One cold read of `READ_LOOP`."""
    return static_gas(READ_LOOP[:-1]) + fork.gas.cold_sload


def write_step_gas(fork: Fork) -> int:
    """Gas of one build step: execution and state gas of setting a cold empty slot."""
    write_loop = BUILD[5:-1]
    return static_gas(write_loop[:-1]) + fork.gas.sstore_set_cold + fork.gas.sstore_set_state


def build_calls(fork: Fork, first: int, count: int) -> tuple[SetupCall, ...]:
    """Setup calls that write `storage[slot] = slot` over [first, first + count), in chunks a transaction holds."""
    step = write_step_gas(fork)

    def write(chunk: list[int]) -> SetupCall:
        data = bytes(32) + word(len(chunk)) + word(chunk[0])
        return SetupCall(data, setup_call_gas(fork, data, len(chunk), step), filled_slots(chunk[0], len(chunk)))

    return setup_calls(list(range(first, first + count)), step, write)


def filled_slots(first: int, count: int) -> RegeneratedMapping[int, int]:
    """`storage[slot] = slot` over [first, first + count), made again on every walk."""
    return RegeneratedMapping(count, lambda: ((slot, slot) for slot in range(first, first + count)))


def slot_range_contract(fork: Fork, role: str, runtime: bytes, first: int, count: int) -> ContractSpec:
    """The contract with its cursor at `FIRST_SLOT` and [first, first + count) filled (none when `count` is 0)."""
    if count == 0:
        return ContractSpec(role, runtime, {CURSOR_SLOT: FIRST_SLOT})
    storage = RegeneratedMapping(count + 1, lambda: chain(filled_slots(first, count).walk(), [(CURSOR_SLOT, FIRST_SLOT)]))
    return ContractSpec(role, runtime, storage, build_calls(fork, first, count))


def range_accesses(target: Address, starts: list[int], counts: list[int], cursors_after: list[int]) -> Iterator[TxAccess]:
    """Each transaction's designed access: its run of reads and the cursor it leaves."""
    for start, count, after in zip(starts, counts, cursors_after):
        reads = frozenset((target, slot) for slot in range(start, start + count))
        yield TxAccess(reads=reads, writes={(target, CURSOR_SLOT): after})
