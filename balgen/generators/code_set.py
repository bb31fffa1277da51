"""
CREATE2 contract sets: N contracts of one code size, each with code of its own.

A set is the contracts one factory creates from one init code with salts
0..N-1, so anyone can find contract k from (factory, k, init code hash) alone.
The init code makes every contract's code unique, so no client's code cache
(keyed by code hash) can serve a read from another contract: it fills the
code with `seed ^ (j * STRIDE)` for word j, where `seed` is the keccak of the
contract's own address, and sets the first byte to STOP. The words look
random, so a database cannot compress the code either. `runtime_code` computes
the same bytes in Python, which is how `--setup genesis` puts the set in the
alloc without running anything.

Sets reach gigabytes (18,000 contracts of 64 KB), so a `ContractSet` holds
addresses only and builds each account's code when asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from typing import Iterator, Mapping, Sequence

from ..ethereum.keccak import keccak

from ..ethereum.bytecode import (
    ADD, ADDRESS, CALLDATALOAD, CODECOPY, CREATE2, DUP1, DUP2, DUP3, GT, ISZERO, JUMP, JUMPI, LT, MSTORE, MSTORE8, MUL, POP,
    PUSH0, RETURN, SHA3, SHL, STOP, SWAP1, XOR, Item, Label, PushLabel, assemble, push, push_fixed, static_gas,
)
from ..plumbing.errors import BadInput
from ..ethereum.forks import Fork
from ..model.workload import Account, Address
from ..ethereum.gas_costs import words

KB = 1024
CODE_SIZES = ("0.5KB", "1KB", "2KB", "5KB", "10KB", "24KB", "32KB", "64KB")
"""The sizes of the EIP-7907 analysis; 32KB and 64KB need Amsterdam's 65536-byte limit."""
DEFAULT_CODE_SIZES = ("0.5KB",)
"""What a fill makes unless told otherwise: the set that costs seconds and megabytes.
The large sets are asked for by name, knowing their disk cost (docs/workloads.md)."""

STRIDE = int.from_bytes(keccak(b"balgen/code-set/stride"), "big") | 1
"""Odd 256-bit multiplier of the word index in the code pattern."""


def size_name(size: int) -> str:
    """512 -> '0.5KB', 65536 -> '64KB': the variant part of a fixture name."""
    return f"{size / KB:g}KB"


def code_size_bytes(name: str) -> int:
    """'0.5KB' -> 512."""
    return round(float(name.removesuffix("KB")) * KB)


def parse_code_sizes(text: str, fork: Fork) -> tuple[str, ...]:
    """`--code-sizes`: KB values (`0.5,24,64`, `64KB`) or `all` (every size `fork` allows)."""
    if text.strip().lower() == "all":
        return tuple(name for name in CODE_SIZES if code_size_bytes(name) <= fork.max_code_size)
    names = []
    for given in text.split(","):
        part = given.strip().removesuffix("KB").removesuffix("kb")
        try:
            size = float(part) * KB
        except ValueError:
            raise BadInput(f"--code-sizes: {given.strip()!r} is not a size in KB (e.g. 0.5,24,64 or all)") from None
        if size != int(size) or size < 32 or int(size) % 32:
            raise BadInput(f"--code-sizes: {part}KB is not a positive multiple of 32 bytes")
        if size > fork.max_code_size:
            raise BadInput(f"--code-sizes: {part}KB exceeds {fork.name}'s code size limit of {fork.max_code_size} bytes")
        names.append(size_name(int(size)))
    if len(set(names)) != len(names):
        raise BadInput(f"--code-sizes: {text!r} lists a size twice")
    return tuple(names)


def init_code_parts(size: int) -> tuple[list[Item], list[Item], list[Item]]:
    """The init code as (prologue, word loop, epilogue)."""
    prologue: list[Item] = [ADDRESS, PUSH0, MSTORE, push(20), push(12), SHA3, PUSH0]  # seed, j=0
    loop: list[Item] = [
        Label("fill"),
        DUP1, push(STRIDE), MUL, DUP3, XOR,  # seed ^ j*STRIDE
        DUP2, push(5), SHL, MSTORE,  # at byte 32*j
        push(1), ADD,
        DUP1, push(words(size)), GT, PushLabel("fill"), JUMPI,
    ]
    epilogue: list[Item] = [PUSH0, PUSH0, MSTORE8, push(size), PUSH0, RETURN]  # first byte STOP
    return prologue, loop, epilogue


@cache
def init_code(size: int) -> bytes:
    """The one init code of every contract of a `size`-byte set."""
    prologue, loop, epilogue = init_code_parts(size)
    return assemble(prologue + loop + epilogue)


@cache
def init_code_hash(size: int) -> bytes:
    return keccak(init_code(size))


def init_execution_gas(fork: Fork, size: int) -> int:
    """Execution gas of running the init code (the deposit not included)."""
    prologue, loop, epilogue = init_code_parts(size)
    return (
        static_gas(prologue) + fork.gas.keccak_word
        + words(size) * static_gas(loop)
        + static_gas(epilogue)
        + fork.gas.memory_expansion(size)
    )


