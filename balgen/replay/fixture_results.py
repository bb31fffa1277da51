"""A test's result (`FixtureResult`) from what its replay did, and the fixture name benchmarkoor-fetch gives it."""

from __future__ import annotations

import re
import time

from ..clients.modes import ClientMode
from ..results.confidence import median_interval
from ..results.measurements import Role, benchmark_statistics, rejection_statistics
from ..results.schema import FixtureResult, Verdict
from .agreement import agreement_summary
from .discovery import FixtureRef, ReplayTest
from .steps import TestReplay

_FETCH_TITLE = re.compile(
    r"^(?:.*/)?(?P<test_file>test_[^./]+\.py)(?:__|::)"
    r"(?P<test_name>[^\[]+?)"
    r"(?:\[(?P<test_params>.*)\])?$"
)
"""benchmarkoor-fetch 0.3.2's `_TITLE_RE` (parse/titles.py), verbatim."""


def fixture_name(test_id: str) -> str:
    """
    The test id as benchmarkoor-fetch names fixtures (`to_fixture_name`):
    an execution-spec-tests id `path/test_x.py::test_y[params]` becomes
    `test_x.py__test_y[params]`; any other id (balgen's) stays as it is.
    """
    match = _FETCH_TITLE.match(test_id)
    if not match:
        return test_id
    name = f"{match['test_file']}__{match['test_name']}"
    return name if match["test_params"] is None else f"{name}[{match['test_params']}]"


def fixture_result(
    ref: FixtureRef,
    genesis_hash: str,
    failure: str | None,
    *,
    test: ReplayTest | None = None,
    replay: TestReplay | None = None,
    started: float | None = None,
    verdict: Verdict | None = None,
    mode: ClientMode | None = None,
    ratio_width: float | None = None,
) -> FixtureResult:
    """A test's result (in one mode, for a modes run) from what it did."""
    benchmark = None if test is None else test.benchmark
    executions = () if replay is None else replay.executions
    measured_ns = [e.new_payload_ns for e in executions if e.role is Role.MEASURED]
    interval = median_interval(measured_ns)
    mode = mode if replay is None else replay.mode
    return FixtureResult(
        test_id=ref.test_id,
        fixture_name=fixture_name(ref.eest_test_id or ref.test_id),
        path=str(ref.path),
        format=ref.format,
        genesis_hash=genesis_hash,
        verdict=verdict or (Verdict.PASSED if failure is None else Verdict.FAILED),
        failure=failure,
        benchmark_block_number=None if benchmark is None else benchmark.block_number,
        benchmark_gas_used=None if benchmark is None else benchmark.gas_used,
        benchmark_transaction_count=None if benchmark is None else benchmark.transaction_count,
        executions=list(executions),
        statistics=benchmark_statistics(executions) if executions else None,
        time_to_reject_ns=rejection_statistics(executions),
        duration_s=0.0 if started is None else time.perf_counter() - started,
        repeat_stop=None if replay is None else replay.repeat_stop,
        median_interval_width=None if interval is None else interval.relative_width,
        ratio_interval_width=ratio_width,
        client_threads=None if replay is None else replay.client_threads,
        speedup_bound=None if test is None else test.speedup_bound,
        bal_features=None if test is None else test.bal_features,
        count_checks=[] if replay is None else replay.count_checks + replay.checked_counts,
        isolation=None if replay is None else replay.isolation,
        mode=None if mode is None else mode.name,
        mode_flags=[] if mode is None else list(mode.flags),
        mode_proof=[] if replay is None else list(replay.proof[0]),
        mode_unproven=[] if replay is None else list(replay.proof[1]),
        discarded=0 if replay is None else replay.discarded,
        agreement=None if replay is None else agreement_summary(replay.executions),
    )
