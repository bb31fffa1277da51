"""
`balgen replay` and `balgen report` without a running client: geth's
slow-block log lines, the statistics, fixture discovery and `-k`, every bad
input (one line, exit code 2, nothing written), the result files and the
comparison of runs with its Markdown and chart.
"""

from __future__ import annotations

import csv
import json
import socket
from pathlib import Path
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from balgen.plumbing.errors import BadInput
from balgen.commands.replay import run_replay
from balgen.results.comparison import compare, load_runs
from balgen.fixtures.models import BlockchainEngineFixture, BlockchainEngineXFixture
from balgen.replay.discovery import discover
from balgen.results.measurements import Execution, Role, benchmark_statistics, distribution
from balgen.replay.outputs import EXECUTION_COLUMNS, RunWriter
from balgen.commands.report import run_report
from balgen.results.schema import FixtureResult, RunResult, RunState, Verdict
from balgen.replay.client_chain import CheckFailed
from balgen.replay.engine_payloads import VALID
from balgen.replay.runner import _check_status, fixture_name
from balgen.clients.kinds import geth, reth
from balgen.clients.slow_block_log import SlowBlockLogReader

ENGINE, ENGINE_X = BlockchainEngineFixture.fixture_format.name, BlockchainEngineXFixture.fixture_format.name
HASH = "0x" + "ab" * 32
SLOW_BLOCK_JSON = (
    '{"level":"warn","msg":"Slow block","block":{"number":2,"hash":"' + HASH + '","gas_used":999963,'
    '"tx_count":1},"timing":{"execution_ms":15.68,"state_read_ms":0.02,"state_hash_ms":0.09,'
    '"commit_ms":0.1,"total_ms":15.85},"throughput":{"mgas_per_sec":63.08},"state_reads":{"accounts":3,'
    '"storage_slots":1,"code":1,"code_bytes":100},"state_writes":{"accounts":2,"accounts_deleted":0,'
    '"storage_slots":1,"storage_slots_deleted":0,"code":0,"code_bytes":0},"cache":{"account":{"hits":1,'
    '"misses":2,"hit_rate":33.3},"storage":{"hits":0,"misses":1,"hit_rate":0},"code":{"hits":0,"misses":1,'
    '"hit_rate":0,"hit_bytes":0,"miss_bytes":100}}}'
)


# -- geth's slow-block log ---------------------------------------------------


def test_slow_block_line_in_geths_terminal_format() -> None:
    timing = geth.parse_line(f"WARN [11-21|20:08:29.123] {SLOW_BLOCK_JSON}")
    assert timing is not None
    assert (timing.block_number, timing.block_hash, timing.gas_used) == (2, HASH, 999963)
    assert (timing.execution_ms, timing.state_read_ms, timing.state_hash_ms) == (15.68, 0.02, 0.09)
    assert (timing.commit_ms, timing.total_ms, timing.mgas_per_sec) == (0.1, 15.85, 63.08)
    assert timing.counts is not None
    assert (timing.counts.reads.accounts, timing.counts.reads.code_bytes) == (3, 100)
    assert (timing.counts.code_cache.misses, timing.counts.code_cache.miss_bytes) == (1, 100)


def test_slow_block_line_in_geths_json_log_format() -> None:
    line = json.dumps({"t": "2026-11-21T20:08:29Z", "lvl": "warn", "msg": SLOW_BLOCK_JSON})
    timing = geth.parse_line(line)
    assert timing is not None and timing.total_ms == 15.85


RETH_SLOW_BLOCK = (
    "2026-11-23T12:07:43.202543Z  WARN reth::slow_block: Slow block block.number=2 block.hash={hash} "
    "block.gas_used=999134 block.tx_count=38 timing.execution_ms=425 timing.state_read_ms=1 timing.state_hash_ms=6 "
    "{commit}timing.total_ms=432 throughput.mgas_per_sec=\"2.31\" state_reads.accounts=44 state_reads.storage_slots=12 "
    "state_reads.code=5 state_reads.code_bytes=1127 state_writes.accounts=42 state_writes.accounts_deleted=0 "
    "state_writes.storage_slots=3 state_writes.storage_slots_deleted=0 state_writes.code=0 state_writes.code_bytes=0 "
    "cache.account.hits=29 cache.account.misses=15 cache.account.hit_rate=\"65.91\" cache.storage.hits=1 "
    "cache.storage.misses=11 cache.storage.hit_rate=\"8.33\" cache.code.hits=1 cache.code.misses=4 "
    "cache.code.hit_rate=\"20.00\""
)
"""A line of the reth build's log (`--engine.slow-block-threshold 0`), as it executed a block."""


