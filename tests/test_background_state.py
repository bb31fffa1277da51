"""
Background states built from a recipe into geth's database: geth opens one as its genesis, reports
the genesis hash balgen's header code gives, reads the generated accounts, slots and code, and
recomputes the same root from them; a state is built once and an unfinished or foreign build is
never taken for a finished one.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace

import pytest

from balgen.chain.background_state import (
    DATADIR, RECORD, built_state, overlay_accounts, state_build_tool, states_folder,
)
from balgen.chain.alloc import system_addresses
from balgen.chain.bal import iter_block_access_list
from balgen.chain.builder import genesis_header
from balgen.chain.state_roots import StateRoots, state_root_tool
from balgen.clients.kinds.geth import DATADIR_LINKABLE, PRESET as GETH, empty_genesis
from balgen.clients.kinds.besu import PRESET as BESU
from balgen.clients.process import ClientProcess, copy_datadir
from balgen.ethereum.forks import AMSTERDAM
from balgen.ethereum.keccak import keccak
from balgen.model.state_recipe import PRESETS, parse_recipe
from balgen.plumbing.errors import BadInput
from balgen.plumbing.toolchain import pinned_geth
from balgen.replay.discovery import discover
from balgen.replay.targets import ManagedClient

from in_process import balgen_in_process
from replay_runs import replayed_on_one_set_of_nodes

TINY = "accounts=2000,contracts=200,slots=20k,seed=3"


def numbers(*values: int) -> bytes:
    return b"".join(value.to_bytes(8, "big") for value in values)


def derived(domain: str, *values: int) -> bytes:
    """The generation rules of docs/state.md, written out again: keccak of a domain, the seed and the numbers."""
    return keccak(domain.encode() + numbers(*values))


def address(seed: int, index: int) -> str:
    return "0x" + derived("balgen/state/account", seed, index)[12:].hex()


def geth_on(datadir: Path, tmp_path: Path) -> ClientProcess:
    genesis = tmp_path / "genesis.json"  # not read: the datadir holds the genesis
    genesis.write_text(json.dumps(empty_genesis(AMSTERDAM)))
    return ClientProcess(
        GETH, pinned_geth(), genesis, prepared_datadir=datadir, linkable=DATADIR_LINKABLE, temp_parent=tmp_path
    )


CANONICAL_GENESIS_KEY = "0x" + (b"h" + (0).to_bytes(8, "big") + b"n").hex()
"""go-ethereum's database key of block 0's canonical hash (rawdb: `h`, the number, `n`)."""


def genesis_hash_geth_writes(genesis: Path, datadir: Path) -> str:
    """
    The genesis hash geth's own genesis code gives `genesis`: `geth init` of
    it as balgen's preset runs it, then the canonical hash of block 0 read
    back from the database it wrote (`geth db get`), without starting a node
    (whose KZG set-up alone is about 2.5 CPU-s).
    """
    init = subprocess.run(
        [str(pinned_geth()), "init", "--datadir", str(datadir), "--state.scheme", "path", str(genesis)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert init.returncode == 0, init.stderr[-2000:]
    read = subprocess.run(
        [str(pinned_geth()), "--datadir", str(datadir), "db", "get", CANONICAL_GENESIS_KEY], capture_output=True, text=True, timeout=120
    )
    assert read.returncode == 0, read.stderr[-2000:]
    (line,) = [line for line in (read.stdout + read.stderr).splitlines() if line.startswith(f"key {CANONICAL_GENESIS_KEY}: ")]
    return line.rsplit(" ", 1)[1]


def rpc(client: ClientProcess, method: str, *params: object) -> object:
    rpc_client = client.rpc_client()
    try:
        return rpc_client.call(method, params).result
    finally:
        rpc_client.close()


@pytest.mark.integration
def test_geth_opens_a_built_state_as_its_genesis_and_reads_what_the_recipe_generates(tmp_path: Path) -> None:
    recipe = parse_recipe(TINY)
    state = built_state(recipe, TINY, empty_genesis(AMSTERDAM), tmp_path / "cache")
    assert (state.record["accounts"], state.record["contracts"], state.record["slots"]) == (2000, 200, 20_000)
    assert genesis_header(AMSTERDAM, state.state_root).hash == state.genesis_hash
    with geth_on(state.datadir, tmp_path) as geth:
        genesis = rpc(geth, "eth_getBlockByNumber", "0x0", False)
        assert genesis["hash"] == "0x" + state.genesis_hash.hex()  # type: ignore[index]
        assert genesis["stateRoot"] == "0x" + state.state_root.hex()  # type: ignore[index]
        plain = 1999  # the contracts are accounts 0 to 199
        balance_word = derived("balgen/state/balance", 3, plain)
        assert int(rpc(geth, "eth_getBalance", address(3, plain), "0x0"), 16) == int.from_bytes(balance_word[2:14], "big")  # type: ignore[arg-type]
        assert int(rpc(geth, "eth_getTransactionCount", address(3, plain), "0x0"), 16) == int.from_bytes(balance_word[:2], "big") % 1024  # type: ignore[arg-type]
        slot = derived("balgen/state/slot", 3, 0, 0)
        hashed = keccak(slot)
        value = bytearray(hashed[: 1 + hashed[31] % 32])
        value[0] |= 1
        stored = rpc(geth, "eth_getStorageAt", address(3, 0), "0x" + slot.hex(), "0x0")
        assert int(stored, 16) == int.from_bytes(value, "big")  # type: ignore[arg-type]
        code = bytes.fromhex(rpc(geth, "eth_getCode", address(3, 0), "0x0")[2:])  # type: ignore[index]
        assert code[0] == 0 and 256 <= len(code) <= 8192
        assert code[1:32] == derived("balgen/state/code", 3, 0, 0)[1:]
    # geth's own check: the root recomputed from the flat state it reads (`snapshot verify-state`),
    # on a copy, since geth must never write into the cache.
    checked = tmp_path / "checked"
    copy_datadir(state.datadir, checked)
    verified = subprocess.run(
        [str(pinned_geth()), "--datadir", str(checked), "snapshot", "verify-state"], capture_output=True, text=True
    )
    assert verified.returncode == 0, verified.stderr[-2000:]
    assert "Verified the state" in verified.stderr and "accounts=2000 slots=20000" in verified.stderr


@pytest.mark.integration
def test_a_state_is_built_once_and_a_foreign_or_unfinished_build_is_never_used(tmp_path: Path) -> None:
    recipe, genesis, cache = parse_recipe(TINY), empty_genesis(AMSTERDAM), tmp_path / "cache"
    states = states_folder(cache)
    # What a killed build leaves, and a finished folder whose record names another recipe.
    (states / f".building-{recipe.hash}-1" / DATADIR).mkdir(parents=True)
    (states / recipe.hash / DATADIR).mkdir(parents=True)
    (states / recipe.hash / RECORD).write_text(json.dumps({"recipe-hash": parse_recipe("accounts=5").hash}))
    state = built_state(recipe, TINY, genesis, cache)
    assert state.record["recipe-hash"] == recipe.hash and state.record["accounts"] == 2000
    assert sorted(path.name for path in states.iterdir()) == [recipe.hash, f"{recipe.hash}.lock"]
    # Built once: a builder that refuses to build is never asked to.
    refusing = tmp_path / "refusing-builder"
    refusing.write_text(f'#!/bin/sh\n[ "$1" = --version ] && exec {state_build_tool()} --version\nexit 3\n')
    refusing.chmod(0o755)
    assert built_state(recipe, TINY, genesis, cache, tool=refusing).record == state.record
    with pytest.raises(BadInput, match="exit code 3"):
        built_state(parse_recipe("accounts=10"), "accounts=10", genesis, cache, tool=refusing)
    assert sorted(path.name for path in states.iterdir() if not path.name.endswith(".lock")) == [recipe.hash]


def _balgen_state(*args: str, cache: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "balgen.commands.main", "state", "build", *args, "--cache", str(cache)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.integration
def test_an_interrupted_build_leaves_nothing_behind(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    build = _balgen_state("accounts=1M,slots=2M", cache=cache)
    assert build.stderr is not None
    for line in build.stderr:
        if "sorted" in line:  # the builder is writing the database
            break
    time.sleep(1)
    build.send_signal(signal.SIGINT)
    _, stderr = build.communicate(timeout=120)
    assert build.returncode == 128 + signal.SIGINT
    assert stderr.strip().splitlines()[-1] == "balgen state: interrupted; the unfinished build was removed"
    left = [path.name for path in states_folder(cache).iterdir() if not path.name.endswith(".lock")]
    assert left == []


MILLION = "accounts=1M,contracts=1000,slots=10k,code_max=1024"
"""A state of `small`'s million accounts (issue 39: the tests build one of that size) but a hundredth of its
contracts, code and slots: the account trie is what a million proves, and the build takes a fifth of the CPU."""


@pytest.mark.integration
def test_a_state_of_a_million_accounts_builds_and_geth_starts_on_it(tmp_path: Path) -> None:
    build = balgen_in_process("state", "build", MILLION, "--cache", tmp_path / "cache")
    stdout = build.stdout
    assert build.returncode == 0, build.stderr[-2000:]
    assert PRESETS["small"].recipe.accounts == parse_recipe(MILLION).accounts
    folder = states_folder(tmp_path / "cache") / parse_recipe(MILLION).hash
    record = json.loads((folder / RECORD).read_text())
    assert (record["accounts"], record["contracts"], record["slots"]) == (1_000_000, 1000, 10_000)
    # A million random keys put every account at least six nodes below the root.
    assert min(depth for depth, count in enumerate(record["account-leaf-depths"]) if count) >= 6
    assert f"genesis hash   {record['genesis-hash']}" in stdout
    tables = {path.name: path.stat().st_ino for path in (folder / DATADIR).rglob("*.sst")}
    assert len(tables) > 10
    with geth_on(folder / DATADIR, tmp_path) as geth:
        assert rpc(geth, "eth_getBlockByNumber", "0x0", False)["hash"] == record["genesis-hash"]  # type: ignore[index]
        assert int(rpc(geth, "eth_getBalance", address(0, 999_999), "0x0"), 16) > 0  # type: ignore[arg-type]
        # geth's copy shares the built state's tables (hard links): the gigabytes are not copied.
        copied = _inodes(path for path in geth.datadir.rglob("*.sst") if path.name in tables)
        assert len(copied) > len(tables) / 2 and all(copied[name] == tables[name] for name in copied)


def _inodes(paths: Iterable[Path]) -> dict[str, int]:
    """Each file's inode by name, leaving out a file that is gone when looked at: the running geth's
    compaction removes tables while the folder is walked (CI, 2026-11-29: FileNotFoundError)."""
    found = {}
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            found[path.name] = path.stat().st_ino
    return found


def _fill(output: Path, cache: Path, *state: str) -> None:
    """`balgen fill` of `serial_chain-max` at 1M with `state`, in the test process (no interpreter's imports)."""
    completed = balgen_in_process(
        "fill", "--gas-benchmark-values", "1", "-k", "serial_chain-max", "--output", output, *state,
        env={**os.environ, "BALGEN_CACHE": str(cache)},
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]


def _fixture(path: Path) -> dict:
    (fixture,) = json.loads(path.read_text()).values()
    return fixture


ENGINE_X_FILE = "blockchain_tests_engine_x/for_amsterdam_at_0001M/serial_chain/serial_chain-max-1M.json"
ENGINE_FILE = "blockchain_tests_engine/for_amsterdam_at_0001M/serial_chain/serial_chain-max-1M.json"


@pytest.fixture(scope="module")
def fills(tmp_path_factory: pytest.TempPathFactory, serial_chain_fill: Path) -> dict[str, Path]:
    """
    The same fixture filled on today's genesis (the session's `serial_chain_fill`, the same command),
    over an empty background state and over a small one.
    """
    root = tmp_path_factory.mktemp("state-fills")
    outputs = {"plain": serial_chain_fill, "empty": root / "empty", "tiny": root / "tiny"}
    _fill(outputs["empty"], root / "cache", "--state", "accounts=0")
    _fill(outputs["tiny"], root / "cache", "--state", TINY)
    return outputs


@pytest.mark.integration
def test_over_an_empty_background_the_fill_is_todays_but_for_the_record_of_it(fills: dict[str, Path]) -> None:
    # The roots of the chain over the background come from go-ethereum's trie over the built
    # database; over an empty one they must be exactly the roots of today's in-memory trie.
    for path in sorted(fills["plain"].rglob("*.json")):
        relative = path.relative_to(fills["plain"])
        plain, empty = json.loads(path.read_text()), json.loads((fills["empty"] / relative).read_text())
        if relative.as_posix() == ENGINE_X_FILE:
            (name,) = plain
            record = empty[name]["_info"].pop("background-state")
            assert record["recipe-hash"] == parse_recipe("accounts=0").hash and record["accounts"] == 0
            for fixture in (plain[name], empty[name]):
                del fixture["_info"]["hash"]
        assert plain == empty, relative


@pytest.mark.integration
def test_over_a_background_state_only_the_roots_move_and_the_fixture_says_which_state(fills: dict[str, Path]) -> None:
    plain, tiny = fills["plain"], fills["tiny"]
    for fmt in ("blockchain_tests", "blockchain_tests_engine"):  # on the workload's own genesis: as today
        for path in sorted((plain / fmt).rglob("*.json")):
            assert path.read_text() == (tiny / path.relative_to(plain)).read_text()
    over, own = _fixture(tiny / ENGINE_X_FILE), _fixture(tiny / ENGINE_FILE)
    record = over["_info"]["background-state"]
    recipe = parse_recipe(TINY)
    assert (record["recipe"], record["recipe-hash"]) == (recipe.inline(), recipe.hash)
    assert record["state-root"] == "0x" + built_state(recipe, TINY, empty_genesis(AMSTERDAM), tiny.parent / "cache").state_root.hex()
    genesis_hash = "0x" + genesis_header(AMSTERDAM, bytes.fromhex(record["genesis-state-root"][2:])).hash.hex()
    assert over["engineNewPayloads"][0]["params"][0]["parentHash"] == genesis_hash
    assert _fixture(plain / ENGINE_X_FILE)["engineNewPayloads"][0]["params"][0]["parentHash"] != genesis_hash
    depths = record["benchmark-account-depths"]
    assert depths["accounts"] > 30 and 3 <= depths["min"] <= depths["mean"] <= depths["max"]
    # The same transactions and access lists as on the own genesis, but for the system calls' entries
    # (the parent hash each block stores differs): the dependency graph and BAL are today's.
    system = {bytes.fromhex(address[2:]) for address in system_addresses(AMSTERDAM)}

    def workload_entries(payload: dict) -> list:
        encoded = bytes.fromhex(payload["params"][0]["blockAccessList"][2:])
        return [account for account in iter_block_access_list(encoded) if account.address not in system]

    for mine, theirs in zip(over["engineNewPayloads"], own["engineNewPayloads"], strict=True):
        assert mine["params"][0]["transactions"] == theirs["params"][0]["transactions"]
        assert workload_entries(mine) == workload_entries(theirs)
    assert over["_info"]["dependency-graph"] == own["_info"]["dependency-graph"]
    group_files = list((tiny / "blockchain_tests_engine_x" / "pre_alloc").glob("*.json"))
    (group_path,) = group_files
    assert set(json.loads(group_path.read_text())) == {"testIds", "environment", "network", "chainId", "pre"}
    sidecar = json.loads(group_path.with_suffix(".background").read_text())
    assert sidecar["recipe-hash"] == recipe.hash and sidecar["genesis-state-root"] == record["genesis-state-root"]
    (group,) = discover(tiny).groups
    assert group.genesis.genesis_hash == genesis_hash and group.genesis.background == sidecar
    assert [ref.format for ref in group.tests] == ["blockchain_test_engine_x"]
    # Without its record the group file's `pre` alone gives another genesis: refused, naming the record.
    group_path.with_suffix(".background").rename(group_path.with_suffix(".moved"))
    try:
        with pytest.raises(BadInput, match=r"\.background, which says which, is not beside"):
            discover(tiny, formats="engine_x")
    finally:
        group_path.with_suffix(".moved").rename(group_path.with_suffix(".background"))


@pytest.mark.integration
def test_the_trie_over_a_built_state_keeps_its_root_when_an_account_is_put_back_as_it_was(tmp_path: Path) -> None:
    state = built_state(parse_recipe(TINY), TINY, empty_genesis(AMSTERDAM), tmp_path / "cache")
    plain = 1999
    balance_word = derived("balgen/state/balance", 3, plain)
    same = {address(3, plain): {"nonce": hex(int.from_bytes(balance_word[:2], "big") % 1024),
                                "balance": hex(int.from_bytes(balance_word[2:14], "big"))}}  # fmt: skip
    for name, alloc in {"empty": {}, "same": same, "changed": {address(3, plain): {"balance": "0x1"}}}.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(alloc))
    roots = StateRoots(state_root_tool(), tmp_path / "empty.json", state.background)
    try:
        assert roots.base_root == state.state_root
        assert roots.with_accounts(tmp_path / "same.json") == state.state_root
        assert roots.with_accounts(tmp_path / "changed.json") != state.state_root
        assert roots.depths([bytes.fromhex(address(3, plain)[2:])], tmp_path) == [4]
    finally:
        roots.close()
    assert [path.name for path in state.folder.iterdir() if path.name.startswith(".view-")] == []


