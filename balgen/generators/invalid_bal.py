"""
`invalid_bal_<family>`: a benchmark block sent first with an access list that lies, then as it is.

For each family that declares the lies its block cannot tell
(`Family.lies_it_cannot_tell`: `mixed_dep`, `state_root` and `prefetch`, their
first variant), one workload per lie it can tell (`balgen.model.invalid_access_list`): a storage read or
write missing, a wrong post-value, an extra or a missing account, a change
at the wrong transaction index, accounts out of order, more items than the
gas allows, an undecodable list; each under a header that commits to the
wrong list (the client must execute the block to refute it) and under one
that still commits to the true list (hashing refutes it). The engine
fixtures send that invalid twin of the benchmark block, which the client
must answer INVALID with the named exception, and then the valid block, so
the chain still ends at `lastblockhash`: `balgen replay` times both, the
time to reject beside the time to execute. Opt-in (`-k invalid_bal`): no
mempool carries an invalid block, so these are never exported to spamoor.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..model.invalid_access_list import Corruption, InvalidAccessList, every_invalid_access_list
from ..model.workload import Workload, WorkloadParams
from ..model.family import Family, Generator

FAMILY_PREFIX = "invalid_bal_"


def variants(impossible: frozenset[Corruption]) -> tuple[str, ...]:
    """The lies a base's benchmark block can tell, by name."""
    return tuple(lie.name for lie in every_invalid_access_list() if lie.corruption not in impossible)


def invalid_twin_workload(base: Family, params: WorkloadParams) -> Workload:
    """`base`'s workload at `params` (its first variant), its benchmark block to be preceded by the
    twin that tells the lie `params.variant` names; its accounts are its own (a namespace per lie)."""
    lie = InvalidAccessList.from_name(params.variant or "")
    base_variant = base.variants[0]
    workload = base.generator(replace(params, variant=base_variant, namespace=f"{FAMILY_PREFIX}{lie.name}/"))
    family = FAMILY_PREFIX + base.name
    return replace(
        workload,
        family=family,
        variant=lie.name,
        invalid_access_list=lie,
        parameters={
            **workload.parameters,
            "family": family,
            "variant": lie.name,
            "base_family": base.name,
            "base_variant": base_variant,
            "corruption": lie.corruption.value,
            "header_hash": lie.header_hash.value,
            "expected_exception": lie.validation_error,
            "refuted_by": lie.refuted_by,
        },
    )


def twin_generator(base: Family) -> Generator:
    """The generator of `base`'s invalid twins (a function of this module, whose docstring describes it)."""

    def generate(params: WorkloadParams) -> Workload:
        return invalid_twin_workload(base, params)

    return generate


def twin_families(bases: Iterable[Family]) -> tuple[Family, ...]:
    """The invalid twin family of each of `bases` that declares the lies its block cannot tell."""
    return tuple(
        Family(FAMILY_PREFIX + base.name, twin_generator(base), variants=variants(base.lies_it_cannot_tell), opt_in=True)
        for base in bases
        if base.lies_it_cannot_tell is not None
    )


def twins(families: Iterable[Family]) -> tuple[Family, ...]:
    """The invalid twin families among `families`."""
    return tuple(family for family in families if family.name.startswith(FAMILY_PREFIX))
