"""
The invalid twin of a built block: the same block with an access list that lies in one named way.

The lie is made on the list t8n produced, one account entry decoded and
encoded again by `rlp` (the other entries stay byte for byte), and the
header either commits to it (its `blockAccessListHash` and so its block hash
recomputed) or is left as it is (`balgen.model.invalid_access_list`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import rlp

from ..ethereum.keccak import keccak
from ..model.invalid_access_list import Corruption, HeaderHash, InvalidAccessList
from .bal import AccountChanges, encoded_list, iter_block_access_list, raw_accounts
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


def _replaced(entries: list[Entry], position: int, account: AccountChanges | None) -> bytes:
    """The list with the entry at `position` replaced by `account` (or left out, for None)."""
    kept = [raw for _, raw, _ in entries[:position]]
    if account is not None:
        kept.append(encoded_account(account))
    kept += [raw for _, raw, _ in entries[position + 1 :]]
    return encoded_list(kept)


def _first(entries: list[Entry], wanted: Callable[[AccountChanges], bool], what: str) -> int:
    """The position of the first entry of the workload's own (`Entry` lists only those that may be
    corrupted) with `wanted`, or CorruptionImpossible naming `what`."""
    for position, (_, _, account) in enumerate(entries):
        if wanted(account):
            return position
    raise CorruptionImpossible(f"the benchmark block's access list has no {what}")


def corrupted_list(
    encoded: bytes, corruption: Corruption, senders: frozenset[bytes], system: frozenset[bytes], item_bound: int
) -> bytes:
    """
    The list `encoded` with `corruption` made in it, in an entry of the
    workload's own: not one of the `system` contracts', which every block
    lists. `senders` are the block's transaction senders (the accounts
    whose nonce change a transaction index pins), `item_bound` the most
    items EIP-7928 allows at the benchmark's gas value.
    """
    if corruption is Corruption.UNDECODABLE:
        return encoded[:-1]
    entries = _entries(encoded)
    own = [position for position, (address, _, _) in enumerate(entries) if address not in system]

    def first(wanted: Callable[[AccountChanges], bool], what: str) -> int:
        return own[_first([entries[position] for position in own], wanted, what)]

    if corruption is Corruption.MISSING_READ:
        at = first(lambda a: bool(a.storage_reads), "storage read")
        account = entries[at][2]
        return _replaced(entries, at, replace(account, storage_reads=tuple(account.storage_reads)[1:]))
    if corruption is Corruption.MISSING_WRITE:
        at = first(lambda a: bool(a.storage_changes), "storage write")
        account = entries[at][2]
        changes = dict(list(account.storage_changes.items())[1:])
        return _replaced(entries, at, replace(account, storage_changes=changes))
    if corruption is Corruption.WRONG_VALUE:
        at = first(lambda a: bool(a.storage_changes), "storage write")
        account = entries[at][2]
        slots = list(account.storage_changes.items())
        slot, changes = slots[0]
        (index, value), *later = changes
        wrong = {slot: [(index, (value + 1) % 2**256), *later], **dict(slots[1:])}
        return _replaced(entries, at, replace(account, storage_changes=wrong))
    if corruption is Corruption.MISSING_ACCOUNT:
        return _replaced(entries, first(lambda a: a.address in senders, "sender"), None)
    if corruption is Corruption.WRONG_INDEX:
        at = first(lambda a: a.address in senders and len(a.nonce_changes) == 1, "sender")
        account = entries[at][2]
        ((index, nonce),) = account.nonce_changes
        return _replaced(entries, at, replace(account, nonce_changes=((index + 1, nonce),)))
    if corruption is Corruption.OUT_OF_ORDER:
        if len(entries) < 2:
            raise CorruptionImpossible("the benchmark block's access list has one account: no order to break")
        raws = [raw for _, raw, _ in entries]
        raws[0], raws[1] = raws[1], raws[0]
        return encoded_list(raws)
    if corruption is Corruption.EXTRA_ACCOUNT:
        extra = AccountChanges(keccak(b"balgen/invalid_bal/extra_account")[:20], {}, (), (), (), ())
        listed = sorted([*(raw for _, raw, _ in entries), encoded_account(extra)], key=_address_of)
        return encoded_list(listed)
    if corruption is Corruption.OVER_BOUND:
        return _over_bound(entries, first(lambda a: bool(a.storage_changes or a.storage_reads), "account with storage"), item_bound)
    raise AssertionError(corruption)


def _address_of(entry: bytes) -> bytes:
    """The address of an account entry's RLP."""
    return bytes(rlp.decode(entry)[0])


def _over_bound(entries: list[Entry], at: int, item_bound: int) -> bytes:
    """The list with slots no transaction reads added to the reads of the entry at `at`, until it
    holds one item more than `item_bound`."""
    items = sum(1 + len(a.storage_changes) + len(a.storage_reads) for _, _, a in entries)
    account = entries[at][2]
    listed = set(account.storage_changes) | set(account.storage_reads)
    extra: list[int] = []
    slot = int.from_bytes(keccak(b"balgen/invalid_bal/over_bound"), "big")
    while items + len(extra) <= item_bound:
        if slot not in listed:
            extra.append(slot)
        slot = (slot + 1) % 2**256
    reads = tuple(sorted([*account.storage_reads, *extra]))
    return _replaced(entries, at, replace(account, storage_reads=reads))


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
