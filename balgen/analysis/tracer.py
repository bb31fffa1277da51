"""
Access sets observed by tracing t8n, for any block, ours or not.

go-ethereum's tracers cannot give per-transaction access sets under t8n: one
tracer instance serves the whole block, `prestateTracer` never resets and
crashes in the system calls, `erc7562Tracer`'s frames stack up across
transactions, and a JavaScript tracer's per-opcode `step` crashes in the
pre-transaction system calls and costs tens of times the untraced run. So
balgen brings its own native tracer (`scripts/evm_tracer/`), which
scripts/install-tools.sh compiles into the pinned evm. It skips system calls,
so it runs in the block's real t8n run, and resets after each transaction.
For each transaction it reports the accounts and slots the transaction
touched with their values at its end, and the contracts it created with their
code size:

    {"accounts": {addr: [balance, nonce]}, "storage": {addr: {slot: value}}, "created": {addr: size}}

Touched accounts are the sender and recipient, every call, create and
selfdestruct frame's target, and the operands of BALANCE and EXTCODE*;
touched slots are those of SLOAD and SSTORE, in the storage context of the
frame (the caller's, for DELEGATECALL). "Changed" is decided here: a key is
written when its end value differs from its value before the transaction,
which is the value the last earlier transaction touching it left, or else the
block's pre-state. Code is written when a create succeeded with non-empty
code. EIP-7702 authorizations are not observed.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

from ..chain.packed_storage import PackedStorage
from ..model.workload import Address
from ..model.footprint import StateKey, accounts_keys
from .access import TxAccessSet, access_set

ACCESS_TRACER = "balgenAccessTracer"
"""The tracer's registered name, passed to t8n as `--trace.tracer`."""


def _int(value: Any) -> int:
    """A JSON quantity: an int, or a hex or decimal string."""
    return value if isinstance(value, int) else int(str(value), 0)


def _address(text: str) -> Address:
    return bytes.fromhex(text.lower().removeprefix("0x"))


class PreState:
    """
    Values of state keys in an allocation (alloc JSON, as t8n or fixtures
    spell it; a large storage packed), given whole or one account at a time.

    Each account is held as its balance, its nonce and its storage, nothing
    else: a contract set's allocation is hundreds of thousands of accounts,
    which as parsed JSON took over a hundred MB at a billion gas.
    """

    def __init__(self, alloc: Mapping[str, Mapping[str, Any]] | Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        accounts = alloc.items() if isinstance(alloc, Mapping) else alloc
        self._accounts: dict[Address, tuple[int, int, Any]] = {
            _address(address): (_int(entry.get("balance") or 0), _int(entry.get("nonce") or 0), entry.get("storage"))
            for address, entry in accounts
        }
        self._storage: dict[Address, dict[int, int]] = {}

    def value(self, key: StateKey) -> int:
        """The value of a balance, nonce or storage key; absent means zero."""
        address, item = key
        balance, nonce, storage = self._accounts.get(address) or (0, 0, None)
        if item == "balance":
            return balance
        if item == "nonce":
            return nonce
        if isinstance(item, str):
            return 0
        if isinstance(storage, PackedStorage):  # looked up where it is, not copied into a dict
            return storage.value_of(item)
        if address not in self._storage:
            self._storage[address] = {_int(slot): _int(value) for slot, value in (storage or {}).items()}
        return self._storage[address].get(item, 0)


def touched_addresses(trace: Mapping[str, Any]) -> set[str]:
    """Every account (lower-case 0x address) a transaction's trace shows it touching."""
    return {address.lower() for part in ("accounts", "storage", "created") for address in trace[part]}


def blockhash_reads(trace: Mapping[str, Any]) -> list[int]:
    """The block numbers a transaction asked BLOCKHASH for: an input that is neither state nor its block's header."""
    return [int(number) for number in trace.get("blockhashes") or ()]


def trace_values(trace: Mapping[str, Any]) -> dict[StateKey, int]:
    """The end-of-transaction values of every key a trace reports."""
    values: dict[StateKey, int] = {}
    for address, (balance, nonce) in trace["accounts"].items():
        account = _address(address)
        values[(account, "balance")] = _int(balance)
        values[(account, "nonce")] = _int(nonce)
    for address, slots in trace["storage"].items():
        account = _address(address)  # once per account, not per slot (a prefetch chase reads tens of thousands)
        for slot, value in slots.items():
            values[(account, _int(slot))] = _int(value)
    return values


def traced_access_sets(
    traces: Iterable[Mapping[str, Any]],
    pre: Mapping[str, Mapping[str, Any]] | Iterable[tuple[str, Mapping[str, Any]]],
    coinbase: Address,
) -> Iterator[TxAccessSet]:
    """The access set of each traced transaction, one at a time, `pre` being the block's pre-state alloc
    (whole, or its accounts one at a time)."""
    initial = PreState(pre)
    current: dict[StateKey, int] = {}
    for trace in traces:
        ends = trace_values(trace)
        written: set[StateKey] = {
            key for key, value in ends.items() if value != (current[key] if key in current else initial.value(key))
        }
        written |= {(_address(address), "code") for address, size in trace["created"].items() if size}
        accessed: set[StateKey] = accounts_keys(map(_address, trace["accounts"]))
        accessed |= ends.keys() | written
        yield access_set(accessed, written, coinbase)
        current.update(ends)
