"""
geth-bal-switch (scripts/geth_bal_switch/): each `--bal.executionmode` imports Amsterdam fixtures with
every payload VALID, and geth's own output proves which mode ran, as the README there says: the
slow-block counters tell sequential from parallel execution, a per-block log line tells nobatchio, and
another, with the block's phases, executionless (the list applied without executing the block).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from balgen.clients.kinds.geth import PRESET as GETH_PRESET
from balgen.clients.process import ClientProcess
from balgen.commands.replay import run_replay
from balgen.plumbing.toolchain import pinned_geth_bal_switch

from in_process import balgen_in_process
from processes_left import cpu_seconds_of

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not pinned_geth_bal_switch().is_file(), reason="geth-bal-switch not built (make tools)"),
]

NO_BATCH_IO_LINE = "Executing block in parallel without BAL batch IO"
EXECUTIONLESS_LINE = "Applied block access list without execution"


def benchmark_counts(output: Path) -> dict[str, Any]:
    """geth's slow-block counters of the measured execution of the one benchmark block replayed."""
    run = json.loads((output / "results.json").read_text())
    (test,) = run["tests"]
    (measured,) = [execution for execution in test["executions"] if execution["role"] == "measured"]
    return measured["own_timing"]["counts"]


@pytest.mark.parametrize("mode", ["full", "nobatchio", "sequential", "executionless"])
def test_each_mode_imports_the_fixture_and_geths_output_proves_which_ran(
    serial_chain_fill: Path, tmp_path: Path, mode: str
) -> None:
    log, output = tmp_path / "geth.log", tmp_path / "run"
    code = run_replay(
        [
            str(serial_chain_fill / "blockchain_tests_engine_x"), "--client-bin", str(pinned_geth_bal_switch()),
            "--client-args", f"--bal.executionmode={mode} --log.file {log}",
            "--warmup", "0", "--repeat", "1", "--agreement", "record", "--output", str(output),
        ]
    )  # fmt: skip
    assert code == 0, "every payload VALID, the head at lastblockhash"
    counts = benchmark_counts(output)
    reads, writes = counts["reads"], counts["writes"]
    caches = [counts[cache][side] for cache in ("account_cache", "storage_cache", "code_cache") for side in ("hits", "misses")]
    if mode == "sequential":
        # Execution's own reads: more accounts and slots than written, the workload's code, the reader's cache.
        assert reads["accounts"] > writes["accounts"] and reads["storage_slots"] > writes["storage_slots"], counts
        assert reads["code"] > 0 and sum(caches) > 0, counts
    else:
        # The BAL path counts only what applying the list loads: the written accounts and slots.
        assert (reads["accounts"], reads["storage_slots"]) == (writes["accounts"], writes["storage_slots"]), counts
        assert reads["code"] == 0 and sum(caches) == 0, counts
    text = log.read_text()
    assert ("BAL execution mode" in text) == (mode != "full"), "the start-up line names a mode other than full"
    batch_io_off = [line for line in text.splitlines() if NO_BATCH_IO_LINE in line]
    assert len(batch_io_off) == (2 if mode == "nobatchio" else 0), "one line per block executed: setup and benchmark"
    applied = [line for line in text.splitlines() if EXECUTIONLESS_LINE in line]
    assert len(applied) == (2 if mode == "executionless" else 0), "one line per block applied: setup and benchmark"
    assert ("trusted" in text) == (mode == "executionless"), "the start-up warning that the list is trusted"


def test_an_unknown_mode_stops_geth_with_one_line(tmp_path: Path) -> None:
    completed = subprocess.run(
        [
            str(pinned_geth_bal_switch()), "--bal.executionmode=parallel", "--datadir", str(tmp_path / "data"),
            "--nodiscover", "--maxpeers", "0", "--port", "0", "--authrpc.port", "0", "--ipcdisable",
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert completed.returncode != 0
    assert 'Fatal: --bal.executionmode must be full, sequential, nobatchio or executionless, not "parallel"' in completed.stderr


def test_a_geth_bal_switch_node_sets_up_no_kzg_beside_the_blocks_it_is_sent(serial_chain_fill: Path, tmp_path: Path) -> None:
    """
    The release starts setting up the KZG library at every start, about 3 CPU-s on one core in its
    first seconds, beside the first blocks a modes run measures; geth-bal-switch sets it up on first use
    (scripts/geth_bal_switch/README.md), and a replay never uses it.
    """
    assert balgen_in_process("genesis", serial_chain_fill, "--client", "geth", "--output", tmp_path / "genesis").returncode == 0
    (genesis,) = (tmp_path / "genesis").glob("*/genesis.json")
    with ClientProcess(
        GETH_PRESET, pinned_geth_bal_switch(), genesis, extra_args=["--bal.executionmode=full"], temp_parent=tmp_path
    ) as geth:
        assert geth.pid is not None
        time.sleep(4)  # the stock geth's set-up takes about 3.3 s
        used = cpu_seconds_of(geth.pid)
        log = geth.log_tail(400)
    assert used < 1.0, f"geth-bal-switch used {used:.2f} CPU-s in its first seconds: it set up KZG"
    assert "Initializing the KZG library" not in log
