"""Fillers for `bal_bound` (opt-in, `-k bal_bound`): the largest access list a block's gas can buy."""

import pytest

from balgen.generators import bal_bound


@pytest.mark.workload(family=bal_bound.FAMILY)
def test_bal_bound(workload, fill):
    """Distinct cold slots or accounts, each read once, as many as the gas buys."""
    fill(workload)
