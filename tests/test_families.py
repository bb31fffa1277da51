"""
The workload families as their users rely on them, executed by the real t8n.

- `--setup genesis` and `--setup blocks` give the same benchmark block: the
  same signed transactions, the same gas per transaction, the same access list
  (system-call entries aside, which depend on the block number) and the same
  post-state of the workload's contracts.
- Every combination exists (none skipped), and shapes that do not divide
  evenly (group5 at greedy fill) are recorded in `_info` parameters.
- The exact access-list check fails on a wrong prediction, naming the first
  difference.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from balgen.chain.builder import BuiltChain
from balgen.chain.t8n import TransitionTool
from balgen.fill.checks import check_chain
from balgen.plumbing.errors import FillCheckFailed
from balgen.fill.session import build_own_chain
from balgen.ethereum.forks import AMSTERDAM, OSAKA, TX_GAS_LIMIT_CAP
from balgen.model.family import PlannedWorkload
from balgen.generators.catalog import all_planned_workloads, families, family_by_name, planned_workloads
from balgen.generators.chains import group_sizes, interleaved_order
from balgen.generators.code_set import DEFAULT_CODE_SIZES
from balgen.generators.invalid_bal import twins as invalid_twins
from balgen.chain.system_calls import system_accesses
from balgen.plumbing.toolchain import pinned_evm
from balgen.model.workload import FillLevel, Placement, Workload, WorkloadParams

SMALL_GAS = 1_000_000


@pytest.fixture(scope="module")
def t8n() -> TransitionTool:
    return TransitionTool(pinned_evm())


def build(t8n: TransitionTool, workload: Workload, workdir: Path) -> BuiltChain:
    """The workload's chain on its own genesis."""
    return build_own_chain(t8n, workload, workdir)


def chain_variants(planned: list[PlannedWorkload]) -> list[PlannedWorkload]:
    """
    `planned` with one lie of each invalid twin family: a twin's chain is its base's first variant in
    accounts of its own (`invalid_twin_workload`), whatever the lie, which changes only the fixture
    (tests/test_invalid_bal.py); building the same chain for each of its 16-18 lies was half of the
    module's t8n runs.
    """
    twins = {family.name for family in invalid_twins(families())}
    seen: set[str] = set()
    kept = []
    for p in planned:
        if p.family.name in twins:
            if p.family.name in seen:
                continue
            seen.add(p.family.name)
        kept.append(p)
    return kept


def one_per_family_variant(fill: FillLevel) -> list[PlannedWorkload]:
    """Every family's variants at `fill`, the opt-in families' too (one lie of each invalid twin)."""
    return chain_variants([
        p
        for family in families()
        for p in planned_workloads(family, AMSTERDAM, [SMALL_GAS], Placement.BLOCKS)
        if p.params.fill is fill
    ])


def contract_storage(chain: BuiltChain, workload: Workload) -> dict[str, dict[str, str]]:
    """Post-state storage of every account the benchmark block writes."""
    written = {f"0x{address.hex()}" for access in workload.benchmark_block.accesses for address, _ in access.writes}
    alloc = json.loads(chain.post_alloc_path.read_text())
    return {address: alloc[address].get("storage", {}) for address in sorted(written)}


@pytest.mark.integration
@pytest.mark.parametrize("planned", one_per_family_variant(FillLevel.MAX), ids=lambda p: p.name)
def test_genesis_and_setup_blocks_give_the_same_benchmark_block(
    t8n: TransitionTool, tmp_path: Path, planned: PlannedWorkload
) -> None:
    by_blocks = planned.build()
    in_genesis = dataclasses.replace(planned, params=dataclasses.replace(planned.params, placement=Placement.GENESIS)).build()
    assert in_genesis.benchmark_block == by_blocks.benchmark_block
    assert in_genesis.setup_blocks == ()

    blocks_chain = build(t8n, by_blocks, tmp_path / "blocks")
    genesis_chain = build(t8n, in_genesis, tmp_path / "genesis")
    check_chain(by_blocks, blocks_chain)
    check_chain(in_genesis, genesis_chain)

    measured_blocks, measured_genesis = blocks_chain.blocks[-1], genesis_chain.blocks[-1]
    assert [tx.raw for tx in measured_blocks.txs] == [tx.raw for tx in measured_genesis.txs]
    assert [r["gasUsed"] for r in measured_blocks.t8n.receipts] == [r["gasUsed"] for r in measured_genesis.t8n.receipts]
    assert measured_blocks.header.gas_used == measured_genesis.header.gas_used

    system = set(system_accesses(AMSTERDAM, measured_blocks.header)) | set(
        system_accesses(AMSTERDAM, measured_genesis.header)
    )

    def workload_entries(chain: BuiltChain) -> list[object]:
        # Balances differ by the setup's fees paid; the rest must be identical.
        return [
            dataclasses.replace(entry, balance_changes=tuple(i for i, _ in entry.balance_changes))
            for entry in chain.blocks[-1].access_list_accounts()
            if entry.address not in system
        ]

    assert workload_entries(blocks_chain) == workload_entries(genesis_chain)
    assert contract_storage(blocks_chain, by_blocks) == contract_storage(genesis_chain, in_genesis)


@pytest.mark.integration
def test_every_family_fills_under_genesis_placement_on_another_fork(t8n: TransitionTool, tmp_path: Path) -> None:
    """Osaka has no access list and legacy gas costs: the schedules and setup calls still fit."""
    opt_in = chain_variants([
        p
        for family in families()
        if family.opt_in
        for p in planned_workloads(family, OSAKA, [SMALL_GAS], Placement.GENESIS)
        if p.params.fill is FillLevel.HALF
    ])
    for planned in [*all_planned_workloads(OSAKA, [SMALL_GAS], Placement.GENESIS, "-half-"), *opt_in]:
        workload = planned.build()
        check_chain(workload, build(t8n, workload, tmp_path / workload.name))


