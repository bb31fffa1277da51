"""
`cross_contract_chase`: a dispatcher calls chains of contracts, each learning the next from its storage, up to 100 deep.

Every transaction calls one dispatcher, which reads its cursor, then for each
of the transaction's chains loads the chain's entry address from its own
storage and calls it; each contract of a chain reads the next one's address
from its slot 0 and calls it with all its gas, the last one finding zero. So
every hop is a cold account whose address only the storage read before it
reveals, nested up to 100 calls deep: executed in order, each account waits
for the read before it, while the BAL lists every one of them up front. The
dispatcher then moves its cursor past the chains it ran, which makes the block
one chain, and burns the gas the calls kept back (each call keeps 1/64 of
what it forwards, so a 100-deep chain needs about 2.4 times the gas it uses
while it runs) in a keccak loop. As execution-specs'
`tests/benchmark/stateful/eip7928_block_level_access_lists/test_block_access_lists_cross_contract_chase.py::test_bal_cross_contract_chase`,
with as many chains per transaction as its gas holds (execution-specs calls one
and leaves the rest of the gas unused), the chains 100 deep where a transaction
holds one that deep and as deep as fits where it does not (`chain_depth` in
`_info`). Every contract is deployed through the deterministic deployment proxy,
so the addresses the contracts keep in their storage are the same on every
chain, and the spamoor export runs it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import Iterator

from ..ethereum.bytecode import (
    ADD, CALL, CALLDATALOAD, DUP1, DUP2, DUP3, DUP6, GAS, ISZERO, JUMP, JUMPI, POP, PUSH0, SLOAD, SSTORE, STOP, SUB,
    SWAP1, SWAP2, Item, Label, PushLabel, assemble, push, static_gas,
)
from ..ethereum.forks import Fork
from ..ethereum.keccak import keccak
from ..model.workload import Address, Regenerated, TxAccess, Workload, WorkloadParams
from ..model.family import Family
from .benchmark_calls import BenchmarkCall, fresh_sender_workload
from .counted_loop import word
from .deterministic_deployment import deterministic_address
from .keccak_loop import KeccakLoop, reserve_for
from .placement import ContractSpec, SetupCall, place_contracts, setup_call_gas, setup_calls
from .schedule import block_size_note, calls_capacity, tx_schedule
from .slot_range import CURSOR_SLOT, DISPATCH, FIRST_SLOT, loop_exit_gas, slot_loop

MAX_CALL_DEPTH = 100
"""The deepest chain, as execution-specs' `MAX_CALL_DEPTH`."""
NEXT_SLOT = 0
"""Where a chain contract keeps the next one's address."""
GAS_MARGIN_PERCENT = 5
"""Headroom on the calls' estimated gas: what a chain does not use, the keccak loop burns."""

CALL_WITH_ALL_GAS: list[Item] = [PUSH0, PUSH0, PUSH0, PUSH0, PUSH0, DUP6, GAS, CALL, POP]
"""CALL(GAS, the address under five zeros, no value, no data), its result dropped."""
HOP: list[Item] = [
    push(NEXT_SLOT), SLOAD, DUP1, ISZERO, PushLabel("last"), JUMPI,
    *CALL_WITH_ALL_GAS,
    Label("last"), STOP,
]
"""A chain contract: call the address in slot 0, unless it is zero."""
HOP_RUNTIME = assemble(HOP)

CHASE_PROLOGUE: list[Item] = [push(CURSOR_SLOT), SLOAD, PUSH0, CALLDATALOAD]
"""Stack: [chains, cursor]."""
CHASE_LOOP = slot_loop("chase", [DUP2, SLOAD, *CALL_WITH_ALL_GAS, POP])
"""[chains, cursor] -> calls the entry in storage[cursor .. cursor + chains)."""
STORE_CURSOR: list[Item] = [POP, push(CURSOR_SLOT), SSTORE]
"""The chase loop leaves [0, cursor + chains]: the cursor moves past the chains run."""
END: list[Item] = [STOP]
ENTRIES: list[Item] = [
    Label("build"), push(64), push(32), CALLDATALOAD, PUSH0, CALLDATALOAD,  # [count, first slot, word offset]
    Label("entry"), DUP1, ISZERO, PushLabel("entries_done"), JUMPI,
    DUP3, CALLDATALOAD, DUP3, SSTORE,  # storage[slot] = the next calldata word
    SWAP2, push(32), ADD, SWAP2,  # word offset += 32
    SWAP1, push(1), ADD, SWAP1,  # slot += 1
    push(1), SWAP1, SUB,  # count -= 1
    PushLabel("entry"), JUMP,
    Label("entries_done"), STOP,
]
"""Setup: storage[first + i] = calldata word 2 + i for i < count (word 2, an address, selects it)."""
INIT_CODE_ENTRIES = 64
"""A dispatcher with at most this many entries gets them from its init code, more by setup calls."""


