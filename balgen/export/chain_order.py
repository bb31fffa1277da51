"""
A workload's transactions in the order its chain includes them.

The export works on set-up and benchmark transactions alike (a live chain
has no genesis to hold the contracts), so every transaction is numbered once,
in block order, and keeps its phase, its designed access and a label that
error messages and YAML comments use to point at it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..model.workload import BlockSpec, Phase, TxAccess, TxSpec, Workload


@dataclass(frozen=True)
class OrderedTx:
    """One transaction of a workload, with its place in the chain."""

    index: int
    """Position among all the workload's transactions, set-up blocks first."""
    label: str
    """Where a reader finds it: `set-up block 1 tx 0`, `benchmark block tx 12`."""
    phase: Phase
    tx: TxSpec
    access: TxAccess

    @property
    def creates(self) -> bool:
        """A contract-creation transaction (no recipient)."""
        return self.tx.to is None


def block_label(block: BlockSpec, setup_number: int) -> str:
    """How a block is called in messages: set-up blocks count from 1."""
    return "benchmark block" if block.phase is Phase.TESTING else f"set-up block {setup_number}"


def ordered_transactions(workload: Workload) -> tuple[OrderedTx, ...]:
    """Every transaction of `workload`, set-up blocks first, numbered in chain order."""
    ordered: list[OrderedTx] = []
    for number, block in enumerate(workload.blocks, start=1):
        label = block_label(block, number)
        for position, (tx, access) in enumerate(zip(block.txs, block.accesses)):
            ordered.append(OrderedTx(len(ordered), f"{label} tx {position}", block.phase, tx, access))
    return tuple(ordered)


def without(txs: tuple[OrderedTx, ...], left_out: frozenset[int]) -> tuple[OrderedTx, ...]:
    """`txs` but those at `left_out`, renumbered in order; labels still name the fixture's blocks."""
    kept = [ordered for ordered in txs if ordered.index not in left_out]
    return tuple(replace(ordered, index=index) for index, ordered in enumerate(kept))
