"""
A datadir copy is taken from a node that stopped cleanly, or from one that came back from its
datadir at the head it is copied for: after one unclean stop (the reth build here now and then
aborts when stopped seconds after it started, and often again right after) the restarted node must
show the same head before it is copied, whatever its second stop, and the node must show it again
after the copy. A node back at another head is never copied.

A `--cold` restart of reth goes on after an unclean stop when the node comes back at the expected
head (reth writes every block it makes head to disk), and fails in one line naming both heads when
it does not; geth's unclean stop is refused as before. A node whose memory grew past its preset's
bound (reth keeps every sibling in memory) is restarted at the next test's start.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from balgen.clients.kinds.geth import PRESET as GETH
from balgen.clients.kinds.reth import PRESET as RETH
from balgen.clients.process import ClientError, ClientProcess, UncleanStop
from balgen.replay.client_chain import RollbackFailed
from balgen.replay.positioning import Positioning
from balgen.replay.targets import _ManagedClient

BLOCK = "0x" + "ab" * 32


@dataclass
class FakeProcess:
    """A node whose first `unclean` stops exit with code -6, and whose head is `head`."""

    unclean: int
    head: str = BLOCK
    preset: object = RETH
    client_version: str = "reth/fake"
    log_path: str = "/dev/null"
    copies: list[str] = field(default_factory=list)

    def save_copy(self, name: str, accept_unclean: bool = False) -> None:
        if self.unclean:
            self.unclean -= 1
            if not accept_unclean:
                raise UncleanStop("reth exited with code -6 when asked to stop")
        self.copies.append(name)

    def has_copy(self, name: str) -> bool:
        return name in self.copies

    def rpc_client(self, timeout: float) -> object:
        block = {"hash": self.head, "number": "0x0"}
        return SimpleNamespace(get_block_by_number=lambda _: SimpleNamespace(result=block), close=lambda: None)

    def engine_client(self, timeout: float) -> object:
        return SimpleNamespace(close=lambda: None)


def test_one_unclean_stop_is_copied_again_after_the_head_is_checked() -> None:
    process = FakeProcess(unclean=1)
    _ManagedClient(process, 1.0, 1.0).remember(0, BLOCK)  # type: ignore[arg-type]
    assert process.copies == [BLOCK]


def test_a_second_unclean_stop_after_the_head_was_seen_on_restart_is_copied() -> None:
    process = FakeProcess(unclean=2)
    _ManagedClient(process, 1.0, 1.0).remember(0, BLOCK)  # type: ignore[arg-type]
    assert process.copies == [BLOCK] and process.unclean == 0


def test_a_node_at_another_head_after_the_copy_fails_the_copy() -> None:
    class MovingHead(FakeProcess):
        def save_copy(self, name: str, accept_unclean: bool = False) -> None:
            super().save_copy(name, accept_unclean)
            if accept_unclean:
                self.head = "0x" + "cd" * 32  # the datadir it came back from is not at the block

    with pytest.raises(RollbackFailed, match="after restarting after copying the datadir"):
        _ManagedClient(MovingHead(unclean=2), 1.0, 1.0).remember(0, BLOCK)  # type: ignore[arg-type]


def test_a_node_back_at_another_head_is_not_copied() -> None:
    process = FakeProcess(unclean=1, head="0x" + "cd" * 32)
    with pytest.raises(RollbackFailed, match="after restarting after an unclean stop"):
        _ManagedClient(process, 1.0, 1.0).remember(0, BLOCK)  # type: ignore[arg-type]
    assert process.copies == []


# -- --cold restarts ------------------------------------------------------------


def _restarted(preset: object, exit_code: int, monkeypatch: pytest.MonkeyPatch) -> tuple[ClientProcess, list[str]]:
    """A `ClientProcess` of `preset` whose node exits with `exit_code` when stopped; what `restart` did."""
    process = ClientProcess(preset, Path("/bin/true"), Path("/dev/null"))  # type: ignore[arg-type]
    steps: list[str] = []

    def stop() -> None:
        steps.append("stop")
        process.returncode = exit_code

    monkeypatch.setattr(process, "_stop_node", stop)
    monkeypatch.setattr(process, "_run_node", lambda keep_ports=False: steps.append("start"))
    monkeypatch.setattr(process, "log_tail", lambda lines=30: "(log)")
    return process, steps


def test_reth_aborting_when_stopped_is_started_again_for_its_head_to_be_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    process, steps = _restarted(RETH, -6, monkeypatch)
    assert process.restart() == -6
    assert steps == ["stop", "start"]


def test_geth_killed_when_stopped_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    process, steps = _restarted(GETH, -9, monkeypatch)
    with pytest.raises(ClientError, match=r"^geth did not shut down cleanly \(exit code -9\)"):
        process.restart()
    assert steps == ["stop"]


@dataclass
class RestartedProcess(FakeProcess):
    """A node whose stops exit with `stop_code` and that comes back at `head`."""

    stop_code: int = -6

    def restart(self) -> int:
        return self.stop_code


def test_a_cold_restart_after_an_unclean_stop_goes_on_at_the_expected_head() -> None:
    client = _ManagedClient(RestartedProcess(unclean=0), 1.0, 1.0)  # type: ignore[arg-type]
    Positioning(client, None).restart(0, BLOCK)  # type: ignore[arg-type]


def test_a_cold_restart_after_an_unclean_stop_at_another_head_is_one_line_naming_both() -> None:
    client = _ManagedClient(RestartedProcess(unclean=0, head="0x" + "cd" * 32), 1.0, 1.0)  # type: ignore[arg-type]
    with pytest.raises(RollbackFailed) as failure:
        Positioning(client, None).restart(0, BLOCK)  # type: ignore[arg-type]
    assert str(failure.value) == (
        f"after an unclean stop (exit code -6) and a restart the head is block 0 0x{'cd' * 32}, not block 0 {BLOCK}"
    )


# -- a node whose memory grew -----------------------------------------------------


@dataclass
class CountedRestarts(RestartedProcess):
    """A node at `head` whose restarts are counted, and whose process is this one (for its resident memory)."""

    restarts: int = 0
    pid: int = field(default_factory=os.getpid)

    def restart(self) -> int:
        self.restarts += 1
        return 0


def _start_point(process: CountedRestarts) -> tuple[int, str]:
    test = SimpleNamespace(payloads=[SimpleNamespace(block_number=1, parent_hash=BLOCK)])
    return Positioning(_ManagedClient(process, 1.0, 1.0), test).start_point()  # type: ignore[arg-type]


def test_a_node_past_its_memory_bound_is_restarted_at_the_next_test_start() -> None:
    grown = CountedRestarts(unclean=0, preset=dataclasses.replace(RETH, resident_restart_bytes=1))
    assert _start_point(grown) == (0, BLOCK) and grown.restarts == 1
    within = CountedRestarts(unclean=0)  # reth's own bound, 2 GiB: far above this test process
    assert _start_point(within) == (0, BLOCK) and within.restarts == 0
