"""Fillers for `mixed_dep`: independent dependency groups of 1, 2 and 5 transactions, interleaved."""

import pytest

from balgen.generators import mixed_dep


@pytest.mark.workload(family=mixed_dep.FAMILY)
def test_mixed_dep(workload, fill):
    """Independent dependency groups of 1, 2 and 5 transactions, interleaved."""
    fill(workload)
