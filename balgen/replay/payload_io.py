"""
One payload sent to a client and recorded: the `newPayload` (and where it applies the
`forkchoiceUpdated`), the checks of its answer, and the `Execution` kept of it with the client's own
timing and its disk reads.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..clients.modes import ClientMode
from ..clients.engine_client import RpcError
from ..clients.process_io import ProcessReads, process_reads
from ..clients.slow_block_log import ClientBlockTiming
from ..results.measurements import Execution, Role
from .client_chain import CheckFailed, ClientChain
from .discovery import ReplayTest, filled_with
from .engine_payloads import ERROR, VALID, PayloadDirective
from .disturbance import cpu_sample, disturbed, other_cpu_ms
from .options import ReplayObserver
from .rejections import reason_unchecked, rejection_reason_problem
from .targets import ReplayClient

OWN_TIMING_WAIT = 2.0
"""Seconds to wait for the client's log line of a block after its `newPayload` was answered (reth's
logger writes from its own thread)."""


def status_of(reply: Any) -> tuple[str | None, str | None]:
    """The `status` and `validationError` of a `PayloadStatusV1`, tolerating junk."""
    if not isinstance(reply, dict):
        return None, None
    error = reply.get("validationError")
    return reply.get("status"), None if error is None else str(error)


def with_reason(error: str | None) -> str:
    """`: error`, or nothing without one."""
    return f": {error}" if error else ""


def failure_reason(error: CheckFailed | RpcError) -> str:
    """A failed check's message, or the call a JSON-RPC error answered and the error."""
    if isinstance(error, RpcError):
        return f"{error.method or 'a call'} returned error {error.code}: {error.message}"
    return str(error)


def check_status(where: str, directive: PayloadDirective, status: str | None, error: str | None, versions: str) -> None:
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
        f"{where}: {directive.method} returned {status}{with_reason(error)}, the fixture expects {wanted} ({versions})"
    )


def check_forkchoice(where: str, directive: PayloadDirective, reply: Any) -> None:
    """The forkchoice update making the block head must be VALID."""
    status, error = status_of(reply.get("payloadStatus") if isinstance(reply, dict) else None)
    if status != VALID:
        raise CheckFailed(
            f"{where}: engine_forkchoiceUpdatedV{directive.forkchoice_updated_version} to "
            f"{directive.block_hash} returned {status}{with_reason(error)}"
        )


@dataclass(frozen=True)
class Sent:
    """What was sent: the payload, as what, and how it was prepared."""

    directive: PayloadDirective
    role: Role
    repetition: int
    known: bool
    """The client knew the block before it was sent (its answer is then no execution)."""
    preparation: tuple[bool, bool]
    """(client restarted, page cache dropped) before the send."""
    variant: int | None
    """The sibling sent (0: the fixture's own block); None for a payload that is no sibling."""
    other_cpu_ms: float | None = None
    """Other processes' CPU time while the `newPayload` ran (`disturbance.other_cpu_ms`)."""


