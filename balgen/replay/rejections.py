"""
Timing a client's rejection of a payload the fixture expects INVALID, like an execution.

A block whose access list lies must be executed before a client trusting
the list can refute it; how long that takes is what a lying proposer can
make every validator spend. The rejection is timed as the benchmark payload
is, warm-up and repeats, but a client remembers the blocks it rejected
(geth's `invalidTipsets`, reth's invalid-header cache) and answers a resend
from that memory without executing it. So before every execution after the
first the client is restarted, which forgets them (they are held in memory
only); its head stays at the block's parent, as a rejection does not move
it. A client balgen cannot restart (one the user runs) rejects each such
payload once, and the test says so.
"""

from __future__ import annotations

from typing import Protocol

from ..clients.kind import UncheckedReasons
from ..clients.kinds import kind_of_version
from ..results.measurements import Role
from .engine_payloads import PayloadDirective

NOT_REPEATED = (
    "time to reject measured once: the client cannot be restarted to forget the block it rejected, "
    "and it answers a resend from memory"
)


class RejectionReplay(Protocol):
    """What timing a rejection needs of the test's replay (`steps.TestReplay`)."""

    count_checks: list[str]

    def send(self, directive: PayloadDirective, role: Role, repetition: int, *, restarted: bool, dropped: bool) -> None:
        """Send one payload, record it and check its answer (INVALID, for the reason expected)."""

    def restart_client(self, number: int, block_hash: str) -> None:
        """Restart the client; its head must still be block `number` `block_hash`."""


def rejection_executions(warmup: int, repeat: int, can_restart: bool) -> tuple[int, int]:
    """(executions, of which warm-ups) of each timed rejection: as the benchmark payload's, or one."""
    return (warmup + repeat, warmup) if can_restart else (1, 0)


def time_rejections(
    replay: RejectionReplay, rejected: tuple[PayloadDirective, ...], executions: tuple[int, int]
) -> None:
    """Send each payload of `rejected` `executions` times (the first of them warm-ups), the client
    restarted before every send after the first so that each rejection is a true one."""
    total, warmups = executions
    if rejected and total == 1:
        replay.count_checks.append(NOT_REPEATED)
    for directive in rejected:
        parent = (directive.block_number - 1, directive.parent_hash)
        for repetition in range(total):
            if repetition:
                replay.restart_client(*parent)
            role = Role.REJECTION_WARMUP if repetition < warmups else Role.REJECTION
            replay.send(directive, role, repetition, restarted=bool(repetition), dropped=False)


def rejection_reason_problem(client_version: str | None, expected: str, answered: str | None) -> str | None:
    """
    Why the client's `validationError` is not one of the fixture's expected
    exceptions, or None. A client balgen does not know, or whose messages it
    does not map (`UncheckedReasons`), has its INVALID alone checked: that is
    said in the test's checks (`reason_unchecked`), not here.
    """
    names = [name.removeprefix("BlockException.") for name in expected.split("|")]
    kind = kind_of_version(client_version)
    if kind is None or isinstance(kind.rejection_reasons, UncheckedReasons):
        return None
    patterns = [kind.rejection_reasons[name] for name in names if name in kind.rejection_reasons]
    if not patterns:
        return None
    if any(pattern.search(answered or "") is not None for pattern in patterns):
        return None
    return f"rejected for {answered!r}, which {kind.name} says for none of {expected}"


def reason_unchecked(client_version: str | None, expected: str) -> str | None:
    """What the test's checks say where a rejection's reason is not checked (INVALID alone is), or None."""
    kind = kind_of_version(client_version)
    if kind is None:
        return f"rejection reason not checked: balgen does not know the client {client_version or '(no version)'!r}"
    if isinstance(kind.rejection_reasons, UncheckedReasons):
        return f"rejection reason not checked: {kind.rejection_reasons.why}"
    names = [name.removeprefix("BlockException.") for name in expected.split("|")]
    if not any(name in kind.rejection_reasons for name in names):
        return f"rejection reason not checked: {kind.name} has no pattern for {expected}"
    return None
