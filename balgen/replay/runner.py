"""
The replay itself: every test of every genesis group, sent to a client
through the Engine API, checked, and timed.

Per test:

1. The client's head must be the parent of the test's first payload; a
   head above it (a previous test, a previous run) is rewound first.
2. The setup payloads go in, each `newPayload` then `forkchoiceUpdated`.
3. The benchmark payload (the last one) is executed `warmup + repeat`
   times, each time as a new sibling of the block (`sibling_blocks`: the
   same transactions on the same parent, another `extraData`): the first
   execution is the fixture's own block, every later one a block the
   client has never seen, executed in full on the parent's state, with no
   rollback in between and no forkchoice update (the head stays at the
   parent). Before every send `eth_getBlockByHash` must not know the
   block: a client answers a known block with VALID at once, without
   executing it, and such an answer is flagged. Where the client logs its
   own time for the block, the client-side time must agree with it within
   `AGREEMENT_MARGIN`; an execution that does not is recorded as discarded
   and another sibling executed in its place. With `--cold` the client is
   restarted before each measured execution, with `--drop-caches` the OS
   page cache is dropped right before it. `--repeat N` measures N times;
   `--repeat auto` until the median is known well enough (`repeat_policy`).
   With `--modes`, one client per mode serves the test, and the
   executions go in rounds: each round executes the block once per mode,
   in an order that rotates from round to round.
4. A forkchoice update makes the fixture's own block the head, which must
   be `lastblockhash`; where the client's log shows it, the mode must be
   the one asked for (`mode_evidence`). Then the chain is rewound to the
   pre-test head and verified, so the next test starts where it should.

Checks (a failed one ends the test with its reason; the run goes on): the
genesis hash is the fixture's; every `newPayload` status is the expected
one (VALID, or INVALID where the fixture has a `validationError`, or the
fixture's JSON-RPC `errorCode`); every `forkchoiceUpdated` is VALID; the
head after the benchmark payload is `lastblockhash`; geth's slow-block
counters of each measured execution are where the workload model puts
them (`expected_counts`); an INVALID answer must give a reason that
means one of the fixture's expected exceptions, for the clients whose
messages balgen maps (`rejections`). A payload the fixture
expects to be INVALID is sent once: clients remember rejected blocks and
answer a resend from that memory (geth: "links to previously rejected
block"), not by executing it. One it labels `testing`, just before the
benchmark payload, is a timed rejection: executed like the benchmark
payload, the client restarted in between (`rejections`).

Faults: a JSON-RPC error to any call fails the test with the method and the
error, and the run goes on. A client that stops answering (killed, hung past
the timeout, refusing the JWT) or cannot be restarted fails the test it was
serving, keeping what that test had executed; a client balgen started is
then replaced by a fresh one for the rest of the group (at most
`MAX_CLIENT_REPLACEMENTS` times), while the rest of a group on a client the
user runs is reported not run.
"""

from __future__ import annotations

import contextlib
import itertools
import statistics
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ..chain.header import has_block_access_list
from ..clients.block_counts import counter
from ..clients.modes import ClientMode
from ..clients.process import ClientError
from ..clients.kind import prove_mode
from ..clients.mode_evidence import ModeNotInEffect
from ..clients.engine_client import RpcError, RpcTransportError
from ..clients.process_io import ProcessReads, process_reads
from ..clients.slow_block_log import ClientBlockTiming
from ..plumbing.errors import BadInput
from ..ethereum.forks import fork_by_name
from ..results.confidence import median_interval
from ..results.measurements import (
    AGREEMENT_MARGIN_FRACTION,
    AGREEMENT_MARGIN_MS,
    Execution,
    Role,
    allowed_overhead_ms,
    benchmark_statistics,
    rejection_statistics,
)
from ..results.repeat_policy import DEFAULT_TARGET_WIDTH, RepeatPolicy, RepeatStop
from ..results.schema import FixtureResult, RunState, Verdict
from .client_chain import CheckFailed, ClientChain, RollbackFailed, block_label
from .expected_counts import Expectation, count_mismatches, expected_counts
from .discovery import FixtureRef, ReplayGroup, ReplayTest, Suite, filled_with, load_test
from .page_cache import drop_page_cache
from .engine_payloads import ERROR, VALID, PayloadDirective
from .sibling_blocks import SiblingBlocks, UnknownPayloadShape
from .rejections import reason_unchecked, rejection_executions, rejection_reason_problem, time_rejections
from .targets import ReplayClient, ReplayTarget

