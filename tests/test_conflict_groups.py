"""
The spamoor export's dependency groups are the traced conflict graph's components, for every family.

The export groups a workload's transactions (set-up and benchmark) by the
components of the one conflict graph (`analysis.graph`), built from the
model's footprints. Here the benchmark block of each family, at a fill level
and gas value hypothesis picks, is run and traced with the real t8n, and the
groups are rebuilt with the traced access sets in place of the model's: they
must be the export's groups, and no traced dependency may cross two groups.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from balgen.analysis.graph import ordered_groups
from balgen.chain.t8n import TransitionTool
from balgen.fill.checks import benchmark_block_trace
from balgen.export.addresses import ownership
from balgen.export.chain_order import ordered_transactions
from balgen.export.dependencies import dependency_groups, live_access_set, on_live_chain
from balgen.fill.session import build_own_chain
from balgen.ethereum.forks import AMSTERDAM
from balgen.model.family import Family
from balgen.generators import invalid_bal
from balgen.generators.catalog import families
from balgen.plumbing.toolchain import pinned_evm
from balgen.model.workload import FillLevel, Phase, Placement, WorkloadParams

pytestmark = pytest.mark.integration

GAS_VALUES = st.sampled_from([1_000_000, 1_500_000, 2_000_000])


@pytest.fixture(scope="module")
def t8n() -> TransitionTool:
    return TransitionTool(pinned_evm())


def variants(family: Family) -> tuple[str | None, ...]:
    return ("0.5KB",) if family.sized_by_code else family.variants


@pytest.mark.parametrize("family", [f for f in families() if f not in invalid_bal.twins(families())], ids=lambda family: family.name)
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_export_groups_are_the_traced_graphs_components(t8n: TransitionTool, family: Family, data: st.DataObject) -> None:
    params = WorkloadParams(
        AMSTERDAM,
        data.draw(GAS_VALUES, label="gas"),
        data.draw(st.sampled_from(FillLevel), label="fill"),
        Placement.BLOCKS,
        data.draw(st.sampled_from(variants(family)), label="variant"),
    )
    workload = family.generator(params)
    with tempfile.TemporaryDirectory() as scratch:
        chain = build_own_chain(t8n, workload, Path(scratch))
        traced = benchmark_block_trace(workload, chain)
    txs = ordered_transactions(workload)
    owned = ownership(workload, txs)
    exported = dependency_groups([live_access_set(ordered, owned) for ordered in txs])

    setup = [ordered for ordered in txs if ordered.phase is Phase.SETUP]
    benchmark = txs[len(setup) :]
    from_trace = [live_access_set(ordered, owned) for ordered in setup] + [
        on_live_chain(accessed, ordered, owned) for accessed, ordered in zip(traced.access_sets, benchmark)
    ]
    assert exported == [list(group) for group in ordered_groups(from_trace)], workload.name
    group_of = {index: number for number, group in enumerate(exported) for index in group}
    for i, j in traced.graph.edges:
        assert group_of[len(setup) + i] == group_of[len(setup) + j], f"{workload.name}: traced edge {i}->{j} crosses groups"
