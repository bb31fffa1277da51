"""
The workers of one fill run share its pre-alloc group: the first to take it
builds its genesis (every planned workload, and its state root), the others
read that one, and all hold the same group; a worker starting its first
fixture builds it only when no other worker is.
"""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import pytest

from balgen.chain.alloc import iter_alloc
from balgen.chain.t8n import TransitionTool
from balgen.fill.pre_alloc_groups import group_hash
from balgen.fill.session import FillSession
from balgen.ethereum.forks import AMSTERDAM
from balgen.generators import extcode, keccak_chain, serial_chain
from balgen.model.family import PlannedWorkload
from balgen.plumbing.toolchain import pinned_evm
from balgen.model.workload import FillLevel, Placement, WorkloadParams


def sessions(tmp_path: Path, planned: list[PlannedWorkload], count: int) -> list[FillSession]:
    """`count` workers of one run filling `planned`."""
    return [
        FillSession(
            t8n=TransitionTool(pinned_evm()),
            output=tmp_path / "out",
            all_gas_values=[1_000_000],
            planned=planned,
            scratch=tmp_path / f"worker{index}",
            group_folder=tmp_path / "group",
        )
        for index in range(count)
    ]


SMALL = [
    PlannedWorkload(serial_chain.FAMILY, WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.MAX, Placement.BLOCKS)),
    PlannedWorkload(keccak_chain.FAMILY, WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.HALF, Placement.BLOCKS)),
]


@pytest.mark.integration
def test_workers_build_the_group_genesis_once(tmp_path: Path) -> None:
    workers = sessions(tmp_path, SMALL, 2)
    try:
        first, second = (worker.pre_alloc_group(AMSTERDAM) for worker in workers)
        assert workers[0]._group_roots is not None, "the first worker built the group and keeps its trie"
        assert workers[1]._group_roots is None, "the second worker read the group the first one built"
        assert first.test_ids == second.test_ids == sorted(p.name for p in SMALL)
        assert (first.group_hash, first.genesis.hash, first.alloc_path) == (second.group_hash, second.genesis.hash, second.alloc_path)
        assert sum(1 for _ in iter_alloc(first.alloc_path)) > len(AMSTERDAM.system_contracts)
        # Either worker's trie of the group has the root the group's header carries.
        for worker, group in zip(workers, (first, second)):
            assert worker.applied_genesis(AMSTERDAM, group).roots.base_root == group.genesis.state_root
    finally:
        for worker in workers:
            worker.close()


@pytest.mark.integration
def test_a_worker_starting_does_not_wait_for_another_building_the_group(tmp_path: Path) -> None:
    (worker,) = sessions(tmp_path, SMALL, 1)
    (tmp_path / "group").mkdir()
    try:
        with (tmp_path / "group" / "lock").open("w") as held_by_another_worker:
            fcntl.flock(held_by_another_worker, fcntl.LOCK_EX)
            worker.start_pre_alloc_group(AMSTERDAM)
            assert worker._group is None and not (tmp_path / "group" / "group.json").exists()
        worker.start_pre_alloc_group(AMSTERDAM)
        assert worker._group is not None and worker._group.test_ids == sorted(p.name for p in SMALL)
    finally:
        worker.close()


@pytest.mark.parametrize("placement", [Placement.GENESIS, Placement.BLOCKS])
@pytest.mark.integration
def test_a_contract_set_joins_the_group_only_when_set_up_by_blocks(tmp_path: Path, placement: Placement) -> None:
    """Placed in the genesis, a set is a group of its own and no shared group is built; set up by blocks, it
    joins the run's group (its small pre-state), so a client imports every set on one node."""
    planned = [
        PlannedWorkload(extcode.FAMILIES[0], WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.MAX, placement, "0.5KB")),
        *SMALL,
    ]
    (worker,) = sessions(tmp_path, planned, 1)
    worker.scratch.mkdir()
    try:
        contract_set = planned[0].build()
        worker.fill(contract_set, "test_extcode.py::test_extcodesize")
        (engine_x,) = (tmp_path / "out" / "blockchain_tests_engine_x").glob(f"for_*/extcodesize/{contract_set.name}.json")
        pre_hash = json.loads(engine_x.read_text())[contract_set.name]["preHash"]
        if placement is Placement.GENESIS:
            assert worker._group is None and not (tmp_path / "group").exists()
            assert pre_hash == group_hash([contract_set.name])
        else:
            assert worker._group is not None and worker._group.test_ids == sorted(p.name for p in planned)
            assert pre_hash == worker._group.group_hash
    finally:
        worker.close()
