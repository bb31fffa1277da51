"""
ethrex: how balgen starts it (unverified: no ethrex build is run here).

Its preset reads geth's genesis format (`--network FILE`). balgen reads no
block log of it (client-side latency only), and does not map its rejection
messages.
"""

from __future__ import annotations

from ..kind import ClientKind, UncheckedReasons
from .geth import GENESIS as GETH_GENESIS
from ..presets import ClientPreset, Rollback

PRESET = ClientPreset(
    name="ethrex",
    genesis_format=GETH_GENESIS,
    init_command=None,
    node_command=(
        "{bin} --network {genesis} --datadir {datadir} --syncmode full"
        " --http.addr 127.0.0.1 --http.port {rpc_port} --http.api eth,debug,web3,net"
        " --authrpc.addr 127.0.0.1 --authrpc.port {engine_port} --authrpc.jwtsecret {jwt}"
        " --p2p.addr 127.0.0.1 --p2p.port {p2p_port} --discovery.port {p2p_port}"
    ),
    rollback=Rollback.RESTORE_COPY,
)

KIND = ClientKind(
    preset=PRESET,
    version_prefix="ethrex",
    rejection_reasons=UncheckedReasons("no ethrex answer to an invalid BAL was seen here: its INVALID alone is checked"),
)
