"""
Storage accesses of the fork's system calls, which every block access list records.

Before its transactions a block stores the parent beacon root (EIP-4788) and
the parent hash (EIP-2935); after them it reads the request queues (EIP-7002,
EIP-7251 and Amsterdam's EIP-8282 contracts). None of this depends on the
workload, but an exact access-list check has to predict it, from the header.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .header import Header
from ..ethereum.forks import Fork, system_contract_code

BEACON_ROOTS_HISTORY = 8191
"""EIP-4788 ring buffer length."""
BLOCK_HASH_HISTORY = 8191
"""EIP-2935 ring buffer length."""
REQUEST_QUEUE_SLOTS = (0, 1, 2, 3)
"""Slots a request contract's post-block call reads when its queue is empty:
excess, count, queue head and queue tail."""
REQUEST_CONTRACTS = ("eip7002", "eip7251", "eip8282_deposit", "eip8282_exit")


@dataclass
class SystemAccess:
    """One system contract's accesses in a block: writes at index 0, reads."""

    writes: dict[int, int] = field(default_factory=dict)
    reads: set[int] = field(default_factory=set)


def system_address(key: str) -> bytes:
    """Address of a system contract by its key in `system_contracts.json`."""
    return bytes.fromhex(system_contract_code()[key][0][2:])


def system_accesses(fork: Fork, header: Header) -> dict[bytes, SystemAccess]:
    """What the fork's system calls of the block with `header` read and write."""
    accesses: dict[bytes, SystemAccess] = {}
    if "eip4788" in fork.system_contracts and header.parent_beacon_block_root is not None:
        accesses[system_address("eip4788")] = beacon_root_access(header)
    if "eip2935" in fork.system_contracts:
        slot = (header.number - 1) % BLOCK_HASH_HISTORY
        accesses[system_address("eip2935")] = SystemAccess(writes={slot: int.from_bytes(header.parent_hash, "big")})
    for key in REQUEST_CONTRACTS:
        if key in fork.system_contracts:
            accesses[system_address(key)] = SystemAccess(reads=set(REQUEST_QUEUE_SLOTS))
    return accesses


def beacon_root_access(header: Header) -> SystemAccess:
    """EIP-4788: timestamp and root stored in the ring buffer; a zero root over an
    empty slot changes nothing, so the access list records it as a read."""
    timestamp_slot = header.timestamp % BEACON_ROOTS_HISTORY
    root_slot = timestamp_slot + BEACON_ROOTS_HISTORY
    root = int.from_bytes(header.parent_beacon_block_root or b"", "big")
    access = SystemAccess(writes={timestamp_slot: header.timestamp})
    if root:
        access.writes[root_slot] = root
    else:
        access.reads.add(root_slot)
    return access
