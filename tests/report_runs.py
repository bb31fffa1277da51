"""
Replay results written the way `balgen replay --modes` writes them, for the report's tests:
tests of several families, fill levels and gas values, each mode's phases drawn from a
seeded generator, one test made slower in one mode, each test's access-list features (so a
modes run has its fallback rule), and optionally an invalid-BAL test with its timed rejection and
a failed test.
"""

from __future__ import annotations

import random
from pathlib import Path

from balgen.analysis.bal_features import BalFeatures
from balgen.clients.slow_block_log import ClientBlockTiming
from balgen.results.measurements import Distribution, Execution, Role, benchmark_statistics
from balgen.results.phases import Phase
from balgen.results.schema import FixtureResult, RunResult, RunState, Verdict

HASH = "0x" + "ab" * 32
FAMILIES = ("mixed_dep", "interact", "state_root", "prefetch", "serial_chain", "keccak_chain")
FILLS = ("max", "half", "greedy")
MODES = (("sequential", ["--bal.executionmode=sequential"]), ("full", ["--bal.executionmode=full"]),
         ("nobatchio", ["--bal.executionmode=nobatchio"]), ("full#2", ["--bal.executionmode=full"]))  # fmt: skip
SPEEDUP = {"sequential": 1.0, "full": 0.55, "nobatchio": 0.7, "full#2": 0.55}
"""How much of the sequential execution time each mode takes."""
SLOWED = "serial_chain-max-30M"
"""The test made slower than sequential in `full` (and only there): the regression the page must list first."""


def test_ids(count: int) -> list[str]:
    """`count` distinct balgen short ids over the families, fills and gas values."""
    ids = [f"{family}-{fill}-{gas}M" for gas in (30, 60) for family in FAMILIES for fill in FILLS]
    ids += [f"{family}-{fill}-group{n}-{gas}M" for n in range(1, 40) for gas in (30, 60) for family in FAMILIES for fill in FILLS]
    return ids[:count]


def measured_execution(
    test_id: str, mode: str, repetition: int, phases: dict[Phase, float], gas: int, transactions: int = 100
) -> Execution:
    """One measured execution whose client-side time is the client's own block time plus 2 ms."""
    total = sum(phases.values())
    timing = ClientBlockTiming(
        block_number=2, block_hash=HASH, gas_used=gas, execution_ms=phases[Phase.EXECUTION],
        state_read_ms=phases[Phase.STATE_READ], state_hash_ms=phases[Phase.STATE_HASH],
        commit_ms=phases[Phase.COMMIT], total_ms=total, mgas_per_sec=gas / total / 1e3,
    )  # fmt: skip
    return Execution(
        test_id=test_id, role=Role.MEASURED, repetition=repetition, payload_index=1, block_number=2,
        block_hash=HASH, gas_used=gas, transaction_count=transactions, status="VALID",
        new_payload_ns=int((total + 2) * 1e6), forkchoice_updated_ns=1_000_000, known_before_send=False,
        restarted_before=False, own_timing=timing, mode=mode, variant=repetition + 1,
    )  # fmt: skip


def bal_features(test_id: str) -> BalFeatures:
    """What the block's access list would show: the chain families' writes overlap, the others' do not."""
    chained = test_id.startswith(("serial_chain", "keccak_chain"))
    return BalFeatures(
        transactions=100, edges=99 if chained else 0, components=1 if chained else 100, largest_component=100 if chained else 1,
        critical_path=100 if chained else 1, speedup_bound=1.0 if chained else 100.0, write_overlap=0.9 if chained else 0.0,
        accounts_per_tx=2.0, slots_per_tx=1.0, read_slots_per_tx=0.0,
    )  # fmt: skip