@cache
def _stride_pattern(size: int) -> int:
    """Words j * STRIDE (mod 2^256), j = 0.., concatenated, as one integer."""
    pattern = b"".join((j * STRIDE % 2**256).to_bytes(32, "big") for j in range(words(size)))
    return int.from_bytes(pattern, "big")


def runtime_code(address: Address, size: int) -> bytes:
    """The code the init code leaves at `address`, computed without running it."""
    seed = keccak(address)
    code = (_stride_pattern(size) ^ int.from_bytes(seed * words(size), "big")).to_bytes(words(size) * 32, "big")
    return bytes(1) + code[1:size]


def create2_address(factory: Address, salt: int, init_hash: bytes) -> Address:
    """EIP-1014: keccak(0xff ++ factory ++ salt ++ keccak(init code))[12:]."""
    return keccak(b"\xff" + factory + salt.to_bytes(32, "big") + init_hash)[12:]


@dataclass(frozen=True)
class ContractSet:
    """`count` contracts of `size` bytes at the factory's CREATE2 addresses, salts 0..count-1."""

    factory: Address
    size: int
    count: int

    @cached_property
    def salt_addresses(self) -> tuple[Address, ...]:
        """Address of each salt, in salt order."""
        digest = init_code_hash(self.size)
        return tuple(create2_address(self.factory, salt, digest) for salt in range(self.count))

    @cached_property
    def _salts(self) -> dict[Address, int]:
        return {address: salt for salt, address in enumerate(self.salt_addresses)}

    def addresses(self) -> Sequence[Address]:
        return self.salt_addresses

    def account(self, address: Address) -> Account:
        if address not in self._salts:
            raise KeyError(f"0x{address.hex()} is not in the contract set")
        return Account(nonce=1, code=runtime_code(address, self.size))

    def created(self, salts: range) -> "CreatedCode":
        """The code the factory creates for `salts`, built when read."""
        return CreatedCode(tuple(self.salt_addresses[salt] for salt in salts), self.size)

    def codes(self) -> Iterator[bytes]:
        """Each contract's code in salt order, one at a time."""
        for address in self.salt_addresses:
            yield runtime_code(address, self.size)


@dataclass(frozen=True)
class CreatedCode(Mapping[Address, bytes]):
    """address -> runtime code of contracts a transaction creates, computed on access."""

    created: tuple[Address, ...]
    size: int

    @cached_property
    def _created(self) -> frozenset[Address]:
        return frozenset(self.created)

    def __contains__(self, address: object) -> bool:
        # Not Mapping's, which builds the code to answer; and not a scan of a setup transaction's thousand addresses.
        return address in self._created

    def __getitem__(self, address: Address) -> bytes:
        if address not in self._created:
            raise KeyError(address)
        return runtime_code(address, self.size)

    def __iter__(self) -> Iterator[Address]:
        return iter(self.created)

    def __len__(self) -> int:
        return len(self.created)


def factory_parts(size: int, code_offset: int = 0) -> tuple[list[Item], list[Item], list[Item], list[Item]]:
    """
    The factory as (prologue, loop head, loop body, end); its init code follows at `code_offset`.

    Calldata is (first salt, count): it CREATE2s salts first..first+count-1,
    so a set of any size is deployed in transactions of any size.
    """
    code_length = len(init_code(size))
    prologue: list[Item] = [
        push(code_length), push_fixed(code_offset, 2), PUSH0, CODECOPY,  # memory[0:] = init code
        PUSH0, CALLDATALOAD, DUP1, push(32), CALLDATALOAD, ADD, SWAP1,  # stack: end, salt
    ]
    head: list[Item] = [Label("loop"), DUP2, DUP2, LT, ISZERO, PushLabel("done"), JUMPI]
    body: list[Item] = [DUP1, push(code_length), PUSH0, PUSH0, CREATE2, POP, push(1), ADD, PushLabel("loop"), JUMP]
    end: list[Item] = [Label("done"), STOP]
    return prologue, head, body, end


@cache
def factory_runtime(size: int) -> bytes:
    """The factory's code: the CREATE2 loop, then the init code it copies."""
    code_offset = len(assemble([item for part in factory_parts(size) for item in part]))
    return assemble([item for part in factory_parts(size, code_offset) for item in part]) + init_code(size)


def factory_calldata(first_salt: int, count: int) -> bytes:
    return first_salt.to_bytes(32, "big") + count.to_bytes(32, "big")


def creation_gas(fork: Fork, size: int) -> int:
    """Gas of one factory loop iteration: CREATE2, the init code, the deposit, state gas included."""
    gas = fork.gas
    _, head, body, _ = factory_parts(size)
    init_words = words(len(init_code(size)))
    return (
        static_gas(head + body)
        + gas.create2_base
        + (gas.initcode_word + gas.keccak_word) * init_words
        + gas.account_creation_state
        + init_execution_gas(fork, size)
        + gas.code_deposit_byte * size
        + gas.code_deposit_word * words(size)
        + gas.code_deposit_state_byte * size
    )


def factory_fixed_gas(fork: Fork, size: int) -> int:
    """Gas of a factory call outside its loop iterations: copying the init code, the last loop test."""
    prologue, head, _, end = factory_parts(size)
    code_length = len(init_code(size))
    gas = fork.gas
    return static_gas(prologue + head + end) + gas.copy_word * words(code_length) + gas.memory_expansion(code_length)