DISCARD_FACTOR = 3
"""Executions replaced (outside the agreement margin) per measured one a test may have; after that
they are kept as they come: on a loaded 2-core machine with four nodes up, half were seen outside it."""
INTAKE_PROBES = 3
"""Intake probes (`Role.INTAKE`) per test and client; their median is the client's intake of the payload."""
OWN_TIMING_WAIT = 2.0
"""Seconds to wait for the client's log line of a block after its `newPayload` was answered (reth's
logger writes from its own thread)."""


T = TypeVar("T")

MAX_CLIENT_REPLACEMENTS = 2
"""Fresh clients started per group after the previous one was lost: enough
for an occasional crash, bounded for a build that crashes on every test."""


class ClientLost(Exception):
    """The client can no longer serve the group: it stopped answering or did not restart."""


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
    """Replace executions outside the agreement margin and fail a test whose median is outside
    (`--agreement check`); else only record the agreement (`--agreement record`)."""

    @property
    def policy(self) -> RepeatPolicy:
        """When to stop measuring a test."""
        return RepeatPolicy(count=None if self.repeat_auto else self.repeat, target_width=self.ci_width, cap=self.repeat)


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


def _status_of(reply: Any) -> tuple[str | None, str | None]:
    """The `status` and `validationError` of a `PayloadStatusV1`, tolerating junk."""
    if not isinstance(reply, dict):
        return None, None
    error = reply.get("validationError")
    return reply.get("status"), None if error is None else str(error)


def _with_reason(error: str | None) -> str:
    return f": {error}" if error else ""


