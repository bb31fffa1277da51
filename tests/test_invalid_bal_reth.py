"""
`invalid_bal_<family>` against reth: the lies of the Amsterdam the reth build implements (go-ethereum
v1.17.5's), rejected by reth and by each of its modes (the lies themselves, and geth's answers:
tests/test_invalid_bal.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from balgen.plumbing.toolchain import EARLIER_AMSTERDAM_VERSION, bundled_reth, release_bin
from balgen.replay.discovery import discover

from fill_runs import shared_fill
from replay_runs import replayed_engine_x

RETH_SAMPLE = "invalid_bal_prefetch-max and (missing_read_rehashed or out_of_order or undecodable_stale_hash)"
"""Lies reth must execute to refute, one it could refute by the list's order alone (it executes), and
an undecodable list under a stale hash: a minute of reth's slow first payloads."""

RETH_MODES_SAMPLE = "invalid_bal_prefetch-max and (missing_read_rehashed or wrong_value_rehashed or out_of_order_rehashed)"
"""Lies every reth mode must refute: two it must execute to see, one the list's order refutes."""

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


EVERY_RETH_MODE = "sequential,full,nobatchio"
"""reth's modes; `full` is reth as a plain run starts it (no flag of its own)."""


@pytest.fixture(scope="module")
def reth_mode_runs(lies_for_reth: Path, tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """
    Both samples in every reth mode, one node per mode: each lie rejected twice, the second time a sibling
    of it (a block reth has not seen) on the running node, then the valid block executed twice. Both tests
    below judge it: the plain reth's rejections are those of the `full` mode's node, the same command line.
    Three reth starts, where a plain run and a modes run of their own would start six (about 3 CPU-s each).
    """
    every = f"({RETH_SAMPLE}) or ({RETH_MODES_SAMPLE})"
    output = tmp_path_factory.mktemp("reth-lies") / "results"
    modes = ("--client", "reth", "--modes", EVERY_RETH_MODE, "--warmup", "0", "--repeat", "2")
    return replayed_engine_x(lies_for_reth, output, "-k", every, *modes)["tests"]


def sample_ids(lies_for_reth: Path, sample: str) -> set[str]:
    """The test ids of the lies a `-k` sample selects."""
    return {ref.test_id for group in discover(lies_for_reth, sample, formats="engine_x").groups for ref in group.tests}


@pytest.mark.integration
@requires_reth
def test_reth_rejects_the_lies_of_its_amsterdam(lies_for_reth: Path, reth_mode_runs: list[dict]) -> None:
    sample = sample_ids(lies_for_reth, RETH_SAMPLE)
    tests = [t for t in reth_mode_runs if t["mode"] == "full" and t["test_id"] in sample]
    assert len(sample) == 4 and sorted(t["test_id"] for t in tests) == sorted(sample)
    for test in tests:
        assert test["verdict"] == "passed", test["failure"]
        assert [e["status"] for e in test["executions"] if e["role"] == "rejection"] == ["INVALID"] * 2


@pytest.mark.integration
@requires_reth
def test_every_reth_mode_refuses_the_lies(lies_for_reth: Path, reth_mode_runs: list[dict]) -> None:
    sample = sample_ids(lies_for_reth, RETH_MODES_SAMPLE)
    tests = [t for t in reth_mode_runs if t["test_id"] in sample]
    assert len(sample) == 3 and sorted((t["test_id"], t["mode"]) for t in tests) == sorted(
        (test_id, mode) for test_id in sample for mode in EVERY_RETH_MODE.split(",")
    )
    for test in tests:
        assert test["verdict"] == "passed", (test["mode"], test["failure"])
        rejections = [e for e in test["executions"] if e["role"] == "rejection"]
        # The second rejection is a true one on the running node: a sibling of the lie, a hash reth has not seen.
        assert [(e["status"], e["restarted_before"], e["known_before_send"]) for e in rejections] == [("INVALID", False, False)] * 2
        assert len({e["block_hash"] for e in rejections}) == 2, test["test_id"]
        assert test["time_to_reject_ns"]["count"] == 2
        assert test["mode_proof"], "reth's execution path proves each mode"
