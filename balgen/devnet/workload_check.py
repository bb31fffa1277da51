"""
One exported workload checked against a chain: found, succeeded, and left what the model says.

In order, stopping at the first mismatch: every payload transaction is on
the chain in the range; every receipt is a success (spamoor counts only
transactions it could not submit); every storage slot the model writes holds
the model's last value after the workload's last block; every contract the
workload creates has the model's code (its references to the workload's own
contracts at their live addresses); and where the RPC serves geth's
`prestateTracer` (`debug_traceBlockByNumber` per block, or
`debug_traceTransaction` per transaction where a block trace is refused),
each transaction's traced storage reads and writes are the model's and the
traced conflict graph has as many independent groups as the export has
payloads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from ..analysis.graph import ordered_groups
from ..export.chain_order import OrderedTx
from ..export.yaml_text import counted
from ..clients.engine_client import RpcClient, RpcError
from ..model.workload import Address, AddressReference
from .chain_reader import (
    ChainTx, NoBlockTrace, NoTrace, PrestateDiff, PrestateTrace, block_prestate_traces, code_at, prestate_diff, prestate_trace,
    receipt_of, storage_at,
)
from .exported import ExportedWorkload
from .matching import FoundPayload, Matches
from .traces import TracedTx, storage_difference, traced_tx


class Mismatch(Exception):
    """The chain differs from the model; the message names the first difference."""


@dataclass(frozen=True)
class Sent:
    """A workload transaction and the chain transaction that is it."""

    ordered: OrderedTx
    live: ChainTx


@dataclass(frozen=True)
class WorkloadRuns:
    """A workload's runs on the chain: each complete one (its payloads' runs), and what a further, partial one lacks."""

    complete: list[list[FoundPayload]]
    missing: str | None
    """What the partial run lacks ("12 of 18 payloads found; … is missing"), None when there is none."""


def workload_runs(exported: ExportedWorkload, matches: Matches, workload: int) -> WorkloadRuns:
    """
    The k-th complete run of a workload is the k-th run of each of its
    payloads. A payload with fewer runs than another, or one followed from
    its first transaction up to a transaction that is not there at all (not
    yet mined), is a run that is not complete.
    """
    payloads = exported.run.payloads
    found = [matches.runs.get((workload, number), []) for number in range(len(payloads))]
    count = min(len(runs) for runs in found)
    lacking = [number for number, runs in enumerate(found) if len(runs) == count]
    partial = [gap for number in lacking for gap in matches.gaps.get((workload, number), [])] or [
        gap for number in range(len(payloads)) for gap in matches.gaps.get((workload, number), [])
    ]  # a payload sending what another of the workload sends: which one was cut short, the chain cannot tell
    missing = None
    if partial or len(lacking) < len(payloads):
        first = payloads[lacking[0]]
        what = str(partial[0]) if partial else f"{first.name} tx 0 ({first.txs[0].origin.label})"
        missing = f"{len(payloads) - len(lacking)} of {counted(len(payloads), 'payload')} found; {what} is missing"
    return WorkloadRuns([[runs[k] for runs in found] for k in range(count)], missing)


def found_on_chain(exported: ExportedWorkload, run: list[FoundPayload]) -> tuple[list[Sent], dict[Address, Address]]:
    """Every transaction of one run, in the model's order, and the live address of each deployed contract."""
    sent: list[Sent] = []
    live: dict[Address, Address] = {}
    for payload, found in zip(exported.run.payloads, run, strict=True):
        sent += [Sent(tx.origin, chain) for tx, chain in zip(payload.txs, found.txs, strict=True)]
        live.update(found.live_addresses())
    return sorted(sent, key=lambda s: s.ordered.index), live


def check_receipts(rpc: RpcClient, sent: list[Sent], progress: Progress) -> None:
    for done, item in enumerate(sent):
        progress("receipts", done, len(sent))
        receipt = receipt_of(rpc, item.live)
        if receipt.status != 1:
            raise Mismatch(
                f"{item.ordered.label} reverted on chain at {item.live.where} (gas used {receipt.gas_used} of {item.live.gas})"
            )


def state_block(rpc: RpcClient, sent: list[Sent]) -> int:
    return max(item.live.block for item in sent)


def check_storage(rpc: RpcClient, sent: list[Sent], live: dict[Address, Address], block: int) -> int:
    """Every slot the model writes holds its last designed value; returns how many slots."""
    designed: dict[tuple[Address, int], tuple[int, str]] = {}
    for item in sent:
        for (address, slot), value in item.ordered.access.writes.items():
            if value is not None:
                designed[(live.get(address, address), slot)] = (value, item.ordered.label)
    for (address, slot), (value, label) in designed.items():
        held = storage_at(rpc, address, slot, block)
        if held != value:
            raise Mismatch(
                f"slot {slot:#x} of 0x{address.hex()} holds {held:#x} after block {block}, the model {value:#x} "
                f"(last written by {label})"
            )
    return len(designed)


