"""
What geth says a block read and wrote: the counters of its slow-block log.

Beside the timing, go-ethereum v1.17.8's slow-block entry
(`core/blockchain_stats.go`, `slowBlockLog`) carries

    "state_reads":  {"accounts", "storage_slots", "code", "code_bytes"}
    "state_writes": {"accounts", "accounts_deleted", "storage_slots",
                     "storage_slots_deleted", "code", "code_bytes"}
    "cache": {"account": {"hits", "misses", "hit_rate"},
              "storage": {"hits", "misses", "hit_rate"},
              "code": {"hits", "misses", "hit_rate", "hit_bytes", "miss_bytes"}}

How geth counts (`core/state/state_object.go`, `database_code.go`): a read
is counted once per state object per block, when it is first loaded, so the
counters are distinct accounts, slots and codes. `state_reads.code` counts
`EXTCODESIZE`-style size lookups too, but `state_reads.code_bytes` only the
bytes of whole codes loaded (a call, `EXTCODECOPY`); the code cache's
`miss_bytes` counts the bytes fetched from the database for either, so it
is the figure for "code bytes read from disk". These are the client's own
proof that a block did what its workload says (`expected_counts`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

_FROZEN = ConfigDict(frozen=True, use_attribute_docstrings=True)


class StateReads(BaseModel):
    """Distinct state loaded from the database layer during the block."""

    model_config = _FROZEN

    accounts: int
    storage_slots: int
    code: int
    """Codes loaded, whole or for their size only."""
    code_bytes: int
    """Bytes of the codes loaded whole (not counted for size lookups)."""


class StateWrites(BaseModel):
    """State the block changed."""

    model_config = _FROZEN

    accounts: int
    accounts_deleted: int
    storage_slots: int
    storage_slots_deleted: int
    code: int
    code_bytes: int


class CacheCounts(BaseModel):
    """Hits and misses of one of geth's state caches during the block."""

    model_config = _FROZEN

    hits: int
    misses: int
    hit_bytes: int | None = None
    """Code cache only: bytes served from the cache."""
    miss_bytes: int | None = None
    """Code cache only: bytes read from the database on misses."""


class BlockCounts(BaseModel):
    """Everything geth counted for one block."""

    model_config = _FROZEN

    reads: StateReads
    writes: StateWrites
    account_cache: CacheCounts
    storage_cache: CacheCounts
    code_cache: CacheCounts


def block_counts(entry: dict[str, Any]) -> BlockCounts | None:
    """The counters of a slow-block entry; None if it has none (an older geth) or they are malformed."""
    try:
        cache = entry["cache"]
        return BlockCounts(
            reads=StateReads.model_validate(entry["state_reads"]),
            writes=StateWrites.model_validate(entry["state_writes"]),
            account_cache=CacheCounts.model_validate(cache["account"]),
            storage_cache=CacheCounts.model_validate(cache["storage"]),
            code_cache=CacheCounts.model_validate(cache["code"]),
        )
    except (KeyError, TypeError, ValidationError):
        return None


def counter(counts: BlockCounts, path: str) -> int | None:
    """One counter by its dotted name, e.g. `reads.storage_slots` or `code_cache.miss_bytes`."""
    section, name = path.split(".")
    value = getattr(getattr(counts, section), name)
    return None if value is None else int(value)
