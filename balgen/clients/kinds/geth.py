"""
go-ethereum (`geth`): how balgen starts it, its modes and their proof, its slow-block log, its rejections.

geth is the reference client: `make tools` builds the pinned release
(`tools/bin/geth`) and `geth-bal-switch` (scripts/geth_bal_switch/), the
v1.17.10 release with `--bal.executionmode`, which a modes run uses.

Its slow-block log: started with `--debug.logslowblock 0`, go-ethereum
(v1.17.8, `core/blockchain_stats.go`, `ExecuteStats.logSlow`) logs one JSON
object per block it executes on its own (`newPayload` imports one block at a
time), as the message of a WARN line:

    WARN [05-10|12:00:00.123] {"level":"warn","msg":"Slow block","block":{"number":2,
        "hash":"0x…","gas_used":…,"tx_count":…},"timing":{"execution_ms":…,
        "state_read_ms":…,"state_hash_ms":…,"commit_ms":…,"total_ms":…},
        "throughput":{"mgas_per_sec":…},"state_reads":{…},"state_writes":{…},"cache":{…}}

`total_ms` is the whole `ProcessBlock` (execution, validation, state root,
database commit): what geth spends on the block once `newPayload` has
decoded it, without the Engine API's JSON decoding, block hashing and HTTP.
`execution_ms` excludes the state reads that go-ethereum counts apart;
`state_hash_ms` is the account/storage trie updates and hashing;
`commit_ms` the trie and database commits. With `--log.format json` the
same object comes as a JSON-quoted `msg`; both forms are read. The entry's
read, write and cache counters are kept too (`block_counts`).

Its modes, as its log shows them (go-ethereum v1.17.10; each condition is
one only that path meets):

- the BAL path logs `Parallel block execution number=N ...` at DEBUG for every
  block it executes in parallel (`core/state_processor_parallel.go:323`,
  `processParallel`); the preset turns DEBUG on for that file alone
  (`--log.vmodule core/state_processor_parallel.go=4`). The sequential path
  never logs it.
- the sequential path fills the slow-block entry's `cache` counters from the
  reader it executes on (`core/blockchain.go:2299`, `setupExecutionState`:
  `StateReadCacheStats` is set only in its sequential branch); on the BAL
  path they stay 0. A sequential block that read any account (every block
  with a transaction) shows hits or misses there.
- geth-bal-switch logs `Executing block in parallel without BAL batch IO`
  before each block it runs in parallel without batch IO (`nobatchio`), and
  nothing of the kind with batch IO (`full`).

A block is `parallel` when its parallel line precedes its entry, and
`sequential` when none does and its read-cache counters are not 0; else its
path is not shown. The read counters (`state_reads`) are no proof: a block
run in parallel counts only the state that applies the list, which can equal
the writes of a sequential one (a slot written and restored, an account
emptied: `core/state/statedb_eip_7928.go`).

geth-bal-switch's fourth mode, `executionless`, executes nothing: it applies the block's access
list to the parent state and checks only the root (scripts/geth_bal_switch/), and logs `Applied block
access list without execution` with the block's whole hash and its apply, hash and commit times after
committing each such block; no other mode logs it. Its counters are the BAL path's and it logs no
parallel line, so only that line proves it, and its absence is part of every executing mode's proof.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...chain.background_state import built_state, overlay_accounts, state_build_tool
from ...chain.builder import genesis_header
from ...ethereum.chain_constants import CHAIN_ID, EMPTY_TRIE_ROOT
from ...ethereum.forks import Fork
from ...ethereum.hextypes import data_hex
from ...fixtures.models import FixtureAccount, FixtureGenesisHeader
from ...model.state_recipe import parse_recipe
from ...plumbing.errors import BadInput
from ...plumbing.toolchain import cache_root
from ..genesis_fields import genesis_header_fields, geth_alloc_account
from ..process import copy_datadir
from ..chain_config import chain_config
from ..genesis_files import GenesisFormat
from ..kind import BlockLog, ClientKind
from ..mode_evidence import ModeProof, required
from ..modes import ClientMode, standard_modes
from ..phase_coverage import PhaseCoverage, PhaseTable
from ..presets import SERVER_TIMEOUT_SECONDS, ClientPreset, Rollback
from ..slow_block_log import ClientBlockTiming, ExecutionlessPhases, ExecutionPath, ParallelPhases, timing_of_entry

CONFIG = f"""\
[Node.HTTPTimeouts]
WriteTimeout = {SERVER_TIMEOUT_SECONDS * 10**9}
"""
"""
geth's HTTP servers, the Engine API's included, answer `-32002 request timed
out` once a call runs 100 ms short of their `WriteTimeout`, 30 s by default
(`rpc.DefaultHTTPTimeouts`), and only a `--config` TOML file sets it (the
keys are `geth dumpconfig`'s, durations in nanoseconds; the file's other
settings keep their defaults). A 1,000M-gas `greedy` block ran past 30 s.
"""



def genesis_top_level(fork: Fork, network: str, fields: dict[str, Any], chain_id: int) -> dict[str, Any]:
    """go-ethereum's `genesis.json` but its alloc: the chain config and the header fields."""
    del network  # the file names no network
    return {"config": chain_config(fork, chain_id), **fields}