@pytest.mark.integration
def test_geth_over_the_background_state_with_the_groups_accounts_accepts_every_engine_x_payload(
    fills: dict[str, Path], tmp_path: Path
) -> None:
    # The group's accounts written over a copy of the built state by the overlay (streamed storage
    # tries and the account trie's changed paths: another path than the fill's trie over the database) give the genesis the fixtures chain from, and geth
    # on it accepts every payload: the engine_x fixtures over a background state are a valid chain.
    tiny = fills["tiny"]
    state = built_state(parse_recipe(TINY), TINY, empty_genesis(AMSTERDAM), tiny.parent / "cache")
    (group_path,) = (tiny / "blockchain_tests_engine_x" / "pre_alloc").glob("*.json")
    sidecar = json.loads(group_path.with_suffix(".background").read_text())
    alloc = tmp_path / "pre.json"
    alloc.write_text(json.dumps(json.loads(group_path.read_text())["pre"]))
    copy = tmp_path / "overlaid"
    copy_datadir(state.datadir, copy, DATADIR_LINKABLE)
    root, genesis_hash = overlay_accounts(state_build_tool(), copy, alloc, empty_genesis(AMSTERDAM), parse_recipe(TINY))
    assert "0x" + root.hex() == sidecar["genesis-state-root"]
    fixture = _fixture(tiny / ENGINE_X_FILE)
    assert fixture["engineNewPayloads"][0]["params"][0]["parentHash"] == "0x" + genesis_hash.hex()
    with geth_on(copy, tmp_path) as geth:
        engine = geth.engine_client()
        try:
            for entry in fixture["engineNewPayloads"]:
                status = engine.new_payload(int(entry["newPayloadVersion"]), entry["params"]).result
                assert status["status"] == "VALID", status
                block_hash = entry["params"][0]["blockHash"]
                answer = engine.forkchoice_updated(int(entry["forkchoiceUpdatedVersion"]), block_hash).result
                assert answer["payloadStatus"]["status"] == "VALID", answer
        finally:
            engine.close()
        assert rpc(geth, "eth_getBlockByNumber", "latest", False)["hash"] == fixture["lastblockhash"]  # type: ignore[index]


