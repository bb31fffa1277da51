"""
How balgen decides what a measurement means, without a client: the
order-statistic interval of a median has its exact coverage, the bootstrap
interval of a median ratio covers the true ratio and decides faster / slower
/ no change against the noise threshold, the repeat policy stops for the
reason it records, geth's slow-block counters are read, and the page cache
is dropped through its control file.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from balgen.clients.block_counts import BlockCounts, block_counts, counter
from balgen.clients.process_io import process_reads
from balgen.replay.expected_counts import OVERHEAD, count_mismatches, expected_counts
from balgen.replay.page_cache import drop_caches_problem, drop_page_cache
from balgen.results.confidence import (
    ChangeVerdict,
    change_between,
    median_interval,
    noise_floor,
)
from balgen.results.repeat_policy import RepeatPolicy, RepeatStop


# -- the interval of one median ----------------------------------------------


def test_median_interval_needs_six_values_for_95_percent() -> None:
    assert median_interval([1.0, 2.0, 3.0, 4.0, 5.0]) is None
    interval = median_interval([6.0, 1.0, 5.0, 2.0, 4.0, 3.0])
    assert interval is not None
    # n = 6: only [x(1), x(6)] reaches 95% (coverage 1 - 2/64 = 96.9%).
    assert (interval.low, interval.center, interval.high) == (1.0, 3.5, 6.0)


def test_median_interval_narrows_to_the_exact_order_statistics() -> None:
    # n = 20: [x(6), x(15)] covers 95.9%; [x(7), x(14)] only 88.5%.
    interval = median_interval([float(v) for v in range(1, 21)])
    assert interval is not None and (interval.low, interval.high) == (6.0, 15.0)
    assert interval.relative_width == pytest.approx(9.0 / 10.5)


def test_median_interval_covers_the_true_median_at_least_95_percent_of_the_time() -> None:
    rng = numpy.random.default_rng(1)
    true_median = math.exp(0.0)  # lognormal(0, 0.5): skewed like timings under load
    hits = 0
    trials = 2000
    for _ in range(trials):
        interval = median_interval(rng.lognormal(0.0, 0.5, 12).tolist())
        assert interval is not None
        hits += interval.low <= true_median <= interval.high
    assert hits / trials >= 0.95 - 0.015  # 0.015: three standard errors of the estimate


# -- the change between two runs ---------------------------------------------


def test_a_clear_slowdown_is_slower_and_its_interval_holds_the_change() -> None:
    rng = numpy.random.default_rng(2)
    baseline = (100 * (1 + 0.02 * rng.standard_normal(10))).tolist()
    slowed = (70 * (1 + 0.02 * rng.standard_normal(10))).tolist()
    change = change_between(baseline, slowed)
    assert change.verdict is ChangeVerdict.SLOWER and change.significant
    assert change.low <= change.estimate <= change.high < 0
    assert change.low <= -30 <= change.high  # the true change, 70 against 100


def test_overlapping_noise_is_no_significant_change() -> None:
    baseline = [100.0, 80.0, 120.0, 95.0, 105.0]
    same = [102.0, 78.0, 118.0, 99.0, 110.0]
    change = change_between(baseline, same)
    assert change.verdict is ChangeVerdict.NO_CHANGE and not change.significant
    assert change.low < 0 < change.high


def test_the_noise_threshold_turns_a_small_real_change_into_no_change() -> None:
    baseline = [100.0, 100.5, 99.5, 100.2, 99.8, 100.1]
    faster = [103.0, 103.4, 102.6, 103.1, 102.9, 103.2]
    assert change_between(baseline, faster).verdict is ChangeVerdict.FASTER
    assert change_between(baseline, faster, noise_threshold=5.0).verdict is ChangeVerdict.NO_CHANGE


def test_too_few_executions_give_no_verdict() -> None:
    change = change_between([100.0, 101.0], [50.0, 51.0, 52.0])
    assert change.verdict is ChangeVerdict.TOO_FEW and math.isnan(change.low)
    assert change.estimate == pytest.approx((51 / 100.5 - 1) * 100)


def test_a_phase_timed_at_zero_milliseconds_gives_a_bounded_verdict_without_warnings() -> None:
    """reth reports some phases in whole milliseconds: a phase of 0 ms in most executions must not turn
    the bootstrap into 0/0 (NaN, numpy's RuntimeWarning) but into an interval that says 'no change'."""
    baseline, same = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    with numpy.errstate(all="raise"):
        change = change_between(baseline, same)
    assert change.verdict is ChangeVerdict.NO_CHANGE
    assert change.low <= 0 <= change.high and not math.isnan(change.low)


def test_the_bootstrap_is_seeded_so_reports_repeat_exactly() -> None:
    baseline, values = [10.0, 12.0, 11.0, 13.0, 9.0], [11.0, 14.0, 12.0, 10.0, 13.0]
    assert change_between(baseline, values) == change_between(baseline, values)


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_same_distribution_is_rarely_called_a_change(seed: int) -> None:
    """Over many A/A tests of 8 executions each, at most a few percent are 'significant'."""
    rng = numpy.random.default_rng(seed)
    verdicts = [
        change_between(rng.lognormal(0, 0.2, 8).tolist(), rng.lognormal(0, 0.2, 8).tolist()).significant
        for _ in range(40)
    ]
    assert sum(verdicts) <= 6  # 15%: far above what a 95% interval gives, far below a coin


def test_noise_floor_is_the_95th_percentile_of_absolute_changes() -> None:
    changes = [change_between([100.0] * 3, [100.0 + d] * 3) for d in range(-10, 11)]
    assert noise_floor(changes) == pytest.approx(numpy.percentile([abs(d) for d in range(-10, 11)], 95))
    assert noise_floor([]) is None


# -- the repeat policy -------------------------------------------------------


def test_fixed_count_stops_at_the_count() -> None:
    policy = RepeatPolicy(count=3)
    assert policy.stop([1.0, 2.0]) is None and policy.stop([1.0, 2.0, 3.0]) is RepeatStop.COUNT


def test_auto_stops_when_the_median_interval_is_narrow_enough() -> None:
    policy = RepeatPolicy(count=None, target_width=0.05, cap=30)
    steady = [1000.0, 1010.0, 990.0, 1005.0, 995.0]
    assert policy.stop(steady) is None  # five values: no 95% interval yet
    assert policy.stop([*steady, 1002.0]) is RepeatStop.CI_WIDTH  # (1010 - 990) / 1002.5 = 2%


def test_auto_stops_at_the_cap_when_the_timings_stay_noisy() -> None:
    policy = RepeatPolicy(count=None, target_width=0.05, cap=8)
    noisy = [1000.0, 2000.0, 500.0, 1500.0, 700.0, 1800.0, 900.0]
    assert policy.stop(noisy) is None
    assert policy.stop([*noisy, 1200.0]) is RepeatStop.CAP
    assert policy.most == 8 and RepeatPolicy(count=4).most == 4


# -- geth's counters ---------------------------------------------------------


SLOW_BLOCK_ENTRY = {
    "state_reads": {"accounts": 9300, "storage_slots": 2, "code": 9298, "code_bytes": 1200},
    "state_writes": {
        "accounts": 4, "accounts_deleted": 0, "storage_slots": 2, "storage_slots_deleted": 0, "code": 0, "code_bytes": 0,
    },
    "cache": {
        "account": {"hits": 1, "misses": 9299, "hit_rate": 0.01},
        "storage": {"hits": 0, "misses": 2, "hit_rate": 0},
        "code": {"hits": 3, "misses": 9297, "hit_rate": 0.03, "hit_bytes": 3600, "miss_bytes": 4760064},
    },
}


def test_block_counts_from_a_slow_block_entry() -> None:
    counts = block_counts(SLOW_BLOCK_ENTRY)
    assert counts is not None
    assert counter(counts, "reads.code") == 9298 and counter(counts, "code_cache.miss_bytes") == 4760064
    assert counter(counts, "storage_cache.miss_bytes") is None
    assert counter(counts, "writes.storage_slots") == 2


@pytest.mark.parametrize("drop", ["state_reads", "cache"])
def test_an_entry_without_counters_has_none(drop: str) -> None:
    entry = {key: value for key, value in SLOW_BLOCK_ENTRY.items() if key != drop}
    assert block_counts(entry) is None
    assert block_counts({**SLOW_BLOCK_ENTRY, "state_reads": {"accounts": "many"}}) is None


# -- dropping the page cache -------------------------------------------------


def test_drop_caches_problem_names_what_is_missing(tmp_path: Path) -> None:
    problem = drop_caches_problem(tmp_path / "no-such-control")
    assert problem is not None and "no-such-control does not exist" in problem


def test_drop_page_cache_writes_3_to_the_control_file(tmp_path: Path) -> None:
    control = tmp_path / "drop_caches"
    control.write_text("")
    drop_page_cache(control)
    assert control.read_text() == "3\n"


# -- geth's counters against the workload model -------------------------------


def _counts(reads: dict[str, int], writes_slots: int = 4) -> BlockCounts:
    entry = {**SLOW_BLOCK_ENTRY, "state_reads": reads,
             "state_writes": {**SLOW_BLOCK_ENTRY["state_writes"], "storage_slots": writes_slots}}  # type: ignore[dict-item]
    counts = block_counts(entry)
    assert counts is not None
    return counts


# Measured with geth v1.17.8 on `extcodesize-max-0.5KB-1M` filled for Osaka (sequential execution).
OSAKA_EXTCODESIZE = {"accounts": 69, "storage_slots": 13, "code": 41, "code_bytes": 1218}


def test_counts_within_the_models_range_pass() -> None:
    workload = {"family": "extcodesize", "tx_count": 29, "contracts_read": 34}
    (expectation,) = expected_counts(workload, parallel_execution=False)
    assert (expectation.counter, expectation.least, expectation.most) == ("reads.code", 34, 34 + OVERHEAD)
    assert count_mismatches([expectation], _counts(OSAKA_EXTCODESIZE)) == []


def test_a_wrong_expectation_fails_with_both_numbers() -> None:
    workload = {"family": "extcodesize", "tx_count": 29, "contracts_read": 340}
    (problem,) = count_mismatches(expected_counts(workload, False), _counts(OSAKA_EXTCODESIZE))
    assert problem == "geth counted reads.code = 41, the workload predicts 340 to 372 (contracts_read = 340)"


def test_parallel_execution_checks_writes_only() -> None:
    assert expected_counts({"family": "prefetch", "cold_reads": 44}, parallel_execution=True) == ()
    (write,) = expected_counts({"family": "state_root", "slots_written": 35}, parallel_execution=True)
    assert write.counter == "writes.storage_slots"
    assert count_mismatches([write], _counts(OSAKA_EXTCODESIZE, writes_slots=37)) == []
    assert count_mismatches([write], _counts(OSAKA_EXTCODESIZE, writes_slots=20)) != []


def test_families_without_predictions_expect_nothing() -> None:
    assert expected_counts({"family": "keccak_chain", "tx_count": 3}, False) == ()
    assert expected_counts(None, False) == ()


# -- the client's reads from the kernel ---------------------------------------


def test_process_reads_count_what_this_process_reads(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_bytes(b"x" * 100_000)
    before = process_reads(os.getpid())
    if before is None:
        pytest.skip("no /proc/<pid>/io here")
    data.read_bytes()
    delta = process_reads(os.getpid()) - before  # type: ignore[operator]
    assert delta.read_bytes_total >= 100_000 and delta.storage_bytes >= 0


def test_process_reads_of_a_missing_process_are_none(tmp_path: Path) -> None:
    assert process_reads(1, proc=tmp_path) is None
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "io").write_text("rchar: 10\nwchar: 0\n")  # no read_bytes: kernel without task I/O accounting
    assert process_reads(1, proc=tmp_path) is None
