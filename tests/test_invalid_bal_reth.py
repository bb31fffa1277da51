"""
`invalid_bal_<family>` against reth: the lies of the Amsterdam the reth build implements (go-ethereum
v1.17.5's), rejected by reth and by each of its modes (the lies themselves, and geth's answers:
tests/test_invalid_bal.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from balgen.plumbing.toolchain import EARLIER_AMSTERDAM_VERSION, bundled_reth, release_bin

from fill_runs import shared_fill
from replay_runs import replayed_engine_x

RETH_SAMPLE = "invalid_bal_prefetch-max and (missing_read_rehashed or out_of_order or undecodable_stale_hash)"
"""Lies reth must execute to refute, one it could refute by the list's order alone (it executes), and
an undecodable list under a stale hash: a minute of reth's slow first payloads."""

RETH_MODES_SAMPLE = "invalid_bal_prefetch-max and (missing_read_rehashed or wrong_value_rehashed or out_of_order_rehashed)"
"""Lies every reth mode must refute: two it must execute to see, one the list's order refutes."""

TIMED_LIE = "missing_read_rehashed"
"""Of `RETH_MODES_SAMPLE`, the lie each mode rejects twice, on a node restarted in between to forget it (a rejection
timed as a block is), and whose run proves each node's mode from its log of a sibling execution; the others are
rejected once per mode, by nodes that live a few seconds: a reth node spends about 3 CPU-s in its first seconds
(the restarts of a run that timed every rejection took three times the CPU)."""

requires_reth = pytest.mark.skipif(
    not bundled_reth().is_file() or not (release_bin(EARLIER_AMSTERDAM_VERSION) / "evm").is_file(),
    reason="no reth build, or no go-ethereum v1.17.5 evm (make tools)",
)


@pytest.fixture(scope="module")
def lies_for_reth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """
    Both reth samples, filled once with go-ethereum v1.17.5's t8n (the Amsterdam the reth build
    implements); each test replays its own sample of it with `-k`. Read only. The contracts are in the
    genesis (`--setup genesis`): with no setup block a test leaves reth's head where it found it, so
    nothing is rolled back between tests (reth's rollback is a stop, a datadir copy put back and a start).
    """
    completed, output = shared_fill(
        tmp_path_factory, "--gas-benchmark-values", "1", "-k", f"({RETH_SAMPLE}) or ({RETH_MODES_SAMPLE})",
        "--setup", "genesis", "--evm-bin", str(release_bin(EARLIER_AMSTERDAM_VERSION) / "evm"),
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output


@pytest.mark.integration
@requires_reth
def test_reth_rejects_the_lies_of_its_amsterdam(lies_for_reth: Path, tmp_path: Path) -> None:
    run = replayed_engine_x(lies_for_reth, tmp_path / "results", "-k", RETH_SAMPLE, "--client", "reth", "--warmup", "0", "--repeat", "1")
    assert len(run["tests"]) == 4
    for test in run["tests"]:
        assert test["verdict"] == "passed", test["failure"]
        (rejection,) = [e for e in test["executions"] if e["role"] == "rejection"]
        assert rejection["status"] == "INVALID"


@pytest.mark.integration
@requires_reth
def test_every_reth_mode_refuses_the_lies(lies_for_reth: Path, tmp_path: Path) -> None:
    modes = ("--client", "reth", "--modes", "sequential,full,nobatchio", "--warmup", "0")
    once = replayed_engine_x(lies_for_reth, tmp_path / "once", "-k", f"({RETH_MODES_SAMPLE}) and not {TIMED_LIE}", *modes, "--repeat", "1")
    timed = replayed_engine_x(lies_for_reth, tmp_path / "timed", "-k", f"invalid_bal_prefetch-max and {TIMED_LIE}", *modes, "--repeat", "2")
    assert len(once["tests"]) == 2 * 3 and len(timed["tests"]) == 1 * 3
    for test in [*once["tests"], *timed["tests"]]:
        assert test["verdict"] == "passed", (test["mode"], test["failure"])
        rejections = [(e["status"], e["restarted_before"]) for e in test["executions"] if e["role"] == "rejection"]
        assert rejections == ([("INVALID", False), ("INVALID", True)] if TIMED_LIE in test["test_id"] else [("INVALID", False)])
    assert all(test["mode_proof"] for test in timed["tests"]), "reth's execution path proves each mode"
