"""
The transaction conflict graph of a block and what it bounds.

Transaction j depends on i < j when j reads or writes a key i wrote. Only
the edge to the key's most recent writer before j is kept: an earlier writer
of the same key is linked to that most recent one (a write after a write is
itself an edge), so every dependency is still implied through a path, and a
block of n writers to one key is one chain of n - 1 edges rather than a
clique. Edges always point forward, so the transaction order is a
topological order.

A write after a read is no edge: with a BAL each transaction is given the
values before it, so a later writer cannot disturb an earlier reader. On a
live chain, where the block builder orders transactions sent apart, it can,
so the spamoor export also links a writer to every reader since the key's
last write (`write_after_read`) and keeps each component of that graph
(`ordered_groups`) on one ordered path.

The critical path is the heaviest path with each transaction weighted by
the gas it used; no schedule that respects the edges finishes in less gas,
so block gas / critical-path gas bounds the speedup of any parallel
execution that follows the dependencies (with unlimited cores).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Iterator, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..model.footprint import StateKey
from .access import TxAccessSet

SPEEDUP_DIGITS = 2
"""Decimals kept of the speedup bound in `_info`."""


def conflict_edges(sets: Iterable[TxAccessSet], *, write_after_read: bool = False) -> tuple[tuple[int, int], ...]:
    """
    (i, j) for every j that reads or writes a key whose latest writer before j
    is i; with `write_after_read`, also for every i that read, since that
    write, a key j writes.
    """
    last_writer: dict[StateKey, int] = {}
    readers: dict[StateKey, list[int]] = {}
    edges: set[tuple[int, int]] = set()
    for j, access in enumerate(sets):
        edges |= {(last_writer[key], j) for key in access.keys if key in last_writer}
        if write_after_read:
            edges |= {(i, j) for key in access.writes for i in readers.pop(key, ())}
            for key in access.reads:
                readers.setdefault(key, []).append(j)
        last_writer.update(dict.fromkeys(access.writes, j))
    return tuple(sorted(edges))


def connected_components(count: int, edges: Sequence[tuple[int, int]]) -> tuple[tuple[int, ...], ...]:
    """The components of the undirected graph, each sorted, ordered by first transaction."""
    parent = list(range(count))

    def root(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for i, j in edges:
        parent[root(j)] = root(i)
    members: dict[int, list[int]] = {}
    for node in range(count):
        members.setdefault(root(node), []).append(node)
    return tuple(sorted(tuple(group) for group in members.values()))


def ordered_groups(sets: Sequence[TxAccessSet]) -> tuple[tuple[int, ...], ...]:
    """
    The transactions that must keep their relative order wherever they are
    sent: the components of the conflict graph with write-after-read edges.
    """
    return connected_components(len(sets), conflict_edges(sets, write_after_read=True))


def heaviest_path(weights: Sequence[int], edges: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """The path of greatest total weight along forward edges (the first one found on ties)."""
    if not weights:
        return ()
    predecessors: dict[int, list[int]] = {}
    for i, j in edges:
        predecessors.setdefault(j, []).append(i)
    total = list(weights)
    previous: list[int | None] = [None] * len(weights)
    for j in range(len(weights)):
        for i in predecessors.get(j, ()):
            if total[i] + weights[j] > total[j]:
                total[j], previous[j] = total[i] + weights[j], i
    node: int | None = max(range(len(weights)), key=lambda k: (total[k], -k))
    path = []
    while node is not None:
        path.append(node)
        node = previous[node]
    return tuple(reversed(path))


class GraphInfo(BaseModel):
    """The `_info["dependency-graph"]` object, validated."""

    model_config = ConfigDict(populate_by_name=True)

    transactions: int = Field(ge=0)
    tx_gas_used: list[int] = Field(alias="tx-gas-used")
    edges: list[tuple[int, int]]
    components: int
    component_sizes: dict[str, int] = Field(alias="component-sizes")
    largest_component: int = Field(alias="largest-component")
    critical_path: list[int] = Field(alias="critical-path")
    critical_path_gas: int = Field(alias="critical-path-gas")
    block_gas: int = Field(alias="block-gas")
    speedup_bound: float = Field(alias="speedup-bound")


@dataclass(frozen=True)
class DependencyGraph:
    """A block's transactions (by gas used) and their conflict edges."""

    tx_gas: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]

    @classmethod
    def from_access_sets(cls, sets: Iterable[TxAccessSet], tx_gas: Sequence[int]) -> DependencyGraph:
        """The graph of a block whose transactions accessed `sets` (gone through once) and used `tx_gas`."""
        count = 0

        def counted() -> Iterator[TxAccessSet]:
            nonlocal count
            for access in sets:
                count += 1
                yield access

        edges = conflict_edges(counted())
        if count != len(tx_gas):
            raise ValueError(f"{count} access sets for {len(tx_gas)} gas values")
        return cls(tuple(tx_gas), edges)

    @classmethod
    def from_info(cls, info: Mapping[str, Any]) -> DependencyGraph:
        """Rebuild the graph `info()` described; ValueError if the record is malformed or inconsistent."""
        try:
            parsed = GraphInfo.model_validate(info)
        except ValidationError as error:
            first = error.errors()[0]
            location = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"{location}: {first['msg']}" if location else first["msg"]) from None
        graph = cls(tuple(parsed.tx_gas_used), tuple(sorted(set(parsed.edges))))
        if any(not 0 <= i < j < len(graph.tx_gas) for i, j in graph.edges):
            raise ValueError("edges: each must join two transactions i < j of the block")
        if GraphInfo.model_validate(graph.info()) != parsed:
            raise ValueError("the summary does not match tx-gas-used and edges")
        return graph

    @property
    def transactions(self) -> int:
        return len(self.tx_gas)

    @cached_property
    def components(self) -> tuple[tuple[int, ...], ...]:
        """Connected components: transactions that could not run apart from each other."""
        return connected_components(self.transactions, self.edges)

    @property
    def component_sizes(self) -> dict[int, int]:
        """size -> how many components have it."""
        return dict(sorted(Counter(len(group) for group in self.components).items()))

    @property
    def largest_component(self) -> int:
        return max((len(group) for group in self.components), default=0)

    @cached_property
    def critical_path(self) -> tuple[int, ...]:
        """The transactions of the heaviest dependency path, in order."""
        return heaviest_path(self.tx_gas, self.edges)

    @property
    def critical_path_gas(self) -> int:
        return sum(self.tx_gas[index] for index in self.critical_path)

    @property
    def block_gas(self) -> int:
        return sum(self.tx_gas)

    @property
    def speedup_bound(self) -> float:
        """Block gas over critical-path gas; 1 for an empty block."""
        if not self.critical_path_gas:
            return 1.0
        return round(self.block_gas / self.critical_path_gas, SPEEDUP_DIGITS)

    def info(self) -> dict[str, Any]:
        """The JSON object recorded as `_info["dependency-graph"]`."""
        return {
            "transactions": self.transactions,
            "tx-gas-used": list(self.tx_gas),
            "edges": [list(edge) for edge in self.edges],
            "components": len(self.components),
            "component-sizes": {str(size): count for size, count in self.component_sizes.items()},
            "largest-component": self.largest_component,
            "critical-path": list(self.critical_path),
            "critical-path-gas": self.critical_path_gas,
            "block-gas": self.block_gas,
            "speedup-bound": self.speedup_bound,
        }
