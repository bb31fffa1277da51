"""
From the calibration block's traces and receipts to gas rules, checked.

Every rule is read off the trace (an opcode's reported cost is its execution
gas; the gas it takes beyond that before the next opcode of its frame is
state gas, or for CREATE2 the child's run and the code deposit), or off the
gas a transaction's first opcode starts with (its intrinsic cost), or off a
receipt (the calldata floor). Then the rules must explain the whole block:
every opcode balgen treats as static costs what `balgen.ethereum.bytecode` says, every
receipt and the block's gas used are predicted exactly. The first rule that
does not hold is reported by name; the fill cannot model that t8n.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..ethereum.bytecode import (
    ADD, ADDRESS, CALLDATALOAD, CODECOPY, DUP1, EXTCODECOPY, EXTCODEHASH, EXTCODESIZE, DUP2, DUP3, DUP4, GAS, GT, ISZERO, JUMP, JUMPDEST, JUMPI, LT,
    MSTORE, MUL, POP, PUSH0, RETURN, SHA3, SHL, STOP, SUB, SWAP1, SWAP2, XOR, Op, push, static_gas,
)
from ..ethereum.forks import TX_GAS_LIMIT_CAP
from ..ethereum.gas_costs import GasCosts, words
from .probe import CREATED_CODE_SIZES, FLOOR_CALLDATA_BYTES, CalibrationBlock, Measured, init_code

STEP_TRACER = """{
  steps: [],
  step: function (log, db) {
    this.steps.push([log.getDepth(), log.getPC(), log.op.toNumber(), log.getGas(), log.getCost()]);
  },
  fault: function (log, db) {},
  result: function (ctx, db) { var steps = this.steps; this.steps = []; return steps; }
}"""
"""Per transaction, every opcode as [depth, pc, opcode, gas before, cost]; passed as `--trace.tracer`."""

STATIC_OPS: dict[int, Op] = {
    op.code: op
    for op in (ADD, MUL, SUB, LT, GT, ISZERO, XOR, SHL, ADDRESS, CALLDATALOAD, POP, JUMP, JUMPI, GAS, JUMPDEST,
               PUSH0, DUP1, DUP2, DUP3, DUP4, SWAP1, SWAP2, STOP)
}
"""Opcodes whose whole cost balgen takes from the bytecode table (PUSH1..PUSH32 too)."""
PUSH_OPS = range(0x60, 0x80)


class UnmodelledRule(Exception):
    """A gas rule of the t8n that balgen's model does not have; the message names it."""


@dataclass(frozen=True)
class Step:
    depth: int
    pc: int
    op: int
    gas: int
    cost: int


@dataclass(frozen=True)
class OpGas:
    """What one traced opcode took."""

    cost: int
    """Its reported cost: the execution gas it charges."""
    spent: int
    """Gas its frame had less at its next opcode (the child's run and state gas included)."""
    child: int
    """Summed cost of the opcodes a child frame it opened ran."""


@dataclass(frozen=True)
class TxObservation:
    """One calibration transaction as t8n ran it."""

    purpose: str
    gas_limit: int
    data: bytes
    create: bool
    receipt_gas: int | None
    """Gas used by its receipt; None when t8n rejected it."""
    steps: tuple[Step, ...]

    def first_gas(self) -> int:
        if not self.steps:
            raise UnmodelledRule(f"calibration transaction '{self.purpose}' ran no opcode")
        return self.steps[0].gas

    def measured(self, pcs: dict[int, Measured]) -> dict[str, OpGas]:
        """The measured opcodes of the top frame, by what each measures."""
        found: dict[str, OpGas] = {}
        for index, step in enumerate(self.steps):
            if step.depth != 1 or step.pc not in pcs:
                continue
            later = self.steps[index + 1 :]
            resume = next((s for s in later if s.depth == 1), None)
            if resume is None:
                raise UnmodelledRule(f"calibration probe stopped at {pcs[step.pc].name}")
            child = sum(s.cost for s in later[: later.index(resume)] if s.depth == 2)
            found[pcs[step.pc].name] = OpGas(step.cost, step.gas - resume.gas, child)
        missing = {m.name for m in pcs.values()} - found.keys()
        if missing:
            raise UnmodelledRule(f"calibration probe did not reach {sorted(missing)[0]}")
        return found


def observations(block: CalibrationBlock, receipts: Sequence[dict[str, Any]], traces: Sequence[Any],
                 hashes: Sequence[bytes]) -> list[TxObservation]:
    """Receipts and traces matched to the block's transactions (a rejected one has neither)."""
    by_hash = {str(receipt["transactionHash"]).lower(): (receipt, trace) for receipt, trace in zip(receipts, traces)}
    observed = []
    for tx, tx_hash in zip(block.transactions(), hashes):
        receipt, trace = by_hash.get("0x" + tx_hash.hex(), (None, []))
        observed.append(
            TxObservation(
                purpose=tx.purpose,
                gas_limit=tx.spec.gas_limit,
                data=tx.spec.data,
                create=tx.spec.to is None,
                receipt_gas=int(receipt["gasUsed"], 16) if receipt is not None else None,
                steps=tuple(Step(*map(int, entry)) for entry in trace),
            )
        )
    return observed


