"""Fillers for `coinbase_serialization`: every transaction reads the coinbase's balance, which every fee before it changed."""

import pytest

from balgen.generators import coinbase_serialization


@pytest.mark.workload(family=coinbase_serialization.FAMILY)
def test_coinbase_serialization(workload, fill):
    """Every transaction reads the coinbase's balance, which every fee before it changed."""
    fill(workload)
