"""
The replay itself: every test of every genesis group, sent to a client
through the Engine API, checked, and timed.

Per test:

1. The client's head must be the parent of the test's first payload; a
   head above it (a previous test, a previous run) is rewound first.
2. The setup payloads go in, each `newPayload` then `forkchoiceUpdated`.
3. The benchmark payload (the last one) is executed `warmup + repeat`
   times: between executions the chain is rewound to its parent with
   `debug_setHead` and the head verified, so every execution is a true one.
   Before every send `eth_getBlockByHash` must not know the block: a
   client answers a known block with VALID at once, without executing it,
   and such an answer is flagged. With `--cold` the client is restarted
   before each measured execution, with `--drop-caches` the OS page cache
   is dropped right before it. `--repeat N` measures N times; `--repeat
   auto` until the median is known well enough (`repeat_policy`).
4. The chain is rewound to the pre-test head and verified, so the next
   test starts where it should.

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
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..chain.header import has_block_access_list
from ..clients.block_counts import counter
from ..clients.client_process import ClientError
from ..clients.engine_client import RpcError, RpcTransportError
from ..clients.process_io import ProcessReads, process_reads
from ..plumbing.errors import BadInput
from ..ethereum.forks import fork_by_name
from ..results.confidence import median_interval
from ..results.measurements import Execution, Role, benchmark_statistics, rejection_statistics
from ..results.repeat_policy import DEFAULT_TARGET_WIDTH, RepeatPolicy, RepeatStop
from ..results.schema import FixtureResult, RunState, Verdict
from .client_chain import CheckFailed, ClientChain, RollbackFailed, block_label
from .expected_counts import Expectation, count_mismatches, expected_counts
from .discovery import FixtureRef, ReplayGroup, ReplayTest, Suite, filled_with, load_test
from .page_cache import drop_page_cache
from .engine_payloads import ERROR, VALID, PayloadDirective
from .rejections import rejection_executions, rejection_reason_problem, time_rejections
from .targets import ReplayClient, ReplayTarget


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
    """One test on one client (see the module docstring for the steps)."""

    def __init__(
        self,
        client: ReplayClient,
        test: ReplayTest,
        options: ReplayOptions,
        observer: ReplayObserver,
    ) -> None:
        self.client = client
        self.test = test
        self.options = options
        self.observer = observer
        self.executions: list[Execution] = []
        self.repeat_stop: RepeatStop | None = None
        self.count_checks: list[str] = []
        """What could not be checked and why."""
        self.checked_counts: list[str] = []
        """The counters checked on the last measured execution, with their ranges."""
        self.expectations = self._expectations()

    def _expectations(self) -> tuple[Expectation, ...]:
        """geth's counters to check (none for a client without a slow-block log)."""
        if self.client.slow_blocks is None:
            return ()
        try:
            parallel = has_block_access_list(fork_by_name(self.test.network))
        except BadInput:  # a network balgen has no fork for: the client's config decides
            parallel = True
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

    def run_payloads(self, pre_test: tuple[int, str]) -> None:
        """Setup payloads once, then the benchmark payload's executions."""
        self.remember(*pre_test)
        for directive in self.test.setup:
            self.send(directive, Role.SETUP, 0, restarted=False, dropped=False)
        time_rejections(self, self.test.rejected, self.rejection_executions())
        benchmark = self.test.benchmark
        _, warmups = benchmark_executions(benchmark, self.options)
        policy = self.options.policy if benchmark.expected_status == VALID else RepeatPolicy(count=1)
        parent = (benchmark.block_number - 1, benchmark.parent_hash)
        if warmups + policy.most > 1:
            self.remember(*parent)
        measured: list[float] = []
        for repetition in itertools.count():
            role = Role.WARMUP if repetition < warmups else Role.MEASURED
            restarted = bool(repetition) and self.rewind(*parent)
            if self.options.cold and role is Role.MEASURED and not restarted:
                self.restart_client(*parent)
                restarted = True
            dropped = self.options.drop_caches and role is Role.MEASURED
            if dropped:
                try:
                    drop_page_cache()
                except OSError as error:  # permitted at the start; refused now (e.g. a lost privilege)
                    raise CheckFailed(f"dropping the page cache failed: {error}") from None
            self.send(benchmark, role, repetition, restarted=restarted, dropped=dropped)
            self.check_last_block(role, repetition)
            if role is Role.MEASURED:
                self.check_counts(self.executions[-1], repetition)
                measured.append(self.executions[-1].new_payload_ns)
                self.repeat_stop = policy.stop(measured)
                if self.repeat_stop is not None:
                    return

    def rejection_executions(self) -> tuple[int, int]:
        """(executions, of which warm-ups) of each payload whose rejection is timed (`rejections`)."""
        return rejection_executions(self.options.warmup, self.options.repeat, self.client.can_restart)

    def check_counts(self, execution: Execution, repetition: int) -> None:
        """geth's counters of a measured execution must be where the workload model puts them."""
        counts = None if execution.geth is None else execution.geth.counts
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

    def send(self, directive: PayloadDirective, role: Role, repetition: int, *, restarted: bool, dropped: bool) -> None:
        """Send one payload (and make it head if valid), record it, check it."""
        where = f"payload {directive.index} (block {directive.block_number})"
        if role is not Role.SETUP:
            where += f", {role.value} execution {repetition + 1}"
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
        forkchoice = None
        forkchoice_error = None
        if status == VALID and directive.expected_status == VALID:
            try:
                forkchoice = self.client.engine.forkchoice_updated(
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
            None if forkchoice is None else forkchoice.elapsed_ns,
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
        if forkchoice_error is not None:
            raise CheckFailed(f"{where}: {_reason(forkchoice_error)}")
        if forkchoice is not None:
            _check_forkchoice(where, directive, forkchoice.result)

    def versions(self) -> str:
        """Who filled the fixture and who executes it, for a refusal."""
        filled_by = filled_with(self.test.ref) or "an unnamed t8n"
        return f"fixture filled by {filled_by}, client {self.client.client_version or 'of unknown version'}"

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
        """Keep one execution, how it was prepared (restarted, page cache dropped), and geth's own timing of it."""
        restarted, dropped = preparation
        slow_blocks = self.client.slow_blocks
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
            geth=None if slow_blocks is None else slow_blocks.timing_of(directive.block_hash),
            client_reads=client_reads,
        )
        self.executions.append(execution)
        self.observer.execution_done(execution)


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
) -> FixtureResult:
    """A test's result from what it did."""
    benchmark = None if test is None else test.benchmark
    executions = () if replay is None else replay.executions
    measured_ns = [e.new_payload_ns for e in executions if e.role is Role.MEASURED]
    interval = median_interval(measured_ns)
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
    )


