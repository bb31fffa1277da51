"""
Per-transaction access sets: the state keys a transaction read and wrote.

A block access list records writes per transaction but reads only per block,
so the dependency graph needs sets of its own. Keys are `balgen.model.footprint`'s:
a storage slot or an account field. `reads` and `writes` are disjoint: a key the transaction changed is in `writes` only, a
key it accessed and left as it was is in `reads`.

The coinbase balance is left out of the set of a transaction that only pays
its fee. Each transaction credits the coinbase its priority fee, which would
make every transaction depend on the one before it; BAL clients apply those
credits commutatively instead, so they are not a conflict. A transaction that
touches the coinbase itself (`BALANCE(COINBASE)`, a call to it) sees every
credit before it, so its set keeps the coinbase balance as a write: it is
linked to the previous such transaction. Touching an account reads all its
fields, so a transaction touched the coinbase exactly when a coinbase field
other than its balance is among its keys, in the model and in a trace alike
(the tracer reports only accounts the code touched). Its links to earlier
transactions that only paid fees are not drawn: in a block where every
transaction touches the coinbase (`coinbase_serialization`) the chain is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest
from typing import Iterable, Iterator

from ..model.footprint import StateKey
from ..model.workload import Address


@dataclass(frozen=True)
class TxAccessSet:
    """What one transaction read (and left unchanged) and what it changed."""

    reads: frozenset[StateKey]
    writes: frozenset[StateKey]

    @property
    def keys(self) -> frozenset[StateKey]:
        """Every key the transaction accessed."""
        return self.reads | self.writes

    def conflicts_with(self, other: TxAccessSet) -> bool:
        """One changes what the other accesses: their order matters."""
        return bool(self.writes & other.keys or other.writes & self.reads)


def access_set(accessed: Iterable[StateKey], written: Iterable[StateKey], coinbase: Address) -> TxAccessSet:
    """The set of a transaction from every key it accessed and those it changed (see module docstring)."""
    fee_credit: StateKey = (coinbase, "balance")
    accessed = frozenset(accessed)
    if (coinbase, "nonce") in accessed:
        writes = frozenset(written) | {fee_credit}
        return TxAccessSet(reads=accessed - writes, writes=writes)
    writes = frozenset(written) - {fee_credit}
    reads = accessed - writes - {fee_credit}
    return TxAccessSet(reads=reads, writes=writes)


def key_order(key: StateKey) -> tuple[Address, bool, int | str]:
    """Sort order of keys: by address, storage slots before account fields."""
    return (key[0], isinstance(key[1], str), key[1])


def describe_key(key: StateKey) -> str:
    """`slot 0x0 of 0xab..` or `balance of 0xab..`."""
    address, item = key
    if isinstance(item, str):
        return f"{item} of 0x{address.hex()}"
    return f"slot {item:#x} of 0x{address.hex()}"


class AccessSetsDiffer(ValueError):
    """The model's and the trace's access sets disagree; the message names where."""


def compared_with_model(model: Iterable[TxAccessSet], traced: Iterable[TxAccessSet]) -> Iterator[TxAccessSet]:
    """
    The traced sets, passed on one at a time as each is compared with the
    model's (a billion-gas block's sets need not be held to be checked):
    `AccessSetsDiffer` at the first transaction and key where they disagree,
    or at the end if the two have different numbers of transactions.
    """
    modelled = seen = 0
    for designed, observed in zip_longest(model, traced):
        modelled += designed is not None
        seen += observed is not None
        if designed is not None and observed is not None:
            difference = set_difference(modelled - 1, designed, observed)
            if difference:
                raise AccessSetsDiffer(difference)
        if observed is not None:
            yield observed
    if modelled != seen:
        raise AccessSetsDiffer(f"the model has {modelled} transactions, the trace {seen}")


def first_difference(model: Iterable[TxAccessSet], traced: Iterable[TxAccessSet]) -> str | None:
    """One line naming the first transaction and key where the model and the trace disagree."""
    try:
        for _ in compared_with_model(model, traced):
            pass
    except AccessSetsDiffer as difference:
        return str(difference)
    return None


def set_difference(index: int, designed: TxAccessSet, observed: TxAccessSet) -> str | None:
    """The first key where transaction `index`'s designed and observed sets disagree."""
    for verb, mine, theirs in (("writes", designed.writes, observed.writes), ("reads", designed.reads, observed.reads)):
        only_traced = sorted(theirs - mine, key=key_order)
        if only_traced:
            return f"transaction {index} {verb} {describe_key(only_traced[0])} in the trace, not in the model"
        only_modelled = sorted(mine - theirs, key=key_order)
        if only_modelled:
            return f"transaction {index} {verb} {describe_key(only_modelled[0])} in the model, not in the trace"
    return None
