"""
Transaction schedules: how a block's gas is split into transactions.

Follows execution-spec-tests' `TxDensity` for the BAL benchmarks: `max` fits
as many transactions as possible at the minimum useful gas each, `half` uses
half that many with the gas split evenly, `greedy` uses transactions at the
per-transaction cap plus one for the remainder. Unlike execution-spec-tests,
`max` and `half` hand the leftover gas to the transactions instead of leaving it
unused, so every level fills its block.
"""

from __future__ import annotations

from ..errors import FillCheckFailed
from ..workload import FillLevel


def tx_schedule(gas_value: int, min_tx_gas: int, tx_gas_cap: int, fill: FillLevel) -> list[int]:
    """Gas limits, in block order, of a block of `gas_value` at fill level `fill`."""
    if gas_value < min_tx_gas:
        raise FillCheckFailed(
            f"gas value {gas_value} is below one transaction's minimum gas {min_tx_gas}"
        )
    if min_tx_gas > tx_gas_cap:
        raise ValueError(f"minimum transaction gas {min_tx_gas} exceeds the cap {tx_gas_cap}")
    if fill is FillLevel.GREEDY:
        return _greedy(gas_value, min_tx_gas, tx_gas_cap)
    count = gas_value // min_tx_gas
    if fill is FillLevel.HALF:
        count = max(1, count // 2)
    # Enough transactions that none exceeds the cap.
    count = max(count, -(-gas_value // tx_gas_cap))
    if count > gas_value // min_tx_gas:
        # No split of the whole gas value keeps every transaction between the
        # minimum and the cap; cap-sized transactions come closest.
        return _greedy(gas_value, min_tx_gas, tx_gas_cap)
    return _even_split(gas_value, count)


def _greedy(gas_value: int, min_tx_gas: int, tx_gas_cap: int) -> list[int]:
    full, remainder = divmod(gas_value, tx_gas_cap)
    schedule = [tx_gas_cap] * full
    if remainder >= min_tx_gas:
        schedule.append(remainder)
    return schedule


def _even_split(gas_value: int, count: int) -> list[int]:
    share, extra = divmod(gas_value, count)
    return [share + (1 if index < extra else 0) for index in range(count)]


def unit_schedule(gas_value: int, fixed_gas: int, unit_gas: int, tx_gas_cap: int, fill: FillLevel) -> list[int]:
    """
    Units of work per transaction, for contracts told in calldata how many units to do.

    The transaction count is `tx_schedule`'s for the fill level; the units are
    then spread over the transactions so that the block's gas (a fixed cost per
    transaction plus `unit_gas` per unit) comes within one unit of
    `gas_value`. Splitting gas evenly instead would strand up to a unit's gas
    in every transaction, which for units as large as a storage write is a
    visible share of a `half` block.
    """
    count = len(tx_schedule(gas_value, fixed_gas + unit_gas, tx_gas_cap, fill))
    most_per_tx = (tx_gas_cap - fixed_gas) // unit_gas
    total = (gas_value - count * fixed_gas) // unit_gas
    if fill is FillLevel.GREEDY:
        full, rest = divmod(total, most_per_tx)
        units = [most_per_tx] * min(full, count)
        if len(units) < count and rest:
            units.append(rest)
        return units
    share, extra = divmod(total, count)
    return [share + (1 if index < extra else 0) for index in range(count)]
