"""
A small EVM assembler that knows each opcode's static gas.

balgen's contracts are a few dozen opcodes; writing them as named operations
with labels keeps them readable, and knowing the static gas of each piece lets
the generators compute exact gas budgets instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Op:
    """One opcode with the static part of its gas cost."""

    name: str
    code: int
    gas: int
    immediate: bytes = b""

    def __bytes__(self) -> bytes:
        return bytes([self.code]) + self.immediate


@dataclass(frozen=True)
class Label:
    """A jump destination; assembles to JUMPDEST."""

    name: str


@dataclass(frozen=True)
class PushLabel:
    """PUSH2 of a label's offset, resolved when the code is assembled."""

    name: str


Item = Op | Label | PushLabel

STOP = Op("STOP", 0x00, 0)
ADD = Op("ADD", 0x01, 3)
MUL = Op("MUL", 0x02, 5)
SUB = Op("SUB", 0x03, 3)
LT = Op("LT", 0x10, 3)
GT = Op("GT", 0x11, 3)
ISZERO = Op("ISZERO", 0x15, 3)
XOR = Op("XOR", 0x18, 3)
SHL = Op("SHL", 0x1B, 3)
SHA3 = Op("SHA3", 0x20, 30)  # plus 6 per word hashed, added by callers
ADDRESS = Op("ADDRESS", 0x30, 2)
BALANCE = Op("BALANCE", 0x31, 0)  # warm/cold account access is dynamic
CALLER = Op("CALLER", 0x33, 2)
CALLDATALOAD = Op("CALLDATALOAD", 0x35, 3)
CALLDATASIZE = Op("CALLDATASIZE", 0x36, 2)
CODECOPY = Op("CODECOPY", 0x39, 3)
# The EXTCODE* opcodes' static gas is the warm access; cold surcharges are dynamic.
EXTCODESIZE = Op("EXTCODESIZE", 0x3B, 100)
EXTCODECOPY = Op("EXTCODECOPY", 0x3C, 100)
EXTCODEHASH = Op("EXTCODEHASH", 0x3F, 100)
COINBASE = Op("COINBASE", 0x41, 2)
POP = Op("POP", 0x50, 2)
MLOAD = Op("MLOAD", 0x51, 3)
MSTORE = Op("MSTORE", 0x52, 3)
MSTORE8 = Op("MSTORE8", 0x53, 3)
SLOAD = Op("SLOAD", 0x54, 0)  # warm/cold cost is dynamic
SSTORE = Op("SSTORE", 0x55, 0)  # fully dynamic
JUMP = Op("JUMP", 0x56, 8)
JUMPI = Op("JUMPI", 0x57, 10)
GAS = Op("GAS", 0x5A, 2)
JUMPDEST = Op("JUMPDEST", 0x5B, 1)
PUSH0 = Op("PUSH0", 0x5F, 2)
DUP1 = Op("DUP1", 0x80, 3)
DUP2 = Op("DUP2", 0x81, 3)
DUP3 = Op("DUP3", 0x82, 3)
DUP4 = Op("DUP4", 0x83, 3)
DUP6 = Op("DUP6", 0x85, 3)
SWAP1 = Op("SWAP1", 0x90, 3)
SWAP2 = Op("SWAP2", 0x91, 3)
CALL = Op("CALL", 0xF1, 0)  # fully dynamic (account access, value, memory, forwarded gas)
CREATE2 = Op("CREATE2", 0xF5, 0)  # fully dynamic (fork-dependent base, words, state gas)
RETURN = Op("RETURN", 0xF3, 0)
REVERT = Op("REVERT", 0xFD, 0)


def push(value: int) -> Op:
    """The shortest PUSH of `value` (PUSH0 for zero)."""
    if value < 0 or value >= 2**256:
        raise ValueError(f"push value out of range: {value}")
    if value == 0:
        return PUSH0
    size = (value.bit_length() + 7) // 8
    return Op(f"PUSH{size}", 0x5F + size, 3, value.to_bytes(size, "big"))


def push_fixed(value: int, size: int) -> Op:
    """A PUSH of exactly `size` bytes, for values patched into fixed positions."""
    return Op(f"PUSH{size}", 0x5F + size, 3, value.to_bytes(size, "big"))


def push_address(address: bytes) -> Op:
    """PUSH20 of an address: always all 20 bytes, so the code holds it at a known offset."""
    return push_fixed(int.from_bytes(address, "big"), 20)


def static_gas(items: list[Item]) -> int:
    """Static gas of running `items` once, straight through."""
    total = 0
    for item in items:
        if isinstance(item, Op):
            total += item.gas
        elif isinstance(item, Label):
            total += JUMPDEST.gas
        else:
            total += 3
    return total


def _item_size(item: Item) -> int:
    if isinstance(item, Label):
        return 1
    if isinstance(item, PushLabel):
        return 3
    return 1 + len(item.immediate)


def code_size(items: list[Item]) -> int:
    """How many bytes `items` assemble to."""
    return sum(_item_size(item) for item in items)


def assemble(items: list[Item]) -> bytes:
    """Assemble items, resolving labels to PUSH2 offsets."""
    offsets: dict[str, int] = {}
    position = 0
    for item in items:
        if isinstance(item, Label):
            offsets[item.name] = position
        position += _item_size(item)
    out = bytearray()
    for item in items:
        if isinstance(item, Label):
            out.append(JUMPDEST.code)
        elif isinstance(item, PushLabel):
            out += bytes(push_fixed(offsets[item.name], 2))
        else:
            out += bytes(item)
    return bytes(out)


def deployment_items(runtime: bytes, storage: dict[int, int] | None = None) -> list[Item]:
    """Init code, as items, that sets `storage` and then returns `runtime` (appended after it)."""
    return list(_deployment_items(runtime, _slots(storage)))


def deployment_code(runtime: bytes, storage: dict[int, int] | None = None) -> bytes:
    """Init code that sets `storage` and returns `runtime` as the contract's code."""
    return _deployment_code(runtime, _slots(storage))


# A workload deploys the same few contracts thousands of times (a default-suite fill, 17,700
# deployments of 20 distinct ones), each time asking for its init code and its gas.
DEPLOYMENTS_KEPT = 64
"""Distinct deployments whose init code is kept: a few dozen, each at most a contract's size."""


def _slots(storage: dict[int, int] | None) -> tuple[tuple[int, int], ...]:
    return tuple(sorted((storage or {}).items()))


@lru_cache(maxsize=DEPLOYMENTS_KEPT)
def _deployment_items(runtime: bytes, slots: tuple[tuple[int, int], ...]) -> tuple[Item, ...]:
    prefix: list[Item] = []
    for slot, value in slots:
        prefix += [push(value), push(slot), SSTORE]

    def copy_and_return(runtime_offset: int) -> list[Item]:
        # CODECOPY(0, offset_of_runtime, len); RETURN(0, len), with fixed-width
        # pushes so the offset can be known before it is filled in.
        return [push_fixed(len(runtime), 4), DUP1, push_fixed(runtime_offset, 4), PUSH0, CODECOPY, PUSH0, RETURN]

    return (*prefix, *copy_and_return(code_size(prefix + copy_and_return(0))))


@lru_cache(maxsize=DEPLOYMENTS_KEPT)
def _deployment_code(runtime: bytes, slots: tuple[tuple[int, int], ...]) -> bytes:
    return assemble(list(_deployment_items(runtime, slots))) + runtime