def test_reth_slow_block_line_reads_like_geths(tmp_path: Path) -> None:
    executed = RETH_SLOW_BLOCK.format(hash=HASH, commit="")
    timing = reth.parse_line(executed)
    assert timing is not None
    assert (timing.block_number, timing.block_hash, timing.gas_used) == (2, HASH, 999134)
    assert (timing.execution_ms, timing.state_hash_ms, timing.commit_ms, timing.total_ms) == (425, 6, 0, 432)
    assert timing.mgas_per_sec == 2.31 and timing.counts is not None and timing.counts.reads.accounts == 44
    # reth logs the block again once persisted; the execution's line is the one kept
    log = tmp_path / "reth.log"
    log.write_text(executed + "\n" + RETH_SLOW_BLOCK.format(hash=HASH, commit="timing.commit_ms=481 ") + "\n")
    kept = SlowBlockLogReader(log, reth.timings).timing_of(HASH)
    assert kept is not None and kept.commit_ms == 0 and kept.total_ms == 432


@pytest.mark.parametrize(
    "line",
    [
        "INFO [11-21|20:08:29.123] Imported new potential chain segment number=2",
        'WARN [11-21|20:08:29.123] {"level":"warn","msg":"Slow block","block":{"number":2}}',
        'WARN [11-21|20:08:29.123] {"level":"warn","msg":"Slow block", truncated',
    ],
)
def test_other_lines_are_no_timing(line: str) -> None:
    assert geth.parse_line(line) is None and reth.parse_line(line) is None


def test_log_reader_takes_whole_lines_once(tmp_path: Path) -> None:
    log = tmp_path / "geth.log"
    log.write_text(f"INFO start\nWARN [x] {SLOW_BLOCK_JSON}\nWARN [x] {SLOW_BLOCK_JSON[:50]}")
    reader = SlowBlockLogReader(log, geth.timings)
    assert reader.timing_of(HASH) is not None
    assert reader.timing_of(HASH) is None, "an entry is consumed once"
    with log.open("a") as stream:
        stream.write(SLOW_BLOCK_JSON[50:] + "\n")
    assert reader.timing_of(HASH) is not None, "the line completed later is read then"
    with log.open("a") as stream:
        stream.write(f"WARN [x] {SLOW_BLOCK_JSON}\n")
    reader.skip_to_end()
    assert reader.read_new() == []


# -- statistics ----------------------------------------------------------------


def test_distribution_of_known_values() -> None:
    stats = distribution([10, 20, 30, 40, 50])
    assert stats is not None
    assert (stats.count, stats.median, stats.mean) == (5, 30, 30)
    assert stats.p5 == pytest.approx(12) and stats.p95 == pytest.approx(48)
    assert stats.cv == pytest.approx(15.8113883 / 30)
    single = distribution([7])
    assert single is not None and (single.median, single.p5, single.p95, single.cv) == (7, 7, 7, None)
    assert distribution([]) is None


def _execution(role: Role, new_payload_ns: int, repetition: int = 0, test_id: str = "t") -> Execution:
    return Execution(
        test_id=test_id, role=role, repetition=repetition, payload_index=1, block_number=2,
        block_hash=HASH, gas_used=60_000_000, transaction_count=10, status="VALID",
        new_payload_ns=new_payload_ns, forkchoice_updated_ns=1_000_000, known_before_send=False,
        restarted_before=False, own_timing=None,
    )  # fmt: skip


def test_statistics_count_only_measured_executions() -> None:
    executions = [
        _execution(Role.SETUP, 5_000_000),
        _execution(Role.WARMUP, 900_000_000),
        *(_execution(Role.MEASURED, ns, i) for i, ns in enumerate([100_000_000, 120_000_000, 110_000_000], 1)),
    ]
    stats = benchmark_statistics(executions)
    assert stats.new_payload_ns is not None and stats.new_payload_ns.median == 110_000_000
    assert stats.mgas_per_second is not None
    assert stats.mgas_per_second.median == pytest.approx(60_000_000 * 1000 / 110_000_000)
    assert stats.own_total_ms is None
    assert executions[2].mgas_per_second == 600.0


@pytest.mark.parametrize(
    "test_id, name",
    [
        ("keccak_chain-half-60M", "keccak_chain-half-60M"),
        ("tests/benchmark/test_worst.py::test_x[fork_Prague-gas-value_30M]", "test_worst.py__test_x[fork_Prague-gas-value_30M]"),
        ("test_a.py__test_b", "test_a.py__test_b"),
    ],
)
def test_fixture_name_is_benchmarkoor_fetchs(test_id: str, name: str) -> None:
    assert fixture_name(test_id) == name


# -- fixture discovery ---------------------------------------------------------


