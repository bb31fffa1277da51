"""
A built chain's blocks on another genesis, by applying their state changes instead of executing them.

The engine_x fixtures run a workload's blocks on the shared pre-alloc group
genesis, which holds every workload's pre-state. When nothing a block's
transactions read differs between the two genesis states (the fill proves
it from the traces and access lists: `checks.genesis_dependence`), they do on
the group genesis exactly what they did on their own one. So, as a client
applying an access list without execution would, each block's post-state is
the state before it with the accounts its transactions changed set to their
values after the same block of the own chain. t8n then runs the block with no
transactions on that state: its system calls (the beacon root, this chain's
parent hash, the request queues) and the state root; the post-state is that
state with the values the system calls' access list records (t8n dumps no
allocation: on a group of tens of thousands of accounts that is a quarter of
its run). The header and access list are the own block's with this chain's
parent hash, state root and system-call entries.
"""

from __future__ import annotations

from itertools import chain
from pathlib import Path
from typing import Any, Iterator

from ..errors import FillCheckFailed
from ..hextypes import data_hex, zero_padded_hex
from ..forks import Fork
from ..keccak import keccak
from .alloc import iter_alloc, write_alloc_entries
from .bal import AccountChanges, access_list_addresses, iter_block_access_list, with_accounts_of
from .builder import BuiltBlock, BuiltChain, block_env
from .header import Header
from .t8n import T8nResult, TransitionTool


def apply_blocks(
    t8n: TransitionTool,
    fork: Fork,
    built: BuiltChain,
    genesis_alloc_path: Path,
    genesis: Header,
    workdir: Path,
    *,
    label: str,
) -> BuiltChain:
    """The blocks of `built` on the genesis `genesis` (its allocation in `genesis_alloc_path`), applied."""
    headers = [genesis]
    blocks: list[BuiltBlock] = []
    alloc_path = genesis_alloc_path
    for index, block in enumerate(built.blocks):
        block_label = f"{label} block {index + 1} (applied)"
        folder = workdir / f"block{index + 1}"
        changed = changed_by_transactions(block)
        applied = folder / "applied.json"
        write_alloc_entries(applied, with_accounts_from(alloc_path, block.t8n.alloc_path, changed))
        env = block_env(fork, headers[-1], headers)
        t8n_before = t8n.busy_seconds
        system_only = t8n.transition_raw(fork.name, applied, env, (), folder, label=block_label, write_alloc=False)
        requests_hash = block.header.requests_hash
        if system_only.result.get("requestsHash") != (None if requests_hash is None else data_hex(requests_hash)):
            raise FillCheckFailed(f"{block_label}: the system calls' requests differ from the executed block's")
        access_list, system_access_list = block.block_access_list, system_only.block_access_list
        if access_list is None or system_access_list is None:
            raise FillCheckFailed(f"{block_label}: blocks without access lists are executed, not applied")
        check_system_entries_are_not_transactions(changed, system_access_list, block_label)
        access_list = with_accounts_of(access_list, system_access_list)
        post = folder / "post.json"
        write_alloc_entries(post, with_access_list_values(applied, system_access_list))
        header = block.header.with_values(
            parent_hash=headers[-1].hash,
            state_root=system_only.state_root,
            block_access_list_hash=keccak(access_list),
        )
        blocks.append(
            BuiltBlock(
                header=header,
                phase=block.phase,
                txs=block.txs,
                requests=block.requests,
                block_access_list=access_list,
                t8n=T8nResult(result=system_only.result, alloc_path=post),
                t8n_seconds=t8n.busy_seconds - t8n_before,
            )
        )
        headers.append(header)
        alloc_path = post
    return BuiltChain(genesis=genesis, blocks=tuple(blocks), genesis_alloc_path=genesis_alloc_path)


def changed_by_transactions(block: BuiltBlock) -> set[str]:
    """The accounts (lower-case 0x addresses) the block's access list records a transaction changing."""
    transactions = range(1, len(block.txs) + 1)
    return {
        "0x" + entry.address.hex() for entry in block.access_list_accounts() if _changed_at(entry, transactions)
    }


def _changed_at(entry: AccountChanges, indices: range) -> bool:
    """Whether the access list entry records a change at one of the block access `indices`."""
    changes = chain(*entry.storage_changes.values(), entry.balance_changes, entry.nonce_changes, entry.code_changes)
    return any(index in indices for index, _ in changes)


def with_accounts_from(base_path: Path, source_path: Path, addresses: set[str]) -> Iterator[tuple[str, Any]]:
    """
    The allocation in `base_path` with the accounts `addresses` as the allocation
    in `source_path` has them (absent there: absent here), one account at a time.
    """
    for address, account in iter_alloc(base_path):
        if address.lower() not in addresses:
            yield address, account
    for address, account in iter_alloc(source_path):
        if address.lower() in addresses:
            yield address, account


def with_access_list_values(alloc_path: Path, access_list: bytes) -> Iterator[tuple[str, Any]]:
    """The allocation in `alloc_path` with the last value the access list records for each key it changes."""
    entries = {"0x" + entry.address.hex(): entry for entry in iter_block_access_list(access_list)}
    for address, account in iter_alloc(alloc_path):
        entry = entries.pop(address.lower(), None)
        yield address, account if entry is None else account_with_changes(account, entry)
    for address, entry in entries.items():
        yield address, account_with_changes({}, entry)


def account_with_changes(account: dict[str, Any], entry: AccountChanges) -> dict[str, Any]:
    """An account (alloc JSON) after the changes of its access-list entry: each key's change with the highest index."""
    storage = {int(slot, 16): value for slot, value in (account.get("storage") or {}).items()}
    for slot, changes in entry.storage_changes.items():
        value = max(changes)[1]
        if value:
            storage[slot] = zero_padded_hex(value)
        else:
            storage.pop(slot, None)
    changed = {
        "nonce": zero_padded_hex(max(entry.nonce_changes)[1]) if entry.nonce_changes else account.get("nonce", "0x00"),
        "balance": zero_padded_hex(max(entry.balance_changes)[1]) if entry.balance_changes else account.get("balance", "0x00"),
        "code": data_hex(max(entry.code_changes)[1]) if entry.code_changes else account.get("code", "0x"),
        "storage": {zero_padded_hex(slot): value for slot, value in sorted(storage.items())},
    }
    return changed


def check_system_entries_are_not_transactions(changed: set[str], system_access_list: bytes, label: str) -> None:
    """No account the system calls access is one the block's transactions `changed`: their entries are the system calls' alone."""
    for address in access_list_addresses(system_access_list):
        if "0x" + address.hex() in changed:
            raise FillCheckFailed(f"{label}: a transaction changes system contract 0x{address.hex()}")
