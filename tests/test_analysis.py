"""
The dependency analysis: access sets, the conflict graph and what it bounds.

Graph algorithms are checked on hand-made blocks and, with hypothesis, on
random ones against brute force (every real conflict is reachable, every
edge is a real conflict, the critical path is the heaviest path). Access
sets are checked from the model and from synthetic traces; then every
workload family is built with the pinned t8n, its benchmark block traced,
and the traced sets must equal the model's and give the family's graph
shape.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from balgen.analysis import DependencyGraph, TxAccessSet, first_difference, model_access_sets, traced_access_sets
from balgen.analysis.access import StateKey, access_set
from balgen.analysis.graph import conflict_edges, connected_components, ordered_groups
from balgen.chain.builder import FEE_RECIPIENT, build_chain
from balgen.fill.checks import benchmark_block_trace
from balgen.fill.session import build_own_chain
from balgen.chain.t8n import TransitionTool
from balgen.plumbing.errors import BadInput
from balgen.ethereum.forks import AMSTERDAM
from balgen.generators.catalog import family_by_name
from balgen.model.keys import create_address, sender
from balgen.plumbing.toolchain import pinned_evm
from balgen.model.workload import BlockSpec, FillLevel, Origin, Phase, TxAccess, TxSpec, Workload, WorkloadParams

A, B, C = (bytes([n]) * 20 for n in (0xAA, 0xBB, 0xCC))
COINBASE = bytes([0xCB]) * 20


def accesses(*pairs: tuple[set[StateKey], set[StateKey]]) -> list[TxAccessSet]:
    """Access sets from (reads, writes) pairs."""
    return [TxAccessSet(frozenset(reads - writes), frozenset(writes)) for reads, writes in pairs]


# -- the graph on hand-made blocks --------------------------------------------


def test_read_after_write_and_write_after_write_are_edges_write_after_read_is_not() -> None:
    sets = accesses(
        (set(), {(A, 0)}),  # 0 writes
        ({(A, 0)}, set()),  # 1 reads what 0 wrote
        (set(), {(A, 0)}),  # 2 overwrites what 0 wrote
        ({(B, 0)}, set()),  # 3 reads what nobody wrote
        (set(), {(B, 0)}),  # 4 writes what 3 read: no edge
    )
    assert conflict_edges(sets) == ((0, 1), (0, 2))


def test_only_the_latest_writer_is_linked() -> None:
    sets = accesses((set(), {(A, 0)}), (set(), {(A, 0)}), (set(), {(A, 0)}), ({(A, 0)}, set()))
    assert conflict_edges(sets) == ((0, 1), (1, 2), (2, 3))


def test_shared_reads_do_not_conflict() -> None:
    sets = accesses(({(A, 0), (A, "code")}, set()), ({(A, 0), (A, "code")}, set()))
    graph = DependencyGraph.from_access_sets(sets, [21_000, 21_000])
    assert graph.edges == ()
    assert graph.components == ((0,), (1,))
    assert graph.speedup_bound == 2.0


def test_critical_path_follows_gas_not_length() -> None:
    # 0 -> 1 -> 3 is longer in edges, 2 -> 3 heavier in gas.
    sets = accesses(
        (set(), {(A, 0)}),
        ({(A, 0)}, {(A, 1)}),
        (set(), {(B, 0)}),
        ({(A, 1), (B, 0)}, set()),
    )
    graph = DependencyGraph.from_access_sets(sets, [10, 10, 100, 5])
    assert graph.edges == ((0, 1), (1, 3), (2, 3))
    assert graph.critical_path == (2, 3)
    assert graph.critical_path_gas == 105
    assert graph.block_gas == 125
    assert graph.speedup_bound == round(125 / 105, 2)
    assert graph.components == ((0, 1, 2, 3),)


def test_components_and_summary() -> None:
    sets = accesses((set(), {(A, 0)}), ({(A, 0)}, set()), (set(), {(B, 0)}), ({(B, 0)}, set()), ({(C, 0)}, set()))
    graph = DependencyGraph.from_access_sets(sets, [1, 2, 3, 4, 5])
    assert graph.components == ((0, 1), (2, 3), (4,))
    assert graph.component_sizes == {1: 1, 2: 2}
    assert graph.largest_component == 2
    assert graph.info() == {
        "transactions": 5,
        "tx-gas-used": [1, 2, 3, 4, 5],
        "edges": [[0, 1], [2, 3]],
        "components": 3,
        "component-sizes": {"1": 1, "2": 2},
        "largest-component": 2,
        "critical-path": [2, 3],
        "critical-path-gas": 7,
        "block-gas": 15,
        "speedup-bound": 2.14,
    }


def test_empty_block() -> None:
    graph = DependencyGraph.from_access_sets([], [])
    assert (graph.edges, graph.components, graph.critical_path, graph.speedup_bound) == ((), (), (), 1.0)


def test_info_round_trips_through_json() -> None:
    sets = accesses((set(), {(A, 0)}), ({(A, 0)}, {(B, 1)}), ({(B, 1)}, set()))
    graph = DependencyGraph.from_access_sets(sets, [30_000, 40_000, 50_000])
    assert DependencyGraph.from_info(json.loads(json.dumps(graph.info()))) == graph


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda info: info.pop("edges"), "edges: Field required"),
        (lambda info: info.update({"tx-gas-used": "many"}), "tx-gas-used: Input should be a valid list"),
        (lambda info: info.update({"edges": [[1, 0]]}), "edges: each must join two transactions i < j"),
        (lambda info: info.update({"edges": [[0, 9]]}), "edges: each must join two transactions i < j"),
        (lambda info: info.update({"block-gas": 1}), "the summary does not match"),
    ],
)
def test_info_that_does_not_describe_a_graph_is_rejected(change, message: str) -> None:
    info = DependencyGraph.from_access_sets(accesses((set(), {(A, 0)}), ({(A, 0)}, set())), [5, 6]).info()
    change(info)
    with pytest.raises(ValueError, match=message):
        DependencyGraph.from_info(info)


def test_from_access_sets_needs_one_gas_value_per_transaction() -> None:
    with pytest.raises(ValueError):
        DependencyGraph.from_access_sets(accesses((set(), set())), [])


# -- the graph on random blocks -------------------------------------------------

KEYS: list[StateKey] = [(address, slot) for address in (A, B) for slot in range(3)] + [(C, "balance"), (C, "nonce")]


@st.composite
def blocks(draw: st.DrawFn, keys: list[StateKey] = KEYS) -> tuple[list[TxAccessSet], list[int]]:
    """A random block: per transaction some keys read, some written, and its gas."""
    count = draw(st.integers(0, 9))
    sets = []
    for _ in range(count):
        touched = draw(st.sets(st.sampled_from(keys)))
        written = draw(st.sets(st.sampled_from(sorted(touched, key=repr)))) if touched else set()
        sets.append(TxAccessSet(frozenset(touched - written), frozenset(written)))
    gas = draw(st.lists(st.integers(0, 10**7), min_size=count, max_size=count))
    return sets, gas


def reachable(graph: DependencyGraph, start: int) -> set[int]:
    seen, frontier = {start}, [start]
    while frontier:
        node = frontier.pop()
        for i, j in graph.edges:
            if i == node and j not in seen:
                seen.add(j)
                frontier.append(j)
    return seen


def all_paths(graph: DependencyGraph) -> list[list[int]]:
    """Every path of the graph, single transactions included (brute force)."""
    paths = [[node] for node in range(graph.transactions)]
    for path in paths:
        paths.extend([*path, j] for i, j in graph.edges if i == path[-1])
    return paths


@settings(max_examples=75, deadline=None)
@given(blocks())
def test_every_conflict_is_reachable_and_every_edge_is_a_conflict(block: tuple[list[TxAccessSet], list[int]]) -> None:
    sets, gas = block
    graph = DependencyGraph.from_access_sets(sets, gas)
    for i, j in itertools.combinations(range(len(sets)), 2):
        if sets[i].writes & sets[j].keys:
            assert j in reachable(graph, i)
    for i, j in graph.edges:
        assert i < j and sets[i].writes & sets[j].keys


@settings(max_examples=75, deadline=None)
@given(blocks())
def test_components_partition_and_the_critical_path_is_the_heaviest(block: tuple[list[TxAccessSet], list[int]]) -> None:
    sets, gas = block
    graph = DependencyGraph.from_access_sets(sets, gas)
    members = [index for group in graph.components for index in group]
    assert sorted(members) == list(range(len(sets)))
    assert all(j in group for group in graph.components for i, j in graph.edges if i in group)
    path = graph.critical_path
    assert all(edge in graph.edges for edge in zip(path, path[1:]))
    assert graph.critical_path_gas == max((sum(gas[k] for k in p) for p in all_paths(graph)), default=0)
    assert graph.critical_path_gas <= graph.block_gas
    assert graph.speedup_bound >= 1
    assert graph.largest_component == max((len(group) for group in graph.components), default=0)
    assert DependencyGraph.from_info(graph.info()) == graph


@settings(max_examples=75, deadline=None)
@given(blocks())
def test_ordered_groups_are_the_components_of_every_pairwise_conflict(block: tuple[list[TxAccessSet], list[int]]) -> None:
    """With write-after-read edges, the graph links exactly what any two conflicting transactions link."""
    sets, _ = block
    pairs = [(i, j) for i, j in itertools.combinations(range(len(sets)), 2) if sets[i].conflicts_with(sets[j])]
    assert ordered_groups(sets) == connected_components(len(sets), pairs)
    dependency_only = connected_components(len(sets), conflict_edges(sets))
    assert all(any(set(small) <= set(big) for big in ordered_groups(sets)) for small in dependency_only)


def test_a_write_after_a_read_links_only_on_a_live_chain() -> None:
    sets = accesses(({(A, 0)}, set()), (set(), {(A, 0)}))
    assert conflict_edges(sets) == ()
    assert conflict_edges(sets, write_after_read=True) == ((0, 1),)
    assert ordered_groups(sets) == ((0, 1),)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 10**6), max_size=12))
def test_transactions_without_shared_keys_have_no_edges(gas: list[int]) -> None:
    sets = [TxAccessSet(frozenset({(A, index)}), frozenset({(B, index)})) for index in range(len(gas))]
    graph = DependencyGraph.from_access_sets(sets, gas)
    assert graph.edges == ()
    assert len(graph.components) == len(gas)
    assert graph.critical_path_gas == max(gas, default=0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 10**6), min_size=1, max_size=12), st.sampled_from([(A, 0), (B, "balance")]))
def test_writers_of_one_key_are_a_single_path(gas: list[int], key: StateKey) -> None:
    sets = [TxAccessSet(frozenset(), frozenset({key})) for _ in gas]
    graph = DependencyGraph.from_access_sets(sets, gas)
    assert graph.edges == tuple((index, index + 1) for index in range(len(gas) - 1))
    assert graph.critical_path == tuple(range(len(gas)))
    assert graph.speedup_bound == 1.0


# -- access sets ----------------------------------------------------------------


def test_coinbase_fee_credit_is_no_access_and_sets_are_disjoint() -> None:
    made = access_set({(A, 0), (A, 1), (COINBASE, "balance")}, {(A, 1), (COINBASE, "balance")}, COINBASE)
    assert made == TxAccessSet(frozenset({(A, 0)}), frozenset({(A, 1)}))


def test_a_transaction_touching_the_coinbase_writes_its_balance_and_follows_the_previous_one() -> None:
    """`BALANCE(COINBASE)` sees every fee before it: the touching transactions chain, the fee payers stay apart."""
    fields = {(COINBASE, "balance"), (COINBASE, "nonce"), (COINBASE, "code")}
    payer = access_set({(A, 0), (COINBASE, "balance")}, {(COINBASE, "balance")}, COINBASE)
    toucher = access_set({(B, "nonce"), *fields}, {(COINBASE, "balance")}, COINBASE)
    assert toucher == TxAccessSet(frozenset({(B, "nonce"), (COINBASE, "nonce"), (COINBASE, "code")}), frozenset({(COINBASE, "balance")}))
    traced_toucher = access_set(fields, set(), COINBASE)  # a trace that saw the balance unchanged still touched it
    assert traced_toucher.writes == {(COINBASE, "balance")}
    graph = DependencyGraph.from_access_sets([payer, toucher, payer, toucher, toucher], [1] * 5)
    assert graph.edges == ((1, 3), (3, 4))


def test_first_difference_names_the_transaction_and_the_key() -> None:
    model = accesses(({(A, 0)}, {(B, "nonce")}), ({(A, 0)}, {(A, 1)}))
    assert first_difference(model, model) is None
    assert first_difference(model, model[:1]) == "the model has 2 transactions, the trace 1"
    traced = accesses(({(A, 0)}, {(B, "nonce")}), ({(A, 0)}, {(A, 1), (A, 2)}))
    assert first_difference(model, traced) == f"transaction 1 writes slot 0x2 of 0x{A.hex()} in the trace, not in the model"
    traced = accesses(({(A, 0)}, {(B, "nonce")}), (set(), {(A, 1)}))
    assert first_difference(model, traced) == f"transaction 1 reads slot 0x0 of 0x{A.hex()} in the model, not in the trace"
    traced = accesses(({(A, 0)}, set()), ({(A, 0)}, {(A, 1)}))
    assert first_difference(model, traced) == f"transaction 0 writes nonce of 0x{B.hex()} in the model, not in the trace"


def test_model_of_a_call_a_transfer_and_a_create() -> None:
    alice, bob = sender("analysis", "alice"), sender("analysis", "bob")
    created = create_address(bob.address, 3)
    block = BlockSpec(
        phase=Phase.TESTING,
        txs=(
            TxSpec(sender=alice, nonce=0, to=A, data=b"", gas_limit=100_000),
            TxSpec(sender=alice, nonce=1, to=B, data=b"", gas_limit=21_000, value=5),
            TxSpec(sender=bob, nonce=3, to=None, data=b"\x00", gas_limit=100_000),
        ),
        accesses=(
            TxAccess(reads=frozenset({(A, 1)}), writes={(A, 0): 7}, touched=frozenset({C})),
            TxAccess(),
            TxAccess(writes={(created, 0): 1}, created={created: b"\x60\x00"}, origins={created: Origin.DEPLOYED}),
        ),
    )
    call, transfer, create = model_access_sets(block, COINBASE)
    fields = ("balance", "nonce", "code")
    assert call.writes == {(alice.address, "nonce"), (alice.address, "balance"), (A, 0)}
    assert call.reads == {(alice.address, "code"), (A, 1)} | {(address, f) for address in (A, C) for f in fields}
    assert transfer.writes == {(alice.address, "nonce"), (alice.address, "balance"), (B, "balance")}
    assert transfer.reads == {(alice.address, "code"), (B, "nonce"), (B, "code")}
    assert create.writes == {(bob.address, "nonce"), (bob.address, "balance"), (created, "nonce"), (created, "code"), (created, 0)}
    assert create.reads == {(bob.address, "code"), (created, "balance")}
    # the transfer's and the call's shared sender links them, nothing else does
    assert DependencyGraph.from_access_sets([call, transfer, create], [1, 1, 1]).edges == ((0, 1),)


def trace(accounts: dict[bytes, tuple[int, int]], storage: dict[bytes, dict[int, int]] | None = None, created: dict[bytes, int] | None = None) -> dict:
    """A trace as the access tracer writes it."""
    return {
        "accounts": {"0x" + a.hex(): [hex(balance), nonce] for a, (balance, nonce) in accounts.items()},
        "storage": {"0x" + a.hex(): {hex(s): "0x" + v.to_bytes(32, "big").hex() for s, v in slots.items()} for a, slots in (storage or {}).items()},
        "created": {"0x" + a.hex(): size for a, size in (created or {}).items()},
    }


def test_traced_writes_are_changes_against_the_running_state() -> None:
    pre = {
        "0x" + A.hex(): {"balance": "0x64", "nonce": "0x00", "storage": {"0x00": "0x01"}},
        "0x" + B.hex().upper(): {"balance": "0x0", "nonce": "0x1", "code": "0x00", "storage": {}},
    }
    traces = [
        # tx 0: A pays (balance, nonce change), B's slot 0 goes 0 -> 5; the coinbase's credit is not traced
        trace({A: (90, 1), B: (0, 1)}, {B: {0: 5}}),
        # tx 1: B's slot 0 stays 5 (read, though it differs from the pre-state); C created with code
        trace({B: (0, 1), C: (0, 1)}, {B: {0: 5}, C: {1: 0}}, {C: 4}),
        # tx 2: A's slot 0 read unchanged; B's slot 0 back to 0 is a write
        trace({A: (90, 1), B: (0, 1)}, {A: {0: 1}, B: {0: 0}}),
        # tx 3: its code reads the coinbase's balance (BALANCE(COINBASE)), which the fees before it changed
        trace({C: (0, 1), COINBASE: (30, 0)}),
    ]
    first, second, third, fourth = traced_access_sets(traces, pre, COINBASE)
    assert first.writes == {(A, "balance"), (A, "nonce"), (B, 0)}
    assert not {key for key in first.keys if key[0] == COINBASE}
    assert (COINBASE, "balance") in fourth.writes and (COINBASE, "nonce") in fourth.reads
    assert second.writes == {(C, "nonce"), (C, "code")}
    assert {(B, 0), (C, 1), (C, "balance"), (B, "code")} <= second.reads
    assert third.writes == {(B, 0)}
    assert {(A, 0), (A, "balance"), (B, "nonce")} <= third.reads


# -- real blocks: every family, traced with t8n ---------------------------------

FAMILY_CASES = [
    ("serial_chain", None),
    ("keccak_chain", None),
    ("prefetch", None),
    ("mixed_dep", "group1"),
    ("mixed_dep", "group2"),
    ("mixed_dep", "group5"),
    ("interact", "independent_pairs"),
    ("interact", "single_contract"),
    ("state_root", "single_contract"),
    ("state_root", "contract_per_tx"),
    ("compute_then_sload", "compute_10pct"),
    ("prefetch_miss", "existing_slots"),
    ("prefetch_miss", "empty_slots"),
    ("coinbase_serialization", None),
]


@pytest.fixture(scope="module")
def t8n() -> TransitionTool:
    return TransitionTool(pinned_evm())


def built_and_traced(t8n: TransitionTool, workload: Workload, workdir: Path):
    """Build `workload`'s chain, its benchmark block traced as it is built."""
    chain = build_own_chain(t8n, workload, workdir)
    return chain, benchmark_block_trace(workload, chain)


