"""
A blockchain fixture's chain as t8n inputs: its pre-state, and per block the
environment and transactions t8n needs to run it again.

Three formats are read: `blockchain_test` (headers as JSON, transactions in
each block's RLP), `blockchain_test_engine` and `blockchain_test_engine_x`
(Engine API payloads; the latter's pre-state lives in the pre-alloc group
file its `preHash` names). Blocks a client must reject (`expectException`,
`validationError`, `errorCode`) leave the state unchanged and are dropped.
The benchmark block is the payload marked `testing`, or else the last block.
Anything missing or malformed is a `BadInput` naming the file, test and field.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import rlp

from ..chain.header import Header
from ..ethereum.chain_constants import EMPTY_OMMERS_HASH
from ..plumbing.errors import BadInput
from ..fixtures.files import find_pre_alloc, fixture_format, format_names, formats_where, known_format, pre_hash_of
from ..fixtures.formats import FixtureFormat
from ..fixtures.models import FixtureExecutionPayload
from ..fixtures.reading import StreamedPre, read_fixture_document, validated, validated_value
from ..ethereum.hextypes import Hash32, data_hex, quantity_hex

FORMATS = format_names(formats_where(lambda known: known.chain is not None))
"""The formats whose chain is read here."""
TESTING_PHASE = "testing"


@dataclass(frozen=True)
class ChainBlock:
    """One block as t8n runs it, with the facts that chain it to the next."""

    number: int
    hash: str
    parent_hash: str
    state_root: str
    env: dict[str, Any]
    """t8n's environment, all but `blockHashes` (which needs the ancestors)."""
    txs_rlp: bytes
    """The RLP list of the transactions as t8n reads them (typed ones as byte strings)."""


@dataclass(frozen=True)
class FixtureChain:
    """One fixture's chain: pre-state, valid blocks and which of them is measured."""

    name: str
    format: str
    network: str
    pre: StreamedPre
    """The pre-state alloc, left in its file (a contract set's is gigabytes)."""
    blocks: tuple[ChainBlock, ...]
    benchmark: int
    """Index of the benchmark block in `blocks`."""


def required(mapping: Any, key: str, where: str) -> Any:
    """`mapping[key]`, or a BadInput saying the field is missing."""
    if not isinstance(mapping, Mapping) or key not in mapping:
        raise BadInput(f"{where}: missing field {key!r}")
    return mapping[key]


def t8n_env(header: Header, withdrawals: list[dict[str, str]]) -> dict[str, Any]:
    """The t8n environment of the block with `header` (fields the fork lacks left out)."""
    env: dict[str, Any] = {
        "currentCoinbase": data_hex(header.fee_recipient),
        "currentGasLimit": quantity_hex(header.gas_limit),
        "currentNumber": quantity_hex(header.number),
        "currentTimestamp": quantity_hex(header.timestamp),
        "currentRandom": data_hex(header.prev_randao),
        "currentDifficulty": quantity_hex(header.difficulty),
        "parentUncleHash": data_hex(EMPTY_OMMERS_HASH),
        "withdrawals": withdrawals,
    }
    optional = {
        "currentBaseFee": header.base_fee_per_gas,
        "currentExcessBlobGas": header.excess_blob_gas,
        "slotNumber": header.slot_number,
    }
    env.update({key: quantity_hex(value) for key, value in optional.items() if value is not None})
    if header.parent_beacon_block_root is not None:
        env["parentBeaconBlockRoot"] = data_hex(header.parent_beacon_block_root)
    return env


def chain_block(header: Header, block_hash: bytes, transactions: list[Any], withdrawals: list[dict[str, str]]) -> ChainBlock:
    """The block with `header`, known by `block_hash`, as t8n runs it."""
    return ChainBlock(
        number=header.number,
        hash=data_hex(block_hash),
        parent_hash=data_hex(header.parent_hash),
        state_root=data_hex(header.state_root),
        env=t8n_env(header, withdrawals),
        txs_rlp=rlp.encode(transactions),
    )


def _int(value: bytes) -> int:
    return int.from_bytes(value, "big")


def block_from_rlp(block: Mapping[str, Any], where: str, field: str) -> ChainBlock:
    """A `blockchain_test` block (`field` in the test `where` names): header from `blockHeader`,
    transactions and withdrawals from `rlp`."""
    header = validated(Header, required(block, "blockHeader", f"{where}: {field}"), where, f"{field}.blockHeader")
    try:
        body = rlp.decode(bytes.fromhex(str(required(block, "rlp", f"{where}: {field}")).removeprefix("0x")))
        transactions = body[1]
        withdrawals = [
            {
                "index": quantity_hex(_int(index)),
                "validatorIndex": quantity_hex(_int(validator)),
                "address": data_hex(address),
                "amount": quantity_hex(_int(amount)),
            }
            for index, validator, address, amount in (body[3] if len(body) > 3 else [])
        ]
    except (ValueError, TypeError, IndexError, rlp.DecodingError):
        raise BadInput(f"{where}: {field}.rlp: not a block's RLP") from None
    return chain_block(header, header.hash, transactions, withdrawals)


