"""
The results of a replay run: the schema of `results.json`.

One model serves both ends: `balgen replay` writes it, `balgen report` reads
it back typed, so the two cannot drift apart. `docs/replay.md` describes
the fields; `schema_version` changes whenever a field changes meaning.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from ..analysis.bal_features import BalFeatures
from .measurements import BenchmarkStatistics, Distribution, Execution
from .repeat_policy import RepeatStop

SCHEMA_VERSION = 2
"""2: the client's own block timing is `own_timing` and `own_*_ms` (version 1 named them `geth`,
`geth_*_ms` whatever the client); `balgen report` reads both (`upgraded_from_version_1`)."""
READABLE_VERSIONS = (1, SCHEMA_VERSION)
_RENAMED_IN_2 = {
    "geth": "own_timing",
    **{f"geth_{name}_ms": f"own_{name}_ms" for name in ("total", "execution", "state_read", "state_hash", "commit")},
}


def upgraded_from_version_1(data: Any) -> Any:
    """A version-1 `results.json` document with its client-timing keys under their version-2 names."""
    if not isinstance(data, dict) or data.get("schema_version", 1) != 1:
        return data
    for test in data.get("tests") or []:
        if not isinstance(test, dict):
            continue
        for execution in test.get("executions") or []:
            if isinstance(execution, dict) and "geth" in execution:
                execution[_RENAMED_IN_2["geth"]] = execution.pop("geth")
        statistics = test.get("statistics")
        if isinstance(statistics, dict):
            for old, new in _RENAMED_IN_2.items():
                if old in statistics:
                    statistics[new] = statistics.pop(old)
    return data
RESULTS_JSON = "results.json"
"""The file of a run's output folder that holds its `RunResult`."""

_CONFIG = ConfigDict(use_attribute_docstrings=True)


class Verdict(StrEnum):
    """How a test ended."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_RUN = "not_run"


class RunState(StrEnum):
    """Whether the run went through all its tests."""

    RUNNING = "running"
    """Written after each test while the run goes on (or if it was killed)."""
    COMPLETE = "complete"
    INTERRUPTED = "interrupted"
    """Stopped by Ctrl-C or an error; every test listed was completed."""
    STOPPED = "stopped"
    """Stopped after the first failure (`--fail-fast`)."""


class FixtureResult(BaseModel):
    """One test: its checks' verdict and every payload execution."""

    model_config = _CONFIG

    test_id: str
    fixture_name: str
    """The test's EEST-style id (`_info["test-id"]` of balgen's fixtures, the key of EEST's) in
    benchmarkoor-fetch's canonical form: the CSVs' `fixture_name`."""
    path: str
    format: str
    genesis_hash: str
    verdict: Verdict
    failure: str | None
    """Why the test failed or did not run; None when it passed."""
    benchmark_block_number: int | None = None
    benchmark_gas_used: int | None = None
    benchmark_transaction_count: int | None = None
    executions: list[Execution] = Field(default_factory=list)
    statistics: BenchmarkStatistics | None = None
    """Over the measured executions; None when there were none."""
    time_to_reject_ns: Distribution | None = None
    """newPayload time of the client's rejections of the payloads the fixture expects INVALID and
    times (an `invalid_bal` block's lying twin); None for a test without one."""
    duration_s: float = 0.0
    """Wall time of the whole test: setup, rollbacks, restarts, checks."""
    repeat_stop: RepeatStop | None = None
    """Why the measured executions ended: `count`, or with `--repeat auto` `ci_width` or `cap`."""
    median_interval_width: float | None = None
    """Relative width of the 95% interval of the median newPayload time (None below 6 executions)."""
    ratio_interval_width: float | None = None
    """In a modes run: relative width of the 95% interval of the median of the per-round ratios of
    this mode's newPayload time to the first mode's (None for the first mode, or below 6 rounds)."""
    client_threads: dict[str, str] | None = None
    """The client's cores and thread settings while it served this test (`replay.cpu_placement`):
    `cpus_allowed`, `threads`, and GOMAXPROCS and the like as its environment sets them."""
    speedup_bound: float | None = None
    """The fixture's ideal parallel speedup (`_info["dependency-graph"]["speedup-bound"]`), if it has one."""
    bal_features: BalFeatures | None = None
    """What the benchmark block's access list and transactions show before execution
    (`balgen.analysis.bal_features`); None for a block without an access list."""
    count_checks: list[str] = Field(default_factory=list)
    """geth's slow-block counters checked against the workload model, e.g.
    `writes.storage_slots 37 in [35, 67] (slots_written)`; what was not checked and why."""
    rollback_method: str | None = None
    """How the chain was rolled back between tests (`debug_setHead`, `restart_from_copy`, or `head_kept`: nothing to roll back, `replay.positioning.keeps_head`); None if it did not run."""
    isolation: str | None = None
    """How each execution of the benchmark payload was made a true one: `sibling_blocks` (a new
    sibling of the block per execution, no rollback) or `single_send` (a payload the fixture expects
    INVALID, sent once)."""
    mode: str | None = None
    """The client mode of this result (`--modes`); a modes run has one result per test and mode."""
    mode_flags: list[str] = Field(default_factory=list)
    mode_proof: list[str] = Field(default_factory=list)
    """What the client's own log confirmed about the mode (`clients.mode_evidence`)."""
    mode_unproven: list[str] = Field(default_factory=list)
    """What the client's log cannot show about the mode, and why."""
    discarded: int = 0
    """Executions replaced by another sibling: their client-side time disagreed with the client's own
    beyond the margin, or other load disturbed them (`Execution.disturbed`)."""
    agreement: str | None = None
    """How many benchmark executions agreed with the client's own time for the block, e.g. `9 of 11 benchmark
    executions within 10 ms + 10% of the client's own time (2 discarded)`; None without the client's times."""

    @property
    def passed(self) -> bool:
        """Whether every check held."""
        return self.verdict is Verdict.PASSED

    def median(self, metric: str) -> float | None:
        """The median of one of `statistics`' distributions, if measured."""
        if self.statistics is None:
            return None
        value = getattr(self.statistics, metric)
        return None if value is None else float(value.median)


