"""
ethrex: how balgen starts it, its modes and its per-block `[METRIC] BLOCK` log (unverified: no ethrex build is run here).

Sources (lambdaclass/ethrex, as stored in balgen's reference index; none of
it was run here):

- the node flags: `cmd/ethrex/cli.rs`, struct `Options` (clap `long = ...`):
  `--network` (a genesis file path), `--datadir`, `--syncmode`,
  `--http.addr/port/api`, `--authrpc.addr/port/jwtsecret`, `--p2p.addr/port`,
  `--discovery.port`, and the BAL switches `--no-bal-parallel-exec`
  ("Disable BAL-driven parallel transaction execution on Amsterdam+ blocks
  (falls back to sequential)"), `--no-bal-prefetch` ("Disable the BAL-driven
  state prefetch warmer thread") and `--no-bal-parallel-trie` ("Disable
  BAL-driven optimistic trie merkleization ... (falls back to streaming
  AccountUpdates from the executor)");
- the per-block log: `crates/blockchain/blockchain.rs`,
  `Blockchain::print_add_block_pipeline_logs`, called after each block is
  stored when `BlockchainOptions.perf_logs_enabled` (true for the L1 node,
  `cmd/ethrex/initializers.rs`): an INFO header
  `[METRIC] BLOCK {number} | {:.3} Ggas/s | {:.2} ms | {} txs | {:.0} Mgas ({}%)`
  and one line per phase (`|- validate:`, `|- exec:`, `|- merkle:` with the
  merkleization left after execution, `|- store:`, `` `- warmer:``); newer
  builds put the block hash after the number, as in the lines captured from
  ethrex runs that `tooling/sync/test_fullsync_metrics.py` (commit 9e7da753)
  quotes.

What the time covers: the header's `ms` runs from the start of `add_block`
to the block stored (validation, execution with the merkleization running
beside it, the merkleization's drain, the store); balgen keeps it as
`total_ms`, the exec phase as `execution_ms`, the merkle drain as
`state_hash_ms` (the part of the root not hidden behind execution) and the
store as `commit_ms`. ethrex logs no state-read phase (its warmer prefetches
beside execution), so `state_read_ms` is 0. A header without a hash names
no block: it is taken for the block just sent (`newPayload` imports one
block at a time).

Its modes: `full` is ethrex's default; `sequential` turns the three BAL
switches off; `nobatchio` only the prefetch (the analogue of batch IO).
Nothing in the log says which path ran, so no mode is proven.
"""

from __future__ import annotations

import re

from ..kind import BlockLog, ClientKind, UncheckedReasons
from ..modes import standard_modes
from ..presets import ClientPreset, Rollback
from ..slow_block_log import ClientBlockTiming
from .geth import GENESIS as GETH_GENESIS

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
    env_prefix="ETHREX_",
    help_command="{bin} --help",
    version_command="{bin} --version",
)

MODES = standard_modes(
    False,
    sequential="--no-bal-parallel-exec --no-bal-prefetch --no-bal-parallel-trie",
    full="",
    nobatchio="--no-bal-prefetch",
)

# -- the [METRIC] BLOCK log -------------------------------------------------------

_HEADER = re.compile(
    r"\[METRIC\] BLOCK (\d+)(?: (0x[0-9a-fA-F]{64}))? \| ([0-9.]+) Ggas/s \| ([0-9.]+) ms \| (\d+) txs \| (\d+) Mgas"
)
_PHASE = re.compile(r"[|`]- (validate|exec|merkle|store|warmer):\s+([0-9.]+) ms")
_LAST_PHASE = "warmer"


def _timing(header: re.Match[str], phases: dict[str, float]) -> ClientBlockTiming:
    """One block's entry from its header and the phase lines that followed it."""
    return ClientBlockTiming(
        block_number=int(header[1]),
        block_hash=(header[2] or "").lower(),
        gas_used=int(header[6]) * 10**6,  # logged rounded to whole Mgas
        execution_ms=phases.get("exec", 0.0),
        state_read_ms=0.0,
        state_hash_ms=phases.get("merkle", 0.0),
        commit_ms=phases.get("store", 0.0),
        total_ms=float(header[4]),
        mgas_per_sec=float(header[3]) * 1000,
    )


def timings(lines: list[str]) -> list[ClientBlockTiming]:
    """The `[METRIC] BLOCK` entries among `lines`, each with the phase lines logged after its header."""
    found = []
    header: re.Match[str] | None = None
    phases: dict[str, float] = {}
    for line in lines:
        if (started := _HEADER.search(line)) is not None:
            if header is not None:
                found.append(_timing(header, phases))
            header, phases = started, {}
        elif header is not None and (phase := _PHASE.search(line)) is not None:
            phases[phase[1]] = float(phase[2])
            if phase[1] == _LAST_PHASE:
                found.append(_timing(header, phases))
                header = None
    if header is not None:
        found.append(_timing(header, phases))
    return found


BLOCK_LOG = BlockLog(
    description="ethrex [METRIC] BLOCK log",
    own_time="[METRIC] BLOCK ms (add_block: validation to store)",
    timings=timings,
    timer_after_intake=False,
)

KIND = ClientKind(
    preset=PRESET,
    version_prefix="ethrex",
    rejection_reasons=UncheckedReasons("no ethrex answer to an invalid BAL was seen here: its INVALID alone is checked"),
    block_log=BLOCK_LOG,
    modes=MODES,
)
