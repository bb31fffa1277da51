"""
The steps most generators share around their benchmark block: the variant asked for, checked, and the
benchmark calls, each sent by a fresh funded sender, made into the workload with the placed contracts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ..model.keys import sender
from ..model.workload import Address, Sender, TxAccess, TxSpec, Workload, WorkloadParams, benchmark_workload
from .counted_loop import CountedTx
from .placement import PlacedContracts, funded


def checked_variant(family: str, variants: Sequence[str], variant: str | None) -> str:
    """`variant` if `family` has it; a `ValueError` naming the family's variants if not."""
    if variant not in variants:
        raise ValueError(f"{family} variant must be one of {tuple(variants)}, not {variant!r}")
    return variant


class BenchmarkCall(NamedTuple):
    """One call of the benchmark block, before it has a sender."""

    to: Address
    data: bytes
    gas_limit: int


def calls_to(target: Address, planned: Sequence[CountedTx]) -> list[BenchmarkCall]:
    """The counted transactions `planned`, each a call to `target`."""
    return [BenchmarkCall(target, tx.data, tx.gas_limit) for tx in planned]


def fresh_senders(name: str, count: int) -> list[Sender]:
    """One sender per benchmark transaction of workload `name`: no transaction waits for another's nonce."""
    return [sender(name, "sender", index) for index in range(count)]


def fresh_sender_workload(
    family: str,
    params: WorkloadParams,
    placed: PlacedContracts,
    calls: Sequence[BenchmarkCall],
    accesses: Sequence[TxAccess],
    **parameters: Any,
) -> Workload:
    """
    The workload of `family` at `params` whose benchmark block sends `calls`,
    each from a fresh sender funded in genesis, to `placed`'s contracts (in
    genesis or behind its setup blocks); `accesses` are the calls' designed
    accesses, `parameters` what `_info` records of the workload.
    """
    senders = fresh_senders(params.fixture_name(family), len(calls))
    txs = [
        TxSpec(sender=s, nonce=0, to=call.to, data=call.data, gas_limit=call.gas_limit) for s, call in zip(senders, calls)
    ]
    return benchmark_workload(
        family,
        params,
        {**placed.pre, **funded(s.address for s in senders)},
        placed.setup_blocks,
        txs,
        accesses,
        **parameters,
    )
