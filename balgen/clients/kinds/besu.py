"""
Besu: how balgen starts it and its modes (unverified: no Besu build is run here).

Its preset follows how benchmarkoor (`pkg/client/besu.go`) and hive
(`clients/besu/`) start it; its modes are the BAL devnet report's flags
(`--Xbal-...`). balgen reads no block log of it (client-side latency only),
and does not map its rejection messages.
"""

from __future__ import annotations

from typing import Any

from ...chain.system_calls import system_address
from ...ethereum.forks import Fork
from ..chain_config import geth_chain_config
from ..genesis_files import GenesisFormat
from ..kind import ClientKind, UncheckedReasons
from ..modes import standard_modes
from ..presets import SERVER_TIMEOUT_SECONDS, ClientPreset, Rollback

# -- its genesis file -------------------------------------------------------------
# geth's layout plus the keys Besu wants on top, following hive's adapter
# (`clients/besu/mapper.jq`, July 2026) and ethpandaops'
# ethereum-genesis-generator (`apps/el-gen`, August 2026).

REQUEST_CONTRACTS: dict[str, str] = {
    "eip7002": "withdrawalRequestContractAddress",
    "eip7251": "consolidationRequestContractAddress",
    "eip8282_deposit": "builderDepositRequestContractAddress",
    "eip8282_exit": "builderExitRequestContractAddress",
}
"""Besu's config key for each request system contract the fork has."""


def besu_chain_config(fork: Fork, chain_id: int) -> dict[str, Any]:
    """Besu's config: geth's keys, an (inactive) ethash section, the request contracts."""
    besu: dict[str, Any] = {"ethash": {}, **geth_chain_config(fork, chain_id=chain_id)}
    for key in fork.system_contracts:
        if key in REQUEST_CONTRACTS:
            besu[REQUEST_CONTRACTS[key]] = "0x" + system_address(key).hex()
    return besu


def genesis_top_level(fork: Fork, network: str, fields: dict[str, Any], chain_id: int) -> dict[str, Any]:
    """Besu's genesis file but its alloc: its config and go-ethereum's header fields."""
    del network  # the file names no network
    return {"config": besu_chain_config(fork, chain_id), **fields}


GENESIS = GenesisFormat(name="besu", file_name="genesis.json", benchmarkoor_folder="besu", top_level=genesis_top_level)

PRESET = ClientPreset(
    name="besu",
    genesis_format=GENESIS,
    init_command=None,
    node_command=(
        "{bin} --data-path={datadir} --genesis-file={genesis} --data-storage-format=BONSAI"
        " --sync-mode=FULL --p2p-enabled=false --discovery-enabled=false --max-peers=0"
        " --rpc-http-enabled=true --rpc-http-host=127.0.0.1 --rpc-http-port={rpc_port}"
        " --rpc-http-api=ETH,NET,WEB3,DEBUG --host-allowlist=127.0.0.1"
        " --engine-rpc-enabled=true --engine-rpc-port={engine_port} --engine-host-allowlist=127.0.0.1"
        " --engine-jwt-secret={jwt}"
        f" --Xhttp-timeout-seconds={SERVER_TIMEOUT_SECONDS}"  # the JSON-RPC servers' limit, 30 s by default
    ),
    rollback=Rollback.SET_HEAD,
    env_prefix="BESU_",
    help_command="{bin} --help",
    version_command="{bin} --version",
)

MODES = standard_modes(
    False,
    sequential="--Xbal-optimization-enabled=false --Xbal-perfect-parallelization-enabled=false --Xbal-trust-state-root=false",
    full="--Xbal-prefetch-reading-enabled=true --Xbal-trust-state-root=true --Xbal-perfect-parallelization-enabled=true",
    nobatchio=(
        "--Xbal-prefetch-reading-enabled=false --bonsai-cache-enabled=true --Xbal-trust-state-root=true"
        " --Xbal-perfect-parallelization-enabled=true"
    ),
)

KIND = ClientKind(
    preset=PRESET,
    version_prefix="besu",
    rejection_reasons=UncheckedReasons("no Besu answer to an invalid BAL was seen here: its INVALID alone is checked"),
    modes=MODES,
    benchmarkoor_client="besu",
)
