"""
The forks balgen fills for, and the protocol facts each one fixes.

A fork here is plain data: which header fields exist, which Engine API
versions carry its payloads, which system contracts its genesis needs, the
per-transaction gas cap and the gas costs of the few operations balgen's
contracts use. Gas facts follow go-ethereum v1.17.8 (`params/protocol_params.go`,
`core/vm/gas_table.go`, `core/state_transition.go`) and are checked against the
pinned t8n by the test suite, because a wrong cost shows up as a failed
transaction or a block that misses its gas target.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from .errors import BadInput

TX_GAS_LIMIT_CAP = 2**24
"""EIP-7825 per-transaction gas cap (Osaka and later)."""

MAX_RLP_BLOCK_SIZE = 8_388_608
"""EIP-7934 (Osaka and later): the largest RLP-encoded block (header, transactions, ommers,
withdrawals) a client accepts; go-ethereum's `params.MaxBlockSize`."""

BAL_ITEM_COST = 2000
"""EIP-7928: a block's access list may hold at most `gas_limit // BAL_ITEM_COST` items (addresses
plus storage keys written or read); go-ethereum's `params.BALItemCost`."""

BENCHMARK_BLOCK_GAS_LIMIT = 1_000_000_000_000
"""Block gas limit of every benchmark chain, as execution-spec-tests uses for
benchmark fills, so that one genesis serves every gas value."""


@dataclass(frozen=True)
class GasCosts:
    """Gas costs of the operations balgen's contracts and transactions use."""

    tx_base: int
    """Intrinsic cost of a call transaction without value (before calldata)."""
    tx_create_base: int
    """Intrinsic cost of a contract-creation transaction (before calldata)."""
    calldata_zero_byte: int
    calldata_nonzero_byte: int
    initcode_word: int
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
    """EXTCODESIZE/EXTCODEHASH/EXTCODECOPY on an account not yet accessed (EIP-2929; EIP-8038 on Amsterdam)."""
    code_read: int = 0
    """EIP-8038's extra warm access for the second database read of EXTCODESIZE and EXTCODECOPY."""
    create2_base: int = 32000
    """CREATE2's constant gas (EIP-8038 on Amsterdam: CREATE_ACCESS)."""
    keccak_base: int = 30
    keccak_word: int = 6
    memory_word: int = 3


@dataclass(frozen=True)
class BlobParams:
    """One EIP-7840 blob schedule entry."""

    target: int
    max: int
    base_fee_update_fraction: int


CANCUN_BLOBS = BlobParams(3, 6, 3338477)
PRAGUE_BLOBS = BlobParams(6, 9, 5007716)
BPO1_BLOBS = BlobParams(10, 15, 8346193)
BPO2_BLOBS = BlobParams(14, 21, 11684671)


@dataclass(frozen=True)
class Fork:
    """A fork balgen can fill for, with the facts that shape its blocks."""

    name: str
    new_payload_version: int
    forkchoice_updated_version: int
    has_block_access_list: bool
    has_slot_number: bool
    tx_gas_limit_cap: int | None
    max_code_size: int
    gas: GasCosts
    system_contracts: tuple[str, ...]
    """Keys into `balgen/data/system_contracts.json` the genesis must hold."""
    blob_schedule: dict[str, BlobParams] = field(hash=False)
    max_block_rlp_size: int | None = None
    """EIP-7934's block size limit, from Osaka on."""
    bal_item_cost: int | None = None
    """EIP-7928's gas per access-list item, on forks with block access lists."""

    def max_bal_items(self, gas_limit: int) -> int | None:
        """The most access-list items a block of `gas_limit` may carry (None: no limit)."""
        return None if self.bal_item_cost is None else gas_limit // self.bal_item_cost

    @property
    def predeploys_deterministic_deployer(self) -> bool:
        """EIP-7997 makes the deterministic deployment proxy part of every genesis."""
        return "eip7997" in self.system_contracts

    @property
    def output_name(self) -> str:
        """Lower-case name used in `for_<fork>_at_<gas>M` folders."""
        return self.name.lower()

    def tx_gas_cap(self, block_gas: int) -> int:
        """Largest gas limit one transaction may carry in a block of `block_gas`."""
        if self.tx_gas_limit_cap is None:
            return block_gas
        return min(self.tx_gas_limit_cap, block_gas)

    @property
    def max_tx_gas_limit(self) -> int | None:
        """Largest gas limit a transaction may carry; Amsterdam moves gas above the
        execution cap into the EIP-8037 state-gas reservoir, up to 2^32 - 1."""
        if self.gas.sstore_set_state:
            return 2**32 - 1
        return self.tx_gas_limit_cap

    def intrinsic_gas(self, data: bytes, *, create: bool = False) -> int:
        """Intrinsic gas of a value-less type-2 transaction with `data`."""
        zeros = data.count(0)
        gas = self.gas.tx_create_base if create else self.gas.tx_base
        gas += zeros * self.gas.calldata_zero_byte
        gas += (len(data) - zeros) * self.gas.calldata_nonzero_byte
        if create:
            gas += (len(data) + 31) // 32 * self.gas.initcode_word
        return gas


