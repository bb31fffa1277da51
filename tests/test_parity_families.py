"""
The execution-specs parity families do what their names promise.

- `cross_contract_chase`: chains are 100 calls deep where a transaction holds
  one that deep (as deep as fits where it does not), and each contract's slot
  0 names the next one, the last names none.
- `compute_then_sload`: each transaction reads from where its predecessor
  left the cursor, and the compute takes the variant's share of the gas.
- `prefetch_miss`: each transaction reads from the offset its predecessor
  wrote, and none reads where a prefetcher predicting from the state before
  the block would look.
- `coinbase_serialization`: every transaction depends on the one before it,
  through the coinbase's balance alone (traced: tests/test_analysis.py).
- They are opt-in: a fill or export without their name leaves them out.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from balgen.analysis.graph import DependencyGraph
from balgen.analysis.model import model_access_sets
from balgen.chain.builder import FEE_RECIPIENT
from balgen.chain.t8n import TransitionTool
from balgen.ethereum.forks import AMSTERDAM
from balgen.fill.checks import check_chain, traced_dependency_graph
from balgen.fill.session import build_own_chain
from balgen.generators import compute_then_sload, cross_contract_chase, prefetch_miss
from balgen.generators.catalog import all_planned_workloads, families, family_by_name
from balgen.generators.slot_range import CURSOR_SLOT, FIRST_SLOT
from balgen.model.workload import FillLevel, Placement, Workload, WorkloadParams
from balgen.plumbing.toolchain import pinned_evm

OPT_IN = ("cross_contract_chase", "compute_then_sload", "prefetch_miss", "coinbase_serialization")


def built(family: str, gas: int, fill: FillLevel, variant: str | None = None) -> Workload:
    """The family's workload, its contracts in genesis (so their storage is in the pre-state)."""
    return family_by_name(family).generator(WorkloadParams(AMSTERDAM, gas, fill, Placement.GENESIS, variant))


def read_runs(workload: Workload) -> list[list[int]]:
    """Each transaction's slots read, ascending."""
    return [sorted(slot for _, slot in access.reads) for access in workload.benchmark_block.accesses]


def cursors_left(workload: Workload) -> list[int]:
    """The cursor each transaction leaves."""
    return [
        value for access in workload.benchmark_block.accesses for (_, slot), value in access.writes.items()
        if slot == CURSOR_SLOT
    ]  # fmt: skip


def chain_is_one_path(graph: DependencyGraph) -> bool:
    return graph.edges == tuple(pairwise(range(len(graph.tx_gas))))


@pytest.mark.parametrize("gas, depth", [(60_000_000, 100), (1_000_000, 85)])
def test_cross_contract_chase_chains_are_as_deep_as_the_gas_holds_up_to_100(gas: int, depth: int) -> None:
    for fill in FillLevel:
        workload = built("cross_contract_chase", gas, fill)
        assert workload.parameters["chain_depth"] == depth
        dispatcher = workload.benchmark_block.txs[0].to
        storage = {address: account.storage for address, account in workload.pre.items()}
        for access, tx in zip(workload.benchmark_block.accesses, workload.benchmark_block.txs):
            chains = int.from_bytes(tx.data, "big")
            entries = sorted(slot for address, slot in access.reads if address == dispatcher)
            hops = {address for address, _ in access.reads if address != dispatcher}
            assert len(entries) == chains and len(hops) == chains * depth
            for slot in entries:  # walk each chain through the pre-state, as the EVM does
                address, walked = storage[dispatcher][slot].to_bytes(20, "big"), 0
                while True:
                    walked += 1
                    assert address in hops
                    following = storage[address].get(cross_contract_chase.NEXT_SLOT, 0)
                    if not following:
                        break
                    address = following.to_bytes(20, "big")
                assert walked == depth
    assert cross_contract_chase.chain_depth(AMSTERDAM, 10**9) == cross_contract_chase.MAX_CALL_DEPTH


