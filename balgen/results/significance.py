"""
Which tests changed between two replay runs, and by how much, judged from
every measured execution of both (`confidence.change_between`), and what a
pair of runs of the same build says about the noise between runs.

Only tests that passed in both runs are compared: a failed test's numbers
are not trustworthy, and a test missing from one run has nothing to compare.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .confidence import MIN_EXECUTIONS, Change, ChangeVerdict, change_between, noise_floor, paired_change
from .measurements import Role
from .schema import FixtureResult, RunResult


def _measured_executions_mgas(test: FixtureResult) -> list[float]:
    return [m for e in test.executions if e.role is Role.MEASURED and (m := e.mgas_per_second) is not None]


def comparable_tests(result: RunResult) -> dict[str, FixtureResult]:
    """
    The tests of a run a report compares, by id: passed, with a median MGas/s
    and newPayload time and the measured executions behind them. One
    definition for every figure the report computes, so no table is indexed
    by a test another table left out (a passed test with `statistics: null`,
    which the schema allows, is in none of them).
    """
    return {
        test.test_id: test
        for test in result.tests
        if test.passed
        and test.median("mgas_per_second") is not None
        and test.median("new_payload_ns") is not None
        and _measured_executions_mgas(test)
    }


def measured_mgas(result: RunResult) -> dict[str, list[float]]:
    """Per comparable test, the MGas/s of each of its measured executions."""
    return {test_id: _measured_executions_mgas(test) for test_id, test in comparable_tests(result).items()}


def changes_against(
    baseline: RunResult, run: RunResult, noise_threshold: float = 0.0, paired: bool = True
) -> dict[str, Change]:
    """
    Every shared test's change from `baseline` to `run`, by test id: from per-round ratios where
    both are modes of one modes run (`same_rounds`), `paired`, and the test has at least
    `MIN_EXECUTIONS` rounds both measured (a round in which one mode's execution was replaced gives
    no pair); else from the two runs' medians.
    """
    before_tests, after_tests = comparable_tests(baseline), comparable_tests(run)
    rounds = paired and same_rounds(baseline, run)
    changes = {}
    for test in sorted(before_tests.keys() & after_tests.keys()):
        ratios = round_ratios(before_tests[test], after_tests[test]) if rounds else []
        if len(ratios) >= MIN_EXECUTIONS:
            changes[test] = paired_change(ratios, noise_threshold)
        else:
            before, after = _measured_executions_mgas(before_tests[test]), _measured_executions_mgas(after_tests[test])
            changes[test] = change_between(before, after, noise_threshold)
    return changes


def same_rounds(baseline: RunResult, run: RunResult) -> bool:
    """Whether two runs are two modes of one modes run, whose executions went in shared rounds."""
    return (
        baseline.started_at == run.started_at
        and baseline.fixtures_path == run.fixtures_path
        and _in_rounds(baseline)
        and _in_rounds(run)
    )


def _in_rounds(result: RunResult) -> bool:
    """Whether a run's measured executions carry their round (a modes run's do)."""
    return any(e.round is not None for test in result.tests if test.mode for e in test.executions if e.role is Role.MEASURED)


def round_ratios(baseline: FixtureResult, test: FixtureResult) -> list[float]:
    """`test`'s MGas/s over `baseline`'s in each round both measured (a modes run's paired executions)."""
    before = {
        e.round: mgas
        for e in baseline.executions
        if e.role is Role.MEASURED and e.round is not None and (mgas := e.mgas_per_second)
    }
    return [
        mgas / before[e.round]
        for e in test.executions
        if e.role is Role.MEASURED and e.round in before and (mgas := e.mgas_per_second) is not None
    ]


def same_build(baseline: RunResult, run: RunResult) -> bool:
    """
    Whether two runs are an A/A pair: the same client build and flags, made
    the same way, so any difference between them is noise.
    """
    return (
        baseline.target == run.target
        and sorted(baseline.client_versions) == sorted(run.client_versions)
        and (baseline.warmup, baseline.cold) == (run.warmup, run.cold)
    )


@dataclass(frozen=True)
class NoiseFloor:
    """What an A/A pair measured: how far apart two runs of the same build land."""

    compared: int
    significant: int
    """Tests called faster or slower although nothing changed."""
    floor: float | None
    """95th percentile of |change| over the tests, in percent."""


def aa_noise(changes: Mapping[str, Change]) -> NoiseFloor:
    """The noise floor of an A/A pair's changes."""
    judged = [change for change in changes.values() if change.verdict is not ChangeVerdict.TOO_FEW]
    return NoiseFloor(
        compared=len(judged),
        significant=sum(change.significant for change in judged),
        floor=noise_floor(judged),
    )
