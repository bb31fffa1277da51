"""
Engine fixtures imported into the pinned geth, by the replay's own machinery.

Each genesis group gets a fresh geth (the replay's `ManagedClient` with the geth preset); each test's
payloads are sent once, in order, and must all be answered as the fixture
expects (VALID, unless it says otherwise), with the head ending at
`lastblockhash`. It is a replay with no warm-up and one execution, so every
check the replay makes applies, and nothing is measured or written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..replay.discovery import FixtureRef, ReplayGroup, Suite, discover
from ..replay.options import ReplayOptions
from ..replay.runner import replay_suite, without_modes
from ..results.measurements import Execution
from ..results.schema import FixtureResult
from ..clients.kinds.geth import PRESET as GETH
from ..replay.targets import ManagedClient
from .outcomes import Outcome, Verifier

IMPORT_ONCE = ReplayOptions(warmup=0, repeat=1, agreement_check=False)
"""Every payload sent once, the benchmark payload too, judged by its answer: an import, not a timing."""


def engine_suite(path: Path, keyword: str | None, selected: Callable[[str], bool]) -> Suite:
    """The engine tests under `path` (engine_x where a test comes in both), grouped by genesis."""
    suite = discover(path, keyword)
    groups = tuple(
        ReplayGroup(group.genesis, tests)
        for group in suite.groups
        if (tests := tuple(ref for ref in group.tests if selected(ref.test_id)))
    )
    return Suite(groups=groups, notes=suite.notes)


class _Collector:
    """A `ReplayObserver` that keeps each test's verdict and reports each finished test."""

    def __init__(self, finished: Callable[[Outcome], None]) -> None:
        self.outcomes: list[Outcome] = []
        self._finished = finished

    def group_started(self, group: ReplayGroup, client_version: str | None) -> None:
        del group, client_version

    def test_started(self, ref: FixtureRef, executions: int) -> None:
        del ref, executions

    def execution_done(self, execution: Execution) -> None:
        del execution

    def test_finished(self, result: FixtureResult) -> None:
        difference = None if result.passed else (result.failure or result.verdict.value).splitlines()[0]
        outcome = Outcome(Verifier.ENGINE, result.test_id, Path(result.path), difference)
        self.outcomes.append(outcome)
        self._finished(outcome)


def engine_outcomes(suite: Suite, geth_bin: Path, finished: Callable[[Outcome], None]) -> list[Outcome]:
    """Import every test of `suite` into a geth started per genesis group (timing nothing, so not waiting for its start-up work)."""
    collector = _Collector(finished)
    replay_suite(suite, without_modes(ManagedClient(GETH, geth_bin, settle_limit=0)), IMPORT_ONCE, collector)
    return collector.outcomes
