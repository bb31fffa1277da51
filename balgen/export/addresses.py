"""
Who owns each address a workload's transactions name, and how spamoor names it.

A fixture's contracts sit at the CREATE addresses of the fixture's own
deployers; on a live chain spamoor's wallets deploy them, so they land
elsewhere, and every mention of them must follow. What the workload owns
falls in three kinds: the contract a creation transaction deploys (named by a
replay-eest `$contract[N]` placeholder for that deployment), contracts made by
contract code (CREATE/CREATE2 inside a call or an init code: spamoor has no
placeholder for them) and funded accounts (the fixture's senders and deployers, replaced by
spamoor's wallets). An address the workload does not own (a precompile, a
system contract) is the same on every chain and stays literal.

Mentions are found where a transaction can carry them: its recipient and any
20-byte run of its calldata or init code equal to an owned address.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from ..keys import create_address
from ..workload import Address, TxSpec, Workload
from .chain_order import OrderedTx

ADDRESS_SIZE = 20


@dataclass(frozen=True)
class Ownership:
    """The addresses a workload owns, by how they came to exist."""

    deployed: dict[Address, str]
    """Contract -> label of the creation transaction that deployed it."""
    created_by_code: dict[Address, str]
    """Contract -> label of the transaction inside which contract code created it."""
    funded: frozenset[Address]
    """Accounts the fixture's genesis holds (its senders and deployers)."""

    @cached_property
    def owned(self) -> frozenset[Address]:
        """Every address whose live counterpart differs from the fixture's."""
        return frozenset(self.deployed) | frozenset(self.created_by_code) | self.funded

    def describe(self, address: Address) -> str:
        """What an owned address is, for a message that says why it cannot be named."""
        if address in self.created_by_code:
            return f"a contract created by contract code inside {self.created_by_code[address]}"
        if address in self.deployed:
            return f"the contract deployed by {self.deployed[address]}"
        return "an account the fixture's genesis holds"


def ownership(workload: Workload, txs: Sequence[OrderedTx]) -> Ownership:
    """Classify every address `workload` owns."""
    deployed: dict[Address, str] = {}
    created_by_code: dict[Address, str] = {}
    for ordered in txs:
        own = creation_address(ordered.tx) if ordered.creates else None
        if own is not None:
            deployed[own] = ordered.label
        for address in ordered.access.created:
            if address != own:
                created_by_code[address] = ordered.label
    return Ownership(deployed, created_by_code, frozenset(workload.pre))


def creation_address(tx: TxSpec) -> Address:
    """The contract a creation transaction deploys: CREATE(sender, nonce)."""
    return create_address(tx.sender.address, tx.nonce)


def embedded_addresses(data: bytes, candidates: frozenset[Address]) -> list[tuple[int, Address]]:
    """Leftmost non-overlapping (offset, address) runs of `data` equal to a candidate."""
    found: list[tuple[int, Address]] = []
    offset = 0
    while offset + ADDRESS_SIZE <= len(data):
        window = data[offset : offset + ADDRESS_SIZE]
        if window in candidates:
            found.append((offset, window))
            offset += ADDRESS_SIZE
        else:
            offset += 1
    return found


def named_addresses(ordered: OrderedTx, candidates: frozenset[Address]) -> list[Address]:
    """The owned addresses a transaction names: its recipient, then those inside its data."""
    recipient: Iterable[Address] = [ordered.tx.to] if ordered.tx.to in candidates else []
    return [*recipient, *(address for _, address in embedded_addresses(ordered.tx.data, candidates))]
