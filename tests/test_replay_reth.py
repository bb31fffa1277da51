"""
`balgen replay --client reth`: a second real client, started by balgen from
its preset on 127.0.0.1, replays an Osaka fixture with every check.

reth answers `debug_setHead` with null and keeps its head, so its rollback
is the universal one: restart from a copy of the datadir taken at the block.
The Osaka test has a setup block: a copy is taken at the genesis, the
benchmark block's executions are siblings on the setup block, and the copy is
restored at the test's end, the head verified. A `--setup genesis` group
needs no copy at all: every test starts at the genesis and the head never
leaves it (`head_kept`), so each node is started once; and `--cold` restarts
reth before every measured execution, its head checked each time (reth
aborts when stopped now and then). The reth build here is unoptimised
(`../shared/clients/README.md`) and spends seconds on the first payload
after each start: one test keeps this near a minute.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from balgen.clients.kinds.reth import PRESET as RETH_PRESET
from balgen.clients.process import ClientProcess
from balgen.commands.main import main
from balgen.plumbing.toolchain import EARLIER_AMSTERDAM_VERSION, bundled_reth, release_bin

from fill_runs import one_fixture_per_family, shared_fill, shared_sample_fill
from in_process import balgen_in_process
from processes_left import cpu_seconds_of

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not bundled_reth().is_file(),
        reason="no reth build at tools/bin/reth (make tools unpacks ../shared/clients/reth-*.gz when it exists)",
    ),
]


OSAKA_CHAIN = next(name for name in one_fixture_per_family() if name.startswith("serial_chain"))
"""One Osaka workload with a setup block, from the session's Osaka sample (`shared_sample_fill`)."""


