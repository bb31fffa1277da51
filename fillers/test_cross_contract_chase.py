"""Fillers for `cross_contract_chase`: a dispatcher calls chains of cold contracts, each learning the next from its storage."""

import pytest

from balgen.generators import cross_contract_chase


@pytest.mark.workload(family=cross_contract_chase.FAMILY)
def test_cross_contract_chase(workload, fill):
    """A dispatcher calls chains of cold contracts, up to 100 deep, each learning the next from its storage."""
    fill(workload)
