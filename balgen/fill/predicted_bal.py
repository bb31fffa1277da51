"""
The block access list a block should have, predicted from the workload model.

EIP-7928 records, per account, every storage write with the transaction's
block access index and the value left, the slots only read, and the nonce,
code and balance changes. The generator knows all of them by design except
balance values (fees depend on execution), so balgen predicts the whole list
and the fill compares it, entry by entry, with the one t8n computed: that is
what proves a workload's dependency graph is the one its name promises.
What each transaction touches is its footprint (`balgen.model.footprint`), so the
prediction and the dependency graph cannot disagree on it. Balance changes
are predicted by index only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any, Iterable, Iterator, TypeVar

from ..chain.bal import AccountChanges
from ..chain.buckets import HELD_ITEMS, by_first_byte
from ..chain.header import Header
from ..model.footprint import block_footprints
from ..ethereum.forks import Fork
from ..chain.system_calls import system_accesses
from ..model.workload import Address, BlockSpec

SlotChanges = list[tuple[int, int | None]]
"""[(block access index, post value or None where only execution can tell)]"""


@dataclass
class PredictedAccount:
    """One account's predicted entry in a block access list."""

    storage_changes: dict[int, SlotChanges] = field(default_factory=dict)
    storage_reads: set[int] = field(default_factory=set)
    balance_changes: set[int] = field(default_factory=set)
    """Block access indices at which the balance changes; values come from execution."""
    nonce_changes: list[tuple[int, int]] = field(default_factory=list)
    code_changes: list[tuple[int, bytes]] = field(default_factory=list)

    def write(self, index: int, slot: int, value: int | None) -> None:
        self.storage_changes.setdefault(slot, []).append((index, value))


PredictedAccessList = dict[Address, PredictedAccount]

Event = tuple[Address, str, int, Any, Any]
"""One fact of the prediction: (address, kind, block access index, slot or None, value). Kinds:
`write` (a slot and the value left), `read` (a slot), `balance`, `nonce` and `code` (a change and
its value), `touch` (the account is in the list, nothing more)."""


def access_events(fork: Fork, spec: BlockSpec, header: Header) -> Iterator[Event]:
    """The block's predicted access list as facts, in block order: the system calls', then each footprint's."""
    for address, access in system_accesses(fork, header).items():
        yield address, "touch", 0, None, None
        for slot, value in access.writes.items():
            yield address, "write", 0, slot, value
        for slot in access.reads:
            yield address, "read", 0, slot, None
    for index, print_ in enumerate(block_footprints(spec, header.fee_recipient), start=1):
        for key in print_.writes:
            address, item = key
            if isinstance(item, int):
                yield address, "write", index, item, print_.value_left(key)
            else:
                yield address, item, index, None, print_.value_left(key)
        for address, item in print_.reads:
            yield address, "read" if isinstance(item, int) else "touch", index, item, None


def gathered(events: Iterable[Event]) -> PredictedAccessList:
    """The access list the facts `events` describe."""
    accounts: PredictedAccessList = {}
    for address, kind, index, slot, value in events:
        entry = accounts.get(address)
        if entry is None:  # not `setdefault`, which would make an entry for every fact
            entry = accounts[address] = PredictedAccount()
        if kind == "write":
            entry.write(index, slot, value)
        elif kind == "read":
            entry.storage_reads.add(slot)
        elif kind == "balance":
            entry.balance_changes.add(index)
        elif kind == "nonce":
            entry.nonce_changes.append((index, value))
        elif kind == "code":
            entry.code_changes.append((index, value))
    for entry in accounts.values():
        # A slot both read and written is listed once, among the changes.
        entry.storage_reads -= entry.storage_changes.keys()
    return accounts


def predicted_in_order(
    fork: Fork, spec: BlockSpec, header: Header, folder: Path, held_items: int = HELD_ITEMS
) -> Iterator[tuple[Address, PredictedAccount]]:
    """
    The predicted access list's accounts in address order. A list of up to
    `held_items` facts (a 60M block's) is gathered at once; a larger one, a
    256th at a time: a billion-gas block's list has tens of thousands of
    accounts, so its facts are spilled into `folder` by their address's first
    byte (`buckets`) and each bucket is gathered on its own.
    """
    events = access_events(fork, spec, header)
    first = list(islice(events, held_items + 1))
    if len(first) <= held_items:
        yield from sorted(gathered(first).items())
        return
    for bucket in by_first_byte(chain(first, events), lambda event: event[0][0], folder, held_items):
        yield from sorted(gathered(bucket).items())


Key = TypeVar("Key", bytes, int)
Wanted = TypeVar("Wanted")
Seen = TypeVar("Seen")


class OutOfOrder(Exception):
    """An observed key that does not come after the one before it."""

    def __init__(self, key: bytes | int) -> None:
        super().__init__(key)
        self.key = key