def shape_holds(family: str, variant: str | None, graph: DependencyGraph) -> bool:
    """The dependency graph the family promises (issue 3)."""
    count = graph.transactions
    if family in ("serial_chain", "keccak_chain", "prefetch", "compute_then_sload", "prefetch_miss", "coinbase_serialization"):
        return graph.edges == tuple((i, i + 1) for i in range(count - 1))
    if family == "state_root" or variant == "group1":
        return graph.edges == ()
    if variant == "independent_pairs":
        return set(graph.component_sizes) == {2}
    if variant == "single_contract":
        return len(graph.components) == 1
    size = int(variant.removeprefix("group"))
    sizes = [len(group) for group in graph.components]
    return max(sizes) == size and sum(1 for s in sizes if s != size) <= 1


@pytest.mark.integration
@pytest.mark.parametrize(("family", "variant"), FAMILY_CASES, ids=[f"{f}-{v}" if v else f for f, v in FAMILY_CASES])
def test_traced_sets_equal_the_model_and_give_the_family_shape(t8n: TransitionTool, tmp_path: Path, family: str, variant: str | None) -> None:
    workload = family_by_name(family).generator(WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.MAX, variant=variant))
    chain, traced = built_and_traced(t8n, workload, tmp_path)
    model = model_access_sets(workload.benchmark_block, FEE_RECIPIENT)
    assert first_difference(model, traced.access_sets) is None
    assert [int(r["gasUsed"], 16) for r in chain.blocks[-1].t8n.receipts] == list(traced.tx_gas)
    graph = traced.graph
    assert graph.transactions == len(workload.benchmark_block.txs) > 2
    assert shape_holds(family, variant, graph), graph.info()


