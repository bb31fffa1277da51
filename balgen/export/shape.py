"""
What spamoor keeps of a workload's shape on a live chain, and what it cannot.

The notes become comments at the top of the workload's spamoor file, so an
operator reads, next to the configuration, where the live blocks will differ
from the fixture's: block boundaries between set-up and benchmark, senders
shared by independent transactions, groups that interleave as the builder
likes, set-up deployments that stagger the groups' start, and the gas a
devnet block must hold for the benchmark transactions to land together.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis.access import TxAccessSet
from ..model.workload import Phase, Workload
from .spamoor_payloads import GroupPayload, Layout
from .yaml_text import counted

REFERENCE_BLOCK_GAS = 60_000_000
"""Block gas limit the notes use to turn set-up gas into blocks (a common devnet value)."""


def groups(count: int) -> str:
    return counted(count, "dependency group")


def millions(gas: int) -> str:
    return f"{gas / 1e6:.1f}M"


def layout_notes(payloads: Sequence[GroupPayload]) -> list[str]:
    """How each kind of group is laid out over its payload's wallets."""
    split = [p for p in payloads if p.layout is Layout.SETUP_THEN_BENCHMARK]
    joined = [p for p in payloads if p.layout is Layout.ONE_RUN and p.setup_txs]
    bare = [p for p in payloads if p.layout is Layout.ONE_RUN and not p.setup_txs]
    notes = []
    if split:
        notes.append(
            f"{groups(len(split))}: the deployer's one set-up creation is mined first, then sender[1] sends the "
            "benchmark transactions as one pipelined run in the fixture's order; this cross-sender dependency "
            "costs a block, as the fixture's set-up block boundary does."
        )
    if joined:
        notes.append(
            f"{groups(len(joined))}: set-up and benchmark transactions are one deployer run, ordered by nonce, "
            "because replay-eest waits only for the first receipt of a run before the next sender starts, "
            "which cannot hold back the benchmark behind a set-up of several transactions; the set-up may "
            "therefore share a block with the first benchmark transactions."
        )
    if bare:
        notes.append(
            f"{groups(len(bare))}: no set-up; the group is one deployer run (creations first, as replay-eest "
            "numbers $contract[N]), so it can share a block as in the fixture."
        )
    return notes


def independent_neighbours(payload: GroupPayload, footprints: Sequence[TxAccessSet]) -> int:
    """Consecutive benchmark transactions of one run that do not conflict: independence lost to a shared sender."""
    benchmark = [tx for tx in payload.txs if tx.origin.phase is not Phase.SETUP]
    return sum(
        1
        for first, second in zip(benchmark, benchmark[1:])
        if first.sender == second.sender
        and not footprints[first.origin.index].conflicts_with(footprints[second.origin.index])
    )


def shared_sender_note(payloads: Sequence[GroupPayload], footprints: Sequence[TxAccessSet]) -> list[str]:
    """Where independent transactions had to share a sender."""
    counts = [independent_neighbours(payload, footprints) for payload in payloads]
    affected = sum(1 for count in counts if count)
    if not affected:
        return []
    return [
        f"{groups(affected)} {'holds' if affected == 1 else 'hold'} benchmark transactions that do not depend "
        f"on each other ({sum(counts)} neighbouring pairs) but share one sender: they depend on a contract the "
        "payload deploys, payloads cannot share one, and one sender per transaction inside a payload would cost "
        "a block each. Their storage stays disjoint; the sender's nonce and balance now link them."
    ]


def parallel_notes(payloads: Sequence[GroupPayload]) -> list[str]:
    """Independent groups run as parallel payloads: interleaving and staggered starts."""
    if len(payloads) < 2:
        return []
    notes = [
        f"{len(payloads)} independent groups run as parallel payloads, all started within a tenth of a slot: "
        "their transactions interleave as the block builder orders them, not as the fixture's block does."
    ]
    setup_gas = sum(tx.gas for payload in payloads for tx in payload.setup_txs)
    if setup_gas > REFERENCE_BLOCK_GAS:
        blocks = -(-setup_gas // REFERENCE_BLOCK_GAS)
        notes.append(
            f"Their set-up transactions reserve {millions(setup_gas)} gas of block space in total (about "
            f"{blocks} blocks at {millions(REFERENCE_BLOCK_GAS)} gas): each group starts once its own set-up "
            "is mined, so the groups start spread over those blocks rather than together."
        )
    return notes


def block_gas_note(workload: Workload) -> list[str]:
    """The gas a devnet block must hold for the benchmark transactions to land in one block."""
    return [
        f"The benchmark transactions carry {millions(workload.benchmark_block.gas_limit_total)} gas in gas "
        "limits: a devnet block gas limit below that spreads them over more blocks than the fixture's one."
    ]


def once_per_chain_notes(first_run: str, reuse_run: str, persisting_setup: int, reuse: bool) -> list[str]:
    """Set-up that leaves contracts at the fixture's addresses runs once per chain; `reuse_run` runs after it."""
    if not persisting_setup:
        return []
    calls = counted(persisting_setup, "set-up call")
    if reuse:
        return [
            f"Reuses the contracts a run of {first_run} left on this chain, at the fixture's addresses: the "
            f"{calls} that create them are left out (the deterministic deployment proxy would refuse a second "
            f"deployment). Run {first_run} first, once."
        ]
    return [
        f"{calls} create contracts at the fixture's own addresses on every chain: the deterministic deployment "
        "proxy 0x4e59b44847b379578588920ca78fbf26c0b4956c (in every Amsterdam genesis by EIP-7997; preloaded "
        "on earlier devnets) deploys the factory, whose CREATE2s the set follows. The proxy refuses a second "
        f"deployment, so this file runs once per chain; {reuse_run} benchmarks again against the contracts it left."
    ]


def shape_notes(workload: Workload, payloads: Sequence[GroupPayload], footprints: Sequence[TxAccessSet]) -> list[str]:
    """Every note on how the live run differs from the fixture, in reading order."""
    return [
        *layout_notes(payloads),
        *shared_sender_note(payloads, footprints),
        *parallel_notes(payloads),
        *block_gas_note(workload),
    ]