class PayloadSender:
    """Sends one test's payloads to one client (in one mode) and keeps an `Execution` of each."""

    def __init__(
        self,
        client: ReplayClient,
        test: ReplayTest,
        observer: ReplayObserver,
        mode: ClientMode | None,
        disturbance_limit: float | None = None,
    ) -> None:
        self.client = client
        self.disturbance_limit = disturbance_limit
        """`--disturbance-limit`: percent of one core others may use during an execution."""
        self.test = test
        self.observer = observer
        self.mode = mode
        self.executions: list[Execution] = []
        self.count_checks: list[str] = []
        """What could not be checked and why (`FixtureResult.count_checks`)."""
        self.placement: tuple[int, int] | None = None
        """(round, place in the round) of the next benchmark execution in a modes run."""
        self.intake_ms: float | None = None
        """The client's intake of the benchmark payload, recorded with each benchmark execution once measured."""

    def send(
        self,
        directive: PayloadDirective,
        role: Role,
        repetition: int,
        *,
        restarted: bool,
        dropped: bool,
        forkchoice: bool = True,
        variant: int | None = None,
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
        chain = ClientChain(self.client.rpc)
        try:
            known = chain.is_known(directive.block_hash)
        except RpcError as error:
            raise CheckFailed(f"{where}: {failure_reason(error)}") from None
        if self.client.slow_blocks is not None:
            self.client.slow_blocks.skip_to_end()
        pid = self.client.process_id
        reads_before = None if pid is None else process_reads(pid)
        sent = Sent(directive, role, repetition, known, (restarted, dropped), variant)
        cpu_before = cpu_sample(pid)
        try:
            reply = self.client.engine.new_payload(directive.new_payload_version, directive.params)
        except RpcError as error:
            if directive.error_code is not None and error.code == directive.error_code:
                self.record(sent, ERROR, None, 0, None, None)
                return
            raise CheckFailed(f"{where}: {directive.method} returned error {error.code}: {error.message}") from None
        sent = dataclasses.replace(sent, other_cpu_ms=other_cpu_ms(cpu_before, cpu_sample(pid)))
        reads_after = None if pid is None else process_reads(pid)
        client_reads = None if reads_before is None or reads_after is None else reads_after - reads_before
        status, validation_error = status_of(reply.result)
        forkchoice_reply = None
        forkchoice_error = None
        if forkchoice and status == VALID and directive.expected_status == VALID:
            try:
                forkchoice_reply = self.client.engine.forkchoice_updated(
                    directive.forkchoice_updated_version, directive.block_hash
                )
            except RpcError as error:  # the payload executed: it is still recorded
                forkchoice_error = error
        forkchoice_ns = None if forkchoice_reply is None else forkchoice_reply.elapsed_ns
        self.record(sent, str(status), validation_error, reply.elapsed_ns, forkchoice_ns, client_reads)
        if known:
            raise CheckFailed(
                f"{where}: block {directive.block_hash} was already known to the client before "
                f"it was sent; its {status} after {reply.elapsed_ns / 1e6:.2f} ms is no execution"
            )
        check_status(where, directive, status, validation_error, self.versions())
        if directive.validation_error is not None:
            problem = rejection_reason_problem(self.client.client_version, directive.validation_error, validation_error)
            if problem is not None:
                raise CheckFailed(f"{where}: {problem} ({self.versions()})")
            unchecked = reason_unchecked(self.client.client_version, directive.validation_error)
            if unchecked is not None and unchecked not in self.count_checks:
                self.count_checks.append(unchecked)
        if forkchoice_error is not None:
            raise CheckFailed(f"{where}: {failure_reason(forkchoice_error)}")
        if forkchoice_reply is not None:
            check_forkchoice(where, directive, forkchoice_reply.result)

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
        return slow_blocks.timing_of(directive.block_hash, wait=OWN_TIMING_WAIT, needs_insert=self.client.logs_insertion)

    def record(
        self,
        sent: Sent,
        status: str,
        validation_error: str | None,
        new_payload_ns: int,
        forkchoice_updated_ns: int | None,
        client_reads: ProcessReads | None,
    ) -> None:
        """Keep one execution, how it was prepared (restarted, page cache dropped), and the client's own timing of it."""
        directive, role = sent.directive, sent.role
        restarted, dropped = sent.preparation
        benchmark = role not in (Role.SETUP, Role.INTAKE)
        placement = self.placement if benchmark else None
        execution = Execution(
            test_id=self.test.ref.test_id,
            role=role,
            repetition=sent.repetition,
            payload_index=directive.index,
            block_number=directive.block_number,
            block_hash=directive.block_hash,
            gas_used=directive.gas_used,
            transaction_count=directive.transaction_count,
            status=status,
            validation_error=validation_error,
            new_payload_ns=new_payload_ns,
            forkchoice_updated_ns=forkchoice_updated_ns,
            known_before_send=sent.known,
            restarted_before=restarted,
            page_cache_dropped=dropped,
            own_timing=self.own_timing(directive, role) if status == VALID else None,
            client_reads=client_reads,
            mode=None if self.mode is None else self.mode.name,
            variant=sent.variant if benchmark else None,
            round=None if placement is None else placement[0],
            order_in_round=None if placement is None else placement[1],
            intake_ms=self.intake_ms if benchmark else None,
            other_cpu_ms=sent.other_cpu_ms,
            disturbed=disturbed(sent.other_cpu_ms, new_payload_ns / 1e6, self.disturbance_limit) if benchmark else None,
        )
        self.executions.append(execution)
        self.observer.execution_done(execution)
