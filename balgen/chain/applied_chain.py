"""
A built chain's blocks on another genesis, by applying their state changes instead of executing them.

The engine_x fixtures run a workload's blocks on the shared pre-alloc group
genesis, which holds every workload's pre-state. When nothing a block's
transactions read differs between the two genesis states (the fill proves
it from the traces and access lists: `checks.genesis_dependence`), they do on
the group genesis exactly what they did on their own one. So, as a client
applying an access list without execution would, each block's post-state is
the state before it with the accounts its transactions changed set to their
values after the same block of the own chain.

The block's system calls (the beacon root, this chain's parent hash, the
request queues) run in t8n, with no transactions, on the system contracts
alone: they read and write nothing else (each run's access list proves it),
so the group's tens of thousands of other accounts need not be loaded. The
state root is the group genesis with every account the chain has changed so
far replaced, from `state_roots` (go-ethereum's trie, loaded once per group).
The header and access list are the own block's with this chain's parent
hash, state root and system-call entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from ..plumbing.errors import FillCheckFailed
from ..ethereum.forks import Fork
from ..ethereum.hextypes import data_hex, zero_padded_hex
from ..ethereum.keccak import keccak
from .alloc import iter_alloc_among, iter_alloc_packing, normalised_account, system_addresses, write_alloc_entries
from .bal import AccountChanges, iter_block_access_list, with_accounts_of
from .builder import BuiltBlock, BuiltChain, block_env
from .header import Header
from .state_roots import StateRoots
from .t8n import T8nResult, TransitionTool

AllocAccount = dict[str, Any]


@dataclass(frozen=True)
class AppliedGenesis:
    """A genesis blocks are applied to: its header, its allocation and trie, and its system contracts as it holds them."""

    header: Header
    alloc_path: Path
    roots: StateRoots
    """`balgen-state-root` over `alloc_path`."""
    system_accounts: Mapping[str, AllocAccount]
    """The genesis's accounts at the fork's system contract addresses (lower-case 0x), those it holds."""

    @classmethod
    def load(cls, fork: Fork, header: Header, alloc_path: Path, roots: StateRoots) -> "AppliedGenesis":
        """Read the system contracts from the genesis allocation, and check the trie's root is the header's
        (this process's trie against the one whose root the group's header was given)."""
        if roots.base_root != header.state_root:
            raise FillCheckFailed(
                f"{alloc_path}: balgen-state-root gives state root 0x{roots.base_root.hex()}, "
                f"its header has 0x{header.state_root.hex()}"
            )
        accounts = dict(iter_alloc_among(alloc_path, system_addresses(fork)))
        return cls(header=header, alloc_path=alloc_path, roots=roots, system_accounts=accounts)


def apply_blocks(
    t8n: TransitionTool,
    fork: Fork,
    built: BuiltChain,
    genesis: AppliedGenesis,
    workdir: Path,
    *,
    label: str,
) -> BuiltChain:
    """
    The blocks of `built` applied on `genesis`. The last block's allocation
    (the chain's post-state) holds only the accounts changed since the
    genesis (the others are the genesis's); an earlier block's holds only the
    accounts that block changed (null: it no longer exists), the question its
    state root answers: nothing reads an applied chain's earlier states.
    """
    headers = [genesis.header]
    blocks: list[BuiltBlock] = []
    changes: dict[str, AllocAccount | None] = {}
    """Every account changed since the genesis, as it is now (None: it no longer exists)."""
    system = system_addresses(fork)
    with genesis.roots.kept() as root_with:
        for index, block in enumerate(built.blocks):
            block_label = f"{label} block {index + 1} (applied)"
            folder = workdir / f"block{index + 1}"
            folder.mkdir(parents=True, exist_ok=True)
            changed = changed_by_transactions(block)
            block_changes = accounts_as_in(block.t8n.alloc_path, changed)
            """The accounts this block changes, as it leaves them (None: it no longer exists)."""
            changes.update(block_changes)
            system_state = {address: changes.get(address, account) for address, account in genesis.system_accounts.items()}
            system_alloc = folder / "system.json"
            write_alloc_entries(system_alloc, present(system_state))
            env = block_env(fork, headers[-1], headers)
            t8n_before = t8n.busy_seconds
            system_only = t8n.transition_raw(fork.name, system_alloc, env, (), folder, label=block_label, write_alloc=False)
            requests_hash = block.header.requests_hash
            if system_only.result.get("requestsHash") != (None if requests_hash is None else data_hex(requests_hash)):
                raise FillCheckFailed(f"{block_label}: the system calls' requests differ from the executed block's")
            access_list, system_access_list = block.block_access_list, system_only.block_access_list
            if access_list is None or system_access_list is None:
                raise FillCheckFailed(f"{block_label}: blocks without access lists are executed, not applied")
            system_entries = list(iter_block_access_list(system_access_list))
            check_system_calls_stay_in_system_contracts(system_entries, system, block_label)
            check_system_entries_are_not_transactions(changed, system_entries, block_label)
            for entry in system_entries:
                address = "0x" + entry.address.hex()
                if entry.changes_state:
                    changes[address] = block_changes[address] = account_with_changes(system_state.get(address) or {}, entry)
            # The trie keeps each block's accounts: it is given only this block's (a gone one as null).
            replacements = folder / "replacements.json"
            write_alloc_entries(replacements, sorted(block_changes.items()))
            state_root = root_with(replacements)
            alloc = replacements
            if index == len(built.blocks) - 1:
                alloc = folder / "post.json"
                write_alloc_entries(alloc, present(changes))
            access_list = with_accounts_of(access_list, system_access_list)
            header = block.header.with_values(
                parent_hash=headers[-1].hash,
                state_root=state_root,
                block_access_list_hash=keccak(access_list),
            )
            blocks.append(
                BuiltBlock(
                    header=header,
                    phase=block.phase,
                    txs=block.txs,
                    requests=block.requests,
                    access_list_source=access_list,
                    t8n=T8nResult(result={**system_only.result, "stateRoot": data_hex(state_root)}, alloc_path=alloc),
                    t8n_seconds=t8n.busy_seconds - t8n_before,
                )
            )
            headers.append(header)
    return BuiltChain(genesis=genesis.header, blocks=tuple(blocks), genesis_alloc_path=genesis.alloc_path, sorted_post=True)


def present(accounts: Mapping[str, AllocAccount | None]) -> Iterator[tuple[str, AllocAccount]]:
    """The accounts that exist, sorted by address."""
    return ((address, account) for address, account in sorted(accounts.items()) if account is not None)


def accounts_as_in(alloc_path: Path, addresses: set[str]) -> dict[str, AllocAccount | None]:
    """
    The accounts `addresses` as the allocation in `alloc_path` has them (None
    where it has none), in the fixture spelling (so the chain's post-state is
    written as fixtures list it), a large storage packed (`iter_alloc_packing`):
    they are kept until the chain is applied.
    """
    found: dict[str, AllocAccount | None] = dict.fromkeys(addresses)
    for address, account in iter_alloc_packing(alloc_path):
        if address.lower() in found:
            found[address.lower()] = normalised_account(account)
    return found


def changed_by_transactions(block: BuiltBlock) -> set[str]:
    """The accounts (lower-case 0x addresses) the block's access list records a transaction changing."""
    transactions = range(1, len(block.txs) + 1)
    return {
        "0x" + entry.address.hex() for entry in block.access_list_accounts() if _changed_at(entry, transactions)
    }


def _changed_at(entry: AccountChanges, indices: range) -> bool:
    """Whether the access list entry records a change at one of the block access `indices`."""
    slot_changes = chain.from_iterable(entry.storage_changes.values())  # one slot decoded at a time
    changes = chain(slot_changes, entry.balance_changes, entry.nonce_changes, entry.code_changes)
    return any(index in indices for index, _ in changes)


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


def check_system_calls_stay_in_system_contracts(entries: Iterable[AccountChanges], system: frozenset[str], label: str) -> None:
    """The system calls accessed only system contracts, so running them on those contracts alone ran them as on the whole state."""
    for entry in entries:
        if "0x" + entry.address.hex() not in system:
            raise FillCheckFailed(f"{label}: the system calls access 0x{entry.address.hex()}, which is not a system contract")


def check_system_entries_are_not_transactions(changed: set[str], entries: Iterable[AccountChanges], label: str) -> None:
    """No account the system calls access is one the block's transactions `changed`: their entries are the system calls' alone."""
    for entry in entries:
        if "0x" + entry.address.hex() in changed:
            raise FillCheckFailed(f"{label}: a transaction changes system contract 0x{entry.address.hex()}")
