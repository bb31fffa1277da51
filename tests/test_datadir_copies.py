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

A second geth of a genesis in one process starts from the files the first one's `geth init` wrote,
kept in memory (`clients.initialised_datadirs`), and has the genesis the init gives.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from balgen.chain.builder import genesis_header
from balgen.clients import process
from balgen.clients.initialised_datadirs import InitialisedDatadirs, init_key, read_datadir, write_datadir
from balgen.clients.kinds.geth import PRESET as GETH, empty_genesis
from balgen.clients.kinds.reth import PRESET as RETH
from balgen.clients.process import ClientError, ClientProcess, UncleanStop
from balgen.ethereum.chain_constants import EMPTY_TRIE_ROOT
from balgen.ethereum.forks import AMSTERDAM
from balgen.plumbing.toolchain import pinned_geth
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


# -- a node of a genesis already initialised in this process ---------------------------------------


@pytest.mark.integration
@pytest.mark.skipif(not pinned_geth().is_file(), reason="pinned geth not built")
def test_a_second_geth_of_a_genesis_starts_from_the_files_the_first_ones_init_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    genesis = tmp_path / "genesis.json"
    genesis.write_text(json.dumps(empty_genesis(AMSTERDAM)))
    monkeypatch.setattr(process, "INITIALISED", InitialisedDatadirs())  # none kept by earlier tests
    inits: list[Path] = []
    run_init = ClientProcess._run_init

    def counted(node: ClientProcess, init_command: str) -> None:
        inits.append(node.datadir)
        run_init(node, init_command)

    monkeypatch.setattr(ClientProcess, "_run_init", counted)
    hashes = []
    for _ in range(2):  # each node stopped once it answered: a geth that lives on costs its KZG set-up
        with ClientProcess(GETH, pinned_geth(), genesis, temp_parent=tmp_path) as geth, geth.rpc_client() as rpc:
            hashes.append(rpc.get_block_by_number(0).result["hash"])
    assert len(inits) == 1, "geth init ran for the first node only"
    assert hashes == ["0x" + genesis_header(AMSTERDAM, EMPTY_TRIE_ROOT).hash.hex()] * 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["genesis.json"], "nothing of either node is left"


def test_kept_files_are_written_back_with_their_folders_and_modes_and_a_datadir_past_the_bound_is_not_kept(
    tmp_path: Path,
) -> None:
    source = tmp_path / "source"
    (source / "geth" / "chaindata" / "ancient").mkdir(parents=True)
    (source / "keystore").mkdir(mode=0o700)
    (source / "geth" / "chaindata" / "000001.log").write_bytes(b"\x00" * 100)
    (source / "geth" / "LOCK").write_bytes(b"")
    (source / "geth" / "LOCK").chmod(0o600)
    kept = read_datadir(source, limit=100)
    assert kept is not None and kept.size == 100
    copy = tmp_path / "copy"
    copy.mkdir()
    write_datadir(kept, copy)
    listing = lambda root: sorted((str(p.relative_to(root)), p.stat().st_mode, p.is_file() and p.read_bytes()) for p in root.rglob("*"))  # noqa: E731
    assert listing(copy) == listing(source)
    assert read_datadir(source, limit=99) is None, "past the bound: not kept"
    datadirs = InitialisedDatadirs(limit=150)
    datadirs.keep("a", source)
    datadirs.keep("b", source)  # 50 bytes left of the bound: not kept
    (tmp_path / "from-a").mkdir()
    (tmp_path / "from-b").mkdir()
    assert datadirs.put_into("a", tmp_path / "from-a") and listing(tmp_path / "from-a") == listing(source)
    assert not datadirs.put_into("b", tmp_path / "from-b") and list((tmp_path / "from-b").iterdir()) == []


def test_an_init_is_reused_only_for_the_same_command_binary_and_genesis(tmp_path: Path) -> None:
    (tmp_path / "geth").write_bytes(b"one build")
    (tmp_path / "other-geth").write_bytes(b"another build")
    (tmp_path / "genesis.json").write_text('{"alloc": {}}')
    (tmp_path / "other.json").write_text('{"alloc": {} }')
    key = init_key(GETH.init_command or "", tmp_path / "geth", tmp_path / "genesis.json")
    assert key == init_key(GETH.init_command or "", tmp_path / "geth", tmp_path / "genesis.json")
    assert len({
        key,
        init_key(GETH.init_command or "", tmp_path / "geth", tmp_path / "other.json"),
        init_key(GETH.init_command or "", tmp_path / "other-geth", tmp_path / "genesis.json"),
        init_key("{bin} init --datadir {datadir} {genesis}", tmp_path / "geth", tmp_path / "genesis.json"),
    }) == 4  # fmt: skip
