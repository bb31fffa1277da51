"""
Which phase of a block a run changed against the baseline: execution, state
read, state hash or commit, from the client's own timing of each execution.

A mode that makes a block faster does it in one phase (parallel execution
shortens execution, batch IO shortens the state read, a parallel state root
the hash); a client team acts on the phase, not on the total. Each phase's
change is judged like a test's MGas/s (`confidence.change_between`): the
ratio of the two runs' median milliseconds with its bootstrap interval, over
every measured execution that carries the client's own timing. Here a
negative change is *less* time in that phase.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy

from .confidence import Change, ChangeVerdict, change_between
from .measurements import Execution, Role
from .schema import FixtureResult, RunResult


class Phase(StrEnum):
    """The phases a client's own block timing splits a block into (geth's and reth's slow-block log)."""

    EXECUTION = "execution"
    STATE_READ = "state read"
    STATE_HASH = "state hash"
    COMMIT = "commit"


_FIELDS = {
    Phase.EXECUTION: "execution_ms",
    Phase.STATE_READ: "state_read_ms",
    Phase.STATE_HASH: "state_hash_ms",
    Phase.COMMIT: "commit_ms",
}


def phase_ms(execution: Execution, phase: Phase) -> float | None:
    """The client's own milliseconds of `phase` in one execution; None when it logged no timing."""
    timing = execution.own_timing
    return None if timing is None else float(getattr(timing, _FIELDS[phase]))


def measured_phase_ms(test: FixtureResult, phase: Phase) -> list[float]:
    """`phase`'s milliseconds over a test's measured executions that carry the client's timing."""
    return [
        value
        for execution in test.executions
        if execution.role is Role.MEASURED and (value := phase_ms(execution, phase)) is not None
    ]


class PhaseVerdict(StrEnum):
    """What a phase's change says, in the words of time."""

    LESS = "less time"
    MORE = "more time"
    NO_CHANGE = "no significant change"
    TOO_FEW = "too few executions"


def phase_verdict(change: Change) -> PhaseVerdict:
    """`change_between` on milliseconds calls more time 'faster': name it for what it is."""
    return {
        ChangeVerdict.FASTER: PhaseVerdict.MORE,
        ChangeVerdict.SLOWER: PhaseVerdict.LESS,
        ChangeVerdict.NO_CHANGE: PhaseVerdict.NO_CHANGE,
        ChangeVerdict.TOO_FEW: PhaseVerdict.TOO_FEW,
    }[change.verdict]


@dataclass(frozen=True)
class PhaseChange:
    """One test's change of one phase's time against the baseline, in percent (negative = less time)."""

    test_id: str
    phase: Phase
    baseline_ms: float
    ms: float
    change: Change

    @property
    def verdict(self) -> PhaseVerdict:
        return phase_verdict(self.change)


def phase_changes(
    baseline: RunResult, run: RunResult, noise_threshold: float = 0.0, phases: Sequence[Phase] = tuple(Phase)
) -> list[PhaseChange]:
    """Every phase of `phases` of every test both runs passed, where both carry the client's own timing."""
    before = {test.test_id: test for test in baseline.tests if test.passed}
    found = []
    for test in run.tests:
        if not test.passed or test.test_id not in before:
            continue
        for phase in phases:
            old, new = measured_phase_ms(before[test.test_id], phase), measured_phase_ms(test, phase)
            if not old or not new or float(numpy.median(old)) <= 0:
                continue
            found.append(
                PhaseChange(
                    test.test_id, phase, float(numpy.median(old)), float(numpy.median(new)),
                    change_between(old, new, noise_threshold),
                )
            )
    return found


@dataclass(frozen=True)
class PhaseSummary:
    """How one run moved one phase over the tests: how many less, how many more, and by how much."""

    name: str
    phase: Phase
    compared: int
    less: int
    more: int
    median_change: float | None
    """Median over the tests of the phase's change, in percent (negative = less time)."""
    baseline_ms: float
    """The phase's time summed over the compared tests' medians, in the baseline."""
    ms: float
    """The same sum in this run: with `baseline_ms`, the phase's share of the block and what moved."""


def summarize_phases(name: str, changes: Sequence[PhaseChange]) -> list[PhaseSummary]:
    """One summary per phase of one run's changes."""
    summaries = []
    for phase in Phase:
        mine = [change for change in changes if change.phase is phase]
        if not mine:
            continue
        summaries.append(
            PhaseSummary(
                name=name,
                phase=phase,
                compared=len(mine),
                less=sum(change.verdict is PhaseVerdict.LESS for change in mine),
                more=sum(change.verdict is PhaseVerdict.MORE for change in mine),
                median_change=float(numpy.median([change.change.estimate for change in mine])),
                baseline_ms=sum(change.baseline_ms for change in mine),
                ms=sum(change.ms for change in mine),
            )
        )
    return summaries
