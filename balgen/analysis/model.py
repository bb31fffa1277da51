"""
Access sets as the workload model designs them, for balgen's own fixtures.

They are the footprints `balgen.model.footprint` derives from the model, seen as
the dependency graph sees them (the fee recipient's credit left out). The
fill compares them with the traced ones, so a generator whose design drifts
from what runs is caught.
"""

from __future__ import annotations

from typing import Iterator

from ..model.footprint import Footprint, block_footprints
from ..model.workload import Address, BlockSpec
from .access import TxAccessSet, access_set


def model_access_sets(block: BlockSpec, coinbase: Address) -> Iterator[TxAccessSet]:
    """The designed access set of every transaction of `block`, in order, one at a time."""
    return (footprint_access_set(print_) for print_ in block_footprints(block, coinbase))


def footprint_access_set(print_: Footprint) -> TxAccessSet:
    """A footprint as an access set of the dependency graph."""
    return access_set(print_.reads | print_.writes, print_.writes, print_.fee_recipient)
