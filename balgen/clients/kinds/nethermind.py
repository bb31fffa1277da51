"""
Nethermind: how balgen starts it and its modes (unverified: no Nethermind build is run here).

Its preset follows how benchmarkoor (`pkg/client/nethermind.go`) and hive
(`clients/nethermind/`) start it, with its chainspec as the genesis file;
its modes are `--Blocks.ParallelExecution` and
`--Blocks.ParallelExecutionBatchRead` (its `IBlocksConfig`). balgen reads no
block log of it (client-side latency only), and does not map its rejection
messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...ethereum.chain_constants import ZERO_HASH
from ...ethereum.forks import MAX_CODE_SIZE, Fork
from ...ethereum.hextypes import data_hex
from ..chain_config import ACTIVATION_BLOCK, ACTIVATION_TIME, MAINNET_DEPOSIT_CONTRACT, geth_blob_schedule
from ..genesis_files import GenesisFormat
from ..kind import ClientKind, UncheckedReasons
from ..modes import standard_modes
from ..presets import SERVER_TIMEOUT_SECONDS, ClientPreset, Rollback

# -- its chainspec ----------------------------------------------------------------
# The translation of the fork's data into a chainspec follows hive's adapter
# (`clients/nethermind/mapper.jq`, July 2026) and ethpandaops'
# ethereum-genesis-generator (`apps/el-gen`, August 2026), key by key.

BLOCK_TRANSITIONS: dict[str, tuple[str, ...]] = {
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


def chainspec_params(fork: Fork, chain_id: int) -> dict[str, Any]:
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
    for names in BLOCK_TRANSITIONS.values():
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


def chainspec_genesis(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The chainspec `genesis` object for the `core.Genesis` header fields."""
    genesis: dict[str, Any] = {
        "seal": {"ethereum": {"nonce": "0x" + int(fields["nonce"], 16).to_bytes(8, "big").hex(), "mixHash": fields["mixHash"]}},
        "difficulty": fields["difficulty"],
        "author": fields["coinbase"],
        "timestamp": fields["timestamp"],
        "parentHash": fields["parentHash"],
        "extraData": fields["extraData"],
        "gasLimit": fields["gasLimit"],
    }
    for key in ("baseFeePerGas", "blobGasUsed", "excessBlobGas"):
        if key in fields:
            genesis[key] = fields[key]
    genesis["parentBeaconBlockRoot"] = data_hex(ZERO_HASH)
    return genesis


def chainspec(fork: Fork, network: str, fields: dict[str, Any], chain_id: int) -> dict[str, Any]:
    """Everything of the chainspec but its accounts: each fork a set of per-EIP transitions, the blob schedule a list."""
    return {
        "name": f"balgen {network}",
        "engine": {"Ethash": {}},
        "params": chainspec_params(fork, chain_id),
        "genesis": chainspec_genesis(fields),
    }


GENESIS = GenesisFormat(
    name="nethermind", file_name="chainspec.json", benchmarkoor_folder="nethermind", top_level=chainspec, alloc_key="accounts"
)

PRESET = ClientPreset(
    name="nethermind",
    genesis_format=GENESIS,
    init_command=None,
    node_command=(
        "{bin} --config none --datadir {datadir} --Init.ChainSpecPath {genesis}"
        " --Init.DiscoveryEnabled false --Init.AutoDump None --Network.MaxActivePeers 0"
        " --Network.ExternalIp 127.0.0.1 --Network.LocalIp 127.0.0.1"
        " --Network.P2PPort {p2p_port} --Network.DiscoveryPort {p2p_port}"
        " --JsonRpc.Enabled true --JsonRpc.Host 127.0.0.1 --JsonRpc.Port {rpc_port}"
        " --JsonRpc.EnabledModules Eth,Web3,Net,Debug --JsonRpc.EngineHost 127.0.0.1"
        " --JsonRpc.EnginePort {engine_port} --JsonRpc.JwtSecretFile {jwt}"
        " --Merge.TerminalTotalDifficulty 0 --HealthChecks.Enabled false"
        # A call's limit (20 s by default) and newPayload's own (7 s, then SYNCING), in ms.
        f" --JsonRpc.Timeout {SERVER_TIMEOUT_SECONDS * 1000}"
        f" --Merge.NewPayloadBlockProcessingTimeout {SERVER_TIMEOUT_SECONDS * 1000}"
    ),
    rollback=Rollback.RESTORE_COPY,
    env_prefix="NETHERMIND_",
    help_command="{bin} --help",
    version_command="{bin} --version",
)

MODES = standard_modes(
    False,
    sequential="--Blocks.ParallelExecution=false --Blocks.ParallelExecutionBatchRead=false",
    full="--Blocks.ParallelExecution=true --Blocks.ParallelExecutionBatchRead=true",
    nobatchio="--Blocks.ParallelExecution=true --Blocks.ParallelExecutionBatchRead=false",
)

KIND = ClientKind(
    preset=PRESET,
    version_prefix="Nethermind",
    rejection_reasons=UncheckedReasons("no Nethermind answer to an invalid BAL was seen here: its INVALID alone is checked"),
    modes=MODES,
    benchmarkoor_client="nethermind",
)
