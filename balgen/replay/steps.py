"""
One test on one client (one mode of a modes run): its setup, the benchmark payload's executions, the
final checks (head, agreement, counters, mode proof), each concern in its own module.
"""

from __future__ import annotations

from ..chain.header import has_block_access_list
from ..clients.block_counts import counter
from ..clients.modes import ClientMode
from ..clients.engine_client import RpcError, RpcTransportError
from ..clients.kind import prove_mode
from ..clients.mode_evidence import ModeNotInEffect
from ..ethereum.forks import fork_by_name
from ..plumbing.errors import BadInput
from ..results.measurements import Execution, Role
from ..results.repeat_policy import RepeatStop
from .agreement import disagreement
from .client_chain import CheckFailed
from .cpu_placement import client_threads
from .discovery import ReplayTest
from .engine_payloads import VALID, PayloadDirective
from .expected_counts import Expectation, count_mismatches, expected_counts
from .intake import intake_probe_count, measure_intake
from .options import ReplayObserver, ReplayOptions
from .page_cache import drop_page_cache
from .payload_io import PayloadSender, check_forkchoice, failure_reason
from .positioning import ClientLost, Positioning
from .rejections import rejection_executions, time_rejections
from .rounds import Repetitions
from .sibling_blocks import SiblingBlocks, UnknownPayloadShape
from .targets import ReplayClient


