"""
Chain building: genesis, then each block through t8n, headers and hashes by balgen.

t8n executes; balgen assembles what t8n does not: the environment of each
block (chained parent hash, timestamp, base fee, blob gas, slot number, beacon
root), the header and its hash, and the transaction RLP.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterator, Sequence

import rlp
from rlp.codec import length_prefix

from ..ethereum.chain_constants import (
    CHAIN_ID,
    EMPTY_BLOCK_ACCESS_LIST_HASH,
    EMPTY_REQUESTS_HASH,
    EMPTY_TRIE_ROOT,
    GENESIS_EXTRA_DATA,
    ZERO_HASH,
)
from ..ethereum.forks import BENCHMARK_BLOCK_GAS_LIMIT, Fork
from ..ethereum.hextypes import data_hex
from ..model.transactions import SignedTx
from ..model.workload import BlockSpec, Phase
from .bal import AccountChanges, iter_block_access_list
from .header import Header, has_block_access_list, next_base_fee
from .signed_txs import SignedTxFile, raw_envelopes
from .t8n import T8nResult, TransitionTool, access_list_bytes

SIGNED_FILE = "signed.bin"
"""The file in a block's folder holding its signed envelopes."""
FEE_RECIPIENT = bytes.fromhex("2adc25665018aa1fe0e6bc666dac8fc2697ff9ba")
"""execution-spec-tests' default coinbase."""
HELD_ACCESS_LIST_ITEMS = 30_000
"""The most items (accounts and storage keys, as EIP-7928 bounds them: a 60M block has at most
30,000) an access list a built block keeps decoded may have; decoded, a slot takes about 700 bytes."""
GENESIS_BASE_FEE = 7
SECONDS_PER_SLOT = 12


@dataclass(frozen=True)
class BuiltBlock:
    """A block as filled: header, transactions and what t8n said about it."""

    header: Header
    phase: Phase
    txs: Sequence[SignedTx]
    """Usually a `SignedTxFile`: read from the block's folder, not held."""
    requests: tuple[bytes, ...]
    access_list_source: bytes | Path | None
    """The BAL's RLP, on forks that have one: held, or a large one's file (`T8nResult.access_list_source`)."""
    t8n: T8nResult
    t8n_seconds: float = 0.0
    """Time t8n took to build this block."""

    @property
    def block_access_list(self) -> bytes | None:
        """The BAL's RLP (a large one read from its file each time: it is used a few times, one at a time)."""
        return access_list_bytes(self.access_list_source)

    def access_list_accounts(self) -> Iterator[AccountChanges]:
        """
        The BAL's accounts (none on forks without one). An access list of up
        to a 60M block's items is decoded once and kept: the checks, the shared chain and the fixtures
        each walk it, and decoding it again each time was a tenth of a fill. A
        large one (a billion-gas block's decodes to hundreds of MB) is decoded
        afresh one account at a time, only its RLP (`block_access_list`) kept.
        """
        held = self._held_access_list
        if held is not None:
            yield from held
        elif self.access_list_source is not None:
            yield from iter_block_access_list(self.block_access_list)

    @cached_property
    def _held_access_list(self) -> tuple[AccountChanges, ...] | None:
        """The decoded accounts of an access list of at most `HELD_ACCESS_LIST_ITEMS` items, else None."""
        if self.access_list_source is None or isinstance(self.access_list_source, Path):
            return None  # none, or one too large to hold even as RLP
        held: list[AccountChanges] = []
        items = 0
        for account in iter_block_access_list(self.access_list_source):
            items += 1 + len(account.storage_changes) + len(account.storage_reads)
            if items > HELD_ACCESS_LIST_ITEMS:
                return None
            held.append(account)
        return tuple(held)

    def rlp_pieces(self) -> Iterator[bytes]:
        """
        The block RLP as blockchain tests carry it (header, txs, ommers,
        withdrawals), in pieces, one per transaction: a block of tens of
        thousands of transactions is written out without its RLP held whole.

        A typed transaction sits in the list as an RLP byte string (its envelope).
        """
        block_prefix, txs_prefix, _ = self._rlp_prefixes()
        yield block_prefix
        yield self.header.rlp
        yield txs_prefix
        for raw in raw_envelopes(self.txs):
            yield rlp.encode(raw)
        yield EMPTY_LISTS

    @property
    def rlp_size(self) -> int:
        """Bytes of the block's RLP (what EIP-7934 bounds), counted without encoding it."""
        block_prefix, txs_prefix, txs_length = self._rlp_prefixes()
        return len(block_prefix) + len(self.header.rlp) + len(txs_prefix) + txs_length + len(EMPTY_LISTS)

    @property
    def rlp(self) -> bytes:
        """The block RLP, whole."""
        return b"".join(self.rlp_pieces())

    def _rlp_prefixes(self) -> tuple[bytes, bytes, int]:
        """The length prefixes of the block's list and of its transactions' list, and the latter's length."""
        txs_length = sum(_byte_string_length(raw) for raw in raw_envelopes(self.txs))
        txs_prefix = length_prefix(txs_length, LIST_OFFSET)
        body_length = len(self.header.rlp) + len(txs_prefix) + txs_length + len(EMPTY_LISTS)
        return length_prefix(body_length, LIST_OFFSET), txs_prefix, txs_length


