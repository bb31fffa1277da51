"""
What one transaction touches by design: its access footprint, from the workload model.

The generator states per transaction the storage it reads and writes, the
contracts it creates and the further accounts it touches; the rest follows
from the transaction itself: its sender's nonce and balance change, the fee
recipient is credited (and touched whole where the transaction's code asks
for its balance), its recipient is read, and a value transfer changes
the recipient's balance. A created contract gets its nonce (EIP-161) and, if
its runtime is not empty, its code. This module is the one place that says
so: the predicted access list, the designed access sets the fill compares
with a trace, and the spamoor export's dependency groups all start here.

A key is a storage slot `(address, slot)` or an account field `(address,
"balance" | "nonce" | "code")`; touching an account reads all three fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Literal, Mapping, Union

from .keys import create_address
from .workload import Address, BlockSpec, TxAccess, TxSpec

AccountField = Literal["balance", "nonce", "code"]
ACCOUNT_FIELDS: tuple[AccountField, ...] = ("balance", "nonce", "code")

StorageKey = tuple[Address, int]
AccountKey = tuple[Address, AccountField]
StateKey = Union[StorageKey, AccountKey]


def accounts_keys(addresses: Iterable[Address]) -> set[StateKey]:
    """The fields a transaction reads by touching each of `addresses`."""
    return {(address, name) for address in addresses for name in ACCOUNT_FIELDS}


@dataclass(frozen=True)
class Footprint:
    """
    The keys one transaction changes and those it accesses without changing.

    The value each written key is left with is asked for one key at a time
    (`value_left`): a contract set's created code is gigabytes, made one
    transaction's contracts at a time (what its gas can deposit, at most
    about 84 KB of code under EIP-7825's cap).
    """

    tx: TxSpec
    access: TxAccess
    fee_recipient: Address
    writes: frozenset[StateKey]
    reads: frozenset[StateKey]
    """Accessed and not written; disjoint from `writes`."""
    created_code: Mapping[Address, bytes]
    """The code of each contract the transaction creates, made once (a contract set's is computed)."""

    @property
    def accounts(self) -> frozenset[Address]:
        """Every account the transaction touches."""
        return frozenset(address for address, _ in self.writes | self.reads)

    def value_left(self, key: StateKey) -> int | bytes | None:
        """
        What a written key holds after the transaction: a slot's value, a nonce,
        code; None for balances (fees depend on execution) and for slots only
        execution can tell.
        """
        address, item = key
        if isinstance(item, int):
            return self.access.writes[key]  # type: ignore[index]
        if item == "code":
            return self.created_code[address]
        if item == "nonce":
            if address == self.tx.sender.address:
                return self.tx.nonce + 1
            return 1 if address in self.access.created else self.access.nonces[address]
        return None


def footprint(tx: TxSpec, access: TxAccess, fee_recipient: Address) -> Footprint:
    """The designed footprint of one transaction (see the module docstring)."""
    sender = tx.sender.address
    recipient = tx.to if tx.to is not None else create_address(sender, tx.nonce)
    written: set[StateKey] = {(sender, "nonce"), (sender, "balance"), (fee_recipient, "balance"), *access.writes}
    written |= {(address, "nonce") for address in (*access.created, *access.nonces)}
    created_code = dict(access.created.items())
    written |= {(address, "code") for address, code in created_code.items() if code}
    if tx.value and recipient != sender:
        written.add((recipient, "balance"))
    storage = {*access.reads, *access.writes}
    accounts = {sender, recipient, *access.created, *access.touched, *access.nonces}
    if access.reads_fee_recipient:
        accounts.add(fee_recipient)
    accounts |= {address for address, _ in storage}
    accessed: set[StateKey] = accounts_keys(accounts)
    accessed.update(storage)
    return Footprint(tx, access, fee_recipient, frozenset(written), frozenset(accessed - written), created_code)


HELD_FOOTPRINT_KEYS = 1 << 17
"""The most keys of a block's footprints kept once made (a 60M block's are about 20,000)."""
_kept: tuple[BlockSpec, Address, tuple[Footprint, ...]] | None = None
"""The footprints of the block last gone through whole, if it had at most `HELD_FOOTPRINT_KEYS` keys."""


def block_footprints(block: BlockSpec, fee_recipient: Address) -> Iterator[Footprint]:
    """
    The designed footprint of every transaction of `block`, in order, one at
    a time. A fill goes through its benchmark block's twice in a row (the
    predicted access list, then the designed access sets the trace is
    compared with), so the last block's are kept while they are small; a
    billion-gas block's are made again, never all held.
    """
    kept = _kept
    if kept is not None and kept[0] is block and kept[1] == fee_recipient:
        return iter(kept[2])
    return _made_footprints(block, fee_recipient)


def _made_footprints(block: BlockSpec, fee_recipient: Address) -> Iterator[Footprint]:
    global _kept
    made: list[Footprint] | None = []
    keys = 0
    for tx, access in zip(block.txs, block.accesses):
        print_ = footprint(tx, access, fee_recipient)
        if made is not None:
            keys += len(print_.writes) + len(print_.reads)
            if keys > HELD_FOOTPRINT_KEYS:
                made = None
            else:
                made.append(print_)
        yield print_
    if made is not None:
        _kept = (block, fee_recipient, tuple(made))
