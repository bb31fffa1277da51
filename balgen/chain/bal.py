"""
EIP-7928 block-level access lists: decoding t8n's RLP, and replacing accounts in it.

The RLP layout per account is `[address, storage_changes, storage_reads,
balance_changes, nonce_changes, code_changes]`, each change `[index, value]`;
index 0 is the pre-execution system calls, 1..n the transactions, n+1 the
post-execution system calls.

An account's storage changes or reads longer than `LAZY_FIELD_BYTES` of RLP
are not decoded into Python objects at all: they stay views of the list's
RLP (`EncodedSlots`, `EncodedSlotChanges`), decoded a slot at a time each
time they are gone through. A billion-gas block's busiest account has
hundreds of thousands of slots, a few tens of MB of RLP but hundreds of MB
decoded, and every consumer (the checks, the shared chain, the fixtures)
walks them in their canonical order anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Iterable, Iterator

import rlp
from rlp.codec import consume_item, consume_length_prefix

from ..model.workload import Regenerated, RegeneratedMapping

SlotChangeList = list[tuple[int, int]]
"""One slot's changes: [(block access index, post value)]."""

LAZY_FIELD_BYTES = 1 << 16
"""An account's storage changes or reads with more RLP than this (about 2,000 reads) are kept
as views of the RLP rather than decoded; smaller ones are decoded once, which is faster to walk again."""


@dataclass(frozen=True)
class AccountChanges:
    """One account's entry in a block access list."""

    address: bytes
    storage_changes: Mapping[int, SlotChangeList]
    """slot -> [(block access index, post value)], in slot order"""
    storage_reads: Sequence[int]
    balance_changes: tuple[tuple[int, int], ...]
    nonce_changes: tuple[tuple[int, int], ...]
    code_changes: tuple[tuple[int, bytes], ...]

    @property
    def changes_state(self) -> bool:
        """Whether the entry records any change (an entry may record reads only)."""
        return bool(self.storage_changes or self.balance_changes or self.nonce_changes or self.code_changes)


def _item_spans(encoded: bytes, start: int, end: int) -> Iterator[tuple[int, int, int]]:
    """(start, payload start, end) of each RLP item in `encoded[start:end]` (a list's payload)."""
    while start < end:
        _, _, length, payload = consume_length_prefix(encoded, start)
        yield start, payload, payload + length
        start = payload + length


def _payload(encoded: bytes, start: int) -> tuple[int, int]:
    """(payload start, end) of the RLP item at `start`."""
    _, _, length, payload = consume_length_prefix(encoded, start)
    return payload, payload + length


class _EncodedPayload:
    """
    A view of one RLP list's payload, `encoded[start:end]`: two views are
    equal when their payloads are (RLP is canonical), compared uncopied.
    """

    def __init__(self, encoded: bytes, start: int, end: int) -> None:
        self._encoded, self._start, self._end = encoded, start, end

    def encoding(self) -> memoryview:
        """The list's RLP payload, uncopied."""
        return memoryview(self._encoded)[self._start : self._end]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, type(self)):
            return self.encoding() == other.encoding()
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]


class EncodedSlots(_EncodedPayload, Regenerated[int]):
    """
    An access-list account's storage reads as a view of the list's RLP: each
    slot decoded as it is reached, every time the reads are gone through,
    so that hundreds of thousands of them are never held as integers.
    """

    def __init__(self, encoded: bytes, start: int, end: int) -> None:
        _EncodedPayload.__init__(self, encoded, start, end)
        Regenerated.__init__(self, _count_items(encoded, start, end), lambda: _decoded_ints(encoded, start, end))

    def __repr__(self) -> str:
        return f"EncodedSlots({len(self)} reads)"


def _count_items(encoded: bytes, start: int, end: int) -> int:
    """How many RLP items `encoded[start:end]` holds, read from their length prefixes."""
    return sum(1 for _ in _item_spans(encoded, start, end))


def _decoded_ints(encoded: bytes, start: int, end: int) -> Iterator[int]:
    """The RLP byte strings in `encoded[start:end]` as big-endian integers, one at a time."""
    for _, payload, item_end in _item_spans(encoded, start, end):
        yield int.from_bytes(encoded[payload:item_end], "big")


