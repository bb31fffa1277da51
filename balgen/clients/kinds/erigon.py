"""
Erigon: how balgen starts it (unverified: no Erigon build is run here).

Its preset follows how benchmarkoor (`pkg/client/erigon.go`) and hive
(`clients/erigon/`) start it, with geth's genesis format (`erigon init`).
balgen reads no block log of it (client-side latency only), and does not
map its rejection messages.
"""

from __future__ import annotations

from ..kind import ClientKind, UncheckedReasons
from .geth import GENESIS as GETH_GENESIS
from ..presets import ClientPreset, Rollback

PRESET = ClientPreset(
    name="erigon",
    genesis_format=GETH_GENESIS,
    init_command="{bin} init --datadir {datadir} {genesis}",
    node_command=(
        "{bin} --datadir {datadir} --externalcl --nat none --nodiscover --maxpeers 0 --port {p2p_port}"
        " --no-downloader --txpool.disable --private.api.addr= --torrent.port 0"
        " --http --http.addr 127.0.0.1 --http.port {rpc_port} --http.api eth,debug,web3,net"
        " --authrpc.addr 127.0.0.1 --authrpc.port {engine_port} --authrpc.jwtsecret {jwt}"
        " --log.dir.disable --fcu.timeout 0"
    ),
    rollback=Rollback.RESTORE_COPY,
    env_prefix="ERIGON_",
)

KIND = ClientKind(
    preset=PRESET,
    version_prefix="erigon",
    rejection_reasons=UncheckedReasons("no Erigon answer to an invalid BAL was seen here: its INVALID alone is checked"),
)
