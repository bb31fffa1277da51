"""
The invalid twin of a built block: the same block with an access list that lies in one named way.

The lie is made on the list t8n produced, one account entry decoded and
encoded again by `rlp` (the other entries stay byte for byte), and the
header either commits to it (its `blockAccessListHash` and so its block hash
recomputed) or is left as it is (`balgen.model.invalid_access_list`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import rlp

from ..ethereum.keccak import keccak
from ..model.invalid_access_list import Corruption, HeaderHash, InvalidAccessList
from .bal import AccountChanges, encoded_list, item_count, iter_block_access_list, raw_accounts
from .builder import BuiltBlock


class CorruptionImpossible(ValueError):
    """The block's list has nothing the corruption could change (e.g. no storage read to leave out)."""


def account_rlp_fields(account: AccountChanges) -> list:
    """An account entry as the RLP structure EIP-7928 (and t8n) encodes: integers minimal, in canonical order."""
    return [
        account.address,
        [[slot, [[index, value] for index, value in changes]] for slot, changes in account.storage_changes.items()],
        list(account.storage_reads),
        [list(change) for change in account.balance_changes],
        [list(change) for change in account.nonce_changes],
        [list(change) for change in account.code_changes],
    ]


def encoded_account(account: AccountChanges) -> bytes:
    """One account entry's RLP."""
    return rlp.encode(account_rlp_fields(account))


Entry = tuple[bytes, bytes, AccountChanges]
"""An account entry: its address, its RLP as t8n wrote it, decoded."""


def _entries(encoded: bytes) -> list[Entry]:
    """Every account entry of a list, checked to encode again to the bytes t8n wrote: the lie
    differs from the true list in what the corruption changes and nothing else."""
    entries = []
    for (address, raw), account in zip(raw_accounts(encoded), iter_block_access_list(encoded, lazy_bytes=len(encoded))):
        if encoded_account(account) != raw:
            raise ValueError(f"the access list entry of 0x{address.hex()} does not encode back to t8n's bytes")
        entries.append((address, raw, account))
    return entries


@dataclass(frozen=True)
class TrueList:
    """The list execution produced, entry by entry, and what a lie about it may change."""

    entries: list[Entry]
    senders: frozenset[bytes]
    """The block's transaction senders: the accounts whose nonce change a transaction index pins."""
    system: frozenset[bytes]
    """The system contracts, which every block lists: never the lie's entry."""
    item_bound: int
    """The most items EIP-7928 allows at the benchmark's gas value."""

    def first(self, wanted: Callable[[AccountChanges], bool], what: str) -> tuple[int, AccountChanges]:
        """The position and account of the first entry of the workload's own with `wanted`, or
        CorruptionImpossible naming `what`."""
        for position, (address, _, account) in enumerate(self.entries):
            if address not in self.system and wanted(account):
                return position, account
        raise CorruptionImpossible(f"the benchmark block's access list has no {what}")

    def replaced(self, position: int, account: AccountChanges | None) -> bytes:
        """The list with the entry at `position` replaced by `account` (or left out, for None)."""
        raws = [raw for _, raw, _ in self.entries]
        raws[position : position + 1] = [] if account is None else [encoded_account(account)]
        return encoded_list(raws)

    @property
    def items(self) -> int:
        """Its items as EIP-7928 counts them."""
        return item_count(account for _, _, account in self.entries)


def _missing_read(true: TrueList) -> bytes:
    at, account = true.first(lambda a: bool(a.storage_reads), "storage read")
    return true.replaced(at, replace(account, storage_reads=tuple(account.storage_reads)[1:]))


def _missing_write(true: TrueList) -> bytes:
    at, account = true.first(lambda a: bool(a.storage_changes), "storage write")
    return true.replaced(at, replace(account, storage_changes=dict(list(account.storage_changes.items())[1:])))


def _wrong_value(true: TrueList) -> bytes:
    at, account = true.first(lambda a: bool(a.storage_changes), "storage write")
    (slot, ((index, value), *later)), *others = account.storage_changes.items()
    wrong = {slot: [(index, (value + 1) % 2**256), *later], **dict(others)}
    return true.replaced(at, replace(account, storage_changes=wrong))


