"""
Measurements against a real geth on 127.0.0.1 (tests/harness_geth.py), on a small 1M suite:
an A/A pair (two runs of the same build) comes out "no significant change"
and the report prints its noise floor; the same geth behind a proxy that
answers each `newPayload` 0.3 s late is reported significantly slower on
every test; `--repeat auto` stops for the reason it records; a replay into a geth the user runs passes,
and a rollback that did not happen there (a `debug_setHead` answered but not done) fails the test and
stops the run; geth's slow-block counters are checked against
the workload model and a deliberately wrong prediction fails the test with
both numbers (`--drop-caches`: tests/test_replay_geth.py, on its `--cold` replay).
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from balgen.clients.genesis_files import write_client_genesis
from balgen.clients.kinds.geth import GENESIS as GETH_GENESIS
from balgen.clients.kinds.geth import PRESET as GETH_PRESET
from balgen.clients.process import ClientProcess
from balgen.commands.replay import run_replay
from balgen.replay.discovery import discover
from balgen.results.comparison import compare, load_runs
from balgen.results.confidence import ChangeVerdict
from balgen.commands.report import run_report

from fill_runs import copied_from_suite_fill
from harness_geth import HARNESS_GETH
from in_process import balgen_forked

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not HARNESS_GETH.is_file(), reason="geth-bal-switch not built (make tools)"),
]

SUITE = ["serial_chain-max-1M", "state_root-max-contract_per_tx-1M", "state_root-max-single_contract-1M"]
"""Three 1M fixtures in one pre-alloc group: a chain, and the two state_root variants (whose slot
count geth's slow-block log confirms)."""


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copied_from_suite_fill(tmp_path_factory, SUITE)


def results_of(output: Path) -> dict[str, Any]:
    return json.loads((output / "results.json").read_text())


def replay(filled: Path, output: Path, *args: str) -> int:
    return run_replay([str(filled / "blockchain_tests_engine_x"), "--output", str(output), *args])


# -- a client, and the same client answering late ------------------------------

LATE_BY = 0.3
"""Seconds the slowed client waits before answering each newPayload: many times a 1M block's time, so
the slowdown stands out even when the machine is saturated (a CPU-throttled geth, the closer model of a
slower client, is measured on the whole suite by benchmarks/aa_pair.py: its 1M blocks take milliseconds,
and on two busy cores that is lost in the noise of a 99% interval; see docs/replay.md)."""


def _answer(handler: BaseHTTPRequestHandler, reply: bytes) -> None:
    """`reply` sent back as the JSON body of an HTTP 200, as the proxies below answer what they forward."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(reply)))
    handler.end_headers()
    handler.wfile.write(reply)


class _LateEngine(BaseHTTPRequestHandler):
    """Forwards Engine API calls to geth, answering each newPayload `LATE_BY` seconds late."""

    upstream = ""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if b"engine_newPayload" in body:
            time.sleep(LATE_BY)
        headers = {"Content-Type": "application/json", "Authorization": self.headers.get("Authorization", "")}
        reply = httpx.post(self.upstream, content=body, headers=headers, timeout=60).content
        _answer(self, reply)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture(scope="module")
def user_geth(filled: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClientProcess]:
    """A geth the user runs, on the suite's group genesis (runs rewind it to where they start)."""
    scratch = tmp_path_factory.mktemp("geth")
    (group,) = discover(filled / "blockchain_tests_engine_x").groups
    write_client_genesis(scratch / "genesis.json", GETH_GENESIS, group.genesis.network, group.genesis.header, group.genesis.accounts())
    with ClientProcess(GETH_PRESET, HARNESS_GETH, scratch / "genesis.json", temp_parent=scratch) as geth:
        yield geth


@pytest.fixture(scope="module")
def late_engine_url(user_geth: ClientProcess) -> Iterator[str]:
    _LateEngine.upstream = user_geth.engine_url
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _LateEngine)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{proxy.server_port}"
    finally:
        proxy.shutdown()
        proxy.server_close()


def _client(engine_url: str, geth: ClientProcess) -> list[str]:
    return ["--engine-url", engine_url, "--jwt-secret", str(geth.jwt_secret_path), "--rpc-url", geth.rpc_url]


