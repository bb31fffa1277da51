"""
The time a client takes to reject a block whose access list lies, beside the time it takes to execute the valid block.

A test of an `invalid_bal` fixture times both on one client: the lying twin
of the benchmark block (`time_to_reject_ns`) and then the valid block
itself (`statistics.new_payload_ns`). Their ratio says how much of a
block's execution a proposer's lie costs a validator: near 1 when the
client must execute the block to refute the list, near 0 when a check of
the list or of the header finds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .schema import FixtureResult


@dataclass(frozen=True)
class RejectionTime:
    """One test's time to reject beside its valid block's time, on one run."""

    test_id: str
    run: str
    reject_ms: float
    """Median newPayload time of the rejections."""
    rejections: int
    """How many rejections were timed (measured ones, warm-ups left out)."""
    valid_ms: float | None
    """Median newPayload time of the valid block (None if it was not measured)."""
    reason: str | None
    """The client's `validationError` of the last timed rejection."""

    @property
    def ratio(self) -> float | None:
        """Time to reject over the valid block's time."""
        return None if not self.valid_ms else self.reject_ms / self.valid_ms


def rejection_times(run: str, tests: Sequence[FixtureResult]) -> list[RejectionTime]:
    """Every test of `tests` whose rejection was timed, in order."""
    rows = []
    for test in tests:
        rejected = test.time_to_reject_ns
        if rejected is None:
            continue
        valid = None if test.statistics is None else test.statistics.new_payload_ns
        reasons = [e.validation_error for e in test.executions if e.validation_error is not None]
        rows.append(
            RejectionTime(
                test_id=test.test_id,
                run=run,
                reject_ms=rejected.median / 1e6,
                rejections=rejected.count,
                valid_ms=None if valid is None else valid.median / 1e6,
                reason=reasons[-1] if reasons else None,
            )
        )
    return rows
