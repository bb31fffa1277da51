"""
The family base: what every workload family is (a name, a generator, its
variants) and a workload a run will build from one.

Each family module declares its `Family` here and the catalog lists them, so
the family modules and the catalog never import each other. What the rest of
balgen knows of a family (the counts a replay checks, whether it gets invalid
twins) is in its declaration, never keyed on its name elsewhere.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable

from .invalid_access_list import Corruption
from .workload import Workload, WorkloadParams

Generator = Callable[[WorkloadParams], Workload]


@dataclass(frozen=True)
class Family:
    """A workload family: a name, the generator that builds it and its variants."""

    name: str
    generator: Generator
    variants: tuple[str | None, ...] = (None,)
    sized_by_code: bool = False
    """Variants are contract code sizes, chosen per run (`--code-sizes`); such a
    family's state is large, so it never joins the run's shared pre-alloc group."""
    opt_in: bool = False
    """Filled and exported only when asked for by name (`-k`, `catalog.named_in`): slow (the
    execution-specs parity families), or not a benchmark of a valid block (`invalid_bal_*`), so a
    run without `-k` (the default suite) leaves it out and stays as fast."""
    records_access_list: bool = False
    """Its fixtures' `_info` records the benchmark block's access list: items and bytes."""
    predicted_counts: tuple[tuple[str, str], ...] = ()
    """What a client must count executing the benchmark block: each counter (`reads.code`,
    `reads.code_bytes`, `reads.accounts`, `reads.storage_slots`, `writes.storage_slots`), with the
    `_info["workload"]` field that predicts it; a replay checks them (`replay.expected_counts`)."""
    lies_it_cannot_tell: frozenset[Corruption] | None = None
    """If its benchmark block gets invalid twins (the opt-in family `invalid_bal_<name>`), the access-list
    corruptions that block cannot carry; None: it gets none."""

    @property
    def description(self) -> str:
        """First paragraph of the generator module's docstring."""
        module = sys.modules.get(self.generator.__module__)
        doc = (module.__doc__ if module else "") or ""
        return doc.strip().split("\n\n")[0].replace("\n", " ")


@dataclass(frozen=True)
class PlannedWorkload:
    """A workload a run will build: the family and its parameters, not yet built."""

    family: Family
    params: WorkloadParams

    @property
    def name(self) -> str:
        return self.params.fixture_name(self.family.name)

    def build(self) -> Workload:
        return self.family.generator(self.params)
