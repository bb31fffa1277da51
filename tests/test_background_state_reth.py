"""
A background state for reth: the JSON-lines dump `reth init-state` reads (its root line geth's, the
root reth computes from the accounts the same), and reth's datadir of a group over the state built
by reth's own genesis code, checked, cached by recipe and reth version and replayed into, in modes;
geth over the same state in modes too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from balgen.chain.background_state import built_state, states_folder
from balgen.chain.builder import genesis_header
from balgen.clients.kinds import reth
from balgen.clients.kinds.geth import empty_genesis
from balgen.ethereum.forks import AMSTERDAM
from balgen.model.state_recipe import PRESETS, parse_recipe
from balgen.plumbing.errors import BadInput
from balgen.plumbing.toolchain import EARLIER_AMSTERDAM_VERSION, release_bin, required_tool
from balgen.replay.discovery import discover

from in_process import balgen_in_process
from replay_runs import counted_node_starts, replayed_on_one_set_of_nodes

RECIPE = "accounts=2000,slots=4000"
WORKLOADS = "serial_chain-max or mixed_dep-max-group1"
COLD_WORKLOAD = "serial_chain-max"
"""Of `WORKLOADS`, the one the `--cold` replays take: a cold restart is the same whatever the block, and each costs
a node start (a reth start about 3 CPU-s)."""
EARLIER_EVM = release_bin(EARLIER_AMSTERDAM_VERSION) / "evm"
"""The reth of ../shared/clients implements go-ethereum v1.17.5's Amsterdam: its fixtures are filled with that t8n."""


