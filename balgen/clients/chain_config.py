"""
A fork's chain configuration in each client's format, derived from the
fork's upgrades (`balgen.ethereum.forks`).

The geth-style config is, field for field, the one go-ethereum's own
blockchain-test runner uses for that fork name (`tests/init.go`, table
`Forks`, in v1.17.8): every block fork and every upgrade of the fork active
from genesis, and a blob schedule entry for each upgrade that sets one.
Nethermind's chainspec `params` and Besu's config are translations of the
same fork data, key by key, following the mappings hive's client adapters
(`clients/nethermind/mapper.jq`, `clients/besu/mapper.jq`, July 2026) and
ethpandaops' ethereum-genesis-generator (`apps/el-gen`, August 2026) apply.
"""

from __future__ import annotations

from typing import Any

from ..ethereum.chain_constants import CHAIN_ID
from ..plumbing.errors import BadInput
from ..ethereum.forks import FORKS, MAX_CODE_SIZE, BlobParams, Fork
from ..chain.system_calls import system_address

MAINNET_DEPOSIT_CONTRACT = "0x00000000219ab540356cBB839Cbe05303d7705Fa"
"""`params.MainnetChainConfig.DepositContractAddress`, which the test configs reuse."""

ACTIVATION_BLOCK = 0
ACTIVATION_TIME = 0
"""Every block fork and every upgrade of the fork is active from the genesis block on, and
the merge is done at difficulty 0, as in `tests.Forks`."""

GENESIS_BLOCK_FORKS = (
    "homesteadBlock",
    "eip150Block",
    "eip155Block",
    "eip158Block",
    "byzantiumBlock",
    "constantinopleBlock",
    "petersburgBlock",
    "istanbulBlock",
    "muirGlacierBlock",
    "berlinBlock",
    "londonBlock",
    "arrowGlacierBlock",
    "mergeNetsplitBlock",
)
"""The block-numbered forks every post-merge entry of `tests.Forks` activates at
block 0, in `params.ChainConfig` field order. DAO and Gray Glacier are
deliberately absent: the table leaves them unset for these forks."""

NETHERMIND_BLOCK_TRANSITIONS: dict[str, tuple[str, ...]] = {
    "eip150Block": ("eip150",),
    "eip155Block": ("eip155",),
    "eip158Block": ("eip160", "eip161abc", "eip161d", "maxCodeSize"),
    "byzantiumBlock": ("eip140", "eip211", "eip214", "eip658"),
    "constantinopleBlock": ("eip145", "eip1014", "eip1052"),
    "petersburgBlock": ("eip1283", "eip1283Disable"),
    "istanbulBlock": ("eip152", "eip1108", "eip1344", "eip1884", "eip2028", "eip2200"),
    "berlinBlock": ("eip2565", "eip2718", "eip2929", "eip2930"),
    "londonBlock": ("eip1559", "eip3238", "eip3529", "eip3541", "eip3198"),
}
"""The block forks of a geth config as the `<name>Transition` block numbers of
a chainspec (hive's nethermind mapper)."""

BESU_REQUEST_CONTRACTS: dict[str, str] = {
    "eip7002": "withdrawalRequestContractAddress",
    "eip7251": "consolidationRequestContractAddress",
    "eip8282_deposit": "builderDepositRequestContractAddress",
    "eip8282_exit": "builderExitRequestContractAddress",
}
"""Besu's config key for each request system contract the fork has."""


def network_fork(network: str) -> Fork:
    """The fork a fixture's `network` names, or `BadInput` naming the ones balgen has a config for."""
    try:
        return FORKS[network]
    except KeyError:
        raise BadInput(f"network {network!r}: no geth chain config for it (known: {', '.join(FORKS)})") from None


def config_name(upgrade_name: str) -> str:
    """An upgrade's name in a client config: `cancun` of `cancunTime` and of the blob schedule."""
    return upgrade_name.lower()