def with_live_references(code: bytes, references: tuple[AddressReference, ...], live: dict[Address, Address]) -> bytes:
    """`code` with each address it references replaced by its live counterpart."""
    patched = bytearray(code)
    for ref in references:
        patched[ref.offset : ref.offset + len(ref.address)] = live.get(ref.address, ref.address)
    return bytes(patched)


def created(sent: list[Sent]) -> Iterator[tuple[Address, OrderedTx]]:
    for item in sent:
        for address in item.ordered.access.created:
            yield address, item.ordered


def check_code(rpc: RpcClient, sent: list[Sent], live: dict[Address, Address], block: int) -> int:
    """Every created contract has the model's code at its live address; returns how many."""
    count = 0
    for address, ordered in created(sent):
        access = ordered.access
        want = with_live_references(access.created[address], access.code_references.get(address, ()), live)
        where = live.get(address, address)
        have = code_at(rpc, where, block)
        if have != want:
            raise Mismatch(
                f"0x{where.hex()}, created by {ordered.label}, has {len(have)} bytes of code that are not the "
                f"model's {len(want)}"
            )
        count += 1
    return count


class Progress(Protocol):
    """(step, done, total, unit): what a person watching a long check is told."""

    def __call__(self, step: str, done: int, total: int, unit: str = "transactions") -> None: ...


def traced_in_turn(rpc: RpcClient, sent: list[Sent], progress: Progress) -> Iterator[tuple[Sent, TracedTx]]:
    """
    Each transaction of `sent`, in its order, with its traces: from its
    block's trace (each block traced once, when its first transaction comes),
    or, once a block's trace cannot stand for its transactions' own, from
    each transaction's own trace for the rest of the run; so the first
    difference and NoTrace are found where tracing each transaction finds them.
    """
    untraced: dict[int, list[ChainTx]] = {}
    """The blocks not traced yet: the run's transactions in each."""
    for item in sent:
        untraced.setdefault(item.live.block, []).append(item.live)
    blocks = len(untraced)
    traced: dict[str, tuple[PrestateTrace, PrestateDiff]] = {}
    refused: str | None = None
    for done, item in enumerate(sent):
        if refused is None and item.live.block in untraced:
            progress("tracing", blocks - len(untraced), blocks, "blocks")
            try:
                traced.update(block_prestate_traces(rpc, item.live.block, untraced.pop(item.live.block)))
            except NoBlockTrace as reason:
                refused = str(reason)
        own = traced.pop(item.live.hash, None)
        if own is None:
            progress(f"tracing transaction by transaction ({refused})", done, len(sent))
            own = prestate_trace(rpc, item.live), prestate_diff(rpc, item.live)
        yield item, traced_tx(*own)


def check_traces(
    rpc: RpcClient, sent: list[Sent], live: dict[Address, Address], miners: dict[int, bytes], groups: int,
    progress: Progress,
) -> None:
    """Traced storage sets and the independent group count against the model; NoTrace if the RPC has no traces."""
    sets = []
    for item, traced in traced_in_turn(rpc, sent, progress):
        difference = storage_difference(item.ordered.access, traced, live)
        if difference:
            raise Mismatch(f"{item.ordered.label} ({item.live.where}): {difference}")
        sets.append(traced.access_set({item.live.sender, miners[item.live.block]}))
    found = len(ordered_groups(sets))
    if found != groups:
        raise Mismatch(f"the traced conflict graph has {counted(found, 'independent group')}, the model {groups}")


def check_run(
    rpc: RpcClient, exported: ExportedWorkload, run: list[FoundPayload], miners: dict[int, bytes], progress: Progress
) -> str:
    """One complete run's summary line; raises Mismatch naming the first difference."""
    sent, live = found_on_chain(exported, run)
    check_receipts(rpc, sent, progress)
    block = state_block(rpc, sent)
    try:
        slots = check_storage(rpc, sent, live, block)
        codes = check_code(rpc, sent, live, block)
    except RpcError as error:
        raise Mismatch(f"cannot read the state after block {block} ({error}): check a range ending nearer the head") from None
    groups = len(exported.run.payloads)
    first, last = min(s.live.block for s in sent), block
    summary = (
        f"{counted(len(sent), 'transaction')} in blocks {first}-{last}, all succeeded; "
        f"{counted(slots, 'storage slot')} and the code of {counted(codes, 'contract')} as designed; "
    )
    try:
        check_traces(rpc, sent, live, miners, groups, progress)
    except NoTrace as reason:
        return summary + f"{counted(groups, 'payload')}; read/write sets and groups not traced ({reason})"
    return summary + f"traced read/write sets as designed, {counted(groups, 'independent group')}"
