"""
Confidence intervals for replay timings, and the verdict they give.

Two questions, two methods:

- *Is one test's median known well enough?* (`--repeat auto`): the
  distribution-free order-statistic interval of the median. The number of
  executions below the true median is Binomial(n, 1/2) whatever the timing
  distribution, so `[x(k), x(n-k+1)]` has an exact coverage; it needs no
  resampling, so it is recomputed after every execution for free. With fewer
  than 6 values no such 95% interval exists.
- *Did a test change between two runs?* (`balgen report`): a percentile
  bootstrap interval of the ratio of the two runs' median MGas/s. It makes no
  assumption about the shape of the timings (they are skewed, with outliers
  from other load), it is an interval of the size of the change itself, in
  percent, which is what a reader wants next to a delta; a rank test
  (Mann-Whitney) would give only a p-value for "one run tends to be higher".
  The resampling is seeded, so the same runs give a byte-identical report.

A change is significant when its whole interval lies beyond the noise
threshold: above +threshold is faster, below -threshold slower, anything
else "no significant change". Within-run repeats cannot see drift between
runs (other load on the machine, a different datadir); an A/A pair measures
that, and its noise floor is the threshold to use (see `docs/replay.md`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy

# numpy is imported by the functions that use it: `balgen replay` and `balgen verify` import this module
# for `median_interval`, which needs none, and numpy is a tenth of a CPU-second of a command's start.

CONFIDENCE = 0.95
"""Coverage of the interval of one test's median (`--repeat auto`, `median_interval_width`)."""
COMPARISON_CONFIDENCE = 0.99
"""Coverage of the interval of a change between two runs (`balgen report`).

A report judges every test of a suite at once. At 95% each, an A/A pair of a
40-test suite is expected to call about two tests faster or slower by chance
alone, so "no significant change on 95% of tests" would hold only by luck;
at 99% the expected count of false verdicts is 0.4. The price is a wider
interval: a real change must be somewhat larger to be called."""
BOOTSTRAP_RESAMPLES = 4000
"""Resamples per comparison: the interval's ends move by well under 0.1% between seeds."""
BOOTSTRAP_SEED = 7928
"""Fixed, so a report is the same every time it is made from the same runs."""
MIN_EXECUTIONS = 3
"""Fewest measured executions per run for a verdict: with one or two, a resampled
median is (nearly) the value itself and the interval says nothing about noise."""


@dataclass(frozen=True)
class Interval:
    """A confidence interval [low, high] around `center`."""

    low: float
    center: float
    high: float

    @property
    def relative_width(self) -> float:
        """(high - low) / center: 0.05 means the interval spans 5% of the estimate."""
        return (self.high - self.low) / self.center if self.center else math.inf


