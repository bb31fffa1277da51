"""How a replay executes each benchmark payload (`ReplayOptions`), and who is told what happens (`ReplayObserver`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..results.measurements import Execution
from ..results.repeat_policy import DEFAULT_TARGET_WIDTH, RepeatPolicy
from ..results.schema import FixtureResult
from .agreement import AgreementPolicy
from .discovery import FixtureRef, ReplayGroup


@dataclass(frozen=True)
class ReplayOptions:
    """How many times to execute the benchmark payload, and how."""

    warmup: int = 1
    repeat: int = 5
    """Measured executions per test; with `repeat_auto` the most a test gets."""
    cold: bool = False
    fail_fast: bool = False
    repeat_auto: bool = False
    """Measure until the 95% interval of the median is `ci_width` wide (or `repeat` times)."""
    ci_width: float = DEFAULT_TARGET_WIDTH
    drop_caches: bool = False
    """Drop the OS page cache before each measured execution (the caller checked it may)."""
    agreement_check: bool = True
    """`--agreement check`: replace executions outside the agreement margin and fail a test whose
    median is outside; False for `--agreement record` (`agreement` says what is in effect)."""

    disturbance_limit: float | None = None
    """`--disturbance-limit PCT`: replace an execution during which other processes ran for more than
    PCT% of one core (`disturbance`); None records their CPU time only."""
    client_cpus: tuple[int, ...] = ()
    """`--client-cpus`: the cores the clients balgen starts run on (none given: every core)."""
    balgen_cpus: tuple[int, ...] = ()
    """`--balgen-cpus`: the cores balgen itself runs on (none given: every core)."""

    @property
    def policy(self) -> RepeatPolicy:
        """When to stop measuring a test."""
        return RepeatPolicy(count=None if self.repeat_auto else self.repeat, target_width=self.ci_width, cap=self.repeat)

    @property
    def agreement(self) -> AgreementPolicy:
        """Whether the agreement is checked, with `--cold` taken into account."""
        return AgreementPolicy(requested=self.agreement_check, cold=self.cold)


class ReplayObserver(Protocol):
    """Told what happens as it happens: the progress display and the result files."""

    def group_started(self, group: ReplayGroup, client_version: str | None) -> None:
        """A client for `group` is up."""

    def test_started(self, ref: FixtureRef, executions: int) -> None:
        """A test begins; it will send `executions` payloads if all goes well."""

    def execution_done(self, execution: Execution) -> None:
        """One payload was sent and answered."""

    def test_finished(self, result: FixtureResult) -> None:
        """A test is over, passed or not."""