@pytest.mark.parametrize("variant", compute_then_sload.VARIANTS)
def test_compute_then_sload_reads_from_the_cursor_its_predecessor_left(variant: str) -> None:
    workload = built("compute_then_sload", 30_000_000, FillLevel.HALF, variant)
    runs, cursors = read_runs(workload), cursors_left(workload)
    assert runs[0][0] == FIRST_SLOT
    for run, before, after in zip(runs[1:], cursors, cursors[1:]):
        assert run == list(range(before, after))
    share = compute_then_sload.compute_share(variant)
    rounds = workload.parameters["compute_rounds_per_read"]
    compute = rounds * compute_then_sload.compute_iteration_gas()
    measured = 100 * compute / (compute + compute_then_sload.read_iteration_gas(AMSTERDAM))
    assert abs(measured - share) < 2, f"{variant}: compute is {measured:.1f}% of each read's gas"


@pytest.mark.parametrize("variant", prefetch_miss.VARIANTS)
@pytest.mark.parametrize("fill", list(FillLevel))
def test_prefetch_miss_reads_start_where_the_predecessor_wrote_and_miss_the_pre_state_guess(
    variant: str, fill: FillLevel
) -> None:
    workload = built("prefetch_miss", 30_000_000, fill, variant)
    runs, cursors = read_runs(workload), cursors_left(workload)
    assert runs[0] == [], "the first transaction only moves the cursor"
    for run, written in zip(runs[1:], cursors):
        assert run[0] == written and run == list(range(written, written + len(run)))
    guess = set(range(FIRST_SLOT, FIRST_SLOT + prefetch_miss.most_reads(AMSTERDAM, 30_000_000)))
    assert not guess & {slot for run in runs for slot in run}, "a read where the pre-state cursor points"
    (target,) = {tx.to for tx in workload.benchmark_block.txs}
    filled = {slot for slot in workload.pre[target].storage if slot != CURSOR_SLOT}
    assert filled == ({slot for run in runs for slot in run} if variant == "existing_slots" else set())


def test_coinbase_serialization_chains_every_transaction_through_the_coinbase_balance_alone() -> None:
    workload = built("coinbase_serialization", 10_000_000, FillLevel.MAX)
    sets = list(model_access_sets(workload.benchmark_block, FEE_RECIPIENT))
    gas = [tx.gas_limit for tx in workload.benchmark_block.txs]
    assert len(sets) > 100 and chain_is_one_path(DependencyGraph.from_access_sets(sets, gas))
    for earlier, later in pairwise(sets):
        assert earlier.writes & later.keys == {(FEE_RECIPIENT, "balance")}


def test_parity_families_are_opt_in_by_name() -> None:
    assert set(OPT_IN) <= {family.name for family in families() if family.opt_in}
    default = {p.family.name for p in all_planned_workloads(AMSTERDAM, [1_000_000], Placement.BLOCKS)}
    assert not default & set(OPT_IN)
    for name in OPT_IN:
        asked = all_planned_workloads(AMSTERDAM, [1_000_000], Placement.BLOCKS, name)
        assert asked and {p.family.name for p in asked} == {name}


@pytest.fixture(scope="module")
def t8n() -> TransitionTool:
    return TransitionTool(pinned_evm())


@pytest.mark.integration
def test_traced_chase_is_one_chain_through_every_hop(t8n: TransitionTool, tmp_path: Path) -> None:
    """The chase's graph and hops as the trace shows them, where 5M gas holds three 100-deep chains
    (the other parity families' traced graphs: tests/test_analysis.py's family cases)."""
    workload = family_by_name("cross_contract_chase").generator(WorkloadParams(AMSTERDAM, 5_000_000, FillLevel.MAX))
    chain = build_own_chain(t8n, workload, tmp_path)
    check_chain(workload, chain)
    graph = traced_dependency_graph(workload, chain)
    assert workload.parameters["chain_depth"] == 100 and len(graph.tx_gas) == 3 and chain_is_one_path(graph)