LIST_OFFSET = 0xC0
"""RLP's length-prefix offset for a list (0x80 for a byte string)."""
EMPTY_LISTS = rlp.encode([]) * 2
"""The block's empty ommers and withdrawals lists."""


def _byte_string_length(value: bytes) -> int:
    """Bytes `value` takes RLP-encoded as a byte string, without encoding it."""
    if len(value) == 1 and value[0] < 0x80:
        return 1
    return len(length_prefix(len(value), 0x80)) + len(value)


@dataclass(frozen=True)
class BuiltChain:
    """Genesis and the blocks on top of it."""

    genesis: Header
    blocks: tuple[BuiltBlock, ...]
    genesis_alloc_path: Path
    sorted_post: bool = False
    """Whether the post-state file is already as `alloc.write_sorted_alloc` writes the changed accounts
    (sorted by address, in the fixture spelling, only the accounts the access lists change): an applied chain's."""

    @property
    def head(self) -> Header:
        return self.blocks[-1].header if self.blocks else self.genesis

    @property
    def alloc_path_before_last_block(self) -> Path:
        """The state the last block was applied to."""
        return self.blocks[-2].t8n.alloc_path if len(self.blocks) > 1 else self.genesis_alloc_path

    @property
    def post_alloc_path(self) -> Path:
        """The state after the last block (t8n's output; for an applied chain, only the accounts
        changed since the genesis: see `applied_chain`)."""
        return self.blocks[-1].t8n.alloc_path


def genesis_header(fork: Fork, state_root: bytes) -> Header:
    """The genesis header of a benchmark chain with state `state_root`."""
    return Header.for_fork(
        fork,
        parent_hash=ZERO_HASH,
        fee_recipient=FEE_RECIPIENT,
        state_root=state_root,
        number=0,
        gas_limit=BENCHMARK_BLOCK_GAS_LIMIT,
        timestamp=0,
        extra_data=GENESIS_EXTRA_DATA,
        base_fee_per_gas=GENESIS_BASE_FEE,
        withdrawals_root=EMPTY_TRIE_ROOT,
        blob_gas_used=0,
        excess_blob_gas=0,
        parent_beacon_block_root=ZERO_HASH,
        requests_hash=EMPTY_REQUESTS_HASH,
        block_access_list_hash=EMPTY_BLOCK_ACCESS_LIST_HASH,
        slot_number=0,
    )


STATE_ROOT_FORK = "Shanghai"
"""A fork whose empty block calls no system contract, so t8n leaves the state as given."""


def genesis_state_root(t8n: TransitionTool, alloc_path: Path, workdir: Path) -> bytes:
    """
    The state root of the allocation in `alloc_path`, computed natively by t8n.

    The Merkle-Patricia state trie is the same on every fork balgen fills for;
    an empty Shanghai block (no beacon root, no parent hashes, no requests,
    zero block reward) changes nothing, so its post-state root is the root of
    the allocation itself. geth checks it again when it imports the genesis.
    """
    env = {
        "currentCoinbase": "0x" + FEE_RECIPIENT.hex(),
        "currentGasLimit": hex(BENCHMARK_BLOCK_GAS_LIMIT),
        "currentNumber": "0x1",
        "currentTimestamp": "0x0",
        "currentRandom": data_hex(ZERO_HASH),
        "currentDifficulty": "0x0",
        "currentBaseFee": hex(GENESIS_BASE_FEE),
        "parentUncleHash": data_hex(ZERO_HASH),
        "withdrawals": [],
    }
    result = t8n.transition_raw(
        STATE_ROOT_FORK, alloc_path, env, [], workdir, label="genesis", write_alloc=False
    )
    return result.state_root


