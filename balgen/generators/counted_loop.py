"""
Transactions that run a contract's loop a number of times given in their calldata.

`state_root` and `prefetch` do counted units of storage work (a write, a
cold read) rather than burning gas until a reserve, because their designed
access set (which slots) must follow from the design alone. Each transaction
therefore gets exactly the gas its units cost, and the units are spread so
the block lands within one unit of its gas value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..ethereum.forks import Fork
from ..model.workload import FillLevel
from .schedule import calls_capacity, unit_schedule


@dataclass(frozen=True)
class CountedLoopGas:
    """Execution gas of a counted loop: once before, per unit, once after."""

    prologue: int
    iteration: int
    exit: int

    def execution_gas(self, units: int) -> int:
        return self.prologue + units * self.iteration + self.exit


@dataclass(frozen=True)
class CountedTx:
    """One benchmark transaction of a counted-loop workload."""

    units: int
    data: bytes
    gas_limit: int


def counted_transactions(
    fork: Fork,
    gas_benchmark_value: int,
    fill: FillLevel,
    loop: CountedLoopGas,
    calldata: Callable[[int, int, int], bytes],
) -> list[CountedTx]:
    """
    The block's transactions: units per transaction by fill level, exact gas each.

    `calldata(index, units, units_before)` encodes a transaction's call; the
    schedule prices every transaction's calldata like the first one's, and
    each transaction's gas limit is then its own exact cost.
    """
    fixed = fork.intrinsic_gas(calldata(0, 1, 0)) + loop.prologue + loop.exit
    capacity = counted_capacity(fork, calldata)
    schedule = unit_schedule(gas_benchmark_value, fixed, loop.iteration, fork.tx_gas_cap(gas_benchmark_value), fill, capacity)
    txs = []
    done = 0
    for index, units in enumerate(schedule):
        data = calldata(index, units, done)
        txs.append(CountedTx(units, data, fork.intrinsic_gas(data) + loop.execution_gas(units)))
        done += units
    return txs


def counted_capacity(fork: Fork, calldata: Callable[[int, int, int], bytes]) -> int | None:
    """How many counted transactions fit in a block under EIP-7934 (their calldata is fixed-size words)."""
    return calls_capacity(fork, calldata(0, 1, 0))


def word(value: int) -> bytes:
    """A 32-byte big-endian calldata word."""
    return value.to_bytes(32, "big")