class _TestReplay:
    """One test on one client (one mode of a modes run); see the module docstring for the steps."""

    def __init__(
        self,
        client: ReplayClient,
        test: ReplayTest,
        options: ReplayOptions,
        observer: ReplayObserver,
        mode: ClientMode | None = None,
    ) -> None:
        self.client = client
        self.test = test
        self.options = options
        self.observer = observer
        self.mode = mode
        self.executions: list[Execution] = []
        self.repeat_stop: RepeatStop | None = None
        self.count_checks: list[str] = []
        """What could not be checked and why."""
        self.checked_counts: list[str] = []
        """The counters checked on the last measured execution, with their ranges."""
        self.expectations = self._expectations()
        self.measured: list[float] = []
        self.discarded = 0
        self.next_variant = 0
        """The sibling the next execution sends (0: the fixture's own block)."""
        self.siblings: SiblingBlocks | None = None
        self.sibling_problem: str | None = None
        """Why no sibling of the benchmark block can be made: the test fails after its own block is sent."""
        self.pre_test: tuple[int, str] | None = None
        self.proof: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self.failure: str | None = None
        """Why this test failed on this client; it then takes no further part in the rounds."""
        self.placement: tuple[int, int] | None = None
        """(round, place in the round) of the next execution in a modes run."""
        self.intake_ms: float | None = None
        """The median time the client took to refuse the intake probes (`measure_intake`)."""

    def _expectations(self) -> tuple[Expectation, ...]:
        """geth's counters to check (none for a client without a slow-block log)."""
        if self.client.slow_blocks is None:
            return ()
        try:
            parallel = has_block_access_list(fork_by_name(self.test.network))
        except BadInput:  # a network balgen has no fork for: the client's config decides
            parallel = True
        if self.mode is not None and self.mode.switches is not None:
            parallel = parallel and self.mode.switches.parallel_execution
        expectations = expected_counts(self.test.workload, parallel_execution=parallel)
        if parallel and expected_counts(self.test.workload, parallel_execution=False) != expectations:
            self.count_checks.append(
                "reads not checked: geth counts no reads of a block it executes in parallel from its access list"
            )
        return expectations

    @property
    def chain(self) -> ClientChain:
        """The client's chain over its current connection (a restart makes a new one)."""
        return ClientChain(self.client.rpc)

    @property
    def isolation(self) -> str:
        """How the benchmark payload's executions are kept true ones (`FixtureResult.isolation`)."""
        return "sibling_blocks" if self.test.benchmark.expected_status == VALID else "single_send"

    # -- the steps -------------------------------------------------------

    def start_point(self) -> tuple[int, str]:
        """Bring the head to the first payload's parent; return that block."""
        first = self.test.payloads[0]
        parent = (first.block_number - 1, first.parent_hash)
        head = self.chain.head()
        if str(head["hash"]).lower() == first.parent_hash:
            return parent
        if int(head["number"], 16) <= parent[0]:
            raise RollbackFailed(
                f"the client's head is {block_label(head)}, below the first payload's "
                f"parent block {parent[0]} {parent[1]}"
            )
        self.rewind(*parent)
        return parent

    def rewind(self, number: int, block_hash: str) -> bool:
        """
        The head back to block `number` `block_hash`, verified, by the
        client's rollback method; True if the client was restarted for it.
        """
        try:
            return self.client.rewind(number, block_hash)
        except ClientError as error:  # the client did not come back from a restore
            raise ClientLost(f"rolling back by {self.client.rollback_method} failed: {error}") from None

    def remember(self, number: int, block_hash: str) -> None:
        """Let the client keep what it needs to come back to this block (a datadir copy, or nothing)."""
        try:
            self.client.remember(number, block_hash)
        except ClientError as error:
            raise ClientLost(f"saving the client's state at block {number} failed: {error}") from None

    def run_setup(self) -> None:
        """Bring the head to the test's start, keep a way back to it, send the setup payloads."""
        self.pre_test = self.start_point()
        self.remember(*self.pre_test)
        for directive in self.test.setup:
            self.send(directive, Role.SETUP, 0, restarted=False, dropped=False)
        time_rejections(self, self.test.rejected, self.rejection_executions())
        if self.test.benchmark.expected_status == VALID:
            try:
                self.siblings = SiblingBlocks.of(self.test.benchmark)
            except UnknownPayloadShape as error:
                # The fixture's own block is sent first all the same: a client that refuses it (a wrong
                # block hash) names the fixture's fault better than balgen's rebuilt header can.
                self.sibling_problem = f"payload {self.test.benchmark.index}: no sibling can be made: {error}"
        if self.siblings is not None and self.intake_probes:
            self.measure_intake()

    @property
    def intake_probes(self) -> int:
        """
        How many intake probes go before the benchmark executions: `INTAKE_PROBES` where the
        agreement will be checked (`checks_agreement`; a run that only records it sends nothing but
        the fixture's payloads and their siblings) against an own time that starts after the intake.
        geth's slow-block `total_ms` does (`BlockLog.timer_after_intake`); reth's own time is its whole insertion,
        intake included, and its hash-mismatch refusal is no measure of it (140-600 ms at 30M and
        60M, against 4 ms of overhead over its insertion time), so reth is held to the plain margin.
        """
        checked = (
            self.test.benchmark.expected_status == VALID and self.options.agreement_check and not self.options.cold
        )
        block_log = None if self.client.kind is None else self.client.kind.block_log
        timer_after_intake = self.client.slow_blocks is not None and block_log is not None and block_log.timer_after_intake
        return INTAKE_PROBES if checked and timer_after_intake else 0

    def measure_intake(self) -> None:
        """
        The client's intake of the benchmark payload: `INTAKE_PROBES` misnamed siblings
        (`SiblingBlocks.misnamed`), each refused at its block hash, their median time kept. The
        executions' agreement with the client's own block time allows for it, since the client's
        timer starts after the intake.
        """
        assert self.siblings is not None
        for number in range(1, self.intake_probes + 1):
            self.send(self.siblings.misnamed(number), Role.INTAKE, number - 1, restarted=False, dropped=False)
        probes = [e.new_payload_ns for e in self.executions if e.role is Role.INTAKE]
        self.intake_ms = statistics.median(probes) / 1e6

    def run_payloads(self) -> None:
        """Setup payloads once, then the benchmark payload's executions, then the final checks."""
        self.run_setup()
        while not self.execute_once():
            pass
        self.finish()

    def execute_once(self) -> bool:
        """
        One execution of the benchmark payload (a new sibling of the block);
        True when the test has all the executions it needs.
        """
        benchmark = self.test.benchmark
        _, warmups = benchmark_executions(benchmark, self.options)
        policy = self.options.policy if benchmark.expected_status == VALID else RepeatPolicy(count=1)
        repetition = self.next_variant - self.discarded
        role = Role.WARMUP if repetition < warmups else Role.MEASURED
        parent = (benchmark.block_number - 1, benchmark.parent_hash)
        restarted = False
        if self.options.cold and role is Role.MEASURED:
            self.restart_client(*parent)
            restarted = True
        dropped = self.options.drop_caches and role is Role.MEASURED
        if dropped:
            try:
                drop_page_cache()
            except OSError as error:  # permitted at the start; refused now (e.g. a lost privilege)
                raise CheckFailed(f"dropping the page cache failed: {error}") from None
        directive = benchmark if self.siblings is None else self.siblings.variant(self.next_variant)
        self.send(directive, role, repetition, restarted=restarted, dropped=dropped, forkchoice=self.siblings is None)
        if self.sibling_problem is not None:
            raise CheckFailed(self.sibling_problem)
        self.next_variant += 1
        execution = self.executions[-1]
        if self.checks_agreement and execution.within_margin is False and self.may_discard:
            self.discard(execution)
            return False
        if role is Role.MEASURED:
            self.check_counts(execution, repetition)
            self.measured.append(execution.new_payload_ns)
            self.repeat_stop = policy.stop(self.measured)
            return self.repeat_stop is not None
        return False

    @property
    def checks_agreement(self) -> bool:
        """
        Whether executions outside the agreement margin are replaced and a
        systematic disagreement fails the test: for sibling executions,
        unless `--agreement record` or `--cold` (whose restarts put the
        freshly started node's first-call costs into the time on purpose).
        """
        return self.siblings is not None and self.options.agreement_check and not self.options.cold

    @property
    def may_discard(self) -> bool:
        """Replacements left: at most `DISCARD_FACTOR` times `repeat` per test, then executions are kept as they are."""
        return self.discarded < DISCARD_FACTOR * self.options.repeat

    def discard(self, execution: Execution) -> None:
        """
        An execution whose client-side time is not the client's time for the
        block: kept as `discarded`, and another sibling takes its place.
        """
        self.executions[-1] = execution.model_copy(update={"role": Role.DISCARDED})
        self.discarded += 1

    def check_agreement(self) -> None:
        """
        The measured executions' median overhead must be within the margin of
        their median own time:
        one outlier is noise (and was replaced while replacements lasted),
        a median outside the margin means balgen timed something else than
        the block (reth's 1-5 s after a restart, an unoptimised build's
        Engine API decoding), and the test fails saying so.
        """
        measured = [e for e in self.executions if e.role is Role.MEASURED and e.overhead_ms is not None]
        if not self.checks_agreement or not measured:
            return
        own = statistics.median(e.own_ms for e in measured if e.own_ms is not None)
        overhead = statistics.median(e.overhead_ms for e in measured if e.overhead_ms is not None)
        allowed = allowed_overhead_ms(own, self.intake_ms or 0.0)
        if overhead > allowed:
            intake = "" if self.intake_ms is None else f", the client's intake of the payload {self.intake_ms:.2f} ms"
            raise CheckFailed(
                f"the measured executions took a median {overhead:.2f} ms longer client-side than the client's own "
                f"time for the block (median {own:.2f} ms{intake}; {allowed:.2f} ms allowed): the time "
                f"measured is not the block's execution ({agreement_summary(self.executions)}; `--agreement record` keeps such a run)"
            )

    def finish(self) -> None:
        """The fixture's own block made head (`lastblockhash`); the mode proven from the client's log."""
        if self.siblings is None:
            self.check_last_block(Role.MEASURED, len(self.executions) - 1)
            return
        benchmark = self.test.benchmark
        try:
            reply = self.client.engine.forkchoice_updated(benchmark.forkchoice_updated_version, benchmark.block_hash)
        except RpcError as error:
            raise CheckFailed(f"making the benchmark block head: {_reason(error)}") from None
        _check_forkchoice(f"payload {benchmark.index} (block {benchmark.block_number})", benchmark, reply.result)
        self.check_last_block(Role.MEASURED, len(self.executions) - 1)
        self.check_agreement()
        self.prove_mode()

    def prove_mode(self) -> None:
        """The client's own entries of the sibling executions must show the mode asked for."""
        if self.mode is None:
            return
        timings = [
            e.own_timing for e in self.executions
            if e.role is not Role.SETUP and e.variant and e.own_timing is not None
        ]  # fmt: skip
        try:
            proof = prove_mode(self.client.kind, self.mode, timings)
        except ModeNotInEffect as error:
            raise CheckFailed(str(error)) from None
        self.proof = (proof.proven, proof.unproven)

    def rejection_executions(self) -> tuple[int, int]:
        """(executions, of which warm-ups) of each payload whose rejection is timed (`rejections`)."""
        return rejection_executions(self.options.warmup, self.options.repeat, self.client.can_restart)

    def check_counts(self, execution: Execution, repetition: int) -> None:
        """geth's counters of a measured execution must be where the workload model puts them."""
        counts = None if execution.own_timing is None else execution.own_timing.counts
        if not self.expectations or counts is None:
            return
        problems = count_mismatches(self.expectations, counts)
        if problems:
            raise CheckFailed(f"measured execution {repetition + 1}: " + "; ".join(problems))
        self.checked_counts = [
            f"{e.counter} = {counter(counts, e.counter):,} in [{e.least:,}, {e.most:,}] ({e.source})"
            for e in self.expectations
        ]

    def restart_client(self, number: int, block_hash: str) -> None:
        """`--cold`: restart the client; its head must still be the parent."""
        try:
            self.client.restart()
        except ClientError as error:  # the client did not come back
            raise ClientLost(f"restarting the client failed: {error}") from None
        self.chain.expect_head(number, block_hash, "restarting the client")

    def check_last_block(self, role: Role, repetition: int) -> None:
        """The head must be the block the fixture says the test ends on."""
        head = self.chain.head()
        if str(head["hash"]).lower() != self.test.last_block_hash:
            raise CheckFailed(
                f"after the {role.value} execution {repetition + 1} the head is "
                f"{block_label(head)}, the fixture's lastblockhash is {self.test.last_block_hash}"
            )

    # -- one payload -----------------------------------------------------

    def send(
        self,
        directive: PayloadDirective,
        role: Role,
        repetition: int,
        *,
        restarted: bool,
        dropped: bool,
        forkchoice: bool = True,
    ) -> None:
        """
        Send one payload (and, with `forkchoice`, make it head if valid),
        record it, check it. A sibling gets no forkchoice update: the head
        stays at the parent, so the next sibling runs on the same state.
        """
        where = f"payload {directive.index} (block {directive.block_number})"
        if role is not Role.SETUP:
            where += f", {role.value} execution {repetition + 1}"
            if self.mode is not None:
                where += f" in mode {self.mode.name}"
        try:
            known = self.chain.is_known(directive.block_hash)
        except RpcError as error:
            raise CheckFailed(f"{where}: {_reason(error)}") from None
        if self.client.slow_blocks is not None:
            self.client.slow_blocks.skip_to_end()
        pid = self.client.process_id
        reads_before = None if pid is None else process_reads(pid)
        try:
            reply = self.client.engine.new_payload(directive.new_payload_version, directive.params)
        except RpcError as error:
            if directive.error_code is not None and error.code == directive.error_code:
                self.record(directive, role, repetition, ERROR, None, 0, None, known, (restarted, dropped), None)
                return
            raise CheckFailed(
                f"{where}: {directive.method} returned error {error.code}: {error.message}"
            ) from None
        reads_after = None if pid is None else process_reads(pid)
        client_reads = None if reads_before is None or reads_after is None else reads_after - reads_before
        status, validation_error = _status_of(reply.result)
        forkchoice_reply = None
        forkchoice_error = None
        if forkchoice and status == VALID and directive.expected_status == VALID:
            try:
                forkchoice_reply = self.client.engine.forkchoice_updated(
                    directive.forkchoice_updated_version, directive.block_hash
                )
            except RpcError as error:  # the payload executed: it is still recorded
                forkchoice_error = error
        self.record(
            directive,
            role,
            repetition,
            str(status),
            validation_error,
            reply.elapsed_ns,
            None if forkchoice_reply is None else forkchoice_reply.elapsed_ns,
            known,
            (restarted, dropped),
            client_reads,
        )
        if known:
            raise CheckFailed(
                f"{where}: block {directive.block_hash} was already known to the client before "
                f"it was sent; its {status} after {reply.elapsed_ns / 1e6:.2f} ms is no execution"
            )
        _check_status(where, directive, status, validation_error, self.versions())
        if directive.validation_error is not None:
            problem = rejection_reason_problem(self.client.client_version, directive.validation_error, validation_error)
            if problem is not None:
                raise CheckFailed(f"{where}: {problem} ({self.versions()})")
            unchecked = reason_unchecked(self.client.client_version, directive.validation_error)
            if unchecked is not None and unchecked not in self.count_checks:
                self.count_checks.append(unchecked)
        if forkchoice_error is not None:
            raise CheckFailed(f"{where}: {_reason(forkchoice_error)}")
        if forkchoice_reply is not None:
            _check_forkchoice(where, directive, forkchoice_reply.result)

    def versions(self) -> str:
        """Who filled the fixture and who executes it, for a refusal."""
        filled_by = filled_with(self.test.ref) or "an unnamed t8n"
        return f"fixture filled by {filled_by}, client {self.client.client_version or 'of unknown version'}"

    def own_timing(self, directive: PayloadDirective, role: Role) -> ClientBlockTiming | None:
        """The client's own entry for the block just sent; for a benchmark execution waited for a moment."""
        slow_blocks = self.client.slow_blocks
        if slow_blocks is None:
            return None
        if role is Role.SETUP:
            return slow_blocks.timing_of(directive.block_hash)
        return slow_blocks.timing_of(
            directive.block_hash, wait=OWN_TIMING_WAIT, needs_insert=self.client.logs_insertion
        )

    def record(
        self,
        directive: PayloadDirective,
        role: Role,
        repetition: int,
        status: str,
        validation_error: str | None,
        new_payload_ns: int,
        forkchoice_updated_ns: int | None,
        known: bool,
        preparation: tuple[bool, bool],
        client_reads: ProcessReads | None,
    ) -> None:
        """Keep one execution, how it was prepared (restarted, page cache dropped), and the client's own timing of it."""
        restarted, dropped = preparation
        benchmark = role not in (Role.SETUP, Role.INTAKE)
        placement = self.placement if benchmark else None
        execution = Execution(
            test_id=self.test.ref.test_id,
            role=role,
            repetition=repetition,
            payload_index=directive.index,
            block_number=directive.block_number,
            block_hash=directive.block_hash,
            gas_used=directive.gas_used,
            transaction_count=directive.transaction_count,
            status=status,
            validation_error=validation_error,
            new_payload_ns=new_payload_ns,
            forkchoice_updated_ns=forkchoice_updated_ns,
            known_before_send=known,
            restarted_before=restarted,
            page_cache_dropped=dropped,
            own_timing=self.own_timing(directive, role) if status == VALID else None,
            client_reads=client_reads,
            mode=None if self.mode is None else self.mode.name,
            variant=self.next_variant if benchmark and self.siblings is not None else None,
            round=None if placement is None else placement[0],
            order_in_round=None if placement is None else placement[1],
            intake_ms=self.intake_ms if benchmark else None,
        )
        self.executions.append(execution)
        self.observer.execution_done(execution)


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


