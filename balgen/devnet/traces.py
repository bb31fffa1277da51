"""
A transaction's read and write sets as the chain's tracer saw them.

geth's `prestateTracer` lists every account and storage slot a transaction
accessed; in diff mode, what it changed. balgen's model states the same per
transaction, so the storage slots each side names must agree once the
fixture's addresses are mapped to the live ones. Accounts are compared
through the conflict graph only: the tracer leaves out accounts that do not
exist, and the sender and fee recipient differ on a live chain anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.access import TxAccessSet
from ..model.footprint import StateKey, accounts_keys
from ..model.workload import Address, TxAccess
from .chain_reader import PrestateDiff, PrestateTrace

StorageKeys = frozenset[tuple[Address, int]]


@dataclass(frozen=True)
class TracedTx:
    """What one transaction accessed and changed, from its two prestate traces."""

    accessed: PrestateTrace
    """Account -> its prestate entry (fields and the storage slots accessed)."""
    pre: PrestateTrace
    post: PrestateTrace
    """Changed accounts before and after, with only the changed fields and slots."""

    @property
    def storage_accessed(self) -> StorageKeys:
        """Slots read or written: the prestate has no entry for a contract the transaction creates."""
        read = frozenset((a, slot) for a, entry in self.accessed.items() for slot in entry.storage)
        return read | self.storage_written

    @property
    def storage_written(self) -> StorageKeys:
        return frozenset(
            (a, slot) for side in (self.pre, self.post) for a, entry in side.items() for slot in entry.storage
        )

    def access_set(self, left_out: set[Address]) -> TxAccessSet:
        """The access set the conflict graph takes, without `left_out` accounts (sender, fee recipient)."""
        writes: set[StateKey] = set(self.storage_written)
        for address, entry in self.post.items():
            writes |= {(address, name) for name in ("nonce", "code", "balance") if entry.lists(name)}
        reads: set[StateKey] = accounts_keys(self.accessed) | set(self.storage_accessed)
        writes = {key for key in writes if key[0] not in left_out}
        reads = {key for key in reads if key[0] not in left_out} - writes
        return TxAccessSet(frozenset(reads), frozenset(writes))


def traced_tx(prestate: PrestateTrace, diff: PrestateDiff) -> TracedTx:
    return TracedTx(prestate, diff.pre, diff.post)


def storage_difference(access: TxAccess, traced: TracedTx, live: dict[Address, Address]) -> str | None:
    """The first storage slot the model and the trace disagree on, or None."""
    written = {(live.get(a, a), slot) for a, slot in access.writes}
    accessed = written | {(live.get(a, a), slot) for a, slot in access.reads}
    for verb, mine, theirs in (("writes", written, traced.storage_written), ("accesses", accessed, traced.storage_accessed)):
        for address, slot in sorted(theirs - mine):
            return f"it {verb} slot {slot:#x} of 0x{address.hex()} in the trace, not in the model"
        for address, slot in sorted(mine - theirs):
            return f"it {verb} slot {slot:#x} of 0x{address.hex()} in the model, not in the trace"
    return None
