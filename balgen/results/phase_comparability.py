"""
Whether a phase of the client's own timing may be compared between two runs: only where it times
the same work in both, by the client's own code (`clients.phase_coverage`, each client's table).

go-ethereum v1.17.10's "state hash" is the root of execution's writes after execution in
`sequential`, and the root of the BAL's post-state hashed beside execution in `full`; its "state
read" is every read of execution in one and only the reads of applying the BAL in the other. A
change between them is no change of one phase. `comparable_phases` says, per phase, whether it is
comparable and why not, and which phase it runs beside (its time overlaps that one's), so the report
shows the root's time beside execution's rather than after it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy

from ..clients.kinds import KINDS
from ..clients.phase_coverage import PhaseCoverage
from .measurements import Role
from .phases import Phase, measured_phase_ms
from .schema import RunResult


@dataclass(frozen=True)
class PhaseComparability:
    """One phase between a baseline and a run: compared or not, why not, and what it overlaps."""

    phase: Phase
    comparable: bool
    reason: str | None
    """Why it is not compared (None where it is)."""
    beside: str | None = None
    """In the run (else the baseline), the phase this one runs at the same time as, e.g. `execution`."""
    baseline_covers: str | None = None
    """What the phase covers in the baseline, from the client's code; None where unknown."""
    covers: str | None = None
    """What it covers in the run."""


def run_mode(result: RunResult) -> str | None:
    """The mode a run (one mode of a modes run, as `comparison.mode_runs` splits it) ran in; None without modes."""
    return next((test.mode for test in result.tests if test.mode), None)


def run_client(result: RunResult) -> str | None:
    """The client a run replayed against, by its preset name; None for one the user ran."""
    client = result.target.get("client")
    return client if isinstance(client, str) else None


def _coverage(client: str | None, mode: str | None, phase: Phase) -> PhaseCoverage | None:
    """What `phase` covers for `client` in `mode`, from the client's table; None where no table says."""
    kind = KINDS.get(client or "")
    return None if kind is None or kind.phases is None else kind.phases.coverage(mode, phase.value)


def phase_comparability(baseline: RunResult, run: RunResult, phase: Phase) -> PhaseComparability:
    """Whether `phase` times the same work in `baseline` and in `run` (see the module docstring)."""
    clients = run_client(baseline), run_client(run)
    modes = run_mode(baseline), run_mode(run)
    before, after = (_coverage(client, mode, phase) for client, mode in zip(clients, modes, strict=True))
    beside = (after or before).beside if (after or before) is not None else None
    covers = {"beside": beside, "baseline_covers": None if before is None else before.covers, "covers": None if after is None else after.covers}
    if clients[0] != clients[1]:
        reason = f"different clients ({clients[0] or 'external'}, {clients[1] or 'external'}): their phases are timed by different code"
        return PhaseComparability(phase, False, reason, **covers)
    if modes[0] == modes[1] or (before is not None and after is not None and before.work == after.work):
        return PhaseComparability(phase, True, None, **covers)
    if before is None or after is None:
        unknown = modes[0] if before is None else modes[1]
        reason = f"what {phase.value} covers in mode {unknown or '(none)'} of {clients[0] or 'this client'} is not known"
        return PhaseComparability(phase, False, reason, **covers)
    reason = f"not the same work: {modes[0] or 'default'} times {before.work}, {modes[1] or 'default'} times {after.work}"
    return PhaseComparability(phase, False, reason, **covers)


def comparable_phases(baseline: RunResult, run: RunResult) -> dict[Phase, PhaseComparability]:
    """Every phase's comparability between `baseline` and `run`."""
    return {phase: phase_comparability(baseline, run, phase) for phase in Phase}


@dataclass(frozen=True)
class Overlap:
    """A phase that runs beside another in one run, with both times: shown side by side, not added."""

    name: str
    phase: Phase
    beside: Phase
    tests: int
    phase_ms: float
    """The phase's time, summed over the tests' medians."""
    beside_ms: float
    """The time of the phase it runs beside, summed the same way."""
    txexec_ms: float | None = None
    """From geth's `Parallel block execution` line where logged: the transactions' own time (summed medians)."""
    root_ms: float | None = None
    """From the same line: the root goroutine's time, applying the BAL and hashing (summed medians)."""


def _median(values: list[float]) -> float | None:
    return float(numpy.median(values)) if values else None


def overlaps(name: str, run: RunResult) -> list[Overlap]:
    """Each phase of `run` that its client's table says runs beside another, with both times."""
    found = []
    for phase in Phase:
        coverage = _coverage(run_client(run), run_mode(run), phase)
        if coverage is None or coverage.beside is None:
            continue
        beside = Phase(coverage.beside)
        tests = [test for test in run.tests if test.passed]
        own = [_median(measured_phase_ms(test, phase)) for test in tests]
        other = [_median(measured_phase_ms(test, beside)) for test in tests]
        pairs = [(a, b) for a, b in zip(own, other, strict=True) if a is not None and b is not None]
        if not pairs:
            continue
        parallel = [
            [e.own_timing.parallel for e in test.executions if e.role is Role.MEASURED and e.own_timing and e.own_timing.parallel]
            for test in tests
        ]  # fmt: skip
        logged = [lines for lines in parallel if lines]
        found.append(
            Overlap(
                name, phase, beside, len(pairs), sum(a for a, _ in pairs), sum(b for _, b in pairs),
                txexec_ms=sum(float(numpy.median([p.txexec_ms for p in lines])) for lines in logged) if logged else None,
                root_ms=sum(float(numpy.median([p.stateapply_ms + p.statehash_ms for p in lines])) for lines in logged) if logged else None,
            )
        )  # fmt: skip
    return found
