"""
A background state built from its recipe into go-ethereum's database, once, and kept in a cache named by the recipe's hash.

`balgen-state-build` (scripts/state_build, go-ethereum's own trie and
database code) generates the recipe's accounts and slots in hashed-key order
and writes them as a geth datadir whose genesis state they are. A build of
tens of millions of accounts takes tens of minutes and gigabytes, so:

- it is built once per recipe and generation rules, into
  `<cache>/states/<recipe hash>/`, and reused while its record (`built.json`)
  names the same recipe, rules, builder and genesis;
- it is built in a folder of its own (`.building-<hash>-<pid>`) that is
  renamed into place only once the builder has finished and the record is
  written: an interrupted build leaves nothing a later run takes for
  complete, and the next build of that recipe removes what it left;
- a recipe whose estimated size does not fit the free disk is refused
  before anything is written, naming the space it needs.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..model.state_recipe import GENERATION, StateRecipe
from ..plumbing import processes
from ..plumbing.go_tools import go_tool_environment
from ..plumbing.errors import BadInput
from ..plumbing.toolchain import required_tool
from .state_roots import Background

STATE_BUILD_TOOL = "balgen-state-build"
RECORD = "built.json"
"""The record of a complete build, written last inside the build folder before it is renamed into place."""
INFO_KEY = "background-state"
"""The `_info` member of an engine_x fixture whose genesis is its group's `pre` put into a background
state (`balgen fill --state`, `BuiltState.description`): the group's `pre` alone does not give its genesis."""
DATADIR = "datadir"
"""The go-ethereum datadir inside a built state's folder (the database itself is its `geth/chaindata`)."""

DISK_BYTES_PER_ACCOUNT = 250
DISK_BYTES_PER_SLOT = 140
DISK_BYTES_FIXED = 40 * 2**20
"""The disk a built state takes beside its code, per account and per slot: a flat-state entry, a trie
node stored under its path and a share of the branch nodes above it (docs/state.md has the builds they
are fitted to); the fixed part is pebble's write-ahead log and the freezers' files."""
DISK_MARGIN = 1.25
"""A build is refused unless the free disk holds its estimate this many times over (pebble's compactions
write a level's data anew before they remove the old)."""


def state_build_tool() -> Path:
    """The `balgen-state-build` binary on balgen's tool search path."""
    return required_tool(STATE_BUILD_TOOL, "build it with scripts/install-tools.sh")


def estimated_disk_bytes(recipe: StateRecipe) -> int:
    """The disk `recipe`'s geth datadir takes, estimated from its counts."""
    return int(
        DISK_BYTES_FIXED
        + recipe.accounts * DISK_BYTES_PER_ACCOUNT
        + recipe.slots * DISK_BYTES_PER_SLOT
        + recipe.contracts * recipe.mean_code_bytes
    )


def gigabytes(size: int) -> str:
    return f"{size / 1e9:.1f} GB"


def check_free_disk(recipe: StateRecipe, folder: Path, name: str, reclaimable: int = 0) -> None:
    """`BadInput` naming the space `recipe` needs when `folder`'s file system has too little free
    (beside `reclaimable` bytes the build will remove first)."""
    needed = estimated_disk_bytes(recipe)
    probe = folder
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free + reclaimable
    if needed * DISK_MARGIN > free:
        raise BadInput(
            f"state {name} needs about {gigabytes(needed)} of disk ({gigabytes(int(needed * DISK_MARGIN))} "
            f"free while it builds), and {probe} has {gigabytes(free)} free; nothing was built"
        )


