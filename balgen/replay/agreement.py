"""
The agreement check as one policy: whether a benchmark execution's client-side time must be the
client's own time for the block, and what follows from it (intake probes, replaced executions, a
failed test).

The rule is written here once: agreement is checked unless `--agreement record` or `--cold` (whose
restarts put the freshly started node's first-call costs into the time on purpose). An execution
outside the margin (`results.measurements.allowed_overhead_ms`) is replaced by another sibling while
replacements last; a test whose measured median is outside fails.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from ..results.measurements import AGREEMENT_MARGIN_FRACTION, AGREEMENT_MARGIN_MS, Execution, Role, allowed_overhead_ms

INTAKE_PROBES = 3
"""Intake probes (`Role.INTAKE`) per test and client; their median is the client's intake of the payload."""


@dataclass(frozen=True)
class AgreementPolicy:
    """`--agreement check|record` and `--cold`: whether the agreement is checked or only recorded."""

    requested: bool = True
    """`--agreement check` (the default); False for `--agreement record`."""
    cold: bool = False
    """`--cold`: the client is restarted before each measured execution."""

    @property
    def checked(self) -> bool:
        """Checked unless `--agreement record` or `--cold`: a restarted node's first-call costs are the point of `--cold`."""
        return self.requested and not self.cold

    @property
    def name(self) -> str:
        """What results.json calls it: `check` or `record`."""
        return "check" if self.checked else "record"

    @property
    def intake_probes(self) -> int:
        """Intake probes per test on a client whose own time starts after the intake: none when nothing is checked."""
        return INTAKE_PROBES if self.checked else 0

    def refuses(self, execution: Execution) -> bool:
        """Whether `execution` timed something else than the block: checked, and outside the margin."""
        return self.checked and execution.within_margin is False


def disagreement(executions: Sequence[Execution], intake_ms: float | None) -> str | None:
    """
    Why the measured executions' median overhead is outside the margin of
    their median own time, or None: one outlier is noise (and was replaced
    while replacements lasted), a median outside the margin means balgen
    timed something else than the block (reth's 1-5 s after a restart, an
    unoptimised build's Engine API decoding).
    """
    measured = [e for e in executions if e.role is Role.MEASURED and e.overhead_ms is not None]
    if not measured:
        return None
    own = statistics.median(e.own_ms for e in measured if e.own_ms is not None)
    overhead = statistics.median(e.overhead_ms for e in measured if e.overhead_ms is not None)
    allowed = allowed_overhead_ms(own, intake_ms or 0.0)
    if overhead <= allowed:
        return None
    intake = "" if intake_ms is None else f", the client's intake of the payload {intake_ms:.2f} ms"
    return (
        f"the measured executions took a median {overhead:.2f} ms longer client-side than the client's own "
        f"time for the block (median {own:.2f} ms{intake}; {allowed:.2f} ms allowed): the time "
        f"measured is not the block's execution ({agreement_summary(executions)}; `--agreement record` keeps such a run)"
    )


def agreement_summary(executions: Sequence[Execution]) -> str | None:
    """`N of M benchmark executions within the margin (K discarded)`; None without the client's own times."""
    judged = [e for e in executions if e.role is not Role.SETUP and e.within_margin is not None]
    if not judged:
        return None
    inside = sum(bool(e.within_margin) for e in judged)
    discarded = sum(e.role is Role.DISCARDED for e in judged)
    return (
        f"{inside} of {len(judged)} benchmark executions within {AGREEMENT_MARGIN_MS:g} ms + "
        f"{AGREEMENT_MARGIN_FRACTION:.0%} of the client's own time ({discarded} discarded)"
    )