def _payload(number: int, parent: str, block_hash: str) -> dict[str, Any]:
    """A complete Prague `engineNewPayloads` entry (the values need not form a valid block)."""
    execution_payload = {
        "parentHash": parent, "feeRecipient": "0x" + "00" * 20, "stateRoot": "0x" + "02" * 32,
        "receiptsRoot": "0x" + "04" * 32, "logsBloom": "0x" + "00" * 256, "blockNumber": hex(number),
        "gasLimit": "0x1000000", "gasUsed": "0x5208", "timestamp": hex(12 * number), "extraData": "0x",
        "prevRandao": "0x" + "00" * 32, "baseFeePerGas": "0x7", "blobGasUsed": "0x0", "excessBlobGas": "0x0",
        "blockHash": block_hash, "transactions": ["0x02"], "withdrawals": [],
    }
    return {
        "params": [execution_payload, [], "0x" + "00" * 32, []],
        "newPayloadVersion": "4", "forkchoiceUpdatedVersion": "3", "phase": "testing",
    }  # fmt: skip


GENESIS = {"hash": "0x" + "01" * 32, "stateRoot": "0x" + "02" * 32, "gasLimit": "0x1000000"}


def _engine_x(pre_hash: str = "0x00aa", **extra: Any) -> dict[str, Any]:
    return {
        "network": "Prague", "preHash": pre_hash, "lastblockhash": "0x" + "03" * 32,
        "engineNewPayloads": [_payload(1, GENESIS["hash"], "0x" + "03" * 32)],
        "_info": {"fixture-format": ENGINE_X},
    } | extra  # fmt: skip


def _suite(root: Path) -> Path:
    """A small engine_x suite (two tests, one group), an engine twin of one and a blockchain_test."""
    (root / "x" / "pre_alloc").mkdir(parents=True)
    (root / "x" / "pre_alloc" / "0x00aa.json").write_text(
        json.dumps({"network": "Prague", "chainId": "0x01", "genesis": GENESIS, "pre": {}})
    )
    (root / "x" / "for_prague").mkdir()
    (root / "x" / "for_prague" / "a.json").write_text(json.dumps({"alpha-1M": _engine_x(), "beta-1M": _engine_x()}))
    (root / "e").mkdir()
    engine = _engine_x() | {"genesisBlockHeader": GENESIS, "pre": {}, "_info": {"fixture-format": ENGINE}}
    del engine["preHash"]
    (root / "e" / "alpha.json").write_text(json.dumps({"alpha-1M": engine, "gamma-1M": engine}))
    (root / "b").mkdir()
    (root / "b" / "alpha.json").write_text(json.dumps({"alpha-1M": {"_info": {"fixture-format": "blockchain_test"}}}))
    return root


def test_discovery_groups_by_genesis_and_prefers_engine_x(tmp_path: Path) -> None:
    suite = discover(_suite(tmp_path))
    assert suite.test_count == 3
    (group,) = suite.groups
    assert group.genesis.genesis_hash == GENESIS["hash"], "one group: the engine twin shares the genesis"
    assert [(ref.test_id, ref.format) for ref in group.tests] == [
        ("gamma-1M", ENGINE), ("alpha-1M", ENGINE_X), ("beta-1M", ENGINE_X)
    ]  # fmt: skip
    assert any("1 blockchain_test fixtures skipped" in note for note in suite.notes)
    assert any("1 blockchain_test_engine fixtures skipped" in note for note in suite.notes)
    only_engine = discover(tmp_path, formats="engine")
    assert [ref.test_id for g in only_engine.groups for ref in g.tests] == ["alpha-1M", "gamma-1M"]


ENVIRONMENT = {
    "currentCoinbase": "0x" + "00" * 20, "currentGasLimit": "0x01000000", "currentNumber": "0x00",
    "currentTimestamp": "0x00", "currentRandom": "0x00", "currentDifficulty": "0x00", "currentBaseFee": "0x07",
    "currentExcessBlobGas": "0x00", "currentBlobGasUsed": "0x00", "parentBeaconBlockRoot": "0x" + "00" * 32,
    "withdrawals": [],
}  # fmt: skip


ENVIRONMENT_GENESIS_HASH = "0x56447b3abaf3f5f66402c33449ac77340386c154695df30df10dbde03ad467bc"
"""The Prague genesis of ENVIRONMENT and an empty pre: the hash `geth init` reports for balgen's genesis file of it."""


def _environment_group(root: Path, second_parent: str, first_parent: str = ENVIRONMENT_GENESIS_HASH) -> Path:
    """A group in execution-spec-tests' layout (an environment, no genesis header) and two tests on it."""
    (root / "pre_alloc").mkdir(parents=True)
    group = {"testIds": ["alpha-1M", "beta-1M"], "environment": ENVIRONMENT, "network": "Prague", "chainId": 1, "pre": {}}
    (root / "pre_alloc" / "0x00aa.json").write_text(json.dumps(group))
    first, second = (
        _engine_x(engineNewPayloads=[_payload(1, parent, "0x" + "03" * 32)]) for parent in (first_parent, second_parent)
    )
    (root / "a.json").write_text(json.dumps({"alpha-1M": first, "beta-1M": second}))
    return root