@dataclass(frozen=True)
class BuiltState:
    """A background state as built: the geth datadir holding it, its genesis, and what the build took."""

    recipe: StateRecipe
    folder: Path
    record: Mapping[str, Any]

    @property
    def datadir(self) -> Path:
        return self.folder / DATADIR

    @property
    def state_root(self) -> bytes:
        return bytes.fromhex(self.record["state-root"][2:])

    @property
    def genesis_hash(self) -> bytes:
        return bytes.fromhex(self.record["genesis-hash"][2:])

    @property
    def background(self) -> Background:
        """What `balgen-state-root` puts a group's accounts into: this state, with the recipe's workload slots."""
        return Background(self.datadir, self.recipe.workload_slots, self.recipe.seed)

    def description(self) -> dict[str, Any]:
        """What a fixture over this state says of it: enough to build the same state elsewhere."""
        return {
            "recipe": self.recipe.inline(),
            "recipe-hash": self.recipe.hash,
            "generation": GENERATION,
            "state-root": self.record["state-root"],
            "accounts": self.record["accounts"],
            "slots": self.record["slots"],
        }


def load_built(folder: Path, workload_slots: int = 0) -> BuiltState:
    """The state built in `folder` (a `built_state` folder), from its record, its recipe with `workload_slots`
    (which the build does not record: `built_state`); `BadInput` if it has none."""
    try:
        record = json.loads((folder / RECORD).read_text())
        recipe = StateRecipe(**{**record["recipe"], "workload_slots": workload_slots})
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise BadInput(f"{folder}: not a built background state ({error})") from None
    return BuiltState(recipe, folder, record)