@pytest.mark.integration
def test_a_model_that_drifts_from_the_trace_is_named(t8n: TransitionTool, tmp_path: Path) -> None:
    workload = family_by_name("serial_chain").generator(WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.HALF))
    _, traced = built_and_traced(t8n, workload, tmp_path)
    block = workload.benchmark_block
    (target, slot), = block.accesses[3].writes
    drifted = dataclasses.replace(block, accesses=(*block.accesses[:3], TxAccess(reads=frozenset({(target, slot)})), *block.accesses[4:]))
    assert first_difference(model_access_sets(drifted, FEE_RECIPIENT), traced.access_sets) == (
        f"transaction 3 writes slot {slot:#x} of 0x{target.hex()} in the trace, not in the model"
    )


@pytest.mark.integration
def test_traces_come_in_receipt_order_and_only_when_asked(t8n: TransitionTool, tmp_path: Path) -> None:
    workload = family_by_name("mixed_dep").generator(WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.HALF, variant="group2"))
    chain, traced = built_and_traced(t8n, workload, tmp_path)
    assert [len(block.t8n.traces) for block in chain.blocks] == [len(block.txs) for block in chain.blocks]
    senders = [tx.sender.address for tx in workload.benchmark_block.txs]
    assert [next(k[0] for k in s.writes if k[1] == "nonce" and k[0] in senders) for s in traced.access_sets] == senders


