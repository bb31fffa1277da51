"""
Which of a workload's transactions depend on which, from their designed accesses.

Two transactions conflict when one writes state the other reads or writes:
a storage slot, or an account itself (created, its nonce moved by a CREATE,
its balance raised by a transfer; every transaction that runs a contract's
code or names it reads it). Senders are left out on purpose: spamoor's
wallets replace the fixture's, so sender links do not carry over. Conflicts
split a workload into dependency groups (connected components), the units
that must stay on one ordered path on a live chain while separate groups may
run side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..workload import Address
from .addresses import Ownership, named_addresses
from .chain_order import OrderedTx

Key = tuple[Address, int | None]
"""A slot `(address, slot)`, or `(address, None)` for the account itself."""


@dataclass(frozen=True)
class Footprint:
    """The state one transaction reads and writes, senders left out."""

    reads: frozenset[Key]
    writes: frozenset[Key]

    def conflicts_with(self, other: Footprint) -> bool:
        """One writes what the other reads or writes."""
        return bool(self.writes & (other.reads | other.writes) or other.writes & self.reads)


def account_key(address: Address) -> Key:
    return (address, None)


def footprint(ordered: OrderedTx, owned: Ownership) -> Footprint:
    """What `ordered` reads and writes, account-level keys included."""
    access = ordered.access
    slots_read = set(access.reads)
    slots_written = set(access.writes)
    accounts_read = {address for address, _ in slots_read | slots_written}
    accounts_read |= set(access.touched) | set(named_addresses(ordered, owned.owned))
    if ordered.tx.to is not None:
        accounts_read.add(ordered.tx.to)
    accounts_written = set(access.created) | set(access.nonces)
    if ordered.tx.value and ordered.tx.to is not None:
        accounts_written.add(ordered.tx.to)
    return Footprint(
        reads=frozenset(slots_read | {account_key(a) for a in accounts_read}),
        writes=frozenset(slots_written | {account_key(a) for a in accounts_written}),
    )


class _UnionFind:
    """Disjoint sets over 0..n-1."""

    def __init__(self, size: int) -> None:
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def dependency_groups(footprints: Sequence[Footprint]) -> list[list[int]]:
    """
    Indices of transactions linked by conflicts, each group in chain order,
    groups ordered by their first transaction.

    A reader joins the key's last writer and a writer joins the last writer
    and every reader since; that links exactly what the full conflict graph
    links, in one pass.
    """
    sets = _UnionFind(len(footprints))
    last_writer: dict[Key, int] = {}
    readers: dict[Key, list[int]] = {}
    for index, print_ in enumerate(footprints):
        for key in print_.reads - print_.writes:
            if key in last_writer:
                sets.union(index, last_writer[key])
            readers.setdefault(key, []).append(index)
        for key in print_.writes:
            for other in [last_writer.get(key), *readers.pop(key, [])]:
                if other is not None:
                    sets.union(index, other)
            last_writer[key] = index
    groups: dict[int, list[int]] = {}
    for index in range(len(footprints)):
        groups.setdefault(sets.find(index), []).append(index)
    return sorted(groups.values(), key=lambda group: group[0])
