"""
The gas rules balgen's schedules need, and the known specs' values of them.

Amsterdam is still moving: go-ethereum v1.17.5 and v1.17.6..v1.17.8 implement
different EIP-8038 prices (see `docs/gas.md`), and a client team benchmarks
the spec its build implements. So a fill does not trust these tables: it
measures the rules from the t8n it is given (`balgen.calibration`) and fills
with what it measured. The tables are what a spec is known to charge; they
name the spec a measurement matches, and serve where no t8n is at hand
(`balgen export`, unit tests).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields, replace

FLOOR_TOKENS_PER_NONZERO_BYTE = 4
"""EIP-7623: a non-zero calldata byte is four floor tokens, a zero byte one."""


@dataclass(frozen=True)
class GasCosts:
    """Gas costs of the operations balgen's contracts and transactions use."""

    spec: str
    """The spec these costs are, as `_info` names it (a table's name, or a measured variant of one)."""
    tx_base: int
    """Intrinsic cost of a call transaction without value (before calldata)."""
    tx_create_base: int
    """Intrinsic cost of a contract-creation transaction (before calldata)."""
    calldata_zero_byte: int
    calldata_nonzero_byte: int
    initcode_word: int
    floor_zero_byte: int
    """EIP-7623/7976 calldata floor per zero byte (on top of the base cost)."""
    floor_nonzero_byte: int
    floor_on_creation_base: bool
    """EIP-2780 anchors a creation's floor to its own intrinsic base, not to the call's."""
    cold_sload: int
    warm_sload: int
    sstore_update_warm: int
    """SSTORE changing a warm, non-zero, not yet written slot to another non-zero value."""
    sstore_update_cold: int
    """The same on a cold slot (the cold access surcharge included)."""
    sstore_set_cold: int
    """SSTORE of a non-zero value into a cold empty slot (execution gas)."""
    sstore_set_state: int = 0
    """EIP-8037 state gas of creating a slot (Amsterdam: 64 bytes at 1530 gas)."""
    account_creation_state: int = 0
    """EIP-8037 state gas of creating an account (Amsterdam: 120 bytes at 1530 gas)."""
    code_deposit_byte: int = 200
    """Execution gas per deployed code byte (before Amsterdam)."""
    code_deposit_word: int = 0
    """Execution gas per 32-byte word of deployed code (Amsterdam hashes it instead)."""
    code_deposit_state_byte: int = 0
    """EIP-8037 state gas per deployed code byte."""
    cold_account_access: int = 2600
    """EXTCODEHASH on an account not yet accessed (EIP-2929; EIP-8038 on Amsterdam)."""
    code_read: int = 0
    """EIP-8038's extra warm access for the second database read of EXTCODESIZE and EXTCODECOPY."""
    create2_base: int = 32000
    """CREATE2's constant gas (EIP-8038 on Amsterdam: CREATE_ACCESS)."""
    keccak_base: int = 30
    keccak_word: int = 6
    memory_word: int = 3
    copy_word: int = 3
    """Per word copied by CODECOPY and EXTCODECOPY."""
    tx_gas_limit_total_cap: int | None = None
    """EIP-8037's cap on a transaction's whole gas limit, execution and state reservoir together
    (None: no cap beyond the execution cap, or no reservoir)."""

    @property
    def has_state_gas(self) -> bool:
        """EIP-8037 prices state growth as a separate dimension."""
        return bool(self.sstore_set_state or self.account_creation_state or self.code_deposit_state_byte)

    def intrinsic_gas(self, data: bytes, *, create: bool = False) -> int:
        """Intrinsic gas of a value-less type-2 transaction with `data`."""
        zeros = data.count(0)
        gas = self.tx_create_base if create else self.tx_base
        gas += zeros * self.calldata_zero_byte
        gas += (len(data) - zeros) * self.calldata_nonzero_byte
        if create:
            gas += words(len(data)) * self.initcode_word
        return gas

    def floor_gas(self, data: bytes, *, create: bool = False) -> int:
        """EIP-7623 (EIP-7976 on Amsterdam) least gas a transaction with `data` is charged."""
        zeros = data.count(0)
        base = self.tx_create_base if create and self.floor_on_creation_base else self.tx_base
        return base + zeros * self.floor_zero_byte + (len(data) - zeros) * self.floor_nonzero_byte

    def memory_expansion(self, size: int) -> int:
        """Cost of growing memory from nothing to `size` bytes."""
        count = words(size)
        return self.memory_word * count + count * count // 512

    def named(self, spec: str) -> GasCosts:
        """The same costs under another spec name."""
        return replace(self, spec=spec)

    def rules(self) -> dict[str, int | None]:
        """Every cost by field name, the spec name left out."""
        return {key: value for key, value in asdict(self).items() if key != "spec"}

    def rules_hash(self) -> str:
        """A short digest of the costs, so that two fixtures can be told to share their rules."""
        text = json.dumps(self.rules(), sort_keys=True, separators=(",", ":"))
        return "0x" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def first_difference(self, other: GasCosts) -> str | None:
        """'name: a vs b' of the first cost that differs, or None."""
        for item in fields(self):
            if item.name == "spec":
                continue
            mine, theirs = getattr(self, item.name), getattr(other, item.name)
            if mine != theirs:
                return f"{item.name}: {mine} vs {theirs}"
        return None


