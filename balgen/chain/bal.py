"""
EIP-7928 block-level access lists: decoding t8n's RLP, and replacing accounts in it.

The RLP layout per account is `[address, storage_changes, storage_reads,
balance_changes, nonce_changes, code_changes]`, each change `[index, value]`;
index 0 is the pre-execution system calls, 1..n the transactions, n+1 the
post-execution system calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import rlp
from rlp.codec import consume_length_prefix


@dataclass(frozen=True)
class AccountChanges:
    """One account's entry in a block access list."""

    address: bytes
    storage_changes: dict[int, list[tuple[int, int]]]
    """slot -> [(block access index, post value)]"""
    storage_reads: tuple[int, ...]
    balance_changes: tuple[tuple[int, int], ...]
    nonce_changes: tuple[tuple[int, int], ...]
    code_changes: tuple[tuple[int, bytes], ...]

    @property
    def changes_state(self) -> bool:
        """Whether the entry records any change (an entry may record reads only)."""
        return bool(self.storage_changes or self.balance_changes or self.nonce_changes or self.code_changes)


def iter_block_access_list(encoded: bytes) -> Iterator[AccountChanges]:
    """
    A BAL's accounts in canonical order, each decoded when it is reached: a
    billion-gas block's access list is written out one account at a time.
    """
    _, _, length, start = consume_length_prefix(encoded, 0)
    end = start + length
    while start < end:
        _, _, item_length, item_start = consume_length_prefix(encoded, start)
        yield _account_changes(rlp.decode(encoded[start : item_start + item_length]))
        start = item_start + item_length


def _account_changes(fields: list) -> AccountChanges:
    """One account's entry from its decoded RLP fields (list comprehensions, with `int.from_bytes`
    called directly: an access list of a 60M block has thousands of accounts, decoded for every check)."""
    address, storage, reads, balances, nonces, codes = fields
    number = int.from_bytes
    return AccountChanges(
        address=bytes(address),
        storage_changes={
            number(slot, "big"): [(number(index, "big"), number(value, "big")) for index, value in changes]
            for slot, changes in storage
        },
        storage_reads=tuple([number(slot, "big") for slot in reads]),
        balance_changes=tuple([(number(i, "big"), number(v, "big")) for i, v in balances]),
        nonce_changes=tuple([(number(i, "big"), number(v, "big")) for i, v in nonces]),
        code_changes=tuple([(number(i, "big"), bytes(code)) for i, code in codes]),
    )


def _raw_accounts(encoded: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Each account entry of a BAL as (address, its RLP), undecoded."""
    _, _, length, start = consume_length_prefix(encoded, 0)
    end = start + length
    while start < end:
        _, _, item_length, item_start = consume_length_prefix(encoded, start)
        item = encoded[start : item_start + item_length]
        _, _, address_length, address_start = consume_length_prefix(item, item_start - start)
        yield item[address_start : address_start + address_length], item
        start = item_start + item_length


def access_list_addresses(encoded: bytes) -> list[bytes]:
    """The addresses a BAL has an entry for, in its order."""
    return [address for address, _ in _raw_accounts(encoded)]


STATE_CHANGE_FIELDS = (1, 3, 4, 5)
"""The positions of an account entry's storage, balance, nonce and code changes (not its address or reads)."""


def access_list_changers(encoded: bytes) -> Iterator[tuple[bytes, bool]]:
    """
    Each account of a BAL with whether its entry records a change, read from
    the lengths of its fields: an account whose storage changes are a
    billion-gas block's hundreds of thousands of slots is not decoded for it.
    """
    for address, item in _raw_accounts(encoded):
        _, _, _, position = consume_length_prefix(item, 0)
        field_lengths = []
        while position < len(item):
            _, _, field_length, field_start = consume_length_prefix(item, position)
            field_lengths.append(field_length)
            position = field_start + field_length
        yield address, any(field_lengths[field] for field in STATE_CHANGE_FIELDS)


def with_accounts_of(encoded: bytes, replacements: bytes) -> bytes:
    """
    The BAL `encoded` with every account entry of the BAL `replacements` in
    place of its own entry for that address (or added), in canonical address
    order; the other entries stay byte for byte.
    """
    entries = dict(_raw_accounts(encoded))
    entries.update(_raw_accounts(replacements))
    body = b"".join(entries[address] for address in sorted(entries))
    return rlp.codec.length_prefix(len(body), 0xC0) + body