def test_no_combination_is_skipped() -> None:
    """Every default family at every gas value, fill level and variant (a contract set in each of the run's
    code sizes), each once: counted from the families' declarations, so a new family needs no edit here."""
    gas_values = [30_000_000, 60_000_000]
    names = [p.name for p in all_planned_workloads(AMSTERDAM, gas_values, Placement.BLOCKS)]
    assert len(names) == len(set(names))
    expected = {
        WorkloadParams(AMSTERDAM, gas, fill, Placement.BLOCKS, variant).fixture_name(family.name)
        for family in families()
        if not family.opt_in
        for variant in (DEFAULT_CODE_SIZES if family.sized_by_code else family.variants)
        for fill in FillLevel
        for gas in gas_values
    }
    assert set(names) == expected
    assert all(family.variants for family in families())
    assert "mixed_dep-greedy-group5-30M" in names and "mixed_dep-greedy-group5-60M" in names


@pytest.mark.parametrize("gas, expected", [(30_000_000, {"2": 1}), (60_000_000, {"4": 1})])
def test_group5_at_greedy_fill_is_one_smaller_group_recorded_in_info(gas: int, expected: dict[str, int]) -> None:
    workload = family_by_name("mixed_dep").generator(WorkloadParams(AMSTERDAM, gas, FillLevel.GREEDY, variant="group5"))
    assert workload.parameters["group_size"] == 5
    assert workload.parameters["effective_group_sizes"] == expected
    targets = {tx.to for tx in workload.benchmark_block.txs}
    assert len(targets) == 1


def test_groups_are_interleaved_and_keep_every_transaction() -> None:
    assert group_sizes(12, 5) == [5, 5, 2]
    assert group_sizes(3, 5) == [3]
    assert group_sizes(4, 1) == [1, 1, 1, 1]
    assert list(interleaved_order([2, 2, 1])) == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1)]
    workload = family_by_name("mixed_dep").generator(WorkloadParams(AMSTERDAM, 30_000_000, FillLevel.MAX, variant="group2"))
    txs = list(workload.benchmark_block.txs)  # one pass: the block makes (and signs) them afresh on each
    groups = -(-len(txs) // 2)
    assert workload.parameters["effective_group_sizes"] == ({"1": 1, "2": groups - 1} if len(txs) % 2 else {"2": groups})
    # The second member of group g sits `groups` transactions after its first.
    assert [tx.to for tx in txs[: len(txs) - groups]] == [tx.to for tx in txs[groups:]]
    assert len({tx.to for tx in txs[:groups]}) == groups
    assert len({tx.sender.address for tx in txs}) == len(txs)


def test_independent_pairs_use_distinct_senders_and_call_their_own_deployment() -> None:
    workload = family_by_name("interact").generator(
        WorkloadParams(AMSTERDAM, 30_000_000, FillLevel.MAX, variant="independent_pairs")
    )
    block = workload.benchmark_block
    deploys, calls = block.txs[0::2], block.txs[1::2]
    assert all(tx.to is None for tx in deploys)
    for deploy_access, call in zip(block.accesses[0::2], calls):
        assert call.to in deploy_access.created
    senders = [tx.sender.address for tx in block.txs]
    assert len(set(senders)) == len(senders)
    # EIP-8037: a pair's share of the block is at least its deployment's state gas.
    assert workload.parameters["deployments"] * workload.parameters["deployment_state_gas"] <= 30_000_000


@pytest.mark.integration
def test_a_wrong_prediction_fails_the_fill_naming_the_first_difference(t8n: TransitionTool, tmp_path: Path) -> None:
    workload = family_by_name("prefetch").generator(WorkloadParams(AMSTERDAM, SMALL_GAS, FillLevel.MAX))
    chain = build(t8n, workload, tmp_path)
    check_chain(workload, chain)

    block = workload.benchmark_block
    first = block.accesses[0]
    (pointer_key, pointer_value), = first.writes.items()
    wrong_value = dataclasses.replace(first, writes={pointer_key: pointer_value + 1})
    missing_read = dataclasses.replace(first, reads=frozenset(sorted(first.reads)[1:]))
    extra_account = dataclasses.replace(first, touched=frozenset({b"\x42" * 20}))
    cases = {
        "after transaction 0 is": wrong_value,
        "unexpected read of slot": missing_read,
        "0x" + "42" * 20 + " is missing from the access list": extra_account,
    }
    for message, access in cases.items():
        altered = dataclasses.replace(block, accesses=(access, *block.accesses[1:]))
        with pytest.raises(FillCheckFailed, match=message):
            check_chain(dataclasses.replace(workload, benchmark_block=altered), chain)


@pytest.mark.parametrize("fork", [AMSTERDAM, OSAKA], ids=lambda f: f.name)
def test_every_transaction_fits_a_live_chain(fork) -> None:
    """Setup and benchmark transactions stay at or under 2^24 gas, state gas included, so that
    the setup also runs on a devnet (spamoor export) and not only in a 10^12-gas fixture block."""
    for planned in all_planned_workloads(fork, [30_000_000, 60_000_000], Placement.BLOCKS):
        workload = planned.build()
        for number, block in enumerate(workload.blocks, start=1):
            over = [index for index, tx in enumerate(block.txs) if tx.gas_limit > TX_GAS_LIMIT_CAP]
            assert not over, f"{workload.name}: block {number} transactions {over[:5]} exceed 2^24"