def _reason(error: CheckFailed | RpcError) -> str:
    """A failed check's message, or the call a JSON-RPC error answered and the error."""
    if isinstance(error, RpcError):
        return f"{error.method or 'a call'} returned error {error.code}: {error.message}"
    return str(error)


def _run_steps(replay: _TestReplay) -> tuple[str | None, str | None]:
    """
    The test's steps on its client: (why it failed or None, why the group
    cannot go on or None). `RpcTransportError` and `ClientLost` pass through.
    """
    try:
        pre_test = replay.start_point()
    except (CheckFailed, RpcError) as start_failure:
        return _reason(start_failure), None
    failure = None
    try:
        replay.run_payloads(pre_test)
    except (CheckFailed, RpcError) as check_failure:
        failure = _reason(check_failure)
    try:
        replay.rewind(*pre_test)
    except (CheckFailed, RpcError) as rollback_failure:
        broken = f"rolling back to the pre-test head failed: {_reason(rollback_failure)}"
        return (broken if failure is None else f"{failure}; then {broken}"), broken
    return failure, None


def replay_test(
    client: ReplayClient,
    ref: FixtureRef,
    genesis_hash: str,
    options: ReplayOptions,
    observer: ReplayObserver,
) -> tuple[FixtureResult, str | None, bool]:
    """
    Run one test; return its result, why the group cannot go on on this
    client (None if it can), and whether the client itself was lost.
    """
    started = time.perf_counter()
    try:
        test = load_test(ref)
        problems = client.config_problems(test)
    except BadInput as error:  # the file changed since discovery checked it
        return _result(ref, genesis_hash, f"malformed fixture: {error}"), None, False
    if problems:
        return _result(ref, genesis_hash, "; ".join(problems), test=test), None, False
    total, _ = benchmark_executions(test.benchmark, options)
    replay = _TestReplay(client, test, options, observer)
    total += len(test.rejected) * replay.rejection_executions()[0]
    observer.test_started(ref, len(test.setup) + total)
    lost = False
    try:
        failure, broken = _run_steps(replay)
    except KeyboardInterrupt:  # the run stops, but what this test measured is kept
        done = len(replay.executions)
        reason = f"interrupted after {done} of {len(test.setup) + total} payload executions"
        observer.test_finished(_result(ref, genesis_hash, reason, test=test, replay=replay, started=started))
        raise
    except (RpcTransportError, ClientLost) as error:
        reason = str(error) if isinstance(error, ClientLost) else f"no answer from the client: {error}"
        tail = client.log_tail()
        failure = reason + (f"\n{tail}" if tail else "")
        broken, lost = f"the client was lost during {ref.test_id}", True
    result = _result(ref, genesis_hash, failure, test=test, replay=replay, started=started)
    return result.model_copy(update={"rollback_method": str(client.rollback_method)}), broken, lost


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
    """How a group's run on one client ended."""

    stop: bool
    """`--fail-fast` and a test failed: the run ends here."""
    left: tuple[FixtureRef, ...] = ()
    """Tests not reported yet because the client was lost before them."""
    lost_reason: str | None = None
    """Why the client was lost, for the tests that no client runs."""


