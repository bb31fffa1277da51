"""
The forks balgen fills for, and the protocol facts each one fixes.

A fork here is plain data: the upgrades it is made of, each with the blob
schedule entry it sets, its EIPs, the system contracts it adds and the Engine
API versions it brings; and its default gas costs
(`balgen.ethereum.gas_costs`; a fill replaces them with the ones it measures from its
t8n, `balgen.calibration`). Every other fork fact is derived from these once:
the limits from the EIPs in force, the blob schedule of fixtures and client
configs from the upgrades (`balgen.clients.chain_config`), and the header
fields, each of which says from which upgrade on it exists
(`balgen.chain.header`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..plumbing.errors import BadInput
from .gas_costs import AMSTERDAM_GAS, AMSTERDAM_V1_17_5_GAS, LEGACY_GAS, GasCosts

TX_GAS_LIMIT_CAP = 2**24
"""EIP-7825 per-transaction gas cap."""

MAX_RLP_BLOCK_SIZE = 8_388_608
"""EIP-7934: the largest RLP-encoded block (header, transactions, ommers,
withdrawals) a client accepts; go-ethereum's `params.MaxBlockSize`."""

MAX_CODE_SIZE = 24_576
"""EIP-170: the largest contract code a creation may leave."""

EIP7954_MAX_CODE_SIZE = 65_536
"""EIP-7954 (Amsterdam): the raised code size limit."""

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


@dataclass(frozen=True)
class Upgrade:
    """
    One timestamp-activated network upgrade from Shanghai on: the steps a
    fork is made of. A client chain config switches each one on by name;
    the pre-merge block forks and Paris are the same for every fork here and
    belong to the config formats (`balgen.clients.chain_config`).
    """

    name: str
    blobs: BlobParams | None = None
    """The EIP-7840 blob schedule entry it sets; None: the previous one stays."""
    eips: tuple[int, ...] = ()
    """Its execution-layer EIPs, as a client switches them one by one (a Nethermind chainspec's
    `eip<N>TransitionTimestamp`; hive's mapper, July 2026)."""
    system_contracts: tuple[str, ...] = ()
    """Keys into `balgen/ethereum/system_contracts.json` of the system contracts it adds to the genesis
    that a block's system calls run."""
    predeploys: tuple[str, ...] = ()
    """Keys into `balgen/ethereum/system_contracts.json` of the contracts it adds to the genesis that no
    system call runs: only transactions change them."""
    new_payload_version: int | None = None
    """The `engine_newPayloadVN` its payloads need from it on; None: the previous one stays."""
    forkchoice_updated_version: int | None = None
    """The `engine_forkchoiceUpdatedVN` its chains need from it on; None: the previous one stays."""


UPGRADES: tuple[Upgrade, ...] = (
    Upgrade("Shanghai", eips=(3651, 3855, 3860, 4895), new_payload_version=2, forkchoice_updated_version=2),
    Upgrade(
        "Cancun",
        BlobParams(3, 6, 3338477),
        eips=(4844, 4788, 1153, 5656, 6780),
        system_contracts=("eip4788",),
        new_payload_version=3,
        forkchoice_updated_version=3,
    ),
    Upgrade(
        "Prague",
        BlobParams(6, 9, 5007716),
        eips=(2537, 2935, 6110, 7002, 7251, 7685, 7702, 7623),
        system_contracts=("eip2935", "eip7002", "eip7251"),
        new_payload_version=4,
    ),
    Upgrade("Osaka", eips=(7594, 7823, 7825, 7883, 7918, 7951, 7939, 7934)),
    Upgrade("BPO1", BlobParams(10, 15, 8346193)),
    Upgrade("BPO2", BlobParams(14, 21, 11684671)),
    Upgrade(
        "Amsterdam",
        eips=(2780, 7708, 7778, 7843, 7928, 7954, 7976, 7981, 7997, 8024, 8037, 8038, 8246, 8282),
        system_contracts=("eip8282_deposit", "eip8282_exit"),
        predeploys=("eip7997",),
        new_payload_version=5,
        forkchoice_updated_version=4,
    ),
)
"""Every upgrade in activation order; blob parameters as go-ethereum v1.17.8's
`params.Default*BlobConfig`."""


def upgrades_through(name: str) -> tuple[Upgrade, ...]:
    """The upgrades up to and including `name`: what a chain running it has switched on."""
    names = [upgrade.name for upgrade in UPGRADES]
    return UPGRADES[: names.index(name) + 1]