def _check_status(
    where: str, directive: PayloadDirective, status: str | None, error: str | None, versions: str
) -> None:
    """
    `newPayload` must answer what the fixture expects. A refusal names the
    payload, the client's validation error and both implementations' versions:
    where the t8n and the client implement different versions of a fork's
    rules (an Amsterdam in flux), that is the difference to look at.
    """
    expected = directive.expected_status
    if status == expected:
        return
    if expected == ERROR:
        raise CheckFailed(
            f"{where}: {directive.method} returned status {status}, the fixture expects "
            f"JSON-RPC error {directive.error_code}"
        )
    wanted = f"INVALID ({directive.validation_error})" if directive.validation_error else expected
    raise CheckFailed(
        f"{where}: {directive.method} returned {status}{_with_reason(error)}, the fixture expects {wanted} ({versions})"
    )


def _check_forkchoice(where: str, directive: PayloadDirective, reply: Any) -> None:
    """The forkchoice update making the block head must be VALID."""
    status, error = _status_of(reply.get("payloadStatus") if isinstance(reply, dict) else None)
    if status != VALID:
        raise CheckFailed(
            f"{where}: engine_forkchoiceUpdatedV{directive.forkchoice_updated_version} to "
            f"{directive.block_hash} returned {status}{_with_reason(error)}"
        )


