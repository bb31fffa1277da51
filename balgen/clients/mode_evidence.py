"""
Proof from a client's own log that it ran a block in the mode it was asked
for: a flag the client ignores must not become a result.

What each client's log shows, and so its proof of each mode, is in its
module of `balgen/clients/kinds/` (`ClientKind.prove`); this module holds
what a proof is and how one switch is judged from a test's executions.
Only the benchmark block's sibling variants are judged: the fixture's own
block, sent first, runs on a cache its setup blocks warmed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class ModeNotInEffect(Exception):
    """The client's own log contradicts the mode it was started in."""


@dataclass(frozen=True)
class ModeProof:
    """What the client's log showed about a mode over a test's executions."""

    proven: tuple[str, ...]
    """What the log confirmed, e.g. `parallel execution off (reth: Executed block, 5 of 5)`."""
    unproven: tuple[str, ...]
    """What the log cannot show, and why."""


def judge(what: str, wanted: bool, seen: Sequence[bool | None], evidence: str) -> tuple[str | None, str | None]:
    """
    (proven, unproven) for one switch from what each execution's entry shows
    of it (None: it does not show it), or `ModeNotInEffect` naming the
    contradiction.
    """
    shown = [value for value in seen if value is not None]
    state = "on" if wanted else "off"
    if not shown:
        return None, f"{what} not shown ({evidence} absent in {len(seen)} executions)"
    against = sum(value != wanted for value in shown)
    if against:
        raise ModeNotInEffect(
            f"{what} should be {state}, but {evidence} says {'off' if wanted else 'on'} in {against} of {len(shown)} executions"
        )
    return f"{what} {state} ({evidence}, {len(shown)} of {len(seen)} executions)", None


def required(what: str, wanted: bool, seen: Sequence[bool | None], evidence: str) -> str:
    """
    What the log proved of one switch the client's log always shows (`judge`),
    or `ModeNotInEffect` naming the evidence missing when no execution showed it.
    """
    proven, missing = judge(what, wanted, seen, evidence)
    if proven is None:
        raise ModeNotInEffect(f"{what} {'on' if wanted else 'off'} not proven: {missing}")
    return proven
