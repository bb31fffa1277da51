"""
reth: how balgen starts it, its modes and their proof, its slow-block log, its rejections.

`make tools` unpacks the optimised reth build of `../shared/clients/`
(2.5.1-dev 7b3432d) into `tools/bin/reth`.

Its slow-block log: started with `--engine.slow-block-threshold 0`, reth 2.5
logs the fields of geth's slow-block entry (target `reth::slow_block`) as
`key.sub=value` pairs under geth's names (`block.hash`, `timing.total_ms`,
`state_reads.code`, `cache.account.hits`). It logs a block twice: once
executed (no `timing.commit_ms`: its database commit runs later, in the
background), and again once persisted. Two more lines are joined to a
block's entry:

- `Block added to canonical chain number=N hash=0x… elapsed=…`: the whole
  insertion of the block into reth's tree, which the slow-block timer does
  not cover entirely. On a cache miss reth first allocates a fresh
  cross-block execution cache (`--engine.cross-block-cache-size`, 4,096 MB by
  default) outside that timer: about a second in the unoptimised build,
  a few ms in the release build. It is `insert_ms`, reth's own time for
  the block that a client-side latency is compared with.
- `Executed block via BAL path elapsed=…` or `Executed block elapsed=…`
  (target `engine::tree::payload_validator`, at debug level, which the
  preset switches on for that target alone): whether reth executed the
  block in parallel from its access list or sequentially, `execution_path`.
  That line names no block; it belongs to the slow-block entry after it.

Its modes (checked with `reth node --help` of the build in
`../shared/clients/` and in its logs): `--engine.disable-bal-parallel-execution`,
`--engine.disable-bal-parallel-state-root` (valid only with the first) and
`--engine.disable-bal-batch-io`; `full` is reth's default. Its batch IO
shows in nothing reliable: the slow-block entry's storage-cache hits were
expected to (batch IO reads the access list's slots into that cache), but
reth's transaction prewarming fills the same cache in a race with
execution, so a `sequential` sibling of `mixed_dep-max-group1-1M` found 31
of its 54 slots there and a `full` one 0 (4 reth nodes on a loaded 2-core
machine, 2026-11-27). Nor do its metrics: the batch-IO branch of its BAL
prewarming records `reth_sync_prewarm_bal_slot_iteration_duration` (read in
reth's public source; the 7b3432d tree is not here to cite by line), yet with
`--metrics` its count stayed 0 in `full` over 273 executions of
`mixed_dep-max-group1-1M`, as in `nobatchio` (2026-11-29; `balgen replay
FX --client reth --client-args "--metrics 127.0.0.1:9555" --repeat 300`, then
`curl 127.0.0.1:9555/`). The branch does run (without it reth's state read
doubles: docs/bal-modes.md), so the metric is not recorded on this path: a
finding for reth's team, and no proof of a mode. That part of a mode is not
proven.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...chain.background_state import (
    DISK_MARGIN, EXPORT_SECONDS, estimated_disk_bytes, gigabytes, states_folder, state_build_tool, write_genesis_file,
)
from ...ethereum.forks import Fork
from ...ethereum.hextypes import data_hex
from ...fixtures.models import FixtureAccount
from ...model.state_recipe import StateRecipe, parse_recipe
from ...plumbing import processes
from ...plumbing.errors import BadInput
from ...plumbing.memory_limit import memory_limit
from ...plumbing.toolchain import cache_root
from ..genesis_fields import geth_alloc_account
from ..kind import BlockLog, ClientKind
from ..mode_evidence import ModeProof, required
from ..modes import ClientMode, standard_modes
from ..phase_coverage import PhaseCoverage, PhaseTable
from .geth import GENESIS as GETH_GENESIS
from .geth import empty_genesis
from ..presets import ClientPreset, Rollback
from ..slow_block_log import DURATION_MS, ClientBlockTiming, ExecutionPath, timing_of_entry

PRESET = ClientPreset(
    name="reth",
    genesis_format=GETH_GENESIS,
    init_command=None,
    node_command=(
        "{bin} node --chain {genesis} --datadir {datadir}"
        " --authrpc.addr 127.0.0.1 --authrpc.port {engine_port} --authrpc.jwtsecret {jwt}"
        " --http --http.addr 127.0.0.1 --http.port {rpc_port} --http.api eth,debug,web3"
        " --disable-discovery --nat none --addr 127.0.0.1 --port {p2p_port} --ipcdisable"
        " --log.file.max-files 0 --color never --engine.persistence-threshold 0 --engine.slow-block-threshold 0"
        # No blob pool: a replay sends no transaction to the pool, and with one reth loads its KZG trusted
        # setup in the background at every start, about 3 CPU-s beside the first blocks it is sent (0.15
        # CPU-s in its first 18 s without it, 3.19 with it, 2026-11-29). Payloads are validated without it.
        " --txpool.disable-blobs-support"
        # One debug target: the line that says whether a block ran on the BAL path (the proof of a mode).
        " --log.stdout.filter info,engine::tree::payload_validator=debug"
    ),
    rollback=Rollback.RESTORE_COPY,
    # 7b3432d often aborts when asked to stop (a tokio panic, "Cannot drop a runtime in a context where
    # blocking is not allowed", exit code -6), with SIGINT on a plain node too. With
    # --engine.persistence-threshold 0 it writes each block it makes head to disk as it goes, so what
    # an abort loses shows as a lower head when it starts again: a restart (--cold)
    # goes on when the head is the one expected.
    unclean_stop_checked_by_head=True,
    # reth keeps every block it executed but did not make head in its tree's memory until a block above
    # them is finalized: a replay's siblings, all on one parent, pile up (4 to 8 MiB per 30M sibling,
    # 2026-11-29: one node went from 190 to 610 MiB over 97 siblings). A restart empties the tree.
    resident_restart_bytes=2 * 2**30,
    env_prefix="RETH_",
    verified="reth 2.5.1-dev 7b3432d (unoptimised and release builds): Osaka and Amsterdam suites, every check",
    help_command="{bin} node --help",
    version_command="{bin} --version",
)

SEQUENTIAL_FLAGS = (
    "--engine.disable-bal-parallel-execution --engine.disable-bal-parallel-state-root --engine.disable-bal-batch-io"
)
MODES = standard_modes(True, sequential=SEQUENTIAL_FLAGS, full="", nobatchio="--engine.disable-bal-batch-io")

# -- the slow-block log ---------------------------------------------------------

_MARKER = "reth::slow_block: Slow block "
_INSERTED = re.compile(r"Block added to (?:canonical|fork) chain number=\d+ hash=(0x[0-9a-fA-F]{64}).*? elapsed=([0-9.]+)(ns|µs|us|ms|s)\b")
_EXECUTED = re.compile(r"engine::tree::payload_validator: Executed block( via BAL path)? elapsed=")
_FIELD = re.compile(r'([a-z0-9_.]+)=("(?:[^"\\]|\\.)*"|\S+)')
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def _entry(line: str) -> dict[str, Any] | None:
    """reth's slow-block line as geth's nested entry (its `key.sub=value` fields carry geth's names)."""
    line = _ANSI_ESCAPE.sub("", line)
    start = line.find(_MARKER)
    if start < 0:
        return None
    entry: dict[str, Any] = {}
    for key, value in _FIELD.findall(line, start + len(_MARKER)):
        *parents, leaf = key.split(".")
        node = entry
        for parent in parents:
            child = node.setdefault(parent, {})
            if not isinstance(child, dict):
                return None
            node = child
        node[leaf] = value.strip('"')
    return entry


def parse_line(line: str) -> ClientBlockTiming | None:
    """The timing a slow-block log line of reth carries; None for any other line."""
    entry = _entry(line)
    return None if entry is None else timing_of_entry(entry)


def _insert_times(lines: list[str]) -> dict[str, float]:
    """reth's whole insertion time (ms) of each block hash its `Block added` lines in `lines` name."""
    inserted: dict[str, float] = {}
    for line in lines:
        if (added := _INSERTED.search(_ANSI_ESCAPE.sub("", line))) is not None:
            inserted.setdefault(added[1].lower(), float(added[2]) * DURATION_MS[added[3]])
    return inserted


def _execution_path(line: str) -> ExecutionPath | None:
    """The path an `Executed block` line names; None for any other line."""
    executed = _EXECUTED.search(line)
    if executed is None:
        return None
    return ExecutionPath.BAL if executed[1] else ExecutionPath.SEQUENTIAL


def timings(lines: list[str]) -> list[ClientBlockTiming]:
    """
    The slow-block entries among `lines`, each with its whole insertion time
    (joined by hash) and its execution path: the `Executed block` line names
    no block (its span at that level names only the parent), so it belongs
    to the entry that follows it, logged by the same insertion.
    """
    inserted = _insert_times(lines)
    found = []
    path: ExecutionPath | None = None
    for line in lines:
        path = _execution_path(line) or path
        timing = parse_line(line)
        if timing is None:
            continue
        found.append(timing.model_copy(update={"insert_ms": inserted.get(timing.block_hash), "execution_path": path}))
        path = None
    return found


BLOCK_LOG = BlockLog(
    description="reth slow-block log",
    own_time="'Block added' elapsed (whole insertion)",
    timings=timings,
    logs_insertion=True,
    timer_after_intake=False,
)

# -- the proof of a mode --------------------------------------------------------


def _parallel_seen(timing: ClientBlockTiming) -> bool | None:
    """Whether reth executed the block on its BAL path, as its `Executed block` line says; None without it."""
    return None if timing.execution_path is None else timing.execution_path is ExecutionPath.BAL


def prove(mode: ClientMode, timings: Sequence[ClientBlockTiming]) -> ModeProof:
    """reth's entries of a test's sibling executions checked against what `mode` switches."""
    assert mode.switches is not None
    evidence = "reth's execution path (Executed block [via BAL path])"
    done = required("parallel execution", mode.switches.parallel_execution, [_parallel_seen(t) for t in timings], evidence)
    return ModeProof((done,), (f"batch IO {'on' if mode.switches.batch_io else 'off'}: reth's log does not show it",))


# -- rejections -----------------------------------------------------------------

_LIST = r"block access list hash mismatch|Bal error: (Account|Slot) .* not found in BAL"
"""The computed list's hash differs, or execution needed an account or slot the list lacks."""

REJECTION_REASONS = {
    name: re.compile(pattern)
    for name, pattern in {
        "INVALID_BLOCK_ACCESS_LIST": _LIST,
        "INVALID_BAL_EXTRA_ACCOUNT": r"block access list hash mismatch",
        "INVALID_BAL_MISSING_ACCOUNT": r"block access list hash mismatch|Bal error: Account .* not found in BAL",
        "INVALID_BAL_HASH": r"block access list hash mismatch",
        "INVALID_BLOCK_HASH": r"^block hash mismatch",
        "BLOCK_ACCESS_LIST_GAS_LIMIT_EXCEEDED": r"block access list item cost exceeds gas limit",
    }.items()
}
"""Read off reth's (v1.17.5's Amsterdam) answers to balgen's `invalid_bal` fixtures and its source."""

# -- what each phase of its slow-block entry covers -------------------------------

_VALIDATOR = "crates/engine/tree/src/tree/payload_validator.rs"
_RETH_STATE_HASH = PhaseCoverage(
    work="root work left after execution",
    covers="the wait for the state-root job after execution; its sparse-trie task works during execution "
    "(fed by execution's state updates, or on the BAL path by updates derived from the BAL)",
    source=f"{_VALIDATOR}:17-19,38,817-822",
)
_RETH_COMMIT = PhaseCoverage(
    work="persistence",
    covers="the database commit, logged only once the block is persisted (balgen's entries come before: 0)",
    source="crates/engine/tree/src/tree/mod.rs:2207,3250; crates/node/events/src/node.rs:353",
)
PHASES = PhaseTable(
    version="reth 7b3432d950030875b23c5c4df7c9f53a7caa4868",
    paths={
        "sequential": {
            "execution": PhaseCoverage(
                work="block execution, reads included",
                covers="execute_block's wall time, the transactions one after the other, their state reads included",
                source=f"{_VALIDATOR}:715-731,1058-1088",
            ),
            "state read": PhaseCoverage(
                work="state provider fetch latency",
                covers="the state provider's account, storage and code fetch latency during execution, inside it",
                source=f"{_VALIDATOR}:1609-1611; crates/engine/tree/src/tree/mod.rs:2205-2206",
            ),
            "state hash": _RETH_STATE_HASH,
            "commit": _RETH_COMMIT,
        },
        "parallel": {
            "execution": PhaseCoverage(
                work="block execution, reads included",
                covers="execute_block_bal's wall time, the transactions on the BAL path's workers, their state reads included",
                source=f"{_VALIDATOR}:603,715-731,1101-1111,1160-1181",
            ),
            "state read": PhaseCoverage(
                work="state provider fetch latency",
                covers="the state provider's fetch latency during execution, summed over the BAL path's workers "
                "(it can exceed the wall time it lies in)",
                source=f"{_VALIDATOR}:1609-1611",
            ),
            "state hash": _RETH_STATE_HASH,
            "commit": _RETH_COMMIT,
        },
    },
    mode_paths={"sequential": "sequential", "full": "parallel", "nobatchio": "parallel"},
    default_path="parallel",
    notes=(
        "total_ms is execution plus state hash (crates/engine/tree/src/tree/mod.rs:3250); the state read lies inside execution.",
    ),
)
"""What each phase of reth's slow-block entry covers on its sequential and its BAL path."""


# -- a background state ----------------------------------------------------------

DATADIR_LINKABLE = ("*.sst",)
"""The files of a reth datadir reth never changes once written: RocksDB's sorted tables (it writes new
ones and deletes old ones). Everything else is copied: the state lives in MDBX's `mdbx.dat`, which reth
rewrites in place, and the static files (headers, change sets) are appended to with every block."""

BACKGROUND_NODE_ARGS = ("--debug.skip-genesis-validation",)
"""How a node starts on a datadir built from a background state: its `--chain` file is the group's
genesis without the background (a few accounts, not millions to parse and hash at every start), whose
hash is not the datadir's; reth then trusts the genesis block in its database
(crates/storage/db-common/src/init.rs:235-243, 7b3432d), which `background_datadir` checked."""

GENESIS_BYTES_PER_ACCOUNT = 100
GENESIS_BYTES_PER_SLOT = 135
INIT_MEMORY_PER_GENESIS_BYTE = 3.7
"""What `reth init` of a whole-state genesis file takes, fitted to the `small` preset's (1M accounts,
2M slots, 423 MB of code: a 1.23 GB file, its code as hex; reth's peak resident memory 4.5 GB, its
genesis code holding the parsed alloc, docs/state.md)."""


def genesis_file_bytes(recipe: StateRecipe, workload_slots: int = 0) -> int:
    """
    The size of the whole-state genesis file `reth init` reads for `recipe`,
    estimated from its counts and the `workload_slots` its group's contracts
    get beside them (the recipe's `workload_slots` times the group's accounts
    with code).
    """
    return int(
        recipe.accounts * GENESIS_BYTES_PER_ACCOUNT + (recipe.slots + workload_slots) * GENESIS_BYTES_PER_SLOT
        + 2 * recipe.contracts * recipe.mean_code_bytes
    )  # fmt: skip


def check_init_resources(recipe: StateRecipe, folder: Path, workload_slots: int = 0) -> None:
    """
    `BadInput` naming what is short when `reth init` of `recipe`'s whole
    state, with a group's `workload_slots` generated slots, could not finish
    here: the memory its genesis code holds the alloc in, or the disk for the
    genesis file and the datadir under `folder`.
    """
    file_bytes = genesis_file_bytes(recipe, workload_slots)
    memory = int(file_bytes * INIT_MEMORY_PER_GENESIS_BYTE)
    limit = memory_limit()
    if limit is not None and memory > limit.available:
        raise BadInput(
            f"background state {recipe.inline()}: reth init of it needs about {gigabytes(memory)} of memory "
            f"(reth's genesis code holds the whole state), and balgen may use {limit.describe()}; nothing was built"
        )
    disk = file_bytes + int(estimated_disk_bytes(recipe) * DISK_MARGIN)
    probe = folder
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if disk > free:
        raise BadInput(
            f"background state {recipe.inline()}: reth init of it needs about {gigabytes(disk)} of disk "
            f"(its genesis file and the datadir), and {probe} has {gigabytes(free)} free; nothing was built"
        )


_GENESIS_WRITTEN = re.compile(r"Genesis block written hash=(0x[0-9a-fA-F]{64})")
RECORD = "built.json"


def version_digest(binary: Path) -> str:
    """What a reth datadir depends on beside its state: `reth --version` (version, commit, features, profile), hashed."""
    try:
        completed = processes.run([str(binary), "--version"], deadline=60)
    except OSError as error:
        raise BadInput(f"reth binary {binary}: cannot be run ({error.strerror or error})") from None
    if completed.returncode != 0:
        raise BadInput(f"{binary} --version: exit code {completed.returncode}")
    return hashlib.sha256(completed.stdout.encode()).hexdigest()[:12]


def init_genesis(binary: Path, genesis: Path, datadir: Path) -> str:
    """
    `reth init` of `genesis` (its alloc the whole state) into `datadir`: reth's
    own genesis code writes the state, its tries and the genesis block; the
    genesis hash it reports (`Genesis block written hash=`).
    """
    log = datadir.parent / "reth-init.log"
    command = [str(binary), "init", "--chain", str(genesis), "--datadir", str(datadir), "--log.file.max-files", "0", "--color", "never"]
    with log.open("w") as stream:
        completed = processes.run(command, deadline=EXPORT_SECONDS, stdout=stream, stderr=subprocess.STDOUT)
    text = log.read_text(errors="replace")
    written = _GENESIS_WRITTEN.search(text)
    if completed.returncode != 0 or written is None:
        last = (text.strip().splitlines() or [f"exit code {completed.returncode}"])[-1]
        raise BadInput(f"reth init of {genesis.name}: {last}")
    return written[1].lower()


def background_datadir(
    record: Mapping[str, Any], fork: Fork, accounts: Iterable[tuple[bytes, FixtureAccount]], genesis_hash: str,
    binary: Path, progress: Callable[[str], None] = lambda line: None,
) -> Path:  # fmt: skip
    """
    A reth datadir whose genesis is the background state `record` names (a
    pre-alloc group's `.background` record) with `accounts` (the group's
    `pre`) put into it, for a replay to copy, built by reth's own genesis
    code: a genesis file whose alloc is the recipe's state streamed with the
    group's accounts in their place (`write_genesis_file`), then `reth init`.
    `reth init-state` cannot write this: it takes the genesis block from
    `--chain` and adds a dump's state only at a later block (see
    docs/state.md). Kept in `<cache>/states/reth-<version digest>/<recipe
    hash>/<genesis hash>/`, its record naming the recipe, reth's version and
    the genesis hash reth reported, which must be the fixtures'.
    """
    recipe = parse_recipe(str(record["recipe"]))
    version = version_digest(binary)
    folder = states_folder(cache_root()) / f"reth-{version}" / recipe.hash / genesis_hash
    expected = {"recipe-hash": recipe.hash, "recipe": recipe.inline(), "reth-version": version, "genesis-hash": genesis_hash}
    try:
        found = json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        found = None
    if found == expected:
        return folder / "datadir"
    accounts = list(accounts)
    check_init_resources(recipe, folder, recipe.workload_slots * sum(1 for _, account in accounts if account.code))
    folder.parent.mkdir(parents=True, exist_ok=True)
    for leftover in folder.parent.glob(f".building-{genesis_hash[:18]}-*"):
        # An interrupted build's, if the process that made it is gone (its pid ends the name).
        if not _running(int(leftover.name.rsplit("-", 1)[1])):
            shutil.rmtree(leftover, ignore_errors=True)
    building = folder.parent / f".building-{genesis_hash[:18]}-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    try:
        building.mkdir()
        genesis = building / "genesis.json"
        progress(f"{recipe.inline()}: writing the group's genesis file with the whole state for reth init")
        pre = {data_hex(address): geth_alloc_account(account) for address, account in accounts}
        write_genesis_file(state_build_tool(), recipe, empty_genesis(fork), genesis, pre)
        progress(f"{recipe.inline()}: reth init")
        made = init_genesis(binary, genesis, building / "datadir")
        genesis.unlink()
        if made != genesis_hash:
            raise BadInput(
                f"background state {recipe.hash} with the group's pre: reth init wrote genesis {made}, "
                f"the fixtures chain from {genesis_hash}"
            )
        (building / RECORD).write_text(json.dumps(expected, indent=1) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        building.rename(folder)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return folder / "datadir"


def _running(pid: int) -> bool:
    """Whether a process with this id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


KIND = ClientKind(
    preset=PRESET,
    version_prefix="reth",
    rejection_reasons=REJECTION_REASONS,
    block_log=BLOCK_LOG,
    modes=MODES,
    prove=prove,
    tool="reth",
    phases=PHASES,
    benchmarkoor_client="reth",
)
