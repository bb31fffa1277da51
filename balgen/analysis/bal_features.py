"""
What a client can see of a block before executing it: features of its access list and transactions alone.

A client that chooses between sequential and parallel execution per block
has, before executing, only the block: its transactions and its access list
(EIP-7928). The list records every write with the transaction that made it
(block access index i + 1 for transaction i; 0 and n + 1 are the system calls
before and after them), but its reads only for the block as a whole. So the
conflict graph read off the list (`bal_access_sets`) has every edge a write
makes to a later write of the same key (a nonce, a balance, a code, a slot),
and the edges from what each transaction's own envelope names (its sender,
its recipient, read in full as touching an account does), but not an edge
from a write to a later transaction that only reads the key: the list does
not say which transaction read a slot. It is a subgraph of the traced graph
of `graph` (`_info["dependency-graph"]`): equal for blocks whose transactions
write what they read (`mixed_dep`, `state_root`, most of `serial_chain`),
fewer edges where a transaction only reads what another wrote.

The fee recipient's balance is left out, as `access` leaves it out of a
traced set: every transaction credits it, which no BAL client treats as a
conflict (a transaction that reads the fee recipient's balance is not told
apart: its read is not in the list). Weights are gas limits, the only gas a
block's transactions carry before they run, so the critical path and the
speedup bound are those of the gas the transactions may use.

Pure: bytes in, numbers out; any client's block (a fixture's payload, or a
block read from a devnet) gives the same features.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import rlp
from coincurve import PublicKey
from pydantic import BaseModel, ConfigDict

from ..chain.bal import AccountChanges, iter_block_access_list
from ..ethereum.keccak import keccak
from ..model.footprint import ACCOUNT_FIELDS, StateKey, accounts_keys
from .access import TxAccessSet
from .graph import DependencyGraph

_LEGACY_FIELDS = 9
_SIGNATURE_FIELDS = 3
_GAS_FIELD = {0: 2, 1: 3, 2: 4, 3: 4, 4: 4}
"""Position of the gas limit in each transaction type's RLP fields (EIP-2718 payloads)."""


@dataclass(frozen=True)
class EnvelopeFacts:
    """What one signed transaction names before it runs."""

    sender: bytes
    recipient: bytes | None
    """None for a contract creation."""
    gas_limit: int


def _signing_hash(tx_type: int, fields: list) -> tuple[bytes, int]:
    """
    The hash a transaction's sender signed, and the recovery id of its signature. The decoded
    fields are bytes and lists of them, encoded again as they are (`infer_serializer=False`):
    pyrlp's inference of a serializer for each field gave the same bytes in three times the time,
    two fifths of a replay's features of the default suite (54,000 transactions, 2026-11-29).
    """
    unsigned, v = fields[:-_SIGNATURE_FIELDS], int.from_bytes(fields[-_SIGNATURE_FIELDS], "big")
    if tx_type != 0:
        return keccak(bytes([tx_type]) + rlp.encode(unsigned, infer_serializer=False)), v
    if v in (27, 28):
        return keccak(rlp.encode(unsigned, infer_serializer=False)), v - 27
    chain_id = (v - 35) // 2  # EIP-155: the chain id is signed as three more fields
    return keccak(rlp.encode([*unsigned, chain_id, b"", b""])), (v - 35) % 2


def envelope_facts(envelope: bytes) -> EnvelopeFacts:
    """The sender (recovered from the signature), recipient and gas limit of one signed transaction."""
    tx_type = 0 if envelope[:1] >= b"\xc0" else envelope[0]
    if tx_type not in _GAS_FIELD:
        raise ValueError(f"transaction type {tx_type} is not one balgen reads")
    fields = rlp.decode(envelope if tx_type == 0 else envelope[1:])
    if tx_type == 0 and len(fields) != _LEGACY_FIELDS:
        raise ValueError(f"a legacy transaction has {len(fields)} fields, not {_LEGACY_FIELDS}")
    digest, recovery = _signing_hash(tx_type, fields)
    r, s = (int.from_bytes(value, "big") for value in fields[-2:])
    signature = r.to_bytes(32, "big") + s.to_bytes(32, "big") + bytes([recovery])
    public = PublicKey.from_signature_and_message(signature, digest, hasher=None).format(compressed=False)
    gas = _GAS_FIELD[tx_type]
    recipient = fields[gas + 1]
    return EnvelopeFacts(keccak(public[1:])[12:], bytes(recipient) or None, int.from_bytes(fields[gas], "big"))