def test_group_without_genesis_header_has_the_genesis_its_environment_and_pre_give(tmp_path: Path) -> None:
    (group,) = discover(_environment_group(tmp_path, ENVIRONMENT_GENESIS_HASH)).groups
    assert group.genesis.genesis_hash == ENVIRONMENT_GENESIS_HASH and group.genesis.chain_id == 1
    assert list(group.genesis.accounts()) == []
    assert group.genesis.header.json_dict() == {
        "coinbase": "0x" + "00" * 20, "gasLimit": "0x1000000", "number": "0x0", "timestamp": "0x0",
        "extraData": "0x00", "mixHash": "0x" + "00" * 32, "difficulty": "0x0", "baseFeePerGas": "0x7",
        "excessBlobGas": "0x0", "blobGasUsed": "0x0", "parentBeaconBlockRoot": "0x" + "00" * 32,
        "hash": ENVIRONMENT_GENESIS_HASH, "nonce": "0x" + "00" * 8, "gasUsed": "0x0", "parentHash": "0x" + "00" * 32,
    }  # fmt: skip


@pytest.mark.parametrize("field, value", [("currentGasLimit", -1), ("currentBaseFee", -7), ("currentNumber", "-0x01")])
def test_a_negative_number_in_a_group_environment_is_bad_input_naming_the_field(tmp_path: Path, field: str, value: object) -> None:
    """Found by the loader fuzzing: a negative number once passed the reader and raised OverflowError when written."""
    root = _environment_group(tmp_path, ENVIRONMENT_GENESIS_HASH)
    group_file = root / "pre_alloc" / "0x00aa.json"
    group = json.loads(group_file.read_text())
    group["environment"][field] = value
    group_file.write_text(json.dumps(group))
    with pytest.raises(BadInput) as raised:
        discover(root)
    where, _, complaint = str(raised.value).partition(": ")
    assert where == str(group_file) and field in complaint, str(raised.value)
    assert ("is negative" if isinstance(value, int) else "is not a number") in complaint, str(raised.value)


@pytest.mark.parametrize("test_id", ["alpha-1M", "beta-1M"])
def test_a_group_test_that_starts_from_another_genesis_is_bad_input(tmp_path: Path, test_id: str) -> None:
    """The first test to name the file or a later one: the genesis is the file's, not a test's parent."""
    other = "0x" + "09" * 32
    parents = (ENVIRONMENT_GENESIS_HASH, other) if test_id == "beta-1M" else (other, ENVIRONMENT_GENESIS_HASH)
    root = _environment_group(tmp_path, second_parent=parents[1], first_parent=parents[0])
    expected = (
        f"{root / 'a.json'}: test {test_id}: {root / 'pre_alloc' / '0x00aa.json'}: environment and pre give genesis "
        f"{ENVIRONMENT_GENESIS_HASH}, but engineNewPayloads[0].parentHash is {other}: the file named by preHash "
        "holds another genesis"
    )
    with pytest.raises(BadInput) as raised:
        discover(root)
    assert str(raised.value) == expected


@pytest.mark.parametrize(
    "keyword, selected",
    [("alpha", ["alpha-1M"]), ("not alpha", ["gamma-1M", "beta-1M"]), ("ALPHA or (beta and 1m)", ["alpha-1M", "beta-1M"])],
)
def test_k_selects_like_pytest(tmp_path: Path, keyword: str, selected: list[str]) -> None:
    suite = discover(_suite(tmp_path), keyword)
    assert [ref.test_id for g in suite.groups for ref in g.tests] == selected


