"""
A fixture's genesis in the file each execution client starts from.

A format is data (`GenesisFormat`): its file name, the folder benchmarkoor
looks for it in, and the fields beside the alloc, from the fork the
fixture's network names and the genesis header fields. Each format is
declared by the client whose format it is (`balgen/clients/kinds/`): go-ethereum's
`genesis.json`, which several clients read; Nethermind's chainspec; Besu's
`genesis.json`. This module writes any of them, the alloc streamed. A client that computes a different genesis hash from the file
shows it at once: the replay compares the hash with the fixture's.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..chain.background_state import state_build_tool, write_genesis_file
from ..chain.state_roots import StateRoots, state_root_tool
from ..model.state_recipe import parse_recipe
from ..plumbing.errors import BadInput
from ..ethereum.chain_constants import CHAIN_ID, EMPTY_TRIE_ROOT
from ..fixtures.models import FixtureAccount, FixtureGenesisHeader
from ..ethereum.hextypes import data_hex
from ..plumbing.output_files import atomic_text_writer
from .chain_config import network_fork
from ..ethereum.forks import Fork
from .genesis_fields import genesis_header_fields, geth_alloc_account


TopLevel = Callable[[Fork, str, dict[str, Any], int], dict[str, Any]]
"""The fields of a genesis file beside the alloc, from the fork, the network's name, go-ethereum's genesis
header fields (`genesis_header_fields`) and the chain id."""


@dataclass(frozen=True)
class GenesisFormat:
    """A genesis file format: what the file is called, where benchmarkoor looks for it, what it holds."""

    name: str
    """Its name on balgen's command line (`--genesis-format`)."""
    file_name: str
    """The name the client's docs (and benchmarkoor) give the file."""
    benchmarkoor_folder: str
    """The folder benchmarkoor's EEST source looks in (`resolveClientGenesis`)."""
    top_level: TopLevel
    alloc_key: str = "alloc"
    """The key the accounts go under."""
    whole_state: bool = False
    """Whether a group over a background state can be written in it: the whole state as its alloc, which
    `balgen-state-build --export-alloc` streams in go-ethereum's format (read by geth and reth)."""

    def __str__(self) -> str:
        return self.name


# -- writing ------------------------------------------------------------------


def _write_alloc(stream: TextIO, accounts: Iterable[tuple[bytes, FixtureAccount]]) -> None:
    """The alloc object, as go-ethereum reads it, one account at a time (it can be large)."""
    stream.write("{")
    for index, (address, account) in enumerate(accounts):
        stream.write("," if index else "")
        stream.write(f"\n{json.dumps(data_hex(address))}:{json.dumps(geth_alloc_account(account), separators=(',', ':'))}")
    stream.write("\n}")


def _write_streamed(
    stream: TextIO, top: Mapping[str, Any], alloc_key: str, accounts: Iterable[tuple[bytes, FixtureAccount]]
) -> None:
    """The small fields first, then the alloc."""
    stream.write("{")
    for key, value in top.items():
        stream.write(f"\n {json.dumps(key)}: {json.dumps(value)},")
    stream.write(f"\n {json.dumps(alloc_key)}: ")
    _write_alloc(stream, accounts)
    stream.write("\n}\n")


def write_client_genesis(
    path: Path,
    genesis_format: GenesisFormat,
    network: str,
    header: FixtureGenesisHeader,
    accounts: Iterable[tuple[bytes, FixtureAccount]],
    *,
    chain_id: int = CHAIN_ID,
) -> None:
    """
    Write the genesis file of `genesis_format` for a fixture's genesis
    atomically, taking `accounts` one at a time (a `StreamedPre`'s): an
    account that fails to read raises `BadInput` and leaves nothing under `path`.
    """
    top = genesis_format.top_level(network_fork(network), network, genesis_header_fields(network, header), chain_id)
    with atomic_text_writer(Path(path)) as stream:
        _write_streamed(stream, top, genesis_format.alloc_key, accounts)


def write_background_genesis(
    path: Path,
    genesis_format: GenesisFormat,
    network: str,
    header: FixtureGenesisHeader,
    accounts: Iterable[tuple[bytes, FixtureAccount]],
    background: Mapping[str, Any],
    where: str,
    *,
    chain_id: int = CHAIN_ID,
) -> None:
    """
    Write the genesis file of a group over a background state (`background`,
    its `.background` record) atomically: the whole state as the alloc, the
    recipe's accounts streamed by the generator with the group's `accounts`
    (its `pre`) in their place and their workload slots, so that a client
    started on the file alone (as benchmarkoor starts one) computes the
    fixtures' genesis. `BadInput` naming the group (`where`) for a format
    other than go-ethereum's.
    """
    if not genesis_format.whole_state:
        raise BadInput(
            f"{where}: its genesis is a background state ({background.get('recipe')}), whose whole-state "
            f"genesis file balgen writes in go-ethereum's format only (geth, reth), not {genesis_format}'s"
        )
    top = genesis_format.top_level(network_fork(network), network, genesis_header_fields(network, header), chain_id)
    pre = {data_hex(address): geth_alloc_account(account) for address, account in accounts}
    write_genesis_file(state_build_tool(), parse_recipe(str(background["recipe"])), top, path, pre)


def alloc_state_root(accounts: Iterable[tuple[bytes, FixtureAccount]]) -> bytes:
    """
    The state root of `accounts`, taken one at a time (a `StreamedPre`'s), as
    go-ethereum's trie computes it: they are written as a genesis file's alloc
    into a scratch file (under `TMPDIR`, removed afterwards) that
    `balgen-state-root` reads. No accounts: the empty trie's root, without the
    tool. Without the tool otherwise: `BadInput` saying how to build it.
    """
    remaining = iter(accounts)
    first = next(remaining, None)
    if first is None:
        return EMPTY_TRIE_ROOT
    binary = state_root_tool()
    with tempfile.TemporaryDirectory(prefix="balgen-state-root-") as scratch:
        alloc_path = Path(scratch) / "alloc.json"
        with alloc_path.open("w", encoding="utf-8") as stream:
            _write_alloc(stream, itertools.chain([first], remaining))
        roots = StateRoots(binary, alloc_path)
        roots.close()
    return roots.base_root
