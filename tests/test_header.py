"""
Block headers: their RLP, their hash, and the EIP-1559 base fee of the next block.

A client rejects a fixture whose header hash it computes differently, so the
header balgen hashes must be exactly the one the fixture carries, in JSON and
in RLP, and every block must point at the hash of the block before it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rlp
from eth_hash.auto import keccak

from balgen.chain.builder import genesis_state_root
from balgen.chain.header import Header, next_base_fee
from balgen.ethereum.chain_constants import EMPTY_BLOCK_ACCESS_LIST_HASH, EMPTY_REQUESTS_HASH, EMPTY_TRIE_ROOT
from balgen.chain.t8n import TransitionTool
from balgen.fill.session import FillSession
from balgen.fixtures.models import FixtureEnvironment
from balgen.model.family import PlannedWorkload
from balgen.ethereum.forks import AMSTERDAM, OSAKA, PRAGUE, Fork
from balgen.generators import keccak_chain, serial_chain
from balgen.plumbing.toolchain import pinned_evm
from balgen.model.workload import FillLevel, Placement, WorkloadParams

# --- (a) a known answer: Ethereum mainnet block 1 -------------------------

MAINNET_BLOCK_1_HASH = "88e96d4537bea4d9c05d12549907b32561d3bf31f45aae734cdc119f13406cb6"


def mainnet_block_1() -> Header:
    """Mainnet block 1 (30 Jul 2015), a pre-London header: no optional fields."""
    return Header(
        parent_hash="0xd4e56740f876aef8c010b86a40d5f56745a118d0906a34e69aec8c0db1cb8fa3",
        ommers_hash="0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347",
        fee_recipient="0x05a56e2d52c817161883f50c441c3228cfe54d9f",
        state_root="0xd67e4d450343046425ae4271474353857ab860dbc0a1dde64b41b5cd3a532bf3",
        transactions_trie="0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421",
        receipts_root="0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421",
        logs_bloom=bytes(256),
        difficulty=17_171_480_576,
        number=1,
        gas_limit=5000,
        gas_used=0,
        timestamp=1_438_269_988,
        extra_data=b"Geth/v1.0.0/linux/go1.4.2",
        prev_randao="0x969b900de27b6ac6a67742365dd65f55a0526c41fd18e1b16f1a1215c2e66f59",
        nonce="0x539bd4979fef1ec4",
    )


def test_mainnet_block_1_hash() -> None:
    header = mainnet_block_1()
    assert header.hash.hex() == MAINNET_BLOCK_1_HASH
    assert len(rlp.decode(header.rlp)) == 15
    assert header.json_with_hash()["hash"] == "0x" + MAINNET_BLOCK_1_HASH


def test_one_changed_field_changes_the_hash() -> None:
    header = mainnet_block_1()
    fields = {name: getattr(header, name) for name in Header.model_fields if getattr(header, name) is not None}
    for name, value in fields.items():
        changed = value + 1 if isinstance(value, int) else bytes([value[0] ^ 1]) + value[1:]
        assert Header(**{**fields, name: changed}).hash != header.hash, f"{name} is not hashed"


def test_json_round_trip_keeps_the_hash() -> None:
    """A header read back from its fixture JSON hashes to the same block hash."""
    data = mainnet_block_1().json_with_hash()
    stated = data.pop("hash")
    assert "0x" + Header.model_validate(data).hash.hex() == stated


# --- (b) which fields a fork's header has ----------------------------------

FORK_FIELDS = {
    # the optional fields of each fork's header, in consensus order (go-ethereum's types.Header)
    PRAGUE: ["withdrawals_root", "blob_gas_used", "excess_blob_gas", "parent_beacon_block_root", "requests_hash"],
    OSAKA: ["withdrawals_root", "blob_gas_used", "excess_blob_gas", "parent_beacon_block_root", "requests_hash"],
    AMSTERDAM: [
        "withdrawals_root", "blob_gas_used", "excess_blob_gas", "parent_beacon_block_root", "requests_hash",
        "block_access_list_hash", "slot_number",
    ],
}  # fmt: skip


@pytest.mark.parametrize("fork", FORK_FIELDS, ids=lambda fork: fork.name)
def test_each_fork_requires_the_header_fields_of_its_upgrades(fork: Fork) -> None:
    optional = [name for name in Header.model_fields if Header.upgrade_of(name) is not None]
    assert [name for name in optional if Header.requires(fork, name)] == FORK_FIELDS[fork]


def test_a_header_for_a_fork_drops_the_fields_it_lacks_and_names_the_one_missing() -> None:
    base = {name: value for name, value in mainnet_block_1().model_dump().items() if value is not None}
    later = {"base_fee_per_gas": 7, "withdrawals_root": bytes(32), "blob_gas_used": 0, "excess_blob_gas": 0,
             "parent_beacon_block_root": bytes(32), "requests_hash": bytes(32)}  # fmt: skip
    prague = Header.for_fork(PRAGUE, **base, **later, block_access_list_hash=bytes(32), slot_number=5)
    assert prague.block_access_list_hash is None and prague.slot_number is None
    assert len(rlp.decode(prague.rlp)) == 15 + len(FORK_FIELDS[PRAGUE]) + 1  # + the base fee
    with pytest.raises(ValueError, match="Amsterdam header requires block_access_list_hash, slot_number"):
        Header.for_fork(AMSTERDAM, **base, **later)


# --- (c) headers of filled fixtures ----------------------------------------

CASES = [
    (AMSTERDAM, Placement.BLOCKS),
    (AMSTERDAM, Placement.GENESIS),
    (OSAKA, Placement.BLOCKS),
    (PRAGUE, Placement.BLOCKS),
]
HEADER_FIELDS = {"Amsterdam": 23, "Osaka": 21, "Prague": 21}
"""Header RLP length: 15 legacy fields + base fee, withdrawals root, blob gas used,
excess blob gas, beacon root, requests hash (Cancun-Prague); + BAL hash and slot number (Amsterdam)."""


@pytest.fixture(scope="module", params=CASES, ids=[f"{f.name}-{p.value}" for f, p in CASES])
def filled(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Fork, Path]:
    fork, placement = request.param
    output = tmp_path_factory.mktemp(f"headers-{fork.name}-{placement.value}")
    planned = [
        PlannedWorkload(serial_chain.FAMILY, WorkloadParams(fork, 1_000_000, FillLevel.MAX, placement)),
        PlannedWorkload(keccak_chain.FAMILY, WorkloadParams(fork, 1_000_000, FillLevel.GREEDY, placement)),
    ]
    session = FillSession(
        t8n=TransitionTool(pinned_evm()), output=output, all_gas_values=[1_000_000], planned=planned
    )
    try:
        for item in planned:
            session.fill(item.build(), test_function=f"fillers/test_{item.family.name}.py::test_{item.family.name}")
    finally:
        session.close()
    return fork, output


def load_fixtures(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    entries = []
    for path in sorted(folder.glob("for_*/*/*.json")):
        entries.extend(json.loads(path.read_text()).items())
    assert entries, f"nothing filled under {folder}"
    return entries


def header_of_json(data: dict[str, str]) -> Header:
    return Header.model_validate({key: value for key, value in data.items() if key != "hash"})


@pytest.mark.integration
def test_genesis_rlp_is_the_hashed_genesis_header(filled: tuple[Fork, Path]) -> None:
    fork, output = filled
    for name, fixture in load_fixtures(output / "blockchain_tests"):
        genesis_json = fixture["genesisBlockHeader"]
        header_fields, transactions, ommers, withdrawals = rlp.decode(bytes.fromhex(fixture["genesisRLP"][2:]))
        assert (transactions, ommers, withdrawals) == ([], [], []), name
        assert len(header_fields) == HEADER_FIELDS[fork.name], name
        encoded = rlp.encode(header_fields)
        assert encoded == header_of_json(genesis_json).rlp, f"{name}: genesisRLP and genesisBlockHeader differ"
        assert "0x" + keccak(encoded).hex() == genesis_json["hash"], name


@pytest.mark.integration
def test_block_rlp_headers_hash_to_the_block_hashes_and_chain(filled: tuple[Fork, Path]) -> None:
    fork, output = filled
    for name, fixture in load_fixtures(output / "blockchain_tests"):
        parent = fixture["genesisBlockHeader"]["hash"]
        for block in fixture["blocks"]:
            stated = block["blockHeader"]
            header_fields = rlp.decode(bytes.fromhex(block["rlp"][2:]))[0]
            assert len(header_fields) == HEADER_FIELDS[fork.name], name
            encoded = rlp.encode(header_fields)
            assert encoded == header_of_json(stated).rlp, f"{name} block {block['blocknumber']}: RLP and JSON differ"
            assert "0x" + keccak(encoded).hex() == stated["hash"], f"{name} block {block['blocknumber']}"
            assert stated["parentHash"] == parent, f"{name} block {block['blocknumber']} does not chain"
            parent = stated["hash"]
        assert fixture["lastblockhash"] == parent, name


@pytest.mark.integration
def test_benchmark_blocks_keep_the_genesis_base_fee(filled: tuple[Fork, Path]) -> None:
    """With a 1e12 gas limit the base fee never moves, so the senders' fee cap always covers it."""
    _, output = filled
    for name, fixture in load_fixtures(output / "blockchain_tests"):
        fees = [fixture["genesisBlockHeader"]["baseFeePerGas"]]
        fees += [block["blockHeader"]["baseFeePerGas"] for block in fixture["blocks"]]
        assert set(fees) == {"0x07"}, name