def merged_in_order(
    wanted: Iterable[tuple[Key, Wanted]], seen: Iterable[tuple[Key, Seen]]
) -> Iterator[tuple[Key, tuple[Key, Wanted] | None, tuple[Key, Seen] | None]]:
    """
    Two lists keyed in ascending order, walked side by side: each key with
    the wanted and the seen entry (None where one has none), so that neither
    list is held. An observed key not above the one before it raises
    `OutOfOrder` when it is reached (EIP-7928 orders accounts, slots and reads).
    """
    wants, haves = iter(wanted), iter(seen)
    want, have = next(wants, None), next(haves, None)
    previous: Key | None = None
    while want is not None or have is not None:
        if have is not None and previous is not None and have[0] <= previous:
            raise OutOfOrder(have[0])
        if have is None or (want is not None and want[0] < have[0]):
            assert want is not None
            yield want[0], want, None
            want = next(wants, None)
            continue
        previous = have[0]
        if want is None or have[0] < want[0]:
            yield have[0], None, have
        else:
            yield have[0], want, have
            want = next(wants, None)
        have = next(haves, None)


def first_difference_in_order(
    predicted: Iterable[tuple[Address, PredictedAccount]], observed: Iterable[AccountChanges]
) -> str | None:
    """
    The first way the observed access list differs from the prediction, in
    one line; both come in address order (as EIP-7928 orders a block's
    list) and are walked side by side, so that neither is held.
    """
    try:
        for address, want, have in merged_in_order(predicted, ((entry.address, entry) for entry in observed)):
            if have is None:
                return f"0x{address.hex()} is missing from the access list"
            if want is None:
                return f"0x{address.hex()} is in the access list but not in the design"
            difference = _account_difference(want[1], have[1])
            if difference:
                return f"0x{address.hex()}: {difference}"
    except OutOfOrder as disorder:
        assert isinstance(disorder.key, bytes)
        return f"0x{disorder.key.hex()} is out of address order in the access list"
    return None


def _account_difference(want: PredictedAccount, have: AccountChanges) -> str | None:
    # Most accounts of a list have no storage on either side (a sender, a created contract): no slot walk.
    if want.storage_changes or want.storage_reads or have.storage_changes or have.storage_reads:
        try:
            difference = _storage_changes_difference(want, have) or _storage_reads_difference(want, have)
        except OutOfOrder as disorder:
            return f"slot {disorder.key:#x} is out of slot order in the access list"
        if difference:
            return difference
    if want.nonce_changes != list(have.nonce_changes):
        return f"nonce changes {_pairs(have.nonce_changes)}, designed {_pairs(want.nonce_changes)}"
    if want.code_changes != list(have.code_changes):
        return (
            f"code changes at {[_tx(i) for i, _ in have.code_changes]}, "
            f"designed at {[_tx(i) for i, _ in want.code_changes]} (or the code differs)"
        )
    have_balances = [index for index, _ in have.balance_changes]
    if sorted(want.balance_changes) != have_balances:
        return f"balance changes at {_indices_of(have_balances)}, designed at {_indices_of(sorted(want.balance_changes))}"
    return None


def _storage_changes_difference(want: PredictedAccount, have: AccountChanges) -> str | None:
    """The first slot whose writes differ (by transaction, or value where designed), walked in slot order."""
    wanted = ((slot, want.storage_changes[slot]) for slot in sorted(want.storage_changes))
    for slot, designed, seen in merged_in_order(wanted, have.storage_changes.items()):
        wanted_changes = designed[1] if designed else []
        actual = seen[1] if seen else []
        if [i for i, _ in wanted_changes] != [i for i, _ in actual]:
            return f"slot {slot:#x} written at {_indices(actual)}, designed at {_indices(wanted_changes)}"
        for (index, value), (_, got) in zip(wanted_changes, actual):
            if value is not None and value != got:
                return f"slot {slot:#x} after transaction {_tx(index)} is {got:#x}, designed {value:#x}"
    return None


def _storage_reads_difference(want: PredictedAccount, have: AccountChanges) -> str | None:
    """The lowest slot read but not designed, else the lowest designed but not read, walked in slot order."""
    missing = None
    wanted = ((slot, None) for slot in sorted(want.storage_reads))
    for slot, designed, read in merged_in_order(wanted, ((slot, None) for slot in have.storage_reads)):
        if designed is None:
            return f"unexpected read of slot {slot:#x}"
        if read is None and missing is None:
            missing = slot
    return None if missing is None else f"missing read of slot {missing:#x}"


def _tx(index: int) -> str:
    """Block access index as a reader thinks of it: system calls, or transaction N (0-based)."""
    return "system call" if index == 0 else str(index - 1)


def _indices(changes: SlotChanges | list[tuple[int, int]]) -> str:
    return _indices_of([index for index, _ in changes])


def _indices_of(indices: list[int]) -> str:
    shown = [_tx(i) for i in indices]
    if len(shown) > 6:
        return f"[{', '.join(shown[:3])}, ... {shown[-1]}] ({len(shown)})"
    return f"[{', '.join(shown)}]"


def _pairs(changes: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> str:
    shown = [f"{_tx(i)}->{v}" for i, v in changes]
    if len(shown) > 4:
        return f"[{', '.join(shown[:2])}, ... {shown[-1]}] ({len(shown)})"
    return f"[{', '.join(shown)}]"
