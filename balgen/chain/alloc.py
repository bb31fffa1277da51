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
from functools import lru_cache
from itertools import chain, islice
from pathlib import Path
from typing import Any, Collection, Container, Iterable, Iterator, Mapping

import ijson
import orjson

from ..plumbing.streamed_json import StreamedObject
from ..ethereum.hextypes import data_hex, zero_padded_hex
from ..ethereum.forks import Fork, system_contract_code
from ..model.workload import Account, Address
from .buckets import by_first_byte
from .packed_storage import PackedStorage

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
    return {address: Account(nonce=1, code=code) for address, code in _system_contracts(fork.system_contracts).items()}


def system_addresses(fork: Fork) -> frozenset[str]:
    """The addresses (lower-case 0x) of the system contracts `fork`'s genesis must hold."""
    return frozenset(data_hex(address) for address in _system_contracts(fork.system_contracts))


def system_called_addresses(fork: Fork) -> frozenset[str]:
    """The addresses (lower-case 0x) of the contracts `fork`'s system calls run: besides BLOCKHASH, the
    only state a block reads that its chain's history writes, and not its genesis alone."""
    return frozenset(data_hex(address) for address in _system_contracts(fork.system_called_contracts))


def _system_contracts(keys: Iterable[str]) -> dict[Address, bytes]:
    """The code of the system contracts of `keys`, by address."""
    code = system_contract_code()
    return {bytes.fromhex(code[key][0][2:]): bytes.fromhex(code[key][1][2:]) for key in keys}


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


