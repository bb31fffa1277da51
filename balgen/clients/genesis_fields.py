"""
A fixture's genesis as go-ethereum's genesis fields, from which
`genesis_files` writes each client's genesis file.

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

from typing import Any

from ..chain.header import Header
from ..ethereum.chain_constants import (
    EMPTY_BLOCK_ACCESS_LIST_HASH,
    EMPTY_BLOOM,
    EMPTY_OMMERS_HASH,
    EMPTY_REQUESTS_HASH,
    EMPTY_TRIE_ROOT,
    INITIAL_BASE_FEE,
    ZERO_HASH,
)
from ..fixtures.models import FixtureAccount, FixtureConfig, FixtureGenesisHeader
from ..ethereum.forks import BlobParams
from ..ethereum.hextypes import data_hex
from .chain_config import geth_blob_schedule, network_fork


DERIVED_HEADER_FIELDS: dict[str, bytes] = {
    "ommers_hash": EMPTY_OMMERS_HASH,
    "transactions_trie": EMPTY_TRIE_ROOT,
    "receipts_root": EMPTY_TRIE_ROOT,
    "logs_bloom": EMPTY_BLOOM,
    "withdrawals_root": EMPTY_TRIE_ROOT,
    "parent_beacon_block_root": ZERO_HASH,
    "requests_hash": EMPTY_REQUESTS_HASH,
    "block_access_list_hash": EMPTY_BLOCK_ACCESS_LIST_HASH,
}
"""The genesis header fields (`Header`'s names) a client derives itself whatever its genesis file
says, each where the fork has it (go-ethereum's `Genesis.ToBlock`)."""

def fixture_blob_schedule(fixture_config: FixtureConfig) -> dict[str, BlobParams]:
    """The `config.blobSchedule` of a fixture, by lower-cased fork name."""
    return {
        name.lower(): BlobParams(entry.target, entry.max, entry.base_fee_update_fraction)
        for name, entry in (fixture_config.blob_schedule or {}).items()
    }


def fixture_config_mismatches(network: str, fixture_config: FixtureConfig) -> list[str]:
    """
    Where a fixture's `config` disagrees with the chain config geth will run.

    Only the blob schedule entries geth's config has are compared (fixtures
    also list named forks such as "Osaka" that geth's schedule folds into
    the previous entry); the chain id is not a disagreement, it is taken
    over (the client runs with the fixture's `config.chainid`). A disagreement here would make the import
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


def derived_header_mismatches(network: str, header: FixtureGenesisHeader) -> list[str]:
    """
    Genesis header fields the client computes itself and that differ from
    the fixture's, apart from the state root (which depends on the alloc).

    A genesis hash mismatch alone says nothing about its cause; these
    constants are the usual suspects, so the replay lists them.
    """
    fork = network_fork(network)
    expected = {
        Header.model_fields[field].alias or field: data_hex(value)
        for field, value in DERIVED_HEADER_FIELDS.items()
        if Header.requires(fork, field)
    }
    fields = header.json_dict()
    problems = []
    for key, value in expected.items():
        found = fields.get(key)
        if found is None:
            problems.append(f"genesis header has no {key}, the client derives {value}")
        elif str(found).lower() != value:
            problems.append(f"genesis header {key} is {found}, the client derives {value}")
    return problems


def genesis_header_fields(network: str, header: FixtureGenesisHeader) -> dict[str, Any]:
    """
    The `core.Genesis` fields taken from an EEST genesis header, `alloc` and
    `config` aside, in the order go-ethereum's test runner copies them.

    The optional fields are copied only when the header has them, as the
    runner does; the client fills in defaults for the rest.
    """
    network_fork(network)
    fields: dict[str, Any] = {
        "nonce": hex(int.from_bytes(header.nonce, "big")),
        "timestamp": hex(header.timestamp),
        "extraData": data_hex(header.extra_data),
        "gasLimit": hex(header.gas_limit),
        "difficulty": hex(header.difficulty),
        "mixHash": data_hex(header.mix_hash),
        "coinbase": data_hex(header.coinbase),
        "number": "0x0",
        "gasUsed": hex(header.gas_used),
        "parentHash": data_hex(header.parent_hash),
    }
    optional = {
        "baseFeePerGas": header.base_fee_per_gas,
        "excessBlobGas": header.excess_blob_gas,
        "blobGasUsed": header.blob_gas_used,
        "slotNumber": header.slot_number,
    }
    fields.update((key, hex(value)) for key, value in optional.items() if value is not None)
    return fields


def client_genesis_header(network: str, header: FixtureGenesisHeader, state_root: bytes) -> Header:
    """
    The genesis block header a client builds from the genesis file balgen
    writes for `header` (`genesis_header_fields`) over an alloc whose state
    root is `state_root`, as go-ethereum's `Genesis.ToBlock` builds it: the
    copied fields, the derived ones (`DERIVED_HEADER_FIELDS`), and for an
    optional field the file leaves out its default (the initial base fee,
    zero blob gas, slot 0). Its `hash` is the genesis hash the client reports.
    """
    return Header.for_fork(
        network_fork(network),
        parent_hash=header.parent_hash,
        fee_recipient=header.coinbase,
        state_root=state_root,
        difficulty=header.difficulty,
        number=header.number,
        gas_limit=header.gas_limit,
        gas_used=header.gas_used,
        timestamp=header.timestamp,
        extra_data=header.extra_data,
        prev_randao=header.mix_hash,
        nonce=header.nonce,
        base_fee_per_gas=INITIAL_BASE_FEE if header.base_fee_per_gas is None else header.base_fee_per_gas,
        blob_gas_used=header.blob_gas_used or 0,
        excess_blob_gas=header.excess_blob_gas or 0,
        slot_number=header.slot_number or 0,
        **DERIVED_HEADER_FIELDS,
    )


def _word_hex(value: int) -> str:
    """A storage key or value as 32-byte hex; geth rejects odd-length hex there."""
    return "0x" + value.to_bytes(32, "big").hex()


def geth_alloc_account(account: FixtureAccount) -> dict[str, Any]:
    """
    One `pre` account as a `types.Account` in the form geth reads without
    surprises: canonical hex quantities, 32-byte storage words, and only
    the fields that are set.
    """
    converted: dict[str, Any] = {"balance": hex(account.balance)}
    if account.nonce:
        converted["nonce"] = hex(account.nonce)
    if account.code:
        converted["code"] = data_hex(account.code)
    if account.storage:
        converted["storage"] = {_word_hex(key): _word_hex(value) for key, value in account.storage.items()}
    return converted
