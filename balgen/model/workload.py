"""
The workload model: everything a benchmark is, as plain immutable data.

A `Workload` is built by a pure generator function and then rendered three
ways (fixtures, replay, spamoor export) without being re-derived. It holds the
pre-state, the setup blocks, the benchmark block and, for every transaction,
the accesses it is designed to make, which is what the fill checks against the
access list the client computes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from itertools import islice
from collections.abc import ItemsView, ValuesView
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence, TypeVar, overload

from ..ethereum.forks import Fork
from .invalid_access_list import InvalidAccessList

Address = bytes
"""A 20-byte account address."""

GWEI = 10**9
ETHER = 10**18


class FillLevel(str, Enum):
    """How a benchmark block's gas is divided into transactions (execution-spec-tests' TxDensity)."""

    MAX = "max"
    HALF = "half"
    GREEDY = "greedy"


class Phase(str, Enum):
    """The `phase` execution-spec-tests writes on each engine payload."""

    SETUP = "setup"
    TESTING = "testing"


class Placement(str, Enum):
    """Where a workload's pre-existing contracts and storage come from."""

    GENESIS = "genesis"
    BLOCKS = "blocks"


class Origin(str, Enum):
    """
    How an account comes to exist, which decides where it is on another chain.

    A fixture's addresses follow from its own keys; on a live chain other
    wallets send the same transactions, so an account that depends on who
    sent what lands elsewhere there, and every mention of it must follow.
    """

    GENESIS = "genesis"
    """Put in the fixture's genesis (its funded senders and deployers): a live chain has its own."""
    DEPLOYED = "deployed"
    """Deployed by a creation transaction of its own, at CREATE(sender, nonce): it moves with the sender."""
    CREATED_BY_CODE = "created-by-code"
    """Created by CREATE or CREATE2 in a contract whose own address is the fixture's: it moves with that contract."""
    SAME_ON_EVERY_CHAIN = "same-on-every-chain"
    """The same on every chain: a predeploy, or what one (or a contract it made) creates with
    CREATE2 from calldata that names nothing chain-specific."""


@dataclass(frozen=True)
class Account:
    """An account in the pre-state."""

    balance: int = 0
    nonce: int = 0
    code: bytes = b""
    storage: Mapping[int, int] = field(default_factory=dict)
    origin: Origin = Origin.GENESIS


class GeneratedAccounts(Protocol):
    """
    Pre-state accounts made on demand rather than held, for pre-states too large
    for memory (a CREATE2 contract set holds up to gigabytes of code).
    """

    def addresses(self) -> Sequence[Address]:
        """Every address of the set, in any order."""
        ...

    def account(self, address: Address) -> Account:
        """The account at `address` (one of `addresses()`), built afresh."""
        ...


@dataclass(frozen=True)
class Sender:
    """A funded externally owned account with its private key."""

    key: bytes
    address: Address


ADDRESS_SIZE = 20


@dataclass(frozen=True)
class AddressReference:
    """An address written into bytes (calldata, init code or runtime code) at `offset`."""

    offset: int
    address: Address

    def holds_in(self, data: bytes) -> bool:
        """`data` has the address at the offset."""
        return data[self.offset : self.offset + ADDRESS_SIZE] == self.address


def checked_references(data: bytes, references: Sequence[AddressReference], where: str) -> None:
    """Every reference names what `data` holds at its offset; a generator bug otherwise."""
    for reference in references:
        if not reference.holds_in(data):
            raise ValueError(f"{where} does not hold 0x{reference.address.hex()} at offset {reference.offset}")


@dataclass(frozen=True)
class TxSpec:
    """
    An unsigned EIP-1559 transaction; `to=None` creates a contract.

    `references` are the addresses its data names (in calldata, or in the
    init code and the runtime code it carries), by offset: the spamoor export
    rewrites those that differ on a live chain, and only those.
    """

    sender: Sender
    nonce: int
    to: Address | None
    data: bytes
    gas_limit: int
    value: int = 0
    max_fee_per_gas: int = GWEI
    max_priority_fee_per_gas: int = 1
    references: tuple[AddressReference, ...] = ()

    def __post_init__(self) -> None:
        checked_references(self.data, self.references, "a transaction's data")


