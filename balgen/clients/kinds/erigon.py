"""
Erigon: how balgen starts it, its modes and its slow-block log (unverified: no Erigon build is run here).

Sources (erigontech/erigon, as stored in balgen's reference index; none of
it was run here):

- the preset follows how benchmarkoor (`pkg/client/erigon.go`) and hive
  (`clients/erigon/`) start it, with geth's genesis format (`erigon init`);
- `--debug.slow-block-threshold 0` logs every block: the flag's test
  `node/cli/slow_block_flag_test.go` (commit a1d07c90, "zero means every
  block"), and the entry `execution/blockmetrics/slowblock.go` (commit
  bbfe425e, `Emit`) writes: a WARN record whose message is go-ethereum's
  slow-block JSON (`{"level":"warn","msg":"Slow block","block":{...},
  "timing":{...},...}`, the cross-client field names), so geth's parser reads
  it. Its `total_ms` is execution + state hash + commit, not wall clock;
  "everything before the Execution stage (headers, bodies, sender recovery)
  sits outside it". Its read/write counters lack geth's `code_bytes` and
  deletion counts, so balgen keeps none of them.

Its modes: the `--exec.*` switches of `cmd/utils/flags.go` (`ExecBatchedIOFlag`,
`ExecSerialFlag`, ...), whose effect `cmd/utils/flags_test.go` (commit
d01383fe, `TestExecPerfFlags_OverrideDbg`) pins: `--exec.batched-io=false`
turns the read-ahead off and sets `dbg.IgnoreBAL` (the access list is not
used for it), `--exec.serial=true` clamps the executor to one worker
(overriding `--exec.workers`); both default to the parallel, batched path.
The BAL devnet spec sheet (ethpandaops, bal-devnet-5) lists the same
switches for Erigon. So `sequential` is `--exec.serial=true
--exec.batched-io=false`, `full` the defaults, `nobatchio`
`--exec.batched-io=false`. `--experimental.bal` (`node/cli/flags.go`,
commit adee8db2, "generate block access list", on by default) and
`--experimental.concurrent-commitment` (`cmd/utils/flags.go`, "concurrent
trie for commitment") do not choose how a list is executed. Nothing in the
slow-block entry says which path ran, so no mode is proven.
"""

from __future__ import annotations

from ..kind import BlockLog, ClientKind, UncheckedReasons
from ..modes import standard_modes
from ..presets import ClientPreset, Rollback
from ..slow_block_log import ClientBlockTiming
from . import geth
from .geth import GENESIS as GETH_GENESIS

PRESET = ClientPreset(
    name="erigon",
    genesis_format=GETH_GENESIS,
    init_command="{bin} init --datadir {datadir} {genesis}",
    node_command=(
        "{bin} --datadir {datadir} --externalcl --nat none --nodiscover --maxpeers 0 --port {p2p_port}"
        " --no-downloader --txpool.disable --private.api.addr= --torrent.port 0"
        " --http --http.addr 127.0.0.1 --http.port {rpc_port} --http.api eth,debug,web3,net"
        " --authrpc.addr 127.0.0.1 --authrpc.port {engine_port} --authrpc.jwtsecret {jwt}"
        " --log.dir.disable --fcu.timeout 0 --debug.slow-block-threshold 0"
    ),
    rollback=Rollback.RESTORE_COPY,
    env_prefix="ERIGON_",
    help_command="{bin} --help",
    version_command="{bin} --version",
)

MODES = standard_modes(
    False,
    sequential="--exec.serial=true --exec.batched-io=false",
    full="",
    nobatchio="--exec.batched-io=false",
)


def timings(lines: list[str]) -> list[ClientBlockTiming]:
    """Erigon's slow-block entries among `lines`: go-ethereum's JSON, without its counters."""
    return [timing.model_copy(update={"counts": None}) for line in lines if (timing := geth.parse_line(line)) is not None]


BLOCK_LOG = BlockLog(
    description="erigon slow-block log",
    own_time="slow-block total_ms (execution + state hash + commit)",
    timings=timings,
)

KIND = ClientKind(
    preset=PRESET,
    version_prefix="erigon",
    rejection_reasons=UncheckedReasons("no Erigon answer to an invalid BAL was seen here: its INVALID alone is checked"),
    block_log=BLOCK_LOG,
    modes=MODES,
    benchmarkoor_client="erigon",
)