# -- bad input: one line, exit code 2, nothing written --------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _bad_input_cases(root: Path) -> list[tuple[list[str], str]]:
    suite = _suite(root / "suite")
    (root / "broken.json").write_text('{"t": {"network": ')
    (root / "unknown.json").write_text(json.dumps({"t": {"network": "Prague", "foo": 1}}))
    (root / "orphan").mkdir()
    (root / "orphan" / "t.json").write_text(json.dumps({"t": _engine_x(pre_hash="0x00ff")}))
    (root / "bad-payload.json").write_text(
        json.dumps({"t": _engine_x(engineNewPayloads=[{"params": [{"blockHash": "0x12"}]}])})
    )
    (root / "jwt.hex").write_text("zz" * 32)
    (root / "good-jwt.hex").write_text("11" * 32)
    (root / "bad.toml").write_text("[Eth\nDatabaseCache = 1")
    closed = f"http://127.0.0.1:{_free_port()}"
    return [
        ([str(root / "absent")], "absent: does not exist"),
        ([str(root / "broken.json")], "broken.json: malformed JSON: Expecting value (line 1 column 19)"),
        ([str(root / "unknown.json")], "unknown.json: test t: unknown fixture format"),
        ([str(root / "orphan")], "preHash 0x00ff: no pre_alloc/0x00ff.json"),
        ([str(root / "bad-payload.json")], "test t: engineNewPayloads[0].params[0].parentHash: Field required"),
        ([str(suite), "-k", "nothing"], "-k 'nothing' matches no replayable fixture"),
        ([str(suite), "-k", "and ("], "-k 'and ('"),
        ([str(suite), "--repeat", "0"], "--repeat 0: must be 1 or more"),
        ([str(suite), "--repeat", "many"], "--repeat 'many': a count or auto"),
        ([str(suite), "--repeat", "auto", "--repeat-cap", "5"], "--repeat-cap 5: must be at least 6"),
        ([str(suite), "--repeat", "auto", "--ci-width", "0"], "--ci-width 0.0: must be a positive percentage"),
        ([str(suite), "--warmup", "x"], "argument --warmup: invalid int value"),
        ([str(suite), "--label", "a b"], "--label 'a b'"),
        ([str(suite), "--engine-url", closed], "--engine-url needs --jwt-secret"),
        ([str(suite), "--engine-url", closed, "--jwt-secret", str(root / "jwt.hex")], "jwt.hex: not hex"),
        ([str(suite), "--engine-url", closed, "--jwt-secret", str(root / "none.hex")], "none.hex: does not exist"),
        ([str(suite), "--engine-url", "localhost:8551", "--jwt-secret", str(root / "good-jwt.hex")], "--engine-url 'localhost:8551': not an http"),
        ([str(suite), "--engine-url", closed, "--jwt-secret", str(root / "good-jwt.hex")], f"--engine-url {closed}: engine_exchangeCapabilities"),
        ([str(suite), "--engine-url", closed, "--jwt-secret", str(root / "good-jwt.hex"), "--cold"], "--cold: only for a client balgen starts"),
        ([str(suite), "--rpc-url", closed], "--rpc-url: only with --engine-url"),
        ([str(suite), "--geth-bin", str(root / "no-geth")], "no-geth: does not exist"),
        ([str(suite), "--client-args", "'unbalanced"], "--client-args"),
        ([str(suite), "--client", "parity"], "--client 'parity': unknown client (known: geth, besu, erigon"),
        ([str(suite), "--client", "nethermind"], "--client nethermind needs --client-bin PATH"),
        ([str(suite), "--client", "besu", "--client-bin", str(root / "no-besu")], "--client-bin " + str(root / "no-besu") + ": does not exist"),
        ([str(suite), "--client-cmd", "client --port {port}"], "--client-cmd: unknown placeholder {port}"),
        ([str(suite), "--client-init", "client init {genesis}"], "--client-init: only with --client-cmd"),
        ([str(suite), "--client", "reth", "--client-args", "--chain other.json"], "--client-args: --chain is set by balgen"),
        ([str(suite), "--client-args", f"--config {root / 'none.toml'}"], f"--client-args --config {root / 'none.toml'}: does not exist"),
        ([str(suite), "--client-args", f"--config={root / 'bad.toml'}"], "bad.toml: not a TOML file: "),
        ([str(suite), "--client-args", "--cache 16 --config"], "--client-args: --config needs a file"),
    ]  # fmt: skip


@pytest.mark.integration
def test_bad_input_is_one_line_exit_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for argv, complaint in _bad_input_cases(tmp_path / "inputs"):
        output = tmp_path / "out"
        code = run_replay([*argv, "--output", str(output)])
        err = capsys.readouterr().err
        assert code == 2, (argv, err)
        assert err.startswith("balgen replay: ") and err.count("\n") == 1, err
        assert complaint in err, (complaint, err)
        assert not output.exists() and not (tmp_path / "results").exists(), argv


def test_a_geth_that_cannot_start_fails_every_test_and_the_run_goes_on(tmp_path: Path) -> None:
    fake_geth = tmp_path / "geth"
    fake_geth.write_text("#!/bin/sh\necho 'Fatal: not really geth' >&2\nexit 1\n")
    fake_geth.chmod(0o755)
    output = tmp_path / "run"
    code = run_replay([str(_suite(tmp_path / "suite")), "--geth-bin", str(fake_geth), "--output", str(output)])
    assert code == 1
    run = json.loads((output / "results.json").read_text())
    assert run["state"] == "complete" and run["counts"] == {"passed": 0, "failed": 3, "not_run": 0}
    for test in run["tests"]:
        assert test["failure"].startswith("client could not start: geth init of ")
        assert "Fatal: not really geth" in test["failure"]