def _add_writes(account: AccountChanges, fee_recipient: bytes, writes: list[set[StateKey]]) -> None:
    """
    Add each write the entry records to the set of the transaction that made it (the fee recipient's
    balance left out; the system calls' indices 0 and n + 1 too). Loops, not generators of (index,
    key) pairs: a 60M block's list has thousands of accounts, and a replay of the default suite
    reads 200,000 (the generators took a third of its access sets' time, 2026-11-29).
    """
    address, count = account.address, len(writes)
    for slot, changes in account.storage_changes.items():
        for index, _ in changes:
            if 1 <= index <= count:
                writes[index - 1].add((address, slot))
    fields = [("nonce", account.nonce_changes), ("code", account.code_changes)]
    if address != fee_recipient:
        fields.append(("balance", account.balance_changes))
    for name, changes in fields:
        for index, _ in changes:
            if 1 <= index <= count:
                writes[index - 1].add((address, name))


def bal_access_sets(
    encoded_bal: bytes, envelopes: Sequence[EnvelopeFacts], fee_recipient: bytes
) -> tuple[tuple[TxAccessSet, ...], int]:
    """
    Each transaction's access set as the list and its envelope show it (see
    the module docstring), and how many slots the list records as only read.
    """
    writes: list[set[StateKey]] = [set() for _ in envelopes]
    read_slots = 0
    for account in iter_block_access_list(encoded_bal):
        read_slots += len(account.storage_reads)
        _add_writes(account, fee_recipient, writes)
    sets = []
    for facts, written in zip(envelopes, writes):
        named = [facts.sender, *([facts.recipient] if facts.recipient else [])]
        touched = accounts_keys(named) - {(fee_recipient, "balance")}
        sets.append(TxAccessSet(reads=frozenset(touched - written), writes=frozenset(written)))
    return tuple(sets), read_slots


class BalFeatures(BaseModel):
    """A block's features from its access list and transactions, before execution."""

    model_config = ConfigDict(frozen=True)

    transactions: int
    edges: int
    """Conflict edges read off the list (a subgraph of the traced graph: see the module docstring)."""
    components: int
    """Groups of transactions joined by edges: the most that can run apart."""
    largest_component: int
    critical_path: int
    """Transactions on the heaviest dependency path, by gas limit."""
    speedup_bound: float
    """Gas limits of the block over those of the critical path: parallel execution's best case."""
    write_overlap: float
    """Share of the transactions' writes that are to a key another transaction of the block also writes."""
    accounts_per_tx: float
    """Accounts each transaction writes or names (sender, recipient), on average."""
    slots_per_tx: float
    """Storage slots each transaction writes, on average."""
    read_slots_per_tx: float
    """Slots the list records as only read (by the block as a whole), per transaction."""


def _mean(total: int, count: int) -> float:
    return round(total / count, 3) if count else 0.0


def bal_features(encoded_bal: bytes, envelopes: Sequence[bytes], fee_recipient: bytes) -> BalFeatures:
    """The features of a block from its access list's RLP, its signed transactions and its fee recipient."""
    facts = [envelope_facts(envelope) for envelope in envelopes]
    sets, read_slots = bal_access_sets(encoded_bal, facts, fee_recipient)
    graph = DependencyGraph.from_access_sets(sets, [tx.gas_limit for tx in facts])
    writers = Counter(key for access in sets for key in access.writes)
    written = sum(writers.values())
    shared = sum(count for count in writers.values() if count > 1)
    count = len(sets)
    return BalFeatures(
        transactions=count,
        edges=len(graph.edges),
        components=len(graph.components),
        largest_component=graph.largest_component,
        critical_path=len(graph.critical_path),
        speedup_bound=graph.speedup_bound,
        write_overlap=round(shared / written, 3) if written else 0.0,
        accounts_per_tx=_mean(sum(len({key[0] for key in access.keys}) for access in sets), count),
        slots_per_tx=_mean(sum(sum(1 for key in access.writes if key[1] not in ACCOUNT_FIELDS) for access in sets), count),
        read_slots_per_tx=_mean(read_slots, count),
    )


def payload_features(payload: dict) -> BalFeatures | None:
    """The features of an Engine API execution payload (its JSON), or None if it carries no access list."""
    encoded = payload.get("blockAccessList")
    if not isinstance(encoded, str):
        return None
    envelopes = [bytes.fromhex(tx.removeprefix("0x")) for tx in payload.get("transactions", [])]
    return bal_features(
        bytes.fromhex(encoded.removeprefix("0x")), envelopes, bytes.fromhex(payload["feeRecipient"].removeprefix("0x"))
    )
