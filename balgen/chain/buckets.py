"""
Items spread over files by the first byte of their address, for sorting what is too large to hold.

A billion-gas block leaves tens of thousands of accounts in t8n's allocation
(in no order) and as many in its predicted access list, and both are needed
in address order. Addresses are hashes, so their first byte spreads items
evenly over 256 files; each file is then read back and ordered on its own,
a 256th of the whole held at a time. What is small enough to hold (a 60M
block's few thousand accounts) is never spilled: creating 256 files cost more
than the sort.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")

HELD_ITEMS = 100_000
"""How many items are sorted in memory before they are spilled into files."""


def by_first_byte(
    items: Iterable[T], first_byte: Callable[[T], int], folder: Path, held_items: int = HELD_ITEMS
) -> Iterator[Iterator[T]]:
    """
    The items by `first_byte`, given back one bucket at a time in byte order,
    each in the order it was filled: held while there are at most
    `held_items`, else spilled into `folder` (created) and read back.
    """
    iterator = iter(items)
    held: dict[int, list[T]] = {}
    count = 0
    for item in iterator:
        held.setdefault(first_byte(item), []).append(item)
        count += 1
        if count > held_items:
            yield from _spilled(held, iterator, first_byte, folder)
            return
    for bucket in sorted(held):
        yield iter(held[bucket])


def _spilled(
    held: dict[int, list[T]], rest: Iterator[T], first_byte: Callable[[T], int], folder: Path
) -> Iterator[Iterator[T]]:
    """The held items and the rest, spilled into `folder` by bucket and read back in byte order."""
    folder.mkdir(parents=True, exist_ok=True)
    buckets: dict[int, BinaryIO] = {}
    try:
        for bucket, bucket_items in held.items():
            buckets[bucket] = (folder / f"{bucket:02x}").open("wb")
            for item in bucket_items:
                pickle.dump(item, buckets[bucket])
        held.clear()
        for item in rest:
            bucket = first_byte(item)
            if bucket not in buckets:
                buckets[bucket] = (folder / f"{bucket:02x}").open("wb")
            pickle.dump(item, buckets[bucket])
    finally:
        for out in buckets.values():
            out.close()
    for bucket in sorted(buckets):
        yield _unpickled(folder / f"{bucket:02x}")


def _unpickled(path: Path) -> Iterator[T]:
    with path.open("rb") as stream:
        while True:
            try:
                yield pickle.load(stream)
            except EOFError:
                return
