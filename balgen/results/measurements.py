"""
What one payload execution measured, and the per-test statistics over the
measured ones.

Latencies are client-side round trips in nanoseconds (`perf_counter_ns`
around the HTTP call only, see `engine_client`). MGas/s is benchmarkoor's
`gasUsed * 1000 / newPayload ns`. Per test, the median is the headline
figure; p5/p95 show the spread and the coefficient of variation (sample
standard deviation over the mean) says whether the repeats agree well
enough for the median to be trusted.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, computed_field

from ..clients.process_io import ProcessReads
from ..clients.slow_block_log import ClientBlockTiming


class Role(StrEnum):
    """Why a payload was sent."""

    SETUP = "setup"
    """A setup payload, sent once before the benchmark payload."""
    WARMUP = "warmup"
    """A benchmark payload execution whose numbers are discarded."""
    MEASURED = "measured"
    """A benchmark payload execution that counts in the statistics."""
    DISCARDED = "discarded"
    """A benchmark payload execution whose client-side time disagreed with the client's own time
    for the block beyond `AGREEMENT_MARGIN` (something else than the block was timed), or during
    which other processes ran beyond `--disturbance-limit` (`disturbed`); another sibling was
    executed in its place."""
    REJECTION_WARMUP = "rejection-warmup"
    """A rejection of a payload the fixture expects INVALID, timed and discarded."""
    REJECTION = "rejection"
    """A rejection of a payload the fixture expects INVALID that counts in the time to reject."""
    INTAKE = "intake"
    """A sibling of the benchmark block sent under a `blockHash` that is not its own: the client
    decodes the payload and rebuilds and hashes the block, then refuses it before executing
    anything. Its time is the client's intake of the payload (`replay.sibling_blocks.SiblingBlocks.misnamed`)."""


AGREEMENT_MARGIN_MS = 10.0
AGREEMENT_MARGIN_FRACTION = 0.10
"""How far a client-side `newPayload` time may exceed the client's own time for the block plus
the client's intake of the payload: 10 ms plus 10% of the client's time. The intake (JSON and
transaction decoding, block hashing, HTTP on loopback: 2-8 ms at 1M gas, up to 50 ms for a 60M
payload of 2,000 transactions or a large access list) is measured per test and client by
`Role.INTAKE` probes and taken off first; what remains is scheduling noise of a loaded machine. A
rollback artefact (reth's 1-5 s after a restart) or a client busy with something else is far outside it."""


def allowed_overhead_ms(own_ms: float, intake_ms: float = 0.0) -> float:
    """
    The most a client-side time may exceed the client's own time `own_ms` for the same block, for a
    client whose intake of the payload (decoding and hashing it, before its own timer starts) takes
    `intake_ms`.
    """
    return intake_ms + AGREEMENT_MARGIN_MS + AGREEMENT_MARGIN_FRACTION * own_ms


_FROZEN = ConfigDict(frozen=True, use_attribute_docstrings=True)


