"""
A fixture's genesis as go-ethereum's genesis fields, from which
`client_genesis` writes each client's genesis file.

A fixture carries its genesis as a block header plus the `pre` alloc, and
names its rules only by fork ("Prague"); the client needs an explicit chain
config, `chain_config`'s, the one go-ethereum's own blockchain-test runner
uses for that fork name: with it, a genesis hash that differs from the
fixture's means the fixture or the conversion is wrong, not the config.

Only the header fields `core.Genesis` stores are copied; the client derives
the rest (state root from the alloc, empty roots, zero beacon root, empty
requests and access-list hashes) and the replay compares the resulting
genesis hash with the fixture's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..chain.header import Header
from ..chain_constants import (
    CHAIN_ID,
    EMPTY_BLOCK_ACCESS_LIST_HASH,
    EMPTY_BLOOM,
    EMPTY_OMMERS_HASH,
    EMPTY_REQUESTS_HASH,
    EMPTY_TRIE_ROOT,
    ZERO_HASH,
)
from ..errors import BadInput
from ..forks import BlobParams
from ..hextypes import data_hex
from .chain_config import geth_blob_schedule, network_fork

def fixture_blob_schedule(fixture_config: Mapping[str, Any]) -> dict[str, BlobParams]:
    """
    The `config.blobSchedule` of a fixture, by lower-cased fork name, or
    `BadInput` naming the malformed entry (discovery calls this, so that
    the comparison at run time cannot fail on the shape).
    """
    schedule = fixture_config.get("blobSchedule") or {}
    if not isinstance(schedule, Mapping):
        raise BadInput("config.blobSchedule: not an object")
    parsed = {}
    for name, entry in schedule.items():
        where = f"config.blobSchedule.{name}"
        if not isinstance(entry, Mapping):
            raise BadInput(f"{where}: not an object")
        parsed[str(name).lower()] = BlobParams(
            target=parse_quantity(entry.get("target"), f"{where}.target"),
            max=parse_quantity(entry.get("max"), f"{where}.max"),
            base_fee_update_fraction=parse_quantity(
                entry.get("baseFeeUpdateFraction"), f"{where}.baseFeeUpdateFraction"
            ),
        )
    return parsed


def fixture_config_mismatches(network: str, fixture_config: Mapping[str, Any]) -> list[str]:
    """
    Where a fixture's `config` disagrees with the chain config geth will run.

    Only the blob schedule entries geth's config has are compared (fixtures
    also list named forks such as "Osaka" that geth's schedule folds into
    the previous entry); the chain id is not a disagreement, it is taken
    over (`fixture_chain_id`). A disagreement here would make the import
    fail later for a reason that is hard to trace back, so the replay
    reports it up front.
    """
    fixture_schedule = fixture_blob_schedule(fixture_config)
    problems: list[str] = []
    for name, expected in geth_blob_schedule(network_fork(network)).items():
        found = fixture_schedule.get(name)
        if found is not None and found != expected:
            problems.append(f"blobSchedule.{name} is {found}, geth uses {expected}")
    return problems


def fixture_chain_id(fixture_config: Mapping[str, Any] | None) -> int:
    """
    The chain id a fixture was filled with: its `config.chainid`, or 1.

    Transactions are signed for this id, so the client must run with it;
    for the usual fixtures it is 1 and the config is geth's exactly.
    """
    if not fixture_config or fixture_config.get("chainid") is None:
        return CHAIN_ID
    return parse_quantity(fixture_config["chainid"], "config.chainid")


def derived_header_mismatches(network: str, header: Mapping[str, Any]) -> list[str]:
    """
    Genesis header fields the client computes itself and that differ from
    the fixture's, apart from the state root (which depends on the alloc).

    A genesis hash mismatch alone says nothing about its cause; these
    constants are the usual suspects, so the replay lists them.
    """
    fork = network_fork(network)
    derived = {
        "ommers_hash": EMPTY_OMMERS_HASH,
        "transactions_trie": EMPTY_TRIE_ROOT,
        "receipts_root": EMPTY_TRIE_ROOT,
        "logs_bloom": EMPTY_BLOOM,
        "withdrawals_root": EMPTY_TRIE_ROOT,
        "parent_beacon_block_root": ZERO_HASH,
        "requests_hash": EMPTY_REQUESTS_HASH,
        "block_access_list_hash": EMPTY_BLOCK_ACCESS_LIST_HASH,
    }
    expected = {
        Header.model_fields[field].alias or field: data_hex(value)
        for field, value in derived.items()
        if Header.requires(fork, field)
    }
    problems = []
    for key, value in expected.items():
        found = header.get(key)
        if found is None:
            problems.append(f"genesis header has no {key}, the client derives {value}")
        elif str(found).lower() != value:
            problems.append(f"genesis header {key} is {found}, the client derives {value}")
    return problems


def parse_quantity(value: Any, what: str) -> int:
    """An integer given as int, `0x` hex or decimal text (fixtures use all three)."""
    if isinstance(value, bool):
        raise BadInput(f"{what}: {value!r} is not a number")
    if isinstance(value, int):
        result = value
    elif isinstance(value, str):
        try:
            result = int(value, 16) if value[:2] in ("0x", "0X") else int(value, 10)
        except ValueError:
            raise BadInput(f"{what}: {value!r} is not a number") from None
    else:
        raise BadInput(f"{what}: {value!r} is not a number")
    if result < 0:
        raise BadInput(f"{what}: {value!r} is negative")
    return result


def parse_hex_bytes(value: Any, what: str, *, length: int | None = None) -> bytes:
    """Bytes given as `0x` hex text, optionally of exactly `length` bytes."""
    if not isinstance(value, str) or value[:2] not in ("0x", "0X"):
        raise BadInput(f"{what}: {value!r} is not 0x-prefixed hex")
    try:
        data = bytes.fromhex(value[2:])
    except ValueError:
        raise BadInput(f"{what}: {value!r} is not 0x-prefixed hex") from None
    if length is not None and len(data) != length:
        raise BadInput(f"{what}: {len(data)} bytes, expected {length}")
    return data


def _quantity_hex(value: Any, what: str) -> str:
    """Canonical hex of a quantity, the form `math.HexOrDecimal64/256` reads."""
    return hex(parse_quantity(value, what))


def _word_hex(value: Any, what: str) -> str:
    """A storage key or value as 32-byte hex; geth rejects odd-length hex there."""
    number = parse_quantity(value, what)
    if number >= 2**256:
        raise BadInput(f"{what}: {value!r} does not fit in 32 bytes")
    return "0x" + number.to_bytes(32, "big").hex()


def _data_hex(value: Any, what: str, *, length: int | None = None) -> str:
    """Lower-case `0x` hex of a byte string, checked for shape."""
    return "0x" + parse_hex_bytes(value, what, length=length).hex()


def genesis_header_fields(network: str, header: Mapping[str, Any]) -> dict[str, Any]:
    """
    The `core.Genesis` fields taken from an EEST genesis header, `alloc` and
    `config` aside, in the order go-ethereum's test runner copies them.

    The optional fields are copied only when the header has them, as the
    runner does; the client fills in defaults for the rest.
    """
    network_fork(network)
    return _header_fields(header, "genesisBlockHeader")


def _header_fields(header: Mapping[str, Any], name: str) -> dict[str, Any]:
    """`genesis_header_fields` for any fork; `name` is the header's key, for messages."""
    number = parse_quantity(header.get("number", 0), f"{name}.number")
    if number != 0:
        raise BadInput(f"{name}.number: {number}, a genesis block must be number 0")
    fields: dict[str, Any] = {
        "nonce": hex(int.from_bytes(_nonce_bytes(header.get("nonce", "0x" + "00" * 8), name), "big")),
        "timestamp": _quantity_hex(header.get("timestamp", 0), f"{name}.timestamp"),
        "extraData": _data_hex(header.get("extraData", "0x"), f"{name}.extraData"),
        "gasLimit": _quantity_hex(_required(header, "gasLimit", name), f"{name}.gasLimit"),
        "difficulty": _quantity_hex(header.get("difficulty", 0), f"{name}.difficulty"),
        "mixHash": _data_hex(header.get("mixHash", data_hex(ZERO_HASH)), f"{name}.mixHash", length=32),
        "coinbase": _data_hex(
            header.get("coinbase", "0x" + "00" * 20), f"{name}.coinbase", length=20
        ),
        "number": "0x0",
        "gasUsed": _quantity_hex(header.get("gasUsed", 0), f"{name}.gasUsed"),
        "parentHash": _data_hex(
            header.get("parentHash", data_hex(ZERO_HASH)), f"{name}.parentHash", length=32
        ),
    }
    for key in ("baseFeePerGas", "excessBlobGas", "blobGasUsed", "slotNumber"):
        if header.get(key) is not None:
            fields[key] = _quantity_hex(header[key], f"{name}.{key}")
    return fields


