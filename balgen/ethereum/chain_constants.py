"""
The constants every chain balgen builds or replays shares: its chain id and
the roots of empty lists, tries and request sets.

They are bytes (and an int) here, computed from their definition where that
is short; a format that wants hex renders them (`hextypes.data_hex`).
"""

from __future__ import annotations

import hashlib

import rlp
from .keccak import keccak

CHAIN_ID = 1
"""The chain id balgen signs for and fixtures state: execution-spec-tests' and
go-ethereum's blockchain-test chain id (every config of `tests.Forks`)."""

GENESIS_EXTRA_DATA = b"\x00"
"""The extra data of every genesis balgen builds: execution-spec-tests' `Environment.extra_data`
default, so that a consumer rebuilds a pre-alloc group's genesis from its environment."""

ZERO_HASH = bytes(32)
"""A 32-byte zero word: genesis parent hash, beacon root, prevRandao."""

EMPTY_BLOOM = bytes(256)
"""The logs bloom of a block without logs."""

EMPTY_LIST_HASH = keccak(rlp.encode([]))
"""keccak256(rlp([])): the hash of an empty RLP list."""

EMPTY_OMMERS_HASH = EMPTY_LIST_HASH
"""A post-merge block has no ommers."""

EMPTY_BLOCK_ACCESS_LIST_HASH = EMPTY_LIST_HASH
"""EIP-7928: the access-list hash of a block that touches nothing (a genesis)."""

EMPTY_TRIE_ROOT = keccak(rlp.encode(b""))
"""The Merkle-Patricia root of an empty trie: no transactions, receipts or withdrawals."""

EMPTY_REQUESTS_HASH = hashlib.sha256(b"").digest()
"""EIP-7685: the requests hash of a block without requests, sha256 of nothing."""

INITIAL_BASE_FEE = 1_000_000_000
"""The base fee of a London genesis whose file gives none (go-ethereum's `params.InitialBaseFee`)."""