def _exact(name: str, numerator: int, denominator: int) -> int:
    if numerator % denominator:
        raise UnmodelledRule(f"{name}: {numerator} gas over {denominator} units is not a whole price per unit")
    return numerator // denominator


def _expect(name: str, measured: int, modelled: int, what: str) -> None:
    if measured != modelled:
        raise UnmodelledRule(f"{name}: t8n charges {measured} for {what}, balgen's model {modelled}")


def _deposit(measured: dict[str, OpGas], size: int) -> int:
    """Gas CREATE2 of `size`-byte code took beyond its own cost and its init code's run: account, deposit."""
    entry = measured[f"create2_{size}"]
    return entry.spent - entry.cost - entry.child


def measure_rules(block: CalibrationBlock, observed: Sequence[TxObservation], table: GasCosts) -> GasCosts:
    """
    The gas rules the observations show. `table` (the spec the fork is expected
    to follow) gives only what one block cannot show: whether a creation's floor
    is anchored to the creation's base, and the value of the total gas cap when
    a gas limit of 2^32 is refused.
    """
    by_purpose = {tx.purpose: tx for tx in observed}
    pcs = block.measured_pcs()
    plain = by_purpose["probe"].measured(pcs)
    reserved = by_purpose["probe with reservoir"].measured(pcs) if block.with_reservoir else plain

    def cost(name: str) -> int:
        return plain[name].cost

    def intrinsic(purpose: str) -> int:
        tx = by_purpose[purpose]
        budget = min(tx.gas_limit, TX_GAS_LIMIT_CAP) if block.with_reservoir else tx.gas_limit
        return budget - tx.first_gas()

    tx_base = intrinsic("probe")
    zero = _exact("calldata_zero_byte", intrinsic("zero calldata") - tx_base, 32)
    nonzero = _exact("calldata_nonzero_byte", intrinsic("non-zero calldata") - tx_base, 32)
    one_word = intrinsic("one-word creation")
    initcode_word = intrinsic("two-word creation") - one_word - (64 - len(init_code(0))) * nonzero
    tx_create_base = one_word - len(init_code(0)) * nonzero - initcode_word

    keccak_word = cost("keccak_two_words") - cost("keccak_one_word")
    memory_word = cost("memory_one_word") - MSTORE.gas
    copy_word = _exact("copy_word", cost("codecopy_two_words") - CODECOPY.gas, 2)
    cold_account_access = cost("extcodehash_cold")
    sstore_set_state = plain["sstore_set"].spent - plain["sstore_set"].cost

    small, word, two_words = CREATED_CODE_SIZES
    execution_byte = _exact("code_deposit_byte", _deposit(reserved, word) - _deposit(reserved, small), word - small)
    execution_word = _deposit(reserved, two_words) - _deposit(reserved, word) - execution_byte
    total_byte = _exact("code deposit per byte", _deposit(plain, word) - _deposit(plain, small), word - small)
    account_creation = _deposit(plain, small) - total_byte - execution_word

    rejected_at_2_32 = block.with_reservoir and by_purpose["gas limit of 2^32"].receipt_gas is None
    floors = {}
    for name, purpose in (("floor_zero_byte", "zero calldata floor"), ("floor_nonzero_byte", "non-zero calldata floor")):
        used = by_purpose[purpose].receipt_gas or 0
        if used <= intrinsic(purpose):
            raise UnmodelledRule(f"{name}: no calldata floor above the intrinsic cost at {FLOOR_CALLDATA_BYTES} bytes")
        floors[name] = _exact(name, used - tx_base, FLOOR_CALLDATA_BYTES)

    costs = GasCosts(
        spec=table.spec,
        tx_base=tx_base,
        tx_create_base=tx_create_base,
        calldata_zero_byte=zero,
        calldata_nonzero_byte=nonzero,
        initcode_word=initcode_word,
        floor_on_creation_base=table.floor_on_creation_base,
        cold_sload=cost("cold_sload"),
        warm_sload=cost("warm_sload"),
        sstore_update_warm=cost("sstore_update_warm"),
        sstore_update_cold=cost("sstore_update_cold"),
        sstore_set_cold=cost("sstore_set"),
        sstore_set_state=sstore_set_state,
        account_creation_state=account_creation,
        code_deposit_byte=execution_byte,
        code_deposit_word=execution_word,
        code_deposit_state_byte=total_byte - execution_byte,
        cold_account_access=cold_account_access,
        code_read=cost("extcodesize_cold") - cold_account_access,
        create2_base=cost("create2_1") - words(len(init_code(small))) * (initcode_word + keccak_word),
        keccak_base=cost("keccak_one_word") - keccak_word,
        keccak_word=keccak_word,
        memory_word=memory_word,
        copy_word=copy_word,
        tx_gas_limit_total_cap=(table.tx_gas_limit_total_cap or 2**32 - 1) if rejected_at_2_32 else None,
        **floors,
    )
    check_probe(plain, reserved, costs, block.with_reservoir)
    return costs


