"""
The benchmark payload's executions: warm-ups, then measured executions until the repeat policy
stops, on every client of a test (one per mode) in rounds whose order rotates.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ..clients.engine_client import RpcError, RpcTransportError
from ..results.confidence import median_interval
from ..results.measurements import Execution, Role
from ..results.repeat_policy import RepeatPolicy, RepeatStop
from .client_chain import CheckFailed
from .engine_payloads import VALID, PayloadDirective
from .options import ReplayOptions
from .payload_io import failure_reason
from .positioning import ClientLost

T = TypeVar("T")

DISCARD_FACTOR = 3
"""Executions replaced (outside the agreement margin, or disturbed by other load) per measured one a
test may have; after that they are kept as they come: on a loaded 2-core machine with four nodes up,
half were seen outside the margin."""


def benchmark_executions(benchmark: PayloadDirective, options: ReplayOptions) -> tuple[int, int]:
    """(executions, of which warmups) of the benchmark payload: one for a payload the fixture expects refused."""
    if benchmark.expected_status != VALID:
        return 1, 0
    return options.warmup + options.repeat, options.warmup


@dataclass
class Repetitions:
    """Where a test's benchmark executions stand: which sibling is next, what was measured, why it stopped."""

    warmups: int
    policy: RepeatPolicy
    next_variant: int = 0
    """The sibling the next execution sends (0: the fixture's own block)."""
    discarded: int = 0
    """Executions replaced by another sibling (outside the agreement margin)."""
    measured: list[float] = field(default_factory=list)
    """The measured executions' newPayload times (ns)."""
    stop: RepeatStop | None = None
    paired: bool = False
    """`--repeat auto` in a modes run: the rounds stop together (`run_rounds`); alone, only at the cap."""

    @classmethod
    def of(cls, benchmark: PayloadDirective, options: ReplayOptions, paired: bool = False) -> Repetitions:
        """The test's repetitions: the options' warm-ups and policy, or one execution of a payload expected refused."""
        _, warmups = benchmark_executions(benchmark, options)
        if benchmark.expected_status != VALID:
            return cls(warmups, RepeatPolicy(count=1))
        if paired and options.repeat_auto:
            return cls(warmups, RepeatPolicy(count=options.repeat), paired=True)
        return cls(warmups, options.policy)

    @property
    def repetition(self) -> int:
        """The next execution's number among the kept ones (warm-ups first)."""
        return self.next_variant - self.discarded

    @property
    def role(self) -> Role:
        """What the next execution is: a warm-up or a measured one."""
        return Role.WARMUP if self.repetition < self.warmups else Role.MEASURED

    def may_replace(self, repeat: int) -> bool:
        """Replacements left: at most `DISCARD_FACTOR` times `repeat` per test, then executions are kept as they are."""
        return self.discarded < DISCARD_FACTOR * repeat

    def add_measured(self, new_payload_ns: float) -> bool:
        """Keep one measured time; True when the policy says the test has enough."""
        self.measured.append(new_payload_ns)
        self.stop = self.policy.stop(self.measured)
        if self.paired and self.stop is not None:
            self.stop = RepeatStop.CAP
        return self.stop is not None


class RoundTaker(Protocol):
    """One test on one client, as the rounds drive it (`steps.TestReplay`)."""

    failure: str | None
    lost: bool
    repetitions: Repetitions

    def lose(self, error: RpcTransportError | ClientLost) -> None:
        """Its client is lost: the test fails on it, the other clients go on."""

    @property
    def executions(self) -> list[Execution]:
        """Every payload sent for the test on this client."""

    def place(self, placement: tuple[int, int] | None) -> None:
        """(round, place in the round) of its next execution; None outside a modes run."""

    def execute_once(self) -> bool:
        """One execution of the benchmark payload; True when the test has all it needs."""


def guarded(replay: RoundTaker, step: Callable[[], T]) -> T | None:
    """
    Run one step of `replay` unless it failed already, and return what the
    step returns; a failed check ends the test on that client
    (`replay.failure`) and gives None, and so does a client lost
    (`replay.lost`): in a modes run one mode's node dying ends the test in
    that mode only.
    """
    if replay.failure is not None:
        return None
    try:
        return step()
    except (CheckFailed, RpcError) as failure:
        replay.failure = failure_reason(failure)
        return None
    except (RpcTransportError, ClientLost) as error:
        replay.lose(error)
        return None


def rotated(items: Sequence[T], shift: int) -> list[T]:
    """`items` started at `shift` (modulo their count): the order of round `shift` of a modes run."""
    if not items:
        return []
    start = shift % len(items)
    return list(items[start:]) + list(items[:start])


def paired_ratios(first: Sequence[Execution], other: Sequence[Execution]) -> list[float]:
    """`other`'s measured newPayload time over `first`'s in the same round, for each round both measured."""
    firsts = {e.round: e.new_payload_ns for e in first if e.role is Role.MEASURED and e.round is not None}
    return [
        e.new_payload_ns / firsts[e.round]
        for e in other
        if e.role is Role.MEASURED and e.round in firsts and firsts[e.round] > 0
    ]


def ratio_interval_width(first: Sequence[Execution], other: Sequence[Execution]) -> float | None:
    """Relative width of the 95% interval of the median paired ratio (`paired_ratios`); None below 6 rounds."""
    interval = median_interval(paired_ratios(first, other))
    return None if interval is None else interval.relative_width


def ratios_known(replays: Sequence[RoundTaker], target_width: float) -> bool:
    """Whether every mode's median ratio to the first mode's is known to `target_width` (the paired stopping rule)."""
    if len(replays) < 2 or any(replay.failure is not None for replay in replays):
        return False
    widths = [ratio_interval_width(replays[0].executions, replay.executions) for replay in replays[1:]]
    return all(width is not None and width <= target_width for width in widths)


def run_rounds(replays: Sequence[RoundTaker], paired_width: float | None = None) -> None:
    """
    The benchmark payload's executions on every client, in rounds: each
    round executes it once on each client that still needs executions, in an
    order that rotates by one each round, so no mode is always first (right
    after the idle time that follows the previous round) or always last.
    With `paired_width` (`--repeat auto` in a modes run) the rounds go on
    until the interval of every mode's median per-round ratio to the first
    mode is that narrow (`ratios_known`), or the cap.
    """
    done: set[int] = set()
    for round_number in itertools.count():
        pending = [index for index, replay in enumerate(replays) if index not in done and replay.failure is None]
        if not pending:
            return
        for place, index in enumerate(rotated(pending, round_number)):
            replay = replays[index]
            replay.place((round_number, place) if len(replays) > 1 else None)
            if guarded(replay, replay.execute_once) is not False:  # True: enough executions; None: failed
                done.add(index)
        if paired_width is not None and ratios_known(replays, paired_width):
            for replay in replays:
                replay.repetitions.stop = RepeatStop.CI_WIDTH
            return