# -- result files --------------------------------------------------------------


def _result(test_id: str, ns: list[int], verdict: Verdict = Verdict.PASSED, gas: int = 60_000_000) -> FixtureResult:
    executions = [
        _execution(Role.MEASURED, value, i, test_id).model_copy(update={"gas_used": gas}) for i, value in enumerate(ns)
    ]
    return FixtureResult(
        test_id=test_id, fixture_name=fixture_name(test_id), path="f.json", format=ENGINE_X,
        genesis_hash=HASH, verdict=verdict, failure=None if verdict is Verdict.PASSED else "broken",
        benchmark_gas_used=gas, executions=executions, statistics=benchmark_statistics(executions),
    )  # fmt: skip


def _run(label: str, results: list[FixtureResult]) -> RunResult:
    return RunResult(
        label=label, balgen_version="0", started_at="2026-01-01T00:00:00+00:00", fixtures_path="f",
        keyword=None, warmup=0, repeat=1, cold=False, fail_fast=False, target={"kind": "managed"},
    )  # fmt: skip


def test_run_writer_keeps_every_completed_test(tmp_path: Path) -> None:
    writer = RunWriter(tmp_path, _run("a", []))
    assert json.loads((tmp_path / "results.json").read_text())["tests"] == []
    writer.group_started(None, "Geth/v1.17.8-stable/linux-amd64/go1.26.8")  # type: ignore[arg-type]
    writer.test_finished(_result("tests/x/test_a.py::test_b[p]", [100_000_000, 300_000_000, 200_000_000]))
    writer.test_finished(_result("t2", [100_000_000], Verdict.FAILED))
    run = RunResult.model_validate_json((tmp_path / "results.json").read_text())
    assert run.state is RunState.RUNNING and [t.test_id for t in run.tests] == ["tests/x/test_a.py::test_b[p]", "t2"]
    with (tmp_path / "executions.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    assert tuple(rows[0]) == EXECUTION_COLUMNS and len(rows) == 4
    assert rows[0]["mgas_s"] == "600.000" and rows[0]["own_total_ms"] == ""
    assert (tmp_path / "runtimes.csv").read_text() == (
        "client_name,fixture_name,test_runtime_ms\ngeth,test_a.py__test_b[p],201.0\n"
    ), "passed tests only; median of newPayload + forkchoiceUpdated"
    assert (tmp_path / "mgas_s.csv").read_text() == "client_name,fixture_name,test_mgas_s\ngeth,test_a.py__test_b[p],300.0\n"
    writer.finish(RunState.INTERRUPTED)
    assert json.loads((tmp_path / "results.json").read_text())["state"] == "interrupted"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["executions.csv", "mgas_s.csv", "results.json", "runtimes.csv"]


@pytest.mark.integration
def test_an_existing_run_is_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "results.json").write_text("{}")
    assert run_replay([str(_suite(tmp_path / "suite")), "--output", str(tmp_path)]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert (tmp_path / "results.json").read_text() == "{}"


# -- comparing runs ------------------------------------------------------------


def _write_run(folder: Path, label: str, milliseconds: dict[str, float]) -> Path:
    run = _run(label, [])
    # Three executions 1% apart: the median is `ms`, the spread small against the changes compared.
    run.tests = [_result(test, [int(ms * f * 1e6) for f in (0.99, 1.0, 1.01)]) for test, ms in milliseconds.items()]
    run.tests.append(_result("failed-in-this-run", [1_000_000], Verdict.FAILED))
    run.state = RunState.COMPLETE
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(run.model_dump_json())
    return folder


def test_comparison_against_the_baseline(tmp_path: Path) -> None:
    base = _write_run(tmp_path / "a", "sequential", {"t1": 100, "t2": 100, "t3": 100, "t4": 100})
    full = _write_run(tmp_path / "b", "full", {"t1": 50, "t2": 80, "t3": 125, "t4": 100, "only-here": 10})
    comparison = compare(load_runs([base, full]), worst=1)
    (summary,) = comparison.summaries
    assert (summary.compared, summary.faster, summary.slower) == (4, 2, 1)
    assert summary.average_gain == pytest.approx((100 + 25) / 2)
    assert summary.p95_gain == pytest.approx(25 + 0.95 * 75)
    assert summary.average_regression == pytest.approx(-20) and summary.p99_regression == pytest.approx(-20)
    assert summary.baseline_aggregate_mgas == pytest.approx(600) and summary.aggregate_mgas == pytest.approx(
        4 * 60 / 0.355
    )
    rows = {row.test_id: row for row in comparison.rows}
    assert rows["t1"].mgas == (600, 1200) and rows["t1"].deltas == (pytest.approx(100),)
    assert rows["only-here"].deltas == (None,) and "failed-in-this-run" not in rows
    (worst,) = comparison.worst
    assert (worst.test_id, worst.name, worst.delta) == ("t3", "full", pytest.approx(-20))


def test_only_significant_changes_count_and_an_aa_pair_shows_its_noise_floor(tmp_path: Path) -> None:
    base = _write_run(tmp_path / "a", "A", {"t1": 100, "t2": 100, "t3": 100})
    noisy = _run("B", [])
    noisy.target = {"kind": "managed", "client_args": ["--cache", "16"]}
    noisy.tests = [
        _result("t1", [50_000_000, 50_500_000, 49_500_000]),  # twice as fast, tightly: significant
        _result("t2", [60_000_000, 100_000_000, 160_000_000]),  # median 100 ms, spread wide: no verdict
        _result("t3", [110_000_000]),  # one execution: too few
    ]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "results.json").write_text(noisy.model_dump_json())
    again = _write_run(tmp_path / "c", "A-again", {"t1": 101, "t2": 99, "t3": 100})
    comparison = compare(load_runs([base, tmp_path / "b", again]))
    changed, same = comparison.summaries
    assert (changed.faster, changed.slower, changed.average_gain) == (1, 0, pytest.approx(100.0, rel=0.02))
    assert changed.noise is None, "different client flags: not an A/A pair"
    rows = {row.test_id: row for row in comparison.rows}
    assert rows["t2"].changes[0].verdict.value == "no significant change" and rows["t2"].changes[0].low < 0
    assert rows["t3"].changes[0].verdict.value == "too few executions"
    assert same.noise is not None and same.noise.compared == 3
    assert (same.faster, same.slower, same.noise.significant) == (0, 0, 0)
    sizes = sorted([0.0, abs(100 / 101 - 1) * 100, abs(100 / 99 - 1) * 100])
    assert same.noise.floor == pytest.approx(sizes[1] + 0.9 * (sizes[2] - sizes[1]))  # P95, linear
    assert comparison.worst == ()
    assert run_report([str(base), str(again), "--output", str(tmp_path / "r")]) == 0
    text = (tmp_path / "r" / "report.md").read_text()
    assert "## A/A noise floor (runs of the same build and flags" in text and "| A-again | A | 3 | 0/3 |" in text


