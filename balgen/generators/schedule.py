"""
Transaction schedules: how a block's gas is split into transactions.

Follows execution-spec-tests' `TxDensity` for the BAL benchmarks: `max` fits
as many transactions as possible at the minimum useful gas each, `half` uses
half that many with the gas split evenly, `greedy` uses transactions at the
per-transaction cap plus one for the remainder. Unlike execution-spec-tests,
`max` and `half` hand the leftover gas to the transactions instead of leaving it
unused, so every level fills its block.

Where EIP-7934's block size limit admits fewer transactions than a level asks
for (`max` at a gas value of about a billion, if transactions are large), the
level stops at the limit: as many transactions as fit, the gas split among
them, and the workload's `_info` says so (`limited_by`). A gas value that even
cap-sized transactions cannot carry within the limit is refused, naming both
limits.
"""

from __future__ import annotations

from ..plumbing.errors import FillCheckFailed
from ..ethereum.forks import Fork
from ..model.transactions import envelope_size_bound
from ..model.workload import FillLevel, Sender, TxSpec

BLOCK_RLP_ALLOWANCE = 2048
"""Bytes of a block's RLP kept for everything but its transactions (header about 700, list prefixes)."""


def envelope_bytes(fork: Fork, data: bytes, *, create: bool = False) -> int:
    """The most bytes a benchmark transaction carrying `data` adds to a block's RLP."""
    sample = TxSpec(
        sender=Sender(key=bytes(32), address=bytes(20)),
        nonce=2**16,
        to=None if create else bytes(20),
        data=data,
        gas_limit=fork.max_tx_gas_limit or 2**64 - 1,
    )
    size = envelope_size_bound(sample)
    return size + 1 + (size.bit_length() + 7) // 8  # its RLP string prefix in the block's list


def block_tx_capacity(fork: Fork, bytes_per_tx: int, fixed_bytes: int = 0) -> int | None:
    """
    How many scheduled transactions of `bytes_per_tx` fit in one block under
    EIP-7934 beside `fixed_bytes` of other transactions (None: no limit).
    """
    if fork.max_block_rlp_size is None:
        return None
    return (fork.max_block_rlp_size - BLOCK_RLP_ALLOWANCE - fixed_bytes) // bytes_per_tx


def calls_capacity(fork: Fork, data: bytes) -> int | None:
    """How many benchmark calls carrying `data` (or calldata of its size) fit in one block under EIP-7934."""
    return block_tx_capacity(fork, envelope_bytes(fork, data))


def block_size_note(tx_count: int, capacity: int | None) -> dict[str, str]:
    """The `_info` parameter recording that a schedule stopped at the block size limit."""
    if capacity is None or tx_count < capacity:
        return {}
    return {"limited_by": f"EIP-7934 maximum RLP block size: {capacity} transactions fit"}


def tx_schedule(
    gas_benchmark_value: int, min_tx_gas: int, tx_gas_cap: int, fill: FillLevel, max_tx_count: int | None = None
) -> list[int]:
    """Gas limits, in block order, of a block of `gas_benchmark_value` at fill level `fill`,
    with at most `max_tx_count` transactions (the block size limit's `block_tx_capacity`)."""
    if gas_benchmark_value < min_tx_gas:
        raise FillCheckFailed(
            f"gas value {gas_benchmark_value} is below one transaction's minimum gas {min_tx_gas}"
        )
    if min_tx_gas > tx_gas_cap:
        raise ValueError(f"minimum transaction gas {min_tx_gas} exceeds the cap {tx_gas_cap}")
    fewest = -(-gas_benchmark_value // tx_gas_cap)
    if max_tx_count is not None and fewest > max_tx_count:
        raise FillCheckFailed(
            f"gas value {gas_benchmark_value} needs {fewest} transactions at the EIP-7825 cap of {tx_gas_cap} gas, "
            f"but only {max_tx_count} fit in a block under EIP-7934's maximum RLP block size"
        )
    if fill is FillLevel.GREEDY:
        return _greedy(gas_benchmark_value, min_tx_gas, tx_gas_cap)
    count = gas_benchmark_value // min_tx_gas
    if fill is FillLevel.HALF:
        count = max(1, count // 2)
    if max_tx_count is not None:
        count = min(count, max_tx_count)
    # Enough transactions that none exceeds the cap.
    count = max(count, -(-gas_benchmark_value // tx_gas_cap))
    if count > gas_benchmark_value // min_tx_gas:
        # No split of the whole gas value keeps every transaction between the
        # minimum and the cap; cap-sized transactions come closest.
        return _greedy(gas_benchmark_value, min_tx_gas, tx_gas_cap)
    return _even_split(gas_benchmark_value, count)


def _greedy(gas_benchmark_value: int, min_tx_gas: int, tx_gas_cap: int) -> list[int]:
    full, remainder = divmod(gas_benchmark_value, tx_gas_cap)
    schedule = [tx_gas_cap] * full
    if remainder >= min_tx_gas:
        schedule.append(remainder)
    return schedule


def _even_split(gas_benchmark_value: int, count: int) -> list[int]:
    share, extra = divmod(gas_benchmark_value, count)
    return [share + (1 if index < extra else 0) for index in range(count)]


def unit_schedule(
    gas_benchmark_value: int, fixed_gas: int, unit_gas: int, tx_gas_cap: int, fill: FillLevel, max_tx_count: int | None = None
) -> list[int]:
    """
    Units of work per transaction, for contracts told in calldata how many units to do.

    The transaction count is `tx_schedule`'s for the fill level; the units are
    then spread over the transactions so that the block's gas (a fixed cost per
    transaction plus `unit_gas` per unit) comes within one unit of
    `gas_benchmark_value`. Splitting gas evenly instead would strand up to a unit's gas
    in every transaction, which for units as large as a storage write is a
    visible share of a `half` block.
    """
    count = len(tx_schedule(gas_benchmark_value, fixed_gas + unit_gas, tx_gas_cap, fill, max_tx_count))
    most_per_tx = (tx_gas_cap - fixed_gas) // unit_gas
    total = (gas_benchmark_value - count * fixed_gas) // unit_gas
    if fill is FillLevel.GREEDY:
        full, rest = divmod(total, most_per_tx)
        units = [most_per_tx] * min(full, count)
        if len(units) < count and rest:
            units.append(rest)
        return units
    share, extra = divmod(total, count)
    return [share + (1 if index < extra else 0) for index in range(count)]
