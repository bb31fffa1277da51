"""
Filling: one workload in, its three fixture formats out, checked.

A `FillSession` owns the t8n, a scratch folder and the pre-alloc groups of
one run. Filling a workload builds its chain on its own genesis (for
`blockchain_test` and `blockchain_test_engine`) and again on its group's
shared genesis (for `blockchain_test_engine_x`), reusing the signatures,
checks both, and writes all files under temporary names that are renamed only
once every file of the workload is complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from . import __version__
from .chain.alloc import AllocJson, alloc_json, genesis_accounts, read_alloc, write_alloc
from .chain.header import Header
from .chain.builder import BuiltChain, build_chain, genesis_header, genesis_state_root
from .chain.t8n import TransitionTool
from .analysis import INFO_KEY, DependencyGraph
from .checks import check_chain, check_same_execution, traced_dependency_graph
from .errors import BadInput, FillCheckFailed
from .fixtures.models import BlockchainEngineXFixture, PreAllocGroup, format_dir
from .fixtures.render import blockchain_fixture, engine_fixture, engine_x_fixture, state_diff, with_info
from .forks import Fork
from .generators.catalog import PlannedWorkload
from .workload import BlockSpec, Workload, gas_millions

@dataclass
class PreAllocGroupState:
    """A pre-alloc group as one process knows it once its genesis is built."""

    group_hash: str
    test_ids: list[str]
    alloc_path: Path
    alloc: AllocJson
    genesis: Header
    written: bool = False


def build_own_chain(
    t8n: TransitionTool, workload: Workload, workdir: Path, blocks: Sequence[BlockSpec] | None = None
) -> tuple[AllocJson, BuiltChain]:
    """The workload's genesis alloc (system contracts plus its pre-state) and its chain
    of `blocks` (default: all of the workload's) on it, built in `workdir`."""
    alloc = alloc_json(genesis_accounts(workload.fork, [workload.pre]))
    write_alloc(workdir / "genesis.json", alloc)
    chain = build_chain(
        t8n, workload.fork, workdir / "genesis.json", workload.blocks if blocks is None else blocks, workdir / "own", label=workload.name
    )
    return alloc, chain


def group_hash(test_ids: Sequence[str]) -> str:
    """Deterministic 8-byte id of a group from its sorted test ids (as execution-spec-tests packs groups)."""
    digest = hashlib.sha256("\n".join(sorted(test_ids)).encode()).digest()
    return f"0x{int.from_bytes(digest[:8], 'big'):016x}"


def gas_folder(fork: Fork, gas_value: int, all_gas_values: Sequence[int]) -> str:
    """`for_<fork>_at_<NNNN>M`, zero-padded to the widest gas value of the run."""
    width = max(4, max(len(gas_millions(g)) for g in all_gas_values))
    return f"for_{fork.output_name}_at_{gas_millions(gas_value).zfill(width)}M"


@dataclass(frozen=True)
class FillResult:
    """What filling one workload produced, for summaries and benchmarks."""

    name: str
    tx_count: int
    gas_used: int
    files: tuple[Path, ...]
    t8n_seconds: float
    """Time spent inside t8n for this workload (its own and shared chains, and the trace)."""


@dataclass
class FillSession:
    """Everything one fill run (or one xdist worker of it) shares."""

    t8n: TransitionTool
    output: Path
    all_gas_values: Sequence[int]
    planned: Sequence[PlannedWorkload]
    scratch: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="balgen-fill-")))
    _group: PreAllocGroupState | None = None

    def close(self) -> None:
        """Remove the scratch folder."""
        shutil.rmtree(self.scratch, ignore_errors=True)

    def fill(self, workload: Workload) -> FillResult:
        """Build, check and write every fixture format of `workload`."""
        work = Path(tempfile.mkdtemp(prefix=f"{workload.name}-", dir=self.scratch))
        t8n_before = self.t8n.busy_seconds
        try:
            own_alloc, own = build_own_chain(self.t8n, workload, work)
            check_chain(workload, own)
            graph = traced_dependency_graph(self.t8n, workload, own, work / "traced")
            group = self.pre_alloc_group(workload.fork)
            shared = build_chain(
                self.t8n,
                workload.fork,
                group.alloc_path,
                workload.blocks,
                work / "shared",
                label=workload.name,
                signed=[block.txs for block in own.blocks],
                genesis=group.genesis,
            )
            check_same_execution(workload.fork, own, shared)
            files = self._write(workload, own, own_alloc, shared, group, graph)
            return FillResult(
                name=workload.name,
                tx_count=len(workload.benchmark_block.txs),
                gas_used=own.blocks[-1].header.gas_used,
                files=files,
                t8n_seconds=self.t8n.busy_seconds - t8n_before,
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def pre_alloc_group(self, fork: Fork) -> PreAllocGroupState:
        """The run's shared genesis: system contracts plus every planned workload's pre-state."""
        if self._group is None:
            workloads = []
            for planned in self.planned:
                try:
                    workloads.append(planned.build())
                except FillCheckFailed:
                    # That workload fails its own test; it must not fail every other one.
                    continue
            accounts = genesis_accounts(fork, [w.pre for w in workloads])
            alloc = alloc_json(accounts)
            path = self.scratch / "group" / "genesis.json"
            write_alloc(path, alloc)
            root = genesis_state_root(self.t8n, path, self.scratch / "group" / "root")
            test_ids = sorted(w.name for w in workloads)
            self._group = PreAllocGroupState(
                group_hash=group_hash(test_ids),
                test_ids=test_ids,
                alloc_path=path,
                alloc=alloc,
                genesis=genesis_header(fork, root),
            )
        return self._group

    def _info(self, workload: Workload) -> dict[str, Any]:
        return {
            "filling-transition-tool": self.t8n.version(),
            "generator": f"balgen {__version__}",
            "description": (workload_description(workload)),
            "fixture-name": workload.name,
            "workload": dict(workload.parameters),
        }

    def _write(
        self,
        workload: Workload,
        own: BuiltChain,
        own_alloc: AllocJson,
        shared: BuiltChain,
        group: PreAllocGroupState,
        graph: DependencyGraph,
    ) -> tuple[Path, ...]:
        info = {**self._info(workload), INFO_KEY: graph.info()}
        own_post = read_alloc(own.post_alloc_path)
        changed = accounts_in_access_lists(shared) if workload.fork.has_block_access_list else None
        shared_post = read_alloc(shared.post_alloc_path, only=changed)
        candidates = changed if changed is not None else group.alloc.keys() | shared_post.keys()
        fixtures = [
            blockchain_fixture(workload, own, own_alloc, own_post),
            engine_fixture(workload, own, own_alloc, own_post),
            engine_x_fixture(workload, shared, group.group_hash, state_diff(group.alloc, shared_post, candidates)),
        ]
        folder = gas_folder(workload.fork, workload.gas_benchmark_value, self.all_gas_values)
        pending: list[tuple[Path, str]] = []
        for fixture in fixtures:
            path = (
                self.output
                / format_dir(type(fixture).format_name)  # type: ignore[attr-defined]
                / folder
                / workload.family
                / f"{workload.name}.json"
            )
            pending.append((path, json.dumps({workload.name: with_info(fixture, info)}, indent=4)))
        if not group.written:
            pending.append((self._group_file(group), self._group_json(workload.fork, group)))
        write_all_or_nothing(pending)
        group.written = True
        return tuple(path for path, _ in pending)

    def _group_file(self, group: PreAllocGroupState) -> Path:
        return self.output / format_dir(BlockchainEngineXFixture.format_name) / "pre_alloc" / f"{group.group_hash}.json"

    def _group_json(self, fork: Fork, group: PreAllocGroupState) -> str:
        model = PreAllocGroup(
            test_count=len(group.test_ids),
            pre_account_count=len(group.alloc),
            test_ids=group.test_ids,
            network=fork.name,
            chain_id=1,
            group_hash=group.group_hash,
            genesis=group.genesis.json_with_hash(),
            pre=group.alloc,
        )
        return json.dumps(model.json_dict(), indent=4)


def accounts_in_access_lists(chain: BuiltChain) -> set[str]:
    """Every account the chain's access lists name: the only ones whose state can change."""
    return {"0x" + entry.address.hex() for block in chain.blocks for entry in block.access_list}


def workload_description(workload: Workload) -> str:
    """First paragraph of the generator module's docstring."""
    module = sys.modules.get(f"balgen.generators.{workload.family}")
    doc = (module.__doc__ if module else "") or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def write_all_or_nothing(files: Sequence[tuple[Path, str]]) -> None:
    """
    Write every file under a temporary name, then rename them all.

    If any write fails (full disk, unwritable folder) the temporaries are
    removed and no file of the set appears, so a fixture set is never partial.
    """
    temporaries: list[tuple[Path, Path]] = []
    try:
        for path, text in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            temporaries.append((temporary, path))
            temporary.write_text(text)
    except OSError as error:
        for temporary, _ in temporaries:
            temporary.unlink(missing_ok=True)
        raise BadInput(f"cannot write fixtures to {files[0][0].parent}: {error.strerror or error}") from None
    for temporary, path in temporaries:
        os.replace(temporary, path)