def benchmark_executions(benchmark: PayloadDirective, options: ReplayOptions) -> tuple[int, int]:
    """(executions, of which warmups) of the benchmark payload; see the module docstring."""
    if benchmark.expected_status != VALID:
        return 1, 0
    return options.warmup + options.repeat, options.warmup


def _result(
    ref: FixtureRef,
    genesis_hash: str,
    failure: str | None,
    *,
    test: ReplayTest | None = None,
    replay: _TestReplay | None = None,
    started: float | None = None,
    verdict: Verdict | None = None,
    mode: ClientMode | None = None,
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
        speedup_bound=None if test is None else test.speedup_bound,
        count_checks=[] if replay is None else replay.count_checks + replay.checked_counts,
        isolation=None if replay is None else replay.isolation,
        mode=None if mode is None else mode.name,
        mode_flags=[] if mode is None else list(mode.flags),
        mode_proof=[] if replay is None else list(replay.proof[0]),
        mode_unproven=[] if replay is None else list(replay.proof[1]),
        discarded=0 if replay is None else replay.discarded,
        agreement=None if replay is None else agreement_summary(replay.executions),
    )


def _reason(error: CheckFailed | RpcError) -> str:
    """A failed check's message, or the call a JSON-RPC error answered and the error."""
    if isinstance(error, RpcError):
        return f"{error.method or 'a call'} returned error {error.code}: {error.message}"
    return str(error)