@pytest.mark.integration
def test_engine_payloads_carry_the_same_hashes(filled: tuple[Fork, Path]) -> None:
    _, output = filled
    blockchain = dict(load_fixtures(output / "blockchain_tests"))
    for name, fixture in load_fixtures(output / "blockchain_tests_engine"):
        payloads = [entry["params"][0] for entry in fixture["engineNewPayloads"]]
        blocks = blockchain[name]["blocks"]
        assert [p["blockHash"] for p in payloads] == [b["blockHeader"]["hash"] for b in blocks], name
        assert [p["parentHash"] for p in payloads] == [b["blockHeader"]["parentHash"] for b in blocks], name
        assert fixture["genesisBlockHeader"] == blockchain[name]["genesisBlockHeader"], name


@pytest.mark.integration
def test_engine_x_payloads_chain_from_the_group_genesis(filled: tuple[Fork, Path], tmp_path: Path) -> None:
    """
    A consumer builds a group's genesis as execution-spec-tests does
    (`FixtureHeader.genesis`): the environment's fields, the state root of
    `pre`, and the fork's empty roots. The engine_x payloads chain from it.
    """
    fork, output = filled
    root = output / "blockchain_tests_engine_x"
    (group_file,) = (root / "pre_alloc").glob("*.json")
    group = json.loads(group_file.read_text())
    alloc = tmp_path / "pre.json"
    alloc.write_text(json.dumps(group["pre"]))
    state_root = genesis_state_root(TransitionTool(pinned_evm()), alloc, tmp_path / "root")
    environment = FixtureEnvironment.model_validate(group["environment"])
    fields: dict[str, Any] = {
        **environment.genesis_header_fields(),
        "parentHash": bytes(32),
        "stateRoot": state_root,
        "withdrawalsRoot": EMPTY_TRIE_ROOT,  # the root of the environment's empty withdrawals list
        "requestsHash": EMPTY_REQUESTS_HASH,
    }
    if Header.requires(fork, "block_access_list_hash"):
        fields["blockAccessListHash"] = EMPTY_BLOCK_ACCESS_LIST_HASH
    if Header.requires(fork, "slot_number"):
        fields["slotNumber"] = 0
    genesis_hash = "0x" + Header.model_validate(fields).hash.hex()
    for name, fixture in load_fixtures(root):
        parent = genesis_hash
        for entry in fixture["engineNewPayloads"]:
            payload = entry["params"][0]
            assert payload["parentHash"] == parent, name
            parent = payload["blockHash"]
        assert fixture["lastblockhash"] == parent, name


