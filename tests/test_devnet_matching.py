"""
`devnet-check`'s matching of chain transactions to payloads, on a simulated
chain (`simulated_chain.SimulatedSender`) of the nine `mixed_dep` workloads at
1M: 96 payloads in them begin with the same deploy transaction, 930 pairs of
payloads are one the start of the other, and many are identical from one
workload to the next. (The geth test of the same, through the command, is
`test_devnet_check.py::test_a_folder_of_workloads_sharing_transactions_passes`.)
"""

from __future__ import annotations


import pytest

from balgen.commands.export import run_export
from balgen.devnet.exported import ExportedWorkload, read_exported, workload_files
from balgen.devnet.matching import ChainIndex, match_all
from balgen.devnet.spamoor_wallets import child_wallet, spammer_wallets
from balgen.devnet.workload_check import WorkloadRuns, workload_runs
from simulated_chain import SimulatedSender


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> list[ExportedWorkload]:
    folder = tmp_path_factory.mktemp("export") / "mixed"
    assert run_export(["spamoor", "-k", "mixed_dep", "--gas-benchmark-values", "1", "--output", str(folder)]) == 0
    return [read_exported(path) for path in workload_files(folder)]


def runs_of(workloads: list[ExportedWorkload], sender: SimulatedSender) -> tuple[list[WorkloadRuns], ChainIndex]:
    index = ChainIndex([tx for block in sender.blocks for tx in block])
    matches = match_all([item.run.payloads for item in workloads], index)
    return [workload_runs(item, matches, number) for number, item in enumerate(workloads)], index


def test_workloads_sharing_transactions_each_find_one_whole_run(mixed: list[ExportedWorkload]) -> None:
    """Sent largest group first, so that a smaller group's payload meets a larger one's run first in chain order."""
    sender = SimulatedSender()
    sent = {}
    for item in sorted(mixed, key=lambda item: -max(len(p.txs) for p in item.run.payloads)):
        sent[item.run.stem] = sender.send_payloads(item.run.payloads, f"run/{item.run.stem}")
    found, index = runs_of(mixed, sender)
    claimed = []
    for item, runs in zip(mixed, found, strict=True):
        assert runs.missing is None, (item.run.stem, runs.missing)
        assert len(runs.complete) == 1, item.run.stem
        for payload, run in zip(item.run.payloads, runs.complete[0], strict=True):
            assert len(run.txs) == len(payload.txs)
            assert len({tx.sender for tx in run.txs}) == len({tx.sender for tx in payload.txs}), "one wallet per sender"
        claimed += [tx.hash for run in runs.complete[0] for tx in run.txs]
    assert sorted(claimed) == sorted(tx.hash for txs in sent.values() for tx in txs), "every transaction once"
    assert index.claimed == set(claimed)


def test_a_run_whose_last_transactions_are_not_mined_is_not_complete(mixed: list[ExportedWorkload]) -> None:
    (group2,) = [item for item in mixed if item.run.stem == "mixed_dep-max-group2-1M"]
    sender = SimulatedSender()
    sender.send_payloads(group2.run.payloads, "first")
    sender.send_payloads(group2.run.payloads, "second", drop_last=1)
    (runs,), _ = runs_of([group2], sender)
    assert len(runs.complete) == 1
    # payloads of one workload can be identical (group-10 and group-17 here): the line names one of them
    assert runs.missing is not None and runs.missing.startswith("17 of 18 payloads found; mixed_dep-max-group2-1M/group-")
    assert " tx 2 (benchmark block tx " in runs.missing and runs.missing.endswith("nonce 1 of its wallet is missing")


def test_a_single_payload_cut_short_is_not_complete_rather_than_not_run(mixed: list[ExportedWorkload]) -> None:
    (greedy,) = [item for item in mixed if item.run.stem == "mixed_dep-greedy-group5-1M"]
    sender = SimulatedSender()
    sender.send_payloads(greedy.run.payloads, "cut", drop_last=1)
    (runs,), _ = runs_of([greedy], sender)
    assert runs.complete == []
    assert runs.missing is not None and runs.missing.startswith("0 of 1 payload found; ") and "tx 1" in runs.missing


def test_every_run_in_the_range_is_found(mixed: list[ExportedWorkload]) -> None:
    (group5,) = [item for item in mixed if item.run.stem == "mixed_dep-max-group5-1M"]
    sender = SimulatedSender()
    first = sender.send_payloads(group5.run.payloads, "first")
    second = sender.send_payloads(group5.run.payloads, "second")
    (runs,), _ = runs_of([group5], sender)
    assert runs.missing is None and len(runs.complete) == 2
    assert [tx.hash for run in runs.complete[0] for tx in run.txs] == [tx.hash for tx in first]
    assert [tx.hash for run in runs.complete[1] for tx in run.txs] == [tx.hash for tx in second]