def burn_loop(fork: Fork) -> KeccakLoop:
    """The keccak loop that burns what the chains left, down to the gas of `END`."""
    return KeccakLoop(reserve_for(static_gas(END), fork.gas.keccak_word), fork.gas.keccak_word)


def with_margin(gas: int) -> int:
    """`gas` and `GAS_MARGIN_PERCENT` more."""
    return gas + gas * GAS_MARGIN_PERCENT // 100


def forwarded(needed: int) -> int:
    """Gas a caller must hold after a call's own cost for the callee to get `needed` (it keeps 1/64, EIP-150)."""
    return -(-needed * 64 // 63)


@dataclass(frozen=True)
class ChaseGas:
    """Gas facts of the dispatcher and its chains at one fork and chain depth."""

    fork: Fork
    depth: int

    @property
    def loop(self) -> KeccakLoop:
        return burn_loop(self.fork)

    def hop(self) -> int:
        """A chain contract that calls the next: its read, its cold call."""
        return static_gas(HOP) + self.fork.gas.cold_sload + self.fork.gas.cold_account_access

    def last_hop(self) -> int:
        """The last chain contract: its read of an empty slot, then stop."""
        return static_gas(HOP[:6] + HOP[-2:]) + self.fork.gas.cold_sload

    def chain_needs(self) -> int:
        """Gas the first contract of a chain must be called with for the whole chain to run."""
        needed = self.last_hop()
        for _ in range(self.depth - 1):
            needed = self.hop() + forwarded(needed)
        return needed

    def chain_uses(self) -> int:
        """Gas a chain uses."""
        return (self.depth - 1) * self.hop() + self.last_hop()

    def iteration(self) -> int:
        """The dispatcher's part of one chain: the loop, the entry's read, the cold call."""
        return static_gas(CHASE_LOOP[:-1]) + self.fork.gas.cold_sload + self.fork.gas.cold_account_access

    def uses_per_chain(self) -> int:
        """Gas one chain costs the transaction, with the margin."""
        return with_margin(self.iteration() + self.chain_uses())

    def prologue(self) -> int:
        return static_gas(DISPATCH + CHASE_PROLOGUE) + self.fork.gas.cold_sload

    def after_chase(self) -> int:
        """The loop's exit, the cursor's store, the keccak loop's memory and one round, the stop."""
        gas = self.fork.gas
        return (
            loop_exit_gas(CHASE_LOOP) + static_gas(STORE_CURSOR) + gas.sstore_update_warm + gas.memory_word
            + self.loop.minimum_entry_gas(static_gas(END))
        )

    def last_chain_needs(self) -> int:
        """Gas the transaction must hold when its last chain starts: enough for the chain's deepest call, and
        for what comes after it."""
        peak = with_margin(self.iteration() + forwarded(self.chain_needs()))
        return max(peak, self.uses_per_chain() + self.after_chase())

    def least_gas(self, chains: int) -> int:
        """Execution gas of a transaction running `chains` chains (at least one)."""
        return self.prologue() + (chains - 1) * self.uses_per_chain() + self.last_chain_needs()

    def chains_in(self, execution_gas: int) -> int:
        """The most chains a transaction with `execution_gas` runs (at least one)."""
        return 1 + max(0, (execution_gas - self.least_gas(1)) // self.uses_per_chain())


def chain_depth(fork: Fork, gas_value: int) -> int:
    """`MAX_CALL_DEPTH`, or the deepest chain one transaction can run within the gas value and the cap."""
    room = min(gas_value, fork.tx_gas_cap(gas_value)) - fork.intrinsic_gas(word(1))
    for depth in range(MAX_CALL_DEPTH, 0, -1):
        if ChaseGas(fork, depth).least_gas(1) <= room:
            return depth
    return 1


def dispatcher_runtime(fork: Fork) -> bytes:
    """The dispatcher: its chase, the cursor's store, the burn; the entry table's setup path after."""
    return assemble(DISPATCH + CHASE_PROLOGUE + CHASE_LOOP + STORE_CURSOR + burn_loop(fork).items + END + ENTRIES)


def salt(name: str, role: str) -> bytes:
    """The proxy salt of one contract of the workload `name`."""
    return keccak(f"balgen/cross_contract_chase/{name}/{role}".encode())


def chain_contracts(name: str, chain: int, depth: int) -> tuple[list[ContractSpec], Address]:
    """Chain `chain`'s contracts, entry first, and the entry's address: each keeps the next one's address
    in `NEXT_SLOT`, the last nothing. Their proxy addresses follow from their storage, so they are made
    from the last back."""
    contracts: list[ContractSpec] = []
    following: Address | None = None
    for hop in reversed(range(depth)):
        storage = {} if following is None else {NEXT_SLOT: int.from_bytes(following, "big")}
        hop_salt = salt(name, f"chain{chain}/hop{hop}")
        contracts.append(ContractSpec("chain", HOP_RUNTIME, storage, deterministic_salt=hop_salt))
        following = deterministic_address(hop_salt, HOP_RUNTIME, storage)
    assert following is not None  # depth >= 1
    return contracts[::-1], following


def entry_step_gas(fork: Fork) -> int:
    """One entry a setup call writes: the loop, its calldata word, setting a cold empty slot."""
    calldata_word = fork.intrinsic_gas(bytes([0xFF]) * 32) - fork.intrinsic_gas(b"")
    loop = ENTRIES[6:-2]
    return static_gas(loop) + calldata_word + fork.gas.sstore_set_cold + fork.gas.sstore_set_state


def entry_calls(fork: Fork, entries: list[Address]) -> tuple[SetupCall, ...]:
    """Setup calls writing the entry table, in chunks a transaction holds."""
    step = entry_step_gas(fork)

    def write(chunk: list[int]) -> SetupCall:
        first = FIRST_SLOT + chunk[0]
        values = [int.from_bytes(entries[index], "big") for index in chunk]
        data = word(len(chunk)) + word(first) + b"".join(word(value) for value in values)
        writes = {first + offset: value for offset, value in enumerate(values)}
        return SetupCall(data, setup_call_gas(fork, data, len(chunk), step), writes)

    return setup_calls(list(range(len(entries))), step, write)


def dispatcher_contract(fork: Fork, name: str, entries: list[Address]) -> ContractSpec:
    """The dispatcher: its cursor at the first entry, the entry table by init code or setup calls."""
    table = {FIRST_SLOT + index: int.from_bytes(entry, "big") for index, entry in enumerate(entries)}
    storage = {**table, CURSOR_SLOT: FIRST_SLOT}
    calls = entry_calls(fork, entries) if len(entries) > INIT_CODE_ENTRIES else ()
    return ContractSpec("dispatcher", dispatcher_runtime(fork), storage, calls, deterministic_salt=salt(name, "dispatcher"))


def chase_accesses(
    dispatcher: Address, chains: list[list[Address]], per_tx: list[int]
) -> Iterator[TxAccess]:
    """Each transaction's designed access: its entries and every hop's slot read, the cursor moved past them."""
    for first, count in zip(accumulate(per_tx[:-1], initial=0), per_tx):
        reads = {(dispatcher, FIRST_SLOT + index) for index in range(first, first + count)}
        reads |= {(hop, NEXT_SLOT) for chain in chains[first : first + count] for hop in chain}
        yield TxAccess(reads=frozenset(reads), writes={(dispatcher, CURSOR_SLOT): FIRST_SLOT + first + count})


def cross_contract_chase(params: WorkloadParams) -> Workload:
    """Chains of calls through cold contracts, up to 100 deep, at `params`' gas value and fill level."""
    fork = params.fork
    name = params.fixture_name("cross_contract_chase")
    depth = chain_depth(fork, params.gas_benchmark_value)
    chase = ChaseGas(fork, depth)
    intrinsic = fork.intrinsic_gas(word(1))
    capacity = calls_capacity(fork, word(1))
    schedule = tx_schedule(
        params.gas_benchmark_value, intrinsic + chase.least_gas(1), fork.tx_gas_cap(params.gas_benchmark_value),
        params.fill, capacity,
    )
    per_tx = [chase.chains_in(gas - intrinsic) for gas in schedule]
    made = [chain_contracts(name, chain, depth) for chain in range(sum(per_tx))]
    contracts = [chain for chain, _ in made]
    dispatcher = dispatcher_contract(fork, name, [entry for _, entry in made])
    placed = place_contracts(
        name, [dispatcher, *(contract for chain in contracts for contract in chain)], params.placement, fork
    )
    dispatcher_address = placed.addresses[0]
    chains = [placed.addresses[1 + index * depth : 1 + (index + 1) * depth] for index in range(len(contracts))]
    return fresh_sender_workload(
        "cross_contract_chase",
        params,
        placed,
        [BenchmarkCall(dispatcher_address, word(count), gas) for count, gas in zip(per_tx, schedule)],
        Regenerated(len(schedule), lambda: chase_accesses(dispatcher_address, [list(chain) for chain in chains], per_tx)),
        chain_depth=depth,
        chains=len(contracts),
        chains_per_tx=sorted(set(per_tx)),
        chain_contracts=len(contracts) * depth,
        **block_size_note(len(schedule), capacity),
    )


FAMILY = Family("cross_contract_chase", cross_contract_chase, opt_in=True)