def _guarded(replay: _TestReplay, step: Callable[[], T]) -> T | None:
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
        replay.failure = _reason(failure)
        return None


def rotated(items: Sequence[T], shift: int) -> list[T]:
    """`items` started at `shift` (modulo their count): the order of round `shift` of a modes run."""
    if not items:
        return []
    start = shift % len(items)
    return list(items[start:]) + list(items[:start])


def _run_rounds(replays: Sequence[_TestReplay]) -> None:
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
            replay.placement = (round_number, place) if len(replays) > 1 else None
            if _guarded(replay, replay.execute_once) is not False:  # True: enough executions; None: failed
                done.add(index)


def _run_steps(replays: Sequence[_TestReplay]) -> str | None:
    """
    The test's steps on its clients (one per mode); each replay's failure
    is in its `failure`. Returns why the group cannot go on, or None.
    `RpcTransportError` and `ClientLost` pass through.
    """
    for replay in replays:
        _guarded(replay, replay.run_setup)
    _run_rounds(replays)
    broken = None
    for replay in replays:
        _guarded(replay, replay.finish)
        if replay.pre_test is None:
            continue
        try:
            replay.rewind(*replay.pre_test)
        except (CheckFailed, RpcError) as rollback_failure:
            problem = f"rolling back to the pre-test head failed: {_reason(rollback_failure)}"
            replay.failure = problem if replay.failure is None else f"{replay.failure}; then {problem}"
            broken = problem
    return broken