@pytest.mark.integration
def test_tracing_the_benchmark_block_as_it_is_built_changes_nothing_it_produces(t8n: TransitionTool, tmp_path: Path) -> None:
    """The tracer runs in the block's real run, system calls included: every header and the post-state are
    those of the same chain built without it."""
    workload = family_by_name("mixed_dep").generator(WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.MAX, variant="group2"))
    traced = build_own_chain(t8n, workload, tmp_path / "traced")
    untraced = build_chain(t8n, AMSTERDAM, traced.genesis_alloc_path, workload.blocks, tmp_path / "untraced", label="untraced")
    assert len(traced.blocks[-1].t8n.traces) == len(workload.benchmark_block.txs)
    assert untraced.blocks[-1].t8n.traces == ()
    assert [block.header for block in traced.blocks] == [block.header for block in untraced.blocks]
    assert traced.post_alloc_path.read_bytes() == untraced.post_alloc_path.read_bytes()


@pytest.mark.integration
def test_an_evm_without_the_tracer_is_named_in_one_line(t8n: TransitionTool, tmp_path: Path) -> None:
    """A stock go-ethereum evm has no balgenAccessTracer: the fill says which binary and how to get one that has it."""
    workload = family_by_name("serial_chain").generator(WorkloadParams(AMSTERDAM, 1_000_000, FillLevel.HALF))
    genesis = build_own_chain(t8n, workload, tmp_path / "own", workload.blocks[:0]).genesis_alloc_path
    with pytest.raises(BadInput) as raised:
        build_chain(t8n, AMSTERDAM, genesis, workload.blocks, tmp_path / "stock", label="stock", tracer="noSuchTracer")
    assert str(raised.value).endswith(
        f"t8n {t8n.binary} has no tracer named noSuchTracer "
        "(balgen's access tracer is built into evm by scripts/install-tools.sh: make tools)"
    )