GENESIS = GenesisFormat(
    name="geth", file_name="genesis.json", benchmarkoor_folder="go-ethereum", top_level=genesis_top_level, whole_state=True
)
"""go-ethereum's `genesis.json`, which reth (`--chain`), erigon (`init`) and ethrex (`--network`) read too."""


def empty_genesis(fork: Fork) -> dict[str, Any]:
    """
    go-ethereum's genesis document of balgen's benchmark chain for `fork`
    (`chain.builder.genesis_header`'s fields) with an empty alloc: what
    `balgen-state-build` writes a background state's genesis block and
    chain config from, the state root being the state's.
    """
    header = FixtureGenesisHeader.model_validate(genesis_header(fork, EMPTY_TRIE_ROOT).model_dump(by_alias=True))
    return {**genesis_top_level(fork, fork.name, genesis_header_fields(fork.name, header), CHAIN_ID), "alloc": {}}

PRESET = ClientPreset(
    name="geth",
    genesis_format=GENESIS,
    init_command="{bin} init --datadir {datadir} --state.scheme path {genesis}",
    init_relocatable=True,  # pebble's tables and the freezer's files name no path: a copy starts as the original does
    node_command=(
        "{bin} --datadir {datadir} --state.scheme path --syncmode full --nodiscover --nat none"
        " --netrestrict 127.0.0.0/8 --maxpeers 0 --port {p2p_port}"
        " --authrpc.addr 127.0.0.1 --authrpc.port {engine_port} --authrpc.jwtsecret {jwt}"
        " --http --http.addr 127.0.0.1 --http.port {rpc_port} --http.api eth,debug,web3,net --ipcdisable"
        " --debug.logslowblock 0 --config {config}"
        # DEBUG for one file: the line that says a block ran on the BAL path (the proof of a mode).
        " --log.vmodule core/state_processor_parallel.go=4"
    ),
    rollback=Rollback.SET_HEAD,
    env_prefix="GETH_",
    ignores_early_sigint=True,
    stop_acknowledged=b"Got interrupt, shutting down",
    config_file=CONFIG,
    verified="go-ethereum v1.17.8: Prague, Osaka and Amsterdam suites, every check",
    help_command="{bin} --help",
    version_command="{bin} version",
)

DATADIR_LINKABLE = ("*.sst",)
"""The files of a geth datadir geth never changes once written: pebble's sorted tables (it writes new
ones and deletes old ones, never rewrites one), which copies of a built background state share as
hard links; everything else (pebble's log, manifest, the freezers) is copied."""

MODES = standard_modes(
    False,
    sequential="--bal.executionmode=sequential",
    full="--bal.executionmode=full",
    nobatchio="--bal.executionmode=nobatchio",
    executionless="--bal.executionmode=executionless",
)
"""`--bal.executionmode`, as the bal-devnet images had it; the go-ethereum releases have no such flag,
balgen's `geth-bal-switch` build adds it (see docs/replay.md, "Modes"), and a fourth mode no client
has: `executionless`, the access list's post-state applied without executing the block, a benchmark
mode that trusts the list (scripts/geth_bal_switch/README.md)."""