ModeClient = tuple[ClientMode | None, ReplayClient]
"""A client serving a test, and the mode it runs in (None without `--modes`)."""


def replay_test(
    clients: Sequence[ModeClient],
    ref: FixtureRef,
    genesis_hash: str,
    options: ReplayOptions,
    observer: ReplayObserver,
) -> tuple[list[FixtureResult], str | None, bool]:
    """
    Run one test on each of `clients` (one per mode); return its results
    (one per mode), why the group cannot go on on these clients (None if it
    can), and whether a client itself was lost.
    """
    started = time.perf_counter()
    modes = [mode for mode, _ in clients]
    try:
        test = load_test(ref)
        problems = clients[0][1].config_problems(test)
    except BadInput as error:  # the file changed since discovery checked it
        return [_result(ref, genesis_hash, f"malformed fixture: {error}", mode=m) for m in modes], None, False
    if problems:
        return [_result(ref, genesis_hash, "; ".join(problems), test=test, mode=m) for m in modes], None, False
    total, _ = benchmark_executions(test.benchmark, options)
    replays = [_TestReplay(client, test, options, observer, mode) for mode, client in clients]
    total += len(test.rejected) * replays[0].rejection_executions()[0]
    observer.test_started(ref, sum(len(test.setup) + total + replay.intake_probes for replay in replays))
    lost = False
    broken: str | None = None
    try:
        broken = _run_steps(replays)
    except KeyboardInterrupt:  # the run stops, but what this test measured is kept
        for replay in replays:
            done = len(replay.executions)
            reason = f"interrupted after {done} of {len(test.setup) + total + replay.intake_probes} payload executions"
            observer.test_finished(_result(ref, genesis_hash, reason, test=test, replay=replay, started=started))
        raise
    except (RpcTransportError, ClientLost) as error:
        reason = str(error) if isinstance(error, ClientLost) else f"no answer from the client: {error}"
        tails = "\n".join(tail for _, client in clients if (tail := client.log_tail()))
        for replay in replays:
            replay.failure = replay.failure or reason + (f"\n{tails}" if tails else "")
        broken, lost = f"the client was lost during {ref.test_id}", True
    results = [
        _result(ref, genesis_hash, replay.failure, test=test, replay=replay, started=started).model_copy(
            update={"rollback_method": str(replay.client.rollback_method)}
        )
        for replay in replays
    ]
    return results, broken, lost


def genesis_failure(client: ReplayClient, group: ReplayGroup) -> str | None:
    """Why the client's genesis is not the group's, or None if it is."""
    try:
        block = client.rpc.get_block_by_number(0).result
    except RpcError as error:
        return f"genesis mismatch: {_reason(error)}"
    found = str(block.get("hash", "")).lower() if isinstance(block, dict) else ""
    if found == group.genesis.genesis_hash:
        return None
    reasons = [f"client genesis hash {found or None} is not the fixture's {group.genesis.genesis_hash}"]
    reasons += client.genesis_problems(group.genesis, block if isinstance(block, dict) else None)
    return "genesis mismatch: " + "; ".join(reasons)


@dataclass(frozen=True)
class GroupOutcome:
    """How a group's run on its clients ended."""

    stop: bool
    """`--fail-fast` and a test failed: the run ends here."""
    left: tuple[FixtureRef, ...] = ()
    """Tests not reported yet because a client was lost before them."""
    lost_reason: str | None = None
    """Why the client was lost, for the tests that no client runs."""


def _genesis_failures(clients: Sequence[ModeClient], group: ReplayGroup) -> str | None:
    """Why any client's genesis is not the group's (naming the mode in a modes run), or None."""
    for mode, client in clients:
        try:
            failure = genesis_failure(client, group)
        except RpcTransportError as error:
            failure = f"no answer from the client to the genesis check: {error}"
        if failure is not None:
            return failure if mode is None else f"mode {mode.name}: {failure}"
    return None