def test_report_writes_markdown_and_chart(tmp_path: Path) -> None:
    runs = [
        _write_run(tmp_path / "a", "A", {"t1": 100, "t2": 100}),
        _write_run(tmp_path / "b", "B", {"t1": 50, "t2": 200}),
        _write_run(tmp_path / "c", "B", {"t1": 100, "t2": 100}),
    ]
    assert run_report([*map(str, runs), "--output", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "| b | 600 | 480 | 1/2 | +100.0% | +100.0% | +100.0% | 1/2 | -50.0% |" in text, "repeated labels are told apart by folder"
    assert "| t2 | b | 600 | 300 | -50.0% |" in text
    assert "| t1 | 600 | 1,200 | +100.0% | +96.0% to +104.0% | faster | 600 | +0.0% | -2.0% to +2.0% | no significant change |" in text
    assert (tmp_path / "report" / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "make, complaint",
    [
        (lambda root: root / "absent", "no results.json"),
        (lambda root: (root / "bad.json").write_text('{"label": 1}') and root / "bad.json", "not a replay result"),
    ],
)
def test_report_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, complaint: str) -> None:
    good = _write_run(tmp_path / "a", "A", {"t1": 100})
    assert run_report([str(good), str(make(tmp_path)), "--output", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert complaint in err and err.count("\n") == 1
    assert not (tmp_path / "r").exists()
    assert run_report([str(good), "--output", str(tmp_path / "r")]) == 2
    assert "at least two runs" in capsys.readouterr().err


def test_discovery_rejects_a_pre_alloc_file_given_as_fixture(tmp_path: Path) -> None:
    root = _suite(tmp_path)
    with pytest.raises(BadInput, match="is a pre-alloc group file"):
        discover(root / "x" / "pre_alloc" / "0x00aa.json")


def test_drop_caches_without_the_right_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import balgen.commands.replay as command

    monkeypatch.setattr(command, "drop_caches_problem", lambda: "writing /proc/sys/vm/drop_caches needs root (running as uid 1000)")
    output = tmp_path / "run"
    assert run_replay([str(_suite(tmp_path / "suite")), "--drop-caches", "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert err == "balgen replay: --drop-caches: writing /proc/sys/vm/drop_caches needs root (running as uid 1000)\n"
    assert not output.exists()


def test_measured_speedup_is_set_against_the_dependency_graphs_bound(tmp_path: Path) -> None:
    folders = []
    for label, ms in (("sequential", 100), ("parallel", 40)):
        run = _run(label, [])
        run.target = {"kind": "managed", "client_args": [label]}
        run.tests = [
            _result("wide", [int(ms * f * 1e6) for f in (0.99, 1.0, 1.01)]).model_copy(update={"speedup_bound": 5.0}),
            _result("chain", [int(100 * f * 1e6) for f in (0.99, 1.0, 1.01)]),  # no graph recorded: not shown
        ]
        folders.append(tmp_path / label)
        folders[-1].mkdir()
        (folders[-1] / "results.json").write_text(run.model_dump_json())
    (speedup,) = compare(load_runs(folders)).speedups
    assert (speedup.test_id, speedup.name, speedup.bound) == ("wide", "parallel", 5.0)
    assert speedup.speedup == pytest.approx(2.5) and speedup.share == pytest.approx(0.5)
    assert speedup.change.verdict.value == "faster"
    assert run_report([*map(str, folders), "--output", str(tmp_path / "r")]) == 0
    text = (tmp_path / "r" / "report.md").read_text()
    assert "## Measured speedup against the dependency graph's bound" in text
    assert "| wide | parallel | 5.00x | 2.50x | 50% | faster |" in text


# -- malformed payload fields (issue 17, item 8) -------------------------------

MALFORMED_PAYLOAD_FIELDS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "gasLimit null": (lambda e: e["params"][0].update(gasLimit=None), "params[0].gasLimit: None is not a number"),
    "gasLimit over 64 bits": (
        lambda e: e["params"][0].update(gasLimit=hex(2**64)), "params[0].gasLimit: does not fit in 64 bits"
    ),
    "blockNumber over 64 bits": (
        lambda e: e["params"][0].update(blockNumber="0x" + "f" * 17), "params[0].blockNumber: does not fit in 64 bits"
    ),
    "million-digit stateRoot": (
        lambda e: e["params"][0].update(stateRoot="0x" + "1" * 1_000_000),
        "params[0].stateRoot: 500000 bytes, expected 32",
    ),
    "19-byte feeRecipient": (
        lambda e: e["params"][0].update(feeRecipient="0x" + "00" * 19), "params[0].feeRecipient: 19 bytes, expected 20"
    ),
    "short logsBloom": (lambda e: e["params"][0].update(logsBloom="0x00"), "params[0].logsBloom: 1 bytes, expected 256"),
    "withdrawals null": (lambda e: e["params"][0].update(withdrawals=None), "params[0].withdrawals: Input should be a valid list"),
    "nested transaction list": (
        lambda e: e["params"][0].update(transactions=[["0x02"]]), "params[0].transactions[0]: ['0x02'] is not hex data"
    ),
    "unknown newPayloadVersion": (lambda e: e.update(newPayloadVersion="99"), "newPayloadVersion: Input should be '1'"),
    "unknown forkchoiceUpdatedVersion": (
        lambda e: e.update(forkchoiceUpdatedVersion="7"), "forkchoiceUpdatedVersion: Input should be '1'"
    ),
    "beacon root of 31 bytes": (lambda e: e["params"].__setitem__(2, "0x" + "00" * 31), "params[2]: 31 bytes, expected 32"),
    "phase an object": (lambda e: e.update(phase={"a": 1}), "phase: Input should be 'setup' or 'testing'"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_PAYLOAD_FIELDS))
def test_a_malformed_payload_field_is_bad_input_naming_file_test_and_field(case: str, tmp_path: Path) -> None:
    """Read through the typed model, every field is checked before anything reaches a client."""
    mutate, complaint = MALFORMED_PAYLOAD_FIELDS[case]
    suite = _suite(tmp_path)
    path = suite / "x" / "for_prague" / "a.json"
    document = json.loads(path.read_text())
    mutate(document["beta-1M"]["engineNewPayloads"][0])
    path.write_text(json.dumps(document))
    with pytest.raises(BadInput) as raised:
        discover(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: test beta-1M: engineNewPayloads[0].{complaint}"), message
    assert "\n" not in message and len(message) < 300, message


def test_a_refused_payload_names_the_error_and_both_versions() -> None:
    directive = SimpleNamespace(expected_status=VALID, validation_error=None, error_code=None, method="engine_newPayloadV5")
    versions = "fixture filled by evm version 1.17.8-stable, client reth/v2.5.1-7b3432d"
    with pytest.raises(CheckFailed) as refused:
        _check_status("payload 0 (block 1)", directive, "INVALID", "receipt root mismatch", versions)  # type: ignore[arg-type]
    assert str(refused.value) == (
        "payload 0 (block 1): engine_newPayloadV5 returned INVALID: receipt root mismatch, the fixture expects VALID "
        "(fixture filled by evm version 1.17.8-stable, client reth/v2.5.1-7b3432d)"
    )