class EncodedSlotChanges(_EncodedPayload, RegeneratedMapping[int, SlotChangeList]):
    """
    An access-list account's storage changes as a view of the list's RLP,
    in slot order, each slot's changes decoded as it is reached. Looking a
    slot up walks the list: its readers go through it in order instead.
    """

    def __init__(self, encoded: bytes, start: int, end: int) -> None:
        _EncodedPayload.__init__(self, encoded, start, end)
        RegeneratedMapping.__init__(
            self, _count_items(encoded, start, end), lambda: _decoded_slot_changes(encoded, start, end)
        )


def _decoded_slot_changes(encoded: bytes, start: int, end: int) -> Iterator[tuple[int, SlotChangeList]]:
    """Each slot of the storage changes list in `encoded[start:end]` with its changes, decoded one slot at a time."""
    number = int.from_bytes
    for _, payload, item_end in _item_spans(encoded, start, end):
        slot_start, slot_end = _payload(encoded, payload)
        changes_start, changes_end = _payload(encoded, slot_end)
        changes = []
        for _, change, _ in _item_spans(encoded, changes_start, changes_end):
            index_start, index_end = _payload(encoded, change)
            value_start, value_end = _payload(encoded, index_end)
            changes.append((number(encoded[index_start:index_end], "big"), number(encoded[value_start:value_end], "big")))
        yield number(encoded[slot_start:slot_end], "big"), changes


def iter_block_access_list(encoded: bytes, lazy_bytes: int = LAZY_FIELD_BYTES) -> Iterator[AccountChanges]:
    """
    A BAL's accounts in canonical order, each decoded when it is reached: a
    billion-gas block's access list is written out one account at a time.
    Storage changes or reads of more than `lazy_bytes` of RLP stay views of
    `encoded` (see the module docstring).
    """
    for start, payload, end in _account_spans(encoded):
        if end - payload <= lazy_bytes:  # no field can be large: the whole entry in one decoding
            yield _decoded_account(_decoded_entry(encoded, start, end))
        else:
            yield _account_changes(encoded, payload, end, lazy_bytes)


RUSTY_ENTRY_BYTES = 256
"""An account entry of at most this much RLP is decoded by rusty-rlp, as is a longer one without code
changes; a longer one with them, which is a created contract's with its code, is decoded by pyrlp's
own decoder: rusty-rlp makes a long byte string slowly (9 us for 0.5 KB of code, where pyrlp decodes
the whole entry in 7 us; a 60M contract set's setup list, 19,203 such entries, 305 -> 266 ms), and
pyrlp a list of many short items slowly (about 3 ms for an entry of tens of KB of storage changes)."""

EMPTY_LIST_RLP = 0xC0


def _decoded_entry(encoded: bytes, start: int, end: int) -> list:
    """The decoded RLP item at [start, end) of `encoded`."""
    # An entry whose last byte is an empty list's has no code changes (a code change's RLP can end
    # in that byte too: it is then decoded by rusty-rlp, as correctly, only more slowly).
    if end - start <= RUSTY_ENTRY_BYTES or encoded[end - 1] == EMPTY_LIST_RLP:
        return rlp.decode(encoded[start:end])
    item, _, consumed = consume_item(encoded, start)
    if consumed != end:
        raise rlp.DecodingError(f"an access-list account ends at byte {consumed}, not {end}", encoded[start:end])
    return item


def _decoded_account(fields: list) -> AccountChanges:
    """An account entry from its decoded RLP fields."""
    address, storage, reads, balances, nonces, codes = fields
    return AccountChanges(
        address=bytes(address),
        storage_changes=_slot_changes(storage),
        storage_reads=_slots(reads),
        balance_changes=_changes(balances),
        nonce_changes=_changes(nonces),
        code_changes=_code_changes(codes),
    )


# The decoders below call `int.from_bytes` directly, in list comprehensions: a 60M block's list has
# thousands of accounts, decoded for every check.


def _slot_changes(storage: list) -> dict[int, SlotChangeList]:
    """Decoded `[slot, [[index, value], ...]]` entries as integers, by slot."""
    number = int.from_bytes
    return {
        number(slot, "big"): [(number(index, "big"), number(value, "big")) for index, value in changes]
        for slot, changes in storage
    }


def _slots(slots: list) -> tuple[int, ...]:
    """Decoded slots as integers."""
    return tuple([int.from_bytes(slot, "big") for slot in slots])


def _changes(pairs: list) -> tuple[tuple[int, int], ...]:
    """Decoded `[index, value]` pairs as integers."""
    number = int.from_bytes
    return tuple([(number(i, "big"), number(v, "big")) for i, v in pairs])


