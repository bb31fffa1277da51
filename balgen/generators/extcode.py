"""
`extcodesize`, `extcodehash`, `extcodecopy`: every transaction reads the code of contracts no one read before.

The worst case of code reads from the EIP-7907 analysis: a CREATE2 contract set
(`code_set`) of unique contracts of one size, just large enough that the
benchmark block reads each contract exactly once, so every read is cold and
no code cache can help. An attack contract computes contract k's address on
the fly from the factory, k and the init code hash (no stored address list),
runs the family's opcode on it (EXTCODECOPY copies the whole code), and
stores where it stopped, so the next transaction resumes at the next salt.
It also folds what it read (the size, the code hash, the last code word)
into a running sum in storage, which the fill's access-list check compares
with the sum over the pre-state's code: the reads are proven to hit the
contracts balgen placed. Variants are code sizes (`--code-sizes`); the
transactions form one chain through the attack contract's two slots.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ethereum.keccak import keccak

from ..ethereum.bytecode import (
    ADD, CALLDATALOAD, DUP1, DUP2, DUP3, DUP4, EXTCODECOPY, EXTCODEHASH, EXTCODESIZE, ISZERO, JUMP, JUMPI, LT,
    MLOAD, MSTORE, MSTORE8, POP, PUSH0, SHA3, SLOAD, SSTORE, STOP, SUB, SWAP1, SWAP2, Item, Label, PushLabel,
    assemble, push, push_address, static_gas,
)
from ..plumbing.errors import FillCheckFailed
from ..ethereum.forks import Fork
from ..model.workload import Address, AddressReference, Placement, TxAccess, Workload, WorkloadParams
from ..model.family import Family
from .benchmark_calls import calls_to, fresh_sender_workload
from .code_set import (
    CODE_SIZES, ContractSet, code_size_bytes, creation_gas, factory_calldata, factory_fixed_gas, factory_runtime,
    init_code_hash, runtime_code,
)
from .counted_loop import CountedLoopGas, counted_capacity, counted_transactions, word
from .schedule import block_size_note
from ..ethereum.gas_costs import words
from .deterministic_deployment import deterministic_address, deterministic_salt
from .placement import ContractSpec, SetupCall, place_contracts, placed_addresses, setup_calls

OPCODES = ("extcodesize", "extcodehash", "extcodecopy")
NEXT_SALT_SLOT = 0
"""Holds the next salt to read, plus one, so that it is never zero (a write to a zero slot costs more)."""
SUM_SLOT = 1
"""Holds 1 plus the sum, mod 2^256, of what every read so far returned."""
ADDRESS_PREIMAGE = 11
"""Memory offset of 0xff ++ factory ++ salt ++ init code hash (85 bytes ending at 96)."""
COPY_OFFSET = 128
"""Where EXTCODECOPY puts the code."""


@dataclass(frozen=True)
class AttackContract:
    """The attack contract of one opcode against one contract set, as code and gas."""

    opcode: str
    factory: Address
    size: int

    def parts(self) -> tuple[list[Item], list[Item], list[Item], list[Item]]:
        """(prologue, loop head, loop body, end), the stack being [end salt, sum, salt] in the loop."""
        prologue: list[Item] = [
            push_address(self.factory), PUSH0, MSTORE,
            push(0xFF), push(ADDRESS_PREIMAGE), MSTORE8,
            push(int.from_bytes(init_code_hash(self.size), "big")), push(64), MSTORE,
        ]
        if self.opcode == "extcodecopy":
            # Grow memory once, so every iteration costs the same.
            prologue += [PUSH0, push(self._last_word_offset), MSTORE]
        prologue += [
            push(NEXT_SALT_SLOT), SLOAD, push(1), SWAP1, SUB,  # salt
            DUP1, PUSH0, CALLDATALOAD, ADD,  # end = salt + count
            push(SUM_SLOT), SLOAD, SWAP1, SWAP2,  # end, sum, salt
        ]
        head: list[Item] = [Label("loop"), DUP3, DUP2, LT, ISZERO, PushLabel("done"), JUMPI]
        body = self._read() + [SWAP1, SWAP2, ADD, SWAP1, push(1), ADD, PushLabel("loop"), JUMP]
        end: list[Item] = [
            Label("done"), push(1), ADD, push(NEXT_SALT_SLOT), SSTORE, push(SUM_SLOT), SSTORE, POP, STOP,
        ]
        return prologue, head, body, end

    def _read(self) -> list[Item]:
        """Push the value read from the contract at the current salt."""
        address = [push(85), push(ADDRESS_PREIMAGE), SHA3]
        if self.opcode == "extcodecopy":
            return [
                push(self.size), PUSH0, push(COPY_OFFSET),  # size, code offset, memory offset
                DUP4, push(32), MSTORE, *address, EXTCODECOPY,
                push(self._last_word_offset), MLOAD,
            ]
        return [DUP1, push(32), MSTORE, *address, EXTCODESIZE if self.opcode == "extcodesize" else EXTCODEHASH]

    @property
    def references(self) -> tuple[AddressReference, ...]:
        """The factory's address, the operand of the PUSH20 the code starts with."""
        return (AddressReference(1, self.factory),)

    @property
    def _last_word_offset(self) -> int:
        return COPY_OFFSET + self.size - 32

    @property
    def runtime(self) -> bytes:
        return assemble([item for part in self.parts() for item in part])

    def loop_gas(self, fork: Fork) -> CountedLoopGas:
        """Exact execution gas: every read is a cold account access."""
        gas = fork.gas
        prologue, head, body, end = self.parts()
        memory = COPY_OFFSET + self.size if self.opcode == "extcodecopy" else 96
        read = gas.cold_account_access - EXTCODESIZE.gas
        if self.opcode != "extcodehash":
            read += gas.code_read
        if self.opcode == "extcodecopy":
            read += gas.copy_word * words(self.size)
        return CountedLoopGas(
            prologue=static_gas(prologue) + 2 * gas.cold_sload + gas.memory_expansion(memory),
            iteration=static_gas(head + body) + 3 * gas.keccak_word + read,
            exit=static_gas(head + end) + 2 * gas.sstore_update_warm,
        )

    def value_read(self, address: Address) -> int:
        """What one read of the contract at `address` adds to the sum."""
        if self.opcode == "extcodesize":
            return self.size  # every contract of the set has exactly this size; no code to build
        code = runtime_code(address, self.size)
        if self.opcode == "extcodehash":
            return int.from_bytes(keccak(code), "big")
        return int.from_bytes(code[-32:], "big")


