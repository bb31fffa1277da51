"""
The root of an ordered Merkle-Patricia trie: a block's transactions root and
withdrawals root.

A block header commits to its transactions and withdrawals through a trie
keyed by each item's index (`rlp(index)`), whose values are the items' own
encodings (a transaction's envelope as the Engine API carries it, a
withdrawal's RLP). balgen's chain builder takes these roots from the t8n; a
replay that sends a variant of a block (`replay.sibling_blocks`) has only the
Engine API payload, which carries the items but not the roots, and must
rebuild the header to hash it. The hash of the rebuilt original is compared
with the payload's `blockHash` before any variant is sent, so a wrong root
here cannot go unnoticed.

The trie is built in one pass over the sorted keys (no node store): a node
is a leaf, an extension or a 17-slot branch (Ethereum yellow paper, appendix
D); a child whose RLP is shorter than 32 bytes is embedded, a longer one is
referenced by its keccak; the root is always hashed.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import rlp

from ..ethereum.keccak import keccak

_Node = bytes | list  # an RLP structure: a byte string or a list of them


def _nibbles(key: bytes) -> tuple[int, ...]:
    """A key as its half-bytes, high first: the trie's path alphabet."""
    return tuple(nibble for byte in key for nibble in (byte >> 4, byte & 0x0F))


def _hex_prefix(path: Sequence[int], *, leaf: bool) -> bytes:
    """The compact (hex-prefix) encoding of a node's path, flagging a leaf and an odd length."""
    flag = (2 if leaf else 0) + (len(path) % 2)
    padded = [flag] + ([] if len(path) % 2 else [0]) + list(path)
    return bytes(padded[index] << 4 | padded[index + 1] for index in range(0, len(padded), 2))


def _common_prefix_length(paths: Sequence[tuple[int, ...]], depth: int) -> int:
    """How many nibbles after `depth` all `paths` share."""
    first, last = min(paths), max(paths)  # sorted order: the extremes bound every shared prefix
    length = 0
    while depth + length < len(first) and depth + length < len(last) and first[depth + length] == last[depth + length]:
        length += 1
    return length


def _reference(node: _Node) -> _Node:
    """How a parent refers to `node`: embedded when its RLP is under 32 bytes, else by hash."""
    encoded = rlp.encode(node, infer_serializer=False)  # byte strings and lists of them: no inference needed
    return node if len(encoded) < 32 else keccak(encoded)


def _node(items: Sequence[tuple[tuple[int, ...], bytes]], depth: int) -> _Node:
    """The node holding `items` (sorted, distinct paths) below `depth` nibbles."""
    if len(items) == 1:
        path, value = items[0]
        return [_hex_prefix(path[depth:], leaf=True), value]
    shared = _common_prefix_length([path for path, _ in items], depth)
    if shared:
        child = _node(items, depth + shared)
        return [_hex_prefix(items[0][0][depth : depth + shared], leaf=False), _reference(child)]
    branch: list[_Node] = [b""] * 17
    # The items are sorted, so those below one nibble are a run: one pass splits them (a block's
    # thousands of transactions were scanned 16 times per level before).
    ending_here = [value for path, value in items if len(path) == depth]
    if ending_here:
        branch[16] = ending_here[0]
    below = [item for item in items if len(item[0]) > depth]
    for nibble, run in itertools.groupby(below, key=lambda item: item[0][depth]):
        branch[nibble] = _reference(_node(list(run), depth + 1))
    return branch


def ordered_trie_root(values: Sequence[bytes]) -> bytes:
    """
    The root of the trie mapping `rlp(index)` to each of `values` in order
    (a block's transactions or withdrawals root); the empty trie's root for none.
    """
    if not values:
        return keccak(rlp.encode(b""))
    items = sorted((_nibbles(rlp.encode(index)), value) for index, value in enumerate(values))
    return keccak(rlp.encode(_node(items, 0), infer_serializer=False))