# -- the slow-block log ---------------------------------------------------------

_MARKER = '{"level":"warn","msg":"Slow block"'
_QUOTED_MARKER = json.dumps(_MARKER)[:-1]
NO_BATCH_IO = "Executing block in parallel without BAL batch IO"
"""What geth-bal-switch logs before a block it runs on the BAL path without batch IO
(`--bal.executionmode=nobatchio`); the stock geth and the other modes never log it."""
EXECUTIONLESS = "Applied block access list without execution"
_EXECUTIONLESS = re.compile(
    EXECUTIONLESS + r"\W.*?\bhash\W+(0x[0-9a-fA-F]{64})\b.*?"
    r"\bapply_ms\W+([0-9.]+).*?\bhash_ms\W+([0-9.]+).*?\bcommit_ms\W+([0-9.]+)"
)
"""What geth-bal-switch logs (INFO) after committing a block it applied from its access list without
executing it (`--bal.executionmode=executionless`), naming the block by its whole hash; no other mode
and no stock geth logs it. Read in geth's terminal form (`hash=0x… apply_ms=1.234`) and its JSON form
(`"hash":"0x…","apply_ms":"1.234"`)."""
PARALLEL = "Parallel block execution"
"""What geth logs (DEBUG, `core/state_processor_parallel.go`) after executing a block on the BAL path."""


def _entry_object(line: str) -> dict[str, Any] | None:
    """The slow-block JSON object in a log line, in either log format, or None."""
    start = line.find(_MARKER)
    decoder = json.JSONDecoder()
    try:
        if start >= 0:
            entry, _ = decoder.raw_decode(line, start)
            return entry if isinstance(entry, dict) else None
        start = line.find(_QUOTED_MARKER)
        if start >= 0:
            message, _ = decoder.raw_decode(line, start)
            entry = json.loads(message)
            return entry if isinstance(entry, dict) else None
    except (json.JSONDecodeError, TypeError):
        return None
    return None


_VALUE = r'"?([^"\s]+)"?'
_PARALLEL = re.compile(
    rf"Parallel block execution\s.*?\bsystem={_VALUE}\s+txexec={_VALUE}\s+stateapply={_VALUE}\s+statehash={_VALUE}\s+elapsed={_VALUE}"
)
"""geth's DEBUG line after a block on its BAL path (core/state_processor_parallel.go:323-327), terminal format: values
padded to align, and a value with `µs` quoted (log/format.go:270-289 quotes what is above `~`)."""
_UNITS_MS = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


