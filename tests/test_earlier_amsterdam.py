"""
go-ethereum v1.17.5's Amsterdam end to end: balgen fills a small suite with
the gas rules it measures from v1.17.5's t8n, records that spec in `_info`,
and the geth of the same version imports every fixture VALID. So does the
reth build of 2026-08-21 (revm 42.0.1 implements the same EIP-8038 draft; see
docs/formats.md), through the Engine API on the suite's shared genesis.
(The pinned v1.17.8 side of the same proof is tests/test_import_geth.py.)
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from balgen.ethereum.gas_costs import AMSTERDAM_V1_17_5_GAS
from balgen.clients.kinds.reth import PRESET as RETH
from balgen.clients.presets import render_command
from balgen.commands.replay import run_replay
from balgen.clients.engine_client import EngineClient
from balgen.replay.discovery import discover, load_test
from balgen.clients.jwt_auth import generate_jwt_secret_file
from balgen.plumbing.toolchain import EARLIER_AMSTERDAM_VERSION, release_bin, tools_bin

from fill_runs import shared_earlier_amsterdam_fill
from in_process import balgen_in_process

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (release_bin(EARLIER_AMSTERDAM_VERSION) / "geth").exists(),
        reason=f"go-ethereum {EARLIER_AMSTERDAM_VERSION} not built (scripts/install-tools.sh)",
    ),
]

EARLIER_GETH = release_bin(EARLIER_AMSTERDAM_VERSION) / "geth"
RETH_BIN = tools_bin() / "reth"


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`shared_earlier_amsterdam_fill`: every family at `max` filled with v1.17.5's t8n."""
    return shared_earlier_amsterdam_fill(tmp_path_factory)


def engine_x_fixtures(output: Path) -> dict[str, dict]:
    fixtures: dict[str, dict] = {}
    for path in sorted((output / "blockchain_tests_engine_x").glob("for_*/**/*.json")):
        fixtures.update(json.loads(path.read_text()))
    return fixtures


def test_fixtures_name_the_t8n_and_the_spec_they_were_filled_for(filled: Path) -> None:
    fixtures = engine_x_fixtures(filled)
    assert {name.split("-", 1)[0] for name in fixtures} == {
        "interact", "keccak_chain", "mixed_dep", "prefetch", "serial_chain", "state_root"
    }
    for name, fixture in fixtures.items():
        info = fixture["_info"]
        assert info["filling-transition-tool"].startswith("evm version 1.17.5"), name
        assert info["gas-rules"] == {"spec": AMSTERDAM_V1_17_5_GAS.spec, "hash": AMSTERDAM_V1_17_5_GAS.rules_hash()}


def test_geth_of_the_same_version_imports_every_fixture(
    filled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_replay(
        [str(filled / "blockchain_tests_engine_x"), "--geth-bin", str(EARLIER_GETH), "--warmup", "0", "--repeat", "1", "--agreement", "record", "--settle-limit", "0",
         "--output", str(tmp_path / "run")]
    )
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    failures = [(t["test_id"], t["failure"]) for t in results["tests"] if t["verdict"] != "passed"]
    assert code == 0 and not failures, failures
    assert len(results["tests"]) == len(engine_x_fixtures(filled))
    # The replay shows, per genesis, the client next to the t8n and spec the fixtures were filled with.
    printed = " ".join(capsys.readouterr().out.split())
    assert "on Geth/v1.17.5" in printed
    assert f"filled with evm version 1.17.5-stable ({AMSTERDAM_V1_17_5_GAS.spec})" in printed


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def reth_on(tmp_path: Path) -> Iterator[callable]:
    """Start the reth build on a geth-style genesis.json; yields (engine URL, JWT secret)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(genesis: Path) -> tuple[str, bytes]:
        engine_port, rpc_port = _free_port(), _free_port()
        values = {
            "bin": str(RETH_BIN), "genesis": str(genesis), "datadir": str(tmp_path / "datadir"),
            "engine_port": str(engine_port), "rpc_port": str(rpc_port), "p2p_port": str(_free_port()),
            "jwt": str(tmp_path / "jwt.hex"),
        }
        secret = generate_jwt_secret_file(tmp_path / "jwt.hex")
        log = (tmp_path / "reth.log").open("wb")
        started.append(subprocess.Popen(render_command(RETH.node_command, values), stdout=log, stderr=log))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                answer = httpx.post(f"http://127.0.0.1:{rpc_port}", json={"jsonrpc": "2.0", "id": 1,
                                    "method": "web3_clientVersion", "params": []}, timeout=2)
                if answer.status_code == 200:
                    return f"http://127.0.0.1:{engine_port}", secret
            except httpx.HTTPError:
                pass
            assert started[-1].poll() is None, (tmp_path / "reth.log").read_text()[-2000:]
            time.sleep(1)
        raise AssertionError("reth did not answer web3_clientVersion within 120 s")

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.mark.skipif(not RETH_BIN.exists(), reason="the reth build is not in tools/bin (../shared/clients/README.md)")
def test_reth_of_the_same_spec_imports_every_fixture(filled: Path, tmp_path: Path, reth_on) -> None:
    # Each test's chain branches off the shared genesis; reth cannot roll back
    # (debug_setHead is a no-op there), so every test is imported as a fork of
    # its own and made the head, without rollbacks in between.
    genesis_dir = tmp_path / "genesis"
    completed = balgen_in_process("genesis", filled / "blockchain_tests_engine_x", "--client", "reth", "--output", genesis_dir)
    assert completed.returncode == 0, completed.stderr
    (genesis,) = genesis_dir.glob("*/genesis.json")
    engine_url, secret = reth_on(genesis)
    (group,) = discover(filled / "blockchain_tests_engine_x", formats="engine_x").groups
    engine = EngineClient(engine_url, secret)
    refused = []
    for ref in group.tests:
        for payload in load_test(ref).payloads:
            status = engine.new_payload(payload.new_payload_version, payload.params).result
            if status.get("status") != "VALID":
                refused.append((ref.test_id, payload.index, status.get("status"), status.get("validationError")))
                break
            head = engine.forkchoice_updated(payload.forkchoice_updated_version, payload.block_hash).result
            assert head["payloadStatus"]["status"] == "VALID", (ref.test_id, head)
    engine.close()
    assert len(group.tests) == len(engine_x_fixtures(filled)) and not refused, refused
    shutil.rmtree(tmp_path / "datadir", ignore_errors=True)


def test_a_fill_of_the_earlier_amsterdam_is_not_applicable_to_verifiers_of_the_later(
    filled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """revm 43.0.3, ethereumjs 10.1.3 and the pinned evm charge v1.17.6+ prices: they say so, they do not fail."""
    from balgen.commands.verify import run_verify
    from balgen.ethereum.gas_costs import AMSTERDAM_GAS

    code = run_verify([str(filled / "blockchain_tests"), "-k", "serial_chain", "--without", "engine"])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    summary = out.strip().splitlines()[-1]
    for verifier in ("geth", "revm", "ethereumjs"):
        assert f"{verifier} 0/0 (" in summary and "not applicable)" in summary, summary
    assert f"not applicable: fixture filled for {AMSTERDAM_V1_17_5_GAS.spec}, verifier implements {AMSTERDAM_GAS.spec}" in " ".join(out.split())
    assert "filled by evm version 1.17.5" in out and f"ethereumjs: @ethereumjs/vm 10.1.3 ({AMSTERDAM_GAS.spec})" in " ".join(out.split())