def write_alloc_entries(path: Path, entries: Iterable[tuple[str, Mapping[str, Any] | None]]) -> int:
    """Write alloc JSON one account per line, as entries come; returns how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w") as out:
        out.write("{")
        for address, account in entries:
            out.write(("\n" if count == 0 else ",\n") + json.dumps(address) + ":")
            for text in account_text(account):
                out.write(text)
            count += 1
        out.write("\n}\n")
    return count


PACKED_TEXT_SLOTS = 4096
"""Slots of a packed storage written to an alloc file at a time."""
_SPLICE = "__balgen_packed_storage__"


def account_text(account: Mapping[str, Any] | None) -> Iterator[str]:
    """
    An account's compact JSON (null for a deleted one), in pieces: a packed
    storage (`PackedStorage`) is written a few thousand slots at a time,
    never as one string.
    """
    storage = None if account is None else account.get("storage")
    if not isinstance(storage, PackedStorage):
        yield _compact_text(account)
        return
    before, after = COMPACT_JSON.encode({**account, "storage": _SPLICE}).split(json.dumps(_SPLICE))
    yield before + "{"
    slots = iter(storage.items())
    separator = ""
    while batch := list(islice(slots, PACKED_TEXT_SLOTS)):
        # Keys and values are zero-padded hex: their JSON is their text in quotes.
        yield separator + ",".join(f'"{key}":"{value}"' for key, value in batch)
        separator = ","
    yield "}" + after


def _compact_text(value: Any) -> str:
    """
    `value`'s compact JSON as `COMPACT_JSON` writes it: by orjson, five times
    faster (a contract set's accounts are written several times per fill),
    where that gives the same text; an integer past 64 bits or a string with
    a character json escapes and orjson does not (past ASCII, or DEL: a
    fixture's account read back) by `COMPACT_JSON`, which also says what it
    cannot write. A float, which no allocation holds (quantities are hex
    strings), is spelled orjson's way.
    """
    try:
        text = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return COMPACT_JSON.encode(value)
    return text.decode() if text.isascii() and b"\x7f" not in text else COMPACT_JSON.encode(value)


HELD_ALLOC_BYTES = 4 << 20
"""An alloc file up to this size (a 60M block's is about 1 MB) is parsed whole, by orjson,
several times faster than event by event; a larger one (a contract set's, gigabytes at 1000M) is
streamed, one account at a time."""


def _held_alloc(path: Path, held_bytes: int) -> dict[str, Any] | None:
    """The alloc in `path` parsed whole if it has at most `held_bytes`, else None."""
    if path.stat().st_size > held_bytes:
        return None
    # By orjson, twice as fast: t8n and balgen write every quantity of an alloc as a hex string (orjson would
    # read an integer past 64 bits as a float).
    alloc = orjson.loads(path.read_bytes())
    if not isinstance(alloc, dict):
        raise ValueError(f"{path}: not an allocation (a JSON {type(alloc).__name__}, not an object)")
    return alloc


def iter_alloc(path: Path, held_bytes: int = HELD_ALLOC_BYTES) -> Iterator[tuple[str, dict[str, Any]]]:
    """The accounts of an alloc file, in file order, one at a time (parsed whole up to `held_bytes`)."""
    held = _held_alloc(path, held_bytes)
    if held is not None:
        yield from held.items()
        return
    with path.open("rb") as stream:
        yield from ijson.kvitems(stream, "")


PACKED_SLOTS = 4096
"""A storage of more slots than this is read packed (`PackedStorage`, 64 bytes a slot) rather than
as a dict of hex strings (about 270 bytes a slot): a billion-gas prefetch list has 465,000."""


def iter_alloc_packing(
    path: Path, packed_from: int = PACKED_SLOTS, held_bytes: int = HELD_ALLOC_BYTES
) -> Iterator[tuple[str, dict[str, Any]]]:
    """
    The accounts of an alloc file as `iter_alloc` gives them, except that a
    storage of more than `packed_from` slots is packed as it is read (a
    `PackedStorage`, spelled as fixtures spell slots): the file is parsed
    event by event, so that such an account is never held as a dict (a
    file of at most `held_bytes` is parsed whole, its few large storages packed after).
    """
    held = _held_alloc(path, held_bytes)
    if held is not None:
        for address, account in held.items():
            storage = account.get("storage")
            if storage and len(storage) > packed_from:
                account = {**account, "storage": _packed(storage.items())}
            yield address, account
        return
    with path.open("rb") as stream:
        events = ijson.basic_parse(stream)
        _expect(events, "start_map", path)
        for event, address in events:
            if event == "end_map":
                return
            yield address, _packing_account(events, packed_from, path)


def _expect(events: Iterator[tuple[str, Any]], wanted: str, path: Path) -> None:
    event, _ = next(events)
    if event != wanted:
        raise ValueError(f"{path}: not an allocation ({event} where {wanted} belongs)")


_OPENING = frozenset({"start_map", "start_array"})
_CLOSING = frozenset({"end_map", "end_array"})


def _packing_account(events: Iterator[tuple[str, Any]], packed_from: int, path: Path) -> dict[str, Any]:
    """The account whose members `events` give next, its storage packed if large."""
    _expect(events, "start_map", path)
    account: dict[str, Any] = {}
    for event, key in events:
        if event == "end_map":
            break
        account[key] = _packing_storage(events, packed_from) if key == "storage" else _built_value(events)
    return account


def _built_value(events: Iterator[tuple[str, Any]]) -> Any:
    """The JSON value `events` give next, built as `ijson` builds it."""
    event, value = next(events)
    if event not in _OPENING:
        return value
    builder = ijson.ObjectBuilder()
    builder.event(event, value)
    depth = 1
    for event, value in events:
        builder.event(event, value)
        depth += (event in _OPENING) - (event in _CLOSING)
        if depth == 0:
            break
    return builder.value


def _packing_storage(events: Iterator[tuple[str, Any]], packed_from: int) -> dict[str, str] | PackedStorage | None:
    """A storage object from `events`: as a dict up to `packed_from` slots, then packed."""
    event, _ = next(events)
    if event == "null":
        return None
    held: dict[str, str] = {}
    slots = _storage_slots(events)
    for slot, value in slots:
        held[slot] = value
        if len(held) > packed_from:
            return _packed(chain(held.items(), slots))
    return held


def _storage_slots(events: Iterator[tuple[str, Any]]) -> Iterator[tuple[str, str]]:
    """A storage object's (slot, value) members from `events`, up to its end."""
    for event, slot in events:
        if event == "end_map":
            return
        _, value = next(events)
        yield slot, value


def _packed(slots: Iterable[tuple[str, str]]) -> PackedStorage:
    """Hex slots and values, packed."""
    return PackedStorage.of((int(slot, 16), int(value, 16)) for slot, value in slots)


def fixture_alloc(entries: Iterable[tuple[str, dict[str, Any] | None]]) -> Iterator[tuple[str, Any]]:
    """
    Accounts as a fixture writes them, each packed storage streamed: slot
    by slot in key order in the file, in the order of the keys' text in the
    compact form its hash is taken over.
    """
    for address, account in entries:
        storage = None if account is None else account.get("storage")
        if isinstance(storage, PackedStorage):
            account = {
                **account,
                "storage": StreamedObject(
                    lambda storage=storage: iter(storage.items()), floatless=True, sorted_members=storage.json_ordered_items
                ),
            }
        yield address, account


def iter_fixture_alloc(path: Path) -> Iterator[tuple[str, Any]]:
    """The accounts of an alloc file balgen wrote (fixture spelling), as a fixture writes them (`fixture_alloc`)."""
    return fixture_alloc(iter_alloc_packing(path))


def iter_alloc_among(path: Path, addresses: Collection[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """
    The accounts at `addresses` (lower-case 0x) of an allocation balgen wrote
    (`write_alloc_entries`: one account per line), in file order.

    The other lines are skipped unparsed: a fixture compares a few thousand
    accounts of a shared genesis of tens of thousands, and parsing them all
    took ten times as long as looking at them.
    """
    for address, text in iter_alloc_texts_among(path, addresses):
        yield address, json.loads(text)


INDEXED_ALLOC_BYTES = 16 << 20
"""An allocation balgen wrote of at most this size is held as its account texts by address
(`_indexed_alloc`) while it is one of the two last looked in: each fixture of a group looks up a few
thousand accounts of the group's shared genesis, tens of thousands, two or three times, and going
through all its lines each time took 2.6 s in a profile of the default suite. A larger one is gone through."""


def iter_alloc_texts_among(path: Path, addresses: Collection[str]) -> Iterator[tuple[str, str]]:
    """`iter_alloc_among`'s accounts as the JSON text they are written in, unparsed."""
    status = path.stat()
    if status.st_size > INDEXED_ALLOC_BYTES:
        for _, address, text in _account_lines(path):
            if address in addresses:
                yield address, text
        return
    index = _indexed_alloc(path, (status.st_ino, status.st_mtime_ns, status.st_size))
    for _, address, text in sorted(index[address] for address in addresses if address in index):
        yield address, text


@lru_cache(maxsize=2)  # a fixture's own genesis and its group's
def _indexed_alloc(path: Path, version: tuple[int, int, int]) -> dict[str, tuple[int, str, str]]:
    """The account lines of `path` (as it is at `version`: inode, mtime, size) by address, with their line numbers."""
    return {address: (number, address, text) for number, address, text in _account_lines(path)}


def _account_lines(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line number, address, account JSON text) of each account of an allocation balgen wrote."""
    with path.open() as lines:
        for number, line in enumerate(lines, start=1):
            if line in ("{\n", "}\n"):
                continue
            if line[0] != '"' or line[43:45] != '":':
                raise ValueError(f"{path}:{number}: not one account per line as write_alloc_entries writes it")
            yield number, line[1:43], line[45:].rstrip(",\n")


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
        for address, entry in iter_alloc_packing(path):
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
    return {
        "nonce": zero_padded_hex(int(entry.get("nonce", "0x0"), 16)),
        "balance": zero_padded_hex(int(entry.get("balance", "0x0"), 16)),
        "code": entry.get("code", "0x") or "0x",
        "storage": normalised_storage(entry.get("storage") or {}),
    }


def normalised_storage(storage: Mapping[str, str]) -> dict[str, str] | PackedStorage:
    """Storage sorted by slot, in the zero-padded spelling, without zero values (a packed one stays packed)."""
    if isinstance(storage, PackedStorage):
        return storage.without_zeros()
    return {
        zero_padded_hex(int(k, 16)): zero_padded_hex(int(v, 16))
        for k, v in sorted(storage.items(), key=lambda kv: int(kv[0], 16))
        if int(v, 16) != 0
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