def _extra_account(true: TrueList) -> bytes:
    extra = AccountChanges(keccak(b"balgen/invalid_bal/extra_account")[:20], {}, (), (), (), ())
    entries = sorted([*((address, raw) for address, raw, _ in true.entries), (extra.address, encoded_account(extra))])
    return encoded_list(raw for _, raw in entries)


def _missing_account(true: TrueList) -> bytes:
    at, _ = true.first(lambda a: a.address in true.senders, "sender")
    return true.replaced(at, None)


def _wrong_index(true: TrueList) -> bytes:
    at, account = true.first(lambda a: a.address in true.senders and len(a.nonce_changes) == 1, "sender")
    ((index, nonce),) = account.nonce_changes
    return true.replaced(at, replace(account, nonce_changes=((index + 1, nonce),)))


def _out_of_order(true: TrueList) -> bytes:
    if len(true.entries) < 2:
        raise CorruptionImpossible("the benchmark block's access list has one account: no order to break")
    raws = [raw for _, raw, _ in true.entries]
    raws[0], raws[1] = raws[1], raws[0]
    return encoded_list(raws)


def _over_bound(true: TrueList) -> bytes:
    """Slots no transaction reads added to the reads of an account with storage, until the list
    holds one item more than the bound."""
    at, account = true.first(lambda a: bool(a.storage_changes or a.storage_reads), "account with storage")
    listed = set(account.storage_changes) | set(account.storage_reads)
    extra: list[int] = []
    slot = int.from_bytes(keccak(b"balgen/invalid_bal/over_bound"), "big")
    items = true.items
    while items + len(extra) <= true.item_bound:
        if slot not in listed:
            extra.append(slot)
        slot = (slot + 1) % 2**256
    return true.replaced(at, replace(account, storage_reads=tuple(sorted([*account.storage_reads, *extra]))))


LIES: dict[Corruption, Callable[[TrueList], bytes]] = {
    Corruption.MISSING_READ: _missing_read,
    Corruption.MISSING_WRITE: _missing_write,
    Corruption.WRONG_VALUE: _wrong_value,
    Corruption.EXTRA_ACCOUNT: _extra_account,
    Corruption.MISSING_ACCOUNT: _missing_account,
    Corruption.WRONG_INDEX: _wrong_index,
    Corruption.OUT_OF_ORDER: _out_of_order,
    Corruption.OVER_BOUND: _over_bound,
}
"""How each corruption of a decodable list is made (`balgen.model.invalid_access_list` names them)."""


def corrupted_list(
    encoded: bytes, corruption: Corruption, senders: frozenset[bytes], system: frozenset[bytes], item_bound: int
) -> bytes:
    """The list `encoded` with `corruption` made in it (see `TrueList` for the other arguments)."""
    if corruption is Corruption.UNDECODABLE:
        return encoded[:-1]
    return LIES[corruption](TrueList(_entries(encoded), senders, system, item_bound))


def invalid_twin(block: BuiltBlock, lie: InvalidAccessList, system: frozenset[bytes], item_bound: int) -> BuiltBlock:
    """`block` carrying the lie (made in no entry of the `system` contracts): its list corrupted,
    its header committing to it or not, as `lie` says."""
    encoded = block.block_access_list
    if encoded is None:
        raise CorruptionImpossible("the block carries no access list")
    senders = frozenset(tx.spec.sender.address for tx in block.txs)
    wrong = corrupted_list(encoded, lie.corruption, senders, system, item_bound)
    if wrong == encoded:
        raise AssertionError(f"{lie.name} left the access list as it was")
    header = block.header
    if lie.header_hash is HeaderHash.REHASHED:
        header = header.with_values(block_access_list_hash=keccak(wrong))
    # Decoded from `wrong` when it is walked: a lie is small enough to hold (at most the bound's items).
    return replace(block, header=header, access_list_source=wrong)