def replay_group(
    clients: ReplayClient | Sequence[ModeClient],
    group: ReplayGroup,
    options: ReplayOptions,
    observer: ReplayObserver,
) -> GroupOutcome:
    """
    Every test of a group on its clients (one, or one per mode), in order,
    until the run must stop (`--fail-fast`), or a client is lost (the tests
    after are handed back in `left`, unreported, for new clients or a
    not-run verdict).
    """
    pairs: Sequence[ModeClient] = clients if isinstance(clients, Sequence) else ((None, clients),)
    modes = [mode for mode, _ in pairs]
    for _, client in pairs:
        observer.group_started(group, client.client_version)
    stop_reason = _genesis_failures(pairs, group)
    verdict_of_rest = Verdict.FAILED
    for index, ref in enumerate(group.tests):
        lost = False
        if stop_reason is not None:
            results = [_result(ref, group.genesis.genesis_hash, stop_reason, verdict=verdict_of_rest, mode=m) for m in modes]
        else:
            results, broken, lost = replay_test(pairs, ref, group.genesis.genesis_hash, options, observer)
            if broken is not None:
                stop_reason, verdict_of_rest = f"not run: {broken}", Verdict.NOT_RUN
        for result in results:
            observer.test_finished(result)
        if options.fail_fast and not all(result.passed for result in results):
            return GroupOutcome(stop=True)
        if lost:
            return GroupOutcome(stop=False, left=group.tests[index + 1 :], lost_reason=stop_reason)
    return GroupOutcome(stop=False)


def _report_all(
    refs: Sequence[FixtureRef],
    genesis_hash: str,
    reason: str,
    verdict: Verdict,
    options: ReplayOptions,
    observer: ReplayObserver,
    modes: Sequence[ClientMode | None] = (None,),
) -> bool:
    """Report `refs` (in each mode) with one reason; False if `--fail-fast` stops the run."""
    for ref in refs:
        for mode in modes:
            observer.test_finished(_result(ref, genesis_hash, reason, verdict=verdict, mode=mode))
        if options.fail_fast:
            return False
    return True


ModeTarget = tuple[ClientMode | None, ReplayTarget]
"""Where the clients of one mode come from (None: a run without `--modes`)."""


def _replay_on_new_clients(
    targets: Sequence[ModeTarget], group: ReplayGroup, options: ReplayOptions, observer: ReplayObserver
) -> GroupOutcome:
    """
    The group's tests on clients opened for them, one per mode, all started
    before the first test and all released whatever happens (Ctrl-C too).
    """
    modes = [mode for mode, _ in targets]
    with contextlib.ExitStack() as stack:
        clients: list[ModeClient] = []
        for mode, target in targets:
            try:
                clients.append((mode, stack.enter_context(target.open(group.genesis))))
            except BadInput as error:  # ClientError: the client could not be initialised or started
                reason = f"client could not start: {error}" if mode is None else f"mode {mode.name}: client could not start: {error}"
                go_on = _report_all(
                    group.tests, group.genesis.genesis_hash, reason, Verdict.FAILED, options, observer, modes
                )
                return GroupOutcome(stop=not go_on)
        return replay_group(clients, group, options, observer)


def replay_suite(
    suite: Suite,
    target: ReplayTarget | Sequence[ModeTarget],
    options: ReplayOptions,
    observer: ReplayObserver,
) -> RunState:
    """
    Every group of the suite, each on its own clients from `target` (one, or
    one per mode of a modes run). A client that cannot be started fails its
    group's tests, and the run goes on. A client lost in the middle of a
    group is replaced by a fresh one for the group's remaining tests when
    balgen starts the clients (see the module docstring); otherwise those
    tests are not run.
    """
    targets: Sequence[ModeTarget] = target if isinstance(target, Sequence) else ((None, target),)
    modes = [mode for mode, _ in targets]
    managed = all(each.kind == "managed" for _, each in targets)
    for group in suite.groups:
        tests = group.tests
        replacements = 0
        while tests:
            outcome = _replay_on_new_clients(targets, ReplayGroup(group.genesis, tests), options, observer)
            if outcome.stop:
                return RunState.STOPPED
            tests = outcome.left
            if tests and (not managed or replacements == MAX_CLIENT_REPLACEMENTS):
                reason = outcome.lost_reason or "not run: the client was lost"
                if replacements:
                    reason += f" (after {replacements} fresh clients)"
                if not _report_all(tests, group.genesis.genesis_hash, reason, Verdict.NOT_RUN, options, observer, modes):
                    return RunState.STOPPED
                tests = ()
            replacements += 1
    return RunState.COMPLETE
