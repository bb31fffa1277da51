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

The chain configuration has one source, the geth-style config of the
fixture's network (`geth_chain_config`); the other two formats are
translations of it, key by key, following the mappings hive's client
adapters (`clients/nethermind/mapper.jq`, `clients/besu/mapper.jq`, July
2026) and ethpandaops' ethereum-genesis-generator (`apps/el-gen`, August
2026) apply. A client that computes a different genesis hash from the file
shows it at once: the replay compares the hash with the fixture's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, TextIO

from ..forks import fork_by_name
from ..output_files import atomic_text_writer
from ..system_calls import system_address
from .genesis import (
    TEST_CHAIN_ID,
    ZERO_HASH,
    _alloc_key,
    genesis_header_fields,
    geth_alloc_account,
    geth_chain_config,
)


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


# -- the chain config, per format ----------------------------------------------

TIME_FORKS = ("shanghai", "cancun", "prague", "osaka", "bpo1", "bpo2", "bpo3", "bpo4", "bpo5", "amsterdam")
"""Timestamp forks in activation order; a blob schedule entry of a later one
supersedes an earlier one activated at the same time."""

NETHERMIND_BLOCK_TRANSITIONS: dict[str, tuple[str, ...]] = {
    "eip150Block": ("eip150",),
    "eip155Block": ("eip155",),
    "eip158Block": ("eip160", "eip161abc", "eip161d", "maxCodeSize"),
    "byzantiumBlock": ("eip140", "eip211", "eip214", "eip658"),
    "constantinopleBlock": ("eip145", "eip1014", "eip1052"),
    "petersburgBlock": ("eip1283", "eip1283Disable"),
    "istanbulBlock": ("eip152", "eip1108", "eip1344", "eip1884", "eip2028", "eip2200"),
    "berlinBlock": ("eip2565", "eip2718", "eip2929", "eip2930"),
    "londonBlock": ("eip1559", "eip3238", "eip3529", "eip3541", "eip3198"),
}
"""The block forks of a geth config as the `<name>Transition` block numbers of
a chainspec (hive's nethermind mapper)."""

NETHERMIND_TIME_TRANSITIONS: dict[str, tuple[int, ...]] = {
    "shanghai": (3651, 3855, 3860, 4895),
    "cancun": (4844, 4788, 1153, 5656, 6780),
    "prague": (2537, 2935, 6110, 7002, 7251, 7685, 7702, 7623),
    "osaka": (7594, 7823, 7825, 7883, 7918, 7951, 7939, 7934),
    "amsterdam": (2780, 7708, 7778, 7843, 7928, 7954, 7976, 7981, 7997, 8024, 8037, 8038, 8246, 8282),
}
"""The EIPs each timestamp fork switches on, as chainspec
`eip<N>TransitionTimestamp` keys (hive's nethermind mapper, July 2026)."""

BESU_REQUEST_CONTRACTS: dict[str, str] = {
    "eip7002": "withdrawalRequestContractAddress",
    "eip7251": "consolidationRequestContractAddress",
    "eip8282_deposit": "builderDepositRequestContractAddress",
    "eip8282_exit": "builderExitRequestContractAddress",
}
"""Besu's config key for each request system contract the fork has."""


def _hex(value: int) -> str:
    return hex(value)


def chain_config(network: str, chain_id: int) -> dict[str, Any]:
    """The geth-style config, plus the merge flag erigon reads (geth ignores it)."""
    config = geth_chain_config(network, chain_id=chain_id)
    config["terminalTotalDifficultyPassed"] = True
    return config


def blob_schedule_by_time(config: Mapping[str, Any]) -> list[tuple[int, Mapping[str, int]]]:
    """
    `(activation time, blob params)` of the geth config's blob schedule, one
    entry per distinct time: the latest fork active at that time wins.
    """
    schedule = config.get("blobSchedule") or {}
    by_time: dict[int, Mapping[str, int]] = {}
    for fork in TIME_FORKS:
        time = config.get(f"{fork}Time")
        if time is not None and fork in schedule:
            by_time[int(time)] = schedule[fork]
    return sorted(by_time.items())