def factory_calls(fork: Fork, contracts: ContractSet) -> tuple[SetupCall, ...]:
    """
    Factory calls creating salts 0..N-1, as many per call as fit the setup
    transaction limit; a contract too large for it (above about 10 KB on
    Amsterdam, where code is state gas) gets a call of its own, whose gas above
    2^24 EIP-8037 moves into the state-gas reservoir.
    """
    data = factory_calldata(0, 1)
    fixed = fork.intrinsic_gas(data) + factory_fixed_gas(fork, contracts.size)
    per_contract = creation_gas(fork, contracts.size)
    # The 63/64 rule keeps back a share of the gas at each CREATE2.
    per_contract += -(-per_contract // 63) + 1000

    def create(chunk: list[int]) -> SetupCall:
        first, count = chunk[0], len(chunk)
        limit = fixed + count * per_contract
        if fork.max_tx_gas_limit is not None and limit > fork.max_tx_gas_limit:
            raise FillCheckFailed(f"creating one {contracts.size}-byte contract needs {limit} gas, above {fork.name}'s limit")
        return SetupCall(
            factory_calldata(first, count),
            limit,
            {},
            created=contracts.created(range(first, first + count)),
            created_code_bytes=count * contracts.size,
        )

    return setup_calls(list(range(contracts.count)), per_contract, create, fixed_gas=fixed)


def extcode(params: WorkloadParams, opcode: str) -> Workload:
    """Cold code reads of a fresh contract set at `params`' gas value, fill level and code size."""
    if params.variant is None or not params.variant.endswith("KB"):
        raise ValueError(f"{opcode} variants are code sizes such as '24KB', not {params.variant!r}")
    fork = params.fork
    size = code_size_bytes(params.variant)
    if size > fork.max_code_size:
        raise FillCheckFailed(f"{params.variant} contracts exceed {fork.name}'s code size limit of {fork.max_code_size} bytes")
    name = params.fixture_name(opcode)
    # The factory goes through the deterministic deployment proxy, so that the set has
    # the fixture's addresses on any chain; the attack contract is an ordinary deployment.
    salt = deterministic_salt(f"{name}/factory")
    factory = deterministic_address(salt, factory_runtime(size))
    (attack_address,) = placed_addresses(name, 1)
    attack = AttackContract(opcode, factory, size)
    planned = counted_transactions(
        fork, params.gas_benchmark_value, params.fill, attack.loop_gas(fork), lambda _i, units, _b: word(units)
    )
    contracts = ContractSet(factory, size, sum(tx.units for tx in planned))
    placed = place_contracts(
        name,
        [
            ContractSpec(
                "factory", factory_runtime(size), setup_calls=factory_calls(fork, contracts), deterministic_salt=salt
            ),
            ContractSpec("attack", attack.runtime, {NEXT_SALT_SLOT: 1, SUM_SLOT: 1}, references=attack.references),
        ],
        params.placement,
        fork,
    )
    assert placed.addresses == (factory, attack_address)
    accesses = []
    salt, total = 0, 1
    for tx in planned:
        read = contracts.salt_addresses[salt : salt + tx.units]
        total = (total + sum(attack.value_read(address) for address in read)) % 2**256
        salt += tx.units
        accesses.append(
            TxAccess(
                writes={(attack_address, NEXT_SALT_SLOT): salt + 1, (attack_address, SUM_SLOT): total},
                touched=frozenset(read),
            )
        )
    in_genesis = params.placement is Placement.GENESIS
    return fresh_sender_workload(
        opcode,
        params,
        placed,
        calls_to(attack_address, planned),
        accesses,
        generated_pre=(contracts,) if in_genesis else (),
        large_state=True,
        code_size=size,
        contracts_read=contracts.count,
        factory="0x" + factory.hex(),
        init_code_hash="0x" + init_code_hash(size).hex(),
        code_bytes=contracts.count * size,
        **block_size_note(len(planned), counted_capacity(fork, lambda _i, units, _b: word(units))),
    )


PREDICTED_COUNTS = {
    "extcodesize": (("reads.code", "contracts_read"),),  # a size lookup counts as a code read
    "extcodecopy": (("reads.code", "contracts_read"), ("reads.code_bytes", "code_bytes")),
    "extcodehash": (("reads.accounts", "contracts_read"),),
}
"""What a client counts of each opcode's reads of the set (`Family.predicted_counts`)."""


def _family(opcode: str) -> Family:
    return Family(
        opcode,
        lambda params: extcode(params, opcode),
        CODE_SIZES,
        sized_by_code=True,
        predicted_counts=PREDICTED_COUNTS[opcode],
    )


FAMILIES = tuple(_family(opcode) for opcode in OPCODES)
