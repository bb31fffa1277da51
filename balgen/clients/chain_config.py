"""
A fork's chain configuration in each client's format, derived from the
fork's upgrades (`balgen.ethereum.forks`).

The geth-style config is, field for field, the one go-ethereum's own
blockchain-test runner uses for that fork name (`tests/init.go`, table
`Forks`, in v1.17.8): every block fork and every upgrade of the fork active
from genesis, and a blob schedule entry for each upgrade that sets one.
The other formats translate the same fork data in their client's module
(`balgen/clients/kinds/`).
"""

from __future__ import annotations

from typing import Any

from ..ethereum.chain_constants import CHAIN_ID
from ..plumbing.errors import BadInput
from ..ethereum.forks import FORKS, BlobParams, Fork

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
