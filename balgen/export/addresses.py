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
system contract, the deterministic deployment proxy) is the same on every
chain and stays literal.

So does a contract created inside a call whose recipient and calldata are
the same on every chain: the call to the proxy that deploys a contract set's
factory, then the factory's calls that CREATE2 the set. balgen's contracts
never derive what they create from the caller, so the sender, the one thing
that differs, cannot move it; `tests/test_export_spamoor.py` runs the export
from other wallets to prove the set lands at the fixture's addresses.

Mentions are found where a transaction can carry them: its recipient and any
20-byte run of its calldata or init code equal to an owned address.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Set as AbstractSet
from dataclasses import dataclass
from functools import cached_property

from ..generators.deterministic_deployment import DETERMINISTIC_DEPLOYER
from ..keys import create_address
from ..workload import Address, Phase, TxSpec, Workload
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
    once_per_chain: frozenset[int] = frozenset()
    """Indices of set-up calls that create contracts at the same addresses on every
    chain: a second run on the same chain finds them there already."""

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
    """Classify every address `workload` owns, in chain order (a call's recipient exists before it)."""
    deployed: dict[Address, str] = {}
    created_by_code: dict[Address, str] = {}
    once_per_chain: set[int] = set()
    funded = frozenset(workload.pre) - {DETERMINISTIC_DEPLOYER}
    owned_so_far = set(funded)
    for ordered in txs:
        own = creation_address(ordered.tx) if ordered.creates else None
        if own is not None:
            deployed[own] = ordered.label
            owned_so_far.add(own)
        if own is None and same_on_every_chain(ordered, owned_so_far):
            if ordered.access.created and ordered.phase is Phase.SETUP:
                once_per_chain.add(ordered.index)
            continue
        for address in ordered.access.created:
            if address != own:
                created_by_code[address] = ordered.label
                owned_so_far.add(address)
    return Ownership(deployed, created_by_code, funded, frozenset(once_per_chain))


def same_on_every_chain(ordered: OrderedTx, owned: AbstractSet[Address]) -> bool:
    """A call whose recipient and calldata name nothing the workload owns does the same on every chain."""
    return ordered.tx.to not in owned and not embedded_addresses(ordered.tx.data, owned)


def creation_address(tx: TxSpec) -> Address:
    """The contract a creation transaction deploys: CREATE(sender, nonce)."""
    return create_address(tx.sender.address, tx.nonce)


def embedded_addresses(data: bytes, candidates: AbstractSet[Address]) -> list[tuple[int, Address]]:
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