class RunResult(BaseModel):
    """A whole run: how it was made, and every completed test."""

    model_config = _CONFIG

    schema_version: int = SCHEMA_VERSION

    @model_validator(mode="before")
    @classmethod
    def _read_version_1(cls, data: Any) -> Any:
        return upgraded_from_version_1(data)
    label: str
    balgen_version: str
    started_at: str
    """ISO 8601, UTC."""
    finished_at: str | None = None
    state: RunState = RunState.RUNNING
    fixtures_path: str
    keyword: str | None
    warmup: int
    repeat: int
    """Measured executions per test; with `--repeat auto` the cap."""
    repeat_auto: bool = False
    """`--repeat auto`: each test measured until its median's interval is `ci_width` wide, or `repeat` times."""
    ci_width: float | None = None
    """`--repeat auto`'s target: relative width of the 95% interval of the median."""
    cold: bool
    drop_caches: bool = False
    """The OS page cache was dropped before each measured execution (`--drop-caches`)."""
    fail_fast: bool
    target: dict[str, Any]
    """`kind` (managed or external) and the geth binary and flags, or the URLs."""
    client_versions: list[str] = Field(default_factory=list)
    """`web3_clientVersion` of each client instance (one per genesis group)."""
    notes: list[str] = Field(default_factory=list)
    method: dict[str, Any] = Field(default_factory=dict)
    """How executions were isolated and checked: `isolation`, the agreement margin between the
    client-side and the client's own time, and the order of modes in rounds."""
    modes: list[dict[str, Any]] = Field(default_factory=list)
    """`--modes`: each mode's name, flags and what it switches; empty for a run without modes."""
    client_build: str | None = None
    """The client binary's own version text (`reth --version`: commit, features, build profile)."""
    tests: list[FixtureResult] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def counts(self) -> dict[str, int]:
        """How many tests passed, failed and were not run."""
        return {verdict.value: sum(t.verdict is verdict for t in self.tests) for verdict in Verdict}
