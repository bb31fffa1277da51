"""
How many measured executions a test gets: a fixed count (`--repeat N`), or
as many as it takes (`--repeat auto`) for the confidence interval of the
median newPayload time to be narrow enough, up to a cap.

`auto` stops at the first execution after which the 95% order-statistic
interval of the median (`confidence.median_interval`) spans at most the
target width, relative to the median; a test whose timings stay too noisy
stops at the cap. Which of the two ended it is recorded with the test, so
a reader knows whether its median met the target.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from .confidence import median_interval

DEFAULT_TARGET_WIDTH = 0.05
"""`--ci-width` default: the interval of the median spans at most 5% of it."""
DEFAULT_CAP = 30
"""`--repeat-cap` default: bounds a test that never settles (about 30 s of a 1 s block)."""
FIRST_DECIDABLE = 6
"""The smallest count with a 95% order-statistic interval of the median."""


class RepeatStop(StrEnum):
    """Why a test's measured executions ended."""

    COUNT = "count"
    """`--repeat N`: N measured executions."""
    CI_WIDTH = "ci_width"
    """`--repeat auto`: the interval of the median reached the target width."""
    CAP = "cap"
    """`--repeat auto`: the cap was reached first."""


@dataclass(frozen=True)
class RepeatPolicy:
    """`--repeat N`, or `--repeat auto` with its target width and cap."""

    count: int | None = 5
    """Fixed count; None for auto."""
    target_width: float = DEFAULT_TARGET_WIDTH
    cap: int = DEFAULT_CAP

    @property
    def auto(self) -> bool:
        """Whether the count is decided by the measurements."""
        return self.count is None

    @property
    def most(self) -> int:
        """The most measured executions a test can get."""
        return self.cap if self.count is None else self.count

    def stop(self, measured_ns: Sequence[float]) -> RepeatStop | None:
        """Why to stop after these measured executions; None to measure again."""
        if self.count is not None:
            return RepeatStop.COUNT if len(measured_ns) >= self.count else None
        interval = median_interval(measured_ns)
        if interval is not None and interval.relative_width <= self.target_width:
            return RepeatStop.CI_WIDTH
        return RepeatStop.CAP if len(measured_ns) >= self.cap else None
