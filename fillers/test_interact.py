"""Fillers for `interact`: contracts deployed in the benchmark block, then called: independent pairs or one contract."""

import pytest

from balgen.generators import interact


@pytest.mark.workload(family=interact.FAMILY)
def test_interact(workload, fill):
    """Contracts deployed in the benchmark block, then called: independent pairs or one contract."""
    fill(workload)
