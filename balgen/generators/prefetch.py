"""
`prefetch`: a pointer chase through cold storage, whose keys only the access list reveals.

One contract holds a linked list in its storage, `storage[k_i] = k_(i+1)`
with `k_(i+1) = keccak(k_i)`, and a pointer slot (2^256-1) holding where the
chase stands. Every transaction loads the pointer, follows the list for its
count of steps (each a cold SLOAD whose key is the value just loaded) and
stores the pointer back. Execution cannot issue the next read before the
previous one returns, so a client gains only by reading the BAL's
`storageReads` up front, in parallel. The pointer makes the block one chain.
As execution-spec-tests' `test_prefetch_cold_storage`; the list is built in
genesis or by setup calls that run the same contract's build loop.
"""

from __future__ import annotations

from itertools import chain
from typing import Iterator, Sequence

from ..ethereum.keccak import keccak

from ..ethereum.bytecode import (
    CALLDATALOAD, DUP1, DUP2, ISZERO, JUMP, JUMPI, MSTORE, POP, PUSH0, SHA3, SLOAD, SSTORE, STOP, SUB, SWAP1,
    SWAP2, Item, Label, PushLabel, assemble, push, static_gas,
)
from ..ethereum.forks import Fork
from ..model.workload import Address, Regenerated, RegeneratedMapping, TxAccess, Workload, WorkloadParams
from ..model.family import Family
from .benchmark_calls import calls_to, fresh_sender_workload
from .counted_loop import CountedLoopGas, counted_capacity, counted_transactions, word
from .schedule import block_size_note
from .placement import ContractSpec, SetupCall, place_contracts, setup_call_gas, setup_calls

POINTER_SLOT = 2**256 - 1

COUNT_DOWN: list[Item] = [SWAP1, push(1), SWAP1, SUB, SWAP1]
"""[x, count] -> [x, count - 1]"""
DISPATCH: list[Item] = [push(32), CALLDATALOAD, DUP1, PushLabel("build"), JUMPI, POP]
"""A second calldata word (a list key) selects the build loop."""
CHASE_PROLOGUE: list[Item] = [PUSH0, CALLDATALOAD, push(POINTER_SLOT), SLOAD]
"""Stack: [pointer, steps]."""
CHASE_HEAD: list[Item] = [Label("chase"), DUP2, ISZERO, PushLabel("done"), JUMPI]
CHASE_BODY: list[Item] = [SLOAD, *COUNT_DOWN, PushLabel("chase"), JUMP]
CHASE_END: list[Item] = [Label("done"), push(POINTER_SLOT), SSTORE, STOP]
BUILD: list[Item] = [
    Label("build"), PUSH0, CALLDATALOAD, SWAP1,  # [key, count]
    Label("build_loop"), DUP2, ISZERO, PushLabel("built"), JUMPI,
    DUP1, PUSH0, MSTORE, push(32), PUSH0, SHA3,  # [next, key, count]
    DUP1, SWAP2, SSTORE,  # storage[key] = next
    *COUNT_DOWN, PushLabel("build_loop"), JUMP,
    Label("built"), STOP,
]
RUNTIME = assemble(DISPATCH + CHASE_PROLOGUE + CHASE_HEAD + CHASE_BODY + CHASE_END + BUILD)


def chase_gas(fork: Fork) -> CountedLoopGas:
    """Gas of a chase: the pointer load, one cold load per step, the pointer store."""
    gas = fork.gas
    return CountedLoopGas(
        prologue=static_gas(DISPATCH + CHASE_PROLOGUE) + gas.cold_sload,
        iteration=static_gas(CHASE_HEAD + CHASE_BODY) + gas.cold_sload,
        exit=static_gas(CHASE_HEAD + CHASE_END) + gas.sstore_update_warm,
    )


def build_step_gas(fork: Fork) -> int:
    """Execution gas of one build step (memory expansion is paid once, covered by the margin)."""
    loop_items = BUILD[4:-2]
    return static_gas(loop_items) + fork.gas.keccak_word + fork.gas.sstore_set_cold


def list_head(seed: str) -> int:
    """k_0, where the workload's linked list starts."""
    return int.from_bytes(keccak(f"balgen/prefetch/{seed}".encode()), "big")