class TestReplay:
    """One test on one client (one mode of a modes run); see `runner` for the steps."""

    __test__ = False  # not a pytest class

    def __init__(
        self,
        client: ReplayClient,
        test: ReplayTest,
        options: ReplayOptions,
        observer: ReplayObserver,
        mode: ClientMode | None = None,
        paired: bool = False,
        last_on_client: bool = False,
    ) -> None:
        self.client = client
        self.last_on_client = last_on_client
        """No test follows on this client, which balgen stops after this one: the way back to the test's start
        is neither kept nor taken (for a client rolled back from a datadir copy, two stops and starts saved)."""
        self.test = test
        self.options = options
        self.mode = mode
        self.sender = PayloadSender(client, test, observer, mode, options.disturbance_limit)
        self.position = Positioning(client, test)
        self.repetitions = Repetitions.of(test.benchmark, options, paired)
        self.client_threads: dict[str, str] | None = None
        """The client's cores and thread settings when the test started (`cpu_placement.client_threads`)."""
        self.checked_counts: list[str] = []
        """The counters checked on the last measured execution, with their ranges."""
        self.expectations = self._expectations()
        self.siblings: SiblingBlocks | None = None
        self.sibling_problem: str | None = None
        """Why no sibling of the benchmark block can be made: the test fails after its own block is sent."""
        self.pre_test: tuple[int, str] | None = None
        self.proof: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self.failure: str | None = None
        """Why this test failed on this client; it then takes no further part in the rounds."""
        self.lost = False
        """Whether this client stopped answering (or could not be rolled back or restarted) during the test."""

    def lose(self, error: RpcTransportError | ClientLost) -> None:
        """This client is lost: the test fails on it, with the end of its log; the other modes' clients go on."""
        reason = str(error) if isinstance(error, ClientLost) else f"no answer from the client: {error}"
        tail = self.client.log_tail()
        self.failure = self.failure or reason + (f"\n{tail}" if tail else "")
        self.lost = True

    @property
    def count_checks(self) -> list[str]:
        """What could not be checked and why (the payloads' own notes among them)."""
        return self.sender.count_checks

    @property
    def executions(self) -> list[Execution]:
        """Every payload sent for this test on this client, in order."""
        return self.sender.executions

    @property
    def repeat_stop(self) -> RepeatStop | None:
        """Why the measured executions ended (None before they did)."""
        return self.repetitions.stop

    @property
    def discarded(self) -> int:
        """Executions replaced by another sibling."""
        return self.repetitions.discarded

    @property
    def intake_ms(self) -> float | None:
        """The median time the client took to refuse the intake probes (`intake.measure_intake`)."""
        return self.sender.intake_ms

    def _expectations(self) -> tuple[Expectation, ...]:
        """geth's counters to check (none for a client without a slow-block log)."""
        if self.client.slow_blocks is None:
            return ()
        try:
            parallel = has_block_access_list(fork_by_name(self.test.network))
        except BadInput:  # a network balgen has no fork for: the client's config decides
            parallel = True
        if self.mode is not None and self.mode.switches is not None:
            # A block applied from its list without execution (executionless) is counted as on the BAL path.
            switches = self.mode.switches
            parallel = parallel and (switches.parallel_execution or not switches.execution)
        expectations = expected_counts(self.test.workload, parallel_execution=parallel)
        if parallel and expected_counts(self.test.workload, parallel_execution=False) != expectations:
            self.count_checks.append(
                "reads not checked: geth counts no reads of a block it executes in parallel from its access list"
                " or applies from it without execution"
            )
        return expectations

    @property
    def isolation(self) -> str:
        """How the benchmark payload's executions are kept true ones (`FixtureResult.isolation`)."""
        return "sibling_blocks" if self.test.benchmark.expected_status == VALID else "single_send"

    @property
    def checks_agreement(self) -> bool:
        """Whether the agreement is checked for this test: for sibling executions, as the policy says."""
        return self.siblings is not None and self.options.agreement.checked

    @property
    def intake_probes(self) -> int:
        """How many intake probes go before the benchmark executions (`intake.intake_probe_count`)."""
        return intake_probe_count(self.test, self.client, self.options.agreement)

    # -- the steps -------------------------------------------------------

    def run_setup(self) -> None:
        """Bring the head to the test's start, keep a way back to it, send the setup payloads."""
        self.client_threads = client_threads(self.client.process_id)
        self.pre_test = self.position.start_point()
        if not self.position.keeps_head and not self.last_on_client:
            self.position.remember(*self.pre_test)
        for directive in self.test.setup:
            self.send(directive, Role.SETUP, 0, restarted=False, dropped=False)
        time_rejections(self, self.test.rejected, self.rejection_executions(), cold=self.options.cold)
        if self.test.benchmark.expected_status == VALID:
            try:
                self.siblings = SiblingBlocks.of(self.test.benchmark)
            except UnknownPayloadShape as error:
                # The fixture's own block is sent first all the same: a client that refuses it (a wrong
                # block hash) names the fixture's fault better than balgen's rebuilt header can.
                self.sibling_problem = f"payload {self.test.benchmark.index}: no sibling can be made: {error}"
        if self.siblings is not None and self.intake_probes:
            self.sender.intake_ms = measure_intake(self.sender, self.siblings, self.intake_probes)

    def place(self, placement: tuple[int, int] | None) -> None:
        """(round, place in the round) of the next execution in a modes run."""
        self.sender.placement = placement

    def execute_once(self) -> bool:
        """
        One execution of the benchmark payload (a new sibling of the block);
        True when the test has all the executions it needs.
        """
        benchmark = self.test.benchmark
        repetitions = self.repetitions
        repetition, role = repetitions.repetition, repetitions.role
        restarted = False
        if self.options.cold and role is Role.MEASURED:
            self.restart_client(benchmark.block_number - 1, benchmark.parent_hash)
            restarted = True
        dropped = self.options.drop_caches and role is Role.MEASURED
        if dropped:
            try:
                drop_page_cache()
            except OSError as error:  # permitted at the start; refused now (e.g. a lost privilege)
                raise CheckFailed(f"dropping the page cache failed: {error}") from None
        directive = benchmark if self.siblings is None else self.siblings.variant(repetitions.next_variant)
        variant = None if self.siblings is None else repetitions.next_variant
        self.sender.send(
            directive, role, repetition, restarted=restarted, dropped=dropped, forkchoice=self.siblings is None, variant=variant
        )
        if self.sibling_problem is not None:
            raise CheckFailed(self.sibling_problem)
        repetitions.next_variant += 1
        execution = self.executions[-1]
        if self.siblings is not None and self.replaced(execution):
            self.executions[-1] = execution.model_copy(update={"role": Role.DISCARDED})
            repetitions.discarded += 1
            return False
        if role is Role.MEASURED:
            self.check_counts(execution, repetition)
            return repetitions.add_measured(execution.new_payload_ns)
        return False

    def replaced(self, execution: Execution) -> bool:
        """Whether another sibling takes `execution`'s place: it timed something else than the block
        (`agreement`) or other load disturbed it (`disturbance`), and replacements are left."""
        wrong = self.options.agreement.refuses(execution) or bool(execution.disturbed)
        return wrong and self.repetitions.may_replace(self.options.repeat)

    def finish(self) -> None:
        """
        The fixture's own block made head (`lastblockhash`), or where it is
        not (`Positioning.own_block_made_head`) checked by its VALID and its hash;
        the agreement checked; the mode proven from the client's log.
        """
        if self.siblings is None:
            self.position.check_last_block(Role.MEASURED.value, len(self.executions) - 1)
            return
        if self.position.own_block_made_head:
            benchmark = self.test.benchmark
            try:
                reply = self.client.engine.forkchoice_updated(benchmark.forkchoice_updated_version, benchmark.block_hash)
            except RpcError as error:
                raise CheckFailed(f"making the benchmark block head: {failure_reason(error)}") from None
            check_forkchoice(f"payload {benchmark.index} (block {benchmark.block_number})", benchmark, reply.result)
            self.position.check_last_block(Role.MEASURED.value, len(self.executions) - 1)
        else:
            self.position.check_own_block(next((e.status for e in self.executions if e.variant == 0), None))
        if self.checks_agreement and (problem := disagreement(self.executions, self.intake_ms)) is not None:
            raise CheckFailed(problem)
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
        return rejection_executions(self.options.warmup, self.options.repeat)

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

    # -- what timed rejections use (`rejections.RejectionReplay`) ---------

    def send(self, directive: PayloadDirective, role: Role, repetition: int, *, restarted: bool, dropped: bool) -> None:
        """Send one payload, record it and check its answer (`payload_io.PayloadSender.send`)."""
        self.sender.send(directive, role, repetition, restarted=restarted, dropped=dropped)

    def restart_client(self, number: int, block_hash: str) -> None:
        """Restart the client; its head must still be block `number` `block_hash`."""
        self.position.restart(number, block_hash)
