"""
Comparing replay runs: the same suite on the same client with different
flags (modes A/B/C of the BAL benchmark report), or different builds.

The first run is the baseline. Per test, each run's figure is the median
MGas/s of its measured executions, and the delta is the relative change
against the baseline, in percent (positive = faster), with its confidence
interval and verdict from every measured execution of both runs
(`significance`). Only tests that passed in both runs are compared: a
failed test's numbers are not trustworthy, and a test missing from one run
has nothing to compare. A run made with `--modes` is split into one run
per mode (`runs_by_mode`), `sequential` first when it ran, so its modes are
compared with each other as runs are: they share the machine's drift, and a
mode listed twice is an A/A pair. The per-run summary follows the report's
distribution table, over significant changes only: how many tests are
faster and slower, the average, P95 and P99 gain among the faster ones,
and the same for the regressions among the slower ones. A run of the same
build as the baseline (an A/A pair) also gets its noise floor, and where
the fixtures carry their dependency graph's speedup bound, each run's
measured speedup is set against it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy
from pydantic import ValidationError

from ..plumbing.errors import BadInput
from ..plumbing.printable import check_test_id, escaped
from ..plumbing.user_files import read_user_text
from .confidence import Change
from .phases import PhaseChange, PhaseSummary, phase_changes, summarize_phases
from .phase_comparability import Overlap, PhaseComparability, comparable_phases, overlaps
from .rejection_times import RejectionTime, rejection_times
from .schema import READABLE_VERSIONS, RESULTS_JSON, RunResult
from .fallback_rule import FallbackTable, fallback_tables
from .significance import NoiseFloor, aa_noise, changes_against, comparable_tests, same_build, same_rounds


@dataclass(frozen=True)
class LoadedRun:
    """One run's results and the name it is shown under."""

    name: str
    path: Path
    result: RunResult

    def mgas(self) -> dict[str, float]:
        """Median MGas/s of every comparable test (`comparable_tests`)."""
        return {
            test_id: float(test.statistics.mgas_per_second.median)  # type: ignore[union-attr]
            for test_id, test in comparable_tests(self.result).items()
        }

    def seconds(self) -> dict[str, tuple[int, float]]:
        """(gas used, median newPayload seconds) of every comparable test."""
        return {
            test_id: (test.benchmark_gas_used or 0, test.statistics.new_payload_ns.median / 1e9)  # type: ignore[union-attr]
            for test_id, test in comparable_tests(self.result).items()
        }


def load_run(path: Path, *, check_figures: bool = True) -> RunResult:
    """
    A run's `results.json` (given the file or its folder), checked against
    the schema, and with `check_figures` its figures (a modes run lists each
    test once per mode: `load_runs` checks it split by mode).
    """
    file = path / RESULTS_JSON if path.is_dir() else path
    if not file.exists():
        raise BadInput(f"{path}: no {RESULTS_JSON} (not a balgen replay run)")
    text = read_user_text(file)  # a FIFO, a device or a file larger than memory allows is one line
    try:
        result = RunResult.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise BadInput(f"{file}: not a replay result: {where}: {first['msg']}") from None
    if result.schema_version not in READABLE_VERSIONS:
        raise BadInput(
            f"{file}: schema version {result.schema_version}, this balgen reads {', '.join(map(str, READABLE_VERSIONS))}"
        )
    if check_figures:
        check_compared_figures(file, result)
    return result


COMPARED_METRICS = ("mgas_per_second", "new_payload_ns")
"""The medians the report computes with; each must be a positive finite number to mean anything."""


def check_compared_figures(file: Path, result: RunResult) -> None:
    """Every test listed once under a printable id, and every figure the report uses positive and finite."""
    seen: set[str] = set()
    for index, test in enumerate(result.tests):
        where = f"{file}: tests.{index}"
        check_test_id(test.test_id, where)
        key = test.test_id if test.mode is None else f"{test.test_id} in mode {test.mode}"
        if key in seen:
            raise BadInput(f"{where}: test {key} is listed twice in one run")
        seen.add(key)
        for metric in COMPARED_METRICS:
            value = test.median(metric)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise BadInput(
                    f"{where}: test {test.test_id}: statistics.{metric}.median is {value}, not a positive number"
                )


BASELINE_MODE = "sequential"
"""The report's mode A: what the BAL's optimisations are measured against, first when a run has it."""


