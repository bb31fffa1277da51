"""
The calibration block: a few transactions whose traced gas reveals a t8n's gas rules.

One probe contract runs every operation balgen's workloads price, each once
in a state where exactly one rule applies (a cold SLOAD, then a warm one, a
warm update, a cold update, a slot creation, memory growth, KECCAK of one, two
and three words, CODECOPY, EXTCODEHASH/EXTCODESIZE/EXTCODECOPY of accounts no
one touched, CREATE2 of 1-, 32- and 33-byte code). It runs twice: once within
the execution cap, where EIP-8037 state gas is taken from the execution gas the
tracer sees, and once with a state-gas reservoir above the cap, where it is
not; the difference splits every cost into execution and state gas. Plain
transactions with chosen calldata and init code give the intrinsic costs (the
gas their first opcode starts with) and the calldata floor (their receipts).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..ethereum.bytecode import (
    ADD, ADDRESS, CALLDATALOAD, CODECOPY, CREATE2, DUP1, DUP2, DUP3, DUP4, EXTCODECOPY, EXTCODEHASH, EXTCODESIZE,
    GAS, GT, ISZERO, JUMP, JUMPI, LT, MSTORE, MUL, POP, PUSH0, RETURN, SHA3, SHL, SLOAD, SSTORE, STOP, SUB, SWAP1,
    SWAP2, XOR, Item, Label, Op, PushLabel, assemble, push,
)
from ..ethereum.forks import TX_GAS_LIMIT_CAP
from ..model.keys import derived_address, sender
from ..model.workload import ETHER, Account, Address, Sender, TxSpec

SEED = "balgen/calibration"
PROBE_STORAGE = {1: 1, 2: 1}
"""Slot 1 is read cold, read warm and updated warm; slot 2 updated cold; slot 3 is created."""
CREATED_CODE_SIZES = (1, 32, 33)
"""Deposits of one byte and one word, 32 bytes and one word, 33 bytes and two words."""
FLOOR_CALLDATA_BYTES = 32768
"""Enough calldata that the EIP-7623 floor exceeds the intrinsic cost, and that the block's
summed execution gas exceeds its summed state gas (so the block's gas used checks the floors)."""
FLOOR_GAS_LIMIT = 3_000_000
RESERVOIR = 4_000_000
"""Gas above the execution cap: EIP-8037's state-gas reservoir, more than the probe's state gas."""


@dataclass(frozen=True)
class Measured:
    """One opcode of the probe whose traced gas gives a rule."""

    name: str
    """What it measures, e.g. `cold_sload`."""
    op: Op


@dataclass(frozen=True)
class ProbeSegment:
    """A few opcodes of the probe, ending with (or containing) the one measured."""

    items: tuple[Item, ...]
    measured: Measured | None = None
    measured_index: int = -1
    """Position of the measured opcode in `items`."""


def _item_size(item: Item) -> int:
    """Bytes an item assembles to (a label's JUMPDEST is one, a label push is PUSH2)."""
    if isinstance(item, Label):
        return 1
    if isinstance(item, PushLabel):
        return 3
    return len(bytes(item))


def _segment(name: str, items: list[Item], op: Op) -> ProbeSegment:
    index = max(i for i, item in enumerate(items) if item == op)
    return ProbeSegment(tuple(items), Measured(name, op), index)


def init_code(size: int) -> bytes:
    """Init code that deploys `size` zero bytes: PUSH1 size, PUSH0, RETURN."""
    return assemble([push(size), PUSH0, RETURN])


def _create2(size: int) -> ProbeSegment:
    word = int.from_bytes(init_code(size).ljust(32, b"\x00"), "big")
    items: list[Item] = [push(word), PUSH0, MSTORE, push(size), push(len(init_code(size))), PUSH0, PUSH0, CREATE2, POP]
    return _segment(f"create2_{size}", items, CREATE2)


def static_segment() -> ProbeSegment:
    """Every opcode whose cost balgen takes as static, run once with no effect, so that
    the calibration compares each one's traced cost with the bytecode table."""
    items: list[Item] = []
    for binary in (ADD, MUL, SUB, LT, GT, XOR, SHL):
        items += [push(1), push(1), binary, POP]
    items += [push(1), ISZERO, POP, ADDRESS, POP, GAS, POP, PUSH0, CALLDATALOAD, POP]
    items += [push(1), push(2), push(3), push(4), DUP1, POP, DUP2, POP, DUP3, POP, DUP4, POP, SWAP1, SWAP2]
    items += [POP, POP, POP, POP, PushLabel("jumped"), JUMP, Label("jumped"), push(1), PushLabel("taken"), JUMPI]
    items += [Label("taken")]
    return ProbeSegment(tuple(items))


def probe_segments(targets: tuple[Address, Address, Address]) -> tuple[ProbeSegment, ...]:
    """The probe's code, segment by segment; `targets` are the three accounts it reads the code of."""
    hashed, sized, copied = (int.from_bytes(address, "big") for address in targets)
    return (
        _segment("cold_sload", [push(1), SLOAD, POP], SLOAD),
        _segment("warm_sload", [push(1), SLOAD, POP], SLOAD),
        _segment("sstore_update_warm", [push(2), push(1), SSTORE], SSTORE),
        _segment("sstore_update_cold", [push(2), push(2), SSTORE], SSTORE),
        _segment("sstore_set", [push(1), push(3), SSTORE], SSTORE),
        _segment("memory_one_word", [push(1), PUSH0, MSTORE], MSTORE),
        _segment("memory_two_more_words", [PUSH0, push(64), MSTORE], MSTORE),
        _segment("keccak_one_word", [push(32), PUSH0, SHA3, POP], SHA3),
        _segment("keccak_two_words", [push(64), PUSH0, SHA3, POP], SHA3),
        _segment("keccak_three_words", [push(96), PUSH0, SHA3, POP], SHA3),
        _segment("codecopy_two_words", [push(64), PUSH0, push(32), CODECOPY], CODECOPY),
        _segment("extcodehash_cold", [push(hashed), EXTCODEHASH, POP], EXTCODEHASH),
        _segment("extcodesize_cold", [push(sized), EXTCODESIZE, POP], EXTCODESIZE),
        _segment("extcodecopy_cold", [push(64), PUSH0, push(32), push(copied), EXTCODECOPY], EXTCODECOPY),
        *(_create2(size) for size in CREATED_CODE_SIZES),
        static_segment(),
        ProbeSegment((STOP,)),
    )


@dataclass(frozen=True)
class CalibrationTx:
    """One transaction of the calibration block and what it is there for."""

    purpose: str
    spec: TxSpec


@dataclass(frozen=True)
class CalibrationBlock:
    """The calibration block's pre-state and transactions for one fork."""

    with_reservoir: bool
    """The fork has EIP-8037 state gas, so the probe also runs above the execution cap."""

    @cached_property
    def caller(self) -> Sender:
        return sender(SEED, "caller")

    @cached_property
    def code_targets(self) -> tuple[Address, Address, Address]:
        return tuple(derived_address(SEED, "code", index) for index in range(3))  # type: ignore[return-value]

    @cached_property
    def stop_contract(self) -> Address:
        return derived_address(SEED, "stop")

    @cached_property
    def probes(self) -> tuple[Address, Address]:
        """The probe without and with a reservoir: same code and storage, two addresses."""
        return derived_address(SEED, "probe", 0), derived_address(SEED, "probe", 1)

    @cached_property
    def segments(self) -> tuple[ProbeSegment, ...]:
        return probe_segments(self.code_targets)

    @cached_property
    def probe_code(self) -> bytes:
        return assemble([item for segment in self.segments for item in segment.items])

    def measured_pcs(self) -> dict[int, Measured]:
        """Program counter of each measured opcode in the probe's code."""
        pcs: dict[int, Measured] = {}
        position = 0
        for segment in self.segments:
            for index, item in enumerate(segment.items):
                if segment.measured is not None and index == segment.measured_index:
                    pcs[position] = segment.measured
                position += _item_size(item)
        return pcs

    def pre(self) -> dict[Address, Account]:
        """The calibration genesis, system contracts aside."""
        accounts = {
            self.caller.address: Account(balance=10**4 * ETHER),
            self.stop_contract: Account(nonce=1, code=bytes([STOP.code])),
        }
        for index, target in enumerate(self.code_targets):
            accounts[target] = Account(nonce=1, code=bytes([STOP.code]) + bytes(range(1, 64 + index)))
        for probe in self.probes:
            accounts[probe] = Account(nonce=1, code=self.probe_code, storage=dict(PROBE_STORAGE))
        return accounts

    def creation_gas_limit(self) -> int:
        """Creations run above the execution cap where there is a reservoir, so that their
        account's state gas does not come out of the gas their first opcode sees."""
        return TX_GAS_LIMIT_CAP + 1_000_000 if self.with_reservoir else 1_000_000

    def transactions(self) -> tuple[CalibrationTx, ...]:
        """The block's transactions, in order; the over-cap probe of the total limit comes last."""
        stop = self.stop_contract
        planned: list[tuple[str, Address | None, bytes, int]] = [
            ("probe", self.probes[0], b"", 3_000_000),
        ]
        if self.with_reservoir:
            planned.append(("probe with reservoir", self.probes[1], b"", TX_GAS_LIMIT_CAP + RESERVOIR))
        floor_init = init_code(0) + b"\xfe" * (1024 - len(init_code(0)))
        planned += [
            ("zero calldata", stop, bytes(32), 200_000),
            ("non-zero calldata", stop, b"\xff" * 32, 200_000),
            ("zero calldata floor", stop, bytes(FLOOR_CALLDATA_BYTES), FLOOR_GAS_LIMIT),
            ("non-zero calldata floor", stop, b"\xff" * FLOOR_CALLDATA_BYTES, FLOOR_GAS_LIMIT),
            ("one-word creation", None, init_code(0), self.creation_gas_limit()),
            ("two-word creation", None, init_code(0) + b"\xfe" * (64 - len(init_code(0))), self.creation_gas_limit()),
            ("creation floor", None, floor_init, self.creation_gas_limit()),
        ]
        if self.with_reservoir:
            planned.append(("gas limit of 2^32", stop, b"", 2**32))
        return tuple(
            CalibrationTx(purpose, TxSpec(sender=self.caller, nonce=nonce, to=to, data=data, gas_limit=limit))
            for nonce, (purpose, to, data, limit) in enumerate(planned)
        )

