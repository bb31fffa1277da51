"""
The block access list a block should have, predicted from the workload model.

EIP-7928 records, per account, every storage write with the transaction's
block access index and the value left, the slots only read, and the nonce,
code and balance changes. The generator knows all of them by design except
balance values (fees depend on execution), so balgen predicts the whole list
and the fill compares it, entry by entry, with the one t8n computed: that is
what proves a workload's dependency graph is the one its name promises.
What each transaction touches is its footprint (`balgen.footprint`), so the
prediction and the dependency graph cannot disagree on it. Balance changes
are predicted by index only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .chain.bal import AccountChanges
from .chain.header import Header
from .footprint import Footprint, StateKey, block_footprints
from .forks import Fork
from .system_calls import system_accesses
from .workload import Address, BlockSpec

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


def predicted_access_list(fork: Fork, spec: BlockSpec, header: Header) -> PredictedAccessList:
    """Every account the block with `header` touches, and how, by design: the transactions' footprints."""
    accounts: PredictedAccessList = {}

    def account(address: Address) -> PredictedAccount:
        return accounts.setdefault(address, PredictedAccount())

    for address, access in system_accesses(fork, header).items():
        entry = account(address)
        for slot, value in access.writes.items():
            entry.write(0, slot, value)
        entry.storage_reads |= access.reads
    for index, print_ in enumerate(block_footprints(spec, header.fee_recipient), start=1):
        for key in print_.writes:
            record_write(account(key[0]), index, key, print_)
        for address, item in print_.reads:
            entry = account(address)
            if isinstance(item, int):
                entry.storage_reads.add(item)
    for entry in accounts.values():
        # A slot both read and written is listed once, among the changes.
        entry.storage_reads -= entry.storage_changes.keys()
    return accounts


def record_write(entry: PredictedAccount, index: int, key: StateKey, print_: Footprint) -> None:
    """One written key as the access list records it at block access index `index`."""
    item = key[1]
    if isinstance(item, int):
        entry.write(index, item, print_.value_left(key))  # type: ignore[arg-type]
    elif item == "balance":
        entry.balance_changes.add(index)
    elif item == "nonce":
        entry.nonce_changes.append((index, print_.value_left(key)))  # type: ignore[arg-type]
    else:
        entry.code_changes.append((index, print_.value_left(key)))  # type: ignore[arg-type]


def first_difference(predicted: PredictedAccessList, observed: list[AccountChanges]) -> str | None:
    """The first way the observed access list differs from the prediction, in one line."""
    seen = {entry.address: entry for entry in observed}
    for address in sorted(predicted.keys() | seen.keys()):
        where = f"0x{address.hex()}"
        if address not in seen:
            return f"{where} is missing from the access list"
        if address not in predicted:
            return f"{where} is in the access list but not in the design"
        difference = _account_difference(predicted[address], seen[address])
        if difference:
            return f"{where}: {difference}"
    return None


def _account_difference(want: PredictedAccount, have: AccountChanges) -> str | None:
    for slot in sorted(want.storage_changes.keys() | have.storage_changes.keys()):
        wanted = want.storage_changes.get(slot, [])
        actual = have.storage_changes.get(slot, [])
        if [i for i, _ in wanted] != [i for i, _ in actual]:
            return f"slot {slot:#x} written at {_indices(actual)}, designed at {_indices(wanted)}"
        for (index, value), (_, got) in zip(wanted, actual):
            if value is not None and value != got:
                return f"slot {slot:#x} after transaction {_tx(index)} is {got:#x}, designed {value:#x}"
    if want.storage_reads != set(have.storage_reads):
        extra = sorted(set(have.storage_reads) - want.storage_reads)
        missing = sorted(want.storage_reads - set(have.storage_reads))
        return f"unexpected read of slot {extra[0]:#x}" if extra else f"missing read of slot {missing[0]:#x}"
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
