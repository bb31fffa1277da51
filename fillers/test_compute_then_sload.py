"""Fillers for `compute_then_sload`: compute, then a run of cold reads from a cursor every transaction moves."""

import pytest

from balgen.generators import compute_then_sload


@pytest.mark.workload(family=compute_then_sload.FAMILY)
def test_compute_then_sload(workload, fill):
    """Compute, then a run of cold reads from a cursor every transaction moves."""
    fill(workload)