def _binomial_cdf_half(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2**n


def median_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval | None:
    """
    The order-statistic confidence interval of the median of `values`
    (see the module docstring); None when `values` are too few for the
    coverage (fewer than 6 for 95%).
    """
    data = sorted(float(value) for value in values)
    n = len(data)
    best = None
    for k in range(1, n // 2 + 1):  # [x(k), x(n-k+1)], 1-based: narrower as k grows
        if 1 - 2 * _binomial_cdf_half(k - 1, n) >= confidence:
            best = k
        else:
            break
    if best is None:
        return None
    return Interval(low=data[best - 1], center=statistics.median(data), high=data[n - best])


class ChangeVerdict(StrEnum):
    """What a comparison of one test between two runs concludes."""

    FASTER = "faster"
    SLOWER = "slower"
    NO_CHANGE = "no significant change"
    TOO_FEW = "too few executions"


@dataclass(frozen=True)
class Change:
    """One test's change in MGas/s against the baseline, in percent, with its interval."""

    estimate: float
    """median(run) / median(baseline) - 1, in percent (positive = faster)."""
    low: float
    high: float
    verdict: ChangeVerdict
    had: str = ""
    """With too few for a verdict, what there was (`2 executions`, `1 paired round`); else empty."""

    @property
    def not_judged(self) -> str:
        """What a table shows where this change has no interval (or no estimate): that, and what is missing."""
        return f"n/a: {self.had}, {MIN_EXECUTIONS} needed"

    @property
    def significant(self) -> bool:
        """Faster or slower beyond the noise threshold."""
        return self.verdict in (ChangeVerdict.FASTER, ChangeVerdict.SLOWER)


def delta_text(change: Change | None) -> str:
    """A change's Δ as the reports show it: a signed percent, `-` without a change, what is missing without an estimate."""
    if change is None:
        return "-"
    return change.not_judged if math.isnan(change.estimate) else f"{change.estimate:+.1f}%"


def interval_text(change: Change | None, between: str = "% to ") -> str:
    """A change's interval as the reports show it; with too few for one, what is missing."""
    if change is None:
        return "-"
    if math.isnan(change.low) or math.isnan(change.high):
        return change.not_judged
    return f"{change.low:+.1f}{between}{change.high:+.1f}%"


def median_ratio_interval(
    baseline: Sequence[float],
    values: Sequence[float],
    confidence: float = COMPARISON_CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap interval of median(values) / median(baseline)."""
    import numpy
    rng = numpy.random.default_rng(seed)
    base_medians = _resampled_medians(rng, baseline, resamples)  # drawn first: the seeded intervals stay as they were
    other_medians = _resampled_medians(rng, values, resamples)
    if (base_medians > 0).all():
        return _percentile_interval(other_medians / base_medians, confidence)
    return _percentile_interval(_ratios_over_zero(other_medians, base_medians), confidence, bounded=False)


def _ratios_over_zero(numerators: numpy.ndarray, denominators: numpy.ndarray) -> numpy.ndarray:
    """Ratios where some denominators are zero (a phase timed at 0 ms in most of a resample: the client's
    clock is coarser than the phase): 0/0 is no change (1), more than nothing is unbounded (inf)."""
    import numpy
    ratios = numpy.full(numerators.shape, numpy.inf)
    numpy.divide(numerators, denominators, out=ratios, where=denominators > 0)
    ratios[(denominators <= 0) & (numerators <= 0)] = 1.0
    return ratios


def _resampled_medians(rng: numpy.random.Generator, values: Sequence[float], resamples: int) -> numpy.ndarray:
    """The medians of `resamples` bootstrap resamples of `values`, drawn from `rng`."""
    import numpy
    data = numpy.asarray(values, dtype=float)
    return numpy.median(data[rng.integers(0, data.size, (resamples, data.size))], axis=1)


def _percentile_interval(samples: numpy.ndarray, confidence: float, bounded: bool = True) -> tuple[float, float]:
    """The central `confidence` interval of bootstrap `samples` (percentile method); with unbounded samples
    (infinities) each bound is a sample itself, as interpolating between two infinities has no value."""
    import numpy
    tail = (1 - confidence) / 2 * 100
    if bounded:
        low, high = numpy.percentile(samples, [tail, 100 - tail])
    else:
        low, high = numpy.percentile(samples, tail, method="lower"), numpy.percentile(samples, 100 - tail, method="higher")
    return float(low), float(high)


def change_between(
    baseline: Sequence[float], values: Sequence[float], noise_threshold: float = 0.0
) -> Change:
    """
    The change from `baseline` to `values` (per-execution MGas/s of one
    test in two runs) and its verdict; `noise_threshold` in percent.
    """
    import numpy
    estimate = (float(numpy.median(values)) / float(numpy.median(baseline)) - 1) * 100
    if min(len(baseline), len(values)) < MIN_EXECUTIONS:
        return Change(estimate, math.nan, math.nan, ChangeVerdict.TOO_FEW, _counted(min(len(baseline), len(values)), "execution"))
    low_ratio, high_ratio = median_ratio_interval(baseline, values)
    return _judged(estimate, (low_ratio - 1) * 100, (high_ratio - 1) * 100, noise_threshold)


def median_interval_bootstrap(
    values: Sequence[float],
    confidence: float = COMPARISON_CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap interval of median(values), seeded like `median_ratio_interval`."""
    import numpy
    return _percentile_interval(_resampled_medians(numpy.random.default_rng(seed), values, resamples), confidence)


def paired_change(ratios: Sequence[float], noise_threshold: float = 0.0) -> Change:
    """
    The change given by per-round ratios (a mode's MGas/s over the baseline mode's in the same
    round of a modes run) and its verdict: the median ratio with a bootstrap interval of it. Two
    executions of one round ran seconds apart, so load that drifts over a run (other processes,
    the machine's clock speed) moves both and cancels in their ratio, where an unpaired comparison
    of the two runs' medians counts it as noise.
    """
    import numpy
    had = _counted(len(ratios), "paired round")
    if not ratios:
        return Change(math.nan, math.nan, math.nan, ChangeVerdict.TOO_FEW, had)
    estimate = (float(numpy.median(ratios)) - 1) * 100
    if len(ratios) < MIN_EXECUTIONS:
        return Change(estimate, math.nan, math.nan, ChangeVerdict.TOO_FEW, had)
    low_ratio, high_ratio = median_interval_bootstrap(ratios)
    return _judged(estimate, (low_ratio - 1) * 100, (high_ratio - 1) * 100, noise_threshold)


def _counted(count: int, thing: str) -> str:
    return f"{count} {thing}" + ("" if count == 1 else "s")


def _judged(estimate: float, low: float, high: float, noise_threshold: float) -> Change:
    """A change with its interval, called faster or slower only beyond ±`noise_threshold` percent."""
    if low > noise_threshold:
        verdict = ChangeVerdict.FASTER
    elif high < -noise_threshold:
        verdict = ChangeVerdict.SLOWER
    else:
        verdict = ChangeVerdict.NO_CHANGE
    return Change(estimate, low, high, verdict)


def noise_floor(changes: Sequence[Change]) -> float | None:
    """
    The A/A noise floor: the 95th percentile of |change| over the tests of
    a pair of runs of the same build, in percent; None without changes.
    """
    import numpy
    sizes = [abs(change.estimate) for change in changes if math.isfinite(change.estimate)]
    return float(numpy.percentile(sizes, 95)) if sizes else None
