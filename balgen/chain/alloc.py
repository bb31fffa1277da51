"""
Allocations (address -> account) in the JSON both t8n and fixtures use.

A genesis allocation is the fork's system contracts plus the workload's
pre-state. Allocations go to and from files one account at a time (ijson
reads them back), because t8n reads and writes files and a contract set's
allocation is gigabytes: no more than one account (or, sorting t8n's output,
one 256th of the accounts) is ever held here.
"""

from __future__ import annotations

import heapq
import json
import shutil
from pathlib import Path
from typing import Any, Container, Iterable, Iterator, Mapping

import ijson

from ..hextypes import data_hex, zero_padded_hex
from ..forks import Fork, system_contract_code
from ..workload import Account, Address
from .buckets import by_first_byte

AllocJson = dict[str, dict[str, Any]]

COMPACT_JSON = json.JSONEncoder(separators=(",", ":"))
"""One account per line; made once rather than per account, as `json.dumps` with separators does."""


def account_json(account: Account) -> dict[str, Any]:
    """One account as execution-spec-tests writes it in `pre`."""
    return {
        "nonce": zero_padded_hex(account.nonce),
        "balance": zero_padded_hex(account.balance),
        "code": data_hex(account.code),
        "storage": {
            zero_padded_hex(slot): zero_padded_hex(value)
            for slot, value in sorted(account.storage.items())
            if value != 0
        },
    }


def system_accounts(fork: Fork) -> dict[Address, Account]:
    """The system contracts `fork`'s genesis must hold."""
    code = system_contract_code()
    return {
        bytes.fromhex(code[key][0][2:]): Account(nonce=1, code=bytes.fromhex(code[key][1][2:]))
        for key in fork.system_contracts
    }


def system_addresses(fork: Fork) -> frozenset[str]:
    """The addresses (lower-case 0x) of the system contracts `fork`'s genesis must hold."""
    return frozenset(data_hex(address) for address in system_accounts(fork))


def genesis_accounts(fork: Fork, pres: Iterable[Mapping[Address, Account]]) -> dict[Address, Account]:
    """System contracts plus every given pre-state; a clash between two is an error."""
    merged: dict[Address, Account] = dict(system_accounts(fork))
    for pre in pres:
        for address, account in pre.items():
            if address in merged and merged[address] != account:
                raise ValueError(f"two workloads place different accounts at 0x{address.hex()}")
            merged[address] = account
    return merged


def alloc_json(accounts: Mapping[Address, Account]) -> AllocJson:
    """Accounts as alloc JSON, sorted by address for byte-identical output."""
    return {data_hex(address): account_json(accounts[address]) for address in sorted(accounts)}


def write_alloc(path: Path, alloc: AllocJson) -> None:
    """Write alloc JSON for t8n."""
    write_alloc_entries(path, alloc.items())


