"""
The catalog of workload families: every family's generator and variants, in one place.

Fillers, the spamoor export and the demo enumerate workloads from here, so a
family added to the catalog is filled, exported and shown everywhere at once.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Iterator, Sequence

from ..ethereum.forks import Fork
from ..plumbing.command_line import keyword_matcher, matches
from .code_set import DEFAULT_CODE_SIZES
from ..model.family import Family, PlannedWorkload
from ..model.workload import FillLevel, Placement, WorkloadParams
from . import (
    bal_bound, coinbase_serialization, compute_then_sload, cross_contract_chase, extcode, interact, invalid_bal,
    keccak_chain, mixed_dep, prefetch, prefetch_miss, serial_chain, state_root,
)


@cache
def families() -> tuple[Family, ...]:
    """Every family balgen generates, in documentation order; last, the invalid twins of those that declare them
    (made once, so that a family is the same object wherever it is asked for)."""
    bases = (
        mixed_dep.FAMILY,
        interact.FAMILY,
        state_root.FAMILY,
        prefetch.FAMILY,
        serial_chain.FAMILY,
        keccak_chain.FAMILY,
        *extcode.FAMILIES,
        cross_contract_chase.FAMILY,
        compute_then_sload.FAMILY,
        prefetch_miss.FAMILY,
        coinbase_serialization.FAMILY,
        bal_bound.FAMILY,
    )
    return (*bases, *invalid_bal.twin_families(bases))


def default_families() -> tuple[Family, ...]:
    """The families a run without `-k` fills and exports: every one but the opt-in ones."""
    return tuple(family for family in families() if not family.opt_in)


_WORDS = re.compile(r"[A-Za-z0-9_.]+")


def named_in(family: Family, selection: str | None) -> bool:
    """
    Whether a `-k` expression asks for `family` by name: a
    default family always, an opt-in one when a word of `selection` is part
    of its name and of no default family's (`-k invalid_bal`, `-k bal_bound`;
    `-k prefetch` leaves `invalid_bal_prefetch` out).
    """
    if not family.opt_in:
        return True
    defaults = [default.name for default in default_families()]
    return any(
        word in family.name and not any(word in name for name in defaults)
        for word in _WORDS.findall(selection or "")
    )


def family_by_name(name: str) -> Family:
    for family in families():
        if family.name == name:
            return family
    raise KeyError(name)


def planned_workloads(
    family: Family,
    fork: Fork,
    gas_benchmark_values: Sequence[int],
    placement: Placement,
    code_sizes: Sequence[str] = DEFAULT_CODE_SIZES,
) -> Iterator[PlannedWorkload]:
    """Every combination of one family: gas value x fill level x variant, none skipped."""
    variants = tuple(code_sizes) if family.sized_by_code else family.variants
    for gas in gas_benchmark_values:
        for fill in FillLevel:
            for variant in variants:
                yield PlannedWorkload(family, WorkloadParams(fork, gas, fill, placement, variant))


def all_planned_workloads(
    fork: Fork,
    gas_benchmark_values: Sequence[int],
    placement: Placement,
    keyword: str | None = None,
    code_sizes: Sequence[str] = DEFAULT_CODE_SIZES,
) -> list[PlannedWorkload]:
    """
    Every workload of every family, optionally only the names a `-k` expression
    matches (as `balgen fill` selects); the opt-in families only when it names them (`named_in`).
    """
    expression = keyword_matcher(keyword)
    return [
        p
        for family in families()
        if named_in(family, keyword)
        for p in planned_workloads(family, fork, gas_benchmark_values, placement, code_sizes)
        if matches(expression, p.name)
    ]
