"""
A block's features from its access list and transactions alone (balgen.analysis.bal_features), checked
against the graphs balgen's fixtures record from tracing (`_info["dependency-graph"]`); and the fallback
rule fitted to mode times (balgen.results.fallback_rule), judged one family left out at a time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from balgen.analysis import INFO_KEY, DependencyGraph
from balgen.analysis.bal_features import BalFeatures, bal_access_sets, envelope_facts, payload_features
from balgen.plumbing.command_line import keyword_matcher, matches
from balgen.results.fallback_rule import ALWAYS_PARALLEL, MeasuredBlock, Stump, fallback_table, fit_rule
from fill_runs import shared_suite_fill

FAMILIES = "mixed_dep-max-group1 or mixed_dep-half-group5 or serial_chain-greedy or state_root-max-contract_per_tx or prefetch-half or interact-half-independent_pairs"


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """
    The engine fixtures of families with known graphs (balgen's t8n traced each), read from the
    session's default-suite fill at 1M (`make test` makes it for other modules anyway); what is
    read here (each benchmark block's transactions, access list and traced graph) is the same
    whether a fixture is filled alone or beside the suite.
    """
    completed, output = shared_suite_fill(tmp_path_factory)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    selected = keyword_matcher(FAMILIES)
    tests = []
    for path in sorted((output / "blockchain_tests_engine_x").rglob("*.json")):
        if path.parent.name == "pre_alloc" or not matches(selected, path.stem):
            continue
        tests += [{"id": name, **test} for name, test in json.loads(path.read_text()).items() if "_info" in test]
    assert tests, "the fill wrote engine_x fixtures"
    return tests


def _benchmark_payload(test: dict[str, Any]) -> dict[str, Any]:
    return test["engineNewPayloads"][-1]["params"][0]


@pytest.mark.integration
def test_the_graph_read_off_the_access_list_is_the_traced_one_where_every_reader_writes(fixtures: list[dict[str, Any]]) -> None:
    """
    The list names each write's transaction, not each read's: its graph is a subgraph of the traced one,
    the same where transactions write what they read (mixed_dep, state_root, serial_chain, interact's
    pairs), missing only read-after-write edges elsewhere (prefetch: every transaction only reads).
    """
    seen = set()
    for test in fixtures:
        payload = _benchmark_payload(test)
        facts = [envelope_facts(bytes.fromhex(tx[2:])) for tx in payload["transactions"]]
        sets, _ = bal_access_sets(bytes.fromhex(payload["blockAccessList"][2:]), facts, bytes.fromhex(payload["feeRecipient"][2:]))
        traced = DependencyGraph.from_info(test["_info"][INFO_KEY])
        from_list = DependencyGraph.from_access_sets(sets, [tx.gas_limit for tx in facts])
        family = test["id"].split("-", 1)[0]
        seen.add(family)
        assert set(from_list.edges) <= set(traced.edges), test["id"]
        if family in ("mixed_dep", "state_root", "serial_chain", "interact"):
            assert from_list.edges == traced.edges, test["id"]
            assert len(from_list.components) == len(traced.components), test["id"]
        features = payload_features(payload)
        assert features is not None and features.transactions == traced.transactions == len(payload["transactions"])
    assert seen == {"mixed_dep", "state_root", "serial_chain", "prefetch", "interact"}


@pytest.mark.integration
def test_features_tell_a_chain_from_groups_and_from_independent_work(fixtures: list[dict[str, Any]]) -> None:
    """One sender's chain of reads, groups of five writers to one slot, and writers each to its own slot."""
    by_id = {test["id"]: payload_features(_benchmark_payload(test)) for test in fixtures}
    chain, groups, independent = (by_id[name] for name in ("prefetch-half-1M", "mixed_dep-half-group5-1M", "mixed_dep-max-group1-1M"))
    assert chain is not None and groups is not None and independent is not None
    assert (chain.components, chain.critical_path, chain.speedup_bound) == (1, chain.transactions, 1.0)
    assert (groups.largest_component, groups.critical_path) == (5, 5) and groups.write_overlap > 0
    assert groups.components == -(-groups.transactions // 5), "a group of five per slot, the last one shorter"
    assert (independent.components, independent.edges, independent.write_overlap) == (independent.transactions, 0, 0.0)
    assert independent.speedup_bound == independent.transactions > 30 and independent.slots_per_tx == 1.0


def test_a_sender_is_recovered_from_its_signature() -> None:
    """The envelope's sender is the key's address, whatever the transaction type (legacy EIP-155 and 1559 here)."""
    from eth_account import Account

    account = Account.create("balgen bal_features")
    legacy = account.sign_transaction({"nonce": 3, "gasPrice": 7, "gas": 21_000, "to": "0x" + "11" * 20, "value": 1, "data": b"", "chainId": 1})
    dynamic = account.sign_transaction(
        {"type": 2, "nonce": 4, "maxFeePerGas": 9, "maxPriorityFeePerGas": 1, "gas": 50_000, "to": "0x" + "22" * 20,
         "value": 0, "data": b"", "chainId": 1, "accessList": []}
    )  # fmt: skip
    for signed, gas, recipient in ((legacy, 21_000, "11"), (dynamic, 50_000, "22")):
        facts = envelope_facts(bytes(signed.raw_transaction))
        assert facts.sender == bytes.fromhex(account.address[2:]) and facts.gas_limit == gas
        assert facts.recipient == bytes.fromhex(recipient * 20)


def _features(overlap: float) -> BalFeatures:
    return BalFeatures(
        transactions=100, edges=0, components=100, largest_component=1, critical_path=1, speedup_bound=1.0,
        write_overlap=overlap, accounts_per_tx=2.0, slots_per_tx=1.0, read_slots_per_tx=0.0,
    )  # fmt: skip


def _block(test_id: str, overlap: float, sequential: float, parallel: float) -> MeasuredBlock:
    return MeasuredBlock(test_id, test_id.split("-", 1)[0], 30_000_000, _features(overlap), sequential, parallel)


def test_the_rule_is_the_threshold_that_saves_the_most_time() -> None:
    blocks = [_block("a-1", 0.0, 2.0, 1.0), _block("b-1", 0.9, 1.0, 1.5), _block("c-1", 0.1, 2.0, 1.2)]
    rule = fit_rule(blocks)
    assert rule == Stump("write_overlap", 0.5, False), "only write_overlap differs; 0.5 parts the slower-in-parallel block"
    assert rule.describe() == "parallel if write_overlap <= 0.5"
    assert [rule.parallel(block.features) for block in blocks] == [True, False, True]
    assert fit_rule([_block("a-1", 0.0, 2.0, 1.0)]) == ALWAYS_PARALLEL, "nothing to gain from a threshold: the simplest"


def test_each_family_is_chosen_for_by_a_rule_fitted_without_it() -> None:
    """Two families of shared writes lose in parallel: left out, each is still chosen sequential by the other's rule;
    the one family unlike any other (independent writers) is where the rule does not generalise."""
    blocks = [
        _block("chain-1", 0.9, 1.0, 1.4), _block("chain-2", 0.8, 1.0, 1.3),
        _block("hot-1", 0.95, 1.0, 1.2),
        _block("free-1", 0.0, 2.0, 1.0), _block("free-2", 0.05, 2.0, 1.1),
        _block("mid-1", 0.2, 2.0, 1.5),
    ]  # fmt: skip
    table = fallback_table("geth", "run", blocks)
    choices = {row.test_id: row.choice for row in table.rows}
    assert choices["chain-1"] == choices["chain-2"] == choices["hot-1"] == "sequential"
    assert choices["free-1"] == choices["free-2"] == "parallel"
    rule, parallel, sequential, hindsight = table.aggregates
    assert rule.mgas_per_s >= max(parallel.mgas_per_s, sequential.mgas_per_s)
    assert hindsight.worst_loss_pct == 0.0 and hindsight.mgas_per_s >= rule.mgas_per_s
    assert parallel.worst_test == "chain-1" and parallel.worst_loss_pct == 40.0
    assert {family.family: family.loss_pct for family in table.families}["chain"] == 0.0
    assert table.rule_on_all.startswith("parallel if ")

    odd = fallback_table("geth", "run", [*blocks, _block("odd-1", 0.0, 1.0, 1.5)])
    lost = {family.family: (family.rule, family.loss_pct) for family in odd.families}
    assert lost["odd"] == ("parallel if write_overlap <= 0.5", 50.0), "unlike every other family: the rule fails it"
    assert odd.aggregates[0].worst_loss_pct >= 50.0, "and the aggregate's worst case shows it"


def test_the_report_of_a_modes_run_shows_what_the_rule_chooses(tmp_path: Path) -> None:
    """Per test the rule fitted without its family, per run the aggregate against both constants and the worst test."""
    from balgen.commands.report import run_report
    from balgen.results.schema import RunResult, RunState
    from test_report_modes import FULL, SEQUENTIAL, _result

    slower = {phase: ms * 2.5 for phase, ms in FULL.items()}  # parallel slower than sequential: 175 ms against 140
    run = RunResult(
        label="geth-modes", balgen_version="0", started_at="2026-01-01T00:00:00+00:00", fixtures_path="f", keyword=None,
        warmup=1, repeat=5, cold=False, fail_fast=False, target={"kind": "managed", "client": "geth"},
        modes=[{"name": name, "flags": [], "switches": None, "verified": True} for name in ("sequential", "full")],
    )  # fmt: skip
    shapes = {"chain-a-60M": (0.9, slower), "chain-b-60M": (0.8, slower), "free-a-60M": (0.0, FULL), "free-b-60M": (0.1, FULL),
              "hot-a-60M": (0.95, slower), "mid-a-60M": (0.05, FULL)}  # fmt: skip
    for test_id, (overlap, parallel) in shapes.items():
        for mode, phases in (("sequential", SEQUENTIAL), ("full", parallel)):
            result = _result(test_id, mode, phases)
            run.tests.append(result.model_copy(update={"bal_features": _features(overlap)}))
    run.state = RunState.COMPLETE
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text(run.model_dump_json())
    assert run_report([str(tmp_path / "run"), "--output", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Fallback rule from the access list alone (geth" in text
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines() if line.startswith("| chain-") or line.startswith("| free-")}
    assert "| sequential |" in rows["chain-a-60M"] and "| parallel |" in rows["free-a-60M"]
    aggregate = next(line for line in text.splitlines() if line.startswith("| rule (each family left out"))
    assert aggregate.endswith("| - | 0.0% |"), "every family chosen right by the others' rule: no test lost"
    always_parallel = next(line for line in text.splitlines() if line.startswith("| always parallel"))
    assert "chain-" in always_parallel or "hot-" in always_parallel, "always parallel's worst test is a shared-write one"