def mode_runs(result: RunResult) -> list[RunResult]:
    """
    A modes run (`balgen replay --modes`) as one run per mode, `sequential`
    first when it ran (the baseline every mode is measured against), the
    others in the order of `--modes`, labelled `<label>-<mode>`, its target carrying the mode's
    flags (so two modes with the same flags are an A/A pair to
    `same_build`); any other run as itself.
    """
    if not result.modes:
        return [result]
    runs = []
    for mode in sorted(result.modes, key=lambda mode: mode["name"] != BASELINE_MODE):
        name = str(mode["name"])
        runs.append(
            result.model_copy(
                update={
                    "label": f"{result.label}-{name}",
                    "target": {**result.target, "mode_flags": list(mode["flags"])},
                    "tests": [test for test in result.tests if test.mode == name],
                    "modes": [],
                }
            )
        )
    return runs


def load_runs(paths: Sequence[Path]) -> list[LoadedRun]:
    """
    The runs, each named by its label, or by its folder where labels repeat;
    a modes run gives one run per mode (`mode_runs`), `sequential` first.
    """
    loaded = [(path, each) for path in paths for each in mode_runs(load_run(path, check_figures=False))]
    for path, each in loaded:
        check_compared_figures(path / RESULTS_JSON if path.is_dir() else path, each)
    labels = [result.label for _, result in loaded]
    runs = []
    for path, result in loaded:
        name = result.label
        if labels.count(name) > 1:
            folder = (path if path.is_dir() else path.parent).name
            mode = next((test.mode for test in result.tests), None)
            name = folder if mode is None else f"{folder}-{mode}"
        # A label or mode name is the user's text: an ESC in it would reach the terminal from every table.
        runs.append(LoadedRun(escaped(name), path, result))
    names = [run.name for run in runs]
    if len(set(names)) != len(names):
        raise BadInput("two runs have the same label and folder name; pass different runs")
    return runs


@dataclass(frozen=True)
class ComparedTest:
    """One test across the runs: MGas/s per run and delta % against the baseline."""

    test_id: str
    mgas: tuple[float | None, ...]
    deltas: tuple[float | None, ...]
    """One per run after the baseline; None where either run has no figure."""
    changes: tuple[Change | None, ...] = ()
    """The deltas with their intervals and verdicts; None where there is no delta."""


@dataclass(frozen=True)
class DeltaSummary:
    """How one run compares with the baseline over the tests both passed."""

    name: str
    compared: int
    faster: int
    slower: int
    average_gain: float | None
    p95_gain: float | None
    p99_gain: float | None
    average_regression: float | None
    p95_regression: float | None
    p99_regression: float | None
    aggregate_mgas: float | None
    """Total gas over total median newPayload time, over the tests compared."""
    baseline_aggregate_mgas: float | None
    noise: NoiseFloor | None = None
    """The noise floor, when this run and the baseline are of the same build (A/A)."""


@dataclass(frozen=True)
class Regression:
    """A test slower than in the baseline."""

    test_id: str
    name: str
    baseline_mgas: float
    mgas: float
    delta: float


@dataclass(frozen=True)
class SpeedupAgainstBound:
    """A run's speedup on one test next to the ideal bound of the test's dependency graph."""

    test_id: str
    name: str
    bound: float
    """Block gas over critical-path gas (`_info["dependency-graph"]["speedup-bound"]`)."""
    speedup: float
    """The run's median MGas/s over the baseline's."""
    change: Change

    @property
    def share(self) -> float:
        """How much of the bound the run achieved: speedup / bound."""
        return self.speedup / self.bound


@dataclass(frozen=True)
class Comparison:
    """Everything the report shows."""

    names: tuple[str, ...]
    rows: tuple[ComparedTest, ...]
    summaries: tuple[DeltaSummary, ...]
    worst: tuple[Regression, ...]
    speedups: tuple[SpeedupAgainstBound, ...] = ()
    noise_pairs: tuple[tuple[str, str, NoiseFloor], ...] = ()
    """Every A/A pair among the runs (a run and an earlier one of the same build and flags, e.g.
    `full#2` and `full` of one modes run), with its noise floor."""
    phases: tuple[tuple[PhaseChange, ...], ...] = ()
    """Per run after the baseline, every test's change of each phase's time."""
    phase_summaries: tuple[PhaseSummary, ...] = ()
    rejections: tuple[RejectionTime, ...] = ()
    """Every run's timed rejections, beside the valid block's time of the same test."""
    phase_comparability: tuple[tuple[str, PhaseComparability], ...] = ()
    """Per run after the baseline and phase: compared, or why not (`phase_comparability`)."""
    overlaps: tuple[Overlap, ...] = ()
    """Per run, each phase its client's code runs beside another, with both times."""
    paired_runs: tuple[str, ...] = ()
    """The runs whose changes came from per-round ratios to the baseline (modes of one modes run)."""
    fallback: tuple[FallbackTable, ...] = ()
    """Per modes run with `sequential` and `full`: the per-block fallback rule (`fallback_rule`)."""


