"""
One replay-eest payload per dependency group, and the wallet run each transaction joins.

spamoor's replay-eest (`scenarios/replay-eest/replayeest.go` at 43cad30)
gives a payload fresh wallets: `deployer`, then `sender[1]`, ... It sends all
deployer transactions first, then each run of consecutive transactions of
one sender; within a run the transactions are pipelined (consecutive nonces,
so their order holds and they may share a block), and before the next run it
waits, but only for the first receipt of the run (its wait is a `select`
without a loop). `$contract[N]` is `CREATE(deployer, nonce at start + N - 1)`,
counting the deployer's creations only, so they must come before any call
the deployer sends. Hence two layouts, both keeping the fixture's order:

- `SETUP_THEN_BENCHMARK`: the group's set-up is one creation; the deployer
  sends it alone, which spamoor awaits in full, and `sender[1]` sends the rest
  as one run. The cross-sender step costs a block, as the fixture's set-up
  block boundary does.
- `ONE_RUN`: anything else (a set-up of several transactions, creations in
  the benchmark block, no creation): the deployer sends the whole group as one
  run, so only nonce order, which no wait can break, orders it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from ..ethereum.forks import TX_GAS_LIMIT_CAP
from ..model.workload import Address, Phase
from ..model.keys import create_address
from .addresses import Ownership, owned_references
from .chain_order import OrderedTx
from .unexportable import UnexportableWorkload

DEPLOYER = "deployer"
FIRST_SENDER = "sender[1]"
TX_TYPE = 2
"""Every balgen transaction is EIP-1559; replay-eest builds type 2 from its spammer's fees."""


class Layout(str, Enum):
    """How a dependency group's transactions are spread over a payload's wallets."""

    SETUP_THEN_BENCHMARK = "setup-then-benchmark"
    ONE_RUN = "one-run"


@dataclass(frozen=True)
class PayloadTx:
    """One replay-eest transaction, addresses already replaced by placeholders."""

    origin: OrderedTx
    sender: str
    to: str | None
    data: str
    gas: int
    value: int


@dataclass(frozen=True)
class GroupPayload:
    """A dependency group as one replay-eest payload."""

    name: str
    layout: Layout
    txs: tuple[PayloadTx, ...]

    @property
    def wallets(self) -> int:
        """Wallets spamoor locks for it: the deployer and every `sender[N]` used."""
        return 1 + len({tx.sender for tx in self.txs if tx.sender != DEPLOYER})

    @property
    def setup_txs(self) -> tuple[PayloadTx, ...]:
        return tuple(tx for tx in self.txs if tx.origin.phase is Phase.SETUP)


def layout_of(group: Sequence[OrderedTx]) -> Layout:
    """SETUP_THEN_BENCHMARK when the set-up is exactly one creation and the benchmark creates nothing."""
    setup = [ordered for ordered in group if ordered.phase is Phase.SETUP]
    benchmark = [ordered for ordered in group if ordered.phase is not Phase.SETUP]
    if len(setup) == 1 and setup[0].creates and benchmark and not any(o.creates for o in benchmark):
        return Layout.SETUP_THEN_BENCHMARK
    return Layout.ONE_RUN


def sender_of(ordered: OrderedTx, layout: Layout) -> str:
    """The payload wallet that sends `ordered` under `layout`."""
    if layout is Layout.ONE_RUN or ordered.phase is Phase.SETUP:
        return DEPLOYER
    return FIRST_SENDER


def contract_numbers(workload_name: str, group: Sequence[OrderedTx]) -> dict[Address, int]:
    """
    The `$contract[N]` of every contract the group's deployer creates.

    replay-eest numbers the deployer's creations from its starting nonce, so a
    creation after one of its calls would get another contract's address.
    """
    numbers: dict[Address, int] = {}
    first_call: OrderedTx | None = None
    for ordered in group:
        if not ordered.creates:
            first_call = first_call or ordered
            continue
        if first_call is not None:
            raise UnexportableWorkload(
                f"{workload_name}: {ordered.label} creates a contract after {first_call.label} in the same "
                "dependency group; replay-eest numbers $contract[N] only over creations sent before any call"
            )
        numbers[create_address(ordered.tx.sender.address, ordered.tx.nonce)] = len(numbers) + 1
    return numbers


class PlaceholderNames:
    """How one payload names the addresses its transactions mention."""

    def __init__(self, workload_name: str, owned: Ownership, numbers: dict[Address, int]) -> None:
        self.workload_name = workload_name
        self.owned = owned
        self.candidates = owned.owned
        self.numbers = numbers

    def placeholder(self, address: Address, where: OrderedTx) -> str:
        """`$contract[N]` for a contract the payload deploys; anything else owned cannot be named."""
        if address in self.numbers:
            return f"$contract[{self.numbers[address]}]"
        raise UnexportableWorkload(
            f"{self.workload_name}: {where.label} names 0x{address.hex()}, {self.owned.describe(address)}, "
            "which no spamoor placeholder of its payload resolves to"
        )

    def recipient(self, ordered: OrderedTx) -> str | None:
        """The `to` field: None for a creation, a placeholder for an owned contract, else literal."""
        to = ordered.tx.to
        if to is None:
            return None
        return self.placeholder(to, ordered) if to in self.candidates else f"0x{to.hex()}"

    def data(self, ordered: OrderedTx) -> str:
        """The `data` field: hex, with every owned address inside replaced by its placeholder."""
        data = ordered.tx.data
        pieces = ["0x"]
        start = 0
        for reference in owned_references(ordered, self.candidates):
            if reference.offset < start:
                raise ValueError(f"{self.workload_name}: {ordered.label} records overlapping address references")
            pieces += [data[start : reference.offset].hex(), self.placeholder(reference.address, ordered)]
            start = reference.offset + len(reference.address)
        pieces.append(data[start:].hex())
        return "".join(pieces)


def checked_gas(workload_name: str, ordered: OrderedTx) -> int:
    """The transaction's gas limit, which must be within EIP-7825's cap on any devnet."""
    gas = ordered.tx.gas_limit
    if gas > TX_GAS_LIMIT_CAP:
        raise UnexportableWorkload(
            f"{workload_name}: {ordered.label} has gas limit {gas}, above the 2^24 ({TX_GAS_LIMIT_CAP}) a "
            "spamoor transaction may carry"
        )
    return gas


def group_payload(workload_name: str, group_index: int, group: Sequence[OrderedTx], owned: Ownership) -> GroupPayload:
    """The replay-eest payload that sends `group` in the fixture's order."""
    layout = layout_of(group)
    names = PlaceholderNames(workload_name, owned, contract_numbers(workload_name, group))
    txs = tuple(
        PayloadTx(
            origin=ordered,
            sender=sender_of(ordered, layout),
            to=names.recipient(ordered),
            data=names.data(ordered),
            gas=checked_gas(workload_name, ordered),
            value=ordered.tx.value,
        )
        for ordered in group
    )
    return GroupPayload(f"{workload_name}/group-{group_index}", layout, txs)