@pytest.mark.integration
def test_balgen_replays_the_fixtures_into_geth_over_the_background_state_warm_and_cold(
    fills: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = fills["tiny"]
    monkeypatch.setenv("BALGEN_CACHE", str(tiny.parent / "cache"))
    # Warm, two sibling executions; cold, one, after a restart on the group's datadir (each restart is a
    # geth start: a second proves nothing the first does not). Both `balgen replay` command lines on one
    # node started on the group's datadir (a geth start is about 3 CPU-s). The warm run's agreement with
    # geth's own time is recorded, not checked: a tiny block's 10 ms margin is within the scheduling noise
    # of three test workers on two cores (the check has its own test in test_replay_harness).
    warm, cold_run = replayed_on_one_set_of_nodes(
        (tiny, "--warmup", "0", "--repeat", "2", "--agreement", "record", "--settle-limit", "0", "--output", tmp_path / "warm"),
        (tiny, "--warmup", "0", "--repeat", "1", "--cold", "--settle-limit", "0", "--output", tmp_path / "cold"),
    )
    for cold, (result,) in ((False, warm), (True, cold_run)):
        assert (result["format"], result["verdict"]) == ("blockchain_test_engine_x", "passed"), result["failure"]
        measured = [e["restarted_before"] for e in result["executions"] if e["role"] == "measured"]
        assert measured == ([True] if cold else [False, False]), measured
    # The group's datadir was made once and is kept beside the state, by genesis hash: asked again (as the
    # next replay's node asks), the same files are found, not built again.
    state = built_state(parse_recipe(TINY), TINY, empty_genesis(AMSTERDAM), tiny.parent / "cache")
    parent_hash = _fixture(tiny / ENGINE_X_FILE)["engineNewPayloads"][0]["params"][0]["parentHash"]
    assert [path.name for path in (state.folder / "groups").iterdir()] == [parent_hash]
    files = {path: path.stat().st_ino for path in (state.folder / "groups" / parent_hash).rglob("*") if path.is_file()}
    (group,) = [group for group in discover(tiny).groups if group.genesis.background is not None]
    datadir, _, _ = ManagedClient(GETH, pinned_geth()).background_datadir(group.genesis)
    assert datadir == state.folder / "groups" / parent_hash / "datadir"
    # Every file the same inode (a build writes its record, pebble's manifest and log anew: only the state's tables are links).
    assert {path: path.stat().st_ino for path in datadir.parent.rglob("*") if path.is_file()} == files


def test_a_client_other_than_geth_and_reth_is_refused_a_background_state_in_one_line(tmp_path: Path) -> None:
    besu = ManagedClient(BESU, tmp_path / "besu")
    genesis = SimpleNamespace(background={"recipe": TINY}, where="pre_alloc/0x01.json", network="Amsterdam")
    with pytest.raises(BadInput, match=r"^pre_alloc/0x01.json: its genesis is a background state, .* --client reth$"):
        besu.background_datadir(genesis)  # type: ignore[arg-type]


@pytest.mark.integration
def test_an_exported_genesis_file_gives_geth_the_same_state_without_balgen(tmp_path: Path) -> None:
    # `geth init` of the exported genesis.json (every account as JSON, go-ethereum's own genesis
    # commit) must give the genesis hash of the state built into geth's database directly.
    state = built_state(parse_recipe(TINY), TINY, empty_genesis(AMSTERDAM), tmp_path / "cache")
    exported = tmp_path / "genesis.json"
    completed = balgen_in_process("state", "export", TINY, "--output", exported)
    assert completed.returncode == 0, completed.stderr
    assert len(json.loads(exported.read_text())["alloc"]) == 2000
    assert genesis_hash_geth_writes(exported, tmp_path / "datadir") == "0x" + state.genesis_hash.hex()


PLAIN_RECIPE = "accounts=2000,slots=4000"
DEEP_RECIPE = "accounts=2000,slots=4000,workload-slots=256"
DEEP_WORKLOADS = "serial_chain-max or mixed_dep-max-group1"


@pytest.fixture(scope="module")
def setup_genesis_fills(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two workloads whose contracts and slots are in the genesis (`--setup genesis`), over one state without
    and with workload slots."""
    root = tmp_path_factory.mktemp("workload-slots")
    outputs = {"plain": root / "plain", "deep": root / "deep"}
    for name, recipe in (("plain", PLAIN_RECIPE), ("deep", DEEP_RECIPE)):
        completed = balgen_in_process(
            "fill", "--gas-benchmark-values", "1", "-k", DEEP_WORKLOADS, "--setup", "genesis", "--state", recipe,
            "--output", outputs[name], env={**os.environ, "BALGEN_CACHE": str(root / "cache")},
        )  # fmt: skip
        assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return outputs


def _engine_x_fixtures(output: Path) -> dict[str, dict]:
    folder = output / "blockchain_tests_engine_x"
    return {path.name: _fixture(path) for path in sorted(folder.rglob("*.json")) if path.parent.name != "pre_alloc"}


@pytest.mark.integration
def test_workload_slots_put_the_blocks_slots_in_deep_storage_tries_and_change_nothing_the_block_does(
    setup_genesis_fills: dict[str, Path],
) -> None:
    plain, deep = setup_genesis_fills["plain"], setup_genesis_fills["deep"]
    for fmt in ("blockchain_tests", "blockchain_tests_engine"):  # on the workload's own genesis: as without
        for path in sorted((plain / fmt).rglob("*.json")):
            assert path.read_text() == (deep / path.relative_to(plain)).read_text()
    system = {bytes.fromhex(address[2:]) for address in system_addresses(AMSTERDAM)}
    without, over = _engine_x_fixtures(plain), _engine_x_fixtures(deep)
    assert sorted(without) == sorted(over) and len(over) == 2
    for name, fixture in over.items():
        record, before = fixture["_info"]["background-state"], without[name]["_info"]["background-state"]
        assert record["recipe-hash"] == parse_recipe(DEEP_RECIPE).hash != before["recipe-hash"]
        assert record["recipe"].endswith(",workload_slots=256") and record["state-root"] == before["state-root"]
        assert record["genesis-state-root"] != before["genesis-state-root"]
        # The accounts lie where they lay; the slots the benchmark block names now lie a few levels
        # down storage tries of 256 slots more, where without they were a trie's root or next to it.
        assert record["benchmark-account-depths"] == before["benchmark-account-depths"]
        slots, slots_before = record["benchmark-slot-depths"], before["benchmark-slot-depths"]
        assert slots["slots"] == slots_before["slots"] > 10
        assert slots_before["max"] <= 1 and slots["min"] >= 2 and slots["mean"] >= slots_before["mean"] + 2
        # What the block does is the same: transactions, gas, its access list but for the system
        # contracts' entries (the parent hash each block stores differs), its dependency graph.
        assert fixture["_info"]["dependency-graph"] == without[name]["_info"]["dependency-graph"]
        for mine, theirs in zip(fixture["engineNewPayloads"], without[name]["engineNewPayloads"], strict=True):
            ours, others = mine["params"][0], theirs["params"][0]
            assert (ours["transactions"], ours["gasUsed"]) == (others["transactions"], others["gasUsed"])
            assert [a for a in iter_block_access_list(bytes.fromhex(ours["blockAccessList"][2:])) if a.address not in system] == [
                a for a in iter_block_access_list(bytes.fromhex(others["blockAccessList"][2:])) if a.address not in system
            ]


@pytest.mark.integration
def test_geth_commits_the_same_workload_slots_as_the_fill_and_replays_the_fixtures_over_them(
    setup_genesis_fills: dict[str, Path], tmp_path: Path
) -> None:
    # The second path to the genesis: the overlay streams the group's `pre` with its workload
    # slots into a copy of the built state; its root must be the fill's, and geth on it
    # must accept every payload (balgen replay checks the genesis hash, then replays).
    deep = setup_genesis_fills["deep"]
    recipe = parse_recipe(DEEP_RECIPE)
    cache = deep.parent / "cache"
    state = built_state(recipe, DEEP_RECIPE, empty_genesis(AMSTERDAM), cache)
    (group_path,) = (deep / "blockchain_tests_engine_x" / "pre_alloc").glob("*.json")
    alloc = tmp_path / "pre.json"
    alloc.write_text(json.dumps(json.loads(group_path.read_text())["pre"]))
    copy = tmp_path / "overlaid"
    copy_datadir(state.datadir, copy, DATADIR_LINKABLE)
    root, _ = overlay_accounts(state_build_tool(), copy, alloc, empty_genesis(AMSTERDAM), recipe)
    assert "0x" + root.hex() == json.loads(group_path.with_suffix(".background").read_text())["genesis-state-root"]
    # Without the workload slots the same `pre` gives another root: the overlay did put them in.
    plain_copy = tmp_path / "plain"
    copy_datadir(state.datadir, plain_copy, DATADIR_LINKABLE)
    assert overlay_accounts(state_build_tool(), plain_copy, alloc, empty_genesis(AMSTERDAM), recipe.built_part())[0] != root
    completed = balgen_in_process(
        "replay", deep, "--warmup", "0", "--repeat", "1", "--agreement", "record", "--settle-limit", "0", "--output", tmp_path / "replay",
        env={**os.environ, "BALGEN_CACHE": str(cache)},
    )  # the verdicts are tested, not the agreement margin (three workers on two cores)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    results = json.loads((tmp_path / "replay" / "results.json").read_text())["tests"]
    assert len(results) == 2 and {result["verdict"] for result in results} == {"passed"}


@pytest.mark.integration
def test_balgen_verify_passes_the_fixtures_over_a_background_state_with_every_verifier(
    setup_genesis_fills: dict[str, Path],
) -> None:
    # geth's evm, revme and ethereumjs judge the blockchain_test files (on the workload's own genesis, as
    # without --state); the engine import judges the engine_x ones over the background with its workload
    # slots, from the overlay's genesis: a wrong root there is a genesis-hash mismatch, not a pass.
    deep = setup_genesis_fills["deep"]
    completed = balgen_in_process("verify", deep, env={**os.environ, "BALGEN_CACHE": str(deep.parent / "cache")})
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-2000:]
    assert "2 fixtures: geth 2/2, revm 2/2, ethereumjs 2/2, engine 2/2" in completed.stdout


@pytest.mark.integration
def test_benchmarkoors_genesis_tree_holds_the_whole_state_a_client_starts_from_alone(
    setup_genesis_fills: dict[str, Path], tmp_path: Path
) -> None:
    # benchmarkoor's EEST source starts each client on genesis/<preHash>/go-ethereum/genesis.json
    # alone (geth with --override.genesis, reth with --chain; docs/formats.md cites its code): over
    # a background state that file must hold the whole state, the group's `pre` with its workload
    # slots in it, and geth's own genesis code must give the genesis the fixtures chain from.
    deep = setup_genesis_fills["deep"]
    (group_path,) = (deep / "blockchain_tests_engine_x" / "pre_alloc").glob("*.json")
    pre = json.loads(group_path.read_text())["pre"]
    tree = tmp_path / "tree"
    command = ["genesis", str(deep), "--layout", "benchmarkoor", "--output"]
    completed = balgen_in_process(*command, tree, "--client", "geth,reth")
    assert completed.returncode == 0, completed.stderr
    written = tree / "genesis" / group_path.stem / "go-ethereum" / "genesis.json"
    alloc = json.loads(written.read_text())["alloc"]
    assert len(alloc) >= 2000 and set(pre) <= set(alloc)
    contract = next(address for address, account in pre.items() if account.get("code", "0x") != "0x")
    assert len(alloc[contract]["storage"]) == len(pre[contract].get("storage", {})) + 256
    fixture = _fixture(next((deep / "blockchain_tests_engine_x").rglob("serial_chain-max-1M.json")))
    assert genesis_hash_geth_writes(written, tmp_path / "datadir") == fixture["engineNewPayloads"][0]["params"][0]["parentHash"]
    # A format that cannot hold it is refused in one line naming the group, and nothing is written.
    refused = balgen_in_process(*command, tmp_path / "other", "--client", "nethermind")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert f"{group_path.name}: its genesis is a background state" in refused.stderr and "go-ethereum's format only" in refused.stderr
    assert not (tmp_path / "other").exists()
