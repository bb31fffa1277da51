"""
Background states built from a recipe into geth's database: geth opens one as its genesis, reports
the genesis hash balgen's header code gives, reads the generated accounts, slots and code, and
recomputes the same root from them; a state is built once and an unfinished or foreign build is
never taken for a finished one.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from balgen.chain.background_state import DATADIR, RECORD, built_state, state_build_tool, states_folder
from balgen.chain.builder import genesis_header
from balgen.clients.kinds.geth import DATADIR_LINKABLE, PRESET as GETH, empty_genesis
from balgen.clients.process import ClientProcess, copy_datadir
from balgen.ethereum.forks import AMSTERDAM
from balgen.ethereum.keccak import keccak
from balgen.model.state_recipe import PRESETS, parse_recipe
from balgen.plumbing.errors import BadInput
from balgen.plumbing.toolchain import pinned_geth

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


@pytest.mark.integration
def test_the_small_preset_of_a_million_accounts_builds_and_geth_starts_on_it(tmp_path: Path) -> None:
    build = _balgen_state("small", cache=tmp_path / "cache")
    stdout, stderr = build.communicate(timeout=1800)
    assert build.returncode == 0, stderr[-2000:]
    recipe = PRESETS["small"].recipe
    folder = states_folder(tmp_path / "cache") / recipe.hash
    record = json.loads((folder / RECORD).read_text())
    assert (record["accounts"], record["slots"]) == (1_000_000, 2_000_000)
    # A million random keys put every account at least six nodes below the root.
    assert min(depth for depth, count in enumerate(record["account-leaf-depths"]) if count) >= 6
    assert f"genesis hash   {record['genesis-hash']}" in stdout
    tables = {path.name: path.stat().st_ino for path in (folder / DATADIR).rglob("*.sst")}
    assert len(tables) > 10
    with geth_on(folder / DATADIR, tmp_path) as geth:
        assert rpc(geth, "eth_getBlockByNumber", "0x0", False)["hash"] == record["genesis-hash"]  # type: ignore[index]
        assert int(rpc(geth, "eth_getBalance", address(0, 999_999), "0x0"), 16) > 0  # type: ignore[arg-type]
        # geth's copy shares the built state's tables (hard links): the gigabytes are not copied.
        copied = {path.name: path.stat().st_ino for path in geth.datadir.rglob("*.sst") if path.name in tables}
        assert len(copied) > len(tables) / 2 and all(copied[name] == tables[name] for name in copied)
