"""
Access sets as the workload model designs them, for balgen's own fixtures.

The generator states, per transaction, the storage it reads and writes, the
contracts it creates and the further accounts it touches; the rest follows
from the transaction itself: its sender pays gas and bumps its nonce (so both
are written), its recipient is read, and a value transfer writes the
recipient's balance. A created contract gets its nonce (EIP-161) and, if its
runtime is not empty, its code written. The fill compares these sets with the
traced ones, so a generator whose design drifts from what runs is caught.
"""

from __future__ import annotations

from ..keys import create_address
from ..workload import Address, BlockSpec, TxAccess, TxSpec
from .access import StateKey, TxAccessSet, access_set, account_keys


def model_access_sets(block: BlockSpec, coinbase: Address) -> list[TxAccessSet]:
    """The designed access set of every transaction of `block`, in order."""
    return [model_access_set(tx, access, coinbase) for tx, access in zip(block.txs, block.accesses)]


def model_access_set(tx: TxSpec, access: TxAccess, coinbase: Address) -> TxAccessSet:
    """The designed access set of one transaction."""
    sender = tx.sender.address
    recipient = tx.to if tx.to is not None else create_address(sender, tx.nonce)
    written: set[StateKey] = {(sender, "nonce"), (sender, "balance"), *access.writes}
    written |= {(address, "nonce") for address in (*access.created, *access.nonces)}
    written |= {(address, "code") for address, code in access.created.items() if code}
    if tx.value and recipient != sender:
        written.add((recipient, "balance"))
    storage = {*access.reads, *access.writes}
    accounts = {sender, recipient, *access.created, *access.touched, *access.nonces}
    accounts |= {address for address, _ in storage}
    accessed: set[StateKey] = {*storage, *written}
    for address in accounts:
        accessed |= account_keys(address)
    return access_set(accessed, written, coinbase)
