"""
`balgen report` of a `--modes` run: its modes compared with each other as runs
are (sequential as the baseline), the A/A pair's noise floor, and which phase
of the block (execution, state read, state hash, commit) each mode moved.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from balgen.commands.report import run_report
from balgen.results.comparison import compare, load_runs
from balgen.results.measurements import benchmark_statistics
from balgen.results.phases import Phase, PhaseVerdict
from balgen.results.schema import FixtureResult, RunResult, RunState, Verdict
from report_runs import measured_execution

HASH = "0x" + "ab" * 32
GAS = 60_000_000


def _result(test_id: str, mode: str, phases: dict[Phase, float]) -> FixtureResult:
    # Five executions 1% apart around the phase times: a spread small against the changes compared.
    executions = [
        measured_execution(test_id, mode, index, {phase: ms * factor for phase, ms in phases.items()}, GAS, transactions=10)
        for index, factor in enumerate((0.99, 0.995, 1.0, 1.005, 1.01))
    ]
    return FixtureResult(
        test_id=test_id, fixture_name=test_id, path="f.json", format="blockchain_test_engine_x",
        genesis_hash=HASH, verdict=Verdict.PASSED, failure=None, benchmark_gas_used=GAS,
        executions=executions, statistics=benchmark_statistics(executions), mode=mode,
    )  # fmt: skip


SEQUENTIAL = {Phase.EXECUTION: 80.0, Phase.STATE_READ: 30.0, Phase.STATE_HASH: 20.0, Phase.COMMIT: 10.0}
FULL = {Phase.EXECUTION: 30.0, Phase.STATE_READ: 10.0, Phase.STATE_HASH: 20.0, Phase.COMMIT: 10.0}
NO_BATCH_IO = {Phase.EXECUTION: 30.0, Phase.STATE_READ: 30.0, Phase.STATE_HASH: 20.0, Phase.COMMIT: 10.0}


def _modes_run(folder: Path, client: str = "reth") -> Path:
    modes = [("sequential", ["--bal.executionmode=sequential"]), ("full", ["--bal.executionmode=full"]),
             ("nobatchio", ["--bal.executionmode=nobatchio"]), ("full#2", ["--bal.executionmode=full"])]  # fmt: skip
    run = RunResult(
        label="geth-modes", balgen_version="0", started_at="2026-01-01T00:00:00+00:00", fixtures_path="f",
        keyword=None, warmup=1, repeat=5, cold=False, fail_fast=False, target={"kind": "managed", "client": client},
        modes=[{"name": name, "flags": flags, "switches": None, "verified": True} for name, flags in modes],
    )  # fmt: skip
    phases = {"sequential": SEQUENTIAL, "full": FULL, "nobatchio": NO_BATCH_IO, "full#2": FULL}
    # Listed in the run's own (rotating) order, not the baseline's: the report must find sequential itself.
    for mode in ("full", "sequential", "full#2", "nobatchio"):
        for test in ("mixed_dep-max-60M", "state_root-max-60M"):
            run.tests.append(_result(test, mode, phases[mode]))
    run.state = RunState.COMPLETE
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(run.model_dump_json())
    return folder


def test_a_modes_run_is_compared_mode_against_sequential(tmp_path: Path) -> None:
    comparison = compare(load_runs([_modes_run(tmp_path / "run")]))
    assert comparison.names == ("geth-modes-sequential", "geth-modes-full", "geth-modes-nobatchio", "geth-modes-full#2")
    full, nobatchio, again = comparison.summaries
    assert (full.faster, full.slower) == (2, 0)
    assert full.average_gain == pytest.approx((142 / 72 - 1) * 100, rel=0.01)
    assert nobatchio.faster == 2 and nobatchio.average_gain < full.average_gain
    assert full.noise is None and nobatchio.noise is None, "different flags than sequential: not A/A"
    assert again.noise is None, "full#2 is A/A with full, not with the sequential baseline"
    ((name, earlier, noise),) = comparison.noise_pairs
    assert (name, earlier, noise.compared, noise.significant) == ("geth-modes-full#2", "geth-modes-full", 2, 0)
    assert noise.floor == pytest.approx(0.0, abs=0.01)


def test_each_mode_is_shown_moving_its_own_phase(tmp_path: Path) -> None:
    # reth's phases time the same work on its sequential and its BAL path (kinds/reth.py's table)
    comparison = compare(load_runs([_modes_run(tmp_path / "run")]))
    assert all(judged.comparable for _, judged in comparison.phase_comparability)
    summary = {(s.name.removeprefix("geth-modes-"), s.phase): s for s in comparison.phase_summaries}
    # full: parallel execution and batch IO shorten execution and the state read, nothing else
    assert summary["full", Phase.EXECUTION].less == 2 and summary["full", Phase.STATE_READ].less == 2
    assert summary["full", Phase.EXECUTION].median_change == pytest.approx(-62.5, abs=0.1)
    assert summary["full", Phase.STATE_HASH].less == summary["full", Phase.STATE_HASH].more == 0
    # nobatchio: execution only; the state read is where batch IO was
    assert summary["nobatchio", Phase.EXECUTION].less == 2 and summary["nobatchio", Phase.STATE_READ].less == 0
    changes = {(c.test_id, c.phase): c for c in comparison.phases[1]}
    read = changes["mixed_dep-max-60M", Phase.STATE_READ]
    assert read.verdict is PhaseVerdict.NO_CHANGE and read.change.low < 0 < read.change.high


def test_geths_phases_are_compared_across_its_paths_only_where_they_time_the_same_work(tmp_path: Path) -> None:
    comparison = compare(load_runs([_modes_run(tmp_path / "run", client="geth")]))
    judged = {(name.removeprefix("geth-modes-"), c.phase): c for name, c in comparison.phase_comparability}
    for phase in (Phase.EXECUTION, Phase.STATE_READ, Phase.STATE_HASH):
        assert not judged["full", phase].comparable and "not the same work" in (judged["full", phase].reason or "")
    assert judged["full", Phase.STATE_HASH].beside == "execution", "the root is hashed beside execution"
    assert "reads of applying the BAL" in (judged["full", Phase.STATE_READ].reason or "")
    assert judged["full", Phase.COMMIT].comparable and judged["full#2", Phase.STATE_HASH].comparable is False
    compared = {(c.phase, name) for name, changes in zip(comparison.names[1:], comparison.phases, strict=True) for c in changes}
    assert compared == {(Phase.COMMIT, name) for name in comparison.names[1:]}, "only commit is like for like"
    overlap = {(o.name.removeprefix("geth-modes-"), o.phase): o for o in comparison.overlaps}
    assert overlap["full", Phase.STATE_HASH].beside_ms == pytest.approx(60.0) and overlap["full", Phase.STATE_HASH].phase_ms == pytest.approx(40.0)
    assert ("sequential", Phase.STATE_HASH) not in overlap, "sequential hashes after execution"


def test_the_report_of_a_modes_run_has_its_tables_and_both_pictures(tmp_path: Path) -> None:
    run = _modes_run(tmp_path / "run")
    assert run_report([str(run), "--output", str(tmp_path / "report")]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Which phase each run changed" in text and "| geth-modes-full | execution | 2 | 2 | 0 | -62.5% |" in text
    assert "## Phase time per test against the baseline" in text
    assert "| geth-modes-full#2 | geth-modes-full | 2 | 0/2 | 0.0% |" in text
    assert "| mixed_dep-max-60M | geth-modes-nobatchio | state read | 30.00 | 30.00 | +0.0% |" in text
    for picture in ("report.png", "phases.png"):
        assert (tmp_path / "report" / picture).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_two_modes_runs_are_told_apart_by_run_and_mode(tmp_path: Path) -> None:
    names = [run.name for run in load_runs([_modes_run(tmp_path / "a"), _modes_run(tmp_path / "b")])]
    assert names[:2] == ["a-sequential", "a-full"] and names[4:6] == ["b-sequential", "b-full"], "labels repeat: told apart by folder"


def test_a_run_of_schema_version_1_is_still_read(tmp_path: Path) -> None:
    """Version 1 stored every client's own block timing under `geth`; version 2 under `own_timing`."""
    import json

    folder = _modes_run(tmp_path / "v2")
    document = json.loads((folder / "results.json").read_text())
    assert document["schema_version"] == 2
    document["schema_version"] = 1
    for test in document["tests"]:
        for execution in test["executions"]:
            execution["geth"] = execution.pop("own_timing")
        for name in ("total", "execution", "state_read", "state_hash", "commit"):
            test["statistics"][f"geth_{name}_ms"] = test["statistics"].pop(f"own_{name}_ms")
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "results.json").write_text(json.dumps(document))
    old, new = compare(load_runs([tmp_path / "v1"])), compare(load_runs([folder]))
    assert old.phase_summaries == new.phase_summaries and old.summaries == new.summaries
    assert load_runs([tmp_path / "v1"])[0].result.tests[0].executions[0].own_timing is not None