def _nonce_bytes(value: Any, name: str) -> bytes:
    """The 8-byte PoW nonce, which fixtures write as fixed-width hex."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**64:
        return value.to_bytes(8, "big")
    return parse_hex_bytes(value, f"{name}.nonce", length=8)


def _required(header: Mapping[str, Any], key: str, name: str) -> Any:
    """`header[key]`, or `BadInput` saying the genesis header lacks it."""
    if header.get(key) is None:
        raise BadInput(f"{name}: no {key}")
    return header[key]


def geth_alloc_account(address: str, account: Any) -> dict[str, Any]:
    """
    One `pre` account as a `types.Account` in the form geth reads without
    surprises: canonical hex quantities, 32-byte storage words, and only
    the fields that are set.
    """
    where = f"pre[{address}]"
    if not isinstance(account, Mapping):
        raise BadInput(f"{where}: not an object")
    converted: dict[str, Any] = {
        "balance": _quantity_hex(account.get("balance", 0), f"{where}.balance")
    }
    nonce = parse_quantity(account.get("nonce", 0), f"{where}.nonce")
    if nonce >= 2**64:
        raise BadInput(f"{where}.nonce: {nonce} does not fit in 64 bits")
    if nonce:
        converted["nonce"] = hex(nonce)
    code = _data_hex(account.get("code", "0x"), f"{where}.code")
    if code != "0x":
        converted["code"] = code
    storage = account.get("storage") or {}
    if not isinstance(storage, Mapping):
        raise BadInput(f"{where}.storage: not an object")
    if storage:
        converted["storage"] = {
            _word_hex(key, f"{where}.storage key"): _word_hex(value, f"{where}.storage[{key}]")
            for key, value in storage.items()
        }
    return converted


def _alloc_key(address: Any) -> str:
    """An alloc address as lower-case hex, checked to be 20 bytes."""
    return _data_hex(address, f"pre key {address!r}", length=20)


def check_genesis_state(header: Any, pre: Any, *, header_name: str) -> None:
    """
    Convert the genesis header and every `pre` account the way
    `write_client_genesis` will, writing nothing: a malformed genesis is then
    bad input found before the run, not a client that fails to start in
    the middle of it. The fork is not checked (a client the user runs may
    know forks balgen's geth config table does not).
    """
    if not isinstance(header, Mapping):
        raise BadInput(f"{header_name}: not an object")
    _header_fields(header, header_name)
    if not isinstance(pre, Mapping):
        raise BadInput("pre: not an object")
    for address, account in pre.items():
        _alloc_key(address)
        geth_alloc_account(address, account)
