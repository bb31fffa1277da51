"""
Who owns each address a workload's transactions name, and how spamoor names it.

A fixture's contracts sit at the CREATE addresses of the fixture's own
deployers; on a live chain spamoor's wallets deploy them, so they land
elsewhere, and every mention of them must follow. The generators record how
every account comes to exist (`workload.Origin`) and where each transaction
names an address (its recipient, `TxSpec.references`); this module reads
that and guesses nothing. What the workload owns falls in three kinds: the
contract a creation transaction deploys (named by a replay-eest `$contract[N]`
placeholder for that deployment), contracts made by contract code inside a
fixture-specific contract (spamoor has no placeholder for them) and the
fixture's genesis accounts (its senders and deployers, replaced by spamoor's
wallets). Anything else is the same on every chain and stays literal: a
precompile, a system contract, the deterministic deployment proxy and what
it deploys, and the contracts those create with CREATE2 from calldata that
names nothing the workload owns. `tests/test_export_spamoor.py` runs the
export from other wallets to prove a contract set lands at the fixture's
addresses.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ..model.workload import Address, AddressReference, Origin, Phase, Workload
from .chain_order import OrderedTx


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
    """Every address `workload` owns, as its generator recorded how each came to exist."""
    deployed: dict[Address, str] = {}
    created_by_code: dict[Address, str] = {}
    same_everywhere: list[OrderedTx] = []
    for ordered in txs:
        origins = set(ordered.access.origins.values())
        if origins == {Origin.SAME_ON_EVERY_CHAIN}:
            same_everywhere.append(ordered)
            continue
        for address, origin in ordered.access.origins.items():
            if origin is Origin.DEPLOYED:
                deployed[address] = ordered.label
            elif origin is Origin.CREATED_BY_CODE:
                created_by_code[address] = ordered.label
    funded = frozenset(address for address, account in workload.pre.items() if account.origin is Origin.GENESIS)
    owned = Ownership(deployed, created_by_code, funded)
    for ordered in same_everywhere:
        named = named_addresses(ordered, owned.owned)
        if named:
            raise ValueError(
                f"{workload.name}: {ordered.label} is said to create contracts at the same addresses on every "
                f"chain, but it names 0x{named[0].hex()}, {owned.describe(named[0])}"
            )
    once_per_chain = frozenset(ordered.index for ordered in same_everywhere if ordered.phase is Phase.SETUP)
    return Ownership(deployed, created_by_code, funded, once_per_chain)


def owned_references(ordered: OrderedTx, candidates: frozenset[Address]) -> list[AddressReference]:
    """The references of a transaction's data to owned addresses, by offset."""
    return sorted((ref for ref in ordered.tx.references if ref.address in candidates), key=lambda ref: ref.offset)


def named_addresses(ordered: OrderedTx, candidates: frozenset[Address]) -> list[Address]:
    """The owned addresses a transaction names: its recipient, then those its data references."""
    recipient = [ordered.tx.to] if ordered.tx.to in candidates else []
    return [*recipient, *(ref.address for ref in owned_references(ordered, candidates))]