def test_a_cut_run_is_told_of_its_own_workload_not_of_one_sending_the_same(mixed: list[ExportedWorkload]) -> None:
    """group5's last payload sends what group1's 36 do; its second run stops after that payload's deploy."""
    chosen = [item for item in mixed if item.run.stem.startswith("mixed_dep-max-")]
    sender = SimulatedSender()
    for group in (5, 2, 1):
        (item,) = [item for item in chosen if item.run.stem == f"mixed_dep-max-group{group}-1M"]
        sender.send_payloads(item.run.payloads, f"shared/{group}")
    (group5,) = [item for item in chosen if item.run.stem == "mixed_dep-max-group5-1M"]
    sender.send_payloads(group5.run.payloads, "cut", drop_last=1)
    found, _ = runs_of(chosen, sender)
    for item, runs in zip(chosen, found, strict=True):
        assert len(runs.complete) == 1, item.run.stem
        if item is group5:
            assert runs.missing is not None and runs.missing.startswith(f"7 of 8 payloads found; {group5.run.payloads[-1].name} tx 1 ")
        else:
            assert runs.missing is None, (item.run.stem, runs.missing)


ROOT_KEY = bytes.fromhex("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
"""spamoor's root key (its -p) in the runs below."""


def test_spamoor_s_wallets_are_derived_as_its_wallet_pool_derives_them() -> None:
    """
    Addresses computed once with go-ethereum v1.17.10's crypto, by the code of
    spamoor's `prepareChildWallet` (walletpool.go at 43cad30) run as it is.
    """
    seed = "balgen/mixed_dep-half-group5-1M"
    assert child_wallet(ROOT_KEY, seed, 0).hex() == "7c427e05ba3ad278e36f82cbdb68cf40cc7e1e8d"
    assert child_wallet(ROOT_KEY, seed, 1).hex() == "4aadf91639a80c77bb4918b1401314bdb91e739f"
    assert child_wallet(ROOT_KEY, seed, 2197).hex() == "9eb6748f54a356a7b388331a74d32b0b52a3aef2"
    assert len(spammer_wallets(ROOT_KEY, seed, 220)) == 220


@pytest.fixture(scope="module")
def two_exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[ExportedWorkload]]:
    """mixed_dep-half-group5 and serial_chain-max exported at 1M, 3M and 30M, as three devnet runs would be."""
    exports = {}
    for gas in ("1", "3", "30"):
        folder = tmp_path_factory.mktemp("export") / f"{gas}M"
        assert run_export(
            ["spamoor", "-k", "mixed_dep-half-group5 or serial_chain-max", "--gas-benchmark-values", gas, "--output", str(folder)]
        ) == 0
        exports[gas] = [read_exported(path) for path in workload_files(folder)]
    return exports


def spammed(sender: SimulatedSender, items: list[ExportedWorkload]) -> dict[str, list[str]]:
    """Each workload file run by spamoor with ROOT_KEY: its own spammer's wallets; the hashes each sent."""
    return {
        item.run.stem: [tx.hash for tx in sender.send_payloads(item.run.payloads, item.config.seed, root=ROOT_KEY)]
        for item in items
    }


def test_a_run_of_another_export_of_the_same_workloads_is_told_apart_by_its_wallets(
    two_exports: dict[str, list[ExportedWorkload]],
) -> None:
    """
    Issue 43, finding 15. At 1M and 3M, mixed_dep-half-group5's payloads are
    3 byte-identical and 1 the start of the other export's; serial_chain-max
    at 30M begins with 1M's deploy. Sent 3M and 30M first, then 1M: by what
    they send alone, 1M's check finds its run and runs "cut short" for good
    (before, also a second run made of 3M's payloads); by its spammer's
    wallets, each finds its own run only.
    """
    sender = SimulatedSender()
    spammed(sender, two_exports["3"])
    spammed(sender, [item for item in two_exports["30"] if item.run.stem.startswith("serial_chain-max-")])
    ours = spammed(sender, two_exports["1"])
    checked = two_exports["1"]
    blind = dict(zip([item.run.stem for item in checked], runs_of(checked, sender)[0], strict=True))
    half = blind["mixed_dep-half-group5-1M"]
    assert len(half.complete) == 1, "3M's longer payload, whose wallet goes on calling its contracts, is not a run"
    assert half.missing is not None and "nonce 4 of its wallet" in half.missing, "3M's shorter one looks cut short"
    assert "the first of sender[1] is missing" in str(blind["serial_chain-max-1M"].missing), "30M's run: not complete"
    index = ChainIndex([tx for block in sender.blocks for tx in block])
    wallets = [spammer_wallets(ROOT_KEY, item.config.seed, item.config.max_wallets) for item in checked]
    matches = match_all([item.run.payloads for item in checked], index, wallets)
    for number, item in enumerate(checked):
        runs = workload_runs(item, matches, number)
        assert runs.missing is None and len(runs.complete) == 1, (item.run.stem, runs.missing, len(runs.complete))
        assert sorted(tx.hash for run in runs.complete[0] for tx in run.txs) == sorted(ours[item.run.stem])