def _test(test_id: str, mode: str, rng: random.Random, base: dict[Phase, float]) -> FixtureResult:
    gas = 60_000_000 if test_id.endswith("-60M") else 30_000_000
    factor = SPEEDUP[mode] * (2.4 if test_id == SLOWED and mode == "full" else 1.0)
    executions = []
    for index in range(5):
        noise = rng.uniform(0.97, 1.03)
        phases = {phase: ms * noise * (factor if phase in (Phase.EXECUTION, Phase.STATE_READ) else 1.0) for phase, ms in base.items()}
        executions.append(measured_execution(test_id, mode, index, phases, gas))
    return FixtureResult(
        test_id=test_id, fixture_name=test_id, path="f.json", format="blockchain_test_engine_x",
        genesis_hash=HASH, verdict=Verdict.PASSED, failure=None, benchmark_gas_used=gas,
        executions=executions, statistics=benchmark_statistics(executions), mode=mode,
        speedup_bound=round(rng.uniform(1.0, 12.0), 2), mode_proof=[f"slow-block log: mode {mode} confirmed"],
        bal_features=bal_features(test_id),
    )  # fmt: skip


def _rejected(test_id: str, mode: str, valid: FixtureResult) -> FixtureResult:
    """`valid` as an invalid_bal test: its lying twin rejected in a fifth of the valid block's time."""
    valid_ns = valid.statistics.new_payload_ns.median  # type: ignore[union-attr]
    rejected = Distribution(count=3, median=valid_ns / 5, p5=valid_ns / 6, p95=valid_ns / 4, mean=valid_ns / 5, cv=0.05)
    return valid.model_copy(update={"test_id": test_id, "fixture_name": test_id, "time_to_reject_ns": rejected})


def modes_run(folder: Path, count: int = 24, seed: int = 7, *, rejections: bool = True, failed: bool = True, label: str = "geth-modes") -> Path:
    """A modes run of `count` tests in `folder` (its `results.json`)."""
    rng = random.Random(seed)
    run = RunResult(
        label=label, balgen_version="0.1.0", started_at="2026-11-28T21:00:00+00:00", fixtures_path="fixtures",
        keyword=None, warmup=1, repeat=5, cold=False, fail_fast=False,
        target={"kind": "managed", "client": "geth"}, client_versions=["Geth/v1.17.10-stable/linux-amd64/go1.24"],
        modes=[{"name": name, "flags": flags, "switches": None, "verified": True} for name, flags in MODES],
        method={"isolation": "sibling_blocks", "agreement_margin_ms": 10.0},
    )  # fmt: skip
    for test_id in test_ids(count):
        base = {Phase.EXECUTION: rng.uniform(40, 120), Phase.STATE_READ: rng.uniform(5, 40),
                Phase.STATE_HASH: rng.uniform(5, 30), Phase.COMMIT: rng.uniform(2, 10)}  # fmt: skip
        for mode, _ in MODES:
            run.tests.append(_test(test_id, mode, rng, base))
            if rejections and test_id == test_ids(count)[0]:
                run.tests.append(_rejected(f"invalid_bal_missing_read/{test_id}", mode, run.tests[-1]))
    if failed:
        run.tests.append(
            FixtureResult(
                test_id="prefetch-max-group39-60M", fixture_name="prefetch-max-group39-60M", path="f.json",
                format="blockchain_test_engine_x", genesis_hash=HASH, verdict=Verdict.FAILED,
                failure="payload 2: status INVALID, expected VALID", mode="full",
            )
        )  # fmt: skip
    run.state = RunState.COMPLETE
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(run.model_dump_json())
    return folder


def single_runs(folder: Path, count: int = 12, seed: int = 7) -> list[Path]:
    """Two plain runs (no modes) of the same fixtures: sequential and full, as two folders."""
    source = RunResult.model_validate_json((modes_run(folder / "source", count, seed, failed=False) / "results.json").read_text())
    paths = []
    for mode in ("sequential", "full"):
        run = source.model_copy(update={
            "label": f"geth-{mode}", "modes": [],
            "tests": [test.model_copy(update={"mode": None}) for test in source.tests if test.mode == mode],
        })  # fmt: skip
        path = folder / mode
        path.mkdir()
        (path / "results.json").write_text(run.model_dump_json())
        paths.append(path)
    return paths