class Execution(BaseModel):
    """One `newPayload` (and, for a valid block, its `forkchoiceUpdated`)."""

    model_config = _FROZEN

    test_id: str
    role: Role
    repetition: int
    """0-based count among the benchmark payload's executions (0 for setup)."""
    payload_index: int
    block_number: int
    block_hash: str
    gas_used: int
    transaction_count: int
    status: str
    """The `newPayload` status (or ERROR for an expected JSON-RPC error)."""
    validation_error: str | None = None
    """The client's `validationError` with a non-VALID status."""
    new_payload_ns: int
    forkchoice_updated_ns: int | None
    """None when no forkchoice update was sent (a payload rejected as expected)."""
    known_before_send: bool
    """The client had the block before it was sent: its answer is no execution."""
    restarted_before: bool
    """The client was restarted just before this execution (`--cold`)."""
    page_cache_dropped: bool = False
    """The OS page cache was dropped just before this execution (`--drop-caches`)."""
    own_timing: ClientBlockTiming | None
    """The client's own timing of the block from its slow-block log (geth's or reth's), when it logs one;
    `geth` in results of schema version 1."""
    client_reads: ProcessReads | None = None
    """Bytes the client process read during the newPayload (`/proc/<pid>/io`), for a client balgen started."""
    mode: str | None = None
    """The client mode this execution ran in (`--modes`), None for a run without modes."""
    variant: int | None = None
    """Which sibling of the benchmark block was sent: 0 the fixture's own, N the one with `extraData`
    `balgen sibling N` (`replay.sibling_blocks`); None for a setup payload."""
    round: int | None = None
    """The round of a modes run this execution belongs to (each round executes every mode once)."""
    order_in_round: int | None = None
    """Its place in the round's rotating order, 0 first."""
    intake_ms: float | None = None
    """For a benchmark execution: the median time the client took to refuse the block's `Role.INTAKE`
    probes on this client, its intake of the payload; None where none was measured."""
    other_cpu_ms: float | None = None
    """CPU time every process but the client and balgen spent during the `newPayload`, from the
    kernel's counters (`replay.disturbance`); None where they could not be read."""
    disturbed: bool | None = None
    """`other_cpu_ms` above `--disturbance-limit` of one core over the window: replaced by another
    sibling while replacements last; None without a limit."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def own_ms(self) -> float | None:
        """The client's own time for the block (reth's insertion, geth's total), when it logs one."""
        return None if self.own_timing is None else self.own_timing.own_ms

    @computed_field  # type: ignore[prop-decorator]
    @property
    def overhead_ms(self) -> float | None:
        """Client-side `newPayload` time minus the client's own time for the block."""
        own = self.own_ms
        return None if own is None else self.new_payload_ns / 1e6 - own

    @computed_field  # type: ignore[prop-decorator]
    @property
    def within_margin(self) -> bool | None:
        """Whether `overhead_ms` is within `allowed_overhead_ms` (with the intake); None without the client's own time."""
        own, overhead = self.own_ms, self.overhead_ms
        return None if own is None or overhead is None else overhead <= allowed_overhead_ms(own, self.intake_ms or 0.0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mgas_per_second(self) -> float | None:
        """Gas per client-side newPayload time, in MGas/s (None without a time)."""
        if self.new_payload_ns <= 0:
            return None
        return self.gas_used * 1000 / self.new_payload_ns


class Distribution(BaseModel):
    """Median, 5th and 95th percentiles, mean and coefficient of variation."""

    model_config = _FROZEN

    count: int
    median: float
    p5: float
    p95: float
    mean: float
    cv: float | None
    """Sample standard deviation over the mean; None with fewer than two values."""


def distribution(values: Sequence[float]) -> Distribution | None:
    """The distribution of `values` (linear-interpolated percentiles); None if empty."""
    import numpy  # here, not at the top: `balgen verify` imports this module and computes no distribution

    if not values:
        return None
    data = [float(value) for value in values]
    mean = statistics.fmean(data)
    cv = statistics.stdev(data) / mean if len(data) > 1 and mean else None
    p5, p95 = numpy.percentile(data, [5, 95])
    return Distribution(
        count=len(data),
        median=statistics.median(data),
        p5=float(p5),
        p95=float(p95),
        mean=mean,
        cv=cv,
    )


class BenchmarkStatistics(BaseModel):
    """Per-test statistics over the measured executions of the benchmark payload."""

    model_config = _FROZEN

    new_payload_ns: Distribution | None
    forkchoice_updated_ns: Distribution | None
    mgas_per_second: Distribution | None
    own_total_ms: Distribution | None
    own_execution_ms: Distribution | None
    own_state_read_ms: Distribution | None
    own_state_hash_ms: Distribution | None
    own_commit_ms: Distribution | None
    own_ms: Distribution | None = None
    """The client's own time for the block (reth's insertion, geth's total)."""
    overhead_ms: Distribution | None = None
    """Client-side newPayload time minus the client's own time."""


def rejection_statistics(executions: Sequence[Execution]) -> Distribution | None:
    """The time to reject (newPayload ns) over the `REJECTION` executions among `executions`, if any."""
    return distribution([e.new_payload_ns for e in executions if e.role is Role.REJECTION])


def benchmark_statistics(executions: Sequence[Execution]) -> BenchmarkStatistics:
    """Statistics over the `MEASURED` executions among `executions`."""
    measured = [e for e in executions if e.role is Role.MEASURED]
    geth = [e.own_timing for e in measured if e.own_timing is not None]
    return BenchmarkStatistics(
        new_payload_ns=distribution([e.new_payload_ns for e in measured]),
        forkchoice_updated_ns=distribution(
            [e.forkchoice_updated_ns for e in measured if e.forkchoice_updated_ns is not None]
        ),
        mgas_per_second=distribution(
            [m for e in measured if (m := e.mgas_per_second) is not None]
        ),
        own_total_ms=distribution([g.total_ms for g in geth]),
        own_execution_ms=distribution([g.execution_ms for g in geth]),
        own_state_read_ms=distribution([g.state_read_ms for g in geth]),
        own_state_hash_ms=distribution([g.state_hash_ms for g in geth]),
        own_commit_ms=distribution([g.commit_ms for g in geth]),
        own_ms=distribution([g.own_ms for g in geth]),
        overhead_ms=distribution([o for e in measured if (o := e.overhead_ms) is not None]),
    )