def genesis_entries(fork: Fork, accounts: Iterable[tuple[Address, Account]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The system contracts merged into `accounts` (sorted by address), as alloc JSON entries."""
    system = sorted(system_accounts(fork).items())
    previous: Address | None = None
    for address, account in heapq.merge(system, accounts, key=lambda entry: entry[0]):
        if address == previous:
            raise ValueError(f"0x{address.hex()} is placed twice (a system contract?)")
        previous = address
        yield data_hex(address), account_json(account)


def write_alloc_entries(path: Path, entries: Iterable[tuple[str, Mapping[str, Any]]]) -> int:
    """Write alloc JSON one account per line, as entries come; returns how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w") as out:
        out.write("{")
        for address, account in entries:
            out.write(("\n" if count == 0 else ",\n") + json.dumps(address) + ":" + COMPACT_JSON.encode(account))
            count += 1
        out.write("\n}\n")
    return count


def iter_alloc(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The accounts of an alloc file, in file order, one at a time."""
    with path.open("rb") as stream:
        yield from ijson.kvitems(stream, "")


def iter_alloc_among(path: Path, addresses: Container[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """
    The accounts at `addresses` (lower-case 0x) of an allocation balgen wrote
    (`write_alloc_entries`: one account per line), in file order.

    The other lines are skipped unparsed: a fixture compares a few thousand
    accounts of a shared genesis of tens of thousands, and parsing them all
    took ten times as long as looking at them.
    """
    with path.open() as lines:
        for number, line in enumerate(lines, start=1):
            if line in ("{\n", "}\n"):
                continue
            if line[0] != '"' or line[43:45] != '":':
                raise ValueError(f"{path}:{number}: not one account per line as write_alloc_entries writes it")
            address = line[1:43]
            if address in addresses:
                yield address, json.loads(line[45:].rstrip(",\n"))


def read_alloc(path: Path, only: Iterable[str] | None = None) -> AllocJson:
    """
    Read an alloc (t8n's or balgen's), normalised to the fixture spelling.

    `only` (lower-case 0x addresses) limits it to those accounts, and only
    those are held: a contract set's alloc is gigabytes of code.
    """
    wanted = None if only is None else set(only)
    raw = {
        address.lower(): normalised_account(entry)
        for address, entry in iter_alloc(path)
        if wanted is None or address.lower() in wanted
    }
    return {address: raw[address] for address in sorted(raw)}


SORT_BUCKETS_FOLDER = "buckets"


def write_sorted_alloc(path: Path, destination: Path, only: Container[str] | None = None) -> Path:
    """
    Write t8n's alloc in `path` to `destination` as `read_alloc` reads it
    (normalised, sorted by address, only the accounts in `only`), holding one
    256th of it at a time (`buckets`): t8n writes its accounts in no
    particular order, a fixture lists them sorted.
    """
    buckets_folder = destination.parent / f"{destination.name}.{SORT_BUCKETS_FOLDER}"

    def wanted() -> Iterator[tuple[str, dict[str, Any]]]:
        for address, entry in iter_alloc(path):
            if only is None or address.lower() in only:
                yield address.lower(), normalised_account(entry)

    def entries() -> Iterator[tuple[str, dict[str, Any]]]:
        for bucket in by_first_byte(wanted(), lambda entry: int(entry[0][2:4], 16), buckets_folder):
            yield from sorted(bucket, key=lambda entry: entry[0])

    write_alloc_entries(destination, entries())
    shutil.rmtree(buckets_folder, ignore_errors=True)  # made only when it had to spill
    return destination


def normalised_account(entry: Mapping[str, Any]) -> dict[str, Any]:
    """t8n's account JSON in the zero-padded spelling fixtures use."""
    storage = entry.get("storage") or {}
    return {
        "nonce": zero_padded_hex(int(entry.get("nonce", "0x0"), 16)),
        "balance": zero_padded_hex(int(entry.get("balance", "0x0"), 16)),
        "code": entry.get("code", "0x") or "0x",
        "storage": {
            zero_padded_hex(int(k, 16)): zero_padded_hex(int(v, 16))
            for k, v in sorted(storage.items(), key=lambda kv: int(kv[0], 16))
            if int(v, 16) != 0
        },
    }


AllocEntries = Iterable[tuple[str, dict[str, Any]]]
"""An allocation's accounts (address -> account JSON), sorted by lower-case address."""


def state_diff(pre: AllocEntries, post: AllocEntries, candidates: Container[str] | None) -> Iterator[tuple[str, Any]]:
    """
    Accounts changed, created or (as null) deleted going from `pre` to `post`,
    by address, walking both sorted allocations side by side so neither is held.

    Only `candidates` can differ: the accounts the chain's access lists name
    (every state change is in one), or on forks without them (None) every account.
    """
    befores, afters = iter(pre), iter(post)
    before, after = next(befores, None), next(afters, None)
    while before is not None or after is not None:
        address = min(entry[0] for entry in (before, after) if entry is not None)
        old = before[1] if before is not None and before[0] == address else None
        new = after[1] if after is not None and after[0] == address else None
        if old != new and (candidates is None or address in candidates):
            yield address, new
        if old is not None:
            before = next(befores, None)
        if new is not None:
            after = next(afters, None)