def nethermind_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """The chainspec `params` for a geth-style config."""
    params: dict[str, Any] = {
        "chainID": _hex(config["chainId"]),
        "networkID": _hex(config["chainId"]),
        "gasLimitBoundDivisor": "0x400",
        "maximumExtraDataSize": "0x20",
        "minGasLimit": "0x1388",
        "maxCodeSize": "0x6000",
        "registrar": "0x" + "00" * 20,
        "terminalTotalDifficulty": _hex(config["terminalTotalDifficulty"]),
        "depositContractAddress": config["depositContractAddress"],
    }
    for geth_key, names in NETHERMIND_BLOCK_TRANSITIONS.items():
        if geth_key in config:
            params.update((f"{name}Transition", _hex(config[geth_key])) for name in names)
    if "mergeNetsplitBlock" in config:
        params["MergeForkIdTransition"] = _hex(config["mergeNetsplitBlock"])
    for fork, eips in NETHERMIND_TIME_TRANSITIONS.items():
        time = config.get(f"{fork}Time")
        if time is not None:
            params.update((f"eip{eip}TransitionTimestamp", _hex(time)) for eip in eips)
    params["blobSchedule"] = [
        {
            "timestamp": _hex(time),
            "target": _hex(entry["target"]),
            "max": _hex(entry["max"]),
            "baseFeeUpdateFraction": _hex(entry["baseFeeUpdateFraction"]),
        }
        for time, entry in blob_schedule_by_time(config)
    ]
    return params


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
    genesis["parentBeaconBlockRoot"] = ZERO_HASH
    return genesis


def besu_config(network: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Besu's config: geth's keys, an (inactive) ethash section, the request contracts."""
    besu = {"ethash": {}, **config}
    besu.pop("terminalTotalDifficultyPassed", None)
    for key in fork_by_name(network).system_contracts:
        if key in BESU_REQUEST_CONTRACTS:
            besu[BESU_REQUEST_CONTRACTS[key]] = "0x" + system_address(key).hex()
    return besu


# -- writing ------------------------------------------------------------------


def _top_level(
    genesis_format: GenesisFormat, network: str, header: Mapping[str, Any], chain_id: int
) -> tuple[dict[str, Any], str]:
    """Everything but the alloc, and the key the alloc goes under."""
    config = chain_config(network, chain_id)
    fields = genesis_header_fields(network, header)
    if genesis_format is GenesisFormat.NETHERMIND:
        return {
            "name": f"balgen {network}",
            "engine": {"Ethash": {}},
            "params": nethermind_params(config),
            "genesis": nethermind_genesis(fields),
        }, "accounts"
    if genesis_format is GenesisFormat.BESU:
        return {"config": besu_config(network, config), **fields}, "alloc"
    return {"config": config, **fields}, "alloc"


def _accounts(pre: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for address, account in pre.items():
        yield _alloc_key(address), geth_alloc_account(address, account)


def _write_streamed(stream: TextIO, top: Mapping[str, Any], alloc_key: str, pre: Mapping[str, Any]) -> None:
    """The small fields first, then the alloc one account at a time (it can be large)."""
    stream.write("{")
    for key, value in top.items():
        stream.write(f"\n {json.dumps(key)}: {json.dumps(value)},")
    stream.write(f"\n {json.dumps(alloc_key)}: {{")
    for index, (address, account) in enumerate(_accounts(pre)):
        stream.write("," if index else "")
        stream.write(f"\n{json.dumps(address)}:{json.dumps(account, separators=(',', ':'))}")
    stream.write("\n}\n}\n")


def write_client_genesis(
    path: Path,
    genesis_format: GenesisFormat,
    network: str,
    header: Mapping[str, Any],
    pre: Mapping[str, Any],
    *,
    chain_id: int = TEST_CHAIN_ID,
) -> None:
    """
    Write the genesis file of `genesis_format` for a fixture's genesis
    atomically: a malformed header or account raises `BadInput` and leaves
    nothing under `path`.
    """
    top, alloc_key = _top_level(genesis_format, network, header, chain_id)
    with atomic_text_writer(Path(path)) as stream:
        _write_streamed(stream, top, alloc_key, pre)
