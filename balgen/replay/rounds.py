"""
The benchmark payload's executions: warm-ups, then measured executions until the repeat policy
stops, on every client of a test (one per mode) in rounds whose order rotates.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ..clients.engine_client import RpcError
from ..results.measurements import Role
from ..results.repeat_policy import RepeatPolicy, RepeatStop
from .client_chain import CheckFailed
from .engine_payloads import VALID, PayloadDirective
from .options import ReplayOptions
from .payload_io import failure_reason

T = TypeVar("T")


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

    @classmethod
    def of(cls, benchmark: PayloadDirective, options: ReplayOptions) -> Repetitions:
        """The test's repetitions: the options' warm-ups and policy, or one execution of a payload expected refused."""
        _, warmups = benchmark_executions(benchmark, options)
        policy = options.policy if benchmark.expected_status == VALID else RepeatPolicy(count=1)
        return cls(warmups, policy)

    @property
    def repetition(self) -> int:
        """The next execution's number among the kept ones (warm-ups first)."""
        return self.next_variant - self.discarded

    @property
    def role(self) -> Role:
        """What the next execution is: a warm-up or a measured one."""
        return Role.WARMUP if self.repetition < self.warmups else Role.MEASURED

    def add_measured(self, new_payload_ns: float) -> bool:
        """Keep one measured time; True when the policy says the test has enough."""
        self.measured.append(new_payload_ns)
        self.stop = self.policy.stop(self.measured)
        return self.stop is not None


class RoundTaker(Protocol):
    """One test on one client, as the rounds drive it (`steps.TestReplay`)."""

    failure: str | None

    def place(self, placement: tuple[int, int] | None) -> None:
        """(round, place in the round) of its next execution; None outside a modes run."""

    def execute_once(self) -> bool:
        """One execution of the benchmark payload; True when the test has all it needs."""


def guarded(replay: RoundTaker, step: Callable[[], T]) -> T | None:
    """
    Run one step of `replay` unless it failed already, and return what the
    step returns; a failed check ends the test on that client
    (`replay.failure`) and gives None. `RpcTransportError` and `ClientLost`
    pass through.
    """
    if replay.failure is not None:
        return None
    try:
        return step()
    except (CheckFailed, RpcError) as failure:
        replay.failure = failure_reason(failure)
        return None


def rotated(items: Sequence[T], shift: int) -> list[T]:
    """`items` started at `shift` (modulo their count): the order of round `shift` of a modes run."""
    if not items:
        return []
    start = shift % len(items)
    return list(items[start:]) + list(items[:start])


def run_rounds(replays: Sequence[RoundTaker]) -> None:
    """
    The benchmark payload's executions on every client, in rounds: each
    round executes it once on each client that still needs executions, in an
    order that rotates by one each round, so no mode is always first (right
    after the idle time that follows the previous round) or always last.
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
