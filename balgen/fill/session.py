"""
Filling: one workload in, its fixtures out (each format `fixtures.render` declares), checked.

A `FillSession` owns the t8n, a scratch folder and the pre-alloc group of
one run (`pre_alloc_groups`). Filling a workload builds its chain on its own genesis (for
`blockchain_test` and `blockchain_test_engine`) and again on its group's
shared genesis (for `blockchain_test_engine_x`), reusing the signatures,
checks both, and writes all files under temporary names that are renamed only
once every file of the workload is complete.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from .. import __version__
from ..chain.alloc import (
    fixture_alloc, genesis_entries, iter_alloc, iter_alloc_among, iter_alloc_packing, iter_fixture_alloc, state_diff,
    system_accounts, system_called_addresses, write_alloc_entries, write_sorted_alloc,
)
from ..chain.header import has_block_access_list
from ..chain.applied_chain import AppliedGenesis, apply_blocks
from ..chain.bal import access_list_changers
from ..chain.background_state import INFO_KEY as BACKGROUND_INFO_KEY, BuiltState
from ..chain.state_roots import Background, StateRoots, state_root_tool
from ..chain.builder import BuiltChain, build_chain
from ..chain.t8n import TransitionTool
from ..analysis import ACCESS_TRACER, INFO_KEY, DependencyGraph
from ..chain.invalid_block import CorruptionImpossible, invalid_twin
from .checks import (
    BlockTouches, access_list_items, check_chain, check_same_execution, check_transaction_gas_caps, genesis_dependence,
    traced_dependency_graph,
)
from ..plumbing.errors import BadInput, FillCheckFailed
from ..fixtures.render import RENDERERS, FilledChains, RejectedBlock, fixture_file_chunks, with_streamed_lists
from ..plumbing.spooled_json import RenderedValues
from ..plumbing.streamed_json import StreamedObject
from ..model.test_ids import INFO_KEY as TEST_ID_KEY, eest_test_id
from ..ethereum.forks import Fork
from ..model.family import PlannedWorkload
from ..generators.catalog import family_by_name
from .pre_alloc_groups import (
    PreAllocGroupState, background_file, group_file, group_json, joins_shared_group, own_pre_alloc_group,
    take_group_genesis,
)
from ..model.workload import BlockSpec, Workload, gas_millions


def build_own_chain(
    t8n: TransitionTool,
    workload: Workload,
    workdir: Path,
    blocks: Sequence[BlockSpec] | None = None,
    shares_group: bool = True,
) -> BuiltChain:
    """The chain of `blocks` (default: all of the workload's) on the workload's own genesis
    (system contracts plus its pre-state, written one account at a time), built in `workdir`,
    every block traced by the access tracer in the run that builds it: the benchmark block's
    traces are the traced check's, every block's the shared chain's proof (`genesis_dependence`).
    The chain of a workload that does not join the shared group (`shares_group` False) is its
    group's own, so only its benchmark block is traced."""
    genesis = workdir / "genesis.json"
    write_alloc_entries(genesis, genesis_entries(workload.fork, workload.pre_accounts()))
    return build_chain(
        t8n,
        workload.fork,
        genesis,
        workload.blocks if blocks is None else blocks,
        workdir / "own",
        label=workload.name,
        tracer=ACCESS_TRACER,
        trace_last_only=not shares_group,
    )


def gas_folder(fork: Fork, gas_benchmark_value: int, all_gas_values: Sequence[int]) -> str:
    """`for_<fork>_at_<NNNN>M`, zero-padded to the widest gas value of the run."""
    width = max(4, max(len(gas_millions(g)) for g in all_gas_values))
    return f"for_{fork.output_name}_at_{gas_millions(gas_benchmark_value).zfill(width)}M"


@dataclass(frozen=True)
class FillResult:
    """What filling one workload produced, for summaries and benchmarks."""

    name: str
    tx_count: int
    gas_used: int
    files: tuple[Path, ...]
    t8n_seconds: float
    """Time spent inside t8n for this workload (its own and shared chains)."""
    one_pass_seconds: float
    """t8n's time for one pass over the blocks: the setup blocks and the traced benchmark block
    (the own chain, whose benchmark block is traced as it is built), the least any fill with a
    traced check must spend."""
    one_pass_cpu_seconds: tuple[float, float]
    """The CPU time of that pass: t8n's own (user) and the kernel's for it (system)."""
    stages: dict[str, float]
    """Wall seconds of each stage of the fill (own chain, checks, group genesis, shared chain, write)."""


@dataclass
class StageClock:
    """Wall time, and t8n's wall and CPU time (its own, the kernel's), per stage of one fill, for the speed benchmark."""

    t8n: TransitionTool
    seconds: dict[str, float] = field(default_factory=dict)
    t8n_usage: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    """t8n's (wall, user, system) seconds per stage."""

    def _t8n_counters(self) -> tuple[float, float, float]:
        return self.t8n.busy_seconds, self.t8n.user_seconds, self.t8n.system_seconds

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started, t8n_before = time.perf_counter(), self._t8n_counters()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
            so_far = self.t8n_usage.get(name, (0.0, 0.0, 0.0))
            wall, user, system = (
                total + after - before for total, after, before in zip(so_far, self._t8n_counters(), t8n_before)
            )
            self.t8n_usage[name] = (wall, user, system)


@dataclass
class FillSession:
    """Everything one fill run (or one xdist worker of it) shares."""

    t8n: TransitionTool
    output: Path
    all_gas_values: Sequence[int]
    planned: Sequence[PlannedWorkload]
    scratch: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="balgen-fill-")))
    """Removed by `close`; the plugin puts it inside the run's scratch folder, which it removes too."""
    staging: Path | None = None
    """Where files are written before they are renamed into `output`: the run's, shared by
    its workers and removed by the plugin; by default one of this session's own."""
    group_folder: Path | None = None
    """Where the pre-alloc group's genesis is built once for every worker of the run (the
    plugin's run scratch folder, shared by its workers); by default in this session's scratch."""
    state_root_bin: Path | None = None
    """`balgen-state-root` (by default found on the tool search path when first needed)."""
    background: BuiltState | None = None
    """A built background state (`balgen fill --state`) the run's shared genesis is put into: the engine_x
    chains run over it, their roots from go-ethereum's trie over its database."""
    _group: PreAllocGroupState | None = None
    _group_roots: StateRoots | None = None
    """`balgen-state-root` over the group genesis, when this process built it: kept for `applied_genesis`."""
    _applied_genesis: AppliedGenesis | None = None

    @property
    def staging_folder(self) -> Path:
        return self.staging or self.output / f".{self.scratch.name}"

    def close(self) -> None:
        """Stop the group's state-root tool; remove the scratch folder, and the staging folder if it is this session's own."""
        if self._group_roots is not None:
            self._group_roots.close()
        if self._applied_genesis is not None:
            self._applied_genesis.roots.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
        if self.staging is None:
            shutil.rmtree(self.staging_folder, ignore_errors=True)

    def fill(self, workload: Workload, test_function: str) -> FillResult:
        """
        Build, check and write every fixture format of `workload`, filled by the
        pytest test `test_function` (`fillers/test_x.py::test_x`), which names
        the fixtures' EEST-style test ids.
        """
        work = Path(tempfile.mkdtemp(prefix=f"{workload.name}-", dir=self.scratch))
        clock = StageClock(self.t8n)
        try:
            check_transaction_gas_caps(workload)
            shares_group = joins_shared_group(workload, self.background is not None)
            if shares_group:
                with clock.stage("group genesis"):
                    self.start_pre_alloc_group(workload.fork)
            with clock.stage("own chain"):
                own = build_own_chain(self.t8n, workload, work, shares_group=shares_group)
            with clock.stage("checks"):
                check_chain(workload, own)
                # What the shared chain's proof needs of the benchmark block's traces, gathered as they are read.
                benchmark_touches = BlockTouches(system_called_addresses(workload.fork)) if shares_group else None
                graph = traced_dependency_graph(workload, own, benchmark_touches)
            if not shares_group:
                # Its own group: the genesis is the one just built, so the chain is built once.
                group, shared = own_pre_alloc_group(workload, own), own
            else:
                with clock.stage("group genesis"):
                    group = self.pre_alloc_group(workload.fork)
                with clock.stage("shared chain"):
                    gathered = {len(own.blocks) - 1: benchmark_touches} if benchmark_touches is not None else None
                    shared = self.shared_chain(workload, own, group, work / "shared", gathered)
            with clock.stage("write"):
                files = self._write(workload, own, shared, group, graph, test_function, work)
            return FillResult(
                name=workload.name,
                tx_count=len(workload.benchmark_block.txs),
                gas_used=own.blocks[-1].header.gas_used,
                files=files,
                t8n_seconds=sum(wall for wall, _, _ in clock.t8n_usage.values()),
                one_pass_seconds=clock.t8n_usage["own chain"][0],
                one_pass_cpu_seconds=clock.t8n_usage["own chain"][1:],
                stages=clock.seconds,
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def shared_chain(
        self,
        workload: Workload,
        own: BuiltChain,
        group: PreAllocGroupState,
        workdir: Path,
        gathered: Mapping[int, BlockTouches] | None = None,
    ) -> BuiltChain:
        """
        `own`'s blocks on the group genesis: applied from their state changes
        when they provably execute the same there (`genesis_dependence`, with
        what the checks `gathered` of some blocks' traces), otherwise executed
        again and compared with `own` (a difference names why the blocks were
        not applied).
        """
        fork = workload.fork
        reason = None
        if has_block_access_list(fork):
            reason = genesis_dependence(fork, own, group.alloc_path, gathered)
            if reason is None:
                applied_genesis = self.applied_genesis(fork, group)
                return apply_blocks(self.t8n, fork, own, applied_genesis, workdir, label=workload.name)
        if self.background is not None:
            # t8n would execute the blocks on the group's accounts alone, without the background state.
            raise FillCheckFailed(
                f"--state: the shared chain cannot be applied over the background state, only executed "
                f"({reason or 'the fork has no block access lists'})"
            )
        shared = build_chain(
            self.t8n,
            fork,
            group.alloc_path,
            workload.blocks,
            workdir,
            label=workload.name,
            signed=[block.txs for block in own.blocks],
            genesis=group.genesis,
        )
        try:
            check_same_execution(fork, own, shared)
        except FillCheckFailed as error:
            if reason is None:
                raise
            raise FillCheckFailed(f"{error} (executed, not applied: {reason})") from None
        return shared

    def applied_genesis(self, fork: Fork, group: PreAllocGroupState) -> AppliedGenesis:
        """The group genesis as blocks are applied to it, its trie loaded once per session."""
        if self._applied_genesis is None:
            roots = self._group_roots or StateRoots(self._state_root_bin(), group.alloc_path, self._background_datadir)
            self._group_roots = None  # the builder's trie is the applied genesis's now
            try:
                self._applied_genesis = AppliedGenesis.load(fork, group.genesis, group.alloc_path, roots)
            except BaseException:
                roots.close()
                raise
        return self._applied_genesis

    def pre_alloc_group(self, fork: Fork) -> PreAllocGroupState:
        """
        The run's shared genesis: system contracts plus every planned small workload's pre-state.

        Building it means building every planned workload, so the first worker
        of the run to take the group folder's lock builds it into
        `group_folder`, and every other worker waits for it and reads it from there.
        """
        if self._group is None:
            self._take_pre_alloc_group(fork, wait=True)
        assert self._group is not None
        return self._group

    def start_pre_alloc_group(self, fork: Fork) -> None:
        """
        Build the run's shared genesis now if no other worker is building it:
        a worker whose first workload's own chain is ready before the genesis
        then waits for the worker that builds it instead of building it again.
        """
        if self._group is None:
            self._take_pre_alloc_group(fork, wait=False)

    def _take_pre_alloc_group(self, fork: Fork, wait: bool) -> None:
        taken = take_group_genesis(
            fork, self.planned, self.group_folder or self.scratch / "group", self._state_root_bin, wait,
            self._background_datadir,
        )  # fmt: skip
        if taken is not None:
            self._group, built_roots = taken
            self._group_roots = built_roots or self._group_roots

    def _state_root_bin(self) -> Path:
        return self.state_root_bin or state_root_tool()

    @property
    def _background_datadir(self) -> Background | None:
        return None if self.background is None else self.background.background

    def background_info(self, workload: Workload, shared: BuiltChain, group: PreAllocGroupState, work: Path) -> dict[str, Any]:
        """
        `_info["background-state"]` of an engine_x fixture over the background
        state: the recipe and roots, and how many trie nodes a read of each
        account the benchmark block's access list names walks from the root,
        and of each storage slot it names from its account's storage root.
        """
        assert self.background is not None
        accounts = list(shared.blocks[-1].access_list_accounts())
        roots = self.applied_genesis(workload.fork, group).roots
        depths = roots.depths([account.address for account in accounts], work)
        slots = [(account.address, key) for account in accounts for key in (*account.storage_changes, *account.storage_reads)]
        slot_depths = roots.slot_depths(slots, work)
        return {
            **self.background.description(),
            "genesis-state-root": "0x" + group.genesis.state_root.hex(),
            "benchmark-account-depths": depth_summary("accounts", depths),
            "benchmark-slot-depths": depth_summary("slots", slot_depths),
        }

    def _info(self, workload: Workload) -> dict[str, Any]:
        return {
            "filling-transition-tool": self.t8n.version(),
            "gas-rules": {"spec": workload.fork.gas.spec, "hash": workload.fork.gas.rules_hash()},
            "generator": f"balgen {__version__}",
            "description": family_by_name(workload.family).description,
            "fixture-name": workload.name,
            "workload": dict(workload.parameters),
        }

    def _write(
        self,
        workload: Workload,
        own: BuiltChain,
        shared: BuiltChain,
        group: PreAllocGroupState,
        graph: DependencyGraph,
        test_function: str,
        work: Path,
    ) -> tuple[Path, ...]:
        info = {**self._info(workload), **access_list_info(workload, own), INFO_KEY: with_streamed_lists(graph.info())}
        own_rejected, shared_rejected = rejected_twin(workload, own), rejected_twin(workload, shared)
        pre = StreamedObject(lambda: iter_fixture_alloc(own.genesis_alloc_path), floatless=True)
        over_background = self.background is not None and group is self._group  # the shared group is put into it
        if workload.large_state:
            # Gigabytes of post-state in three files would help no one: its root stands for it.
            filled = FilledChains(workload, own, shared, group.group_hash, None, None, own_rejected, shared_rejected)
        else:
            # Both post-states are streamed from sorted copies of t8n's allocs (an
            # applied chain's is written sorted): at a billion gas each holds tens
            # of thousands of accounts.
            own_post_path = write_sorted_alloc(own.post_alloc_path, work / "own-post.json")
            own_post = StreamedObject(lambda: iter_fixture_alloc(own_post_path), floatless=True)
            changed = accounts_changed_in_access_lists(shared) if has_block_access_list(workload.fork) else None
            shared_post_path = (
                shared.post_alloc_path
                if shared.sorted_post
                else write_sorted_alloc(shared.post_alloc_path, work / "shared-post.json", only=changed)
            )
            diff = StreamedObject(
                lambda: fixture_alloc(
                    state_diff(
                        iter_alloc(group.alloc_path) if changed is None else iter_alloc_among(group.alloc_path, changed),
                        iter_alloc_packing(shared_post_path),
                        changed,
                    )
                ),
                floatless=True,
            )
            filled = FilledChains(workload, own, shared, group.group_hash, own_post, diff, own_rejected, shared_rejected)
        folder = gas_folder(workload.fork, workload.gas_benchmark_value, self.all_gas_values)
        with RenderedValues(work / "rendered") as values:
            pending: list[tuple[Path, Iterable[str]]] = []
            for model, render in RENDERERS.items():
                written = model.fixture_format
                if workload.invalid_access_list is not None and not written.holds_rejections:
                    continue  # it would hold the valid chain only: the rejection is the point
                path = self.output / written.folder / folder / workload.family / f"{workload.name}.json"
                test_id = eest_test_id(test_function, workload, written.name)
                fixture_info = {**info, TEST_ID_KEY: test_id}
                if written.pre_in_group and over_background:
                    fixture_info[BACKGROUND_INFO_KEY] = self.background_info(workload, shared, group, work)
                # Each fixture is built only when its file is written, so one format's
                # document is held at a time (at a billion gas each holds tens of
                # thousands of transactions).
                build = partial(render, filled)
                pending.append((path, fixture_chunks(workload.name, written.name, build, fixture_info, values, pre)))
            if not group.written:
                pending.append((group_file(self.output, group), group_json(workload.fork, group)))
                if over_background:
                    description = {**self.background.description(), "genesis-state-root": "0x" + group.genesis.state_root.hex()}
                    pending.append((background_file(self.output, group), [json.dumps(description, indent=1) + "\n"]))
            write_all_or_nothing(pending, self.staging_folder)
        group.written = True
        return tuple(path for path, _ in pending)




def depth_summary(what: str, depths: Sequence[int]) -> dict[str, int | float]:
    """How many paths were measured (`what`: accounts or slots) and how many trie nodes they walk: min, mean, max."""
    return {
        what: len(depths),
        "min": min(depths, default=0),
        "mean": round(sum(depths) / len(depths), 2) if depths else 0,
        "max": max(depths, default=0),
    }


def fixture_chunks(
    name: str,
    format_name: str,
    build: Callable[[], dict[str, Any]],
    info: Mapping[str, Any],
    values: RenderedValues,
    pre: StreamedObject,
) -> Iterator[str]:
    """The file of fixture `name` as text chunks, the fixture built when the first chunk is asked for."""
    yield from fixture_file_chunks(name, format_name, build(), info, values, pre=pre)


def rejected_twin(workload: Workload, chain: BuiltChain) -> RejectedBlock | None:
    """The invalid twin of `chain`'s benchmark block that `workload` sends before it, if it has one."""
    lie = workload.invalid_access_list
    if lie is None:
        return None
    bound = workload.fork.max_bal_items(workload.gas_benchmark_value) or 0
    try:
        twin = invalid_twin(chain.blocks[-1], lie, frozenset(system_accounts(workload.fork)), bound)
    except CorruptionImpossible as error:
        raise FillCheckFailed(f"{lie.name}: {error}") from None
    return RejectedBlock(twin, lie.validation_error)


def access_list_info(workload: Workload, chain: BuiltChain) -> dict[str, Any]:
    """`_info`'s record of the benchmark block's access list (items as EIP-7928 counts them, RLP bytes),
    for a family that records it."""
    benchmark = chain.blocks[-1]
    if not family_by_name(workload.family).records_access_list or benchmark.block_access_list is None:
        return {}
    return {
        "block-access-list": {
            "items": access_list_items(benchmark),
            "item-bound": workload.fork.max_bal_items(workload.gas_benchmark_value),
            "bytes": len(benchmark.block_access_list),
        }
    }


def accounts_changed_in_access_lists(chain: BuiltChain) -> set[str]:
    """Every account the chain's access lists record a change of: the only ones whose state can differ."""
    return {
        "0x" + address.hex()
        for block in chain.blocks
        if block.block_access_list is not None
        for address, changes in access_list_changers(block.block_access_list)
        if changes
    }


def write_all_or_nothing(files: Sequence[tuple[Path, Iterable[str]]], staging: Path) -> None:
    """
    Write every file into `staging` (a folder on the output's file system),
    then rename them all into place.

    If any write fails (full disk, unwritable folder) or is interrupted, the
    temporaries are removed and no file of the set appears, so a fixture set
    is never partial; a process killed mid-write leaves its temporaries only
    in `staging`, which the run removes.
    """
    temporaries: list[tuple[Path, Path]] = []
    try:
        staging.mkdir(parents=True, exist_ok=True)
        for index, (path, chunks) in enumerate(files):
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = staging / f"{os.getpid()}-{index}-{path.name}"
            temporaries.append((temporary, path))
            with temporary.open("w") as out:
                for chunk in chunks:
                    out.write(chunk)
    except BaseException as error:
        for temporary, _ in temporaries:
            temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise BadInput(f"cannot write fixtures to {files[0][0].parent}: {error.strerror or error}") from None
        raise
    for temporary, path in temporaries:
        os.replace(temporary, path)