@dataclass(frozen=True)
class TxAccess:
    """
    What one transaction is designed to read and write, beyond its sender.

    `writes` maps (address, slot) to the value left after the transaction, or
    None where only execution can tell. `reads` are slots read and not written.
    `created` maps a contract this transaction creates to its runtime code.
    `touched` are further accounts accessed without storage access. `nonces`
    are nonce changes of accounts other than the sender and the created
    contracts (a contract that runs CREATE). The sender's nonce and balance
    changes follow from the transaction itself. `origins` says how each created
    contract comes to exist, and `code_references` where a created contract's
    code names an address. `reads_fee_recipient` marks a transaction whose code
    asks for the block's fee recipient's balance itself (`BALANCE(COINBASE)`):
    the generator cannot name that address (it is the block's, on a live chain
    the builder's), so the footprint adds it.
    """

    reads: frozenset[tuple[Address, int]] = frozenset()
    writes: Mapping[tuple[Address, int], int | None] = field(default_factory=dict)
    created: Mapping[Address, bytes] = field(default_factory=dict)
    touched: frozenset[Address] = frozenset()
    nonces: Mapping[Address, int] = field(default_factory=dict)
    origins: Mapping[Address, Origin] = field(default_factory=dict)
    code_references: Mapping[Address, tuple[AddressReference, ...]] = field(default_factory=dict)
    reads_fee_recipient: bool = False

    def __post_init__(self) -> None:
        # Sets of addresses: a lazy `created` builds code on lookup, never on iteration.
        created = set(self.created)
        if created != set(self.origins):
            raise ValueError("every created contract needs its origin, and only those")
        if not set(self.code_references) <= created:
            raise ValueError("code references name the code of contracts the transaction creates")
        for address, references in self.code_references.items():
            checked_references(self.created[address], references, f"the code of 0x{address.hex()}")


Item = TypeVar("Item")


class Regenerated(Sequence[Item]):
    """
    A sequence made afresh, by `items()`, each time it is gone through: a
    block's transactions or their designed accesses, which at a billion gas
    are tens of thousands of objects that no pass of a fill needs to keep
    once it is done with them. The generator is deterministic, so every
    pass sees the same items; indexing walks from the start (only error
    messages index a block).
    """

    def __init__(self, length: int, items: Callable[[], Iterator[Item]]) -> None:
        self._length = length
        self._items = items

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[Item]:
        count = 0
        for item in self._items():
            count += 1
            yield item
        if count != self._length:
            raise ValueError(f"a generated sequence of {self._length} items made {count}")

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(self._length))]
        position = index + self._length if index < 0 else index
        if not 0 <= position < self._length:
            raise IndexError(f"index {index} of a generated sequence of {self._length} items")
        return next(islice(self._items(), position, None))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(other) != self._length:
            return False
        return all(mine == theirs for mine, theirs in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Regenerated({self._length} items)"


Key = TypeVar("Key")
Value = TypeVar("Value")


class RegeneratedMapping(Mapping[Key, Value]):
    """
    A mapping made afresh, by `items()`, each time it is walked: the slots a
    setup call writes, which for a billion-gas `prefetch` list are hundreds
    of thousands that a rule makes again faster than memory holds them.
    Walking it (keys, values, items, equality) costs one pass; looking one
    key up walks to it, so its readers walk it instead.
    """

    def __init__(self, length: int, items: Callable[[], Iterator[tuple[Key, Value]]]) -> None:
        self._length = length
        self._items = items

    def walk(self) -> Iterator[tuple[Key, Value]]:
        """Each key with its value, in the rule's order."""
        return iter(Regenerated(self._length, self._items))

    def __iter__(self) -> Iterator[Key]:
        return (key for key, _ in self.walk())

    def items(self) -> ItemsView[Key, Value]:
        return _WalkedItems(self)

    def values(self) -> ValuesView[Value]:
        return _WalkedValues(self)

    def __getitem__(self, key: Key) -> Value:
        for walked, value in self.walk():
            if walked == key:
                return value
        raise KeyError(key)

    def __len__(self) -> int:
        return self._length

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping) or len(other) != len(self):
            return False
        missing = object()
        return all(other.get(key, missing) == value for key, value in self.walk())

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._length} items)"


class _WalkedItems(ItemsView[Key, Value]):
    """`RegeneratedMapping.items()`: one walk, not one lookup per key."""

    _mapping: RegeneratedMapping[Key, Value]

    def __iter__(self) -> Iterator[tuple[Key, Value]]:
        return self._mapping.walk()


class _WalkedValues(ValuesView[Value]):
    """`RegeneratedMapping.values()`: one walk, not one lookup per key."""

    _mapping: RegeneratedMapping[Any, Value]

    def __iter__(self) -> Iterator[Value]:
        return (value for _, value in self._mapping.walk())


@dataclass(frozen=True)
class BlockSpec:
    """
    An ordered block of transactions and the access each is designed to make.

    A benchmark block's two sequences are usually `Regenerated`: its
    generator describes them by count and rule, not as tuples.
    """

    phase: Phase
    txs: Sequence[TxSpec]
    accesses: Sequence[TxAccess]

    def __post_init__(self) -> None:
        if len(self.txs) != len(self.accesses):
            raise ValueError("every transaction needs its designed access")

    @property
    def gas_limit_total(self) -> int:
        """Sum of the transactions' gas limits."""
        return sum(tx.gas_limit for tx in self.txs)


