"""
Which transactions on a chain are a workload's, payload by payload.

spamoor's wallets are derived from a seed balgen does not know, so the
workload's transactions are found by what they carry. replay-eest sends a
payload's transactions in its order, each wallet's in nonce order, and the
deployer first; `$contract[N]` is `CREATE(deployer, first nonce + N - 1)`.
So a payload is found from its deployer's first transaction (the same
recipient, data, gas limit and value), which fixes the deployer and every
contract the payload names; each further transaction is the next nonce of
its wallet, or for a wallet's first one, the earliest unclaimed transaction
with exactly the expected fields. Every candidate for the first transaction
is tried until the whole payload follows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..export.spamoor_payloads import DEPLOYER, GroupPayload, PayloadTx
from ..model.keys import create_address
from ..model.workload import Address, Origin
from .chain_reader import ChainTx

PLACEHOLDER = re.compile(r"\$contract\[(\d+)\]")

Fields = tuple[bytes | None, bytes, int, int]
"""(to, data, gas limit, value): what identifies a transaction whoever sends it."""


class NotFound(Exception):
    """A payload transaction is not on the chain in the range searched."""


@dataclass
class FoundPayload:
    """A payload's transactions on the chain, and its wallets and contracts."""

    payload: GroupPayload
    txs: list[ChainTx] = field(default_factory=list)
    wallets: dict[str, bytes] = field(default_factory=dict)
    contracts: dict[int, Address] = field(default_factory=dict)

    def live_addresses(self) -> dict[Address, Address]:
        """Fixture address -> live address of every contract the payload deploys."""
        deployed = [
            address
            for tx in self.payload.txs
            for address, origin in tx.origin.access.origins.items()
            if origin is Origin.DEPLOYED
        ]
        return {fixture: self.contracts[number] for number, fixture in enumerate(deployed, start=1)}


def resolved(text: str, contracts: dict[int, Address]) -> str:
    """`text` with every `$contract[N]` replaced by its address, as hex without 0x."""
    return PLACEHOLDER.sub(lambda found: contracts[int(found[1])].hex(), text.removeprefix("0x"))


def expected_fields(tx: PayloadTx, contracts: dict[int, Address]) -> Fields:
    to = None if tx.to is None else bytes.fromhex(resolved(tx.to, contracts))
    return (to, bytes.fromhex(resolved(tx.data, contracts)), tx.gas, tx.value)


def fields_of(tx: ChainTx) -> Fields:
    return (tx.to, tx.data, tx.gas, tx.value)


class ChainIndex:
    """The chain's transactions by their fields and by (sender, nonce), minus those already claimed."""

    def __init__(self, txs: Sequence[ChainTx]) -> None:
        self.by_fields: dict[Fields, list[ChainTx]] = {}
        self.by_nonce: dict[tuple[bytes, int], ChainTx] = {}
        for tx in txs:
            self.by_fields.setdefault(fields_of(tx), []).append(tx)
            self.by_nonce[(tx.sender, tx.nonce)] = tx
        self.claimed: set[str] = set()

    def candidates(self, fields: Fields) -> list[ChainTx]:
        return [tx for tx in self.by_fields.get(fields, []) if tx.hash not in self.claimed]


def follow(payload: GroupPayload, first: ChainTx, index: ChainIndex) -> FoundPayload:
    """The whole payload, given the chain transaction its first one is; NotFound names the first gap."""
    found = FoundPayload(payload, [first], {payload.txs[0].sender: first.sender})
    nonces = {payload.txs[0].sender: first.nonce}
    found.contracts = {
        number: create_address(first.sender, first.nonce + number - 1)
        for number in range(1, 1 + sum(1 for tx in payload.txs if tx.sender == DEPLOYER and tx.to is None))
    }
    taken = {first.hash}
    for position, tx in enumerate(payload.txs[1:], start=1):
        fields = expected_fields(tx, found.contracts)
        wallet = found.wallets.get(tx.sender)
        if wallet is not None:
            live = index.by_nonce.get((wallet, nonces[tx.sender] + 1))
            if live is None or fields_of(live) != fields or live.hash in index.claimed:
                raise NotFound(f"{payload.name} tx {position} ({tx.origin.label}), nonce {nonces[tx.sender] + 1} of its wallet")
        else:
            others = set(found.wallets.values())
            live = next((c for c in index.candidates(fields) if c.sender not in others and c.hash not in taken), None)
            if live is None:
                raise NotFound(f"{payload.name} tx {position} ({tx.origin.label}), the first of {tx.sender}")
            found.wallets[tx.sender] = live.sender
        nonces[tx.sender] = live.nonce
        taken.add(live.hash)
        found.txs.append(live)
    return found


def find_payload(payload: GroupPayload, index: ChainIndex) -> FoundPayload:
    """The chain transactions of `payload`, claimed in `index`; NotFound if no candidate completes it."""
    head = payload.txs[0]
    if PLACEHOLDER.search(head.data) or (head.to and PLACEHOLDER.search(head.to)):
        raise ValueError(f"{payload.name}: its first transaction names a contract of its own")
    reason = f"{payload.name} tx 0 ({head.origin.label})"
    for candidate in index.candidates(expected_fields(head, {})):
        try:
            found = follow(payload, candidate, index)
        except NotFound as gap:
            reason = str(gap)
            continue
        index.claimed |= {tx.hash for tx in found.txs}
        return found
    raise NotFound(reason)