def _percentile(values: Sequence[float], q: float) -> float | None:
    return float(numpy.percentile(values, q)) if values else None


def _mean(values: Sequence[float]) -> float | None:
    return float(numpy.mean(values)) if values else None


def _aggregate(seconds: dict[str, tuple[int, float]], tests: Sequence[str]) -> float | None:
    gas = sum(seconds[test][0] for test in tests)
    time = sum(seconds[test][1] for test in tests)
    return gas / time / 1e6 if time > 0 else None


def summarize(name: str, changes: dict[str, Change], baseline: LoadedRun, run: LoadedRun) -> DeltaSummary:
    """The distribution of one run's significant changes (see the module docstring)."""
    gains = [c.estimate for c in changes.values() if c.significant and c.estimate > 0]
    losses = [-c.estimate for c in changes.values() if c.significant and c.estimate < 0]
    tests = sorted(changes)
    return DeltaSummary(
        name=name,
        compared=len(changes),
        faster=len(gains),
        slower=len(losses),
        average_gain=_mean(gains),
        p95_gain=_percentile(gains, 95),
        p99_gain=_percentile(gains, 99),
        average_regression=None if not losses else -float(numpy.mean(losses)),
        p95_regression=None if not losses else -float(numpy.percentile(losses, 95)),
        p99_regression=None if not losses else -float(numpy.percentile(losses, 99)),
        aggregate_mgas=_aggregate(run.seconds(), tests),
        baseline_aggregate_mgas=_aggregate(baseline.seconds(), tests),
        noise=aa_noise(changes) if same_build(baseline.result, run.result) else None,
    )


def speedups_against_bounds(
    runs: Sequence[LoadedRun], changes_by_run: Sequence[dict[str, Change]]
) -> tuple[SpeedupAgainstBound, ...]:
    """Per run and test whose fixture has a dependency graph: measured speedup and the bound."""
    bounds = {test.test_id: test.speedup_bound for test in runs[0].result.tests if test.speedup_bound}
    return tuple(
        SpeedupAgainstBound(test, run.name, bounds[test], 1 + change.estimate / 100, change)
        for run, changes in zip(runs[1:], changes_by_run, strict=True)
        for test, change in changes.items()
        if test in bounds
    )


def noise_pairs(
    runs: Sequence[LoadedRun], noise_threshold: float = 0.0, paired: bool = True
) -> tuple[tuple[str, str, NoiseFloor], ...]:
    """Each run of the same build and flags as an earlier one, with that one and their noise floor."""
    pairs = []
    for index, run in enumerate(runs):
        for earlier in runs[:index]:
            if same_build(earlier.result, run.result):
                noise = aa_noise(changes_against(earlier.result, run.result, noise_threshold, paired))
                pairs.append((run.name, earlier.name, noise))
                break
    return tuple(pairs)


def check_same_fixtures(baseline: LoadedRun, run: LoadedRun) -> None:
    """
    Refuse a pair of runs that replayed different fixtures under the same
    test id (another genesis: another fill, gas value or format): their
    difference is not the client's, and a report would show it as a change.
    """
    genesis = {test.test_id: test.genesis_hash for test in baseline.result.tests}
    differing = sorted(
        (test for test in run.result.tests if test.test_id in genesis and genesis[test.test_id] != test.genesis_hash),
        key=lambda test: test.test_id,
    )
    if differing:
        first = differing[0]
        others = f" (and {len(differing) - 1} more tests)" if len(differing) > 1 else ""
        raise BadInput(
            f"{run.name} ({run.path}) and the baseline {baseline.name} ({baseline.path}) replayed different "
            f"fixtures: test {first.test_id} has genesis {first.genesis_hash} there and "
            f"{genesis[first.test_id]} in the baseline{others}; compare runs of the same fixtures"
        )


