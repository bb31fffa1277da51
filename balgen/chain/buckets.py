"""
Items spread over files by the first byte of their address, for sorting what is too large to hold.

A billion-gas block leaves tens of thousands of accounts in t8n's allocation
(in no order) and as many in its predicted access list, and both are needed
in address order. Addresses are hashes, so their first byte spreads items
evenly over 256 files; each file is then read back and ordered on its own,
a 256th of the whole held at a time.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")


def by_first_byte(items: Iterable[T], first_byte: Callable[[T], int], folder: Path) -> Iterator[Iterator[T]]:
    """
    The items, spilled into `folder` (created) by `first_byte`, then given
    back one bucket at a time in byte order, each in the order it was filled.
    """
    folder.mkdir(parents=True, exist_ok=True)
    buckets: dict[int, BinaryIO] = {}
    try:
        for item in items:
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
