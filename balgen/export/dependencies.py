"""
Which of a workload's transactions must stay on one ordered path on a live chain.

Each transaction's access set is its designed footprint (`balgen.model.footprint`)
as the dependency graph sees it, with two changes for a live chain: the
sender's own keys are left out, because spamoor's wallets replace the
fixture's senders, so sender links do not carry over; and a transaction that
names an owned address (its recipient, a reference in its data) reads that
account, because the placeholder naming it resolves only inside the payload
that deploys it. The dependency groups are the components of the conflict
graph with write-after-read edges (`analysis.graph.ordered_groups`): what
must keep its order, while separate groups may run side by side.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis.access import TxAccessSet
from ..analysis.graph import ordered_groups
from ..analysis.model import footprint_access_set
from ..chain.builder import FEE_RECIPIENT
from ..model.footprint import accounts_keys, footprint
from .addresses import Ownership, named_addresses
from .chain_order import OrderedTx


def live_access_set(ordered: OrderedTx, owned: Ownership) -> TxAccessSet:
    """What `ordered` is designed to read and write, as a live chain sees it."""
    return on_live_chain(footprint_access_set(footprint(ordered.tx, ordered.access, FEE_RECIPIENT)), ordered, owned)


def on_live_chain(accessed: TxAccessSet, ordered: OrderedTx, owned: Ownership) -> TxAccessSet:
    """The access set of `ordered` with its sender left out and the owned addresses it names read."""
    sender = ordered.tx.sender.address
    writes = frozenset(key for key in accessed.writes if key[0] != sender)
    named = accounts_keys(named_addresses(ordered, owned.owned))
    reads = frozenset(key for key in accessed.reads | named if key[0] != sender) - writes
    return TxAccessSet(reads=reads, writes=writes)


def dependency_groups(sets: Sequence[TxAccessSet]) -> list[list[int]]:
    """Indices of transactions linked by conflicts, each group in chain order, groups by their first transaction."""
    return [list(group) for group in ordered_groups(sets)]