def block_from_payload(params: Sequence[Any], where: str, field: str) -> ChainBlock:
    """An `engineNewPayloads` entry's block (its `params` at `field`): the payload, and the beacon root of V3+ calls."""
    if not params:
        raise BadInput(f"{where}: {field} is empty")
    payload = validated(FixtureExecutionPayload, params[0], where, f"{field}[0]")
    header = Header(
        parent_hash=payload.parent_hash,
        fee_recipient=payload.fee_recipient,
        state_root=payload.state_root,
        number=payload.block_number,
        gas_limit=payload.gas_limit,
        timestamp=payload.timestamp,
        prev_randao=payload.prev_randao,
        base_fee_per_gas=payload.base_fee_per_gas,
        excess_blob_gas=payload.excess_blob_gas,
        parent_beacon_block_root=validated_value(Hash32, params[2], where, f"{field}[2]") if len(params) > 2 else None,
        slot_number=payload.slot_number,
    )
    transactions = [decoded_transaction(raw, where, f"{field}[0].transactions[{index}]") for index, raw in enumerate(payload.transactions)]
    return chain_block(header, payload.block_hash, transactions, list(payload.withdrawals))


def decoded_transaction(raw: bytes, where: str, field: str) -> bytes | list[Any]:
    """A payload's transaction as a block body holds it: a typed one as its bytes, a legacy one decoded."""
    if raw[:1] < b"\xc0":
        return raw
    try:
        return rlp.decode(raw)
    except rlp.DecodingError as error:
        raise BadInput(f"{where}: {field}: not a legacy transaction's RLP ({error.args[0] if error.args else error})") from None


def blockchain_blocks(fixture: Mapping[str, Any], where: str) -> tuple[tuple[ChainBlock, ...], int]:
    """The valid blocks of a `blockchain_test`; the last one is measured."""
    entries = required(fixture, "blocks", where)
    if not isinstance(entries, list):
        raise BadInput(f"{where}: blocks: not a list")
    blocks = tuple(
        block_from_rlp(entry, where, f"blocks[{index}]")
        for index, entry in enumerate(entries)
        if not (isinstance(entry, Mapping) and "expectException" in entry)
    )
    return blocks, len(blocks) - 1


def engine_blocks(fixture: Mapping[str, Any], where: str) -> tuple[tuple[ChainBlock, ...], int]:
    """The valid payloads of an engine fixture; the `testing` one (else the last) is measured."""
    entries = required(fixture, "engineNewPayloads", where)
    if not isinstance(entries, list):
        raise BadInput(f"{where}: engineNewPayloads: not a list")
    blocks: list[ChainBlock] = []
    benchmark = None
    for index, entry in enumerate(entries):
        entry_where = f"{where}: engineNewPayloads[{index}]"
        if not isinstance(entry, Mapping):
            raise BadInput(f"{entry_where}: not an object")
        if entry.get("validationError") is not None or entry.get("errorCode") is not None:
            continue
        params = required(entry, "params", entry_where)
        if not isinstance(params, list):
            raise BadInput(f"{entry_where}.params: not a list")
        if entry.get("phase") == TESTING_PHASE:
            benchmark = len(blocks)
        blocks.append(block_from_payload(params, where, f"engineNewPayloads[{index}].params"))
    return tuple(blocks), len(blocks) - 1 if benchmark is None else benchmark


def fixture_network(fixture: Mapping[str, Any], where: str) -> str:
    """The fork name: `network`, else `config.network`."""
    network = fixture.get("network") or (fixture.get("config") or {}).get("network")
    if not isinstance(network, str) or not network:
        raise BadInput(f"{where}: missing field 'network'")
    return network


@lru_cache(maxsize=1)
def pre_alloc_group(path: Path) -> Mapping[str, Any]:
    """A pre-alloc group file, its `pre` left in the file; consecutive fixtures usually share one."""
    return read_fixture_document(path)


def pre_state(fixture: Mapping[str, Any], path: Path, chain_of: FixtureFormat, where: str) -> StreamedPre:
    """The fixture's pre-state alloc: its `pre`, or its pre-alloc group's."""
    if not chain_of.pre_in_group:
        pre = required(fixture, "pre", where)
    else:
        group_path = find_pre_alloc(path, pre_hash_of(fixture, where), where)
        pre = required(pre_alloc_group(group_path), "pre", str(group_path))
    if not isinstance(pre, StreamedPre):
        raise BadInput(f"{where}: pre: not an object")
    return pre


def chain_format(fixture: Mapping[str, Any], where: str) -> FixtureFormat:
    """The fixture's format, if it is one of the blockchain formats read here."""
    found = fixture_format(fixture)
    if found is None:
        raise BadInput(f"{where}: unknown fixture format (no fixture-format, blocks or engineNewPayloads)")
    known = known_format(found)
    if known is None or known.chain is None:
        raise BadInput(f"{where}: format {found!r} has no chain to inspect (readable: {', '.join(FORMATS)})")
    return known


def fixture_chain(path: Path, name: str, fixture: Any) -> FixtureChain:
    """Read one fixture of `path` into t8n inputs."""
    where = f"{path}: test {name}"
    if not isinstance(fixture, Mapping):
        raise BadInput(f"{where}: not a JSON object")
    chain_of = chain_format(fixture, where)
    network = fixture_network(fixture, where)
    read_blocks = blockchain_blocks if chain_of.chain == "blocks" else engine_blocks
    blocks, benchmark = read_blocks(fixture, where)
    if not blocks:
        raise BadInput(f"{where}: no valid block")
    return FixtureChain(
        name=name,
        format=chain_of.name,
        network=network,
        pre=pre_state(fixture, path, chain_of, where),
        blocks=blocks,
        benchmark=benchmark,
    )