def _balgen(*args: str | Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """`balgen ARGS` in the test process (no interpreter's imports), with `cache` as BALGEN_CACHE."""
    return balgen_in_process(*args, env={**os.environ, "BALGEN_CACHE": str(cache)})


def _reth() -> Path:
    return required_tool("reth", "make tools unpacks it")


def test_a_state_whose_reth_init_would_not_fit_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    # mainnet-tenth's whole-state genesis file is about 23 GB; reth's genesis code would hold it in
    # about 85 GB of memory, more than balgen may use on this machine (and on most).
    recipe = PRESETS["mainnet-tenth"].recipe
    assert 20e9 < reth.genesis_file_bytes(recipe) < 26e9
    with pytest.raises(BadInput, match=r"^background state seed=0,accounts=10000000,.*: reth init of it needs about \d+\.\d GB of memory"):
        reth.check_init_resources(recipe, tmp_path)
    assert list(tmp_path.iterdir()) == []
    reth.check_init_resources(parse_recipe(RECIPE), tmp_path)  # a small one fits
    # The group's workload slots are in the genesis file too: a billion of them would not fit either.
    with pytest.raises(BadInput, match=r"reth init of it needs about \d+\.\d GB of memory"):
        reth.check_init_resources(parse_recipe(RECIPE), tmp_path, workload_slots=10**9)


@pytest.mark.integration
def test_the_reth_dump_is_streamed_deterministic_and_reth_computes_the_root_geth_gives(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    dumps = [tmp_path / "one.jsonl", tmp_path / "two.jsonl"]
    for dump in dumps:
        completed = balgen_in_process(
            "state", "export", RECIPE, "--format", "reth-jsonl", "--output", dump, env={**os.environ, "BALGEN_CACHE": str(cache)}
        )
        assert completed.returncode == 0, completed.stderr
    assert dumps[0].read_bytes() == dumps[1].read_bytes()
    state = built_state(parse_recipe(RECIPE), RECIPE, empty_genesis(AMSTERDAM), cache)
    first, *accounts = dumps[0].read_text().splitlines()
    assert json.loads(first) == {"root": "0x" + state.state_root.hex()}
    assert len(accounts) == 2000 and len({json.loads(line)["address"] for line in accounts}) == 2000
    assert sum(len(json.loads(line).get("storage", {})) for line in accounts) == 4000
    # reth's init-state takes a dump at a block after the genesis only (`--without-evm` writes that
    # block's header, then the accounts, then recomputes the root from them): block 1 whose root is the dump's.
    header = tmp_path / "header.rlp"
    header.write_text(genesis_header(AMSTERDAM, state.state_root).model_copy(update={"number": 1}).rlp.hex())
    chain = tmp_path / "chain.json"
    chain.write_text(json.dumps(empty_genesis(AMSTERDAM)))
    completed = subprocess.run(
        [str(_reth()), "init-state", "--chain", str(chain), "--datadir", str(tmp_path / "reth"), "--without-evm",
         "--header", str(header), str(dumps[0]), "--log.file.max-files", "0", "--color", "never"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    assert f"Computed state root matches state root in state dump computed_state_root=0x{state.state_root.hex()}" in (
        completed.stdout + completed.stderr
    )


@pytest.fixture(scope="module")
def fills(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two workloads at 1M over the recipe: for reth (v1.17.5's Amsterdam) and for geth (the pinned t8n's)."""
    root = tmp_path_factory.mktemp("reth-state")
    outputs = {"reth": root / "for-reth", "geth": root / "for-geth"}
    for client, output in outputs.items():
        evm = ("--evm-bin", str(EARLIER_EVM)) if client == "reth" else ()
        completed = _balgen(
            "fill", *evm, "--state", RECIPE, "--gas-benchmark-values", "1", "-k", WORKLOADS, "--output", str(output),
            cache=root / "cache",
        )  # fmt: skip
        assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return outputs


def _replay(fixtures: Path, output: Path, *args: str) -> list[dict]:
    """
    `balgen replay` of the fixtures, which must pass, its tests. The agreement margin is only recorded:
    the datadir and the chain are tested here, the margin in test_replay_modes (on a loaded machine reth's
    overhead was seen past 10 ms + 10% of a 1M block's few ms).
    """
    completed = balgen_in_process(
        "replay", fixtures, *args, "--agreement", "record", "--output", output,
        env={**os.environ, "BALGEN_CACHE": str(fixtures.parent / "cache")},
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    return json.loads((output / "results.json").read_text())["tests"]


def _group(fixtures: Path):  # type: ignore[no-untyped-def]
    (genesis,) = [group.genesis for group in discover(fixtures).groups if group.genesis.background is not None]
    return genesis


@pytest.mark.integration
def test_reth_replays_over_the_background_state_from_a_datadir_it_built_itself_in_modes_cold(
    fills: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    reth builds the group's datadir over the state once, and each mode's node replays from its own copy.
    `--cold` restarts each mode's node before every measured execution; reth aborts when stopped now
    and then (exit code -6), and each restart goes on only where the node is back at the benchmark
    block's parent: here the setup block it made head and wrote to disk (`--setup blocks`). The cold run
    replays one of the group's two workloads (each reth restart is seconds of CPU); the warm one after it
    replays both, the second after the chain is rolled back from the first.
    """
    fixtures = fills["reth"]
    starts = counted_node_starts(monkeypatch)
    results = _replay(
        fixtures, tmp_path / "cold", "-k", COLD_WORKLOAD, "--client", "reth", "--modes", "sequential,full", "--cold",
        "--warmup", "0", "--repeat", "2",
    )  # fmt: skip
    # Every payload VALID and the head at lastblockhash, in each mode's own copy of the datadir.
    assert len(results) == 2 and {(result["mode"], result["verdict"]) for result in results} == {
        ("sequential", "passed"), ("full", "passed")
    }
    for result in results:
        measured = [e for e in result["executions"] if e["role"] == "measured"]
        assert len(measured) == 2 and all(e["restarted_before"] for e in measured)
        assert any(e["role"] == "setup" for e in result["executions"]), "the parent is a setup block, not the genesis"
    # Each mode's node started once and restarted before each measured execution, and no more: the test is
    # its group's last on that node, which is stopped after it, so no datadir copy is taken at the test's start
    # nor put back at its end (each a stop and a start of reth).
    assert starts == ["reth"] * 2 * (1 + 2), starts
    genesis = _group(fixtures)
    cached = states_folder(fixtures.parent / "cache") / f"reth-{reth.version_digest(_reth())}" / parse_recipe(RECIPE).hash
    (folder,) = cached.iterdir()
    record = json.loads((folder / reth.RECORD).read_text())
    # The genesis hash reth wrote is the fixtures': the record holds what was checked.
    assert folder.name == record["genesis-hash"] == genesis.genesis_hash
    assert record["recipe-hash"] == parse_recipe(RECIPE).hash
    # Built once: a second replay, warm, finds it (reth init is not run again, the datadir is the same files).
    inode = (folder / "datadir" / "db" / "mdbx.dat").stat().st_ino
    again = _replay(fixtures, tmp_path / "again", "--client", "reth", "--warmup", "0", "--repeat", "1")
    assert len(again) == 2 and {result["verdict"] for result in again} == {"passed"}
    assert (folder / "datadir" / "db" / "mdbx.dat").stat().st_ino == inode


@pytest.mark.integration
def test_geth_replays_over_the_background_state_in_modes_warm_and_cold(
    fills: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    Warm, both workloads of the group in each mode; cold, one of them (a restart per mode and measured
    execution); both on the same node per mode, each started once on its copy of the group's datadir.
    """
    fixtures = fills["geth"]
    monkeypatch.setenv("BALGEN_CACHE", str(fixtures.parent / "cache"))
    modes = ("--agreement", "record", "--modes", "sequential,full", "--warmup", "0", "--repeat", "1")
    warm, cold_run = replayed_on_one_set_of_nodes(
        (fixtures, "-k", WORKLOADS, *modes, "--output", tmp_path / "warm"),
        (fixtures, "-k", COLD_WORKLOAD, *modes, "--cold", "--output", tmp_path / "cold"),
    )
    for cold, results in ((False, warm), (True, cold_run)):
        assert len(results) == (2 if cold else 4) and {(result["mode"], result["verdict"]) for result in results} == {
            ("sequential", "passed"), ("full", "passed")
        }
        for result in results:
            measured = [e for e in result["executions"] if e["role"] == "measured"]
            assert [e["restarted_before"] for e in measured] == [bool(cold)]


@pytest.mark.integration
def test_a_reth_datadir_of_another_recipe_or_an_unfinished_one_is_never_used(
    fills: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    genesis = _group(fills["reth"])
    cache = tmp_path / "cache"
    monkeypatch.setenv("BALGEN_CACHE", str(cache))
    folder = states_folder(cache) / f"reth-{reth.version_digest(_reth())}" / parse_recipe(RECIPE).hash / genesis.genesis_hash
    # A finished-looking datadir whose record names another recipe, and what a killed build left.
    (folder / "datadir").mkdir(parents=True)
    (folder / reth.RECORD).write_text(json.dumps({"recipe-hash": parse_recipe("accounts=5").hash}))
    leftover = folder.parent / f".building-{genesis.genesis_hash[:18]}-999999999"
    (leftover / "datadir").mkdir(parents=True)
    built = _background_datadir(genesis)
    assert built == folder / "datadir" and (built / "db" / "mdbx.dat").is_file()
    assert json.loads((folder / reth.RECORD).read_text())["recipe-hash"] == parse_recipe(RECIPE).hash
    assert not leftover.exists()
    # A reth whose init fails leaves no folder that a later run takes for complete.
    failing = tmp_path / "reth"
    failing.write_text(f'#!/bin/sh\n[ "$1" = --version ] && exec {_reth()} --version\necho "init refused" >&2\nexit 3\n')
    failing.chmod(0o755)
    assert [path.name for path in folder.parent.iterdir()] == [folder.name]
    monkeypatch.setenv("BALGEN_CACHE", str(tmp_path / "other-cache"))
    with pytest.raises(BadInput, match="init refused"):
        _background_datadir(genesis, failing)
    assert list(states_folder(tmp_path / "other-cache").rglob(reth.RECORD)) == []
    assert list(states_folder(tmp_path / "other-cache").rglob(".building-*")) == []


def _background_datadir(genesis, binary: Path | None = None) -> Path:  # type: ignore[no-untyped-def]
    """reth's datadir of the group `genesis` (a discovered group over the background state), in BALGEN_CACHE."""
    return reth.background_datadir(genesis.background, AMSTERDAM, genesis.accounts(), genesis.genesis_hash, binary or _reth())


@pytest.mark.integration
def test_a_replay_interrupted_while_reth_builds_its_datadir_leaves_nothing_half_built(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    fixtures = tmp_path / "fixtures"
    completed = _balgen(
        "fill", "--evm-bin", str(EARLIER_EVM), "--state", "accounts=100k,slots=200k", "--gas-benchmark-values", "1",
        "-k", "serial_chain-max", "--output", str(fixtures), cache=cache,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    replay = subprocess.Popen(
        [sys.executable, "-m", "balgen.commands.main", "replay", str(fixtures), "--client", "reth",
         "--output", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, "BALGEN_CACHE": str(cache)},
    )  # fmt: skip
    assert replay.stderr is not None
    for line in replay.stderr:
        if line.rstrip().endswith(": reth init"):  # reth is writing the datadir
            break
    time.sleep(0.5)
    replay.send_signal(signal.SIGINT)
    _, stderr = replay.communicate(timeout=120)
    assert replay.returncode == 128 + signal.SIGINT, stderr[-2000:]
    reth_states = next(states_folder(cache).glob("reth-*"))
    assert list(reth_states.rglob(".building-*")) == []
    # Whatever is left is complete (reth init may have finished first): its record names the group.
    for record in reth_states.rglob(reth.RECORD):
        assert json.loads(record.read_text())["genesis-hash"] == record.parent.name


@pytest.mark.integration
def test_reth_init_writes_the_workload_slots_geths_overlay_and_the_fill_put_under_the_groups_contracts(
    tmp_path: Path,
) -> None:
    # `--setup genesis` puts the workloads' contracts and slots in the group's `pre`; with workload
    # slots each contract gets 256 more in its storage trie. reth's genesis file streams them from the
    # same generator as geth's overlay and the fill's roots: reth init must write the genesis the
    # fixtures chain from (background_datadir checks it), and reth must then accept every payload.
    recipe = f"{RECIPE},workload-slots=256"
    fixtures = tmp_path / "fixtures"
    completed = _balgen(
        "fill", "--evm-bin", str(EARLIER_EVM), "--setup", "genesis", "--state", recipe, "--gas-benchmark-values", "1",
        "-k", WORKLOADS, "--output", str(fixtures), cache=tmp_path / "cache",
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    results = _replay(fixtures, tmp_path / "replay", "--client", "reth", "--warmup", "0", "--repeat", "1")
    assert len(results) == 2 and {result["verdict"] for result in results} == {"passed"}
    cached = states_folder(tmp_path / "cache") / f"reth-{reth.version_digest(_reth())}" / parse_recipe(recipe).hash
    (folder,) = cached.iterdir()
    assert folder.name == _group(fixtures).genesis_hash