def replay_group(
    client: ReplayClient,
    group: ReplayGroup,
    options: ReplayOptions,
    observer: ReplayObserver,
) -> GroupOutcome:
    """
    Every test of a group on one client, in order, until the run must stop
    (`--fail-fast`), or the client is lost (the tests after are handed back
    in `left`, unreported, for a new client or a not-run verdict).
    """
    observer.group_started(group, client.client_version)
    try:
        stop_reason = genesis_failure(client, group)
    except RpcTransportError as error:
        stop_reason = f"no answer from the client to the genesis check: {error}"
    verdict_of_rest = Verdict.FAILED
    for index, ref in enumerate(group.tests):
        lost = False
        if stop_reason is not None:
            result = _result(ref, group.genesis.genesis_hash, stop_reason, verdict=verdict_of_rest)
        else:
            result, broken, lost = replay_test(client, ref, group.genesis.genesis_hash, options, observer)
            if broken is not None:
                stop_reason, verdict_of_rest = f"not run: {broken}", Verdict.NOT_RUN
        observer.test_finished(result)
        if options.fail_fast and not result.passed:
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
) -> bool:
    """Report `refs` with one reason; False if `--fail-fast` stops the run."""
    for ref in refs:
        observer.test_finished(_result(ref, genesis_hash, reason, verdict=verdict))
        if options.fail_fast:
            return False
    return True


def _replay_on_new_client(
    target: ReplayTarget, group: ReplayGroup, options: ReplayOptions, observer: ReplayObserver
) -> GroupOutcome:
    """The group's tests on a client opened for them, and released whatever happens."""
    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(target.open(group.genesis))
        except BadInput as error:  # ClientError: the client could not be initialised or started
            reason = f"client could not start: {error}"
            go_on = _report_all(group.tests, group.genesis.genesis_hash, reason, Verdict.FAILED, options, observer)
            return GroupOutcome(stop=not go_on)
        return replay_group(client, group, options, observer)


def replay_suite(
    suite: Suite, target: ReplayTarget, options: ReplayOptions, observer: ReplayObserver
) -> RunState:
    """
    Every group of the suite, each on its own client from `target`. A client
    that cannot be started fails its group's tests, and the run goes on. A
    client lost in the middle of a group is replaced by a fresh one for the
    group's remaining tests when balgen starts the clients (see the module
    docstring); otherwise those tests are not run.
    """
    for group in suite.groups:
        tests = group.tests
        replacements = 0
        while tests:
            outcome = _replay_on_new_client(target, ReplayGroup(group.genesis, tests), options, observer)
            if outcome.stop:
                return RunState.STOPPED
            tests = outcome.left
            if tests and (target.kind != "managed" or replacements == MAX_CLIENT_REPLACEMENTS):
                reason = outcome.lost_reason or "not run: the client was lost"
                if replacements:
                    reason += f" (after {replacements} fresh clients)"
                if not _report_all(tests, group.genesis.genesis_hash, reason, Verdict.NOT_RUN, options, observer):
                    return RunState.STOPPED
                tests = ()
            replacements += 1
    return RunState.COMPLETE