@pytest.fixture(scope="module")
def osaka_fill(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One fixture per family on Osaka, filled once for the session (tests/test_fill_cli.py and tests/test_import_geth.py read it too)."""
    completed, output = shared_sample_fill(tmp_path_factory, "Osaka")
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output


def replayed_on_reth(fixtures: Path, test_id: str, output: Path, warmup: int) -> dict:
    """
    `balgen replay FIXTURES -k TEST_ID --client reth` as a user runs it (in this process), which must succeed;
    its results.json.
    Imports and verdicts are tested here, so the agreement margin is only recorded (it is
    test_replay_modes' subject; an unoptimised build spends hundreds of ms outside its own block time).
    """
    agreement = ["--agreement", "record"]  # imports and verdicts are tested here; the margin in test_replay_modes
    completed = balgen_in_process(
        "replay", fixtures, "-k", test_id, "--client", "reth", "--warmup", str(warmup), "--repeat", "1",
        "--output", output, *agreement,
    )  # in this process: a subprocess is a second of imports, and reth is a process of its own either way
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    return json.loads((output / "results.json").read_text())


def test_reth_replays_with_verified_datadir_rollbacks(osaka_fill: Path, tmp_path: Path) -> None:
    run = replayed_on_reth(osaka_fill, OSAKA_CHAIN, tmp_path / "results", warmup=1)
    assert run["target"]["client"] == "reth" and run["target"]["rollback"] == "restart_from_copy"
    assert run["client_versions"][0].startswith("reth/")
    assert [test["test_id"] for test in run["tests"]] == [OSAKA_CHAIN]
    for test in run["tests"]:
        assert test["verdict"] == "passed", test["failure"]
        assert test["rollback_method"] == "restart_from_copy"
        benchmark = [execution for execution in test["executions"] if execution["role"] != "setup"]
        assert [execution["role"] for execution in benchmark] == ["warmup", "measured"]
        assert [execution["variant"] for execution in benchmark] == [0, 1], "the measured one is a sibling"
        assert not benchmark[1]["restarted_before"], "no rollback between executions"
        assert test["isolation"] == "sibling_blocks"
        for execution in test["executions"]:
            assert execution["status"] == "VALID" and not execution["known_before_send"]
            timing = execution["own_timing"]
            assert timing is not None, "reth's slow-block line for the block was read"
            assert timing["block_hash"] == execution["block_hash"] and timing["gas_used"] == execution["gas_used"]


@pytest.fixture(scope="module")
def genesis_placed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two 1M workloads of v1.17.5's Amsterdam with `--setup genesis`: one group, each test one block on its genesis."""
    if not (release_bin(EARLIER_AMSTERDAM_VERSION) / "evm").is_file():
        pytest.skip("go-ethereum v1.17.5's evm not built (make tools)")
    completed, output = shared_fill(
        tmp_path_factory, "--evm-bin", str(release_bin(EARLIER_AMSTERDAM_VERSION) / "evm"), "--gas-benchmark-values", "1",
        "--setup", "genesis", "-k", "serial_chain-max or mixed_dep-max-group1",
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output


def replayed_counting_starts(
    fixtures: Path, output: Path, monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[list[dict], int]:
    """`balgen replay FIXTURES --client reth ARGS` in this process, which must succeed; its tests and how often a reth node was started."""
    starts = []
    spawn = ClientProcess._spawn_node

    def counted(process: ClientProcess) -> None:
        starts.append(process.preset.name)
        spawn(process)

    monkeypatch.setattr(ClientProcess, "_spawn_node", counted)
    code = main(["replay", str(fixtures), "--format", "engine_x", "--client", "reth", "--agreement", "record", "--output", str(output), *args])
    assert code == 0, (output / "results.json").read_text()[-3000:] if (output / "results.json").exists() else code
    return json.loads((output / "results.json").read_text())["tests"], len(starts)


def test_reth_tests_on_one_genesis_leave_the_head_there_and_no_node_is_restarted(
    genesis_placed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    Every test of the group starts at its genesis, so the fixture's own block is checked by its VALID
    and its hash and never made head: nothing to roll back, no datadir copy, no restart between tests.
    """
    tests, starts = replayed_counting_starts(
        genesis_placed, tmp_path / "run", monkeypatch, "--modes", "full,full", "--warmup", "1", "--repeat", "2"
    )
    assert sorted((test["test_id"], test["mode"]) for test in tests) == [
        (name, mode) for name in ("mixed_dep-max-group1-1M", "serial_chain-max-1M") for mode in ("full", "full#2")
    ]
    for test in tests:
        assert test["verdict"] == "passed", test["failure"]
        assert test["rollback_method"] == "head_kept"
        benchmark = [e for e in test["executions"] if e["role"] != "setup"]
        assert [e["variant"] for e in benchmark] == [0, 1, 2] and {e["status"] for e in benchmark} == {"VALID"}
        assert not any(e["known_before_send"] for e in benchmark)
    assert starts == 2, "one node per mode, started once for the whole group"


def test_a_cold_replay_into_reth_restarts_it_before_every_measured_execution_at_the_expected_head(
    genesis_placed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    reth aborts when stopped now and then (exit code -6): each restart goes on only where the head is the block's parent.
    One measured execution per test (a reth restart each, about 1.5 CPU-s); that a cold run restarts before every
    measured execution of a test, not once per test, is the runner's, shown on geth in tests/test_replay_geth.py.
    """
    tests, starts = replayed_counting_starts(genesis_placed, tmp_path / "run", monkeypatch, "--cold", "--warmup", "1", "--repeat", "1")
    assert [test["verdict"] for test in tests] == ["passed", "passed"], [test["failure"] for test in tests]
    for test in tests:
        benchmark = [e for e in test["executions"] if e["role"] != "setup"]
        assert [(e["role"], e["restarted_before"]) for e in benchmark] == [("warmup", False), ("measured", True)]
        assert benchmark[1]["own_timing"] is not None, "reth's own timing read after the restart"
    assert starts == 1 + 2


def test_a_reth_node_balgen_starts_loads_no_kzg_set_up_beside_the_blocks_it_is_sent(
    genesis_placed: Path, tmp_path: Path
) -> None:
    """
    With a blob pool, reth loads its KZG trusted setup in the background at every start: about 3 CPU-s
    in its first two seconds, beside the first blocks a replay sends it and at every restart. A replay
    sends nothing to the pool, so balgen starts reth without one (`--txpool.disable-blobs-support`).
    """
    assert balgen_in_process("genesis", genesis_placed, "--client", "reth", "--output", tmp_path / "genesis").returncode == 0
    (genesis,) = (tmp_path / "genesis").glob("*/genesis.json")
    with ClientProcess(RETH_PRESET, bundled_reth(), genesis, temp_parent=tmp_path) as reth:
        assert reth.pid is not None
        time.sleep(3)  # the set-up, when it runs, is done in about two seconds
        used = cpu_seconds_of(reth.pid)
    assert used < 1.0, f"reth used {used:.2f} CPU-s in its first seconds: it set up KZG"