def _duration_ms(text: str) -> float:
    """A Go duration as `common.PrettyDuration` prints it (`1.234ms`, `812.1µs`, `1m2.5s`), in ms."""
    parts = re.findall(r"([0-9.]+)(ns|µs|us|ms|s|m|h)", text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise ValueError(f"not a Go duration: {text!r}")
    return sum(float(number) * _UNITS_MS[unit] for number, unit in parts)


def parallel_phases(line: str) -> ParallelPhases | None:
    """The phases of geth's `Parallel block execution` DEBUG line; None for any other line."""
    match = _PARALLEL.search(line)
    if match is None:
        return None
    try:
        system, txexec, apply, hashing, elapsed = (_duration_ms(value) for value in match.groups())
    except ValueError:
        return None
    return ParallelPhases(system_ms=system, txexec_ms=txexec, stateapply_ms=apply, statehash_ms=hashing, elapsed_ms=elapsed)


def parse_line(line: str) -> ClientBlockTiming | None:
    """The timing a slow-block log line of geth carries; None for any other line."""
    entry = _entry_object(line)
    return None if entry is None else timing_of_entry(entry)


def executionless_phases(lines: list[str]) -> dict[str, ExecutionlessPhases]:
    """geth-bal-switch's executionless phases of each block hash its lines among `lines` name."""
    phases: dict[str, ExecutionlessPhases] = {}
    for line in lines:
        if (applied := _EXECUTIONLESS.search(line)) is not None:
            apply_ms, hash_ms, commit_ms = (float(applied[i]) for i in (2, 3, 4))
            phases.setdefault(applied[1].lower(), ExecutionlessPhases(apply_ms=apply_ms, hash_ms=hash_ms, commit_ms=commit_ms))
    return phases


def _path(parallel_logged: bool, timing: ClientBlockTiming) -> ExecutionPath | None:
    """The path a block ran on: parallel if its parallel line was logged, sequential if its read cache counted."""
    if parallel_logged:
        return ExecutionPath.BAL
    counts = timing.counts
    if counts is not None and counts.account_cache.hits + counts.account_cache.misses > 0:
        return ExecutionPath.SEQUENTIAL
    return None


def timings(lines: list[str]) -> list[ClientBlockTiming]:
    """
    The slow-block entries among `lines`, each with the path it ran on,
    whether geth-bal-switch logged running it without batch IO, and its
    `Parallel block execution` phases where geth logged that line: those
    lines name the block by its number or an abbreviated hash only, so each
    belongs to the entry that follows it, logged by the same insertion; and
    the phases its executionless line logged for the block, which names it
    by its whole hash.
    """
    found = []
    no_batch_io = parallel_logged = False
    parallel: ParallelPhases | None = None
    applied = executionless_phases(lines)
    for line in lines:
        no_batch_io = no_batch_io or NO_BATCH_IO in line
        parallel_logged = parallel_logged or PARALLEL in line
        parallel = parallel_phases(line) or parallel
        timing = parse_line(line)
        if timing is None:
            continue
        update = {
            "without_batch_io_logged": no_batch_io,
            "parallel": parallel,
            "execution_path": _path(parallel_logged, timing),
            "executionless": applied.get(timing.block_hash),
        }
        found.append(timing.model_copy(update=update))
        no_batch_io = parallel_logged = False
        parallel = None
    return found


BLOCK_LOG = BlockLog(
    description="geth slow-block log",
    own_time="slow-block total_ms",
    timings=timings,
)

# -- the proof of a mode --------------------------------------------------------


def _parallel_seen(timing: ClientBlockTiming) -> bool | None:
    """Whether geth ran the block in parallel, as its entry's path shows; None where it shows neither."""
    return None if timing.execution_path is None else timing.execution_path is ExecutionPath.BAL


def _batch_io_seen(timing: ClientBlockTiming) -> bool | None:
    """Whether a block geth ran in parallel had batch IO (no `without BAL batch IO` line); None otherwise."""
    if timing.without_batch_io_logged is None or timing.execution_path is not ExecutionPath.BAL:
        return None
    return not timing.without_batch_io_logged


def _executed_seen(timing: ClientBlockTiming) -> bool:
    """Whether geth executed the block: no geth-bal-switch `without execution` line names it."""
    return timing.executionless is None


PATH_EVIDENCE = "geth's 'Parallel block execution' line and read-cache counters"


def prove(mode: ClientMode, timings: Sequence[ClientBlockTiming]) -> ModeProof:
    """
    geth's entries of a test's sibling executions checked against what
    `mode` switches; `ModeNotInEffect` where they contradict it or show
    nothing of its path.
    """
    assert mode.switches is not None
    execution = ("execution", mode.switches.execution, f"geth-bal-switch's '{EXECUTIONLESS}' line or its absence", _executed_seen)
    checks = [execution, ("parallel execution", mode.switches.parallel_execution, PATH_EVIDENCE, _parallel_seen)]
    unproven: list[str] = []
    if not mode.switches.execution:
        # Its counters are the BAL path's: only the line tells it from full, and nothing is executed.
        checks = [execution]
        unproven.append("parallel execution and batch IO: nothing is executed")
    elif mode.switches.parallel_execution:
        checks.append(("batch IO", mode.switches.batch_io, "geth's 'without BAL batch IO' line", _batch_io_seen))
    else:
        unproven.append("batch IO off: implied by sequential execution, which never batches")
    proven: list[str] = []
    for what, wanted, shown_by, seen_by in checks:
        proven.append(required(what, wanted, [seen_by(t) for t in timings], shown_by))
    return ModeProof(tuple(proven), tuple(unproven))


# -- what each phase of its slow-block entry covers -------------------------------

_GETH = "go-ethereum v1.17.10"
_COMMIT = PhaseCoverage(
    work="commit",
    covers="the longer of the account and storage trie commits, then the database commit, after validation",
    source="core/blockchain_stats.go:211, core/state/statedb.go:1357,1388,1444",
)
PHASES = PhaseTable(
    version=f"{_GETH} with scripts/geth_bal_switch/geth-bal-switch.patch",
    paths={
        "sequential": {
            "execution": PhaseCoverage(
                work="evm without its reads",
                covers="StateProcessor.Process running the transactions one after the other, less the state reads it counts apart",
                source="core/blockchain.go:2387-2395,2461; core/state_processor.go:68-70 (not the BAL path)",
            ),
            "state read": PhaseCoverage(
                work="execution's reads",
                covers="every account, storage and code read of execution, inside Process",
                source="core/blockchain_stats.go:209; core/state/statedb.go:623, state_object.go:215,563,587",
            ),
            "state hash": PhaseCoverage(
                work="root of execution's writes, after execution",
                covers="ValidateState's IntermediateRoot: trie updates and hashing of what execution wrote, after it",
                source="core/blockchain_stats.go:210; core/block_validator.go:200; core/state/statedb.go:1060,1116,1122",
            ),
            "commit": _COMMIT,
        },
        "parallel": {
            "execution": PhaseCoverage(
                work="parallel execution and the wait for the root",
                covers="processParallel's whole wall time (system calls, the workers and the in-order gather, then the "
                "wait for the root goroutine), less the reads of applying the BAL: root work that outlasts execution is counted here",
                source="core/blockchain.go:2387-2395,2461; core/state_processor_parallel.go:138,271,305",
            ),
            "state read": PhaseCoverage(
                work="reads of applying the BAL",
                covers="only the account and storage reads of applying the BAL to the canonical state, summed over that "
                "goroutine's GOMAXPROCS workers; the transactions' own reads (their ephemeral states) are in no phase",
                source="core/state/statedb_eip_7928.go:37-41,129-131,145,197; core/state_processor_parallel.go:173-177",
                beside="execution",
            ),
            "state hash": PhaseCoverage(
                work="root of the BAL's post-state, beside execution",
                covers="IntermediateRoot over the state the BAL gives, in a goroutine started before the transactions and "
                "timed from its own start while they run; ValidateState's IntermediateRoot then finds nothing left",
                source="core/state_processor_parallel.go:170-183; core/state/statedb.go:1060,1116,1122",
                beside="execution",
            ),
            "commit": _COMMIT,
        },
        "executionless": {
            "execution": PhaseCoverage(
                work="applying the BAL without its reads",
                covers="BlockChain.process of geth-bal-switch: StateDB.ApplyBlockAccessList installing the list's last "
                "values over the parent state, less its account and storage reads; no transaction or system call runs",
                source="geth-bal-switch.patch, core/blockchain_executionless.go (process); core/state/statedb_eip_7928.go:37-41",
            ),
            "state read": PhaseCoverage(
                work="reads of applying the BAL",
                covers="the account and storage reads of applying the BAL, summed over its GOMAXPROCS workers, "
                "with nothing running beside them",
                source="core/state/statedb_eip_7928.go:129-131,145,197",
            ),
            "state hash": PhaseCoverage(
                work="root of the BAL's post-state, alone",
                covers="validateState's IntermediateRoot over the applied state, after applying it, nothing beside it; "
                "the root checked against the header is all that is validated",
                source="geth-bal-switch.patch, core/blockchain_executionless.go (validateState); core/state/statedb.go:1060,1116,1122",
            ),
            "commit": _COMMIT,
        },
    },
    mode_paths={"sequential": "sequential", "full": "parallel", "nobatchio": "parallel", "executionless": "executionless"},
    default_path="parallel",
    notes=(
        "On the parallel path the four phases overlap and do not add up to total_ms (core/blockchain_stats.go:207-213): "
        "only the total is like for like across sequential and parallel.",
        "With --log.vmodule core/state_processor_parallel.go=4 geth also logs 'Parallel block execution' "
        "(core/state_processor_parallel.go:323-327): txexec (the workers and gather), stateapply and statehash "
        "(the root goroutine's two steps), system and elapsed; balgen reads it into own_timing.parallel.",
    ),
)
"""What each phase of geth's slow-block entry covers on its sequential and its BAL (parallel) path."""


# -- rejections -----------------------------------------------------------------

_LIST = r"access list hash mismatch|invalid block access list|invalid merkle root of the block access list"
"""go-ethereum's two messages for a list that is not the block's: the computed list's hash differs
(`core/block_validator.go`), or the list breaks a rule of its own (`bal.BlockAccessList.Validate`); and
geth-bal-switch's `executionless` mode's one: the state the list yields has another root than the
header's (it executes nothing, so that root is all it can refute a list by)."""

REJECTION_REASONS = {
    name: re.compile(pattern)
    for name, pattern in {
        "INVALID_BLOCK_ACCESS_LIST": _LIST,
        "INVALID_BAL_EXTRA_ACCOUNT": _LIST,
        "INVALID_BAL_MISSING_ACCOUNT": _LIST,
        "INVALID_BAL_HASH": r"access list hash mismatch",
        "INVALID_BLOCK_HASH": r"^blockhash mismatch",
        "INCORRECT_BLOCK_FORMAT": r"failed to decode BAL|invalid block access list: .*(order|sorted|empty slot changes)",
        "BLOCK_ACCESS_LIST_GAS_LIMIT_EXCEEDED": r"exceeds size constraint",
    }.items()
}
"""Read off go-ethereum v1.17.8's answers to balgen's `invalid_bal` fixtures and its source."""

KIND = ClientKind(
    preset=PRESET,
    version_prefix="Geth",
    rejection_reasons=REJECTION_REASONS,
    block_log=BLOCK_LOG,
    modes=MODES,
    prove=prove,
    tool="geth",
    modes_tool="geth-bal-switch",
    reference=True,
    phases=PHASES,
    benchmarkoor_client="geth",
)


def background_datadir(
    record: Mapping[str, Any], fork: Fork, accounts: Iterable[tuple[bytes, FixtureAccount]], genesis_hash: str,
    progress: Callable[[str], None] = lambda line: None,
) -> Path:
    """
    A geth datadir whose genesis is the background state `record` names (a
    pre-alloc group's `.background` record) with `accounts` (the group's
    `pre`) put into it, for a replay to copy: the state is built (or found)
    in balgen's cache, copied with its tables hard-linked, and the accounts
    committed over it (`balgen-state-build --overlay`); kept beside the
    state, by genesis hash, and checked to be the genesis the fixtures name.
    """
    recipe = parse_recipe(str(record["recipe"]))
    genesis = empty_genesis(fork)
    state = built_state(recipe, str(record["recipe"]), genesis, cache_root(), progress=progress)
    if state.record["state-root"] != record.get("state-root", state.record["state-root"]):
        raise BadInput(
            f"background state {recipe.hash}: built with root {state.record['state-root']}, the fixtures name "
            f"{record['state-root']} (another generation of the rules?)"
        )
    groups = state.folder / "groups"
    folder = groups / genesis_hash
    if (folder / "genesis-hash").is_file() and (folder / "genesis-hash").read_text() == genesis_hash:
        return folder / "datadir"
    groups.mkdir(exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".building-{genesis_hash[:18]}-", dir=groups))
    try:
        copy_datadir(state.datadir, building / "datadir", DATADIR_LINKABLE)
        alloc = building / "pre.json"
        with alloc.open("w") as stream:
            stream.write("{")
            for index, (address, account) in enumerate(accounts):
                stream.write(("," if index else "") + json.dumps(data_hex(address)) + ":" + json.dumps(geth_alloc_account(account)))
            stream.write("}")
        _, made = overlay_accounts(state_build_tool(), building / "datadir", alloc, genesis, recipe)
        alloc.unlink()
        if "0x" + made.hex() != genesis_hash:
            raise BadInput(
                f"background state {recipe.hash} with the group's pre gives genesis 0x{made.hex()}, "
                f"the fixtures chain from {genesis_hash}"
            )
        (building / "genesis-hash").write_text(genesis_hash)
        shutil.rmtree(folder, ignore_errors=True)
        building.rename(folder)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return folder / "datadir"