@dataclass(frozen=True)
class Workload:
    """One benchmark: its pre-state, setup blocks and the block it measures."""

    family: str
    fill: FillLevel
    variant: str | None
    gas_benchmark_value: int
    fork: Fork
    pre: Mapping[Address, Account]
    setup_blocks: tuple[BlockSpec, ...]
    benchmark_block: BlockSpec
    parameters: Mapping[str, Any] = field(default_factory=dict)
    """Workload parameters worth recording in the fixture's `_info`."""
    generated_pre: tuple[GeneratedAccounts, ...] = ()
    """Further pre-state accounts, made one at a time when the genesis is written."""
    large_state: bool = False
    """The state before the benchmark block is too large to hold in memory or to copy
    freely (a contract set): it is streamed, gets a pre-alloc group of its own and
    fixtures carry its post-state as a hash."""
    invalid_access_list: InvalidAccessList | None = None
    """The lie an invalid twin of the benchmark block tells, sent (and rejected) before the
    benchmark block itself: only its engine fixtures are written."""

    def pre_accounts(self) -> Iterator[tuple[Address, Account]]:
        """Every pre-state account, by address, generated ones built one at a time."""
        makers: dict[Address, GeneratedAccounts] = {}
        for generated in self.generated_pre:
            for address in generated.addresses():
                makers[address] = generated
        for address in sorted(self.pre.keys() | makers.keys()):
            if address in self.pre:
                if address in makers:
                    raise ValueError(f"0x{address.hex()} is both in the pre-state and generated")
                yield address, self.pre[address]
            else:
                yield address, makers[address].account(address)

    @property
    def name(self) -> str:
        """Fixture name as the benchmark report spells it: `<family>-<fill>[-<variant>]-<gas>M`."""
        return fixture_name(self.family, self.fill, self.variant, self.gas_benchmark_value)

    @property
    def blocks(self) -> tuple[BlockSpec, ...]:
        """Setup blocks followed by the benchmark block."""
        return (*self.setup_blocks, self.benchmark_block)


def fixture_name(family: str, fill: FillLevel, variant: str | None, gas_benchmark_value: int) -> str:
    """The `<family>-<fill>[-<variant>]-<gas>M` name of one workload."""
    parts = [family, fill.value]
    if variant:
        parts.append(variant)
    parts.append(f"{gas_millions(gas_benchmark_value)}M")
    return "-".join(parts)


def gas_millions(gas_benchmark_value: int) -> str:
    """Gas in millions as written in names, exactly: 30000000 -> '30', 1500000 -> '1.5', 1000001 -> '1.000001'."""
    millions, rest = divmod(gas_benchmark_value, 1_000_000)
    return str(millions) if not rest else f"{millions}.{rest:06d}".rstrip("0")


@dataclass(frozen=True)
class WorkloadParams:
    """The knobs every generator takes; the rest is the generator's own."""

    fork: Fork
    gas_benchmark_value: int
    fill: FillLevel
    placement: Placement = Placement.BLOCKS
    variant: str | None = None
    namespace: str = ""
    """Prefixed to the name a generator derives its keys and addresses from: a workload that
    another family builds with this generator (`invalid_bal`) gets accounts of its own."""

    def fixture_name(self, family: str) -> str:
        """The name of `family`'s workload at these parameters (the namespace first, if any)."""
        return self.namespace + fixture_name(family, self.fill, self.variant, self.gas_benchmark_value)


def benchmark_workload(
    family: str,
    params: WorkloadParams,
    pre: Mapping[Address, Account],
    setup_blocks: tuple[BlockSpec, ...],
    txs: Sequence[TxSpec],
    accesses: Sequence[TxAccess],
    *,
    generated_pre: tuple[GeneratedAccounts, ...] = (),
    large_state: bool = False,
    **parameters: Any,
) -> Workload:
    """
    The workload whose benchmark block is `txs` with their designed `accesses`.

    Every generator ends here, so the `_info` parameters always start with the
    same keys (family, fill, variant, gas value, placement, transaction count)
    before the family's own.
    """
    return Workload(
        family=family,
        fill=params.fill,
        variant=params.variant,
        gas_benchmark_value=params.gas_benchmark_value,
        fork=params.fork,
        pre=pre,
        setup_blocks=setup_blocks,
        benchmark_block=BlockSpec(phase=Phase.TESTING, txs=held(txs), accesses=held(accesses)),
        parameters={
            "family": family,
            "fill": params.fill.value,
            "variant": params.variant,
            "gas_benchmark_value": params.gas_benchmark_value,
            "placement": params.placement.value,
            "tx_count": len(txs),
            **parameters,
        },
        generated_pre=generated_pre,
        large_state=large_state,
    )


def held(items: Sequence[Item]) -> Sequence[Item]:
    """A block's sequence as the workload keeps it: a generated one as it is, anything else as a tuple."""
    return items if isinstance(items, Regenerated) else tuple(items)
