"""
`bal_bound`: the largest block access list a block's gas can buy, every item read once and cold.

EIP-7928 bounds a block's access list at one item (an address, or a storage
key of one) per 2,000 gas of the block's gas limit (go-ethereum's
`params.BALItemCost`, execution-specs' `GAS_BLOCK_ACCESS_LIST_ITEM`): no
access is cheaper than that, so a block can only approach the bound. Every
transaction calls one reader contract that loops over distinct keys it has
never touched, each read once: variant `slots` reads empty storage slots of
its own (a cold SLOAD, 2,100 gas: 93% of the bound at greedy fill),
`accounts` hashes the code of absent accounts (a cold EXTCODEHASH, 3,000
gas on Amsterdam: 65%). Slot keys are full 32-byte numbers and addresses
20 bytes with no leading zero, so the list is as large in bytes as its
items allow. As execution-specs' max-SLOADs and max-accounts
benchmarks, but nothing need exist first: the reader is the only setup.
"""

from __future__ import annotations

from typing import Iterator, Sequence

from ..ethereum.bytecode import (
    ADD, CALLDATALOAD, CALLER, DUP1, DUP2, EXTCODEHASH, ISZERO, JUMP, JUMPI, POP, PUSH0, SHL, SLOAD, STOP, SUB, SWAP1, Item,
    Label, PushLabel, assemble, push, static_gas,
)
from ..ethereum.forks import Fork
from ..ethereum.keccak import keccak
from ..model.workload import Address, Regenerated, TxAccess, Workload, WorkloadParams
from ..model.family import Family
from .counted_loop import CountedLoopGas, counted_capacity, counted_transactions, word
from .benchmark_calls import calls_to, fresh_sender_workload, fresh_senders
from .placement import ContractSpec, place_contracts
from .schedule import block_size_note

VARIANTS = ("slots", "accounts")
ADDRESS_BITS = 160

SENDER_SHIFT = 32
"""Each sender's keys start at the workload's first key plus the sender's address shifted by this
many bits: 2^32 keys of room per sender, and one calldata word (the count), as few bytes as the
EIP-7623 floor allows a transaction of one read."""


def prologue(first: int) -> list[Item]:
    """Stack: [key, count]: the count from calldata, the key from the sender's address and the
    workload's first key, which the code holds."""
    return [PUSH0, CALLDATALOAD, CALLER, push(SENDER_SHIFT), SHL, push(first), ADD]


def sender_key(first: int, sender: Address) -> int:
    """The first key `sender`'s transaction reads."""
    return (first + (int.from_bytes(sender, "big") << SENDER_SHIFT)) % 2**256
LOOP_HEAD: list[Item] = [Label("loop"), DUP2, ISZERO, PushLabel("end"), JUMPI]
NEXT_KEY: list[Item] = [
    push(1), ADD,  # key += 1
    SWAP1, push(1), SWAP1, SUB, SWAP1,  # count -= 1
    PushLabel("loop"), JUMP,
]
END: list[Item] = [Label("end"), STOP]
READ: dict[str, list[Item]] = {
    "slots": [DUP1, SLOAD, POP],
    "accounts": [DUP1, EXTCODEHASH, POP],
}
"""Each variant's one read of the key on top of the stack."""


def runtime(variant: str, first: int) -> bytes:
    """The reader contract of `variant`: `count` reads of consecutive keys from `first` plus an offset."""
    return assemble(prologue(first) + LOOP_HEAD + READ[variant] + NEXT_KEY + END)


def read_loop_gas(fork: Fork, variant: str) -> CountedLoopGas:
    """Gas of the reader's loop: each key's cold read and the loop around it."""
    cold = fork.gas.cold_sload if variant == "slots" else fork.gas.cold_account_access
    return CountedLoopGas(
        prologue=static_gas(prologue(1)),  # any key: every PUSH1-PUSH32 costs the same
        iteration=static_gas(LOOP_HEAD + READ[variant] + NEXT_KEY) - static_gas(READ[variant][1:2]) + cold,
        exit=static_gas(LOOP_HEAD + END),
    )


def first_key(seed: str) -> int:
    """Where the keys start, before each sender's offset: a hash, with its low 32 bits clear so that
    a sender's run never carries into the next; its top byte set, so no slot key is short in the list's RLP."""
    digest = int.from_bytes(keccak(f"balgen/bal_bound/{seed}".encode()), "big")
    return (digest | (0xFF << 248)) & ~((1 << SENDER_SHIFT) - 1)


def read_accesses(
    reader: Address, variant: str, first: int, senders: Sequence[Address], units: Sequence[int]
) -> Iterator[TxAccess]:
    """Each transaction's designed accesses: its sender's run of keys, read and not written."""
    for sender_address, count in zip(senders, units):
        key = sender_key(first, sender_address)
        keys = range(key, key + count)
        if variant == "slots":
            yield TxAccess(reads=frozenset((reader, slot % 2**256) for slot in keys))
        else:
            yield TxAccess(touched=frozenset((k % 2**ADDRESS_BITS).to_bytes(20, "big") for k in keys))


def bal_bound(params: WorkloadParams) -> Workload:
    """The reads nearest EIP-7928's item bound at `params`' gas value, fill level and variant."""
    fork = params.fork
    variant = params.variant or VARIANTS[0]
    name = params.fixture_name("bal_bound")
    first = first_key(name)
    planned = counted_transactions(
        fork,
        params.gas_benchmark_value,
        params.fill,
        read_loop_gas(fork, variant),
        lambda _index, units, _before: word(units),
    )
    placed = place_contracts(name, [ContractSpec("reader", runtime(variant, first))], params.placement, fork)
    (reader,) = placed.addresses
    senders = [s.address for s in fresh_senders(name, len(planned))]
    units = [tx.units for tx in planned]
    reads = sum(units)
    # Every read key, the reader, each sender and the fee recipient: the system calls' few add to it.
    items = reads + 1 + len(senders) + 1
    bound = fork.max_bal_items(params.gas_benchmark_value)
    return fresh_sender_workload(
        "bal_bound",
        params,
        placed,
        calls_to(reader, planned),
        Regenerated(len(planned), lambda: read_accesses(reader, variant, first, senders, units)),
        cold_reads=reads,
        workload_items=items,
        item_bound=bound,
        **block_size_note(
            len(planned), counted_capacity(fork, lambda _index, units, _before: word(units))
        ),
    )


FAMILY = Family("bal_bound", bal_bound, variants=VARIANTS, opt_in=True, records_access_list=True)