def test_an_aa_pair_is_no_change_and_a_slowed_client_is_slower(
    filled: Path, tmp_path: Path, user_geth: ClientProcess, late_engine_url: str
) -> None:
    """
    The three runs go at the same time: the machine's load (other work on
    shared cores) then weighs on each alike, as it would not on runs made
    minutes apart, whose drift is what the noise floor is for. Nine measured
    executions a test: a 1M block is a few milliseconds, and with five the
    bootstrap interval of a median ratio under the other test workers'
    scheduling noise called two of three A/A tests changed (one faster, one
    slower) in one CI run.
    """
    engine_x = str(filled / "blockchain_tests_engine_x")
    runs = {name: tmp_path / name for name in ("a1", "a2", "slowed")}
    commands = {
        name: ["replay", engine_x, "--repeat", "9", "--label", name,
               "--agreement", "record",  # three replays on two loaded cores: the verdicts are tested, not the margin
               "--output", str(output), *(_client(late_engine_url, user_geth) if name == "slowed" else ["--client-bin", str(HARNESS_GETH)])]
        for name, output in runs.items()
    }  # fmt: skip
    # Each in a fork of its own (a new interpreter would be about a CPU-second of imports), all at once.
    with ThreadPoolExecutor(len(commands)) as pool:
        completed = dict(zip(commands, pool.map(lambda command: balgen_forked(*command, timeout=600), commands.values())))
    for name, outcome in completed.items():
        assert outcome.returncode == 0, f"{name}: {outcome.stderr}"
    comparison = compare(load_runs(list(runs.values())))
    same, slowed = comparison.summaries
    assert same.noise is not None and same.noise.compared == 3
    assert same.noise.significant <= 1, "nearly every test of an A/A pair must be 'no significant change'"
    assert slowed.noise is None, "another client: not an A/A pair"
    assert (slowed.compared, slowed.slower, slowed.faster) == (3, 3, 0), [row.changes for row in comparison.rows]
    for row in comparison.rows:
        change = row.changes[1]
        assert change is not None and change.verdict is ChangeVerdict.SLOWER and change.high < 0
    assert {regression.name for regression in comparison.worst} >= {"slowed"}
    assert run_report([*map(str, runs.values()), "--output", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## A/A noise floor (runs of the same build and flags" in text and "| a2 | a1 | 3 |" in text
    bounds = {test["test_id"]: test["speedup_bound"] for test in results_of(runs["a1"])["tests"]}
    assert bounds["serial_chain-max-1M"] == 1.0, "one chain: nothing to run in parallel"
    assert bounds["state_root-max-contract_per_tx-1M"] > 10, "independent writers: the bound is recorded"


def test_repeat_auto_stops_at_the_target_width_or_the_cap(filled: Path, tmp_path: Path, user_geth: ClientProcess) -> None:
    client = _client(user_geth.engine_url, user_geth)
    auto = ["-k", "serial_chain", "--repeat", "auto", "--repeat-cap", "6"]
    # An interval 10 times the median wide is met as soon as there is one (6 executions), however
    # loaded the machine; one 0.001% wide never is.
    assert replay(filled, tmp_path / "wide", *client, *auto, "--ci-width", "1000") == 0
    assert replay(filled, tmp_path / "narrow", *client, *auto, "--ci-width", "0.001") == 0
    for name, stop in (("wide", "ci_width"), ("narrow", "cap")):
        run = results_of(tmp_path / name)
        (test,) = run["tests"]
        measured = [e for e in test["executions"] if e["role"] == "measured"]
        assert (test["repeat_stop"], len(measured)) == (stop, 6), name
        assert run["repeat_auto"] and run["repeat"] == 6
        assert test["median_interval_width"] == pytest.approx(
            (max(e["new_payload_ns"] for e in measured) - min(e["new_payload_ns"] for e in measured))
            / test["statistics"]["new_payload_ns"]["median"]
        ), "n = 6: the 95% interval of the median is [min, max]"


# -- a client the user runs, and a rollback that did not happen ------------------


class _SetHeadSwallower(BaseHTTPRequestHandler):
    """Forwards JSON-RPC to geth, but answers `debug_setHead` itself without rewinding."""

    upstream = ""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = json.loads(body)
        if request.get("method") == "debug_setHead":
            reply = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": None}).encode()
        else:
            reply = httpx.post(self.upstream, content=body, headers={"Content-Type": "application/json"}).content
        _answer(self, reply)

    def log_message(self, *_args: object) -> None:
        pass


def test_external_client_and_a_rollback_that_did_not_happen(filled: Path, tmp_path: Path, user_geth: ClientProcess) -> None:
    """On the module's user geth (a geth start of its own is about 3 CPU-s); the user's node is rewound to
    its genesis afterwards, where the failed rollback left it at a test's block."""
    external = ["--engine-url", user_geth.engine_url, "--jwt-secret", str(user_geth.jwt_secret_path)]
    honest = tmp_path / "honest"
    assert replay(filled, honest, *external, "--rpc-url", user_geth.rpc_url, "-k", "max") == 0
    run = results_of(honest)
    assert run["target"] == {"kind": "external", "engine_url": user_geth.engine_url, "rpc_url": user_geth.rpc_url}
    assert [t["verdict"] for t in run["tests"]] == ["passed"] * 3
    assert all(e["own_timing"] is None for t in run["tests"] for e in t["executions"]), "no log of a user's client"

    _SetHeadSwallower.upstream = user_geth.rpc_url
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _SetHeadSwallower)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    lying = tmp_path / "lying"
    try:
        code = replay(
            filled, lying, *external, "--rpc-url", f"http://127.0.0.1:{proxy.server_port}", "-k", "max", "--warmup", "0", "--repeat", "2"
        )
    finally:
        proxy.shutdown()
        proxy.server_close()
        with user_geth.rpc_client() as rpc:
            if int(rpc.call("eth_blockNumber").result, 16) > 0:
                rpc.set_head(0)
    assert code == 1
    first, *rest = results_of(lying)["tests"]
    assert first["verdict"] == "failed"
    assert first["failure"].startswith("rolling back to the pre-test head failed: after debug_setHead(0x")
    assert "the head is block" in first["failure"]
    benchmark = [e for e in first["executions"] if e["role"] != "setup"]
    assert [e["variant"] for e in benchmark] == [0, 1], "the executions are siblings: no rollback between them"
    assert len(rest) == 2
    assert all(test["verdict"] == "not_run" and "rolling back to the pre-test head failed" in test["failure"] for test in rest)


# -- geth's counters against the model ------------------------------------------


def test_slot_counts_are_checked_and_a_wrong_one_fails_with_both_numbers(filled: Path, tmp_path: Path) -> None:
    tampered = tmp_path / "fixtures"
    shutil.copytree(filled / "blockchain_tests_engine_x", tampered)
    (path,) = tampered.rglob("state_root-max-single_contract-1M.json")
    document = json.loads(path.read_text())
    workload = document["state_root-max-single_contract-1M"]["_info"]["workload"]
    true_count = workload["slots_written"]
    workload["slots_written"] = true_count + 1000
    path.write_text(json.dumps(document))
    output = tmp_path / "run"
    code = run_replay(
        [str(tampered), "--client-bin", str(HARNESS_GETH), "-k", "state_root", "--warmup", "0", "--repeat", "1", "--agreement", "record", "--output", str(output)]
    )
    assert code == 1
    honest, test = results_of(output)["tests"]
    assert honest["test_id"] == "state_root-max-contract_per_tx-1M" and honest["verdict"] == "passed"
    (check,) = honest["count_checks"]  # state_root predicts writes only: nothing left out on Amsterdam
    assert check.startswith("writes.storage_slots = ") and check.endswith("(slots_written)")
    assert test["verdict"] == "failed"
    assert test["failure"].startswith("measured execution 1: geth counted writes.storage_slots = ")
    assert f"the workload predicts {true_count + 1000:,} to " in test["failure"]
    assert f"(slots_written = {true_count + 1000:,})" in test["failure"]
