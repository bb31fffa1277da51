"""
A datadir copy is taken from a node that stopped cleanly, or from one that came back from its
datadir at the head it is copied for: after one unclean stop (the reth build here now and then
aborts when stopped seconds after it started, and often again right after) the restarted node must
show the same head before it is copied, whatever its second stop, and the node must show it again
after the copy. A node back at another head is never copied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from balgen.clients.kinds.reth import PRESET as RETH
from balgen.clients.process import UncleanStop
from balgen.replay.client_chain import RollbackFailed
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