def geth_blob_entry(params: BlobParams) -> dict[str, int]:
    """The object go-ethereum's `params.BlobConfig` unmarshals."""
    return {"target": params.target, "max": params.max, "baseFeeUpdateFraction": params.base_fee_update_fraction}


def geth_blob_schedule(fork: Fork) -> dict[str, BlobParams]:
    """The blob schedule of a geth config: only the upgrades that set an entry (the others inherit)."""
    return {config_name(upgrade.name): upgrade.blobs for upgrade in fork.upgrades if upgrade.blobs is not None}


def geth_chain_config(fork: Fork, *, chain_id: int = CHAIN_ID) -> dict[str, Any]:
    """
    The `params.ChainConfig` JSON go-ethereum's test runner uses for `fork`.

    `chain_id` exists for fixtures filled with another chain id; left at its
    default the result is exactly the `tests.Forks` entry.
    """
    config: dict[str, Any] = {"chainId": chain_id}
    config.update((name, ACTIVATION_BLOCK) for name in GENESIS_BLOCK_FORKS)
    config.update((f"{config_name(upgrade.name)}Time", ACTIVATION_TIME) for upgrade in fork.upgrades)
    config["terminalTotalDifficulty"] = ACTIVATION_BLOCK
    config["depositContractAddress"] = MAINNET_DEPOSIT_CONTRACT
    config["blobSchedule"] = {name: geth_blob_entry(params) for name, params in geth_blob_schedule(fork).items()}
    return config


def chain_config(fork: Fork, chain_id: int) -> dict[str, Any]:
    """The geth-style config, plus the merge flag erigon reads (geth ignores it)."""
    config = geth_chain_config(fork, chain_id=chain_id)
    config["terminalTotalDifficultyPassed"] = True
    return config


def nethermind_params(fork: Fork, chain_id: int) -> dict[str, Any]:
    """
    The chainspec `params` for `fork`: the block forks at 0, each upgrade's
    EIPs at their activation time, and the blob parameters in force there
    (all upgrades start together, so the last one that sets them wins).
    """
    params: dict[str, Any] = {
        "chainID": hex(chain_id),
        "networkID": hex(chain_id),
        "gasLimitBoundDivisor": "0x400",
        "maximumExtraDataSize": "0x20",
        "minGasLimit": "0x1388",
        "maxCodeSize": hex(MAX_CODE_SIZE),  # EIP-170's; the EIP-7954 transition raises it
        "registrar": "0x" + "00" * 20,
        "terminalTotalDifficulty": hex(ACTIVATION_BLOCK),
        "depositContractAddress": MAINNET_DEPOSIT_CONTRACT,
    }
    for names in NETHERMIND_BLOCK_TRANSITIONS.values():
        params.update((f"{name}Transition", hex(ACTIVATION_BLOCK)) for name in names)
    params["MergeForkIdTransition"] = hex(ACTIVATION_BLOCK)
    for upgrade in fork.upgrades:
        params.update((f"eip{eip}TransitionTimestamp", hex(ACTIVATION_TIME)) for eip in upgrade.eips)
    in_force = list(geth_blob_schedule(fork).values())[-1]
    params["blobSchedule"] = [
        {
            "timestamp": hex(ACTIVATION_TIME),
            "target": hex(in_force.target),
            "max": hex(in_force.max),
            "baseFeeUpdateFraction": hex(in_force.base_fee_update_fraction),
        }
    ]
    return params


def besu_config(fork: Fork, chain_id: int) -> dict[str, Any]:
    """Besu's config: geth's keys, an (inactive) ethash section, the request contracts."""
    besu: dict[str, Any] = {"ethash": {}, **geth_chain_config(fork, chain_id=chain_id)}
    for key in fork.system_contracts:
        if key in BESU_REQUEST_CONTRACTS:
            besu[BESU_REQUEST_CONTRACTS[key]] = "0x" + system_address(key).hex()
    return besu
