"""
Fill-time checks: the filled blocks behave the way the workload is designed to.

A benchmark is only worth running if its block does what its name promises,
so each fill verifies, from what t8n computed: every transaction succeeded,
the benchmark block used at least 95% of its gas value, and the storage
accesses in the block access list are exactly the ones the generator
designed. The first problem found is reported in one line.
"""

from __future__ import annotations

from typing import Iterable

from .chain.bal import AccountChanges
from .chain.builder import BuiltBlock, BuiltChain
from .errors import FillCheckFailed
from .forks import Fork, system_contract_code
from .workload import Address, BlockSpec, Workload

MIN_GAS_USED_FRACTION = 0.95

SlotWrites = dict[tuple[Address, int], list[tuple[int, int | None]]]


def check_chain(workload: Workload, chain: BuiltChain) -> None:
    """Run every fill-time check on `chain`, raising on the first failure."""
    for spec, block in zip(workload.blocks, chain.blocks):
        check_transactions_succeeded(block, spec)
        if workload.fork.has_block_access_list:
            check_storage_accesses(workload.fork, spec, block.access_list, block.header.number)
    check_gas_used(chain.blocks[-1], workload.gas_benchmark_value)


def check_transactions_succeeded(block: BuiltBlock, spec: BlockSpec) -> None:
    """Every transaction of the block was included and did not fail."""
    if block.t8n.rejected:
        first = block.t8n.rejected[0]
        raise FillCheckFailed(
            f"block {block.header.number}: transaction {first.get('index')} rejected: {first.get('error')}"
        )
    receipts = block.t8n.receipts
    if len(receipts) != len(spec.txs):
        raise FillCheckFailed(
            f"block {block.header.number}: {len(receipts)} receipts for {len(spec.txs)} transactions"
        )
    for index, receipt in enumerate(receipts):
        if int(receipt.get("status", "0x0"), 16) != 1:
            raise FillCheckFailed(
                f"block {block.header.number}: transaction {index} failed "
                f"(gas used {int(receipt['gasUsed'], 16)} of {spec.txs[index].gas_limit})"
            )


def check_gas_used(block: BuiltBlock, gas_value: int) -> None:
    """The benchmark block used at least 95% of the gas value it is named after."""
    if block.header.gas_used < MIN_GAS_USED_FRACTION * gas_value:
        raise FillCheckFailed(
            f"benchmark block used {block.header.gas_used} gas, "
            f"{block.header.gas_used / gas_value:.1%} of the {gas_value} gas value (needs 95%)"
        )


def system_addresses(fork: Fork) -> set[Address]:
    """Addresses of the fork's system contracts, whose accesses are the fork's, not the workload's."""
    code = system_contract_code()
    return {bytes.fromhex(code[key][0][2:]) for key in fork.system_contracts}


def designed_writes(spec: BlockSpec) -> SlotWrites:
    """(address, slot) -> [(block access index, value or None)] as the generator designed them."""
    writes: SlotWrites = {}
    for index, access in enumerate(spec.accesses, start=1):
        for key, value in access.writes.items():
            writes.setdefault(key, []).append((index, value))
    return writes


def designed_reads(spec: BlockSpec) -> set[tuple[Address, int]]:
    """Slots the block reads without any transaction writing them."""
    reads = {key for access in spec.accesses for key in access.reads}
    written = {key for access in spec.accesses for key in access.writes}
    return reads - written


def observed_writes(accounts: Iterable[AccountChanges], ignore: set[Address]) -> SlotWrites:
    """Storage writes in a BAL, outside the ignored accounts."""
    writes: SlotWrites = {}
    for account in accounts:
        if account.address in ignore:
            continue
        for slot, changes in account.storage_changes.items():
            writes[(account.address, slot)] = list(changes)
    return writes


def observed_reads(accounts: Iterable[AccountChanges], ignore: set[Address]) -> set[tuple[Address, int]]:
    """Storage-only reads in a BAL, outside the ignored accounts."""
    return {
        (account.address, slot)
        for account in accounts
        if account.address not in ignore
        for slot in account.storage_reads
    }


def check_storage_accesses(
    fork: Fork, spec: BlockSpec, accounts: list[AccountChanges], block_number: int
) -> None:
    """The BAL's storage writes and reads equal the designed ones (values where designed)."""
    ignore = system_addresses(fork)
    designed = designed_writes(spec)
    observed = observed_writes(accounts, ignore)
    for key in sorted(designed.keys() | observed.keys()):
        want = designed.get(key, [])
        have = observed.get(key, [])
        if [i for i, _ in want] != [i for i, _ in have]:
            raise FillCheckFailed(
                f"block {block_number}: slot {_slot(key)} written by transactions "
                f"{_indices(have)} in the access list, designed {_indices(want)}"
            )
        for (index, value), (_, actual) in zip(want, have):
            if value is not None and value != actual:
                raise FillCheckFailed(
                    f"block {block_number}: slot {_slot(key)} after transaction {index - 1} "
                    f"is {actual:#x} in the access list, designed {value:#x}"
                )
    reads_designed = designed_reads(spec)
    reads_observed = observed_reads(accounts, ignore)
    if reads_designed != reads_observed:
        extra = sorted(reads_observed - reads_designed)
        missing = sorted(reads_designed - reads_observed)
        detail = f"unexpected read of {_slot(extra[0])}" if extra else f"missing read of {_slot(missing[0])}"
        raise FillCheckFailed(f"block {block_number}: storage reads differ from the design: {detail}")


def _slot(key: tuple[Address, int]) -> str:
    return f"{key[1]:#x} of 0x{key[0].hex()}"


def _indices(changes: list[tuple[int, int | None]]) -> str:
    indices = [index - 1 for index, _ in changes]
    if len(indices) > 6:
        return f"[{', '.join(map(str, indices[:3]))}, ... {indices[-1]}] ({len(indices)})"
    return str(indices)
