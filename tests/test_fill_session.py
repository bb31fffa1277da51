"""
The workers of one fill run share its pre-alloc group: the first to need it
builds its genesis (every planned workload, and a state root from t8n), the
others read that one and spend no t8n call on it, and all hold the same group.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from balgen.chain.alloc import iter_alloc
from balgen.chain.t8n import TransitionTool
from balgen.fill import FillSession
from balgen.forks import AMSTERDAM
from balgen.generators import keccak_chain, serial_chain
from balgen.generators.catalog import PlannedWorkload
from balgen.toolchain import pinned_evm
from balgen.workload import FillLevel, Placement, WorkloadParams


@pytest.mark.integration
def test_workers_build_the_group_genesis_once(tmp_path: Path) -> None:
    planned = [
        PlannedWorkload(serial_chain.FAMILY, WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.MAX, Placement.BLOCKS)),
        PlannedWorkload(keccak_chain.FAMILY, WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.HALF, Placement.BLOCKS)),
    ]
    workers = [
        FillSession(
            t8n=TransitionTool(pinned_evm()),
            output=tmp_path / "out",
            all_gas_values=[1_000_000],
            planned=planned,
            scratch=tmp_path / f"worker{index}",
            group_folder=tmp_path / "group",
        )
        for index in range(2)
    ]
    first, second = (worker.pre_alloc_group(AMSTERDAM) for worker in workers)
    assert workers[0].t8n.calls == 1, "the first worker computes the group's state root"
    assert workers[1].t8n.calls == 0, "the second worker reads the group the first one built"
    assert first.test_ids == second.test_ids == sorted(p.name for p in planned)
    assert (first.group_hash, first.genesis.hash, first.alloc_path) == (second.group_hash, second.genesis.hash, second.alloc_path)
    assert sum(1 for _ in iter_alloc(first.alloc_path)) > len(AMSTERDAM.system_contracts)