def _code_changes(pairs: list) -> tuple[tuple[int, bytes], ...]:
    """Decoded `[index, code]` pairs."""
    return tuple([(int.from_bytes(i, "big"), bytes(code)) for i, code in pairs])


def _account_changes(encoded: bytes, start: int, end: int, lazy_bytes: int) -> AccountChanges:
    """The (large) account entry whose fields are the RLP items in `encoded[start:end]`."""
    fields = list(_item_spans(encoded, start, end))
    if len(fields) != 6:
        raise rlp.DecodingError(f"an access-list account has {len(fields)} fields, not 6", encoded[start:end])
    (address, storage, reads, balances, nonces, codes) = (
        rlp.decode(encoded[field_start:field_end]) if number in (0, 3, 4, 5) else (field_start, payload, field_end)
        for number, (field_start, payload, field_end) in enumerate(fields)
    )
    return AccountChanges(
        address=bytes(address),
        storage_changes=_storage_changes(encoded, *storage, lazy_bytes),
        storage_reads=_storage_reads(encoded, *reads, lazy_bytes),
        balance_changes=_changes(balances),
        nonce_changes=_changes(nonces),
        code_changes=_code_changes(codes),
    )


def _storage_changes(encoded: bytes, start: int, payload: int, end: int, lazy_bytes: int) -> Mapping[int, SlotChangeList]:
    """The storage changes list at [start, end) of `encoded`: a view if its payload is over `lazy_bytes`."""
    if end - payload > lazy_bytes:
        return EncodedSlotChanges(encoded, payload, end)
    return _slot_changes(rlp.decode(encoded[start:end]))


def _storage_reads(encoded: bytes, start: int, payload: int, end: int, lazy_bytes: int) -> Sequence[int]:
    """The storage reads list at [start, end) of `encoded`: a view if its payload is over `lazy_bytes`."""
    if end - payload > lazy_bytes:
        return EncodedSlots(encoded, payload, end)
    return _slots(rlp.decode(encoded[start:end]))


def _account_spans(encoded: bytes) -> Iterator[tuple[int, int, int]]:
    """(start, payload start, end) of each account entry of a BAL."""
    _, _, length, start = consume_length_prefix(encoded, 0)
    return _item_spans(encoded, start, start + length)


def raw_accounts(encoded: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Each account entry of a BAL as (address, its RLP), undecoded."""
    for start, payload, end in _account_spans(encoded):
        address_start, address_end = _payload(encoded, payload)
        yield encoded[address_start:address_end], encoded[start:end]


def access_list_addresses(encoded: bytes) -> list[bytes]:
    """The addresses a BAL has an entry for, in its order."""
    return [address for address, _ in raw_accounts(encoded)]


STATE_CHANGE_FIELDS = (1, 3, 4, 5)
"""The positions of an account entry's storage, balance, nonce and code changes (not its address or reads)."""


def access_list_changers(encoded: bytes) -> Iterator[tuple[bytes, bool]]:
    """
    Each account of a BAL with whether its entry records a change, read from
    the lengths of its fields: an account whose storage changes are a
    billion-gas block's hundreds of thousands of slots is not decoded for it.
    """
    for _, payload, end in _account_spans(encoded):
        fields = [(field_payload, field_end) for _, field_payload, field_end in _item_spans(encoded, payload, end)]
        address_start, address_end = fields[0]
        yield encoded[address_start:address_end], any(
            fields[field][1] > fields[field][0] for field in STATE_CHANGE_FIELDS
        )


def with_accounts_of(encoded: bytes, replacements: bytes) -> bytes:
    """
    The BAL `encoded` with every account entry of the BAL `replacements` in
    place of its own entry for that address (or added), in canonical address
    order; the other entries stay byte for byte.
    """
    entries = dict(raw_accounts(encoded))
    entries.update(raw_accounts(replacements))
    return encoded_list(entries[address] for address in sorted(entries))


def item_count(accounts: Iterable[AccountChanges]) -> int:
    """EIP-7928's item count of a list: every address plus every storage key written or read."""
    return sum(1 + len(account.storage_changes) + len(account.storage_reads) for account in accounts)


def encoded_list(entries: Iterable[bytes]) -> bytes:
    """A block access list from its account entries' RLP, in the order given."""
    body = b"".join(entries)
    return rlp.codec.length_prefix(len(body), 0xC0) + body
