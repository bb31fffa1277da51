"""
An account's storage held compactly: 64 bytes a slot, sorted by key.

A billion-gas `prefetch` block's list contract has hundreds of thousands of
slots. As alloc JSON (a dict of hex strings) a slot takes about 270 bytes,
and each stage that read an allocation held that account so, some twice.
`PackedStorage` keeps each slot's key and value as 32 big-endian bytes each,
in one bytes object sorted by key, and gives them back one at a time in the
fixtures' spelling (`zero_padded_hex`) and in either order a fixture needs:
by key for the file, by the keys' JSON text for the compact sorted form its
hash is taken over.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator

from ..ethereum.hextypes import zero_padded_hex
from ..model.workload import RegeneratedMapping

WORD_BYTES = 32
SLOT_BYTES = 2 * WORD_BYTES


class PackedStorage(RegeneratedMapping[str, str]):
    """
    Storage slots (key -> value, both `zero_padded_hex`) packed 64 bytes a
    slot, in key order, their text made as they are walked; a lookup is a
    binary search. Equal to any mapping with the same items, and to another
    packed storage by its bytes.
    """

    def __init__(self, records: bytes) -> None:
        if len(records) % SLOT_BYTES:
            raise ValueError(f"{len(records)} bytes are not whole {SLOT_BYTES}-byte slots")
        # The rule holds the records, not the storage: no cycle keeps a large one alive.
        super().__init__(len(records) // SLOT_BYTES, lambda: ((_word_hex(k), _word_hex(v)) for k, v in _words(records)))
        self._records = records
        """Each slot's key and value, 32 big-endian bytes each, sorted by key, keys unique."""

    @classmethod
    def of(cls, slots: Iterable[tuple[int, int]]) -> PackedStorage:
        """The storage holding `slots` (key, value), in any order; a key given twice is an error."""
        packer = StoragePacker()
        for key, value in slots:
            packer.add(key, value)
        return packer.packed()

    def words(self) -> Iterator[tuple[bytes, bytes]]:
        """Each slot's key and value as 32 big-endian bytes, in key order."""
        return _words(self._records)

    def int_items(self) -> Iterator[tuple[int, int]]:
        """Each slot's key and value as integers, in key order."""
        return ((int.from_bytes(key, "big"), int.from_bytes(value, "big")) for key, value in self.words())

    def json_ordered_items(self) -> Iterator[tuple[str, str]]:
        """
        The items in the order of their keys' JSON text, as `json.dumps(sort_keys=True)`
        writes an object: a `zero_padded_hex` key's text orders as its
        shortest big-endian bytes do, so the slots of each byte length, each
        run in key order, are merged by those bytes.
        """
        by_length: dict[int, array] = {}
        for index, (key, _) in enumerate(self.words()):
            by_length.setdefault(len(_shortest(key)), array("I")).append(index)
        runs = [self._keyed_run(indices) for indices in by_length.values()]
        for key, value in heapq.merge(*runs):
            yield "0x" + key.hex(), _word_hex(value)

    def _keyed_run(self, indices: array) -> Iterator[tuple[bytes, bytes]]:
        """The slots at `indices` (in key order), each as its key's shortest bytes and its value."""
        records = self._records
        for index in indices:
            start = index * SLOT_BYTES
            middle = start + WORD_BYTES
            yield _shortest(records[start:middle]), records[middle : middle + WORD_BYTES]

    def _slot(self, index: int) -> tuple[int, int]:
        start = index * SLOT_BYTES
        middle = start + WORD_BYTES
        records = self._records
        return int.from_bytes(records[start:middle], "big"), int.from_bytes(records[middle : middle + WORD_BYTES], "big")

    def without_zeros(self) -> PackedStorage:
        """The slots whose value is not zero (itself, if none is)."""
        if all(value for _, value in self.int_items()):
            return self
        return PackedStorage.of((key, value) for key, value in self.int_items() if value)

    def value_of(self, slot: int) -> int:
        """The value of `slot`, zero where it is not held (as storage reads it)."""
        position = self._position(slot)
        return 0 if position is None else self._slot(position)[1]

    def _position(self, slot: int) -> int | None:
        """Where `slot` is among the records, found by binary search over their key bytes; None if absent."""
        if not 0 <= slot < 1 << 8 * WORD_BYTES:
            return None  # no storage slot
        records, wanted = self._records, slot.to_bytes(WORD_BYTES, "big")

        def key_at(position: int) -> bytes:
            return records[position * SLOT_BYTES : position * SLOT_BYTES + WORD_BYTES]

        index = bisect_left(range(len(self)), wanted, key=key_at)
        return index if index < len(self) and key_at(index) == wanted else None

    def __getitem__(self, key: str) -> str:
        position = self._position(int(key, 16))
        if position is None:
            raise KeyError(key)
        return zero_padded_hex(self._slot(position)[1])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedStorage):
            return self._records == other._records
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]


class StoragePacker:
    """Slots packed as they are read (in key order, as go-ethereum writes them, or else sorted at the end)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._last = -1
        self._ordered = True

    def add(self, key: int, value: int) -> None:
        """One more slot."""
        if key <= self._last:
            self._ordered = False
        self._last = key
        self._buffer += key.to_bytes(WORD_BYTES, "big")
        self._buffer += value.to_bytes(WORD_BYTES, "big")

    def packed(self) -> PackedStorage:
        """The slots added, sorted by key if they did not come so."""
        records = bytes(self._buffer)
        self._buffer = bytearray()
        if not self._ordered:
            slots = sorted(records[start : start + SLOT_BYTES] for start in range(0, len(records), SLOT_BYTES))
            for before, after in zip(slots, slots[1:]):
                if before[:WORD_BYTES] == after[:WORD_BYTES]:
                    raise ValueError(f"storage slot 0x{before[:WORD_BYTES].hex()} is given twice")
            records = b"".join(slots)
        return PackedStorage(records)


def _words(records: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Each packed slot's key and value as 32 big-endian bytes, in key order."""
    for start in range(0, len(records), SLOT_BYTES):
        middle = start + WORD_BYTES
        yield records[start:middle], records[middle : middle + WORD_BYTES]


def _shortest(word: bytes) -> bytes:
    """A 32-byte big-endian number in its shortest bytes, one byte for zero (as `zero_padded_hex` spells it)."""
    return word.lstrip(b"\0") or b"\0"


def _word_hex(word: bytes) -> str:
    """`zero_padded_hex` of a 32-byte big-endian number, without making the number."""
    return "0x" + _shortest(word).hex()
