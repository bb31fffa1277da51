"""
A fixture's genesis in the file each execution client starts from.

Three formats cover the clients balgen drives:

- `geth`: go-ethereum's `genesis.json`, which geth, reth, erigon and ethrex
  read (reth with `--chain`, erigon and geth with `init`, ethrex with
  `--network`);
- `nethermind`: Nethermind's chainspec (`chainspec.json`), where each fork is
  a set of per-EIP `eip<N>TransitionTimestamp` parameters and the blob
  schedule a list by activation time;
- `besu`: Besu's `genesis.json`, geth's layout plus the keys Besu wants on
  top (`ethash`, the request contract addresses).

The chain configuration of each format comes from the fork the fixture's
network names (`chain_config`); this module adds the genesis header fields
and the alloc. A client that computes a different genesis hash from the file
shows it at once: the replay compares the hash with the fixture's.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from collections.abc import Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, TextIO

from ..chain.state_roots import StateRoots, state_root_tool
from ..ethereum.chain_constants import CHAIN_ID, EMPTY_TRIE_ROOT, ZERO_HASH
from ..fixtures.models import FixtureAccount, FixtureGenesisHeader
from ..ethereum.hextypes import data_hex
from ..plumbing.output_files import atomic_text_writer
from .chain_config import besu_config, chain_config, nethermind_params, network_fork
from .genesis_fields import genesis_header_fields, geth_alloc_account


class GenesisFormat(StrEnum):
    """The genesis file formats of the clients balgen knows."""

    GETH = "geth"
    NETHERMIND = "nethermind"
    BESU = "besu"

    @property
    def file_name(self) -> str:
        """The name the client's docs (and benchmarkoor) give the file."""
        return "chainspec.json" if self is GenesisFormat.NETHERMIND else "genesis.json"

    @property
    def benchmarkoor_folder(self) -> str:
        """The folder benchmarkoor's EEST source looks in (`resolveClientGenesis`)."""
        return "go-ethereum" if self is GenesisFormat.GETH else self.value


def nethermind_genesis(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The chainspec `genesis` object for the `core.Genesis` header fields."""
    genesis: dict[str, Any] = {
        "seal": {"ethereum": {"nonce": "0x" + int(fields["nonce"], 16).to_bytes(8, "big").hex(), "mixHash": fields["mixHash"]}},
        "difficulty": fields["difficulty"],
        "author": fields["coinbase"],
        "timestamp": fields["timestamp"],
        "parentHash": fields["parentHash"],
        "extraData": fields["extraData"],
        "gasLimit": fields["gasLimit"],
    }
    for key in ("baseFeePerGas", "blobGasUsed", "excessBlobGas"):
        if key in fields:
            genesis[key] = fields[key]
    genesis["parentBeaconBlockRoot"] = data_hex(ZERO_HASH)
    return genesis


# -- writing ------------------------------------------------------------------


def _top_level(
    genesis_format: GenesisFormat, network: str, header: FixtureGenesisHeader, chain_id: int
) -> tuple[dict[str, Any], str]:
    """Everything but the alloc, and the key the alloc goes under."""
    fork = network_fork(network)
    fields = genesis_header_fields(network, header)
    if genesis_format is GenesisFormat.NETHERMIND:
        return {
            "name": f"balgen {network}",
            "engine": {"Ethash": {}},
            "params": nethermind_params(fork, chain_id),
            "genesis": nethermind_genesis(fields),
        }, "accounts"
    if genesis_format is GenesisFormat.BESU:
        return {"config": besu_config(fork, chain_id), **fields}, "alloc"
    return {"config": chain_config(fork, chain_id), **fields}, "alloc"


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
    top, alloc_key = _top_level(genesis_format, network, header, chain_id)
    with atomic_text_writer(Path(path)) as stream:
        _write_streamed(stream, top, alloc_key, accounts)


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
