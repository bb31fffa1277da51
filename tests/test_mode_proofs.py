"""
Proofs that cannot be fooled: each client's proof of each of its modes
accepts the logs of that mode and refuses the logs of every other mode.

The logs are real: tests/mode_logs/<client>-<mode>.log hold the block-log
lines geth-bal-switch and reth wrote in each mode, replaying 1M fixtures
(`scripts/record_mode_logs.py`; tests/mode_logs/README.md says with what).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from balgen.clients.kind import ClientKind, prove_mode
from balgen.clients.kinds import KINDS
from balgen.clients.mode_evidence import ModeNotInEffect

LOGS = Path(__file__).resolve().parent / "mode_logs"
PROVEN = [kind for kind in KINDS.values() if kind.prove is not None]
"""The clients whose log proves their modes."""
NOT_SHOWN = {("reth", "batch IO")}
"""What a client's log shows nothing of (docs/replay.md, "Proof that a mode took effect"): reth logs the
same lines with and without its BAL batch IO, even at debug level for every target (checked 2026-11-28),
so its `full` and `nobatchio` are told apart by nothing but their flags, and each proof says so."""


def recorded(kind: ClientKind, mode: str) -> list[str]:
    """The lines `kind` logged in `mode`."""
    return (LOGS / f"{kind.name}-{mode}.log").read_text().splitlines()


def test_every_client_with_a_proof_has_a_recording_of_every_mode() -> None:
    assert {kind.name for kind in PROVEN} == {"geth", "reth"}
    for kind in PROVEN:
        for mode in kind.modes:
            entries = kind.block_log.timings(recorded(kind, mode))  # type: ignore[union-attr]
            assert len(entries) >= 3, f"{kind.name} {mode}: {len(entries)} entries recorded"


@pytest.mark.parametrize(
    ("client", "mode", "logged_in"),
    [(kind.name, mode, other) for kind in PROVEN for mode in kind.modes for other in kind.modes],
)
def test_a_modes_proof_accepts_its_own_logs_and_refuses_every_other_modes(client: str, mode: str, logged_in: str) -> None:
    kind = KINDS[client]
    timings = kind.block_log.timings(recorded(kind, logged_in))  # type: ignore[union-attr]
    claimed, actual = kind.modes[mode].switches, kind.modes[logged_in].switches
    assert claimed is not None and actual is not None
    differing = {
        what for what, field in (("execution", "execution"), ("parallel execution", "parallel_execution"), ("batch IO", "batch_io"))
        if getattr(claimed, field) != getattr(actual, field)
    }  # fmt: skip
    if mode == logged_in:
        proof = prove_mode(kind, kind.modes[mode], timings)
        assert proof.proven and all(line.endswith(f" of {len(timings)} executions)") for line in proof.proven), proof
    elif differing <= {what for name, what in NOT_SHOWN if name == client}:
        proof = prove_mode(kind, kind.modes[mode], timings)
        assert all(any(line.startswith(what) and "does not show it" in line for line in proof.unproven) for what in differing)
    else:
        with pytest.raises(ModeNotInEffect, match=f"^mode {mode} "):
            prove_mode(kind, kind.modes[mode], timings)