@dataclass(frozen=True)
class Fork:
    """A fork balgen can fill for, with the facts that shape its blocks."""

    upgrades: tuple[Upgrade, ...]
    """The upgrades it runs, in activation order, ending with its own."""
    gas: GasCosts
    earlier_gas: tuple[GasCosts, ...] = ()
    """The gas tables of earlier versions of the fork's spec that a t8n may still implement,
    newest first: calibration names the one it measures (`balgen.calibration`)."""

    @property
    def known_gas(self) -> tuple[GasCosts, ...]:
        """Every gas table balgen knows for the fork, the default (newest) first."""
        return (self.gas, *self.earlier_gas)


    @property
    def name(self) -> str:
        """The fork's name, as fixtures' `network` and the t8n spell it."""
        return self.upgrades[-1].name

    def includes(self, upgrade: str) -> bool:
        """Whether a chain on this fork has `upgrade` switched on (`Upgrade.name`)."""
        if upgrade not in {known.name for known in UPGRADES}:
            raise ValueError(f"{upgrade!r} is no upgrade of balgen.ethereum.forks.UPGRADES")
        return any(own.name == upgrade for own in self.upgrades)

    def has_eip(self, number: int) -> bool:
        """Whether EIP-`number` is in force on this fork (one of its upgrades' `eips`)."""
        return any(number in upgrade.eips for upgrade in self.upgrades)

    @property
    def new_payload_version(self) -> int:
        """The `engine_newPayloadVN` that delivers its payloads."""
        return self._latest_version("new_payload_version")

    @property
    def forkchoice_updated_version(self) -> int:
        """The `engine_forkchoiceUpdatedVN` its chains take."""
        return self._latest_version("forkchoice_updated_version")

    def _latest_version(self, method: str) -> int:
        """An Engine API method's version: the latest one of the fork's upgrades sets."""
        return next(getattr(u, method) for u in reversed(self.upgrades) if getattr(u, method) is not None)

    @property
    def system_contracts(self) -> tuple[str, ...]:
        """Keys into `balgen/ethereum/system_contracts.json` the genesis must hold: every upgrade's
        system contracts and predeploys."""
        return tuple(key for upgrade in self.upgrades for key in (*upgrade.system_contracts, *upgrade.predeploys))

    @property
    def system_called_contracts(self) -> tuple[str, ...]:
        """Keys into `balgen/ethereum/system_contracts.json` of the contracts a block's system calls run."""
        return tuple(key for upgrade in self.upgrades for key in upgrade.system_contracts)

    @property
    def tx_gas_limit_cap(self) -> int | None:
        """EIP-7825's per-transaction gas cap, or None before it."""
        return TX_GAS_LIMIT_CAP if self.has_eip(7825) else None

    @property
    def max_block_rlp_size(self) -> int | None:
        """EIP-7934's block size limit, or None before it."""
        return MAX_RLP_BLOCK_SIZE if self.has_eip(7934) else None

    @property
    def max_code_size(self) -> int:
        """The largest code a creation may leave: EIP-7954's, or EIP-170's before it."""
        return EIP7954_MAX_CODE_SIZE if self.has_eip(7954) else MAX_CODE_SIZE

    @property
    def bal_item_cost(self) -> int | None:
        """EIP-7928's gas per access-list item, or None on forks without block access lists."""
        return BAL_ITEM_COST if self.has_eip(7928) else None

    @property
    def blob_schedule(self) -> dict[str, BlobParams]:
        """
        The blob parameters in force at each upgrade from Cancun on, by name,
        as fixtures' `config.blobSchedule` lists them: an upgrade that sets
        none carries the previous entry over.
        """
        schedule: dict[str, BlobParams] = {}
        current: BlobParams | None = None
        for upgrade in self.upgrades:
            current = upgrade.blobs or current
            if current is not None:
                schedule[upgrade.name] = current
        return schedule

    def max_bal_items(self, gas_limit: int) -> int | None:
        """The most access-list items a block of `gas_limit` may carry (None: no limit)."""
        return None if self.bal_item_cost is None else gas_limit // self.bal_item_cost

    @property
    def predeploys_deterministic_deployer(self) -> bool:
        """EIP-7997 makes the deterministic deployment proxy part of every genesis."""
        return self.has_eip(7997)

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


PRAGUE = Fork(upgrades_through("Prague"), gas=LEGACY_GAS)
OSAKA = Fork(upgrades_through("Osaka"), gas=LEGACY_GAS)
AMSTERDAM = Fork(upgrades_through("Amsterdam"), gas=AMSTERDAM_GAS, earlier_gas=(AMSTERDAM_V1_17_5_GAS,))

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
    text = resources.files("balgen.ethereum").joinpath("system_contracts.json").read_text()
    contracts = json.loads(text)["contracts"]
    return {key: (entry["address"], entry["code"]) for key, entry in contracts.items()}
