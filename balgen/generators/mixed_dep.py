"""
`mixed_dep`: independent dependency groups, interleaved in one block.

The block's transactions are split into groups of `K` (variants `group1`,
`group2`, `group5`); each group is a chain on a keccak-chain contract of its
own, so a transaction depends on the previous member of its group and on
nothing else. Groups are interleaved (g0.0, g1.0, ..., g0.1, g1.1, ...), so a
client that executes in block order meets a conflict every `groups`
transactions and has to find the independent work from the access list. As
execution-spec-tests' `test_mixed_dependency_graph`, with no combination
skipped: when the transactions do not divide into groups of `K`, the last
group is smaller, and when fewer than `K` fit (group5 at greedy fill) they form
one group; `_info` records the effective group sizes.
"""

from __future__ import annotations

from ..model.workload import Workload, WorkloadParams
from ..model.family import Family
from ..model.invalid_access_list import Corruption
from .benchmark_calls import checked_variant
from .chains import chain_workload
from .keccak_chain import keccak_chain_contract

VARIANTS = ("group1", "group2", "group5")


def group_size_of(variant: str | None) -> int:
    """`groupK` -> K."""
    return int(checked_variant("mixed_dep", VARIANTS, variant).removeprefix("group"))


def mixed_dependency_graph(params: WorkloadParams) -> Workload:
    """Groups of `K` dependent transactions, interleaved, at `params`' gas value and fill level."""
    return chain_workload(params, "mixed_dep", keccak_chain_contract(params), group_size_of(params.variant))


FAMILY = Family(
    "mixed_dep",
    mixed_dependency_graph,
    VARIANTS,
    # Every slot it reads, it writes: an access list cannot miss a read of it.
    lies_it_cannot_tell=frozenset({Corruption.MISSING_READ}),
)
