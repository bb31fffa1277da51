"""
The client's intake of the benchmark payload (decoding, hashing, checks before its block timer
starts), measured by misnamed siblings it refuses at their block hash, so that the agreement check
allows for it (docs/replay.md, "The agreement check").
"""

from __future__ import annotations

import statistics
from typing import Protocol

from ..results.measurements import Execution, Role
from .agreement import AgreementPolicy
from .discovery import ReplayTest
from .engine_payloads import VALID, PayloadDirective
from .sibling_blocks import SiblingBlocks
from .targets import ReplayClient


class ProbeSender(Protocol):
    """Sends a payload and keeps its execution (`payload_io.PayloadSender`)."""

    executions: list[Execution]

    def send(self, directive: PayloadDirective, role: Role, repetition: int, *, restarted: bool, dropped: bool) -> None:
        """Send one payload, record it and check its answer."""


def intake_probe_count(test: ReplayTest, client: ReplayClient, agreement: AgreementPolicy) -> int:
    """
    How many intake probes go before the benchmark executions: the policy's count where the
    agreement will be checked (a run that only records it sends nothing but the fixture's
    payloads and their siblings) against an own time that starts after the intake. geth's
    slow-block `total_ms` does (`BlockLog.timer_after_intake`); reth's own time is its whole
    insertion, intake included, and its hash-mismatch refusal is no measure of it (140-600 ms at 30M and 60M, against
    4 ms of overhead over its insertion time), so reth is held to the plain margin.
    """
    block_log = None if client.kind is None else client.kind.block_log
    timer_after_intake = client.slow_blocks is not None and block_log is not None and block_log.timer_after_intake
    valid = test.benchmark.expected_status == VALID
    return agreement.intake_probes if valid and timer_after_intake else 0


def measure_intake(sender: ProbeSender, siblings: SiblingBlocks, probes: int) -> float:
    """
    The client's intake of the benchmark payload in ms: `probes` misnamed siblings
    (`SiblingBlocks.misnamed`), each refused at its block hash, their median time. The
    executions' agreement with the client's own block time allows for it, since the client's
    timer starts after the intake.
    """
    for number in range(1, probes + 1):
        sender.send(siblings.misnamed(number), Role.INTAKE, number - 1, restarted=False, dropped=False)
    times = [e.new_payload_ns for e in sender.executions if e.role is Role.INTAKE]
    return statistics.median(times) / 1e6