LINKS_KEPT = 1 << 17
"""Links `list_links` keeps once hashed. A fill walks a list a dozen times (its setup, pre-state,
prediction, traces, fixtures); a 60M list (55,000 links) is then hashed once, and a billion-gas
one (465,000) is never all held: the kept links are dropped when they reach this many (about 20 MB)."""
_following: dict[int, int] = {}


def list_links(key: int, count: int) -> Iterator[tuple[int, int]]:
    """`count` links of the list from `key` on: (k_i, k_(i+1)) with k_(i+1) = keccak(k_i)."""
    for _ in range(count):
        following = _following.get(key)
        if following is None:
            following = int.from_bytes(keccak(key.to_bytes(32, "big")), "big")
            if len(_following) >= LINKS_KEPT:
                _following.clear()
            _following[key] = following
        yield key, following
        key = following


def list_keys(head: int, length: int) -> Iterator[int]:
    """k_0 .. k_length of the list starting at `head`, made one at a time."""
    yield head
    for _, key in list_links(head, length):
        yield key


def links_from(key: int, count: int) -> RegeneratedMapping[int, int]:
    """The slots `count` links write from `key` on (`storage[k_i] = k_(i+1)`), made again on every walk:
    at a billion gas the list is 465,000 links, which no setup pass needs to hold."""
    return RegeneratedMapping(count, lambda: list_links(key, count))


def build_calls(fork: Fork, head: int, steps: int) -> tuple[SetupCall, ...]:
    """Setup calls that build the `steps` links of the list from `head`, in chunks a transaction can hold."""
    step = build_step_gas(fork) + fork.gas.sstore_set_state
    keys = list_keys(head, steps)

    def build(chunk: list[int]) -> SetupCall:
        first = next(keys)
        for _ in range(len(chunk) - 1):
            next(keys)
        data = word(len(chunk)) + word(first)
        return SetupCall(data, setup_call_gas(fork, data, len(chunk), step), links_from(first, len(chunk)))

    return setup_calls(list(range(steps)), step, build)


def list_storage(head: int, steps: int) -> RegeneratedMapping[int, int]:
    """The contract's whole storage before the benchmark block: the list's links and the pointer at k_0."""
    return RegeneratedMapping(steps + 1, lambda: chain(list_links(head, steps), [(POINTER_SLOT, head)]))


def chase_accesses(target: Address, head: int, units: Sequence[int]) -> Iterator[TxAccess]:
    """Each chase's designed accesses: the `units` keys it reads, from where the pointer stands, and the pointer left after."""
    keys = list_keys(head, sum(units))
    key = next(keys)
    for count in units:
        reads = []
        for _ in range(count):
            reads.append((target, key))
            key = next(keys)
        yield TxAccess(reads=frozenset(reads), writes={(target, POINTER_SLOT): key})


def prefetch(params: WorkloadParams) -> Workload:
    """The pointer chase at `params`' gas value and fill level."""
    fork = params.fork
    name = params.fixture_name("prefetch")
    planned = counted_transactions(
        fork,
        params.gas_benchmark_value,
        params.fill,
        chase_gas(fork),
        lambda _index, units, _before: word(units),
    )
    steps = sum(tx.units for tx in planned)
    head = list_head(name)
    contract = ContractSpec("prefetch", RUNTIME, list_storage(head, steps), build_calls(fork, head, steps))
    placed = place_contracts(name, [contract], params.placement, fork)
    (target,) = placed.addresses
    units = [tx.units for tx in planned]
    # The designed reads are every key of the list: made again on each pass, not held.
    accesses = Regenerated(len(planned), lambda: chase_accesses(target, head, units))
    return fresh_sender_workload(
        "prefetch",
        params,
        placed,
        calls_to(target, planned),
        accesses,
        cold_reads=steps,
        steps_per_tx=sorted(set(units)),
        **block_size_note(len(planned), counted_capacity(fork, lambda _index, units, _before: word(units))),
    )


FAMILY = Family(
    "prefetch",
    prefetch,
    predicted_counts=(("reads.storage_slots", "cold_reads"),),
    lies_it_cannot_tell=frozenset(),
)