def check_probe(plain: dict[str, OpGas], reserved: dict[str, OpGas], gas: GasCosts, with_reservoir: bool) -> None:
    """The measurements fit the model's shape: linear costs, one split into execution and state."""
    _expect("keccak_word", plain["keccak_three_words"].cost, gas.keccak_base + 3 * gas.keccak_word, "KECCAK of 3 words")
    _expect("keccak_base", gas.keccak_base, SHA3.gas, "KECCAK's constant (bytecode table)")
    _expect(
        "memory_word",
        plain["memory_two_more_words"].cost,
        MSTORE.gas + gas.memory_expansion(96) - gas.memory_expansion(32),
        "growing memory from 1 to 3 words",
    )
    _expect(
        "code_read",
        plain["extcodecopy_cold"].cost,
        gas.cold_account_access + gas.code_read + 2 * gas.copy_word,
        "a cold EXTCODECOPY of 2 words",
    )
    for size in CREATED_CODE_SIZES[1:]:
        _expect("create2_base", plain[f"create2_{size}"].cost, plain["create2_1"].cost, f"CREATE2 of {size}-byte code")
    small, word, two_words = CREATED_CODE_SIZES
    total_word = _deposit(plain, two_words) - _deposit(plain, word)
    _expect(
        "code_deposit_word",
        total_word,
        gas.code_deposit_byte + gas.code_deposit_state_byte + gas.code_deposit_word,
        "one more deposited byte starting a word",
    )
    if with_reservoir:
        _expect("sstore_set_state", reserved["sstore_set"].spent, gas.sstore_set_cold, "a slot creation paid from the reservoir")


def check_static_costs(observed: Sequence[TxObservation]) -> None:
    """Every opcode balgen prices statically costs what the bytecode table says."""
    for tx in observed:
        for step in tx.steps:
            op = STATIC_OPS.get(step.op)
            if op is None and step.op in PUSH_OPS:
                op = push(1)
            if op is not None and step.cost != op.gas:
                raise UnmodelledRule(f"static gas of {op.name if step.op not in PUSH_OPS else 'PUSH'}: "
                                     f"t8n charges {step.cost}, balgen's table {op.gas}")


def predicted_gas(block: CalibrationBlock, purpose: str, data: bytes, gas: GasCosts) -> tuple[int, int, int]:
    """(execution, state, floor) gas the model gives a calibration transaction."""
    if purpose.startswith("probe"):
        return (*probe_gas(block, gas), gas.floor_gas(b""))
    if purpose.endswith("creation") or purpose == "creation floor":
        init_run = static_gas([PUSH0, PUSH0, RETURN])
        execution = gas.intrinsic_gas(data, create=True) + init_run
        return execution, gas.account_creation_state, gas.floor_gas(data, create=True)
    return gas.intrinsic_gas(data), 0, gas.floor_gas(data)


def probe_gas(block: CalibrationBlock, gas: GasCosts) -> tuple[int, int]:
    """(execution, state) gas of the probe's run, from the model alone."""
    segments = block.segments
    execution = gas.tx_base + sum(static_gas(list(segment.items)) for segment in segments)
    execution += gas.cold_sload + gas.warm_sload + gas.sstore_update_warm + gas.sstore_update_cold + gas.sstore_set_cold
    execution += gas.memory_expansion(96) + 6 * gas.keccak_word + 2 * gas.copy_word
    # EXTCODE*'s warm access is in the static table; a cold one adds the rest of the cold access.
    execution += sum(gas.cold_account_access - op.gas for op in (EXTCODEHASH, EXTCODESIZE, EXTCODECOPY))
    execution += 2 * gas.code_read + 2 * gas.copy_word
    state = gas.sstore_set_state
    for size in CREATED_CODE_SIZES:
        init_words = words(len(init_code(size)))
        execution += gas.create2_base + init_words * (gas.initcode_word + gas.keccak_word)
        execution += static_gas([push(size), PUSH0, RETURN]) + gas.memory_expansion(size)
        execution += gas.code_deposit_byte * size + gas.code_deposit_word * words(size)
        state += gas.account_creation_state + gas.code_deposit_state_byte * size
    return execution, state


def check_receipts(block: CalibrationBlock, observed: Sequence[TxObservation], block_gas_used: int,
                   gas: GasCosts) -> None:
    """
    Every receipt and the block's gas used are what the model predicts: a receipt
    charges at least the floor, and EIP-8037's block counts a transaction's
    execution gas (at least its floor) and its state gas apart.
    """
    execution_total = state_total = 0
    for tx in observed:
        if tx.receipt_gas is None:
            continue
        execution, state, floor = predicted_gas(block, tx.purpose, tx.data, gas)
        receipt = max(execution + state, floor)
        _expect(f"gas used by calibration transaction '{tx.purpose}'", tx.receipt_gas, receipt, "its receipt")
        execution_total += max(execution, floor)
        state_total += state
    block_gas = max(execution_total, state_total) if gas.has_state_gas else execution_total
    _expect("block gas used (EIP-8037: the larger of summed execution and state gas)", block_gas_used, block_gas,
            "the calibration block")