# --- (d) EIP-1559 base fee --------------------------------------------------


def parent_with(gas_limit: int, gas_used: int, base_fee: int) -> Header:
    return Header(
        parent_hash=bytes(32),
        fee_recipient=bytes(20),
        state_root=bytes(32),
        number=1,
        gas_limit=gas_limit,
        gas_used=gas_used,
        timestamp=12,
        base_fee_per_gas=base_fee,
    )


def test_base_fee_unchanged_at_target() -> None:
    assert next_base_fee(parent_with(30_000_000, 15_000_000, 1_000_000_000)) == 1_000_000_000


def test_base_fee_rises_12_5_percent_after_a_full_block() -> None:
    assert next_base_fee(parent_with(30_000_000, 30_000_000, 1_000_000_000)) == 1_125_000_000


def test_base_fee_falls_12_5_percent_after_an_empty_block() -> None:
    assert next_base_fee(parent_with(30_000_000, 0, 1_000_000_000)) == 875_000_000


def test_base_fee_rises_by_at_least_one_wei() -> None:
    assert next_base_fee(parent_with(30_000_000, 15_000_001, 7)) == 8


@pytest.mark.parametrize("gas_used", [0, 30_000_000, 60_000_000, 1_000_000_000])
def test_base_fee_stays_7_far_below_a_1e12_limit(gas_used: int) -> None:
    assert next_base_fee(parent_with(10**12, gas_used, 7)) == 7