def genesis_digest(genesis: Mapping[str, Any]) -> str:
    """What a built state's record names its genesis by: sha256 of the genesis document's canonical JSON."""
    return hashlib.sha256(json.dumps(genesis, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def builder_version(tool: Path) -> str:
    """The builder's identity (`--version`): its generation rules and the go-ethereum whose database it writes."""
    try:
        completed = processes.run([str(tool), "--version"], deadline=60)
    except OSError as error:
        raise BadInput(f"{tool}: cannot be run ({error.strerror or error})") from None
    identity = completed.stdout.strip()
    if completed.returncode != 0 or not identity.startswith(f"{STATE_BUILD_TOOL} generation"):
        raise BadInput(f"{tool} --version: {identity or completed.stderr.strip() or completed.returncode}")
    if f"generation {GENERATION}," not in identity:
        raise BadInput(f"{tool}: {identity}, balgen reads recipes as generation {GENERATION} (run make tools)")
    return identity


def states_folder(cache: Path) -> Path:
    return cache / "states"


def read_built(folder: Path, recipe: StateRecipe, genesis: Mapping[str, Any], builder: str) -> BuiltState | None:
    """The state built in `folder`, if its record says it is `recipe`'s, under these rules, builder and genesis."""
    try:
        record = json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        return None
    expected = {
        "recipe-hash": recipe.hash,
        "generation": GENERATION,
        "genesis": genesis_digest(genesis),
        "builder": builder,
    }
    if any(record.get(key) != value for key, value in expected.items()):
        return None
    return BuiltState(recipe, folder, record)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created): one build of a recipe at a time, across processes."""
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def tree_bytes(folder: Path) -> int:
    """The bytes of every file under `folder` (what it takes on disk, near enough: pebble's files are large)."""
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file() and not path.is_symlink())


def built_state(
    recipe: StateRecipe,
    name: str,
    genesis: Mapping[str, Any],
    cache: Path,
    *,
    tool: Path | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> BuiltState:
    """
    `recipe`'s state as a geth datadir whose genesis is `genesis` (a geth
    genesis document with an empty alloc), from the cache or built now.
    `name` is how messages call the recipe (a preset's name or its inline form);
    `progress` is given the builder's progress lines. The build, its folder
    and its record are of the recipe without its workload slots (which only
    a group's pre-state gets): one build serves every value of it.
    """
    full, recipe = recipe, recipe.built_part()
    tool = tool or state_build_tool()
    builder = builder_version(tool)
    states = states_folder(cache)
    folder = states / recipe.hash
    found = read_built(folder, recipe, genesis, builder)
    if found is not None:
        return BuiltState(full, found.folder, found.record)
    leftovers = lambda: list(states.glob(f".building-{recipe.hash}-*")) + ([folder] if folder.exists() else [])
    check_free_disk(recipe, states, name, sum(tree_bytes(path) for path in leftovers()))
    states.mkdir(parents=True, exist_ok=True)
    with _locked(states / f"{recipe.hash}.lock"):
        found = read_built(folder, recipe, genesis, builder)
        if found is not None:
            return BuiltState(full, found.folder, found.record)  # another process built it while this one waited
        for leftover in leftovers():
            # An interrupted build's (never complete), or one under other rules or another genesis.
            shutil.rmtree(leftover, ignore_errors=True)
        building = states / f".building-{recipe.hash}-{os.getpid()}"
        try:
            building.mkdir()
            record = _run_builder(tool, recipe, genesis, building, progress)
            record.update(
                {
                    "recipe-hash": recipe.hash,
                    "generation": GENERATION,
                    "recipe": recipe.builder_json(),
                    "genesis": genesis_digest(genesis),
                    "builder": builder,
                    "disk-bytes": tree_bytes(building / DATADIR),
                }
            )
            (building / RECORD).write_text(json.dumps(record, indent=1) + "\n")
            building.rename(folder)
        finally:
            shutil.rmtree(building, ignore_errors=True)
    return BuiltState(full, folder, record)


def _run_builder(
    tool: Path, recipe: StateRecipe, genesis: Mapping[str, Any], building: Path, progress: Callable[[str], None]
) -> dict[str, Any]:
    """Run the builder into `building/geth`; its summary, with its wall time and peak memory."""
    job = building / "job.json"
    job.write_text(
        json.dumps(
            {
                "generation": GENERATION,
                "recipe": recipe.builder_json(),
                "genesis": genesis,
                "datadir": str(building / DATADIR),
            }
        )
    )
    started = time.monotonic()
    process = processes.start(
        [str(tool), str(job)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=go_tool_environment()
    )
    try:
        assert process.stderr is not None and process.stdout is not None
        last = ""
        for raw in process.stderr:
            last = raw.decode(errors="replace").strip()
            progress(last.removeprefix(f"{STATE_BUILD_TOOL}: "))
        output = process.stdout.read()
        # wait4 gives the builder's own peak memory (the maximum resident set size), which
        # Popen.wait would discard.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    finally:
        processes.stop_group(process)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    if process.returncode != 0:
        raise BadInput(
            f"{tool}: {last.removeprefix(f'{STATE_BUILD_TOOL}: ') or f'exit code {process.returncode}'}"
        )
    summary = json.loads(output)
    summary.update(
        {
            "wall-seconds": round(time.monotonic() - started, 1),
            "cpu-seconds": round(usage.ru_utime + usage.ru_stime, 1),
            "peak-memory-bytes": usage.ru_maxrss * 1024,
        }
    )
    job.unlink()
    return summary


def overlay_accounts(
    tool: Path, datadir: Path, alloc: Path, genesis: Mapping[str, Any], recipe: StateRecipe
) -> tuple[bytes, bytes]:
    """
    Put the accounts of the allocation at `alloc` (t8n's JSON, as a pre-alloc
    group's `pre`), each that has code with `recipe`'s workload slots,
    into the built state at `datadir` (a copy: it is changed) and make that
    its genesis (`balgen-state-build --overlay`: each storage trie streamed
    into geth's database in hash order, as the builder writes the recipe's,
    so memory stays bounded whatever the workload slots); the new state root
    and genesis hash.
    """
    job = datadir.parent / f"{datadir.name}-overlay.json"
    job.write_text(json.dumps({"datadir": str(datadir), "alloc": str(alloc), "genesis": genesis, "recipe": recipe.builder_json()}))
    try:
        completed = processes.run([str(tool), "--overlay", str(job)], deadline=OVERLAY_SECONDS, env=go_tool_environment())
    except processes.DeadlineExceeded as error:
        raise BadInput(f"{tool} --overlay: {error}") from None
    finally:
        job.unlink(missing_ok=True)
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or [f"exit code {completed.returncode}"])[-1]
        raise BadInput(f"{tool} --overlay: {last.removeprefix(f'{STATE_BUILD_TOOL}: ')}")
    answer = json.loads(completed.stdout)
    return bytes.fromhex(answer["state-root"][2:]), bytes.fromhex(answer["genesis-hash"][2:])


OVERLAY_SECONDS = 3600.0
"""An overlay writes the group's accounts and the paths above them: seconds, but pebble may compact first."""


def _export_accounts(tool: Path, recipe: StateRecipe, how: str, stream: IO[str], alloc: Path | None = None) -> None:
    """
    Stream the recipe's accounts onto `stream` with `balgen-state-build
    --export-alloc` or `--export-jsonl` (`how`); with `alloc` (an allocation
    file, for --export-alloc) its accounts first, with their workload slots,
    in place of the recipe's at their addresses; `BadInput` with the tool's
    last line if it fails.
    """
    job = Path(stream.name).parent / f"{Path(stream.name).name}.job.json"
    request = {"generation": GENERATION, "recipe": recipe.builder_json(), "datadir": ""}
    job.write_text(json.dumps(request | ({"alloc": str(alloc)} if alloc is not None else {})))
    try:
        stream.flush()
        completed = processes.run(
            [str(tool), how, str(job)], deadline=EXPORT_SECONDS, stdout=stream, text=True, env=go_tool_environment()
        )
    finally:
        job.unlink(missing_ok=True)
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or [f"exit code {completed.returncode}"])[-1]
        raise BadInput(f"{tool} {how}: {last.removeprefix(f'{STATE_BUILD_TOOL}: ')}")


@contextmanager
def _written_atomically(path: Path) -> Iterator[IO[str]]:
    """A text stream onto a hidden file beside `path`, renamed to `path` only when the block ends without an error."""
    partial = path.parent / f".{path.name}.partial"
    try:
        with partial.open("w") as stream:
            yield stream
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def write_genesis_file(
    tool: Path, recipe: StateRecipe, genesis: Mapping[str, Any], path: Path,
    accounts: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:  # fmt: skip
    """
    Write `genesis` (a geth genesis document with an empty alloc) with the
    recipe's whole state as its alloc to `path`, atomically: the generator
    streams the accounts (`balgen-state-build --export-alloc`), so a client
    elsewhere starts from the same state and genesis hash without balgen.
    `accounts` (geth alloc entries by 0x address) take the place of the
    recipe's at their addresses, each that has code with the recipe's
    workload slots, as `overlay_accounts` puts a group's `pre` into the
    built state.
    """
    with _written_atomically(path) as stream:
        top = {key: value for key, value in genesis.items() if key != "alloc"}
        stream.write(json.dumps(top, indent=1)[:-2] + ',\n "alloc": {')
        extra = None
        if accounts:
            extra = path.parent / f".{path.name}.accounts.json"
            extra.write_text(json.dumps(accounts, separators=(",", ":")))
        try:
            _export_accounts(tool, recipe, "--export-alloc", stream, extra)
        finally:
            if extra is not None:
                extra.unlink(missing_ok=True)
        stream.write("\n}}\n")


def write_reth_dump(tool: Path, recipe: StateRecipe, state_root: bytes, path: Path) -> None:
    """
    Write the recipe's state to `path` as the JSON-lines dump `reth
    init-state` reads, atomically: `{"root": ...}` (`state_root`, the root
    geth's build of it gives) on the first line, then one account a line
    (`address`, `balance`, `nonce`, `code`, `storage`), streamed by the
    generator (`balgen-state-build --export-jsonl`) in the recipe's order.
    """
    with _written_atomically(path) as stream:
        stream.write(json.dumps({"root": "0x" + state_root.hex()}, separators=(",", ":")) + "\n")
        _export_accounts(tool, recipe, "--export-jsonl", stream)


EXPORT_SECONDS = 24 * 3600.0
"""Writing a state of tens of millions of accounts as JSON takes minutes to hours; only a hang meets this."""
