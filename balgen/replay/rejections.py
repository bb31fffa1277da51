"""
Timing a client's rejection of a payload the fixture expects INVALID, like an execution.

A block whose access list lies must be executed before a client trusting
the list can refute it; how long that takes is what a lying proposer can
make every validator spend. The rejection is timed as the benchmark payload
is, warm-up and repeats, and on the same footing: a client remembers the
blocks it rejected after executing them (geth's `invalidTipsets`, reth's
invalid-header cache), by hash, and answers a resend from that memory. So
each execution after the first is a sibling of the lie (`sibling_blocks`):
the same transactions and the same lying list under another `extraData`,
a hash the client has not seen, on the same parent. The running client
executes and refutes it again, warm, as it then executes the valid block's
siblings. A lie refused at the block hash (a header committing to another
list than the payload carries) leaves no block to remember: it is sent
again as it is. With `--cold` the client is restarted before each measured
rejection, as before each measured execution of the valid block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..clients.kind import UncheckedReasons
from ..clients.kinds import kind_of_version
from ..results.measurements import Role
from .engine_payloads import PayloadDirective
from .sibling_blocks import ClaimsAnotherHash, SiblingBlocks, UnknownPayloadShape

NOT_REPEATED = (
    "time to reject measured once: no sibling of the lie can be made ({problem}), "
    "and a client answers a resend from memory"
)


class RejectionReplay(Protocol):
    """What timing a rejection needs of the test's replay (`steps.TestReplay`)."""

    count_checks: list[str]

    def send(self, directive: PayloadDirective, role: Role, repetition: int, *, restarted: bool, dropped: bool) -> None:
        """Send one payload, record it and check its answer (INVALID, for the reason expected)."""

    def restart_client(self, number: int, block_hash: str) -> None:
        """Restart the client; its head must still be block `number` `block_hash`."""


@dataclass(frozen=True)
class Resent:
    """A lie refused at its block hash, which every execution sends again as it is."""

    directive: PayloadDirective

    def variant(self, number: int) -> PayloadDirective:
        """The lie itself, whatever the execution: the client keeps no block of it."""
        return self.directive


def resendable(directive: PayloadDirective) -> SiblingBlocks | Resent | str:
    """
    How the executions of the lie `directive` after the first are sent:
    siblings of it, the lie itself when the block hash refutes it, or why
    neither can be (a payload whose header balgen cannot rebuild).
    """
    try:
        return SiblingBlocks.of(directive)
    except ClaimsAnotherHash:
        return Resent(directive)
    except UnknownPayloadShape as error:
        return str(error)


def rejection_executions(warmup: int, repeat: int) -> tuple[int, int]:
    """(executions, of which warm-ups) of each timed rejection: as the benchmark payload's."""
    return warmup + repeat, warmup


def time_rejections(
    replay: RejectionReplay, rejected: tuple[PayloadDirective, ...], executions: tuple[int, int], *, cold: bool
) -> None:
    """Send each payload of `rejected` `executions` times (the first of them warm-ups), each execution
    after the first a block the client has not seen, and with `cold` each measured one on a restarted client."""
    for directive in rejected:
        sends = resendable(directive)
        total, warmups = executions
        if isinstance(sends, str):
            replay.count_checks.append(NOT_REPEATED.format(problem=sends))
            sends, total, warmups = Resent(directive), 1, 0
        parent = (directive.block_number - 1, directive.parent_hash)
        for repetition in range(total):
            role = Role.REJECTION_WARMUP if repetition < warmups else Role.REJECTION
            restarted = cold and role is Role.REJECTION
            if restarted:
                replay.restart_client(*parent)
            replay.send(sends.variant(repetition), role, repetition, restarted=restarted, dropped=False)


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