_LEGACY_GAS = GasCosts(
    tx_base=21000,
    tx_create_base=53000,
    calldata_zero_byte=4,
    calldata_nonzero_byte=16,
    initcode_word=2,
    cold_sload=2100,
    warm_sload=100,
    sstore_update_warm=2900,
    sstore_update_cold=5000,
    sstore_set_cold=22100,
)

# EIP-2780 (intrinsic = 12000 base + 3000 cold recipient), EIP-8038
# (storage write surcharge 10000 on top of the slot access), EIP-8037 (state
# growth paid as state gas at 1530 per byte: 64 per slot, 120 per account).
_AMSTERDAM_GAS = GasCosts(
    tx_base=12000 + 3000,
    tx_create_base=12000 + 12000,
    calldata_zero_byte=4,
    calldata_nonzero_byte=16,
    initcode_word=2,
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
)

PRAGUE = Fork(
    name="Prague",
    new_payload_version=4,
    forkchoice_updated_version=3,
    has_block_access_list=False,
    has_slot_number=False,
    tx_gas_limit_cap=None,
    max_code_size=24576,
    gas=_LEGACY_GAS,
    system_contracts=("eip4788", "eip2935", "eip7002", "eip7251"),
    blob_schedule={"Cancun": CANCUN_BLOBS, "Prague": PRAGUE_BLOBS},
)

OSAKA = Fork(
    name="Osaka",
    new_payload_version=4,
    forkchoice_updated_version=3,
    has_block_access_list=False,
    has_slot_number=False,
    tx_gas_limit_cap=TX_GAS_LIMIT_CAP,
    max_code_size=24576,
    gas=_LEGACY_GAS,
    system_contracts=("eip4788", "eip2935", "eip7002", "eip7251"),
    blob_schedule={"Cancun": CANCUN_BLOBS, "Prague": PRAGUE_BLOBS, "Osaka": PRAGUE_BLOBS},
    max_block_rlp_size=MAX_RLP_BLOCK_SIZE,
)

AMSTERDAM = Fork(
    name="Amsterdam",
    new_payload_version=5,
    forkchoice_updated_version=4,
    has_block_access_list=True,
    has_slot_number=True,
    tx_gas_limit_cap=TX_GAS_LIMIT_CAP,
    max_code_size=65536,
    gas=_AMSTERDAM_GAS,
    system_contracts=(
        "eip4788",
        "eip2935",
        "eip7002",
        "eip7251",
        "eip8282_deposit",
        "eip8282_exit",
        "eip7997",
    ),
    blob_schedule={
        "Cancun": CANCUN_BLOBS,
        "Prague": PRAGUE_BLOBS,
        "Osaka": PRAGUE_BLOBS,
        "BPO1": BPO1_BLOBS,
        "BPO2": BPO2_BLOBS,
        "Amsterdam": BPO2_BLOBS,
    },
    max_block_rlp_size=MAX_RLP_BLOCK_SIZE,
    bal_item_cost=BAL_ITEM_COST,
)

FORKS: dict[str, Fork] = {fork.name: fork for fork in (PRAGUE, OSAKA, AMSTERDAM)}
DEFAULT_FORK = AMSTERDAM


def fork_by_name(name: str) -> Fork:
    """Look a fork up by name, case-insensitively, or say which names exist."""
    for fork in FORKS.values():
        if fork.name.lower() == name.lower():
            return fork
    raise BadInput(f"--fork: unknown fork {name!r} (known: {', '.join(FORKS)})")


@cache
def system_contract_code() -> dict[str, tuple[str, str]]:
    """System contract address and code by key, as go-ethereum's genesis has them."""
    text = resources.files("balgen.data").joinpath("system_contracts.json").read_text()
    contracts = json.loads(text)["contracts"]
    return {key: (entry["address"], entry["code"]) for key, entry in contracts.items()}