def words(size: int) -> int:
    """32-byte words covering `size` bytes."""
    return (size + 31) // 32


LEGACY_GAS = GasCosts(
    spec="Cancun-Osaka",
    tx_base=21000,
    tx_create_base=53000,
    calldata_zero_byte=4,
    calldata_nonzero_byte=16,
    initcode_word=2,
    floor_zero_byte=10,
    floor_nonzero_byte=10 * FLOOR_TOKENS_PER_NONZERO_BYTE,
    floor_on_creation_base=False,
    cold_sload=2100,
    warm_sload=100,
    sstore_update_warm=2900,
    sstore_update_cold=5000,
    sstore_set_cold=22100,
)

# EIP-2780 (intrinsic = 12000 base + 3000 cold recipient, or 12000 + CREATE_ACCESS
# for a creation), EIP-8038 (storage write surcharge 10000 on top of the slot
# access), EIP-8037 (state growth paid as state gas at 1530 per byte: 64 per
# slot, 120 per account, 1 per code byte), EIP-7976 (floor of 16 gas per token,
# 4 tokens per byte, zero or not). go-ethereum v1.17.6 to v1.17.10
# (`params/protocol_params.go`: ColdStorageAccessAmsterdam 2100,
# CreateAccessAmsterdam 12000; MaxTxTotalGas 2^32 - 1 in `core/state_transition.go`).
AMSTERDAM_GAS = GasCosts(
    spec="Amsterdam (go-ethereum v1.17.6-v1.17.10)",
    tx_base=12000 + 3000,
    tx_create_base=12000 + 12000,
    calldata_zero_byte=4,
    calldata_nonzero_byte=16,
    initcode_word=2,
    floor_zero_byte=16 * FLOOR_TOKENS_PER_NONZERO_BYTE,
    floor_nonzero_byte=16 * FLOOR_TOKENS_PER_NONZERO_BYTE,
    floor_on_creation_base=True,
    cold_sload=2100,
    warm_sload=100,
    sstore_update_warm=100 + 10000,
    sstore_update_cold=2100 + 10000,
    sstore_set_cold=2100 + 10000,
    sstore_set_state=64 * 1530,
    account_creation_state=120 * 1530,
    code_deposit_byte=0,
    code_deposit_word=6,
    code_deposit_state_byte=1530,
    cold_account_access=3000,
    code_read=100,
    create2_base=12000,
    tx_gas_limit_total_cap=2**32 - 1,
)

# go-ethereum v1.17.5's earlier EIP-8038 prices: COLD_STORAGE_ACCESS 3000 (cold
# SLOAD and the cold part of SSTORE), CREATE_ACCESS = ACCOUNT_WRITE 8000 +
# COLD_STORAGE_ACCESS 3000 = 11000 (CREATE2 and a creation's intrinsic base);
# no cap on the whole gas limit (MaxTxTotalGas came with v1.17.6).
AMSTERDAM_V1_17_5_GAS = replace(
    AMSTERDAM_GAS,
    spec="Amsterdam (go-ethereum v1.17.5)",
    tx_create_base=12000 + 11000,
    cold_sload=3000,
    sstore_update_cold=3000 + 10000,
    sstore_set_cold=3000 + 10000,
    create2_base=11000,
    tx_gas_limit_total_cap=None,
)