def block_env(fork: Fork, parent: Header, blocks_so_far: Sequence[Header]) -> dict:
    """The t8n environment of the child of `parent`."""
    number = parent.number + 1
    env = {
        "currentCoinbase": "0x" + FEE_RECIPIENT.hex(),
        "currentGasLimit": hex(parent.gas_limit),
        "currentNumber": hex(number),
        "currentTimestamp": hex(parent.timestamp + SECONDS_PER_SLOT),
        "currentRandom": data_hex(ZERO_HASH),
        "currentDifficulty": "0x0",
        "currentBaseFee": hex(next_base_fee(parent)),
        "currentExcessBlobGas": "0x0",
        "parentBeaconBlockRoot": data_hex(ZERO_HASH),
        "parentUncleHash": "0x" + parent.ommers_hash.hex(),
        "withdrawals": [],
        "blockHashes": {str(h.number): "0x" + h.hash.hex() for h in blocks_so_far},
    }
    if Header.requires(fork, "slot_number"):
        env["slotNumber"] = hex(number)
    return env


def block_header(fork: Fork, parent: Header, env: dict, result: T8nResult) -> Header:
    """Header of a block from its environment and t8n's result."""
    r = result.result
    return Header.for_fork(
        fork,
        parent_hash=parent.hash,
        fee_recipient=FEE_RECIPIENT,
        state_root=result.state_root,
        transactions_trie=bytes.fromhex(r["txRoot"][2:]),
        receipts_root=bytes.fromhex(r["receiptsRoot"][2:]),
        logs_bloom=bytes.fromhex(r["logsBloom"][2:]),
        number=int(env["currentNumber"], 16),
        gas_limit=int(env["currentGasLimit"], 16),
        gas_used=result.gas_used,
        timestamp=int(env["currentTimestamp"], 16),
        extra_data=b"",
        base_fee_per_gas=int(env["currentBaseFee"], 16),
        withdrawals_root=bytes.fromhex(r["withdrawalsRoot"][2:]),
        blob_gas_used=int(r.get("blobGasUsed", "0x0"), 16),
        excess_blob_gas=int(r.get("currentExcessBlobGas", "0x0"), 16),
        parent_beacon_block_root=ZERO_HASH,
        requests_hash=bytes.fromhex(r["requestsHash"][2:]),
        block_access_list_hash=r.get("blockAccessListHash"),
        slot_number=env.get("slotNumber"),
    )


def build_chain(
    t8n: TransitionTool,
    fork: Fork,
    genesis_alloc_path: Path,
    blocks: Sequence[BlockSpec],
    workdir: Path,
    *,
    label: str,
    signed: Sequence[Sequence[SignedTx]] | None = None,
    genesis: Header | None = None,
    tracer: str | None = None,
    trace_last_only: bool = False,
) -> BuiltChain:
    """
    Build genesis and `blocks` on the allocation in `genesis_alloc_path`.

    `signed` reuses signatures made for an earlier build of the same blocks;
    `genesis` is the allocation's genesis header when it is already known;
    `tracer` (a native tracer's name) traces every block (or with
    `trace_last_only` the last) in the run that builds it, its traces in the
    block's `t8n.traces`.
    """
    if genesis is None:
        genesis = genesis_header(fork, genesis_state_root(t8n, genesis_alloc_path, workdir / "genesis"))
    headers = [genesis]
    built: list[BuiltBlock] = []
    alloc_path = genesis_alloc_path
    for index, block in enumerate(blocks):
        folder = workdir / f"block{index + 1}"
        txs = signed[index] if signed else SignedTxFile.signing(block.txs, CHAIN_ID, folder / SIGNED_FILE)
        env = block_env(fork, headers[-1], headers)
        t8n_before = t8n.busy_seconds
        result = t8n.transition(
            fork,
            alloc_path,
            env,
            raw_envelopes(txs),
            folder,
            label=f"{label} block {index + 1}",
            tracer=None if trace_last_only and index < len(blocks) - 1 else tracer,
        )
        header = block_header(fork, headers[-1], env, result)
        built.append(
            BuiltBlock(
                header=header,
                phase=block.phase,
                txs=txs,
                requests=tuple(result.requests),
                access_list_source=result.access_list_source if has_block_access_list(fork) else None,
                t8n=result,
                t8n_seconds=t8n.busy_seconds - t8n_before,
            )
        )
        headers.append(header)
        alloc_path = result.alloc_path
    return BuiltChain(genesis=genesis, blocks=tuple(built), genesis_alloc_path=genesis_alloc_path)
