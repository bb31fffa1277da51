"""
A benchmark block's invalid twin: the same block carrying an access list that lies in one named way.

How long a client takes to reject such a block bounds what a lying proposer
can make it spend. A client that trusts the list to schedule parallel
execution finds most lies only by executing the block and comparing; a few
(order, bounds, encoding) a cheap check of the list itself finds, and a
header that does not commit to the list it comes with is found by hashing.
The corruptions and the exceptions they must raise are named as
execution-specs' `BlockException` names them, so that any consumer that maps
a client's message to those names can check the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Corruption(str, Enum):
    """How the access list differs from the one execution produces."""

    MISSING_READ = "missing_read"
    """A storage read left out."""
    MISSING_WRITE = "missing_write"
    """A written slot left out, with its changes."""
    WRONG_VALUE = "wrong_value"
    """A storage change's post-value one more than execution leaves."""
    EXTRA_ACCOUNT = "extra_account"
    """An account no transaction touches, listed (in its place in the order)."""
    MISSING_ACCOUNT = "missing_account"
    """A sender's entry, nonce and balance changes and all, left out."""
    WRONG_INDEX = "wrong_index"
    """A sender's nonce change put at the next transaction's index (still within the block)."""
    OUT_OF_ORDER = "out_of_order"
    """Two neighbouring accounts swapped, so addresses are not strictly ascending."""
    OVER_BOUND = "over_bound"
    """Unread slots listed as reads until the list has one item more than EIP-7928 allows at
    the benchmark's gas value."""
    UNDECODABLE = "undecodable"
    """The list's RLP without its last byte."""


class HeaderHash(str, Enum):
    """What the header's `blockAccessListHash` commits to."""

    REHASHED = "rehashed"
    """The wrong list, block hash recomputed: only validating the list (or executing) finds the lie."""
    STALE_HASH = "stale_hash"
    """The list execution produces, as in the valid block: hashing the list finds the lie."""


CHEAP_CHECKS = {Corruption.OUT_OF_ORDER: "the list's order", Corruption.UNDECODABLE: "decoding"}
"""Corruptions a client finds in the list alone, before executing, and by what."""

_EXCEPTIONS: dict[Corruption, tuple[str, ...]] = {
    Corruption.MISSING_READ: ("INVALID_BLOCK_ACCESS_LIST",),
    Corruption.MISSING_WRITE: ("INVALID_BLOCK_ACCESS_LIST",),
    Corruption.WRONG_VALUE: ("INVALID_BLOCK_ACCESS_LIST",),
    Corruption.EXTRA_ACCOUNT: ("INVALID_BAL_EXTRA_ACCOUNT", "INVALID_BLOCK_ACCESS_LIST"),
    Corruption.MISSING_ACCOUNT: ("INVALID_BAL_MISSING_ACCOUNT", "INVALID_BLOCK_ACCESS_LIST"),
    Corruption.WRONG_INDEX: ("INVALID_BLOCK_ACCESS_LIST",),
    Corruption.OUT_OF_ORDER: ("INCORRECT_BLOCK_FORMAT", "INVALID_BLOCK_ACCESS_LIST"),
    # The chain's own gas limit (10^12) allows 500 million items: over the bound at the benchmark's
    # gas value, the list is still one a client must execute to refute on such a chain.
    Corruption.OVER_BOUND: ("BLOCK_ACCESS_LIST_GAS_LIMIT_EXCEEDED", "INVALID_BLOCK_ACCESS_LIST"),
    Corruption.UNDECODABLE: ("INCORRECT_BLOCK_FORMAT",),
}
"""The exceptions a client may raise for each corruption under a header that commits to it, most
specific first (execution-specs' `BlockException` names)."""

STALE_HASH_EXCEPTIONS = ("INVALID_BAL_HASH", "INVALID_BLOCK_HASH")
"""A header committing to another list: over the Engine API, where the client derives the
header's list hash from the list it is given, that is a block hash mismatch."""


@dataclass(frozen=True)
class InvalidAccessList:
    """The lie a workload's invalid benchmark payload tells: the corruption and the header's hash."""

    corruption: Corruption
    header_hash: HeaderHash

    @property
    def name(self) -> str:
        """`<corruption>_<header hash>`, the variant name of the fixture that carries it."""
        return f"{self.corruption.value}_{self.header_hash.value}"

    @property
    def exceptions(self) -> tuple[str, ...]:
        """The `BlockException` names a client may answer with, most specific first."""
        if self.header_hash is HeaderHash.REHASHED:
            return _EXCEPTIONS[self.corruption]
        if self.corruption is Corruption.UNDECODABLE:
            # Two defects, either found first: go-ethereum decodes the list before it hashes the header.
            return (*_EXCEPTIONS[self.corruption], *STALE_HASH_EXCEPTIONS)
        return STALE_HASH_EXCEPTIONS

    @property
    def validation_error(self) -> str:
        """The fixture's `validationError`: execution-spec-tests' `|`-joined alternatives."""
        return "|".join(f"BlockException.{name}" for name in self.exceptions)

    @property
    def refuted_by(self) -> str:
        """What refutes the lie soonest: hashing the header, a check of the list, or only executing the block."""
        if self.corruption in CHEAP_CHECKS:
            return CHEAP_CHECKS[self.corruption]
        return "the block hash" if self.header_hash is HeaderHash.STALE_HASH else "execution"

    @classmethod
    def from_name(cls, name: str) -> InvalidAccessList:
        """The lie named `<corruption>_<header hash>` (ValueError naming it if there is none)."""
        for lie in every_invalid_access_list():
            if lie.name == name:
                return lie
        raise ValueError(f"{name!r} names no access-list corruption")


def every_invalid_access_list() -> tuple[InvalidAccessList, ...]:
    """Every corruption under both header hashes, in documentation order."""
    return tuple(InvalidAccessList(corruption, kind) for corruption in Corruption for kind in HeaderHash)
