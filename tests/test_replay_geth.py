"""
`balgen replay` against the real pinned geth on 127.0.0.1, on a small filled
suite: a full replay passes every check and writes every file; a tampered
fixture (wrong state root, block hash recomputed) is reported INVALID as a
failure, and passes where the fixture expects INVALID; a resent known block
is flagged (a rollback that did not happen on a client the user runs:
tests/test_measurement_geth.py, on its user's geth); `--cold` restarts geth before each
measured execution, and `--drop-caches` drops the page cache after each
restart; and geth is stopped on errors (on Ctrl-C and the other stop
signals: tests/test_reliability_faults.py). The last two, which test
balgen's handling of the client, run tests/harness_geth.py's geth.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fill_runs import copied_from_suite_fill

from balgen.chain.header import Header
from balgen.commands.replay import run_replay
from balgen.replay.discovery import discover
from balgen.replay.page_cache import drop_caches_problem
from balgen.clients.kinds.geth import PRESET as GETH_PRESET
from balgen.replay.runner import ReplayOptions, replay_suite, without_modes
from balgen.replay.targets import ManagedClient
from balgen.plumbing.toolchain import GO_ETHEREUM_VERSION, pinned_geth
from harness_geth import HARNESS_GETH
from processes_left import processes_mentioning


pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not pinned_geth().is_file(), reason="pinned geth not built"),
]

SUITE = ["keccak_chain-greedy-1M", "keccak_chain-half-1M", "keccak_chain-max-1M", "serial_chain-max-1M"]
"""A few fixtures of the default families keep the file fast; every check runs on each."""


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copied_from_suite_fill(tmp_path_factory, SUITE)


def results_of(output: Path) -> dict[str, Any]:
    return json.loads((output / "results.json").read_text())


def test_full_replay_passes_every_check(filled: Path, tmp_path: Path) -> None:
    output = tmp_path / "run"
    # The agreement with geth's own time is recorded, not checked: on this shared 2-core machine (load
    # average 10-15) the time outside geth's block processing alone can exceed the margin; test_replay_modes
    # and the unit tests check it.
    code = run_replay(
        [str(filled), "--warmup", "1", "--repeat", "2", "--label", "small", "--agreement", "record", "--output", str(output)]
    )
    run = results_of(output)
    assert code == 0, [(t["test_id"], t["failure"]) for t in run["tests"]]
    assert run["state"] == "complete" and run["label"] == "small"
    assert run["counts"] == {"passed": 4, "failed": 0, "not_run": 0}
    assert GO_ETHEREUM_VERSION in run["client_versions"][0] and run["target"]["kind"] == "managed"
    # nothing sent until the release's KZG set-up was over (tests/test_start_work.py shows the wait outlasts it)
    assert run["method"]["client_start"].startswith("after each start and restart") and "at most 30 s" in run["method"]["client_start"]
    for test in run["tests"]:
        assert test["format"] == "blockchain_test_engine_x"
        roles = [e["role"] for e in test["executions"]]
        assert roles[-3:] == ["warmup", "measured", "measured"] and set(roles[:-3]) <= {"setup"}
        assert test["isolation"] == "sibling_blocks" and test["agreement"].startswith(f"{test['agreement'].split()[0]} of 3 ")
        for execution in test["executions"]:
            assert execution["status"] == "VALID" and not execution["known_before_send"]
            assert execution["new_payload_ns"] > 0
            setup = execution["role"] == "setup"
            assert (execution["forkchoice_updated_ns"] is not None) == setup, "siblings get no forkchoice update"
            assert (execution["variant"] is None) == setup
            assert execution["own_timing"]["block_hash"] == execution["block_hash"]
            assert execution["own_timing"]["gas_used"] == execution["gas_used"]
            assert 0 < execution["own_timing"]["total_ms"] < execution["new_payload_ns"] / 1e6
        stats = test["statistics"]
        assert stats["new_payload_ns"]["count"] == 2 and stats["own_total_ms"]["count"] == 2
    lines = (output / "executions.csv").read_text().splitlines()
    assert len(lines) == 1 + sum(len(t["executions"]) for t in run["tests"])
    runtimes = (output / "runtimes.csv").read_text().splitlines()
    assert runtimes[0] == "client_name,fixture_name,test_runtime_ms" and len(runtimes) == 5
    assert all(line.startswith("geth,") for line in runtimes[1:])
    # The CSVs name each test by its EEST-style id, so joins with EEST-sourced data find it.
    titles = [line.split(",")[1] for line in runtimes[1:]]
    import pandas as pd  # here, not at collection: pandas is half a CPU-second of every pytest worker's start
    from benchmarkoor_fetch.parse.titles import parse_test_titles

    parsed, unparsed = parse_test_titles(pd.DataFrame({"test_title": titles}))
    assert not unparsed and set(parsed["block_limit_million"]) == {1}, titles
    assert all("-blockchain_test_engine_x-benchmark-gas-value_1M-" in title for title in titles), titles


def _tampered(filled: Path, name: str, expect_invalid: bool) -> dict[str, Any]:
    """An engine fixture whose benchmark block has a wrong state root and a recomputed hash."""
    engine_file = next((filled / "blockchain_tests_engine").rglob(f"{name}.json"))
    block_file = next((filled / "blockchain_tests").rglob(f"{name}.json"))
    fixture = json.loads(engine_file.read_text())[name]
    header_json = json.loads(block_file.read_text())[name]["blocks"][-1]["blockHeader"]
    header = Header.model_validate(header_json | {"stateRoot": "0x" + "66" * 32})
    payload = fixture["engineNewPayloads"][-1]
    assert payload["params"][0]["blockHash"] == header_json["hash"]
    payload["params"][0] |= {"stateRoot": "0x" + "66" * 32, "blockHash": "0x" + header.hash.hex()}
    if expect_invalid:
        payload["validationError"] = "BlockException.INVALID_STATE_ROOT"
        fixture["lastblockhash"] = payload["params"][0]["parentHash"]
    return fixture


def _resent_known_block(filled: Path, name: str) -> dict[str, Any]:
    """An engine fixture that sends its first block again at the end."""
    fixture = json.loads(next((filled / "blockchain_tests_engine").rglob(f"{name}.json")).read_text())[name]
    payloads = fixture["engineNewPayloads"]
    payloads[-1] = {**payloads[-1], "phase": "setup"}
    payloads.append({**payloads[0], "phase": "testing"})  # the resent block is the one measured
    return fixture


def test_tampered_and_known_blocks_are_failures(filled: Path, tmp_path: Path) -> None:
    folder = tmp_path / "fixtures"
    folder.mkdir()
    cases = {
        "tampered": _tampered(filled, "keccak_chain-max-1M", expect_invalid=False),
        "tampered_expected": _tampered(filled, "keccak_chain-max-1M", expect_invalid=True),
        "resent": _resent_known_block(filled, "keccak_chain-max-1M"),
    }  # one test's fixtures, one genesis: one node (a start is about 3 CPU-s)
    for name, fixture in cases.items():
        (folder / f"{name}.json").write_text(json.dumps({name: fixture}))
    output = tmp_path / "run"
    # verdicts, not times: no wait for the node's start-up work
    assert run_replay([str(folder), "--warmup", "1", "--repeat", "2", "--settle-limit", "0", "--output", str(output)]) == 1
    tests = {t["test_id"]: t for t in results_of(output)["tests"]}
    tampered = tests["tampered"]
    assert tampered["verdict"] == "failed"
    assert "warmup execution 1: engine_newPayloadV5 returned INVALID: " in tampered["failure"]
    assert "the fixture expects VALID" in tampered["failure"]
    assert tampered["executions"][-1]["status"] == "INVALID"
    expected = tests["tampered_expected"]
    assert expected["verdict"] == "passed", expected["failure"]
    assert [e["role"] for e in expected["executions"]][-1:] == ["measured"], "an INVALID block is sent once"
    assert expected["executions"][-1]["validation_error"]
    resent = tests["resent"]
    assert resent["verdict"] == "failed" and "was already known to the client" in resent["failure"]
    assert resent["executions"][-1]["known_before_send"] and resent["executions"][-1]["status"] == "VALID"


@pytest.fixture(scope="module")
def cold_run(filled: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """
    `--cold`, with `--drop-caches` where this machine lets it drop the page cache: one replay for both
    tests below (each measured execution is a geth restart, about 3 CPU-s of start each).
    """
    output = tmp_path_factory.mktemp("cold") / "run"
    dropping = ["--drop-caches"] if drop_caches_problem() is None else []
    argv = [str(filled), "--client-bin", str(HARNESS_GETH), "-k", "serial_chain-max", "--cold", *dropping, "--warmup", "1", "--repeat", "2", "--output", str(output)]
    assert run_replay(argv) == 0
    return results_of(output)


def test_cold_restarts_geth_before_each_measured_execution(cold_run: dict[str, Any]) -> None:
    (test,) = cold_run["tests"]
    benchmark = [e for e in test["executions"] if e["role"] != "setup"]
    assert [(e["role"], e["restarted_before"]) for e in benchmark] == [
        ("warmup", False), ("measured", True), ("measured", True)
    ]  # fmt: skip
    assert all(e["own_timing"] is not None and not e["known_before_send"] for e in benchmark)
    assert cold_run["cold"] and cold_run["method"]["agreement"] == "record", "a restart's first-call costs are what --cold measures"


@pytest.mark.skipif(drop_caches_problem() is not None, reason=f"cannot drop the page cache: {drop_caches_problem()}")
def test_drop_caches_records_how_each_execution_was_prepared(cold_run: dict[str, Any]) -> None:
    """The page cache is dropped before each measured execution, after its restart, and what geth read is recorded."""
    assert cold_run["drop_caches"]
    (test,) = cold_run["tests"]
    prepared = [(e["role"], e["restarted_before"], e["page_cache_dropped"]) for e in test["executions"] if e["role"] != "setup"]
    assert prepared == [("warmup", False, False), ("measured", True, True), ("measured", True, True)]
    assert all(e["client_reads"]["read_bytes_total"] > 0 for e in test["executions"] if e["role"] == "measured")


class _Boom(Exception):
    pass


class _FailingObserver:
    def group_started(self, *_: object) -> None:
        pass

    def test_started(self, *_: object) -> None:
        pass

    def execution_done(self, *_: object) -> None:
        raise _Boom("observer failed mid-test")

    def test_finished(self, *_: object) -> None:
        pass


def test_geth_is_stopped_when_the_replay_raises(filled: Path, tmp_path: Path) -> None:
    with pytest.raises(_Boom):
        replay_suite(
            discover(filled / "blockchain_tests_engine_x"),
            without_modes(ManagedClient(GETH_PRESET, HARNESS_GETH, temp_parent=tmp_path)),
            ReplayOptions(),
            _FailingObserver(),
        )
    assert processes_mentioning(tmp_path, "geth") == []
    assert list(tmp_path.iterdir()) == [], "datadir and genesis removed"