def comparable_runs(runs: Sequence[LoadedRun]) -> tuple[list[LoadedRun], list[str]]:
    """
    The runs that have something to compare, and why each other one is left
    out: a run (a mode of a modes run) without a passed, measured test, or
    with none in common with the baseline (the first run kept). One mode
    that failed every test must not take the other modes' comparison with
    it; when fewer than two runs would be left, all are kept, and `compare`
    says why there is nothing to compare.
    """
    measured = [comparable_tests(run.result).keys() for run in runs]
    with_tests = [(run, tests) for run, tests in zip(runs, measured, strict=True) if tests]
    left_out = [f"{run.name} ({run.path}): no passed, measured test" for run, tests in zip(runs, measured, strict=True) if not tests]
    if not with_tests:
        return list(runs), []
    (baseline, baseline_tests), kept = with_tests[0], [with_tests[0][0]]
    for run, tests in with_tests[1:]:
        if tests & baseline_tests:
            kept.append(run)
        else:
            left_out.append(f"{run.name} ({run.path}): no passed, measured test in common with the baseline {baseline.name}")
    if len(kept) < 2:
        return list(runs), []
    return kept, left_out


def compare(
    runs: Sequence[LoadedRun], worst: int = 10, noise_threshold: float = 0.0, paired: bool = True
) -> Comparison:
    """
    Compare every run with the first; `noise_threshold` in percent (see `confidence`). Modes of
    one modes run are compared by their per-round ratios unless not `paired` (`--unpaired`).
    """
    if len(runs) < 2:
        raise BadInput("balgen report needs at least two runs to compare")
    for run in runs[1:]:
        check_same_fixtures(runs[0], run)
    figures = [run.mgas() for run in runs]
    baseline = figures[0]
    test_ids = sorted({test for figure in figures for test in figure})
    changes_by_run = [changes_against(runs[0].result, run.result, noise_threshold, paired) for run in runs[1:]]
    rows = tuple(
        ComparedTest(
            test_id=test,
            mgas=tuple(figure.get(test) for figure in figures),
            deltas=tuple(None if (c := changes.get(test)) is None else c.estimate for changes in changes_by_run),
            changes=tuple(changes.get(test) for changes in changes_by_run),
        )
        for test in test_ids
    )
    for run, changes in zip(runs[1:], changes_by_run, strict=True):
        if not changes:
            raise BadInput(
                f"{run.name} ({run.path}) and the baseline {runs[0].name} ({runs[0].path}) have no passed, "
                "measured test in common: nothing to compare"
            )
    comparability = [comparable_phases(runs[0].result, run.result) for run in runs[1:]]
    phases = [
        tuple(phase_changes(runs[0].result, run.result, noise_threshold, [p for p, c in judged.items() if c.comparable]))
        for run, judged in zip(runs[1:], comparability, strict=True)
    ]
    regressions = sorted(
        (
            Regression(test, run.name, baseline[test], figures[index + 1][test], change.estimate)
            for index, (run, changes) in enumerate(zip(runs[1:], changes_by_run, strict=True))
            for test, change in changes.items()
            if change.significant and change.estimate < 0
        ),
        key=lambda regression: regression.delta,
    )
    return Comparison(
        names=tuple(run.name for run in runs),
        rows=rows,
        summaries=tuple(
            summarize(run.name, changes, runs[0], run)
            for run, changes in zip(runs[1:], changes_by_run, strict=True)
        ),
        worst=tuple(regressions[:worst]),
        speedups=speedups_against_bounds(runs, changes_by_run),
        noise_pairs=noise_pairs(runs, noise_threshold, paired),
        phases=tuple(phases),
        phase_summaries=tuple(
            summary for run, changes in zip(runs[1:], phases, strict=True) for summary in summarize_phases(run.name, changes)
        ),
        rejections=tuple(row for run in runs for row in rejection_times(run.name, run.result.tests)),
        phase_comparability=tuple(
            (run.name, judged) for run, each in zip(runs[1:], comparability, strict=True) for judged in each.values()
        ),
        overlaps=tuple(overlap for run in runs for overlap in overlaps(run.name, run.result)),
        paired_runs=tuple(run.name for run in runs[1:] if paired and same_rounds(runs[0].result, run.result)),
        fallback=tuple(fallback_tables([(run.path, run.result) for run in runs])),
    )
