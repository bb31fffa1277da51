"""
The forks balgen fills for, and the protocol facts each one fixes.

A fork here is plain data: which header fields exist, which Engine API
versions carry its payloads, which system contracts its genesis needs, the
per-transaction gas cap and the default gas costs (`balgen.gas_costs`; a fill
replaces them with the ones it measures from its t8n, `balgen.calibration`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from .errors import BadInput
from .gas_costs import AMSTERDAM_GAS, LEGACY_GAS, GasCosts

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
        execution cap into the EIP-8037 state-gas reservoir, up to the spec's total cap."""
        if self.gas.has_state_gas:
            return self.gas.tx_gas_limit_total_cap
        return self.tx_gas_limit_cap

    def intrinsic_gas(self, data: bytes, *, create: bool = False) -> int:
        """Intrinsic gas of a value-less type-2 transaction with `data`."""
        return self.gas.intrinsic_gas(data, create=create)


PRAGUE = Fork(
    name="Prague",
    new_payload_version=4,
    forkchoice_updated_version=3,
    has_block_access_list=False,
    has_slot_number=False,
    tx_gas_limit_cap=None,
    max_code_size=24576,
    gas=LEGACY_GAS,
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
    gas=LEGACY_GAS,
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
    gas=AMSTERDAM_GAS,
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
